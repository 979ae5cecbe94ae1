package graph

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tessera-ml/tessera/graphir"
)

var (
	nan  = math.NaN()
	inf  = math.Inf(1)
	ninf = math.Inf(-1)
	negZ = math.Copysign(0, -1)
)

// typed makes a tensor of element type dt.
func typed(dt graphir.DType, shape []int64, data ...float64) *graphir.Tensor {
	x := &graphir.Tensor{Type: graphir.NewTensor(dt, shape...), Data: data}
	if int64(len(data)) != x.Type.NumElements() {
		panic("typed: wrong element count")
	}
	return x
}

// vec is a 1-D f32 tensor.
func vec(data ...float64) *graphir.Tensor { return tensor([]int64{int64(len(data))}, data...) }

func TestMathUnaryHandValues(t *testing.T) {
	f32 := func(v float64) float64 { return float64(float32(v)) }
	cases := []struct {
		op      string
		in, out []float64
	}{
		{ExpOp, []float64{0, 1, ninf, inf, nan, -200}, []float64{1, f32(math.E), 0, inf, nan, 0}},
		{LogOp, []float64{1, 0, -1, inf, nan}, []float64{0, ninf, nan, inf, nan}},
		{SqrtOp, []float64{4, 0, -1, inf, 2}, []float64{2, 0, nan, inf, f32(math.Sqrt2)}},
		{ErfOp, []float64{0, 0.5, -1, inf, ninf, nan}, []float64{0, f32(0.5204998778130465), f32(-0.8427007929497149), 1, -1, nan}},
		{AtanOp, []float64{0, 1, -1, inf, ninf, nan, 1e30}, []float64{0, f32(math.Pi / 4), f32(-math.Pi / 4), f32(math.Pi / 2), f32(-math.Pi / 2), nan, f32(math.Pi / 2)}},
		{SinOp, []float64{0, math.Pi / 6, -math.Pi / 2, 100, inf, nan}, []float64{0, 0.5, -1, f32(-0.50636564110975879), nan, nan}},
		{CosOp, []float64{0, math.Pi / 3, math.Pi, 100, ninf, nan}, []float64{1, 0.5, -1, f32(0.86231887228768389), nan, nan}},
		{TanOp, []float64{0, math.Pi / 4, -math.Pi / 4, 100, inf}, []float64{0, 1, -1, f32(-0.58721391515692908), nan}},
		{AsinOp, []float64{0, 0.5, -1, 1.5, nan}, []float64{0, f32(math.Pi / 6), f32(-math.Pi / 2), nan, nan}},
		{AcosOp, []float64{1, 0.5, -1, 0, -1.5}, []float64{0, f32(math.Pi / 3), f32(math.Pi), f32(math.Pi / 2), nan}},
		{SinhOp, []float64{0, 1, -1, 1e-10, 100, inf, ninf}, []float64{0, f32(1.1752011936438014), f32(-1.1752011936438014), f32(1e-10), inf, inf, ninf}},
		{CoshOp, []float64{0, 1, -1, 100, ninf, nan}, []float64{1, f32(1.5430806348152437), f32(1.5430806348152437), inf, inf, nan}},
		{AsinhOp, []float64{0, 1, -1, 1e-10, inf, ninf}, []float64{0, f32(0.88137358701954303), f32(-0.88137358701954303), f32(1e-10), inf, ninf}},
		{AcoshOp, []float64{1, 2, 0.5, inf, nan}, []float64{0, f32(1.3169578969248168), nan, inf, nan}},
		{AtanhOp, []float64{0, 0.5, -0.5, 1, -1, 2}, []float64{0, f32(0.54930614433405489), f32(-0.54930614433405489), inf, ninf, nan}},
		{NegOp, []float64{1, -2, nan}, []float64{-1, 2, nan}},
		{AbsOp, []float64{1, -2, ninf}, []float64{1, 2, inf}},
		{ReciprocalOp, []float64{2, -4, 0, negZ, inf}, []float64{0.5, -0.25, inf, ninf, 0}},
		{FloorOp, []float64{1.5, -1.5, -0.5, 2, inf, nan, 1e10 + 0.5}, []float64{1, -2, -1, 2, inf, nan, f32(1e10 + 0.5)}},
		{CeilOp, []float64{1.5, -1.5, -0.5, 2, ninf, nan}, []float64{2, -1, 0, 2, ninf, nan}},
		{SignOp, []float64{3, -2, 0, nan, ninf, 1e-30}, []float64{1, -1, 0, nan, -1, 1}},
	}
	for _, c := range cases {
		t.Run(c.op, func(t *testing.T) {
			got := evalOp(t, c.op, nil, vec(c.in...))
			requireClose(t, c.out, got.Data, 1e-7)
		})
	}
	// ±0 keep their sign where IEEE says so.
	got := evalOp(t, CeilOp, nil, vec(-0.5))
	assert.True(t, math.Signbit(got.Data[0]), "ceil(-0.5) = -0")
	got = evalOp(t, SignOp, nil, vec(negZ))
	assert.Equal(t, 0.0, got.Data[0])
	got = evalOp(t, NegOp, nil, vec(0))
	assert.True(t, math.Signbit(got.Data[0]), "neg(0) = -0")
	for _, op := range []string{SinOp, TanOp, AsinOp, SinhOp, AsinhOp, AtanhOp} {
		got = evalOp(t, op, nil, vec(negZ))
		assert.True(t, math.Signbit(got.Data[0]), "%s(-0) = -0", op)
	}
}

