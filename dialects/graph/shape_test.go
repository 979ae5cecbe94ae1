package graph

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tessera-ml/tessera/graphir"
)

func iota(n int64) []float64 {
	d := make([]float64, n)
	for i := range d {
		d[i] = float64(i)
	}
	return d
}

func TestFlatten(t *testing.T) {
	x := tensor([]int64{2, 3, 4}, iota(24)...)
	for _, c := range []struct {
		axis  int
		shape []int64
	}{{0, []int64{1, 24}}, {1, []int64{2, 12}}, {2, []int64{6, 4}}, {3, []int64{24, 1}}, {-1, []int64{6, 4}}, {-3, []int64{1, 24}}} {
		got := evalOp(t, FlattenOp, attrs("axis", c.axis), x)
		assert.Equal(t, c.shape, got.Shape())
		assert.Equal(t, x.Data, got.Data)
	}
	got := evalOp(t, FlattenOp, nil, x)
	assert.Equal(t, []int64{2, 12}, got.Shape())
	got = evalOp(t, FlattenOp, attrs("axis", 0), tensor(nil, 5))
	assert.Equal(t, []int64{1, 1}, got.Shape())
	err := checkOp(FlattenOp, []*graphir.TensorType{tt(2, 3)}, attrs("axis", 3))
	assert.ErrorContains(t, err, "'graph.flatten' op axis 3 is out of range for rank 2 (expected [-2, 2])")
}

func TestReshapeShape(t *testing.T) {
	cases := []struct {
		in, target, want []int64
		err              string
	}{
		{[]int64{2, 3, 4}, []int64{6, 4}, []int64{6, 4}, ""},
		{[]int64{2, 3, 4}, []int64{-1, 4}, []int64{6, 4}, ""},
		{[]int64{2, 3, 4}, []int64{0, -1}, []int64{2, 12}, ""},
		{[]int64{2, 3, 4}, []int64{0, 0, 2, 2}, []int64{2, 3, 2, 2}, ""},
		{[]int64{2, 3, 4}, []int64{24}, []int64{24}, ""},
		{[]int64{1}, []int64{}, []int64{}, ""},
		{[]int64{}, []int64{1, 1}, []int64{1, 1}, ""},
		{[]int64{0, 3}, []int64{3, 0}, nil, "shape [3, 3] has 9 elements, input [0, 3] has 0"}, // 0 copies input dim 1
		{[]int64{0, 3}, []int64{0, 3}, []int64{0, 3}, ""},
		{[]int64{2, 3, 4}, []int64{-1, -1}, nil, "has more than one -1"},
		{[]int64{2, 3, 4}, []int64{5, -1}, nil, "cannot infer -1 in shape [5, -1] for input [2, 3, 4] (24 elements)"},
		{[]int64{2, 3, 4}, []int64{5, 5}, nil, "shape [5, 5] has 25 elements, input [2, 3, 4] has 24"},
		{[]int64{2, 3}, []int64{0, 0, 0}, nil, "copies dimension 2 (0) but the input [2, 3] has rank 2"},
		{[]int64{2, 3}, []int64{-2, 3}, nil, "invalid dimension -2"},
		{[]int64{0, 3}, []int64{0, -1}, nil, "cannot infer -1 in shape [0, -1] for input [0, 3] (0 elements)"},
	}
	for _, c := range cases {
		got, err := ReshapeShape(c.in, c.target)
		if c.err != "" {
			require.Error(t, err, "%v %v", c.in, c.target)
			assert.Contains(t, err.Error(), c.err)
			continue
		}
		require.NoError(t, err, "%v %v", c.in, c.target)
		assert.Equal(t, c.want, got)
	}
	x := tensor([]int64{2, 3}, iota(6)...)
	got := evalOp(t, ReshapeOp, attrs("shape", []int64{3, -1}), x)
	assert.Equal(t, []int64{3, 2}, got.Shape())
	assert.Equal(t, x.Data, got.Data)
	err := checkOp(ReshapeOp, []*graphir.TensorType{tt(2, 3)}, nil)
	assert.ErrorContains(t, err, "requires attribute 'shape'")
	err = checkOp(ReshapeOp, []*graphir.TensorType{tt(2, 3)}, attrs("shape", []int64{4, 2}))
	assert.ErrorContains(t, err, "'graph.reshape' op shape [4, 2] has 8 elements, input [2, 3] has 6")
}

