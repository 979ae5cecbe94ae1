package schedule

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

func TestParseIndexMap(t *testing.T) {
	m, err := ParseIndexMap("(%i, j) -> (j floordiv 16, i, j floormod 16 + 2 * (i - 1))")
	require.NoError(t, err)
	require.Len(t, m.Params, 2)
	require.Len(t, m.Results, 3)
	assert.Equal(t, "(i, j) -> (j floordiv 16, i, j floormod 16 + 2 * (i - 1))", m.String())
	again, err := ParseIndexMap(m.String())
	require.NoError(t, err)
	assert.Equal(t, m.String(), again.String())
	for text, want := range map[string]string{
		"(i, j) -> (k)":                 `index map "(i, j) -> (k)": "k" is not a parameter of the map`,
		"(i, i) -> (i)":                 `index map "(i, i) -> (i)": parameter "i" appears twice`,
		"(i) -> (i":                     `index map "(i) -> (i": want ',' or ')', got ""`,
		"(i) -> (i) x":                  `index map "(i) -> (i) x": unexpected "x" after the map`,
		"(i) => (i)":                    `index map "(i) => (i)": unexpected character "="`,
		"() -> ()":                      `index map "() -> ()": want at least one parameter and one result`,
		"(i) -> (i floordiv)":           `index map "(i) -> (i floordiv)": want an expression, got ")"`,
		"(i) (i)":                       `index map "(i) (i)": want "->", got "("`,
		"(i) -> (99999999999999999999)": `index map "(i) -> (99999999999999999999)": bad integer "99999999999999999999"`,
	} {
		_, err := ParseIndexMap(text)
		if assert.Error(t, err, text) {
			assert.Equal(t, want, err.Error(), text)
		}
	}
}

func TestTransformLayoutPrinted(t *testing.T) {
	s := New(locWorkload(t, "chain"))
	require.NoError(t, s.TransformLayout(block(t, s, "add"), 0, "write", MustParseIndexMap("(i, j) -> (j floordiv 7, i, j floormod 7)")))
	want := `tir.func @ew(%A: buffer<6x14xf32>, %B: buffer<14xf32>, out %D: buffer<6x14xf32>) attributes {tessera.kernel} {
  tir.allocate %T: buffer<2x6x7xf32, "local"> {
    tir.for %i = 0 to 6 {
      tir.for %j = 0 to 14 {
        tir.block "add"(%vi = spatial(0:6, %i), %vj = spatial(0:14, %j)) reads(%A[%vi, %vj], %B[%vj]) writes(%T[floordiv(%vj, 7), %vi, floormod(%vj, 7)]) {
          %T[floordiv(%vj, 7), %vi, floormod(%vj, 7)] = %A[%vi, %vj] + %B[%vj]
        }
      }
    }
    tir.for %i = 0 to 6 {
      tir.for %j = 0 to 14 {
        tir.block "relu"(%vi = spatial(0:6, %i), %vj = spatial(0:14, %j)) reads(%T[floordiv(%vj, 7), %vi, floormod(%vj, 7)]) writes(%D[%vi, %vj]) {
          %D[%vi, %vj] = max(%T[floordiv(%vj, 7), %vi, floormod(%vj, 7)], 0.0) * 2.0
        }
      }
    }
  }
}
`
	assert.Equal(t, want, printed(s.Func()))
	data, err := s.Trace().JSON()
	require.NoError(t, err)
	assert.Contains(t, string(data), `{"kind":"transform_layout","inputs":["b0"],"attrs":{"buffer_index":0,"buffer_type":"write","map_params":["i","j"],"map_results":["j floordiv 7","i","j floormod 7"]}}`)
	checkSame(t, s)
}