// TestMod: ONNX's Mod node tests (test_mod_mixed_sign_int32,
// test_mod_mixed_sign_float32, test_mod_int64_fmod), zero divisors and
// the edge values of C fmod.
func TestMod(t *testing.T) {
	i32 := func(v ...float64) *graphir.Tensor { return typed(graphir.I32, []int64{int64(len(v))}, v...) }
	x, y := i32(-4, 7, 5, 4, -7, 8), i32(2, -3, 8, -2, 3, 5)
	assert.Equal(t, []float64{0, -2, 5, 0, 2, 3}, evalOp(t, ModOp, nil, x, y).Data)
	assert.Equal(t, []float64{0, 1, 5, 0, -1, 3}, evalOp(t, ModOp, attrs("fmod", 1), x, y).Data)
	// x mod 0 = x in both modes; MinInt mod -1 = 0; broadcasting.
	assert.Equal(t, []float64{-4, 7}, evalOp(t, ModOp, nil, i32(-4, 7), i32(0, 0)).Data)
	assert.Equal(t, []float64{-4, 7}, evalOp(t, ModOp, attrs("fmod", 1), i32(-4, 7), i32(0, 0)).Data)
	assert.Equal(t, []float64{0}, evalOp(t, ModOp, nil, i32(math.MinInt32), i32(-1)).Data)
	got := evalOp(t, ModOp, nil, typed(graphir.I64, []int64{2, 1}, -7, 7), typed(graphir.I64, []int64{3}, 3, -3, 4))
	assert.Equal(t, []float64{2, -1, 1, 1, -2, 3}, got.Data)
	got = evalOp(t, ModOp, attrs("fmod", 1), vec(-4.3, 7.2, 5, 4.3, -7.2, 8), vec(2.1, -3.4, 8, -2.1, 3.4, 5))
	requireClose(t, []float64{-0.1, 0.4, 5, 0.1, -0.4, 3}, got.Data, 1e-6)
	got = evalOp(t, ModOp, attrs("fmod", 1), vec(3, inf, 3, nan, -3, 5.5), vec(0, 2, inf, 2, ninf, 2))
	requireClose(t, []float64{nan, nan, 3, nan, -3, 1.5}, got.Data, 0)
	got = evalOp(t, ModOp, attrs("fmod", 1), vec(negZ), vec(2))
	assert.True(t, math.Signbit(got.Data[0]), "fmod(-0, 2) = -0")

	require.ErrorContains(t, checkOp(ModOp, []*graphir.TensorType{tt(3), tt(3)}, nil), "floating-point operands need fmod = 1")
	require.ErrorContains(t, checkOp(ModOp, []*graphir.TensorType{tt(3), tt(3)}, attrs("fmod", 2)), "'fmod' must be 0 or 1")
	b := graphir.NewTensor(graphir.I1, 3)
	require.ErrorContains(t, checkOp(ModOp, []*graphir.TensorType{b, b}, nil), "requires an integer or floating-point")
	require.ErrorContains(t, checkOp(ModOp, []*graphir.TensorType{tt(3), graphir.NewTensor(graphir.I32, 3)}, attrs("fmod", 1)), "element type")
}

