package lowering

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/schedule"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// TestLowerExampleModels runs LeNet-5 and the MLP (batch cut from 360 to
// 8) through legalize-to-hlo, fuse, LowerToTIR and InlineElementwise and
// compares the tensor IR interpretation with the graph-level one.
func TestLowerExampleModels(t *testing.T) {
	for _, name := range []string{"lenet5", "mlp"} {
		t.Run(name, func(t *testing.T) {
			m := parseExample(t, "../examples/"+name+".mlir", 8)
			f := m.Funcs[0]
			rng := rand.New(rand.NewSource(7))
			args := []*graphir.Tensor{randomTensor(rng, graphir.AsTensor(f.Type.Inputs[0]), 0, 1)}
			want, err := graphir.Interpret(f, args)
			require.NoError(t, err)
			runPipeline(t, m, "legalize-to-hlo,fuse")
			tm, st, err := LowerToTIRWithStats(m)
			require.NoError(t, err)
			assert.LessOrEqual(t, st.ArenaBytes, st.NaiveBytes)
			if st.Buffers >= 3 { // a chain of three intermediates reuses the first's memory
				assert.Less(t, st.ArenaBytes, st.NaiveBytes, "memory plan should reuse memory: %v", st)
			}
			require.NoError(t, schedule.InlineElementwiseModule(tm))
			require.NoError(t, tir.Verify(tm))
			// After inlining, only reductions write intermediates: the
			// elementwise chains are folded into their consumers.
			for _, k := range tm.Funcs {
				allocated := map[*tir.Buffer]bool{}
				tir.VisitStmt(k.Body, func(s tir.Stmt) bool {
					if a, ok := s.(*tir.Allocate); ok {
						allocated[a.Buffer] = true
					}
					return true
				})
				tir.VisitStmt(k.Body, func(s tir.Stmt) bool {
					if b, ok := s.(*tir.Block); ok && len(b.Writes) == 1 && allocated[b.Writes[0].Buffer] {
						assert.NotNil(t, b.Init, "@%s: spatial block %q still writes an intermediate", k.Name, b.Name)
					}
					return true
				})
			}
			got := runHost(t, tm, f.Name, args)
			requireTIRClose(t, want[0], got[0], 1e-5)
		})
	}
}

// TestLowerRandomGraphs is a property test: random small graphs of
// elementwise, matmul and pooling ops, lowered end to end, agree with the
// graph interpreter.
func TestLowerRandomGraphs(t *testing.T) {
	rng := rand.New(rand.NewSource(20261121))
	for trial := 0; trial < 25; trial++ {
		src := randomGraph(rng)
		t.Run(fmt.Sprint(trial), func(t *testing.T) {
			m, err := graphir.Parse("random.mlir", []byte(src))
			require.NoError(t, err, src)
			f := m.Funcs[0]
			args := make([]*graphir.Tensor, len(f.Type.Inputs))
			for i, in := range f.Type.Inputs {
				args[i] = randomTensor(rng, graphir.AsTensor(in), -1, 1)
			}
			want, err := graphir.Interpret(f, args)
			require.NoError(t, err, src)
			runPipeline(t, m, "legalize-to-hlo,fuse")
			tm, err := LowerToTIR(m)
			require.NoError(t, err, src)
			require.NoError(t, schedule.InlineElementwiseModule(tm))
			got := runHost(t, tm, f.Name, args)
			require.Len(t, got, len(want))
			for i := range want {
				requireTIRClose(t, want[i], got[i], 1e-5, "result %d of\n%s", i, src)
			}
		})
	}
}

