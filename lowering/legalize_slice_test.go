package lowering

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/schedule"
)

// structCase is a one-op graph function over one f32 argument of shape
// in; every result of the op is returned (split has several).
type structCase struct {
	name  string
	op    string
	in    []int64
	attrs graphir.DictAttr
}

// structModule builds @main(%x) { %r... = op(%x) {attrs}; return %r... }.
func structModule(t *testing.T, c structCase) *graphir.Module {
	t.Helper()
	f := graphir.NewFunc("main", &graphir.FunctionType{Inputs: []graphir.Type{graphir.NewTensor(graphir.F32, c.in...)}}, caseLoc)
	var results []graphir.Type
	if c.op == graph.SplitOp && c.attrs.Get("split") == nil && c.attrs.Get("num_outputs") == nil {
		require.Fail(t, "split cases name their pieces")
	}
	op, err := graphir.Build(c.op, f.Args(), c.attrs, caseLoc)
	require.NoError(t, err, "building %s", c.name)
	for _, r := range op.Results {
		results = append(results, r.Type)
	}
	f.Entry().Append(op)
	f.Entry().Append(graphir.NewOp(graphir.ReturnOpName, op.Results, nil, nil, caseLoc))
	f.Type.Results = results
	m := &graphir.Module{}
	m.AddFunc(f)
	require.NoError(t, graphir.Verify(m), "graph IR of %s", c.name)
	return m
}

// checkStructCases runs every case: the graph interpreter against the
// legalized function, the legalized-and-fused function and the tensor IR
// of the fused function (with elementwise inlining), on random inputs that
// include repeated values (ties for max/min).
func checkStructCases(t *testing.T, cases []structCase) {
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := structModule(t, c)
			rng := rand.New(rand.NewSource(int64(i) + 11))
			x := randomTensor(rng, graphir.AsTensor(m.Funcs[0].Type.Inputs[0]), -3, 3)
			for j := range x.Data {
				if rng.Intn(8) == 0 {
					x.Data[j] = 1.5
				}
			}
			args := []*graphir.Tensor{x}
			want, err := graphir.Interpret(m.Funcs[0], args)
			require.NoError(t, err)

			lm := structModule(t, c)
			runPipeline(t, lm, graph.LegalizeToHLOPassName)
			checkLowered(t, lm, &caseLoc, c.name)
			got, err := graphir.Interpret(lm.Funcs[0], args)
			require.NoError(t, err, "interpreting\n%s", graphir.Print(lm))
			requireClose(t, want, got, c.name)

			fm := structModule(t, c)
			runPipeline(t, fm, graph.LegalizeToHLOPassName+",canonicalize,cse,fuse")
			got, err = graphir.Interpret(fm.Funcs[0], args)
			require.NoError(t, err, "interpreting\n%s", graphir.Print(fm))
			requireClose(t, want, got, c.name+" (fused)")

			tm, err := LowerToTIR(fm)
			require.NoError(t, err, "lowering\n%s", graphir.Print(fm))
			require.NoError(t, schedule.InlineElementwiseModule(tm))
			outs := runHost(t, tm, "main", args)
			require.Len(t, outs, len(want))
			for k := range want {
				requireTIRClose(t, want[k], outs[k], 1e-5, c.name)
			}
		})
	}
}