func TestTranspose(t *testing.T) {
	x := tensor([]int64{2, 3}, 1, 2, 3, 4, 5, 6)
	got := evalOp(t, TransposeOp, nil, x)
	assert.Equal(t, []int64{3, 2}, got.Shape())
	assert.Equal(t, []float64{1, 4, 2, 5, 3, 6}, got.Data)
	rng := newRNG(17)
	shape := []int64{2, 3, 4, 5}
	y := randTensor(rng, shape...)
	for _, perm := range [][]int64{{0, 1, 2, 3}, {3, 2, 1, 0}, {1, 3, 0, 2}, {2, 0, 3, 1}} {
		got := evalOp(t, TransposeOp, attrs("perm", perm), y)
		oshape := make([]int64, 4)
		for i, p := range perm {
			oshape[i] = shape[p]
		}
		require.Equal(t, oshape, got.Shape())
		for i := range got.Data {
			oi := unravel(int64(i), oshape)
			ii := make([]int64, 4)
			for d, p := range perm {
				ii[p] = oi[d]
			}
			require.Equal(t, y.Data[ravel(ii, shape)], got.Data[i])
		}
	}
	assert.Equal(t, []float64{7}, evalOp(t, TransposeOp, nil, tensor(nil, 7)).Data)
	for _, c := range []struct {
		perm []int64
		want string
	}{
		{[]int64{0, 0}, "perm [0, 0] is not a permutation of [0, 2)"},
		{[]int64{0, 2}, "perm [0, 2] is not a permutation"},
		{[]int64{-1, 0}, "not a permutation"},
		{[]int64{1, 0, 2}, "perm [1, 0, 2] must have 2 entries (the input rank)"},
	} {
		err := checkOp(TransposeOp, []*graphir.TensorType{tt(2, 3)}, attrs("perm", c.perm))
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.want)
	}
}

func TestConcat(t *testing.T) {
	a := tensor([]int64{2, 2}, 1, 2, 3, 4)
	b := tensor([]int64{2, 1}, 5, 6)
	c := tensor([]int64{1, 2}, 7, 8)
	got := evalOp(t, ConcatOp, attrs("axis", 1), a, b)
	assert.Equal(t, []int64{2, 3}, got.Shape())
	assert.Equal(t, []float64{1, 2, 5, 3, 4, 6}, got.Data)
	got = evalOp(t, ConcatOp, attrs("axis", -2), a, c, a)
	assert.Equal(t, []int64{5, 2}, got.Shape())
	assert.Equal(t, []float64{1, 2, 3, 4, 7, 8, 1, 2, 3, 4}, got.Data)
	got = evalOp(t, ConcatOp, attrs("axis", 0), a)
	assert.Equal(t, a.Data, got.Data)
	// zero-size operand
	got = evalOp(t, ConcatOp, attrs("axis", 1), a, &graphir.Tensor{Type: tt(2, 0)}, b)
	assert.Equal(t, []float64{1, 2, 5, 3, 4, 6}, got.Data)
	for _, cs := range []struct {
		types []*graphir.TensorType
		a     graphir.DictAttr
		want  string
	}{
		{[]*graphir.TensorType{tt(2, 2), tt(3, 1)}, attrs("axis", 1), "operand #1 tensor<3x1xf32> differs from operand #0 tensor<2x2xf32> in dimension 0 (concatenating along 1)"},
		{[]*graphir.TensorType{tt(2, 2), tt(2)}, attrs("axis", 0), "operand #1 tensor<2xf32> has rank 1, operand #0 tensor<2x2xf32> has rank 2"},
		{[]*graphir.TensorType{tt(2, 2)}, attrs("axis", 2), "axis 2 is out of range for rank 2"},
		{[]*graphir.TensorType{tt(2, 2)}, nil, "requires attribute 'axis'"},
		{[]*graphir.TensorType{tt(), tt()}, attrs("axis", 0), "operands must have rank at least 1"},
		{[]*graphir.TensorType{tt(2), graphir.NewTensor(graphir.I64, 2)}, attrs("axis", 0), "operand #1 has element type i64"},
	} {
		err := checkOp(ConcatOp, cs.types, cs.a)
		require.Error(t, err, cs.want)
		assert.Contains(t, err.Error(), cs.want)
	}
}