// randomGraph builds a graph-dialect function on an N×C×H×W input: a
// random chain of relu/sigmoid/tanh/add/mul/max_pool/avg_pool ops, then
// flatten and a matmul with a random weight, some values also returned.
func randomGraph(rng *rand.Rand) string {
	n, c, h, w := 1+rng.Intn(2), 1+rng.Intn(3), 2+rng.Intn(6), 2+rng.Intn(6)
	var b strings.Builder
	ty := func(s ...int) string {
		parts := make([]string, len(s))
		for i, d := range s {
			parts[i] = fmt.Sprint(d)
		}
		return "tensor<" + strings.Join(parts, "x") + "xf32>"
	}
	cur := []int{n, c, h, w}
	in := ty(cur...)
	fmt.Fprintf(&b, "func.func @main(%%x: %s, %%y: %s) -> (RESULTS) {\n", in, in)
	v, other := "%x", "%y"
	results := []string{}
	rtypes := []string{}
	for i, steps := 0, 2+rng.Intn(5); i < steps; i++ {
		out := fmt.Sprintf("%%v%d", i)
		switch k := rng.Intn(7); {
		case k < 3:
			op := []string{"relu", "sigmoid", "tanh"}[k]
			fmt.Fprintf(&b, "  %s = graph.%s %s : %s\n", out, op, v, ty(cur...))
		case k < 5 && other != "":
			op := []string{"add", "mul"}[k-3]
			fmt.Fprintf(&b, "  %s = graph.%s %s, %s : (%s, %s) -> %s\n", out, op, v, other, ty(cur...), ty(cur...), ty(cur...))
		default:
			if cur[2] < 2 || cur[3] < 2 {
				fmt.Fprintf(&b, "  %s = graph.relu %s : %s\n", out, v, ty(cur...))
				break
			}
			op := "max_pool2d"
			if k == 6 {
				op = "avg_pool2d"
			}
			next := []int{cur[0], cur[1], cur[2] / 2, cur[3] / 2}
			fmt.Fprintf(&b, "  %s = graph.%s %s {kernel = [2, 2], strides = [2, 2]} : (%s) -> %s\n", out, op, v, ty(cur...), ty(next...))
			cur = next
			other = "" // shapes differ from %y now
		}
		v = out
		if rng.Intn(4) == 0 {
			results = append(results, v)
			rtypes = append(rtypes, ty(cur...))
		}
	}
	feat := cur[1] * cur[2] * cur[3]
	fmt.Fprintf(&b, "  %%flat = graph.flatten %s : (%s) -> %s\n", v, ty(cur...), ty(cur[0], feat))
	units := 1 + rng.Intn(5)
	fmt.Fprintf(&b, "  %%w = graph.constant {value = dense<[")
	for i := 0; i < feat; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("[")
		for j := 0; j < units; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%.3f", rng.Float64()*2-1)
		}
		b.WriteString("]")
	}
	fmt.Fprintf(&b, "]> : %s} : %s\n", ty(feat, units), ty(feat, units))
	fmt.Fprintf(&b, "  %%mm = graph.matmul %%flat, %%w : (%s, %s) -> %s\n", ty(cur[0], feat), ty(feat, units), ty(cur[0], units))
	results = append(results, "%mm")
	rtypes = append(rtypes, ty(cur[0], units))
	fmt.Fprintf(&b, "  func.return %s : %s\n}\n", strings.Join(results, ", "), strings.Join(rtypes, ", "))
	return strings.Replace(b.String(), "RESULTS", strings.Join(rtypes, ", "), 1)
}

func TestLowerToTIRRejects(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"op outside fusion", `func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = hlo.add %a, %a : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}`, "bad.mlir:2:8: error: 'hlo.add' op lower-to-tir: expects the output of the fuse pass"},
		{"graph op", `func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = graph.relu %a : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}`, "bad.mlir:2:8: error: 'graph.relu' op lower-to-tir: expects the output of the fuse pass"},
		{"invalid module", `func.func @main(%a: tensor<2xf32>) -> tensor<3xf32> {
  func.return %a : tensor<2xf32>
}`, "bad.mlir:2:3: error:"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := graphir.Parse("bad.mlir", []byte(c.src))
			require.NoError(t, err)
			_, err = LowerToTIR(m)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// TestLowerNamesAndLocations checks block names (after the op, numbered
// when repeated), kernel attributes and that blocks keep the op's location.
func TestLowerNamesAndLocations(t *testing.T) {
	src := `func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = hlo.add %a, %a : tensor<2x3xf32>
  %1 = hlo.add %0, %a : tensor<2x3xf32>
  %2 = hlo.exponential %1 : tensor<2x3xf32>
  func.return %2 : tensor<2x3xf32>
}`
	m, err := graphir.Parse("names.mlir", []byte(src))
	require.NoError(t, err)
	runPipeline(t, m, "fuse")
	tm, err := LowerToTIR(m)
	require.NoError(t, err)
	require.Len(t, tm.Funcs, 2)
	k, host := tm.Funcs[0], tm.Funcs[1]
	assert.Equal(t, "fused_0", k.Name)
	assert.Contains(t, k.Attrs, tir.AttrKernel)
	assert.Equal(t, "main", host.Name)
	assert.Contains(t, host.Attrs, tir.AttrHost)
	lines := map[string]int{}
	tir.VisitStmt(k.Body, func(s tir.Stmt) bool {
		if b, ok := s.(*tir.Block); ok {
			lines[b.Name] = b.Loc.Line
		}
		return true
	})
	assert.Equal(t, map[string]int{"add": 2, "add_1": 3, "exponential": 4}, lines)
	text := tir.PrintWith(tm, tir.PrintOptions{DebugInfo: true})
	assert.Contains(t, text, `tir.call @fused_0(%arg0, %out0) loc("names.mlir":4:8)`)
}