func sliceCases() []structCase {
	var cs []structCase
	add := func(name, op string, in []int64, a graphir.DictAttr) {
		cs = append(cs, structCase{name: op[len("graph."):] + "/" + name, op: op, in: in, attrs: a})
	}
	const big = int64(1) << 62
	// split: explicit sizes (with a zero-sized piece), num_outputs with an
	// uneven last piece, negative axis.
	add("sizes", graph.SplitOp, s(2, 7, 3), attrs("axis", 1, "split", s(2, 0, 4, 1)))
	add("neg_axis", graph.SplitOp, s(4, 6), attrs("axis", -1, "split", s(3, 3)))
	add("num_outputs_uneven", graph.SplitOp, s(7, 2), attrs("num_outputs", 3))
	add("single", graph.SplitOp, s(5), attrs("split", s(5)))
	// slice: clamping, negative indices, negative steps, default axes.
	add("basic", graph.SliceOp, s(5, 7), attrs("starts", s(1, 2), "ends", s(4, 6)))
	add("default_axes_steps", graph.SliceOp, s(6, 4, 3), attrs("starts", s(0, 1), "ends", s(5, 100)))
	add("neg_axes", graph.SliceOp, s(3, 8), attrs("starts", s(-6), "ends", s(-1), "axes", s(-1)))
	add("step2", graph.SliceOp, s(9, 5), attrs("starts", s(1, 0), "ends", s(9, 5), "steps", s(2, 3)))
	add("step-1_full", graph.SliceOp, s(4, 7), attrs("starts", s(-1), "ends", s(-big), "axes", s(1), "steps", s(-1)))
	add("step-2", graph.SliceOp, s(3, 10), attrs("starts", s(8), "ends", s(0), "axes", s(1), "steps", s(-2)))
	add("step-3_clamped", graph.SliceOp, s(11, 2), attrs("starts", s(big), "ends", s(-big), "axes", s(0), "steps", s(-3)))
	add("both_negative", graph.SliceOp, s(5, 6, 3), attrs("starts", s(-2, 4), "ends", s(0, -10), "axes", s(2, -2), "steps", s(-1, -2)))
	add("mixed_steps", graph.SliceOp, s(6, 7), attrs("starts", s(5, 1), "ends", s(0, 7), "steps", s(-2, 3)))
	add("start_out_of_range", graph.SliceOp, s(4, 5), attrs("starts", s(10), "ends", s(20), "axes", s(1)))
	add("empty_reversed", graph.SliceOp, s(4, 5), attrs("starts", s(1), "ends", s(3), "axes", s(0), "steps", s(-1)))
	add("end_out_of_range", graph.SliceOp, s(3, 4), attrs("starts", s(1), "ends", s(1000), "axes", s(0)))
	// gather: negative, repeated, multi-dimensional, rank-0, runs.
	gi := func(shape []int64, vs ...int64) graphir.Attribute {
		return &graphir.DenseElementsAttr{Type: graphir.NewTensor(graphir.I64, shape...), Ints: vs}
	}
	add("axis0", graph.GatherOp, s(5, 3), attrs("indices", gi(s(3), 0, 2, 4)))
	add("negative_repeated", graph.GatherOp, s(4, 3), attrs("axis", 1, "indices", gi(s(5), -1, 0, 0, 0, -3)))
	add("2d_indices", graph.GatherOp, s(2, 6, 3), attrs("axis", -2, "indices", gi(s(2, 3), 5, 4, 3, 1, 1, -6)))
	add("scalar_index", graph.GatherOp, s(3, 4, 2), attrs("axis", 1, "indices", gi(nil, -2)))
	add("runs", graph.GatherOp, s(10, 2), attrs("indices", gi(s(9), 0, 1, 2, 3, 7, 5, 9, 9, 9)))
	add("i32_indices", graph.GatherOp, s(4, 2), attrs("indices", &graphir.DenseElementsAttr{Type: graphir.NewTensor(graphir.I32, 2, 2), Ints: []int64{3, 0, -1, 2}}))
	// pad: constant with cropping, reflect and edge with odd sizes.
	add("constant", graph.PadOp, s(3, 5), attrs("pads", s(1, 2, 0, 3), "value", 1.25))
	add("constant_crop", graph.PadOp, s(4, 5), attrs("pads", s(-1, 2, 1, -3)))
	add("reflect", graph.PadOp, s(3, 5), attrs("pads", s(2, 4, 1, 3), "mode", graphir.StringAttr("reflect")))
	add("reflect_crop", graph.PadOp, s(5, 7), attrs("pads", s(-1, 3, 2, -2), "mode", graphir.StringAttr("reflect")))
	add("reflect_4d", graph.PadOp, s(1, 2, 3, 3), attrs("pads", s(0, 0, 2, 1, 0, 0, 1, 2), "mode", graphir.StringAttr("reflect")))
	add("reflect_long", graph.PadOp, s(3, 2), attrs("pads", s(5, 3, 4, 1), "mode", graphir.StringAttr("reflect")))
	add("reflect_size1", graph.PadOp, s(1, 4), attrs("pads", s(2, 0, 1, 1), "mode", graphir.StringAttr("reflect")))
	add("edge", graph.PadOp, s(3, 5), attrs("pads", s(3, 0, 2, 4), "mode", graphir.StringAttr("edge")))
	add("edge_single", graph.PadOp, s(1, 3), attrs("pads", s(2, 1, 1, 0), "mode", graphir.StringAttr("edge")))
	add("edge_crop", graph.PadOp, s(4, 6), attrs("pads", s(-2, 1, 3, -4), "mode", graphir.StringAttr("edge")))
	// expand: both directions, rank extension, identity.
	add("bidirectional", graph.ExpandOp, s(3, 1), attrs("shape", s(2, 1, 6)))
	add("same", graph.ExpandOp, s(2, 3), attrs("shape", s(2, 3)))
	add("ones", graph.ExpandOp, s(4, 1, 3), attrs("shape", s(1, 1)))
	add("rank0_target", graph.ExpandOp, s(1), attrs("shape", s(3, 5)))
	// tile.
	add("2d", graph.TileOp, s(2, 3), attrs("repeats", s(3, 2)))
	add("identity", graph.TileOp, s(2, 3), attrs("repeats", s(1, 1)))
	add("3d", graph.TileOp, s(1, 2, 3), attrs("repeats", s(2, 1, 3)))
	add("zero", graph.TileOp, s(2, 3), attrs("repeats", s(0, 2)))
	return cs
}

func TestLegalizeSliceOpsAgreement(t *testing.T) {
	checkStructCases(t, sliceCases())
}

