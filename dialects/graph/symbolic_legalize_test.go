package graph_test

import (
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/dialects/graph/onnx"
	"github.com/tessera-ml/tessera/graphir"
)

// hloSteps are the steps the compiler runs from legalize-to-hlo on
// (pipeline/table.go's graph steps).
const hloSteps = "legalize-to-hlo,canonicalize,cse,conv-kernel-layout,fuse"

// symbolicTolerance bounds max|hlo − graph| / max|graph| of every result.
const symbolicTolerance = 1e-6

// constRef matches a {WAxB...} placeholder of the test functions' text:
// a graph.constant of that shape with varied values.
var constRef = regexp.MustCompile(`\{W([0-9x]+)\}`)

// withConstants replaces each {WAxB...} in src by a graph.constant of
// that f32 shape holding deterministic values in [-1, 1].
func withConstants(src string) string {
	return constRef.ReplaceAllStringFunc(src, func(ref string) string {
		var shape []int64
		for _, s := range strings.Split(constRef.FindStringSubmatch(ref)[1], "x") {
			n, _ := strconv.ParseInt(s, 10, 64)
			shape = append(shape, n)
		}
		x := sample(graphir.NewTensor(graphir.F32, shape...), int64(len(shape)))
		return fmt.Sprintf("graph.constant {value = %s} : %s", graphir.FormatAttr(x.ToDense()), x.Type)
	})
}

// sample is a tensor of static type t with deterministic values in
// [-1, 1] (seed varies them), rounded to t's element type.
func sample(t *graphir.TensorType, seed int64) *graphir.Tensor {
	x := graphir.NewZeroTensor(t)
	for i := range x.Data {
		x.Data[i] = math.Sin(float64(int64(i)*7+seed*13) * 0.61)
	}
	return x.Round()
}

// parseFunc parses and verifies the module text src and returns @main.
func parseFunc(t *testing.T, src string) *graphir.Func {
	t.Helper()
	m, err := graphir.ParseString("test.mlir", src)
	require.NoError(t, err)
	require.NoError(t, graphir.Verify(m))
	return m.Lookup("main")
}

// lowerToHLO runs hloSteps on a clone of the graph function f and
// returns the hlo function, which keeps f's symbols.
func lowerToHLO(t *testing.T, f *graphir.Func) *graphir.Func {
	t.Helper()
	m := &graphir.Module{}
	m.AddFunc(graphir.CloneFunc(f))
	require.NoError(t, graphir.RunPipeline(m, hloSteps))
	h := m.Funcs[0]
	assert.Equal(t, graphir.FuncSymbols(f), graphir.FuncSymbols(h), "the hlo function keeps the symbols")
	fusions, others := 0, 0
	h.Walk(func(op *graphir.Op) {
		assert.NotEqual(t, "graph", op.Dialect(), "%s is left after legalization", op.Name)
		switch {
		case op.Name == "hlo.fusion":
			fusions++
		case op.Name != graphir.ReturnOpName && op.ParentOp() == nil:
			others++
		}
	})
	if others > 0 {
		assert.Positive(t, fusions, "fuse groups the top-level hlo ops")
	}
	return h
}

// checkBindings lowers the symbolic graph function f to hlo and, at each
// binding, binds a clone of the hlo function (graphir.BindFunc), checks
// that every type became static, interprets it, and compares its results
// with the graph interpreter's on f at the same arguments.
func checkBindings(t *testing.T, f *graphir.Func, bindings []map[string]int64) {
	t.Helper()
	h := lowerToHLO(t, f)
	for _, bind := range bindings {
		t.Run(fmt.Sprint(bind), func(t *testing.T) {
			args := make([]*graphir.Tensor, len(f.Type.Inputs))
			for i, ty := range f.Type.Inputs {
				bt, err := graphir.AsTensor(ty).Bind(bind)
				require.NoError(t, err)
				args[i] = sample(bt, int64(i))
			}
			want, err := graphir.Interpret(f, args)
			require.NoError(t, err)
			bound := graphir.CloneFunc(h)
			require.NoError(t, graphir.BindFunc(bound, bind))
			assert.Empty(t, graphir.FuncSymbols(bound))
			bound.Walk(func(op *graphir.Op) {
				for _, r := range op.Results {
					if tt := graphir.AsTensor(r.Type); tt != nil {
						assert.True(t, tt.IsStatic(), "%s: %s", op.Name, tt)
					}
				}
			})
			got, err := graphir.Interpret(bound, args)
			require.NoError(t, err)
			require.Len(t, got, len(want))
			for i := range want {
				require.True(t, got[i].Type.Equal(want[i].Type), "result #%d: %s vs %s", i, got[i].Type, want[i].Type)
				assert.LessOrEqual(t, relativeDiff(got[i].Data, want[i].Data), symbolicTolerance, "result #%d", i)
			}
		})
	}
}

