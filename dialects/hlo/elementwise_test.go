package hlo

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	g "github.com/tessera-ml/tessera/graphir"
)

func TestBinaryEval(t *testing.T) {
	ty := f32(2, 3)
	a := tensorOf(ty, 1, -2, 3, 4.5, 0, -6)
	b := tensorOf(ty, 2, 2, -1, 0.5, 3, -4)
	cases := map[string][]float64{
		AddOp:      {3, 0, 2, 5, 3, -10},
		SubtractOp: {-1, -4, 4, 4, -3, -2},
		MultiplyOp: {2, -4, -3, 2.25, 0, 24},
		DivideOp:   {0.5, -1, -3, 9, 0, 1.5},
		MaximumOp:  {2, 2, 3, 4.5, 3, -4},
		MinimumOp:  {1, -2, -1, 0.5, 0, -6},
		PowerOp:    {1, 4, 1.0 / 3, math.Sqrt(4.5), 0, 1.0 / 1296},
	}
	for name, want := range cases {
		out := evalOne(t, name, []*g.Tensor{a, b}, nil, nil)
		for i := range want {
			assert.Equal(t, float64(float32(want[i])), out.Data[i], "%s element %d", name, i)
		}
	}
}

func TestBinaryIntegerSemantics(t *testing.T) {
	ty := tt(g.I32, 5)
	a := tensorOf(ty, 7, -7, 7, 5, 2147483647)
	b := tensorOf(ty, 2, 2, 0, -3, 1)
	assert.Equal(t, []float64{3, -3, -1, -1, 2147483647}, evalOne(t, DivideOp, []*g.Tensor{a, b}, nil, nil).Data)
	// add wraps at 32 bits
	assert.Equal(t, []float64{9, -5, 7, 2, -2147483648}, evalOne(t, AddOp, []*g.Tensor{a, b}, nil, nil).Data)
	bt := tt(g.I1, 4)
	p, q := tensorOf(bt, 0, 1, 0, 1), tensorOf(bt, 0, 0, 1, 1)
	assert.Equal(t, []float64{0, 1, 1, 1}, evalOne(t, AddOp, []*g.Tensor{p, q}, nil, nil).Data, "i1 add is or")
	assert.Equal(t, []float64{0, 0, 0, 1}, evalOne(t, MultiplyOp, []*g.Tensor{p, q}, nil, nil).Data, "i1 multiply is and")
}

func TestNaNPropagatesThroughMaxMin(t *testing.T) {
	ty := f32(2)
	a, b := tensorOf(ty, math.NaN(), 1), tensorOf(ty, 0, math.NaN())
	for _, n := range []string{MaximumOp, MinimumOp} {
		out := evalOne(t, n, []*g.Tensor{a, b}, nil, nil)
		assert.True(t, math.IsNaN(out.Data[0]) && math.IsNaN(out.Data[1]), n)
	}
}

func TestUnaryEval(t *testing.T) {
	ty := f32(4)
	x := tensorOf(ty, 0.25, 1, 2.5, 4)
	fns := map[string]func(float64) float64{
		NegateOp: func(v float64) float64 { return -v }, ExponentialOp: math.Exp, LogOp: math.Log,
		TanhOp: math.Tanh, LogisticOp: func(v float64) float64 { return 1 / (1 + math.Exp(-v)) },
		RsqrtOp: func(v float64) float64 { return 1 / math.Sqrt(v) }, SqrtOp: math.Sqrt, AbsOp: math.Abs,
	}
	for name, fn := range fns {
		out := evalOne(t, name, []*g.Tensor{x}, nil, nil)
		for i, v := range x.Data {
			assert.Equal(t, float64(float32(fn(v))), out.Data[i], "%s(%v)", name, v)
		}
	}
	neg := evalOne(t, AbsOp, []*g.Tensor{tensorOf(tt(g.I8, 3), -3, 0, 5)}, nil, nil)
	assert.Equal(t, []float64{3, 0, 5}, neg.Data)
}

