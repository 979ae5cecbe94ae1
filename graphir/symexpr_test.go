package graphir_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/graphir"
)

func mustSym(t *testing.T, s string) *graphir.SymExpr {
	t.Helper()
	e, err := graphir.ParseSymExpr(s)
	require.NoError(t, err, s)
	return e
}

// Canonical forms: expressions that are equal for every value of their
// symbols print the same, and print what they parse from.
func TestSymExprCanonical(t *testing.T) {
	for in, want := range map[string]string{
		"batch":                           "batch",
		"seq*batch":                       "batch*seq",
		"2*n + 3 - n":                     "n + 3",
		"n - n":                           "0",
		"(n + 1)*(n - 1)":                 "n*n - 1",
		"4*n floordiv 2":                  "2*n",
		"(4*n + 3) floordiv 2":            "2*n + 1",
		"(h - 1) floordiv 2 + 1":          "(h - 1) floordiv 2 + 1",
		"(2*h + 1) floordiv 4":            "(2*h + 1) floordiv 4",
		"-3 floordiv 2":                   "-2",
		"-(a) + 2*b":                      "-a + 2*b",
		"(a + b) floordiv 1":              "a + b",
		"a*(b floordiv 3)*2":              "2*((b) floordiv 3)*a",
		"((n + 7) floordiv 8) floordiv 2": "((n + 7) floordiv 8) floordiv 2",
	} {
		e := mustSym(t, in)
		assert.Equal(t, want, e.String(), in)
		assert.True(t, mustSym(t, e.String()).Equal(e), "%s reparses to itself", want)
	}
}

// Eval agrees with direct integer arithmetic (floor division rounding
// toward −∞), over a grid of values.
func TestSymExprEval(t *testing.T) {
	e := mustSym(t, "(h + 2 - 3) floordiv 2 + 1")
	for h := int64(0); h < 40; h++ {
		v, err := e.Eval(map[string]int64{"h": h})
		require.NoError(t, err)
		assert.Equal(t, int64(math.Floor(float64(h-1)/2))+1, v, "h=%d", h)
	}
	p := mustSym(t, "batch*seq*64")
	v, err := p.Eval(map[string]int64{"batch": 3, "seq": 17})
	require.NoError(t, err)
	assert.Equal(t, int64(3*17*64), v)
	_, err = p.Eval(map[string]int64{"batch": 3})
	assert.EqualError(t, err, "symbolic dimension 'seq' has no value")
	_, err = p.Eval(map[string]int64{"batch": 1 << 40, "seq": 1 << 40})
	assert.ErrorContains(t, err, "overflows int64")
}

// Exact division by a constant or a single term, used by reshape's −1.
func TestSymExprDivExactBy(t *testing.T) {
	q, ok := mustSym(t, "512*batch*seq").DivExactBy(mustSym(t, "batch"))
	require.True(t, ok)
	assert.Equal(t, "512*seq", q.String())
	q, ok = mustSym(t, "6*n + 12").DivExactBy(graphir.SymConst(6))
	require.True(t, ok)
	assert.Equal(t, "n + 2", q.String())
	for _, c := range [][2]string{{"6*n + 1", "6"}, {"n*m", "k"}, {"n + m", "n"}, {"n", "n + 1"}, {"n", "0"}} {
		_, ok := mustSym(t, c[0]).DivExactBy(mustSym(t, c[1]))
		assert.False(t, ok, "%s / %s", c[0], c[1])
	}
}

func TestSymExprParseErrors(t *testing.T) {
	for in, want := range map[string]string{
		"":                     "expected a number, a symbol or '('",
		"n +":                  "expected a number, a symbol or '('",
		"n floordiv m":         "floordiv needs a positive constant divisor, got m",
		"n floordiv 0":         "floordiv needs a positive constant divisor, got 0",
		"(n":                   "expected ')'",
		"n m":                  `unexpected "m"`,
		"n $":                  `unexpected "$"`,
		"99999999999999999999": "out of range",
		"floordiv":             "expected a number, a symbol or '('",
	} {
		_, err := graphir.ParseSymExpr(in)
		assert.ErrorContains(t, err, want, "%q", in)
	}
	assert.True(t, graphir.ValidSymbol("batch_size"))
	assert.False(t, graphir.ValidSymbol("2n"))
	assert.False(t, graphir.ValidSymbol("a-b"))
}

// FuzzParseSymExpr: any text either fails to parse or parses to an
// expression whose printed form parses back to an equal expression.
func FuzzParseSymExpr(f *testing.F) {
	for _, s := range []string{"batch", "(h - 1) floordiv 2 + 1", "a*b - 3*c", "-(n + 2) floordiv 3", "2*x*x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := graphir.ParseSymExpr(s)
		if err != nil {
			return
		}
		back, err := graphir.ParseSymExpr(e.String())
		require.NoError(t, err, "%q printed as %q", s, e)
		require.True(t, back.Equal(e), "%q printed as %q reparses as %q", s, e, back)
	})
}