// relativeDiff is max|a − b| / max|b| over the elements where b is
// finite (max|a − b| when those are all zeros); where b is NaN or
// infinite, a must be the same (+Inf otherwise).
func relativeDiff(a, b []float64) float64 {
	var d, m float64
	for i := range b {
		if math.IsNaN(b[i]) || math.IsInf(b[i], 0) {
			if !(math.IsNaN(a[i]) && math.IsNaN(b[i])) && a[i] != b[i] {
				return math.Inf(1)
			}
			continue
		}
		d = math.Max(d, math.Abs(a[i]-b[i]))
		m = math.Max(m, math.Abs(b[i]))
	}
	if m == 0 {
		return d
	}
	return d / m
}

const symbolicMLP = `func.func @main(%x: tensor<?x1x4x4xf32, ["batch"]>) -> tensor<?x3xf32, ["batch"]> {
  %w1 = {W8x16}
  %b1 = {W8}
  %w2 = {W8x3}
  %b2 = {W3}
  %c = {W1x3}
  %two = graph.constant {value = dense<2.0> : tensor<f32>} : tensor<f32>
  %f = graph.flatten %x : (tensor<?x1x4x4xf32, ["batch"]>) -> tensor<?x16xf32, ["batch"]>
  %h = graph.gemm %f, %w1, %b1 {transB = true} : (tensor<?x16xf32, ["batch"]>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<?x8xf32, ["batch"]>
  %r = graph.relu %h : tensor<?x8xf32, ["batch"]>
  %y = graph.gemm %r, %w2, %b2 {alpha = 0.5, beta = 2.0} : (tensor<?x8xf32, ["batch"]>, tensor<8x3xf32>, tensor<3xf32>) -> tensor<?x3xf32, ["batch"]>
  %z = graph.add %y, %c : (tensor<?x3xf32, ["batch"]>, tensor<1x3xf32>) -> tensor<?x3xf32, ["batch"]>
  %s = graph.sigmoid %z : tensor<?x3xf32, ["batch"]>
  %p = graph.pow %s, %two : (tensor<?x3xf32, ["batch"]>, tensor<f32>) -> tensor<?x3xf32, ["batch"]>
  %q = graph.sqrt %p : tensor<?x3xf32, ["batch"]>
  %m = graph.mul %q, %y : tensor<?x3xf32, ["batch"]>
  %o = graph.sub %m, %z : tensor<?x3xf32, ["batch"]>
  func.return %o : tensor<?x3xf32, ["batch"]>
}`

