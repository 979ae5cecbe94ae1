package tensorir_test

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

var (
	vi = tir.NewVar("i", tir.DIndex)
	vj = tir.NewVar("j", tir.DIndex)
	vk = tir.NewVar("k", tir.DIndex)
)

func ci(v int64) tir.Expr { return tir.Int(v) }

func TestSimplifyRules(t *testing.T) {
	env := tir.BoundEnv{vi: {Lo: 0, Hi: 15}, vj: {Lo: 0, Hi: 7}, vk: {Lo: -4, Hi: 4}}
	x := tir.NewVar("x", tir.DF32)
	cases := []struct {
		in   tir.Expr
		want string
	}{
		{tir.Sub(tir.Add(tir.Mul(vi, ci(4)), vj), tir.Mul(vi, ci(4))), "%j"},
		{tir.Mul(tir.Add(tir.Mul(vi, ci(8)), tir.Mul(vj, ci(2))), ci(2)), "%i * 16 + %j * 4"},
		{tir.FloorDiv(tir.Add(tir.Mul(vi, ci(8)), vj), ci(8)), "%i"},
		{tir.FloorMod(tir.Add(tir.Mul(vi, ci(8)), vj), ci(8)), "%j"},
		{tir.FloorDiv(tir.Add(tir.Mul(vi, ci(8)), tir.Add(vj, ci(9))), ci(8)), "%i + floordiv(%j + 1, 8) + 1"},
		{tir.FloorMod(tir.Add(tir.Mul(vi, ci(8)), tir.Add(vj, ci(9))), ci(8)), "floormod(%j + 1, 8)"},
		{tir.FloorDiv(tir.FloorDiv(vi, ci(2)), ci(4)), "floordiv(%i, 8)"},
		{tir.FloorMod(tir.FloorMod(vi, ci(8)), ci(4)), "floormod(%i, 4)"},
		{tir.FloorDiv(vj, ci(8)), "0"},
		{tir.FloorMod(vj, ci(8)), "%j"},
		{tir.FloorDiv(vi, ci(1)), "%i"},
		{tir.Add(vi, ci(0)), "%i"},
		{tir.Mul(vi, ci(1)), "%i"},
		{tir.Mul(vi, ci(0)), "0"},
		{tir.Sub(vi, vi), "0"},
		{tir.Add(tir.Add(vj, vi), tir.Add(vi, ci(3))), "%i * 2 + %j + 3"},
		{tir.Sub(ci(3), vi), "3 - %i"},
		{tir.Sub(ci(0), vi), "%i * -1"},
		{tir.Min(ci(3), ci(5)), "3"},
		{tir.Max(ci(3), ci(-5)), "3"},
		{tir.Min(vj, ci(8)), "%j"},
		{tir.Max(vj, ci(8)), "8"},
		{tir.Min(vk, vj), "min(%k, %j)"},
		{tir.LT(vj, ci(8)), "true"},
		{tir.LT(tir.Add(tir.Mul(vi, ci(4)), vj), tir.Add(tir.Mul(vi, ci(4)), ci(8))), "true"},
		{tir.Bin(tir.OpGE, vk, ci(5)), "false"},
		{tir.Bin(tir.OpEQ, vi, vi), "true"},
		{tir.Bin(tir.OpAnd, tir.LT(vj, ci(8)), tir.LT(vi, vk)), "%i < %k"},
		{&tir.Select{Cond: tir.LT(vk, ci(5)), T: vi, F: vj}, "%i"},
		{tir.FloorDiv(ci(-7), ci(2)), "-4"},
		{tir.FloorMod(ci(-7), ci(2)), "1"},
		{tir.FloorMod(ci(7), ci(-2)), "-1"},
		{tir.Add(tir.IntOf(tir.DI32, math.MaxInt32), tir.IntOf(tir.DI32, 1)), "-2147483648 : i32"},
		{tir.Add(x, tir.Float(tir.DF32, math.Copysign(0, -1))), "%x"},
		{tir.Add(x, tir.Float(tir.DF32, 0)), "%x + 0.0"},
		{tir.Mul(x, tir.Float(tir.DF32, 1)), "%x"},
		{tir.Mul(x, tir.Float(tir.DF32, 0)), "%x * 0.0"},
		{tir.Add(tir.Float(tir.DF32, 0.1), tir.Float(tir.DF32, 0.2)), "0.3"},
		{tir.Add(tir.Float(tir.DF32, 16777216), tir.Float(tir.DF32, 1)), "1.6777216e+07"},
		{&tir.Cast{Type: tir.DI32, X: tir.Float(tir.DF32, -2.75)}, "-2 : i32"},
		{&tir.Call{Name: "exp", Args: []tir.Expr{tir.Float(tir.DF32, 0)}}, "1.0"},
	}
	for _, c := range cases {
		got := tir.Simplify(c.in, env)
		assert.Equal(t, c.want, tir.ExprString(got), "simplify(%s)", tir.ExprString(c.in))
		assert.Equal(t, c.in.DType(), got.DType(), "dtype of simplify(%s)", tir.ExprString(c.in))
	}
}

