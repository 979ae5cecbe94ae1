package lowering

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
)

func reduceCases() []structCase {
	var cs []structCase
	ops := []string{graph.ReduceSumOp, graph.ReduceMeanOp, graph.ReduceMaxOp, graph.ReduceMinOp,
		graph.ReduceProdOp, graph.ReduceL2Op, graph.ReduceLogSumExpOp}
	variants := []struct {
		name string
		in   []int64
		a    graphir.DictAttr
	}{
		{"all_keep", s(3, 4), nil},
		{"all_drop", s(2, 3, 5), attrs("keepdims", false)},
		{"empty_axes", s(3, 2), attrs("axes", s())},
		{"axis1", s(2, 5, 3), attrs("axes", s(1))},
		{"neg_axes_drop", s(2, 5, 3), attrs("axes", s(-1, 0), "keepdims", false)},
		{"unsorted_axes", s(3, 2, 4, 2), attrs("axes", s(3, 1))},
		{"rank0", s(), nil},
		{"size1", s(1, 7), attrs("axes", s(0), "keepdims", false)},
		{"odd", s(7, 9), attrs("axes", s(-1))},
		{"noop_empty_axes", s(3, 4), attrs("axes", s(), "noop_with_empty_axes", true)},
		{"noop_with_axes", s(3, 4), attrs("axes", s(0), "noop_with_empty_axes", true, "keepdims", false)},
	}
	for _, op := range ops {
		for _, v := range variants {
			cs = append(cs, structCase{name: op[len("graph."):] + "/" + v.name, op: op, in: v.in, attrs: v.a})
		}
	}
	for _, ax := range []int{0, 1, 2, -1, -3} {
		cs = append(cs, structCase{name: "log_softmax/axis" + string(rune('0'+ax+3)), op: graph.LogSoftmaxOp, in: s(3, 4, 5), attrs: attrs("axis", ax)})
	}
	cs = append(cs, structCase{name: "log_softmax/default", op: graph.LogSoftmaxOp, in: s(2, 9)})
	cs = append(cs, structCase{name: "log_softmax/1d", op: graph.LogSoftmaxOp, in: s(1)})
	return cs
}

func TestLegalizeReduceAgreement(t *testing.T) {
	checkStructCases(t, reduceCases())
}

// TestLegalizeLogSumExpInfinities: the legalized log_sum_exp agrees with
// the evaluator on slices that are all −inf, hold +inf, or hold huge values.
func TestLegalizeLogSumExpInfinities(t *testing.T) {
	c := structCase{op: graph.ReduceLogSumExpOp, in: s(4, 3), attrs: attrs("axes", s(1))}
	inf := math.Inf(1)
	x := &graphir.Tensor{Type: graphir.NewTensor(graphir.F32, 4, 3), Data: []float64{
		-inf, -inf, -inf,
		1, inf, 2,
		1000, 1000, -1000,
		-2, 0.5, 3,
	}}
	m := structModule(t, c)
	want, err := graphir.Interpret(m.Funcs[0], []*graphir.Tensor{x})
	require.NoError(t, err)
	assert.Equal(t, []float64{-inf, inf, float64(float32(1000 + math.Log(2)))}, want[0].Data[:3])
	lm := structModule(t, c)
	runPipeline(t, lm, graph.LegalizeToHLOPassName+",fuse")
	got, err := graphir.Interpret(lm.Funcs[0], []*graphir.Tensor{x})
	require.NoError(t, err)
	for i, w := range want[0].Data {
		g := got[0].Data[i]
		if math.IsInf(w, 0) {
			assert.Equal(t, w, g, "element %d", i)
			continue
		}
		assert.InDelta(t, w, g, 1e-5*math.Max(1, math.Abs(w)), "element %d", i)
	}
}

// TestLegalizeStructuralIntegers: integer reductions (identities are the
// type's extremes) and integer data movement agree between the graph
// interpreter, the legalized and fused hlo, and the tensor IR — exactly.
func TestLegalizeStructuralIntegers(t *testing.T) {
	src := `func.func @main(%x: tensor<5x3xi32>, %y: tensor<4x2xi64>) -> (tensor<3xi32>, tensor<5x1xi32>, tensor<i32>, tensor<1x3xi32>, tensor<2xi64>, tensor<6x3xi64>, tensor<3x2xi64>) {
  %0 = graph.reduce_sum %x {axes = [0], keepdims = false} : (tensor<5x3xi32>) -> tensor<3xi32>
  %1 = graph.reduce_max %x {axes = [1]} : (tensor<5x3xi32>) -> tensor<5x1xi32>
  %2 = graph.reduce_min %x {keepdims = false} : (tensor<5x3xi32>) -> tensor<i32>
  %3 = graph.reduce_prod %x {axes = [-2]} : (tensor<5x3xi32>) -> tensor<1x3xi32>
  %4 = graph.reduce_max %y {axes = [0], keepdims = false} : (tensor<4x2xi64>) -> tensor<2xi64>
  %5 = graph.pad %y {mode = "reflect", pads = [1, 0, 1, 1]} : (tensor<4x2xi64>) -> tensor<6x3xi64>
  %6 = graph.slice %y {starts = [-1], ends = [0], steps = [-1]} : (tensor<4x2xi64>) -> tensor<3x2xi64>
  func.return %0, %1, %2, %3, %4, %5, %6 : tensor<3xi32>, tensor<5x1xi32>, tensor<i32>, tensor<1x3xi32>, tensor<2xi64>, tensor<6x3xi64>, tensor<3x2xi64>
}`
	parse := func() *graphir.Module {
		m, err := graphir.ParseString("ints.mlir", src)
		require.NoError(t, err)
		require.NoError(t, graphir.Verify(m))
		return m
	}
	m := parse()
	rng := rand.New(rand.NewSource(3))
	var args []*graphir.Tensor
	for _, ty := range m.Funcs[0].Type.Inputs {
		args = append(args, randomTensor(rng, graphir.AsTensor(ty), 0, 0))
	}
	want, err := graphir.Interpret(m.Funcs[0], args)
	require.NoError(t, err)
	fm := parse()
	runPipeline(t, fm, graph.LegalizeToHLOPassName+",canonicalize,cse,fuse")
	got, err := graphir.Interpret(fm.Funcs[0], args)
	require.NoError(t, err)
	for i := range want {
		assert.Equal(t, want[i].Data, got[i].Data, "result %d (hlo)", i)
	}
	tm, err := LowerToTIR(fm)
	require.NoError(t, err)
	outs := runHost(t, tm, "main", args)
	for i := range want {
		requireTIRClose(t, want[i], outs[i], 0, "result", i)
	}
}