const symbolicConvNet = `func.func @main(%x: tensor<?x3x?x?xf32, ["batch", "h", "w"]>) -> tensor<?x5xf32, ["batch"]> {
  %w = {W4x3x3x3}
  %bias = graph.constant {value = dense<[0.1, -0.2, 0.3, 0.0]> : tensor<4xf32>} : tensor<4xf32>
  %scale = graph.constant {value = dense<[1.0, 2.0, 0.5, 1.5]> : tensor<4xf32>} : tensor<4xf32>
  %mean = graph.constant {value = dense<[0.0, 0.1, -0.1, 0.2]> : tensor<4xf32>} : tensor<4xf32>
  %var = graph.constant {value = dense<[1.0, 0.5, 2.0, 1.0]> : tensor<4xf32>} : tensor<4xf32>
  %c = graph.conv2d %x, %w, %bias {pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<?x3x?x?xf32, ["batch", "h", "w"]>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<?x4x?x?xf32, ["batch", "(h - 1) floordiv 2 + 1", "(w - 1) floordiv 2 + 1"]>
  %n = graph.batch_norm %c, %scale, %bias, %mean, %var : (tensor<?x4x?x?xf32, ["batch", "(h - 1) floordiv 2 + 1", "(w - 1) floordiv 2 + 1"]>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4x?x?xf32, ["batch", "(h - 1) floordiv 2 + 1", "(w - 1) floordiv 2 + 1"]>
  %r = graph.relu %n : tensor<?x4x?x?xf32, ["batch", "(h - 1) floordiv 2 + 1", "(w - 1) floordiv 2 + 1"]>
  %m = graph.max_pool2d %r {kernel = [2, 2]} : (tensor<?x4x?x?xf32, ["batch", "(h - 1) floordiv 2 + 1", "(w - 1) floordiv 2 + 1"]>) -> tensor<?x4x?x?xf32, ["batch", "(h - 1) floordiv 2", "(w - 1) floordiv 2"]>
  %a = graph.avg_pool2d %m {kernel = [3, 3], pads = [1, 1, 1, 1], count_include_pad = true} : (tensor<?x4x?x?xf32, ["batch", "(h - 1) floordiv 2", "(w - 1) floordiv 2"]>) -> tensor<?x4x?x?xf32, ["batch", "(h - 1) floordiv 2", "(w - 1) floordiv 2"]>
  %f = graph.reduce_max %a {axes = [2, 3], keepdims = false} : (tensor<?x4x?x?xf32, ["batch", "(h - 1) floordiv 2", "(w - 1) floordiv 2"]>) -> tensor<?x4xf32, ["batch"]>
  %fc = {W5x4}
  %y = graph.gemm %f, %fc {transB = true} : (tensor<?x4xf32, ["batch"]>, tensor<5x4xf32>) -> tensor<?x5xf32, ["batch"]>
  %s = graph.softmax %y : tensor<?x5xf32, ["batch"]>
  func.return %s : tensor<?x5xf32, ["batch"]>
}`