// Without bounds the division rules must not fire: j could be 8 or more.
func TestSimplifyNeedsBounds(t *testing.T) {
	e := tir.FloorDiv(tir.Add(tir.Mul(vi, ci(8)), vj), ci(8))
	assert.Equal(t, "floordiv(%i * 8 + %j, 8)", tir.ExprString(tir.Simplify(e, nil)))
	// The division identity needs no bounds.
	e = tir.Add(tir.Mul(tir.FloorDiv(tir.Add(vi, vj), ci(-3)), ci(-6)), tir.Mul(tir.FloorMod(tir.Add(vi, vj), ci(-3)), ci(2)))
	assert.Equal(t, "%i * 2 + %j * 2", tir.ExprString(tir.Simplify(e, nil)))
	e32i, e32j := tir.NewVar("a", tir.DI32), tir.NewVar("b", tir.DI32)
	// i32 a*8 may wrap, so floordiv(a*8 + b, 8) is not a even for b in [0, 8).
	e = tir.FloorDiv(tir.Add(tir.Mul(e32i, tir.IntOf(tir.DI32, 8)), e32j), tir.IntOf(tir.DI32, 8))
	got := tir.Simplify(e, tir.BoundEnv{e32j: {Lo: 0, Hi: 7}})
	assert.Equal(t, "floordiv(%a * 8 : i32 + %b, 8 : i32)", tir.ExprString(got))
}

func TestBound(t *testing.T) {
	env := tir.BoundEnv{vi: {Lo: 0, Hi: 15}, vj: {Lo: 0, Hi: 7}, vk: {Lo: -4, Hi: 4}}
	cases := []struct {
		e    tir.Expr
		want tir.Interval
	}{
		{tir.Add(tir.Mul(vi, ci(8)), vj), tir.Interval{Lo: 0, Hi: 127}},
		{tir.Sub(vj, vk), tir.Interval{Lo: -4, Hi: 11}},
		{tir.Mul(vk, vk), tir.Interval{Lo: -16, Hi: 16}},
		{tir.FloorDiv(vk, ci(3)), tir.Interval{Lo: -2, Hi: 1}},
		{tir.FloorMod(vk, ci(3)), tir.Interval{Lo: 0, Hi: 2}},
		{tir.FloorMod(tir.Add(vj, ci(8)), ci(16)), tir.Interval{Lo: 8, Hi: 15}},
		{tir.Min(vi, vk), tir.Interval{Lo: -4, Hi: 4}},
		{tir.Max(vi, vk), tir.Interval{Lo: 0, Hi: 15}},
		{&tir.Call{Name: "abs", Args: []tir.Expr{vk}}, tir.Interval{Lo: 0, Hi: 4}},
		{tir.LT(vi, vj), tir.Interval{Lo: 0, Hi: 1}},
		{tir.Add(vi, tir.NewVar("free", tir.DIndex)), tir.Full},
		{tir.Mul(tir.Int(math.MaxInt64), vi), tir.Full},
		{tir.Add(tir.NewVar("w", tir.DI32), tir.IntOf(tir.DI32, 1)), tir.Full},
		{tir.NewVar("w8", tir.DI8), tir.Interval{Lo: -128, Hi: 127}},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, tir.Bound(c.e, env), tir.ExprString(c.e))
	}
}

// exprGen builds random well-typed integer and float expressions over a
// few variables; integer divisors are non-zero by construction.
type exprGen struct {
	r     *rand.Rand
	t     tir.DType
	ivars []*tir.Var
	fvar  *tir.Var
	buf   *tir.Buffer
}

func (g *exprGen) c(v int64) tir.Expr { return tir.IntOf(g.t, v) }