var layoutScenarios = []scenario{
	{"split layout of an intermediate", "chain", func(t *testing.T, s *Schedule) {
		require.NoError(t, s.TransformLayout(block(t, s, "relu"), 0, "read", MustParseIndexMap("(i, j) -> (j floordiv 7, i, j floormod 7)")))
	}},
	{"transpose a cache", "gemm", func(t *testing.T, s *Schedule) {
		a, err := s.CacheRead(block(t, s, "C"), 1, "local")
		require.NoError(t, err)
		require.NoError(t, s.TransformLayout(a, 0, "write", MustParseIndexMap("(k, j) -> (j, k)")))
	}},
	{"packed cache at a loop", "gemm", func(t *testing.T, s *Schedule) {
		a, err := s.CacheRead(block(t, s, "C"), 1, "global")
		require.NoError(t, err)
		require.NoError(t, s.TransformLayout(a, 0, "write", MustParseIndexMap("(k, j) -> (j floordiv 5, k, j floormod 5)")))
		_, err = s.Split(mustLoops(t, s, "C")[1], []int64{2, 5})
		require.NoError(t, err)
	}},
	{"reversed and flattened softmax buffers", "softmax", func(t *testing.T, s *Schedule) {
		require.NoError(t, s.TransformLayout(block(t, s, "max"), 0, "write", MustParseIndexMap("(i) -> (3 - i)")))
		require.NoError(t, s.TransformLayout(block(t, s, "sum"), 0, "write", MustParseIndexMap("(i) -> (i floormod 2, i floordiv 2)")))
	}},
	{"conv intermediate after split", "conv_bias_relu", func(t *testing.T, s *Schedule) {
		_, err := s.Split(mustLoops(t, s, "conv")[0], []int64{2, 2})
		require.NoError(t, err)
		require.NoError(t, s.TransformLayout(block(t, s, "conv"), 0, "write", MustParseIndexMap("(c, h, w) -> (h, w, c)")))
	}},
}

func TestTransformLayoutNumerics(t *testing.T) {
	for _, sc := range layoutScenarios {
		t.Run(sc.name, func(t *testing.T) {
			s := New(locWorkload(t, sc.workload))
			sc.apply(t, s)
			require.Contains(t, s.Trace().String(), "transform_layout")
			checkSame(t, s)
		})
	}
}