func TestElementwiseVerifyErrors(t *testing.T) {
	cases := []struct {
		name     string
		operands []g.Type
		result   g.Type
		a        g.DictAttr
		want     string
	}{
		{AddOp, []g.Type{f32(2, 3), f32(3, 2)}, f32(2, 3), nil, "requires the same type for all operands and results"},
		{SubtractOp, []g.Type{tt(g.I1, 2), tt(g.I1, 2)}, tt(g.I1, 2), nil, "does not accept i1 operands"},
		{ExponentialOp, []g.Type{tt(g.I32, 2)}, tt(g.I32, 2), nil, "must have a floating-point element type"},
		{NegateOp, []g.Type{tt(g.I1, 2)}, tt(g.I1, 2), nil, "signed integer or floating-point"},
		{CompareOp, []g.Type{f32(2), f32(3)}, tt(g.I1, 2), attrs("comparison_direction", g.StringAttr("LT")), "operands must have the same type"},
		{CompareOp, []g.Type{f32(2), f32(2)}, tt(g.I1, 2), attrs("comparison_direction", g.StringAttr("LESS")), "must be one of"},
		{CompareOp, []g.Type{f32(2), f32(2)}, tt(g.I1, 2), nil, "requires attribute 'comparison_direction'"},
		{CompareOp, []g.Type{f32(2), f32(2)}, f32(2), attrs("comparison_direction", g.StringAttr("EQ")), "inferred result types (tensor<2xi1>)"},
		{SelectOp, []g.Type{f32(2), f32(2), f32(2)}, f32(2), nil, "predicate must have element type i1"},
		{SelectOp, []g.Type{tt(g.I1, 3), f32(2), f32(2)}, f32(2), nil, "predicate must be rank 0 or have the shape of on_true"},
		{SelectOp, []g.Type{tt(g.I1, 2), f32(2), tt(g.F16, 2)}, f32(2), nil, "on_true and on_false must have the same type"},
		{ConvertOp, []g.Type{f32(2, 3)}, tt(g.I32, 3, 2), nil, "result shape must equal operand shape"},
		{AddOp, []g.Type{f32(2), f32(2)}, f32(2), attrs("axis", g.IntAttr(1)), "does not accept attribute 'axis'"},
	}
	for _, c := range cases {
		b := newFB(t, c.operands...)
		op := b.op(c.name, b.f.Args(), []g.Type{c.result}, c.a)
		b.ret(op.Results...)
		assert.Contains(t, b.verifyErr(), c.want, c.name)
	}
}

