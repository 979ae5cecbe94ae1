package lowering

import (
	"math/rand"
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/schedule"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// symbolicExample reads an example model with its 360-image batch made
// the symbolic dimension "batch".
func symbolicExample(t *testing.T, path string) *graphir.Module {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	text := regexp.MustCompile(`tensor<360x([0-9x]*)([a-z0-9]+)>`).ReplaceAllString(string(src), `tensor<?x${1}${2}, ["batch"]>`)
	m, err := graphir.Parse(path, []byte(text))
	require.NoError(t, err)
	require.NoError(t, graphir.Verify(m))
	return m
}

// TestLowerSymbolic lowers LeNet-5 and the MLP with a symbolic batch once
// (legalize-to-hlo, fuse, LowerToTIR, InlineElementwise): every function
// takes %batch as its first parameter, the arena is sized by an
// expression of it, and the one tensor IR module, interpreted at batch 0,
// 1, 3 and 5, computes what the graph interpreter computes at that size.
func TestLowerSymbolic(t *testing.T) {
	for _, name := range []string{"lenet5", "mlp"} {
		t.Run(name, func(t *testing.T) {
			m := symbolicExample(t, "../examples/"+name+".mlir")
			graphFn := graphir.CloneFunc(m.Funcs[0])
			runPipeline(t, m, "legalize-to-hlo,fuse")
			tm, err := LowerToTIR(m)
			require.NoError(t, err)
			require.NoError(t, schedule.InlineElementwiseModule(tm))
			for _, f := range tm.Funcs {
				require.NotEmpty(t, f.Params)
				require.NotNil(t, f.Params[0].Var, "@%s takes the batch first", f.Name)
				assert.Equal(t, "batch", f.Params[0].Var.Name)
			}
			host := tm.Func(m.Funcs[0].Name)
			assert.Contains(t, tir.PrintFunc(host, tir.PrintOptions{ElideConstantsLargerThan: 16}), "tir.arena (")
			for _, batch := range []int64{0, 1, 3, 5} {
				f := graphir.CloneFunc(graphFn)
				require.NoError(t, graphir.BindFunc(f, map[string]int64{"batch": batch}))
				rng := rand.New(rand.NewSource(batch))
				args := []*graphir.Tensor{randomTensor(rng, graphir.AsTensor(f.Type.Inputs[0]), 0, 1)}
				want, err := graphir.Interpret(f, args)
				require.NoError(t, err)
				got := runHostAt(t, tm, host.Name, args, map[string]int64{"batch": batch})
				requireTIRClose(t, want[0], got[0], 1e-5, "batch %d", batch)
			}
		})
	}
}

// symAttentionSrc is one head pair of self-attention over a symbolic
// batch b and sequence length s, shaped as the transformer layer's export
// is: reshapes that split and merge symbolic dimensions ([s, b, 8] to
// [s, 2*b, 4], [s, 2*b, 4] to [b*s, 8], [b*s, 8] to [s, b, 8]), batched
// matrix products contracting over s, and a softmax reducing over s.
const symAttentionSrc = `func.func @attn(%x: tensor<?x?x8xf32, ["b", "s"]>) -> tensor<?x?x8xf32, ["b", "s"]> {
  %t = graph.transpose %x {perm = [1, 0, 2]} : (tensor<?x?x8xf32, ["b", "s"]>) -> tensor<?x?x8xf32, ["s", "b"]>
  %h = graph.reshape %t {shape = [0, -1, 4]} : (tensor<?x?x8xf32, ["s", "b"]>) -> tensor<?x?x4xf32, ["s", "2*b"]>
  %q = graph.transpose %h {perm = [1, 0, 2]} : (tensor<?x?x4xf32, ["s", "2*b"]>) -> tensor<?x?x4xf32, ["2*b", "s"]>
  %k = graph.transpose %h {perm = [1, 2, 0]} : (tensor<?x?x4xf32, ["s", "2*b"]>) -> tensor<?x4x?xf32, ["2*b", "s"]>
  %a = graph.matmul %q, %k : (tensor<?x?x4xf32, ["2*b", "s"]>, tensor<?x4x?xf32, ["2*b", "s"]>) -> tensor<?x?x?xf32, ["2*b", "s", "s"]>
  %p = graph.softmax %a : tensor<?x?x?xf32, ["2*b", "s", "s"]>
  %o = graph.matmul %p, %q : (tensor<?x?x?xf32, ["2*b", "s", "s"]>, tensor<?x?x4xf32, ["2*b", "s"]>) -> tensor<?x?x4xf32, ["2*b", "s"]>
  %u = graph.transpose %o {perm = [1, 0, 2]} : (tensor<?x?x4xf32, ["2*b", "s"]>) -> tensor<?x?x4xf32, ["s", "2*b"]>
  %m = graph.reshape %u {shape = [-1, 8]} : (tensor<?x?x4xf32, ["s", "2*b"]>) -> tensor<?x8xf32, ["b*s"]>
  %r = graph.relu %m : tensor<?x8xf32, ["b*s"]>
  %v = graph.reshape %r {shape = [-1, -1, 8]} : (tensor<?x8xf32, ["b*s"]>) -> tensor<?x?x8xf32, ["s", "b"]>
  %y = graph.transpose %v {perm = [1, 0, 2]} : (tensor<?x?x8xf32, ["s", "b"]>) -> tensor<?x?x8xf32, ["b", "s"]>
  func.return %y : tensor<?x?x8xf32, ["b", "s"]>
}
`

// lowerSymbolic parses the graph function src (named file) and lowers it
// once (legalize-to-hlo, fuse, LowerToTIR, InlineElementwise), returning
// a clone of the graph function and the tensor IR module.
func lowerSymbolic(t *testing.T, file, src string) (*graphir.Func, *tir.Module) {
	t.Helper()
	return lowerSymbolicWith(t, file, src, "legalize-to-hlo,fuse")
}

// lowerSymbolicWith is lowerSymbolic with the graph and hlo steps of
// pipeline.
func lowerSymbolicWith(t *testing.T, file, src, pipeline string) (*graphir.Func, *tir.Module) {
	t.Helper()
	m, err := graphir.Parse(file, []byte(src))
	require.NoError(t, err)
	require.NoError(t, graphir.Verify(m))
	graphFn := graphir.CloneFunc(m.Funcs[0])
	runPipeline(t, m, pipeline)
	tm, err := LowerToTIR(m)
	require.NoError(t, err)
	require.NoError(t, schedule.InlineElementwiseModule(tm))
	return graphFn, tm
}

// TestLowerSymbolicAttention lowers symAttentionSrc once and interprets
// the one tensor IR module at several sizes (b, s) against the graph
// interpreter at those sizes (not at 0: a reshape's -1 is undefined for
// an empty tensor at the graph level).
func TestLowerSymbolicAttention(t *testing.T) {
	graphFn, tm := lowerSymbolic(t, "attn.mlir", symAttentionSrc)
	for _, size := range [][2]int64{{1, 1}, {1, 5}, {3, 2}, {2, 7}} {
		bind := map[string]int64{"b": size[0], "s": size[1]}
		f := graphir.CloneFunc(graphFn)
		require.NoError(t, graphir.BindFunc(f, bind))
		rng := rand.New(rand.NewSource(size[0]*31 + size[1]))
		args := []*graphir.Tensor{randomTensor(rng, graphir.AsTensor(f.Type.Inputs[0]), -1, 1)}
		want, err := graphir.Interpret(f, args)
		require.NoError(t, err)
		got := runHostAt(t, tm, "attn", args, bind)
		requireTIRClose(t, want[0], got[0], 1e-5, "b=%d s=%d", size[0], size[1])
	}
	// Empty sizes run (the divisions by the symbols' products are in loops
	// that do not run) and give empty results.
	for _, size := range [][2]int64{{0, 3}, {2, 0}} {
		x := &graphir.Tensor{Type: graphir.NewTensor(graphir.F32, size[0], size[1], 8)}
		got := runHostAt(t, tm, "attn", []*graphir.Tensor{x}, map[string]int64{"b": size[0], "s": size[1]})
		assert.Zero(t, got[0].Len(), "b=%d s=%d", size[0], size[1])
	}
}

// TestLowerSymbolicReduce: a reduction over a symbolic dimension into a
// result that does not have it is decomposed (an init block, then the
// accumulating reduction), so an empty reduction gives the init: the sum,
// max and mean over n (the mean dividing by hlo.get_dimension_size),
// interpreted at n = 0, 1, 4, equal the graph interpreter's (0, -inf and
// NaN at n = 0).
func TestLowerSymbolicReduce(t *testing.T) {
	src := `func.func @red(%x: tensor<?x4xf32, ["n"]>) -> (tensor<4xf32>, tensor<1x4xf32>, tensor<4xf32>) {
  %0 = graph.reduce_sum %x {axes = [0], keepdims = false} : (tensor<?x4xf32, ["n"]>) -> tensor<4xf32>
  %1 = graph.reduce_max %x {axes = [0], keepdims = true} : (tensor<?x4xf32, ["n"]>) -> tensor<1x4xf32>
  %2 = graph.reduce_mean %x {axes = [0], keepdims = false} : (tensor<?x4xf32, ["n"]>) -> tensor<4xf32>
  func.return %0, %1, %2 : tensor<4xf32>, tensor<1x4xf32>, tensor<4xf32>
}
`
	graphFn, tm := lowerSymbolic(t, "red.mlir", src)
	text := tir.Print(tm)
	assert.Contains(t, text, `tir.block "reduce_init"`)
	assert.Contains(t, text, `tessera.accumulate`)
	for _, n := range []int64{0, 1, 4} {
		f := graphir.CloneFunc(graphFn)
		require.NoError(t, graphir.BindFunc(f, map[string]int64{"n": n}))
		rng := rand.New(rand.NewSource(n))
		args := []*graphir.Tensor{randomTensor(rng, graphir.AsTensor(f.Type.Inputs[0]), -1, 1)}
		want, err := graphir.Interpret(f, args)
		require.NoError(t, err)
		got := runHostAt(t, tm, "red", args, map[string]int64{"n": n})
		for i := range want {
			requireTIRClose(t, want[i], got[i], 1e-6, "n=%d result %d", n, i)
		}
	}
}

// TestLowerSymbolicExplicitPadding: a padded convolution over a
// symbolic batch gets its padding as an hlo.pad kernel
// (explicit-conv-padding: the batch passes through unpadded), lowered
// once and interpreted at batch 0, 1 and 3 against the graph interpreter.
func TestLowerSymbolicExplicitPadding(t *testing.T) {
	src := `func.func @conv(%x: tensor<?x3x6x5xf32, ["n"]>, %w: tensor<8x3x3x3xf32>) -> tensor<?x8x3x5xf32, ["n"]> {
  %0 = graph.conv2d %x, %w {pads = [1, 1, 1, 1], strides = [2, 1]} : (tensor<?x3x6x5xf32, ["n"]>, tensor<8x3x3x3xf32>) -> tensor<?x8x3x5xf32, ["n"]>
  func.return %0 : tensor<?x8x3x5xf32, ["n"]>
}
`
	graphFn, tm := lowerSymbolicWith(t, "conv.mlir", src, "legalize-to-hlo,explicit-conv-padding,fuse")
	assert.Contains(t, tir.Print(tm), `tir.block "pad"`)
	for _, n := range []int64{0, 1, 3} {
		f := graphir.CloneFunc(graphFn)
		require.NoError(t, graphir.BindFunc(f, map[string]int64{"n": n}))
		rng := rand.New(rand.NewSource(n))
		var args []*graphir.Tensor
		for _, in := range f.Type.Inputs {
			args = append(args, randomTensor(rng, graphir.AsTensor(in), -1, 1))
		}
		want, err := graphir.Interpret(f, args)
		require.NoError(t, err)
		got := runHostAt(t, tm, "conv", args, map[string]int64{"n": n})
		requireTIRClose(t, want[0], got[0], 1e-5, "n=%d", n)
	}
}

// TestLowerSymbolicRefusals: what the tensor IR lowering does not take
// yet is refused at the op, naming what to pin: a concatenation along a
// symbolic dimension.
func TestLowerSymbolicRefusals(t *testing.T) {
	src := `func.func @main(%x: tensor<?x4xf32, ["n"]>) -> tensor<?x4xf32, ["2*n"]> {
  %0 = graph.concat %x, %x {axis = 0} : (tensor<?x4xf32, ["n"]>, tensor<?x4xf32, ["n"]>) -> tensor<?x4xf32, ["2*n"]>
  func.return %0 : tensor<?x4xf32, ["2*n"]>
}
`
	m, err := graphir.Parse("r.mlir", []byte(src))
	require.NoError(t, err)
	runPipeline(t, m, "legalize-to-hlo,fuse")
	_, err = LowerToTIR(m)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "r.mlir:2:8: error: 'hlo.concatenate' op lower-to-tir: a concatenation along symbolic dimension 0 does not lower to tensor IR yet")
}

