package graph

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tessera-ml/tessera/graphir"
)

func i64s(shape []int64, data ...float64) *graphir.Tensor { return typed(graphir.I64, shape, data...) }

// TestScatterElementsEval: the ONNX spec's examples, then duplicates with
// each reduction, negative and out-of-range indices, NaN in max and i1.
func TestScatterElementsEval(t *testing.T) {
	red := func(r string) graphir.DictAttr { return attrs("reduction", graphir.StringAttr(r)) }
	got := evalOp(t, ScatterElementsOp, nil, tensor([]int64{3, 3}, 0, 0, 0, 0, 0, 0, 0, 0, 0),
		i64s([]int64{2, 3}, 1, 0, 2, 0, 2, 1), tensor([]int64{2, 3}, 1, 1.1, 1.2, 2, 2.1, 2.2).Round())
	requireClose(t, []float64{2, 1.1, 0, 1, 0, 2.2, 0, 2.1, 1.2}, got.Data, 1e-7)

	row := tensor([]int64{1, 5}, 1, 2, 3, 4, 5)
	upd := tensor([]int64{1, 2}, 0.5, 0.25)
	got = evalOp(t, ScatterElementsOp, attrs("axis", 1), row, i64s([]int64{1, 2}, 1, 3), upd)
	require.Equal(t, []float64{1, 0.5, 3, 0.25, 5}, got.Data)
	// duplicates: none keeps the last, the reductions combine both in order
	dup := i64s([]int64{1, 2}, 1, 1)
	for r, want := range map[string]float64{"none": 0.25, "add": 2.75, "mul": 0.25, "max": 2, "min": 0.25} {
		a := red(r).Set("axis", graphir.IntAttr(-1))
		got = evalOp(t, ScatterElementsOp, a, row, dup, upd)
		require.Equal(t, []float64{1, want, 3, 4, 5}, got.Data, r)
	}
	// negative indices wrap; indices outside [−5, 4] are skipped
	got = evalOp(t, ScatterElementsOp, attrs("axis", 1), row, i64s([]int64{1, 2}, -1, -5), upd)
	require.Equal(t, []float64{0.25, 2, 3, 4, 0.5}, got.Data)
	got = evalOp(t, ScatterElementsOp, attrs("axis", 1), row, i64s([]int64{1, 2}, 5, -6), upd)
	require.Equal(t, row.Data, got.Data)

	nan := math.NaN()
	inf := math.Inf(1)
	got = evalOp(t, ScatterElementsOp, red("max"), tensor([]int64{4}, 1, nan, 3, inf), i64s([]int64{4}, 0, 1, 2, 3), tensor([]int64{4}, nan, 2, 0, nan))
	require.True(t, math.IsNaN(got.Data[0]) && math.IsNaN(got.Data[1]) && math.IsNaN(got.Data[3]), "NaN propagates, also next to +inf")
	require.Equal(t, 3.0, got.Data[2])
	got = evalOp(t, ScatterElementsOp, red("min"), tensor([]int64{2}, -inf, 1), i64s([]int64{2}, 0, 1), tensor([]int64{2}, nan, 0))
	require.True(t, math.IsNaN(got.Data[0]))
	require.Equal(t, 0.0, got.Data[1])

	b := typed(graphir.I1, []int64{3}, 0, 1, 0)
	bu := typed(graphir.I1, []int64{3}, 1, 1, 0)
	got = evalOp(t, ScatterElementsOp, red("add"), b, i64s([]int64{3}, 0, 0, 2), bu)
	require.Equal(t, []float64{1, 1, 0}, got.Data)
	got = evalOp(t, ScatterElementsOp, red("mul"), b, i64s([]int64{3}, 0, 0, 2), bu)
	require.Equal(t, []float64{0, 1, 0}, got.Data)
	// integer results wrap at the width
	i8 := typed(graphir.I8, []int64{2}, 100, 7)
	got = evalOp(t, ScatterElementsOp, red("add"), i8, i64s([]int64{2}, 0, 0), typed(graphir.I8, []int64{2}, 20, 10))
	require.Equal(t, []float64{-126, 7}, got.Data)
}