func TestCompareSelectConvert(t *testing.T) {
	ty := f32(5)
	a := tensorOf(ty, 1, 2, 3, math.NaN(), -1)
	b := tensorOf(ty, 2, 2, 1, math.NaN(), -1)
	want := map[string][]float64{
		"EQ": {0, 1, 0, 0, 1}, "NE": {1, 0, 1, 1, 0}, "LT": {1, 0, 0, 0, 0},
		"LE": {1, 1, 0, 0, 1}, "GT": {0, 0, 1, 0, 0}, "GE": {0, 1, 1, 0, 1},
	}
	for dir, w := range want {
		out := evalOne(t, CompareOp, []*g.Tensor{a, b}, nil, attrs("comparison_direction", g.StringAttr(dir)))
		assert.Equal(t, w, out.Data, dir)
		assert.Equal(t, g.I1, out.Type.Elem)
	}
	pred := tensorOf(tt(g.I1, 5), 1, 0, 1, 0, 0)
	sel := evalOne(t, SelectOp, []*g.Tensor{pred, tensorOf(ty, 1, 2, 3, 4, 5), tensorOf(ty, 6, 7, 8, 9, 10)}, nil, nil)
	assert.Equal(t, []float64{1, 7, 3, 9, 10}, sel.Data)
	scalar := evalOne(t, SelectOp, []*g.Tensor{tensorOf(tt(g.I1), 1), tensorOf(ty, 1, 2, 3, 4, 5), tensorOf(ty, 6, 7, 8, 9, 10)}, nil, nil)
	assert.Equal(t, []float64{1, 2, 3, 4, 5}, scalar.Data)

	conv := evalOne(t, ConvertOp, []*g.Tensor{tensorOf(ty, 1.75, -2.5, 300, 0, 0.1)}, tt(g.I8, 5), nil)
	assert.Equal(t, []float64{1, -2, 44, 0, 0}, conv.Data, "truncates toward zero and wraps")
	toBool := evalOne(t, ConvertOp, []*g.Tensor{tensorOf(ty, 1.75, 0, -3, 0, 0.1)}, tt(g.I1, 5), nil)
	assert.Equal(t, []float64{1, 0, 1, 0, 1}, toBool.Data)
	toF16 := evalOne(t, ConvertOp, []*g.Tensor{tensorOf(ty, 1.0/3, 70000, 0, 0, 0)}, tt(g.F16, 5), nil)
	assert.Equal(t, 0.333251953125, toF16.Data[0])
	assert.True(t, math.IsInf(toF16.Data[1], 1))
}

func TestConstant(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	x := randTensor(r, f32(3, 4))
	b := newFB(t)
	c := Constant(x, loc())
	b.f.Entry().Append(c)
	s := Splat(g.F32, []int64{2, 2}, 1.5, loc())
	b.f.Entry().Append(s)
	// a splat of a zero-sized shape is the empty constant
	e, ei := Splat(g.F32, []int64{2, 0}, 1.5, loc()), Splat(g.I64, []int64{0}, 7, loc())
	b.f.Entry().Append(e)
	b.f.Entry().Append(ei)
	b.ret(c.Results[0], s.Results[0], e.Results[0], ei.Results[0])
	require.NoError(t, b.verify())
	outs := interpret(t, b.f, nil)
	assert.Equal(t, x.Data, outs[0].Data)
	assert.Equal(t, []float64{1.5, 1.5, 1.5, 1.5}, outs[1].Data)
	assert.Empty(t, outs[2].Data)
	assert.Empty(t, outs[3].Data)
	assert.True(t, isSplatConstant(s))
	assert.False(t, isSplatConstant(c))

	bad := newFB(t)
	op := bad.op(ConstantOp, nil, []g.Type{f32(2)}, attrs("value", &g.DenseElementsAttr{Type: f32(3), Floats: []float64{1, 2, 3}}))
	bad.ret(op.Results...)
	assert.Contains(t, bad.verifyErr(), "inferred result types (tensor<3xf32>) do not match")
	bad2 := newFB(t)
	op = bad2.op(ConstantOp, nil, []g.Type{f32(3)}, attrs("value", &g.DenseElementsAttr{Type: f32(3), Floats: []float64{1, 2}}))
	bad2.ret(op.Results...)
	assert.Contains(t, bad2.verifyErr(), "attribute 'value' holds 2 elements, but tensor<3xf32> has 3")
}

func TestExtUnaryEval(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	x := tensorOf(f32(7), -1.5, -0.5, 0, 0.5, 2, inf, nan)
	want := map[string][]float64{
		ErfOp:   {float64(float32(math.Erf(-1.5))), float64(float32(math.Erf(-0.5))), 0, float64(float32(math.Erf(0.5))), float64(float32(math.Erf(2))), 1, nan},
		FloorOp: {-2, -1, 0, 0, 2, inf, nan},
		CeilOp:  {-1, 0, 0, 1, 2, inf, nan},
		SignOp:  {-1, -1, 0, 1, 1, 1, nan},
	}
	for name, w := range want {
		out := evalOne(t, name, []*g.Tensor{x}, nil, nil)
		for i := range w {
			if math.IsNaN(w[i]) {
				assert.True(t, math.IsNaN(out.Data[i]), "%s element %d", name, i)
			} else {
				assert.Equal(t, w[i], out.Data[i], "%s element %d", name, i)
			}
		}
	}
	out := evalOne(t, CeilOp, []*g.Tensor{tensorOf(f32(1), -0.5)}, nil, nil)
	assert.True(t, math.Signbit(out.Data[0]), "ceil(-0.5) = -0")
	out = evalOne(t, SignOp, []*g.Tensor{tensorOf(tt(g.I32, 3), -4, 0, 9)}, nil, nil)
	assert.Equal(t, []float64{-1, 0, 1}, out.Data)
}