func TestTransformLayoutRefusals(t *testing.T) {
	cases := []struct {
		name, workload, block string
		index                 int
		kind, m               string
		want, ir              string
	}{
		{"parameter", "chain", "add", 0, "read", "(i, j) -> (j, i)",
			`transform_layout: block "add": %A is a parameter of @ew: its layout is the kernel's calling convention; transform a cache_read/cache_write copy of it instead`,
			`tir.block "add"(%vi = spatial(0:6, %i), %vj = spatial(0:14, %j)) reads(%A[%vi, %vj], %B[%vj]) writes(%T[%vi, %vj]) {`},
		{"buffer type", "chain", "add", 0, "both", "(i, j) -> (j, i)",
			`transform_layout: block "add": buffer index type "both": want "read" or "write"`,
			`tir.block "add"(%vi = spatial(0:6, %i), %vj = spatial(0:14, %j)) reads(%A[%vi, %vj], %B[%vj]) writes(%T[%vi, %vj]) {`},
		{"index", "chain", "add", 1, "write", "(i, j) -> (j, i)",
			`transform_layout: block "add": write index 1 is out of range: the block has 1 write regions`,
			`tir.block "add"(%vi = spatial(0:6, %i), %vj = spatial(0:14, %j)) reads(%A[%vi, %vj], %B[%vj]) writes(%T[%vi, %vj]) {`},
		{"arity", "chain", "add", 0, "write", "(i) -> (i)",
			`transform_layout: block "add": index map (i) -> (i) has 1 parameters, %T has rank 2`,
			`tir.block "add"(%vi = spatial(0:6, %i), %vj = spatial(0:14, %j)) reads(%A[%vi, %vj], %B[%vj]) writes(%T[%vi, %vj]) {`},
		{"not injective", "chain", "relu", 0, "read", "(i, j) -> (i floordiv 2, j)",
			`transform_layout: block "relu": index map (i, j) -> (i floordiv 2, j) on %T (shape [6 14]): not injective: [0 0] and [1 0] both map to [0 0]`,
			`tir.block "relu"(%vi = spatial(0:6, %i), %vj = spatial(0:14, %j)) reads(%T[%vi, %vj]) writes(%D[%vi, %vj]) {`},
		{"not bijective", "chain", "relu", 0, "read", "(i, j) -> (i, j * 2)",
			`transform_layout: block "relu": index map (i, j) -> (i, j * 2) on %T (shape [6 14]): not bijective: 84 elements map into a bounding box [6 27] of 162 (padding is not supported)`,
			`tir.block "relu"(%vi = spatial(0:6, %i), %vj = spatial(0:14, %j)) reads(%T[%vi, %vj]) writes(%D[%vi, %vj]) {`},
		{"negative", "chain", "relu", 0, "read", "(i, j) -> (i - 1, j)",
			`transform_layout: block "relu": index map (i, j) -> (i - 1, j) on %T (shape [6 14]): [0 0] maps to a negative index -1 in dimension 0`,
			`tir.block "relu"(%vi = spatial(0:6, %i), %vj = spatial(0:14, %j)) reads(%T[%vi, %vj]) writes(%D[%vi, %vj]) {`},
		{"divisor", "chain", "relu", 0, "read", "(i, j) -> (i floordiv j, j)",
			`transform_layout: block "relu": index map (i, j) -> (i floordiv j, j): the divisor of i floordiv j is not a positive constant`,
			`tir.block "relu"(%vi = spatial(0:6, %i), %vj = spatial(0:14, %j)) reads(%T[%vi, %vj]) writes(%D[%vi, %vj]) {`},
		{"no block", "chain", "nope", 0, "read", "(i, j) -> (j, i)",
			`transform_layout: block "nope": no such block in @ew`, ``},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New(locWorkload(t, c.workload))
			err := s.TransformLayout(BlockRV{Name: c.block}, c.index, c.kind, MustParseIndexMap(c.m))
			require.Error(t, err)
			var se *Error
			require.True(t, errors.As(err, &se), "%T", err)
			lines := strings.Split(err.Error(), "\n")
			assert.Equal(t, c.want, lines[0])
			if c.ir != "" {
				require.Greater(t, len(lines), 1, "no IR rendered")
				assert.Equal(t, "  "+c.ir, lines[1])
			}
			assert.NotContains(t, err.Error(), "not rendered")
			assert.Empty(t, s.Trace().Insts)
			checkSame(t, s)
		})
	}
}

// A replayed trace whose index map was edited uses the new map; a
// malformed one fails the replay.
func TestTransformLayoutReplayEdited(t *testing.T) {
	f := locWorkload(t, "chain")
	s := New(f)
	require.NoError(t, s.TransformLayout(block(t, s, "add"), 0, "write", MustParseIndexMap("(i, j) -> (j, i)")))
	data, err := s.Trace().JSON()
	require.NoError(t, err)
	edited := strings.Replace(string(data), `"map_results":["j","i"]`, `"map_results":["i floordiv 3","j","i floormod 3"]`, 1)
	tr, err := ParseTrace([]byte(edited))
	require.NoError(t, err)
	r, err := Replay(f, tr)
	require.NoError(t, err)
	assert.Equal(t, "%T: buffer<2x14x3xf32, \"local\">", strings.TrimSpace(strings.SplitN(strings.SplitN(printed(r.Func()), "tir.allocate ", 2)[1], " {", 2)[0]))
	sameOutputs(t, interpret(t, f, 5), interpret(t, r.Func(), 5), printed(r.Func()))
	bad := strings.Replace(string(data), `"map_results":["j","i"]`, `"map_results":["j","q"]`, 1)
	tr, err = ParseTrace([]byte(bad))
	require.NoError(t, err)
	_, err = Replay(f, tr)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"q" is not a parameter of the map`)
	_ = tir.ScopeLocal
}