const symbolicAttention = `func.func @main(%x: tensor<?x?x8xf32, ["b", "s"]>) -> (tensor<?x?x8xf32, ["b", "2*s - 1"]>, tensor<?x8xf32, ["b"]>) {
  %w = {W8x24}
  %two = graph.constant {value = dense<2.0> : tensor<f32>} : tensor<f32>
  %eps = graph.constant {value = dense<0.001> : tensor<f32>} : tensor<f32>
  %qkv = graph.matmul %x, %w : (tensor<?x?x8xf32, ["b", "s"]>, tensor<8x24xf32>) -> tensor<?x?x24xf32, ["b", "s"]>
  %q = graph.slice %qkv {axes = [2], ends = [8], starts = [0]} : (tensor<?x?x24xf32, ["b", "s"]>) -> tensor<?x?x8xf32, ["b", "s"]>
  %k = graph.slice %qkv {axes = [-1], ends = [16], starts = [8]} : (tensor<?x?x24xf32, ["b", "s"]>) -> tensor<?x?x8xf32, ["b", "s"]>
  %v = graph.slice %qkv {axes = [2], ends = [24], starts = [16]} : (tensor<?x?x24xf32, ["b", "s"]>) -> tensor<?x?x8xf32, ["b", "s"]>
  %q2 = graph.reshape %q {shape = [0, 0, 2, 4]} : (tensor<?x?x8xf32, ["b", "s"]>) -> tensor<?x?x2x4xf32, ["b", "s"]>
  %q3 = graph.transpose %q2 {perm = [0, 2, 1, 3]} : (tensor<?x?x2x4xf32, ["b", "s"]>) -> tensor<?x2x?x4xf32, ["b", "s"]>
  %k2 = graph.reshape %k {shape = [0, 0, 2, 4]} : (tensor<?x?x8xf32, ["b", "s"]>) -> tensor<?x?x2x4xf32, ["b", "s"]>
  %k3 = graph.transpose %k2 {perm = [0, 2, 3, 1]} : (tensor<?x?x2x4xf32, ["b", "s"]>) -> tensor<?x2x4x?xf32, ["b", "s"]>
  %sc = graph.matmul %q3, %k3 : (tensor<?x2x?x4xf32, ["b", "s"]>, tensor<?x2x4x?xf32, ["b", "s"]>) -> tensor<?x2x?x?xf32, ["b", "s", "s"]>
  %sm = graph.softmax %sc : tensor<?x2x?x?xf32, ["b", "s", "s"]>
  %v2 = graph.reshape %v {shape = [0, 0, 2, 4]} : (tensor<?x?x8xf32, ["b", "s"]>) -> tensor<?x?x2x4xf32, ["b", "s"]>
  %v3 = graph.transpose %v2 {perm = [0, 2, 1, 3]} : (tensor<?x?x2x4xf32, ["b", "s"]>) -> tensor<?x2x?x4xf32, ["b", "s"]>
  %o = graph.matmul %sm, %v3 : (tensor<?x2x?x?xf32, ["b", "s", "s"]>, tensor<?x2x?x4xf32, ["b", "s"]>) -> tensor<?x2x?x4xf32, ["b", "s"]>
  %o2 = graph.transpose %o {perm = [0, 2, 1, 3]} : (tensor<?x2x?x4xf32, ["b", "s"]>) -> tensor<?x?x2x4xf32, ["b", "s"]>
  %o3 = graph.reshape %o2 {shape = [-1, 8]} : (tensor<?x?x2x4xf32, ["b", "s"]>) -> tensor<?x8xf32, ["b*s"]>
  %o4 = graph.reshape %o3 {shape = [-1, -1, 8]} : (tensor<?x8xf32, ["b*s"]>) -> tensor<?x?x8xf32, ["b", "s"]>
  %mean = graph.reduce_mean %o4 {axes = [2]} : (tensor<?x?x8xf32, ["b", "s"]>) -> tensor<?x?x1xf32, ["b", "s"]>
  %c = graph.sub %o4, %mean : (tensor<?x?x8xf32, ["b", "s"]>, tensor<?x?x1xf32, ["b", "s"]>) -> tensor<?x?x8xf32, ["b", "s"]>
  %sq = graph.pow %c, %two : (tensor<?x?x8xf32, ["b", "s"]>, tensor<f32>) -> tensor<?x?x8xf32, ["b", "s"]>
  %var = graph.reduce_mean %sq {axes = [2]} : (tensor<?x?x8xf32, ["b", "s"]>) -> tensor<?x?x1xf32, ["b", "s"]>
  %e = graph.add %var, %eps : (tensor<?x?x1xf32, ["b", "s"]>, tensor<f32>) -> tensor<?x?x1xf32, ["b", "s"]>
  %sd = graph.sqrt %e : tensor<?x?x1xf32, ["b", "s"]>
  %n = graph.div %c, %sd : (tensor<?x?x8xf32, ["b", "s"]>, tensor<?x?x1xf32, ["b", "s"]>) -> tensor<?x?x8xf32, ["b", "s"]>
  %cat = graph.concat %n, %x {axis = 1} : (tensor<?x?x8xf32, ["b", "s"]>, tensor<?x?x8xf32, ["b", "s"]>) -> tensor<?x?x8xf32, ["b", "2*s"]>
  %tail = graph.slice %cat {axes = [1], ends = [9223372036854775807], starts = [1]} : (tensor<?x?x8xf32, ["b", "2*s"]>) -> tensor<?x?x8xf32, ["b", "2*s - 1"]>
  %rm = graph.reduce_max %tail {axes = [1], keepdims = false} : (tensor<?x?x8xf32, ["b", "2*s - 1"]>) -> tensor<?x8xf32, ["b"]>
  func.return %tail, %rm : tensor<?x?x8xf32, ["b", "2*s - 1"]>, tensor<?x8xf32, ["b"]>
}`

// An MLP over a symbolic batch (flatten, gemm with bias and alpha/beta,
// relu, broadcasting elementwise ops) legalizes and fuses once; bound at
// each batch, the hlo function computes what the graph function does.
func TestSymbolicHLOMLP(t *testing.T) {
	f := parseFunc(t, withConstants(symbolicMLP))
	checkBindings(t, f, []map[string]int64{{"batch": 1}, {"batch": 3}, {"batch": 8}})
}

