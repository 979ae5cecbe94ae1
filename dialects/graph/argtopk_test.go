package graph

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/graphir"
)

func TestArgMaxArgMinEval(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	x := tensor([]int64{3, 4},
		1, 3, 3, -2,
		nan, 5, nan, -inf,
		-inf, -inf, 0, 0)
	cases := []struct {
		op   string
		a    graphir.DictAttr
		want []float64
	}{
		{ArgMaxOp, attrs("axis", 1), []float64{1, 0, 2}},
		{ArgMaxOp, attrs("axis", -1, "select_last_index", true), []float64{2, 2, 3}},
		{ArgMinOp, attrs("axis", 1, "keepdims", false), []float64{3, 0, 0}},
		{ArgMinOp, attrs("axis", 1, "select_last_index", true), []float64{3, 2, 1}},
		{ArgMaxOp, nil, []float64{1, 1, 1, 2}},
		{ArgMinOp, attrs("axis", 0, "select_last_index", true), []float64{1, 2, 1, 1}},
	}
	for _, c := range cases {
		got := evalOp(t, c.op, c.a, x)
		assert.Equal(t, graphir.I64, got.Type.Elem)
		assert.Equal(t, c.want, got.Data, "%s %v", c.op, c.a)
	}
	assert.Equal(t, "tensor<1x4xi64>", evalOp(t, ArgMaxOp, nil, x).Type.String())
	assert.Equal(t, "tensor<3xi64>", evalOp(t, ArgMaxOp, attrs("axis", 1, "keepdims", false), x).Type.String())
	ints := &graphir.Tensor{Type: graphir.NewTensor(graphir.I32, 4), Data: []float64{-7, 9, 9, -7}}
	assert.Equal(t, []float64{1}, evalOp(t, ArgMaxOp, nil, ints).Data)
	assert.Equal(t, []float64{3}, evalOp(t, ArgMinOp, attrs("select_last_index", true), ints).Data)
}

// evalTopKOp builds graph.topk on x with attributes a and evaluates it.
func evalTopKOp(t *testing.T, x *graphir.Tensor, a graphir.DictAttr) (vals, idxs *graphir.Tensor) {
	t.Helper()
	b := graphir.NewBlock(x.Type)
	op, err := graphir.Build(TopKOp, b.Args, a, graphir.Location{})
	require.NoError(t, err)
	require.NoError(t, graphir.VerifyOp(op))
	outs, err := op.Def.Eval(op, []*graphir.Tensor{x})
	require.NoError(t, err)
	require.Len(t, outs, 2)
	return outs[0], outs[1]
}

func TestTopKEval(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	x := tensor([]int64{2, 5}, 1, 3, 3, -2, 3, nan, inf, -inf, nan, 0)
	v, i := evalTopKOp(t, x, attrs("k", 3))
	assert.Equal(t, []float64{3, 3, 3}, v.Data[:3])
	assert.True(t, math.IsNaN(v.Data[3]) && math.IsNaN(v.Data[4]) && v.Data[5] == inf, "%v", v.Data)
	assert.Equal(t, []float64{1, 2, 4, 0, 3, 1}, i.Data)
	v, i = evalTopKOp(t, x, attrs("k", 2, "largest", false))
	assert.Equal(t, []float64{-2, 1}, v.Data[:2])
	assert.Equal(t, []float64{3, 0, 0, 3}, i.Data)
	v, i = evalTopKOp(t, x, attrs("k", 1, "axis", 0))
	assert.Equal(t, "tensor<1x5xf32>", v.Type.String())
	assert.Equal(t, "tensor<1x5xi64>", i.Type.String())
	assert.Equal(t, []float64{1, 1, 0, 1, 0}, i.Data)
}