func TestClampEval(t *testing.T) {
	nan := math.NaN()
	x := tensorOf(f32(5), -2, 0.5, 2, nan, 0)
	out := evalOne(t, ClampOp, []*g.Tensor{tensorOf(f32(), -1), x, tensorOf(f32(), 1)}, nil, nil)
	assert.Equal(t, []float64{-1, 0.5, 1}, out.Data[:3])
	assert.True(t, math.IsNaN(out.Data[3]))
	// per-element bounds; min > max gives max; NaN bound propagates
	lo := tensorOf(f32(5), 0, 0, 0, 0, nan)
	hi := tensorOf(f32(5), 1, -1, 5, 1, 1)
	out = evalOne(t, ClampOp, []*g.Tensor{lo, x, hi}, nil, nil)
	assert.Equal(t, []float64{0, -1, 2}, out.Data[:3])
	assert.True(t, math.IsNaN(out.Data[3]))
	assert.True(t, math.IsNaN(out.Data[4]))
	out = evalOne(t, ClampOp, []*g.Tensor{tensorOf(tt(g.I8), 0), tensorOf(tt(g.I8, 3), -5, 3, 9), tensorOf(tt(g.I8), 4)}, nil, nil)
	assert.Equal(t, []float64{0, 3, 4}, out.Data)
}

func TestLogicalEval(t *testing.T) {
	a := tensorOf(tt(g.I1, 4), 0, 0, 1, 1)
	b := tensorOf(tt(g.I1, 4), 0, 1, 0, 1)
	assert.Equal(t, []float64{0, 0, 0, 1}, evalOne(t, AndOp, []*g.Tensor{a, b}, nil, nil).Data)
	assert.Equal(t, []float64{0, 1, 1, 1}, evalOne(t, OrOp, []*g.Tensor{a, b}, nil, nil).Data)
	assert.Equal(t, []float64{1, 1, 0, 0}, evalOne(t, NotOp, []*g.Tensor{a}, nil, nil).Data)
}

func TestExtVerifyErrors(t *testing.T) {
	cases := []struct {
		name     string
		operands []g.Type
		result   g.Type
		want     string
	}{
		{ErfOp, []g.Type{tt(g.I32, 2)}, tt(g.I32, 2), "must have a floating-point element type"},
		{FloorOp, []g.Type{tt(g.I32, 2)}, tt(g.I32, 2), "must have a floating-point element type"},
		{SignOp, []g.Type{tt(g.I1, 2)}, tt(g.I1, 2), "signed integer or floating-point"},
		{CeilOp, []g.Type{f32(2)}, f32(3), "requires the same type for all operands and results"},
		{AndOp, []g.Type{f32(2), f32(2)}, f32(2), "operands must have element type i1"},
		{OrOp, []g.Type{tt(g.I1, 2), tt(g.I1, 3)}, tt(g.I1, 2), "same type"},
		{NotOp, []g.Type{tt(g.I32, 2)}, tt(g.I32, 2), "operand must have element type i1"},
		{ClampOp, []g.Type{f32(3), f32(2), f32()}, f32(2), "operand #0 must be rank 0 or have the operand's type"},
		{ClampOp, []g.Type{f32(), f32(2), tt(g.I32)}, f32(2), "operand #2 must have element type f32"},
		{ClampOp, []g.Type{tt(g.I1), tt(g.I1, 2), tt(g.I1)}, tt(g.I1, 2), "does not accept i1"},
	}
	for _, c := range cases {
		b := newFB(t, c.operands...)
		op := b.op(c.name, b.f.Args(), []g.Type{c.result}, nil)
		b.ret(op.Results...)
		msg := b.verifyErr()
		assert.Contains(t, msg, c.want, c.name)
		assert.Contains(t, msg, "test.mlir:", c.name)
	}
}

