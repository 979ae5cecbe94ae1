package graph

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tessera-ml/tessera/graphir"
)

func TestCompareOps(t *testing.T) {
	a := tensor([]int64{2, 3}, 1, 2, 3, nan, 5, -1)
	b := vec(2, 2, 2)
	want := map[string][]float64{
		EqualOp:        {0, 1, 0, 0, 0, 0},
		LessOp:         {1, 0, 0, 0, 0, 1},
		GreaterOp:      {0, 0, 1, 0, 1, 0},
		LessEqualOp:    {1, 1, 0, 0, 0, 1},
		GreaterEqualOp: {0, 1, 1, 0, 1, 0},
	}
	for op, w := range want {
		got := evalOp(t, op, nil, a, b)
		assert.True(t, got.Type.Equal(graphir.NewTensor(graphir.I1, 2, 3)), "%s: %s", op, got.Type)
		assert.Equal(t, w, got.Data, op)
	}
	// i1 and integer operands compare too; NaN == NaN is false.
	got := evalOp(t, EqualOp, nil, vec(nan), vec(nan))
	assert.Equal(t, []float64{0}, got.Data)
	got = evalOp(t, EqualOp, nil, typed(graphir.I1, []int64{2}, 1, 0), typed(graphir.I1, nil, 1))
	assert.Equal(t, []float64{1, 0}, got.Data)
	require.ErrorContains(t, checkOp(LessOp, []*graphir.TensorType{tt(2), graphir.NewTensor(graphir.I32, 2)}, nil), "element type")
	require.ErrorContains(t, checkOp(GreaterOp, []*graphir.TensorType{tt(2), tt(3)}, nil), "not broadcast-compatible")
}

func TestLogicalOps(t *testing.T) {
	a := typed(graphir.I1, []int64{2, 2}, 0, 0, 1, 1)
	b := typed(graphir.I1, []int64{2}, 0, 1)
	assert.Equal(t, []float64{0, 0, 0, 1}, evalOp(t, AndOp, nil, a, b).Data)
	assert.Equal(t, []float64{0, 1, 1, 1}, evalOp(t, OrOp, nil, a, b).Data)
	assert.Equal(t, []float64{1, 1, 0, 0}, evalOp(t, NotOp, nil, a).Data)
	for _, op := range []string{AndOp, OrOp} {
		require.ErrorContains(t, checkOp(op, []*graphir.TensorType{tt(2), tt(2)}, nil), "requires element type i1", op)
	}
	require.ErrorContains(t, checkOp(NotOp, []*graphir.TensorType{tt(2)}, nil), "requires element type i1")
}

func TestWhere(t *testing.T) {
	// test_where_example
	c := typed(graphir.I1, []int64{2, 2}, 1, 0, 1, 1)
	x := tensor([]int64{2, 2}, 1, 2, 3, 4)
	y := tensor([]int64{2, 2}, 9, 8, 7, 6)
	assert.Equal(t, []float64{1, 8, 3, 4}, evalOp(t, WhereOp, nil, c, x, y).Data)
	// broadcast of all three: [2,1] x [3] x [] → [2,3]
	c = typed(graphir.I1, []int64{2, 1}, 1, 0)
	got := evalOp(t, WhereOp, nil, c, vec(1, 2, 3), tensor(nil, -1))
	assert.Equal(t, []int64{2, 3}, got.Shape())
	assert.Equal(t, []float64{1, 2, 3, -1, -1, -1}, got.Data)
	got = evalOp(t, WhereOp, nil, typed(graphir.I1, nil, 0), typed(graphir.I32, []int64{2}, 1, 2), typed(graphir.I32, []int64{3, 1}, 7, 8, 9))
	assert.Equal(t, []float64{7, 7, 8, 8, 9, 9}, got.Data)
	require.ErrorContains(t, checkOp(WhereOp, []*graphir.TensorType{tt(2), tt(2), tt(2)}, nil), "condition must have element type i1")
	require.ErrorContains(t, checkOp(WhereOp, []*graphir.TensorType{graphir.NewTensor(graphir.I1, 2), tt(2), graphir.NewTensor(graphir.I32, 2)}, nil), "element type")
	require.ErrorContains(t, checkOp(WhereOp, []*graphir.TensorType{graphir.NewTensor(graphir.I1, 4), tt(2), tt(2)}, nil), "not broadcast-compatible")
}

// TestElementwiseOpsNeverPanic builds every registered elementwise graph op
// whose result type is inferred (cast's is written) with random operand
// types (i1 included) and attributes and runs Infer, the verifier and,
// where they pass, the evaluator; none may panic.
func TestElementwiseOpsNeverPanic(t *testing.T) {
	var names []string
	for _, name := range graphir.RegisteredOps() {
		def := graphir.LookupOp(name)
		if strings.HasPrefix(name, "graph.") && def.Traits&graphir.Elementwise != 0 && def.Infer != nil {
			names = append(names, name)
		}
	}
	require.Subset(t, names, []string{ExpOp, AtanOp, SoftsignOp, WhereOp, EqualOp, AndOp, PReluOp})
	g := &randomOps{rng: newRNG(7), names: names, attrNames: []string{"alpha", "beta", "gamma", "min", "max", "axis"},
		dtypes: []graphir.DType{graphir.F32, graphir.F32, graphir.I1, graphir.I32}, maxRank: 3, maxDim: 4, maxAttrs: 2}
	built := 0
	for iter := 0; iter < 20000; iter++ {
		op, f, ok := g.draw()
		if !ok {
			continue
		}
		built++
		interpretSmall(g.rng, f)
		// Mismatched evaluator inputs are diagnosed, not indexed.
		_, err := op.Def.Eval(op, []*graphir.Tensor{{Type: tt(7), Data: make([]float64, 7)}})
		require.Error(t, err)
	}
	require.Greater(t, built, 2000, "too few valid ops drawn")
}
