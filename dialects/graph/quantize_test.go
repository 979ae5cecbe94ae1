package graph

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/graphir"
)

// TestQuantizeLinear checks ONNX QuantizeLinear's arithmetic: round half
// to even of x / scale, plus the zero point, saturated; per tensor and per
// axis; NaN to the zero point.
func TestQuantizeLinear(t *testing.T) {
	x := tensor([]int64{2, 3}, 0.25, -1.75, 100, 0.74, -70, math.NaN())
	got := evalOp(t, QuantizeLinearOp, nil, x, tensor(nil, 0.5), typed(graphir.UI8, nil, 128))
	assert.Equal(t, graphir.UI8, got.Type.Elem)
	// x / 0.5 = 0.5, -3.5, 200, 1.48, -140 → 0, -4, 200, 1, -140 (+128, saturated)
	assert.Equal(t, []float64{128, 124, 255, 129, 0, 128}, got.Data)
	got = evalOp(t, QuantizeLinearOp, attrs("axis", 0), x, tensor([]int64{2}, 0.25, 2), typed(graphir.I8, []int64{2}, -3, 4))
	assert.Equal(t, []float64{-2, -10, 127, 4, -31, 4}, got.Data)
	got = evalOp(t, QuantizeLinearOp, attrs("axis", -1), x, tensor([]int64{3}, 1, 1, 1), typed(graphir.UI8, []int64{3}, 0, 0, 0))
	assert.Equal(t, []float64{0, 0, 100, 1, 0, 0}, got.Data)
	// an i32 x with an f32 scale
	got = evalOp(t, QuantizeLinearOp, nil, typed(graphir.I32, []int64{3}, 5, -5, 1000), tensor([]int64{1}, 2), typed(graphir.I8, []int64{1}, 0))
	assert.Equal(t, []float64{2, -2, 127}, got.Data)
}

// TestQuantizeLinearBounds: min and max clamp instead of the type's
// range (max = 127 on ui8 is PyTorch's reduce_range), per tensor and per
// axis; NaN's zero point is clamped too.
func TestQuantizeLinearBounds(t *testing.T) {
	x := tensor([]int64{2, 3}, 0.25, -1.75, 100, 0.74, -70, math.NaN())
	got := evalOp(t, QuantizeLinearOp, attrs("max", 127), x, tensor(nil, 0.5), typed(graphir.UI8, nil, 128))
	// 0.5, -3.5, 200, 1.48, -140 → 0, -4, 200, 1, -140 (+128): 128, 124, 328, 129, -12
	assert.Equal(t, []float64{127, 124, 127, 127, 0, 127}, got.Data, "the zero point 128 itself is above max")
	got = evalOp(t, QuantizeLinearOp, attrs("max", 127), x, tensor(nil, 0.5), typed(graphir.UI8, nil, 64))
	assert.Equal(t, []float64{64, 60, 127, 65, 0, 64}, got.Data)
	got = evalOp(t, QuantizeLinearOp, attrs("axis", 0, "min", -5, "max", 20), x, tensor([]int64{2}, 0.25, 2), typed(graphir.I8, []int64{2}, -3, 4))
	assert.Equal(t, []float64{-2, -5, 20, 4, -5, 4}, got.Data)
	got = evalOp(t, QuantizeLinearOp, attrs("min", 10), x, tensor(nil, 1), typed(graphir.UI8, nil, 0))
	assert.Equal(t, []float64{10, 10, 100, 10, 10, 10}, got.Data, "NaN's zero point clamped to min")
	// The defaults are the type's range, written or not.
	plain := evalOp(t, QuantizeLinearOp, nil, x, tensor(nil, 0.5), typed(graphir.I8, nil, 3))
	assert.Equal(t, plain.Data, evalOp(t, QuantizeLinearOp, attrs("min", -128, "max", 127), x, tensor(nil, 0.5), typed(graphir.I8, nil, 3)).Data)
}