func TestExtPrettyRoundTrip(t *testing.T) {
	src := `func.func @main(%x: tensor<3xf32>, %lo: tensor<f32>, %p: tensor<3xi1>) -> (tensor<3xf32>, tensor<3xi1>) {
  %0 = hlo.erf %x : tensor<3xf32>
  %1 = hlo.floor %0 : tensor<3xf32>
  %2 = hlo.ceil %1 : tensor<3xf32>
  %3 = hlo.sign %2 : tensor<3xf32>
  %4 = hlo.clamp %lo, %3, %lo : (tensor<f32>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  %5 = hlo.not %p : tensor<3xi1>
  %6 = hlo.and %5, %p : tensor<3xi1>
  %7 = hlo.or %6, %p : tensor<3xi1>
  func.return %4, %7 : tensor<3xf32>, tensor<3xi1>
}
`
	m, err := g.ParseString("rt.mlir", src)
	require.NoError(t, err)
	require.NoError(t, g.Verify(m))
	printed := g.Print(m)
	m2, err := g.ParseString("rt2.mlir", printed)
	require.NoError(t, err)
	assert.Equal(t, printed, g.Print(m2))
	assert.Contains(t, printed, "hlo.clamp %arg1, %3, %arg1")
}

// TestExtNoPanicOnMalformedOps: random operand types and counts,
// attributes and result types for the ops of elementwise_ext.go; Infer,
// the verifier and (on verified ops) the evaluator answer with diagnostics.
func TestExtNoPanicOnMalformedOps(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	names := []string{ErfOp, FloorOp, CeilOp, SignOp, ClampOp, AndOp, OrOp, NotOp}
	evaluated := 0
	for iter := 0; iter < 5000; iter++ {
		name := names[r.Intn(len(names))]
		def := g.LookupOp(name)
		nops := def.Operands.Min
		if r.Intn(8) == 0 {
			nops = r.Intn(4)
		}
		var ins []g.Type
		for i := 0; i < nops; i++ {
			ins = append(ins, randType(r))
		}
		if r.Intn(2) == 0 && nops > 1 {
			for i := range ins {
				ins[i] = ins[0]
			}
		}
		if name == ClampOp && nops == 3 && r.Intn(2) == 0 {
			ins[0] = g.NewTensor(ins[1].(*g.TensorType).Elem)
			ins[2] = ins[0]
		}
		b := newFB(t, ins...)
		var a g.DictAttr
		if r.Intn(10) == 0 {
			a = a.Set(attrNames[r.Intn(len(attrNames))], randAttr(r))
		}
		op := b.op(name, b.f.Args(), []g.Type{randType(r)}, a)
		if r.Intn(2) == 0 {
			if tys, err := def.Infer(op); err == nil {
				op.Results[0].Type = tys[0]
			}
		}
		b.ret(op.Results...)
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("panic %v on\n%s", p, describe(op))
				}
			}()
			_, _ = def.Infer(op)
			if g.Verify(b.m) == nil {
				if _, err := g.Interpret(b.f, randArgs(r, b.f)); err == nil {
					evaluated++
				}
				_, err := def.Eval(op, nil)
				require.Error(t, err)
			}
		}()
	}
	require.Greater(t, evaluated, 500)
}
