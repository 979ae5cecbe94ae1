package graph

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tessera-ml/tessera/graphir"
)

func TestActivationHandValues(t *testing.T) {
	cases := []struct {
		name    string
		op      string
		attrs   graphir.DictAttr
		in, out []float64
	}{
		{"softplus", SoftplusOp, nil, []float64{0, 1, -1, 100, -100, inf, ninf, nan},
			[]float64{math.Ln2, 1.3132616875182228, 0.31326168751822286, 100, 3.720075976020836e-44, inf, 0, nan}},
		{"softsign", SoftsignOp, nil, []float64{1, -3, 0, inf, nan}, []float64{0.5, -0.75, 0, nan, nan}},
		// ONNX test_clip_example / test_clip_inbounds / NaN propagation (np.clip)
		{"clip", ClipOp, attrs("min", -1.0, "max", 1.0), []float64{-2, 0.5, 2, nan, ninf}, []float64{-1, 0.5, 1, nan, -1}},
		{"clip min only", ClipOp, attrs("min", 0.0), []float64{-2, 0.5, inf}, []float64{0, 0.5, inf}},
		{"clip max only", ClipOp, attrs("max", 0.0), []float64{-2, 0.5, ninf}, []float64{-2, 0, ninf}},
		{"clip unbounded", ClipOp, nil, []float64{-2, 0.5, nan}, []float64{-2, 0.5, nan}},
		{"clip min>max gives max", ClipOp, attrs("min", 2.0, "max", 1.0), []float64{0, 1.5, 3}, []float64{1, 1, 1}},
		{"hard_sigmoid", HardSigmoidOp, nil, []float64{-3, 0, 1, 3, nan}, []float64{0, 0.5, 0.7, 1, nan}},
		// test_hardsigmoid_example
		{"hard_sigmoid example", HardSigmoidOp, attrs("alpha", 0.5, "beta", 0.6), []float64{-1, 0, 1}, []float64{0.1, 0.6, 1}},
		// test_hardswish
		{"hard_swish", HardSwishOp, nil, []float64{-4, -1, 0, 1, 4, nan}, []float64{0, -1.0 / 3, 0, 2.0 / 3, 4, nan}},
		{"leaky_relu", LeakyReluOp, nil, []float64{-1, 0, 2, nan}, []float64{-0.01, 0, 2, nan}},
		// test_leakyrelu_example
		{"leaky_relu example", LeakyReluOp, attrs("alpha", 0.1), []float64{-1, 0, 1}, []float64{-0.1, 0, 1}},
		// test_elu_example
		{"elu", EluOp, attrs("alpha", 2.0), []float64{-1, 0, 1, ninf, nan}, []float64{-1.2642411176571153, 0, 1, -2, nan}},
		{"elu default", EluOp, nil, []float64{-1}, []float64{-0.6321205588285577}},
		// test_selu_example
		{"selu", SeluOp, attrs("alpha", 2.0, "gamma", 3.0), []float64{-1, 0, 1, nan}, []float64{-3.7927234602634466, 0, 3, nan}},
		{"selu default", SeluOp, nil, []float64{-1, 1}, []float64{-1.1113307378125625, 1.0507010221481323}},
		// test_celu: alpha = 2; max(0, x) + min(0, alpha·(e^(x/alpha) − 1))
		{"celu", CeluOp, attrs("alpha", 2.0), []float64{-1, 0, 1, ninf, inf, nan}, []float64{-0.7869386805747332, 0, 1, -2, inf, nan}},
		{"celu default", CeluOp, nil, []float64{-1, 3}, []float64{-0.6321205588285577, 3}},
		{"celu negative alpha", CeluOp, attrs("alpha", -1.0), []float64{-1, 1}, []float64{-1.718281828459045, 1}},
		// test_shrink_hard (lambd 1.5) and test_shrink_soft (lambd 1.5, bias 1.5)
		{"shrink hard", ShrinkOp, attrs("lambd", 1.5), []float64{-2, -1, 0, 1, 2, nan}, []float64{-2, 0, 0, 0, 2, 0}},
		{"shrink soft", ShrinkOp, attrs("lambd", 1.5, "bias", 1.5), []float64{-2, -1, 0, 1, 2}, []float64{-0.5, 0, 0, 0, 0.5}},
		{"shrink default", ShrinkOp, nil, []float64{-0.5, 0.75, ninf}, []float64{0, 0.75, ninf}},
		// mish(x) = x·tanh(ln(1 + e^x))
		{"mish", MishOp, nil, []float64{0, 1, -1, 100, -100, nan}, []float64{0, 0.8650983882673103, -0.3034014613741, 100, -3.720075976020836e-42, nan}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := evalOp(t, c.op, c.attrs, vec(c.in...))
			requireClose(t, c.out, got.Data, 1e-6)
		})
	}
}