// A conv net over symbolic batch, height and width: a strided, padded
// convolution with bias, batch norm, relu, max and average pooling, a
// reduction over the symbolic spatial dimensions, gemm and softmax.
func TestSymbolicHLOConvNet(t *testing.T) {
	f := parseFunc(t, withConstants(symbolicConvNet))
	checkBindings(t, f, []map[string]int64{{"batch": 1, "h": 5, "w": 7}, {"batch": 2, "h": 8, "w": 8}, {"batch": 3, "h": 11, "w": 6}})
}

// Attention over symbolic batch and sequence: batched matmuls, slices of
// a static dimension and to the end of a symbolic one, reshapes that
// split and merge symbolic dimensions, transposes, softmax and a layer
// norm, a concatenation along a symbolic dimension and a reduction over
// one.
func TestSymbolicHLOAttention(t *testing.T) {
	f := parseFunc(t, withConstants(symbolicAttention))
	checkBindings(t, f, []map[string]int64{{"b": 1, "s": 1}, {"b": 2, "s": 5}, {"b": 3, "s": 9}})
}

// Every elementwise graph op of one or two f32 operands (the unary and
// binary tables, activations and comparisons included) legalizes over a
// symbolic dimension, broadcasting a static operand, and computes what
// the graph op does once bound.
func TestSymbolicHLOElementwise(t *testing.T) {
	x := `tensor<?x3xf32, ["n"]>`
	for _, name := range graphir.RegisteredOps() {
		def := graphir.LookupOp(name)
		if !strings.HasPrefix(name, "graph.") || def.Traits&graphir.Elementwise == 0 || !graph.LegalizesSymbolic(name) {
			continue
		}
		operands := []string{x}
		if def.Operands.Min == 2 {
			operands = append(operands, "tensor<3xf32>")
		} else if def.Operands.Min != 1 {
			continue
		}
		tys := make([]graphir.Type, len(operands))
		for i, s := range operands {
			tt, err := graphir.ParseTensorType(s)
			require.NoError(t, err)
			tys[i] = tt
		}
		b := graphir.NewBlock(tys...)
		op, err := graphir.Build(name, b.Args, nil, graphir.Location{File: "t.mlir", Line: 1, Col: 1})
		if err != nil {
			continue // the op takes other element types or needs attributes
		}
		t.Run(name, func(t *testing.T) {
			fn := &graphir.Func{Name: "main", Type: &graphir.FunctionType{Inputs: tys, Results: []graphir.Type{op.Results[0].Type}}, Body: graphir.NewRegion(b)}
			b.Append(op)
			b.Append(graphir.NewOp(graphir.ReturnOpName, op.Results, nil, nil, op.Loc))
			require.NoError(t, graphir.VerifyFunc(fn))
			checkBindings(t, fn, []map[string]int64{{"n": 2}})
		})
	}
}

// A graph op whose legalization has not opted in to symbolic dimensions
// (Conversions.Symbolic) is refused at the op, naming its symbols and the
// flags that pin them; the function is left as it was.
func TestSymbolicHLORefusesNotOptedIn(t *testing.T) {
	defer graph.SetLegalizesSymbolic(graph.ReluOp, false)()
	m, err := graphir.ParseString("test.mlir", withConstants(symbolicMLP))
	require.NoError(t, err)
	err = graphir.RunPipeline(m, graph.LegalizeToHLOPassName)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "test.mlir:")
	assert.Contains(t, err.Error(), "'graph.relu' op failed to legalize to hlo: does not take symbolic dimensions yet ('batch'); pin them with --fix-dim batch=N (tessera-opt: --fix-dims='dims=NAME:N,...')")
	text := graphir.Print(m)
	assert.Contains(t, text, "graph.relu", "the refused op stays")
	assert.Contains(t, text, "hlo.dot_general", "the ops before it are legalized")
}