func TestDequantizeLinear(t *testing.T) {
	q := typed(graphir.UI8, []int64{2, 2}, 0, 128, 255, 129)
	got := evalOp(t, DequantizeLinearOp, nil, q, tensor(nil, 0.5), typed(graphir.UI8, nil, 128))
	assert.Equal(t, graphir.F32, got.Type.Elem)
	assert.Equal(t, []float64{-64, 0, 63.5, 0.5}, got.Data)
	got = evalOp(t, DequantizeLinearOp, attrs("axis", 0), typed(graphir.I8, []int64{2, 2}, -128, 127, 5, -5),
		tensor([]int64{2}, 0.25, 2), typed(graphir.I8, []int64{2}, 0, 5))
	assert.Equal(t, []float64{-32, 31.75, 0, -20}, got.Data)
	got = evalOp(t, DequantizeLinearOp, nil, typed(graphir.I32, []int64{2}, 1000, -3), tensor(nil, 0.125), typed(graphir.I32, nil, 0))
	assert.Equal(t, []float64{125, -0.375}, got.Data)
}

func TestQuantizeErrors(t *testing.T) {
	i8 := func(s ...int64) *graphir.TensorType { return graphir.NewTensor(graphir.I8, s...) }
	ui8 := func(s ...int64) *graphir.TensorType { return graphir.NewTensor(graphir.UI8, s...) }
	cases := []struct {
		op    string
		types []*graphir.TensorType
		a     graphir.DictAttr
		want  string
	}{
		{QuantizeLinearOp, []*graphir.TensorType{tt(2, 3), i8(), i8()}, nil, "scale must have a float element type, got tensor<i8>"},
		{QuantizeLinearOp, []*graphir.TensorType{tt(2, 3), tt(3), i8(2)}, attrs("axis", 1), "zero_point tensor<2xi8> must have the shape of scale tensor<3xf32>"},
		{QuantizeLinearOp, []*graphir.TensorType{tt(2, 3), tt(), graphir.NewTensor(graphir.I32)}, nil, "zero_point must be i8 or ui8 (the quantized type), got tensor<i32>"},
		{QuantizeLinearOp, []*graphir.TensorType{tt(2, 3), tt(2), i8(2)}, nil, "per-axis scale has 2 elements, but x tensor<2x3xf32> has 3 along axis 1"},
		{QuantizeLinearOp, []*graphir.TensorType{tt(2, 3), tt(3), i8(3)}, attrs("axis", 2), "axis 2 is out of range for rank 2"},
		{QuantizeLinearOp, []*graphir.TensorType{tt(2, 3), tt(2, 3), i8(2, 3)}, nil, "scale must be a scalar or 1-D (per axis), got tensor<2x3xf32>"},
		{QuantizeLinearOp, []*graphir.TensorType{graphir.NewTensor(graphir.F64, 2), tt(), ui8()}, nil, "x tensor<2xf64> and scale tensor<f32> must have one float element type"},
		{QuantizeLinearOp, []*graphir.TensorType{tt(2, 3), tt(), ui8()}, attrs("max", 256), "max = 256 is outside ui8's range"},
		{QuantizeLinearOp, []*graphir.TensorType{tt(2, 3), tt(), i8()}, attrs("min", -129), "min = -129 is outside i8's range"},
		{QuantizeLinearOp, []*graphir.TensorType{tt(2, 3), tt(), ui8()}, attrs("min", 30, "max", 20), "min = 30 is above max = 20"},
		{DequantizeLinearOp, []*graphir.TensorType{ui8(2), tt(), ui8()}, attrs("max", 127), "does not accept attribute 'max'"},
		{DequantizeLinearOp, []*graphir.TensorType{tt(2), tt(), i8()}, nil, "x must be i8, ui8 or i32, got tensor<2xf32>"},
		{DequantizeLinearOp, []*graphir.TensorType{i8(2), tt(), ui8()}, nil, "zero_point tensor<ui8> must have x's element type i8"},
	}
	for _, c := range cases {
		err := checkOp(c.op, c.types, c.a)
		require.Error(t, err, c.want)
		assert.Contains(t, err.Error(), c.want)
	}
}