func TestMathIntegerOps(t *testing.T) {
	x := typed(graphir.I32, []int64{4}, 5, -7, 0, 1)
	assert.Equal(t, []float64{1, -1, 0, 1}, evalOp(t, SignOp, nil, x).Data)
	assert.Equal(t, []float64{5, 7, 0, 1}, evalOp(t, AbsOp, nil, x).Data)
	assert.Equal(t, []float64{-5, 7, 0, -1}, evalOp(t, NegOp, nil, x).Data)
	assert.Equal(t, []float64{25, 49, 0, 1}, evalOp(t, PowOp, nil, x, typed(graphir.I32, nil, 2)).Data)
	for _, op := range []string{ExpOp, LogOp, SqrtOp, ErfOp, AtanOp, SinOp, CosOp, TanOp, AsinOp, AcosOp, SinhOp, CoshOp, AsinhOp, AcoshOp, AtanhOp, ReciprocalOp, FloorOp, CeilOp} {
		err := checkOp(op, []*graphir.TensorType{graphir.NewTensor(graphir.I32, 3)}, nil)
		require.ErrorContains(t, err, "requires a floating-point element type", op)
	}
	for _, op := range []string{NegOp, AbsOp, SignOp, PowOp} {
		types := []*graphir.TensorType{graphir.NewTensor(graphir.I1, 3)}
		if op == PowOp {
			types = append(types, types[0])
		}
		want := "requires an integer or floating-point element type"
		if op == NegOp {
			want = "requires a signed integer or floating-point element type"
		}
		require.ErrorContains(t, checkOp(op, types, nil), want, op)
	}
	// Unsigned: Abs is the identity, Sign 0 or 1, Neg is not defined
	// (ONNX Neg has no unsigned types); Mod is the remainder in both modes.
	u := typed(graphir.UI8, []int64{4}, 5, 255, 0, 1)
	assert.Equal(t, []float64{5, 255, 0, 1}, evalOp(t, AbsOp, nil, u).Data)
	assert.Equal(t, []float64{1, 1, 0, 1}, evalOp(t, SignOp, nil, u).Data)
	require.ErrorContains(t, checkOp(NegOp, []*graphir.TensorType{graphir.NewTensor(graphir.UI8, 3)}, nil), "'graph.neg' op requires a signed integer or floating-point element type, got tensor<3xui8>")
	for _, fmod := range []int{0, 1} {
		assert.Equal(t, []float64{2, 0, 0, 1}, evalOp(t, ModOp, attrs("fmod", fmod), u, typed(graphir.UI8, nil, 3)).Data)
	}
	assert.Equal(t, []float64{251, 4, 252, 253}, evalOp(t, SubOp, nil, typed(graphir.UI8, nil, 0), typed(graphir.UI8, []int64{4}, 5, 252, 4, 3)).Data, "ui8 subtraction wraps")
	assert.Equal(t, []float64{1, 85, 0, 0}, evalOp(t, DivOp, nil, u, typed(graphir.UI8, nil, 3)).Data)
}