func (g *exprGen) intExpr(depth int) tir.Expr {
	if depth == 0 || g.r.Intn(5) == 0 {
		if g.r.Intn(3) == 0 {
			return g.c(int64(g.r.Intn(21) - 10))
		}
		return g.ivars[g.r.Intn(len(g.ivars))]
	}
	a := g.intExpr(depth - 1)
	switch g.r.Intn(12) {
	case 0:
		return tir.Add(a, g.intExpr(depth-1))
	case 1:
		// The division identity floordiv(a, c)*c + floormod(a, c) = a.
		c := g.c(int64(g.r.Intn(9) - 4))
		if c.(*tir.IntImm).Value == 0 {
			c = g.c(5)
		}
		return tir.Add(tir.Mul(tir.FloorDiv(a, c), c), tir.Add(tir.FloorMod(a, c), g.intExpr(depth-1)))
	case 2:
		return tir.Sub(a, g.intExpr(depth-1))
	case 3:
		return tir.Mul(a, g.c(int64(g.r.Intn(9)-4)))
	case 4:
		return tir.Mul(a, g.intExpr(depth-1))
	case 5:
		d := int64(g.r.Intn(8) + 1)
		if g.r.Intn(4) == 0 {
			d = -d
		}
		return tir.FloorDiv(a, g.c(d))
	case 6:
		d := int64(g.r.Intn(8) + 1)
		if g.r.Intn(4) == 0 {
			d = -d
		}
		return tir.FloorMod(a, g.c(d))
	case 7:
		return tir.Min(a, g.intExpr(depth-1))
	case 8:
		return tir.Max(a, g.intExpr(depth-1))
	case 9, 11:
		ops := []tir.BinOp{tir.OpEQ, tir.OpNE, tir.OpLT, tir.OpLE, tir.OpGT, tir.OpGE}
		cond := tir.Bin(ops[g.r.Intn(len(ops))], a, g.intExpr(depth-1))
		if g.r.Intn(3) == 0 {
			cond = tir.Bin(tir.OpAnd, cond, tir.LT(g.intExpr(depth-1), g.c(3)))
		}
		return &tir.Select{Cond: cond, T: g.intExpr(depth - 1), F: g.intExpr(depth - 1)}
	default:
		// A non-constant divisor in [1, 4]: floormod by 4 then + 1.
		d := tir.Add(tir.FloorMod(g.ivars[g.r.Intn(len(g.ivars))], g.c(4)), g.c(1))
		if g.r.Intn(2) == 0 {
			return tir.FloorDiv(a, d)
		}
		return tir.FloorMod(a, d)
	}
}

func (g *exprGen) floatExpr(depth int) tir.Expr {
	if depth == 0 || g.r.Intn(4) == 0 {
		switch g.r.Intn(5) {
		case 0:
			consts := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 3.25, 1e30, math.Inf(1), math.NaN()}
			return tir.Float(tir.DF32, consts[g.r.Intn(len(consts))])
		case 1:
			return &tir.Cast{Type: tir.DF32, X: g.intExpr(2)}
		case 2:
			return tir.Load(g.buf, tir.FloorMod(g.intExpr(1), g.c(4)))
		}
		return g.fvar
	}
	a := g.floatExpr(depth - 1)
	switch g.r.Intn(8) {
	case 0:
		return tir.Add(a, g.floatExpr(depth-1))
	case 1:
		return tir.Sub(a, g.floatExpr(depth-1))
	case 2:
		return tir.Mul(a, g.floatExpr(depth-1))
	case 3:
		return tir.Div(a, g.floatExpr(depth-1))
	case 4:
		return tir.Min(a, g.floatExpr(depth-1))
	case 5:
		return &tir.Call{Name: []string{"exp", "tanh", "sigmoid", "abs"}[g.r.Intn(4)], Args: []tir.Expr{a}}
	case 6:
		return &tir.Select{Cond: tir.Bin(tir.OpLE, a, g.floatExpr(depth-1)), T: a, F: g.floatExpr(depth - 1)}
	}
	return tir.Add(a, tir.Float(tir.DF32, math.Copysign(0, -1)))
}

// evalAt runs "out[] = e" through the interpreter with the variables set.
func evalAt(t *testing.T, g *exprGen, e tir.Expr, ints map[string]int64, fl float64, data []float32) (float64, error) {
	t.Helper()
	out := &tir.Buffer{Name: "out", DType: e.DType(), Scope: tir.ScopeGlobal}
	f := &tir.PrimFunc{Name: "eval", Body: &tir.BufferStore{Buffer: out, Value: e}}
	for _, v := range g.ivars {
		f.Params = append(f.Params, &tir.Param{Var: v})
	}
	f.Params = append(f.Params, &tir.Param{Var: g.fvar}, &tir.Param{Buffer: g.buf}, &tir.Param{Buffer: out, Role: tir.RoleOut})
	res := tir.NewArray(e.DType())
	err := tir.RunArgs(f, tir.Args{
		Arrays: map[string]*tir.Array{"out": res, "D": tir.ArrayFromFloat32(data, 4)},
		Ints:   ints, Floats: map[string]float64{"x": fl},
	})
	if err != nil {
		return 0, err
	}
	if e.DType().IsFloat() {
		return res.Floats[0], nil
	}
	return float64(res.Ints[0]), nil
}

