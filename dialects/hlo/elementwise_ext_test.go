package hlo

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	g "github.com/tessera-ml/tessera/graphir"
)

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