func TestPowONNXCases(t *testing.T) {
	// test_pow_example, test_pow_bcast_scalar, test_pow_bcast_array
	got := evalOp(t, PowOp, nil, vec(1, 2, 3), vec(4, 5, 6))
	assert.Equal(t, []float64{1, 32, 729}, got.Data)
	got = evalOp(t, PowOp, nil, vec(1, 2, 3), tensor(nil, 2))
	assert.Equal(t, []float64{1, 4, 9}, got.Data)
	got = evalOp(t, PowOp, nil, tensor([]int64{2, 3}, 1, 2, 3, 4, 5, 6), vec(1, 2, 3))
	assert.Equal(t, []float64{1, 4, 27, 4, 25, 216}, got.Data)
	assert.Equal(t, []int64{2, 3}, got.Shape())
	// negative base: integral exponents are real, fractional ones NaN;
	// x^0 = 1 even for NaN; 0^-1 = inf.
	got = evalOp(t, PowOp, nil, vec(-2, -2, -2, -8, nan, 0, -0.5), vec(3, 2, 0.5, 1.0/3, 0, -1, -2))
	requireClose(t, []float64{-8, 4, nan, nan, 1, inf, 4}, got.Data, 0)
}

func TestMaxMin(t *testing.T) {
	a := tensor([]int64{2, 2}, 1, nan, -3, 4)
	b := vec(2, 0)
	got := evalOp(t, MaxOp, nil, a, b)
	requireClose(t, []float64{2, nan, 2, 4}, got.Data, 0)
	got = evalOp(t, MinOp, nil, a, b)
	requireClose(t, []float64{1, nan, -3, 0}, got.Data, 0)
	got = evalOp(t, MaxOp, nil, typed(graphir.I32, []int64{3}, 1, -5, 9), typed(graphir.I32, nil, 0))
	assert.Equal(t, []float64{1, 0, 9}, got.Data)
	require.ErrorContains(t, checkOp(MaxOp, []*graphir.TensorType{tt(2), graphir.NewTensor(graphir.I32, 2)}, nil), "element type")
	require.ErrorContains(t, checkOp(MinOp, []*graphir.TensorType{tt(2), tt(3)}, nil), "not broadcast-compatible")
}

func TestCast(t *testing.T) {
	src := `func.func @main(%x: tensor<5xf32>) -> (tensor<5xi32>, tensor<5xi1>, tensor<5xf32>) {
  %0 = graph.cast %x : (tensor<5xf32>) -> tensor<5xi32>
  %1 = graph.cast %x : (tensor<5xf32>) -> tensor<5xi1>
  %2 = graph.cast %0 : (tensor<5xi32>) -> tensor<5xf32>
  func.return %0, %1, %2 : tensor<5xi32>, tensor<5xi1>, tensor<5xf32>
}`
	m := parseModule(t, src)
	out, err := graphir.Interpret(m.Funcs[0], []*graphir.Tensor{vec(1.7, -1.7, 0, 0.2, -300.9)})
	require.NoError(t, err)
	assert.Equal(t, []float64{1, -1, 0, 0, -300}, out[0].Data)
	assert.Equal(t, []float64{1, 1, 0, 1, 1}, out[1].Data)
	assert.Equal(t, []float64{1, -1, 0, 0, -300}, out[2].Data)

	_, err = graphir.ParseString("bad.mlir", `func.func @main(%x: tensor<5xf32>) -> tensor<4xi32> {
  %0 = graph.cast %x : (tensor<5xf32>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}`)
	if err == nil {
		m, _ := graphir.ParseString("bad.mlir", `func.func @main(%x: tensor<5xf32>) -> tensor<4xi32> {
  %0 = graph.cast %x : (tensor<5xf32>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}`)
		err = graphir.Verify(m)
	}
	require.ErrorContains(t, err, "result shape must equal the operand shape")
	require.ErrorContains(t, err, "bad.mlir:2:")
}