// TestPlanSymbolic: buffers reuse a free slot whose size is equal or
// larger for every value of the symbols, grow one that is smaller, and
// open a new one otherwise; slots never overlap and live buffers never
// share one.
func TestPlanSymbolic(t *testing.T) {
	b := graphir.Sym("b")
	n := func(c int64) *graphir.SymExpr { return b.Scale(c) }
	bufs := []SymPlanBuffer{
		{Name: "t0", Bytes: n(256), Live: tir.Lifetime{First: 0, Last: 1}},
		{Name: "t1", Bytes: n(128), Live: tir.Lifetime{First: 1, Last: 2}},
		{Name: "t2", Bytes: n(192), Live: tir.Lifetime{First: 2, Last: 3}},                // reuses t0's slot (256b ≥ 192b)
		{Name: "t3", Bytes: n(512), Live: tir.Lifetime{First: 3, Last: 4}},                // grows t1's slot
		{Name: "t4", Bytes: graphir.SymConst(100), Live: tir.Lifetime{First: 4, Last: 5}}, // constant: a new slot
		{Name: "t5", Bytes: n(100).AddConst(-3), Live: tir.Lifetime{First: 5, Last: 6}},   // not comparable: a new slot
		{Name: "t6", Bytes: n(130), Live: tir.Lifetime{First: 6, Last: 6}},                // t0's slot (256b)
	}
	size, offs := PlanSymbolic(bufs)
	got := make([]string, len(offs))
	for i, o := range offs {
		got[i] = o.String()
	}
	assert.Equal(t, []string{"0", "256*b", "0", "256*b", "768*b", "768*b + 128", "0"}, got)
	assert.Equal(t, "64*((100*b + 60) floordiv 64) + 768*b + 128", size.String(), "t5 rounds up by floordiv")
	// Every value of b: live buffers disjoint, all inside the arena.
	for _, v := range []int64{0, 1, 2, 7} {
		bind := map[string]int64{"b": v}
		total := must(size.Eval(bind))
		for i, x := range bufs {
			oi, si := must(offs[i].Eval(bind)), must(x.Bytes.Eval(bind))
			assert.LessOrEqual(t, oi+si, total)
			assert.Zero(t, oi%tir.ArenaAlign)
			for j, y := range bufs[:i] {
				oj, sj := must(offs[j].Eval(bind)), must(y.Bytes.Eval(bind))
				if x.Live.Overlaps(y.Live) && si > 0 && sj > 0 {
					assert.True(t, oi+si <= oj || oj+sj <= oi, "b=%d: %s and %s overlap", v, x.Name, y.Name)
				}
			}
		}
	}
}