// Means over symbolic dimensions divide by the element count computed
// from hlo.get_dimension_size: a mean over the symbolic batch, one over a
// symbolic and a static dimension, a global average pool over symbolic
// spatial dimensions. The input is shifted to [1, 3], so the means are
// not near 0 where f32 rounding would dominate the relative error.
func TestSymbolicHLOMeans(t *testing.T) {
	f := parseFunc(t, `func.func @main(%x0: tensor<?x4x?x?xf32, ["n", "h", "w"]>) -> (tensor<4x?x?xf32, ["h", "w"]>, tensor<?x1x?x1xf32, ["n", "h"]>, tensor<?x4x1x1xf32, ["n"]>) {
  %two = graph.constant {value = dense<2.0> : tensor<f32>} : tensor<f32>
  %x = graph.add %x0, %two : (tensor<?x4x?x?xf32, ["n", "h", "w"]>, tensor<f32>) -> tensor<?x4x?x?xf32, ["n", "h", "w"]>
  %m = graph.reduce_mean %x {axes = [0], keepdims = false} : (tensor<?x4x?x?xf32, ["n", "h", "w"]>) -> tensor<4x?x?xf32, ["h", "w"]>
  %k = graph.reduce_mean %x {axes = [1, 3]} : (tensor<?x4x?x?xf32, ["n", "h", "w"]>) -> tensor<?x1x?x1xf32, ["n", "h"]>
  %g = graph.global_avg_pool %x : (tensor<?x4x?x?xf32, ["n", "h", "w"]>) -> tensor<?x4x1x1xf32, ["n"]>
  func.return %m, %k, %g : tensor<4x?x?xf32, ["h", "w"]>, tensor<?x1x?x1xf32, ["n", "h"]>, tensor<?x4x1x1xf32, ["n"]>
}`)
	text := graphir.Print(&graphir.Module{Funcs: []*graphir.Func{lowerToHLO(t, f)}})
	assert.Contains(t, text, "hlo.get_dimension_size")
	checkBindings(t, f, []map[string]int64{{"n": 1, "h": 1, "w": 1}, {"n": 3, "h": 2, "w": 5}, {"n": 2, "h": 7, "w": 3}})
}

// What a symbolic dimension cannot express is refused at the op naming
// the symbol: a padded average pool without count_include_pad over one.
func TestSymbolicHLORefusals(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"average pool without count_include_pad", `%r = graph.avg_pool2d %x {kernel = [3, 3], pads = [1, 1, 1, 1]} : (tensor<?x4x?x?xf32, ["n", "h", "w"]>) -> tensor<?x4x?x?xf32, ["n", "h", "w"]>`,
			"the size of a dimension that avg_pool2d pads without count_include_pad (dimension 2 of"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := "func.func @main(%x: tensor<?x4x?x?xf32, [\"n\", \"h\", \"w\"]>) {\n  " + c.body + "\n  func.return\n}"
			m, err := graphir.ParseString("test.mlir", src)
			require.NoError(t, err)
			require.NoError(t, graphir.Verify(m))
			err = graphir.RunPipeline(m, graph.LegalizeToHLOPassName)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// dynamicModels are examples/onnx's models exported with dynamic axes,
// with the bindings each is checked at (resnet18_dynamic.onnx is large
// and git-ignored: skipped when absent, under -short or -race).
var dynamicModels = []struct {
	name     string
	bindings []map[string]int64
	long     bool
}{
	{"mlp_dynamic", []map[string]int64{{"batch": 1}, {"batch": 3}, {"batch": 8}}, false},
	{"transformer_encoder_layer_dynamic", []map[string]int64{{"batch": 1, "seq": 17}, {"batch": 2, "seq": 5}}, false},
	{"resnet18_dynamic", []map[string]int64{{"batch": 1}, {"batch": 2}}, true},
}

// The dynamic ONNX models, imported with their symbols and run through
// the graph-level cleanups compile runs, legalize and fuse once; bound at
// each size the hlo function computes what the graph function does.
func TestSymbolicHLODynamicModels(t *testing.T) {
	for _, m := range dynamicModels {
		t.Run(m.name, func(t *testing.T) {
			path := "../../examples/onnx/" + m.name + ".onnx"
			if _, err := os.Stat(path); err != nil {
				t.Skipf("%s is absent", path)
			}
			if m.long && (testing.Short() || raceDetector) {
				t.Skip("ResNet-18 in the interpreter takes half a minute: skipped under -short and -race")
			}
			mod, err := onnx.Import(path)
			require.NoError(t, err)
			require.NoError(t, graphir.RunPipeline(mod, "canonicalize,fold-batch-norm,constant-fold,cse,dce"))
			checkBindings(t, mod.Lookup("main"), m.bindings)
		})
	}
}