// TestStructuralOpsCovered: every structural graph op has a rule and a case.
func TestStructuralOpsCovered(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range append(sliceCases(), reduceCases()...) {
		covered[c.op] = true
	}
	for _, name := range []string{graph.SplitOp, graph.SliceOp, graph.GatherOp, graph.PadOp, graph.ExpandOp, graph.TileOp,
		graph.ReduceSumOp, graph.ReduceMeanOp, graph.ReduceMaxOp, graph.ReduceMinOp, graph.ReduceProdOp,
		graph.ReduceL2Op, graph.ReduceLogSumExpOp, graph.LogSoftmaxOp} {
		assert.True(t, covered[name], "no case for %s", name)
		assert.True(t, graph.Legalizes(name))
	}
}

// TestLegalizeSliceIR pins the hlo structure of the take construction.
func TestLegalizeSliceIR(t *testing.T) {
	count := func(m *graphir.Module) map[string]int {
		n := map[string]int{}
		m.Walk(func(op *graphir.Op) { n[op.Name]++ })
		return n
	}
	// A reversal of 4 elements: one ascending slice, 4 one-element slices.
	m := structModule(t, structCase{op: graph.SliceOp, in: s(2, 4), attrs: attrs("starts", s(-1), "ends", s(-5), "axes", s(1), "steps", s(-1))})
	runPipeline(t, m, graph.LegalizeToHLOPassName)
	n := count(m)
	assert.Equal(t, 4, n["hlo.slice"])
	assert.Equal(t, 1, n["hlo.concatenate"])
	// Runs become single (strided) slices: [0..3], [7], [5, 9] (stride 4)
	// and [9, 9] a one-element slice broadcast to 2.
	m = structModule(t, sliceCases()[findCase(t, sliceCases(), "gather/runs")])
	runPipeline(t, m, graph.LegalizeToHLOPassName)
	n = count(m)
	assert.Equal(t, 4, n["hlo.slice"], graphir.Print(m))
	assert.Equal(t, 1, n["hlo.broadcast_in_dim"])
	// Tile is a broadcast and a reshape.
	m = structModule(t, structCase{op: graph.TileOp, in: s(2, 3), attrs: attrs("repeats", s(2, 2))})
	runPipeline(t, m, graph.LegalizeToHLOPassName)
	assert.Equal(t, map[string]int{"hlo.broadcast_in_dim": 1, "hlo.reshape": 1, "func.return": 1}, count(m))
}

func findCase(t *testing.T, cs []structCase, name string) int {
	for i, c := range cs {
		if c.name == name {
			return i
		}
	}
	require.Fail(t, "no case "+name)
	return -1
}

// TestLegalizeStructuralDiagnostics: legalizing IR that was not verified
// reports the op's verifier diagnostic at the op, and the failed op and
// its operands are left as they were.
func TestLegalizeStructuralDiagnostics(t *testing.T) {
	for _, c := range []struct{ src, msg string }{
		{`func.func @main(%x: tensor<4x2xf32>) -> tensor<1x2xf32> {
  %0 = "graph.split"(%x) {split = [1, 3]} : (tensor<4x2xf32>) -> tensor<1x2xf32>
  func.return %0 : tensor<1x2xf32>
}`, "d.mlir:2:8: error: 'graph.split' op inferred result types (tensor<1x2xf32>, tensor<3x2xf32>) do not match the written types (tensor<1x2xf32>)"},
		{`func.func @main(%x: tensor<4x2xf32>) -> tensor<8x2xf32> {
  %0 = "graph.tile"(%x) {repeats = [2]} : (tensor<4x2xf32>) -> tensor<8x2xf32>
  func.return %0 : tensor<8x2xf32>
}`, "d.mlir:2:8: error: 'graph.tile' op repeats [2] must have 2 entries (the input rank)"},
		{`func.func @main(%x: tensor<4x2xf32>) -> tensor<2xf32> {
  %0 = "graph.reduce_sum"(%x) {axes = [0, 0]} : (tensor<4x2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}`, "d.mlir:2:8: error: 'graph.reduce_sum' op axes [0, 0] names dimension 0 more than once"},
		{`func.func @main(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %0 = "graph.reduce_max"(%x) {axes = [0]} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  func.return %0 : tensor<4x2xf32>
}`, "d.mlir:2:8: error: 'graph.reduce_max' op inferred result types (tensor<1x2xf32>) do not match the written types (tensor<4x2xf32>)"},
		{`func.func @main(%x: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %0 = "graph.pad"(%x) {pads = [0, 0, 0, 0, 1]} : (tensor<4x2xf32>) -> tensor<4x2xf32>
  func.return %0 : tensor<4x2xf32>
}`, "d.mlir:2:8: error: 'graph.pad' op pads [0, 0, 0, 0, 1] must have 4 entries"},
	} {
		m, err := graphir.ParseString("d.mlir", c.src)
		require.NoError(t, err)
		require.Error(t, graphir.Verify(m))
		before := graphir.Print(m)
		err = legalizeModule(m)
		require.Error(t, err)
		assert.Contains(t, err.Error(), c.msg)
		assert.Equal(t, before, graphir.Print(m), "the failed op is left as it was")
	}
}
