package lowering

import (
	"math/rand"
	"os"
	"regexp"
	"strings"
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

// TestLowerSymbolicRefusals: what the tensor IR lowering does not take
// yet is refused at the op, naming what to pin.
func TestLowerSymbolicRefusals(t *testing.T) {
	src := `func.func @main(%x: tensor<?x4x6xf32, ["n"]>) -> tensor<4x?x6xf32, ["n"]> {
  %0 = "graph.transpose"(%x) {perm = [1, 0, 2]} : (tensor<?x4x6xf32, ["n"]>) -> tensor<4x?x6xf32, ["n"]>
  %1 = "graph.reshape"(%0) {shape = [4, -1]} : (tensor<4x?x6xf32, ["n"]>) -> tensor<4x?xf32, ["6*n"]>
  %2 = "graph.reshape"(%1) {shape = [4, -1, 6]} : (tensor<4x?xf32, ["6*n"]>) -> tensor<4x?x6xf32, ["n"]>
  func.return %2 : tensor<4x?x6xf32, ["n"]>
}
`
	m, err := graphir.Parse("r.mlir", []byte(src))
	require.NoError(t, err)
	runPipeline(t, m, "legalize-to-hlo,fuse")
	_, err = LowerToTIR(m)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "changes symbolic dimensions, which does not lower to tensor IR yet")
	assert.True(t, strings.HasPrefix(err.Error(), "r.mlir:"), err.Error())
}

// TestPlanSymbolic: buffers reuse a free slot whose size is equal or
// larger for every value of the symbols, grow one that is smaller, and
// open a new one otherwise; slots never overlap and live buffers never
// share one.
func TestPlanSymbolic(t *testing.T) {
	b := graphir.Sym("b")
	n := func(c int64) *graphir.SymExpr { return b.Scale(c) }
	bufs := []SymPlanBuffer{
		{Name: "t0", Bytes: n(256), Live: Lifetime{0, 1}},
		{Name: "t1", Bytes: n(128), Live: Lifetime{1, 2}},
		{Name: "t2", Bytes: n(192), Live: Lifetime{2, 3}},                // reuses t0's slot (256b ≥ 192b)
		{Name: "t3", Bytes: n(512), Live: Lifetime{3, 4}},                // grows t1's slot
		{Name: "t4", Bytes: graphir.SymConst(100), Live: Lifetime{4, 5}}, // constant: a new slot
		{Name: "t5", Bytes: n(100).AddConst(-3), Live: Lifetime{5, 6}},   // not comparable: a new slot
		{Name: "t6", Bytes: n(130), Live: Lifetime{6, 6}},                // t0's slot (256b)
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
				if x.Live.overlaps(y.Live) && si > 0 && sj > 0 {
					assert.True(t, oi+si <= oj || oj+sj <= oi, "b=%d: %s and %s overlap", v, x.Name, y.Name)
				}
			}
		}
	}
}