// TestScatterNDEval: the ONNX spec's first example, slices with
// duplicates, negative and out-of-range index vectors.
func TestScatterNDEval(t *testing.T) {
	got := evalOp(t, ScatterNDOp, nil, tensor([]int64{8}, 1, 2, 3, 4, 5, 6, 7, 8),
		i64s([]int64{4, 1}, 4, 3, 1, 7), tensor([]int64{4}, 9, 10, 11, 12))
	require.Equal(t, []float64{1, 11, 3, 10, 9, 6, 7, 12}, got.Data)

	x := tensor([]int64{3, 2}, 1, 2, 3, 4, 5, 6)
	u := tensor([]int64{2, 2}, 10, 20, 30, 40)
	got = evalOp(t, ScatterNDOp, nil, x, i64s([]int64{2, 1}, 2, 0), u)
	require.Equal(t, []float64{30, 40, 3, 4, 10, 20}, got.Data)
	got = evalOp(t, ScatterNDOp, nil, x, i64s([]int64{2, 1}, -1, -1), u)
	require.Equal(t, []float64{1, 2, 3, 4, 30, 40}, got.Data)
	got = evalOp(t, ScatterNDOp, attrs("reduction", graphir.StringAttr("mul")), x, i64s([]int64{2, 1}, 2, -1), u)
	require.Equal(t, []float64{1, 2, 3, 4, 1500, 4800}, got.Data)
	got = evalOp(t, ScatterNDOp, attrs("reduction", graphir.StringAttr("add")), x, i64s([]int64{2, 1}, 3, -4), u)
	require.Equal(t, x.Data, got.Data)
	// full index vectors of a 2-D operand, one of them out of range
	got = evalOp(t, ScatterNDOp, attrs("reduction", graphir.StringAttr("min")), x, i64s([]int64{3, 2}, 0, 1, 1, -2, 2, 0), tensor([]int64{3}, -1, 7, -5))
	require.Equal(t, []float64{1, -1, 3, 4, -5, 6}, got.Data)
}

func TestScatterErrors(t *testing.T) {
	i64 := func(shape ...int64) *graphir.TensorType { return graphir.NewTensor(graphir.I64, shape...) }
	for _, c := range []struct {
		op    string
		types []*graphir.TensorType
		a     graphir.DictAttr
		msg   string
	}{
		{ScatterElementsOp, []*graphir.TensorType{tt(3, 4), tt(2, 4), tt(2, 4)}, nil, "indices must have an integer element type, got tensor<2x4xf32>"},
		{ScatterElementsOp, []*graphir.TensorType{tt(3, 4), i64(2, 4), graphir.NewTensor(graphir.F64, 2, 4)}, nil, "updates must have the data's element type f32, got tensor<2x4xf64>"},
		{ScatterElementsOp, []*graphir.TensorType{tt(3, 4), i64(2, 4), tt(2, 3)}, nil, "updates must have the indices' shape [2, 4], got tensor<2x3xf32>"},
		{ScatterElementsOp, []*graphir.TensorType{tt(3, 4), i64(2), tt(2)}, nil, "indices must have the data's rank 2, got tensor<2xi64>"},
		{ScatterElementsOp, []*graphir.TensorType{tt(3, 4), i64(2, 5), tt(2, 5)}, nil, "indices dimension 1 has size 5, larger than the data's 4"},
		{ScatterElementsOp, []*graphir.TensorType{tt(3, 4), i64(2, 4), tt(2, 4)}, attrs("axis", 2), "axis 2 is out of range for rank 2 (expected [-2, 1])"},
		{ScatterElementsOp, []*graphir.TensorType{tt(), i64(), tt()}, nil, "data must have rank at least 1"},
		{ScatterElementsOp, []*graphir.TensorType{tt(3), i64(2), tt(2)}, attrs("reduction", graphir.StringAttr("sum")), `attribute 'reduction' must be one of ["none" "add" "mul" "max" "min"], got "sum"`},
		{ScatterNDOp, []*graphir.TensorType{tt(3, 4), i64(2, 3), tt(2)}, nil, "index vectors of length 3 exceed the data's rank 2"},
		{ScatterNDOp, []*graphir.TensorType{tt(3, 4), i64(2, 1), tt(2, 3)}, nil, "updates must have shape [2, 4] (indices.shape[:-1] ++ data.shape[1:]), got tensor<2x3xf32>"},
		{ScatterNDOp, []*graphir.TensorType{tt(3, 4), i64(), tt(4)}, nil, "indices must have rank at least 1, got tensor<i64>"},
	} {
		err := checkOp(c.op, c.types, c.a)
		require.Error(t, err, c.msg)
		require.Contains(t, err.Error(), c.msg)
	}
}