// TestSimplifyPreservesSemantics evaluates random expressions at random
// points inside the variables' bounds before and after simplification.
func TestSimplifyPreservesSemantics(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for _, dt := range []tir.DType{tir.DIndex, tir.DI32, tir.DI8} {
		g := &exprGen{r: r, t: dt, fvar: tir.NewVar("x", tir.DF32), buf: tir.NewBuffer("D", tir.DF32, 4)}
		ranges := map[string]tir.Interval{"a": {Lo: 0, Hi: 15}, "b": {Lo: 0, Hi: 7}, "c": {Lo: -6, Hi: 6}, "d": {Lo: 3, Hi: 3}}
		env := tir.BoundEnv{}
		for _, n := range []string{"a", "b", "c", "d"} {
			v := tir.NewVar(n, dt)
			g.ivars = append(g.ivars, v)
			env[v] = ranges[n]
		}
		changed := 0
		for iter := 0; iter < 400; iter++ {
			var e tir.Expr
			if iter%4 == 3 && dt == tir.DIndex {
				e = g.floatExpr(4)
			} else {
				e = g.intExpr(4)
			}
			s := tir.Simplify(e, env)
			require.Equal(t, e.DType(), s.DType())
			if tir.ExprString(s) != tir.ExprString(e) {
				changed++
			}
			// Simplification is idempotent up to a second pass.
			s2 := tir.Simplify(s, env)
			for p := 0; p < 6; p++ {
				ints := map[string]int64{}
				for n, rg := range ranges {
					ints[n] = rg.Lo + r.Int63n(rg.Hi-rg.Lo+1)
				}
				fl := []float64{0, -1.5, 2.25, 1e-3, 80}[r.Intn(5)]
				data := []float32{1, -0.5, 3, 1e20}
				want, err := evalAt(t, g, e, ints, fl, data)
				require.NoError(t, err, tir.ExprString(e))
				for _, x := range []tir.Expr{s, s2} {
					got, err := evalAt(t, g, x, ints, fl, data)
					require.NoError(t, err, tir.ExprString(x))
					if !(math.IsNaN(want) && math.IsNaN(got)) {
						require.Equal(t, math.Float64bits(want), math.Float64bits(got),
							"%s\n→ %s\nat %v x=%v: %v vs %v", tir.ExprString(e), tir.ExprString(x), ints, fl, want, got)
					}
				}
			}
		}
		assert.Greater(t, changed, 100, "the simplifier should change most random %s expressions", dt)
	}
}

// SimplifyFunc uses loop ranges: the split-and-fused indices of a copy
// collapse, the always-true guard disappears, and the results are the same.
func TestSimplifyFunc(t *testing.T) {
	src := `tir.func @copy(%A: buffer<64xf32>, out %B: buffer<64xf32>) {
  tir.for %io = 0 to 8 {
    tir.for %ii = 0 to 8 {
      tir.if %io * 8 + %ii < 64 {
        tir.block "B"(%v = spatial(0:64, (%io * 4 + %ii * 2) * 2 - %io * 8 + floordiv(%io * 16 + %ii * 2, 2) - %ii * 4)) reads(%A[%v]) writes(%B[%v]) {
          %B[floordiv(%v, 8) * 8 + floormod(%v, 8)] = %A[%v] * 1.0 + -0.0
        }
      } else {
        %B[0] = 0.0
      }
    }
  }
}
`
	f := tensorLevel.MustParse(t, src).Funcs[0]
	g := tir.SimplifyFunc(f)
	require.NoError(t, tir.VerifyFunc(g))
	assert.Equal(t, `tir.func @copy(%A: buffer<64xf32>, out %B: buffer<64xf32>) {
  tir.for %io = 0 to 8 {
    tir.for %ii = 0 to 8 {
      tir.block "B"(%v = spatial(0:64, %io * 8 + %ii)) reads(%A[%v]) writes(%B[%v]) {
        %B[%v] = %A[%v]
      }
    }
  }
}
`, tir.PrintFunc(g, tir.PrintOptions{}))
	assert.Contains(t, tir.PrintFunc(f, tir.PrintOptions{}), "tir.if", "the input is not modified")
	r := rand.New(rand.NewSource(5))
	a := make([]float32, 64)
	for i := range a {
		a[i] = float32(r.NormFloat64())
	}
	b1, b2 := tir.NewArray(tir.DF32, 64), tir.NewArray(tir.DF32, 64)
	require.NoError(t, tir.Run(f, map[string]*tir.Array{"A": tir.ArrayFromFloat32(a, 64), "B": b1}))
	require.NoError(t, tir.Run(g, map[string]*tir.Array{"A": tir.ArrayFromFloat32(a, 64), "B": b2}))
	assert.Equal(t, b1.Floats, b2.Floats)
	assert.Equal(t, a, b2.Float32s())
}