// TestTopKEvalProperties checks evalTopK on random inputs with many ties
// against the definition: the indices are distinct positions, the values
// are the elements there, in order (most extreme first, ties by
// position), and no element left out comes before the last one kept.
func TestTopKEvalProperties(t *testing.T) {
	rng := newRNG(3)
	for iter := 0; iter < 200; iter++ {
		shape := []int64{1 + rng.Int64N(3), 1 + rng.Int64N(7), 1 + rng.Int64N(3)}
		x := graphir.NewZeroTensor(tt(shape...))
		for j := range x.Data {
			x.Data[j] = float64(rng.IntN(4)) - 1
			if rng.IntN(9) == 0 {
				x.Data[j] = math.NaN()
			}
		}
		ax := rng.IntN(3)
		n := shape[ax]
		k := rng.Int64N(n + 1)
		largest := rng.IntN(2) == 0
		v, i := evalTopKOp(t, x, attrs("k", int(k), "axis", ax, "largest", largest))
		outer, inner := product(shape[:ax]), product(shape[ax+1:])
		for o := int64(0); o < outer; o++ {
			for in := int64(0); in < inner; in++ {
				at := func(p int64) float64 { return x.Data[o*n*inner+p*inner+in] }
				before := func(p, q int64) bool { // p comes before q
					return beats(at(p), at(q), largest) || ties(at(p), at(q)) && p < q
				}
				kept := map[int64]bool{}
				for r := int64(0); r < k; r++ {
					p := int64(i.Data[o*k*inner+r*inner+in])
					require.False(t, kept[p], "position %d twice", p)
					kept[p] = true
					got := v.Data[o*k*inner+r*inner+in]
					require.True(t, ties(got, at(p)), "value %v at slot %d, element %v", got, r, at(p))
					if r > 0 {
						require.True(t, before(int64(i.Data[o*k*inner+(r-1)*inner+in]), p), "slots %d and %d out of order", r-1, r)
					}
					if r == k-1 {
						for q := int64(0); q < n; q++ {
							require.True(t, kept[q] || before(p, q), "left-out %d comes before kept %d", q, p)
						}
					}
				}
			}
		}
	}
}

func TestArgTopKVerifier(t *testing.T) {
	for _, c := range []struct {
		op   string
		in   *graphir.TensorType
		a    graphir.DictAttr
		want string
	}{
		{ArgMaxOp, graphir.NewTensor(graphir.I1, 3), nil, "requires a numeric (float or integer, not i1) element type, got tensor<3xi1>"},
		{ArgMinOp, tt(), nil, "input must have rank at least 1, got tensor<f32>"},
		{ArgMaxOp, tt(2, 3), attrs("axis", -3), "axis -3 is out of range for rank 2 (expected [-2, 1])"},
		{ArgMinOp, tt(2, 0), attrs("axis", 1), "dimension 1 (the axis) of tensor<2x0xf32> is empty: there is no position to select"},
		{TopKOp, tt(2, 3), nil, "k"},
		{TopKOp, tt(2, 3), attrs("k", 4), "k = 4 exceeds the size 3 of dimension 1 (the axis) of tensor<2x3xf32>"},
		{TopKOp, tt(2, 3), attrs("k", -1), "k = -1 must not be negative"},
		{TopKOp, graphir.NewTensor(graphir.I1, 3), attrs("k", 1), "requires a numeric"},
		{TopKOp, tt(4), attrs("k", 1, "axis", 1), "axis 1 is out of range for rank 1"},
	} {
		b := graphir.NewBlock(c.in)
		op, err := graphir.Build(c.op, b.Args, c.a, graphir.Location{})
		if err == nil {
			err = graphir.VerifyOp(op)
		}
		require.Error(t, err, "%s %s %v", c.op, c.in, c.a)
		assert.Contains(t, err.Error(), c.want)
	}
	// An empty non-axis dimension and k = 0 are fine.
	require.NoError(t, checkOp(ArgMaxOp, []*graphir.TensorType{tt(0, 3)}, attrs("axis", 1)))
	v, i := evalTopKOp(t, tensor([]int64{2, 3}, 1, 2, 3, 4, 5, 6), attrs("k", 0))
	assert.Equal(t, "tensor<2x0xf32>", v.Type.String())
	assert.Empty(t, i.Data)
}
