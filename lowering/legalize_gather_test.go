package lowering

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/schedule"
)

// A gather case is a graph function whose integer arguments are index
// tensors, drawn in [lo, hi] (negative ones included: they wrap).
type gatherCase struct {
	name, op string
	src      string
	lo, hi   int
}

func gatherCases() []gatherCase {
	return []gatherCase{
		{"embedding", graph.GatherOp, `func.func @main(%w: tensor<11x5xf32>, %ids: tensor<3x4xi64>) -> tensor<3x4x5xf32> {
  %0 = graph.gather %w, %ids : (tensor<11x5xf32>, tensor<3x4xi64>) -> tensor<3x4x5xf32>
  func.return %0 : tensor<3x4x5xf32>
}`, -11, 10},
		{"axis1_i32_scalar", graph.GatherOp, `func.func @main(%x: tensor<2x7x3xf32>, %i: tensor<i32>) -> tensor<2x3xf32> {
  %0 = graph.gather %x, %i {axis = 1} : (tensor<2x7x3xf32>, tensor<i32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}`, -7, 6},
		{"last_axis", graph.GatherOp, `func.func @main(%x: tensor<3x5xf32>, %i: tensor<2x2xi64>) -> tensor<3x2x2xf32> {
  %0 = graph.gather %x, %i {axis = -1} : (tensor<3x5xf32>, tensor<2x2xi64>) -> tensor<3x2x2xf32>
  func.return %0 : tensor<3x2x2xf32>
}`, -5, 4},
		{"elements_axis0", graph.GatherElementsOp, `func.func @main(%x: tensor<4x3xf32>, %i: tensor<5x2xi64>) -> tensor<5x2xf32> {
  %0 = graph.gather_elements %x, %i : (tensor<4x3xf32>, tensor<5x2xi64>) -> tensor<5x2xf32>
  func.return %0 : tensor<5x2xf32>
}`, -4, 3},
		{"elements_axis2", graph.GatherElementsOp, `func.func @main(%x: tensor<2x3x6xf32>, %i: tensor<2x2x4xi32>) -> tensor<2x2x4xf32> {
  %0 = graph.gather_elements %x, %i {axis = -1} : (tensor<2x3x6xf32>, tensor<2x2x4xi32>) -> tensor<2x2x4xf32>
  func.return %0 : tensor<2x2x4xf32>
}`, -6, 5},
		{"nd_full", graph.GatherNDOp, `func.func @main(%x: tensor<3x4xf32>, %i: tensor<5x2xi64>) -> tensor<5xf32> {
  %0 = graph.gather_nd %x, %i : (tensor<3x4xf32>, tensor<5x2xi64>) -> tensor<5xf32>
  func.return %0 : tensor<5xf32>
}`, -3, 2},
		{"nd_slices", graph.GatherNDOp, `func.func @main(%x: tensor<4x3x2xf32>, %i: tensor<2x3x1xi64>) -> tensor<2x3x3x2xf32> {
  %0 = graph.gather_nd %x, %i : (tensor<4x3x2xf32>, tensor<2x3x1xi64>) -> tensor<2x3x3x2xf32>
  func.return %0 : tensor<2x3x3x2xf32>
}`, -3, 2},
		{"nd_batch_dims", graph.GatherNDOp, `func.func @main(%x: tensor<2x3x4x5xf32>, %i: tensor<2x3x2xi32>) -> tensor<2x3x5xf32> {
  %0 = graph.gather_nd %x, %i {batch_dims = 1} : (tensor<2x3x4x5xf32>, tensor<2x3x2xi32>) -> tensor<2x3x5xf32>
  func.return %0 : tensor<2x3x5xf32>
}`, -3, 2},
		{"nll_none_ignore", graph.NLLLossOp, `func.func @main(%x: tensor<3x5x2xf32>, %t: tensor<3x2xi64>) -> tensor<3x2xf32> {
  %0 = graph.nll_loss %x, %t {reduction = "none", ignore_index = -1} : (tensor<3x5x2xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}`, -1, 4},
		{"nll_mean_weight", graph.NLLLossOp, `func.func @main(%x: tensor<4x3xf32>, %t: tensor<4xi32>, %w: tensor<3xf32>) -> tensor<f32> {
  %0 = graph.nll_loss %x, %t, %w : (tensor<4x3xf32>, tensor<4xi32>, tensor<3xf32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}`, 0, 2},
		{"nll_sum_weight_ignore", graph.NLLLossOp, `func.func @main(%x: tensor<2x4x3x2xf32>, %t: tensor<2x3x2xi64>, %w: tensor<4xf32>) -> tensor<f32> {
  %0 = graph.nll_loss %x, %t, %w {reduction = "sum", ignore_index = 2} : (tensor<2x4x3x2xf32>, tensor<2x3x2xi64>, tensor<4xf32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}`, 0, 3},
		{"one_hot_middle_axis", graph.OneHotOp, `func.func @main(%i: tensor<3x4xi64>, %v: tensor<2xf32>) -> tensor<3x5x4xf32> {
  %0 = graph.one_hot %i, %v {depth = 5, axis = 1} : (tensor<3x4xi64>, tensor<2xf32>) -> tensor<3x5x4xf32>
  func.return %0 : tensor<3x5x4xf32>
}`, -6, 6},
		{"one_hot_last_i32", graph.OneHotOp, `func.func @main(%i: tensor<7xi32>, %v: tensor<2xf32>) -> tensor<7x3xf32> {
  %0 = graph.one_hot %i, %v {depth = 3} : (tensor<7xi32>, tensor<2xf32>) -> tensor<7x3xf32>
  func.return %0 : tensor<7x3xf32>
}`, -4, 3},
	}
}