func TestClipInteger(t *testing.T) {
	x := typed(graphir.I32, []int64{4}, -9, 3, 20, 0)
	got := evalOp(t, ClipOp, attrs("min", -5, "max", 10), x)
	assert.Equal(t, []float64{-5, 3, 10, 0}, got.Data)
	got = evalOp(t, ClipOp, nil, x)
	assert.Equal(t, x.Data, got.Data)
}

func TestPRelu(t *testing.T) {
	// test_prelu_broadcast: slope [5] against x [3, 4, 5]; here [2, 3] x [3].
	x := tensor([]int64{2, 3}, -1, 2, -3, 0, -5, nan)
	got := evalOp(t, PReluOp, nil, x, vec(0.5, 1, 2))
	requireClose(t, []float64{-0.5, 2, -6, 0, -5, nan}, got.Data, 0)
	got = evalOp(t, PReluOp, nil, x, tensor(nil, 0.25))
	requireClose(t, []float64{-0.25, 2, -0.75, 0, -1.25, nan}, got.Data, 0)
	require.ErrorContains(t, checkOp(PReluOp, []*graphir.TensorType{tt(3), tt(2, 3)}, nil), "must broadcast to the input shape [3]")
	require.ErrorContains(t, checkOp(PReluOp, []*graphir.TensorType{tt(3), tt(2)}, nil), "not broadcast-compatible")
}

func TestActivationErrors(t *testing.T) {
	i32 := []*graphir.TensorType{graphir.NewTensor(graphir.I32, 3)}
	for _, op := range []string{SoftplusOp, SoftsignOp, HardSigmoidOp, HardSwishOp, LeakyReluOp, EluOp, SeluOp, CeluOp, ShrinkOp, MishOp} {
		require.ErrorContains(t, checkOp(op, i32, nil), "requires a floating-point element type", op)
	}
	require.ErrorContains(t, checkOp(ClipOp, []*graphir.TensorType{graphir.NewTensor(graphir.I1, 3)}, nil), "requires an integer or floating-point")
	require.ErrorContains(t, checkOp(LeakyReluOp, []*graphir.TensorType{tt(3)}, attrs("alpha", graphir.StringAttr("x"))), "'alpha'")
	require.ErrorContains(t, checkOp(HardSigmoidOp, []*graphir.TensorType{tt(3)}, attrs("alpha", math.Inf(1))), "must be finite")
	require.ErrorContains(t, checkOp(ClipOp, []*graphir.TensorType{tt(3)}, attrs("min", math.NaN())), "must not be NaN")
	require.ErrorContains(t, checkOp(CeluOp, []*graphir.TensorType{tt(3)}, attrs("alpha", 0.0)), "'alpha' must be non-zero")
	require.ErrorContains(t, checkOp(ShrinkOp, []*graphir.TensorType{tt(3)}, attrs("lambd", math.Inf(1))), "must be finite")
	err := checkOp(SeluOp, []*graphir.TensorType{tt(2)}, attrs("gamma", graphir.BoolAttr(true)))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "t.mlir:1:1")
}