// TestLegalizeGathers: the graph interpreter, the legalized function, the
// fused one and its tensor IR agree on random data and indices.
func TestLegalizeGathers(t *testing.T) {
	for i, c := range gatherCases() {
		t.Run(c.name, func(t *testing.T) {
			parse := func() *graphir.Module {
				m, err := graphir.Parse("case.mlir", []byte(c.src))
				require.NoError(t, err)
				require.NoError(t, graphir.Verify(m))
				return m
			}
			rng := rand.New(rand.NewSource(int64(i) + 3))
			f := parse().Funcs[0]
			var args []*graphir.Tensor
			for _, in := range f.Type.Inputs {
				tt := graphir.AsTensor(in)
				if !tt.Elem.IsInt() {
					args = append(args, randomTensor(rng, tt, -2, 2))
					continue
				}
				x := graphir.NewZeroTensor(tt)
				for j := range x.Data {
					x.Data[j] = float64(c.lo + rng.Intn(c.hi-c.lo+1))
				}
				args = append(args, x)
			}
			want, err := graphir.Interpret(f, args)
			require.NoError(t, err)
			lm := parse()
			runPipeline(t, lm, graph.LegalizeToHLOPassName)
			checkLowered(t, lm, nil, c.name)
			got, err := graphir.Interpret(lm.Funcs[0], args)
			require.NoError(t, err, "interpreting\n%s", graphir.Print(lm))
			requireClose(t, want, got, c.name)

			fm := parse()
			runPipeline(t, fm, graph.LegalizeToHLOPassName+",canonicalize,cse,fuse")
			tm, err := LowerToTIR(fm)
			require.NoError(t, err, "lowering\n%s", graphir.Print(fm))
			require.NoError(t, schedule.InlineElementwiseModule(tm))
			outs := runHost(t, tm, "main", args)
			require.Len(t, outs, len(want))
			for k := range want {
				requireTIRClose(t, want[k], outs[k], 1e-6, c.name)
			}
		})
	}
}

// TestGatherOutOfRange: the reference evaluators refuse an index outside
// [−d, d−1], naming it.
func TestGatherOutOfRange(t *testing.T) {
	m, err := graphir.Parse("case.mlir", []byte(gatherCases()[0].src))
	require.NoError(t, err)
	w := graphir.NewZeroTensor(graphir.NewTensor(graphir.F32, 11, 5))
	ids := graphir.NewZeroTensor(graphir.NewTensor(graphir.I64, 3, 4))
	ids.Data[5] = 11
	_, err = graphir.Interpret(m.Funcs[0], []*graphir.Tensor{w, ids})
	require.ErrorContains(t, err, "index 11 is out of range for dimension 0 of size 11 (expected [-11, 10])")
}
