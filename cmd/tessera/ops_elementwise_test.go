package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/graphir"
	rt "github.com/tessera-ml/tessera/runtime"
)

// Compiled code against the graph interpreter for the elementwise ONNX ops
// (dialects/graph/{math,activation,compare}.go), through `tessera run`, on
// inputs that mix random values with edge values (±0, ±inf, NaN, large and
// tiny magnitudes, integers and half-integers). i1 operands travel as bool
// .npy files; an i1 result is returned through a final graph.cast to f32,
// because `tessera run` cannot report on bool outputs yet (asFloat64 in
// run.go has no bool case).

func unaryCase(op, shape, attrs string) opCase {
	t := "tensor<" + shape + "xf32>"
	if shape == "" {
		t = "tensor<f32>"
	}
	if attrs != "" {
		attrs = " " + attrs
	}
	return opCase{op + attrs, []string{t}, t, fmt.Sprintf("%%0 = graph.%s %%arg0%s : %s", op, attrs, t)}
}

func binaryCase(op, a, b, r string) opCase {
	return opCase{op + " " + a + " " + b, []string{a, b}, r, fmt.Sprintf("%%0 = graph.%s %%arg0, %%arg1 : (%s, %s) -> %s", op, a, b, r)}
}

// unaryOps are the registered graph ops of one f32 operand whose result
// type is inferred and whose attributes all have defaults (exp, atan,
// relu, clip, ...): each gets a case without editing a list.
func unaryOps() []string {
	var ops []string
	x := graphir.NewBlock(graphir.NewTensor(graphir.F32, 2)).Args
	for _, name := range graphir.RegisteredOps() {
		d := graphir.LookupOp(name)
		if !strings.HasPrefix(name, "graph.") || d.Operands.Min != 1 || d.Operands.Max != 1 || d.Traits&graphir.Elementwise == 0 || d.Infer == nil {
			continue
		}
		if _, err := graphir.Build(name, x, nil, graphir.Location{}); err == nil {
			ops = append(ops, name)
		}
	}
	return ops
}

// quantCase quantizes a 5×37 f32 operand with scale and zero point (dense
// literals of types st and the quantized type q, per tensor or per axis)
// and dequantizes it back, so the compiled pair is checked against the
// interpreter's on the edge values too (NaN quantizes to the zero point,
// ±inf saturates).
func quantCase(q, st, scale, zp, axis string) opCase {
	zt := strings.Replace(st, "f32", q, 1)
	body := fmt.Sprintf(`%%s = graph.constant {value = %s} : %s
    %%z = graph.constant {value = %s} : %s
    %%q = graph.quantize_linear %%arg0, %%s, %%z%s : (tensor<5x37xf32>, %s, %s) -> tensor<5x37x%s>
    %%0 = graph.dequantize_linear %%q, %%s, %%z%s : (tensor<5x37x%s>, %s, %s) -> tensor<5x37xf32>`,
		scale, st, zp, zt, axis, st, zt, q, axis, q, st, zt)
	return opCase{"quantize " + q + " " + st + axis, []string{"tensor<5x37xf32>"}, "tensor<5x37xf32>", body}
}

// modCase is graph.mod {fmod} of a and b (i32 operands in [-9, 9]: zero
// divisors included).
func modCase(a, b, r string, fmod int) opCase {
	return opCase{fmt.Sprintf("mod fmod=%d %s %s", fmod, a, b), []string{a, b}, r,
		fmt.Sprintf("%%0 = graph.mod %%arg0, %%arg1 {fmod = %d} : (%s, %s) -> %s", fmod, a, b, r)}
}

var elementwiseOpCases = func() []opCase {
	var cs []opCase
	for _, op := range unaryOps() {
		cs = append(cs, unaryCase(strings.TrimPrefix(op, "graph."), "5x37", ""))
	}
	cs = append(cs,
		unaryCase("clip", "67", "{max = 1.5 : f32, min = -0.5 : f32}"),
		unaryCase("clip", "67", "{min = 0.25 : f32}"),
		unaryCase("clip", "67", "{max = 0.25 : f32}"),
		unaryCase("hard_sigmoid", "3x19", "{alpha = 0.5 : f32, beta = 0.6 : f32}"),
		unaryCase("leaky_relu", "3x19", "{alpha = 0.1 : f32}"),
		unaryCase("elu", "3x19", "{alpha = 2.0 : f32}"),
		unaryCase("selu", "3x19", "{alpha = 2.0 : f32, gamma = 3.0 : f32}"),
		unaryCase("celu", "3x19", "{alpha = 2.0 : f32}"),
		unaryCase("shrink", "3x19", "{bias = 0.5 : f32, lambd = 1.5 : f32}"),
		unaryCase("sign", "", ""),
		modCase("tensor<4x1x9xf32>", "tensor<3x1xf32>", "tensor<4x3x9xf32>", 1),
		modCase("tensor<5x17xi32>", "tensor<17xi32>", "tensor<5x17xi32>", 0),
		modCase("tensor<5x17xi32>", "tensor<5x17xi32>", "tensor<5x17xi32>", 1),
		binaryCase("pow", "tensor<4x1x9xf32>", "tensor<3x1xf32>", "tensor<4x3x9xf32>"),
		binaryCase("max", "tensor<2x33xf32>", "tensor<33xf32>", "tensor<2x33xf32>"),
		binaryCase("min", "tensor<f32>", "tensor<5x7xf32>", "tensor<5x7xf32>"),
		binaryCase("prelu", "tensor<2x3x11xf32>", "tensor<3x1xf32>", "tensor<2x3x11xf32>"),
		binaryCase("prelu", "tensor<40xf32>", "tensor<40xf32>", "tensor<40xf32>"),
		binaryCase("and", "tensor<3x17xi1>", "tensor<17xi1>", "tensor<3x17xi1>"),
		binaryCase("or", "tensor<3x17xi1>", "tensor<3x1xi1>", "tensor<3x17xi1>"),
		opCase{"not", []string{"tensor<3x17xi1>"}, "tensor<3x17xi1>", `%0 = graph.not %arg0 : tensor<3x17xi1>`},
		opCase{"where", []string{"tensor<2x1x7xi1>", "tensor<3x7xf32>", "tensor<f32>"}, "tensor<2x3x7xf32>",
			`%0 = graph.where %arg0, %arg1, %arg2 : (tensor<2x1x7xi1>, tensor<3x7xf32>, tensor<f32>) -> tensor<2x3x7xf32>`},
		opCase{"where i1", []string{"tensor<33xi1>", "tensor<33xi1>", "tensor<1xi1>"}, "tensor<33xi1>",
			`%0 = graph.where %arg0, %arg1, %arg2 : (tensor<33xi1>, tensor<33xi1>, tensor<1xi1>) -> tensor<33xi1>`},
		quantCase("ui8", "tensor<f32>", "dense<0.04> : tensor<f32>", "dense<128> : tensor<ui8>", ""),
		quantCase("i8", "tensor<f32>", "dense<0.03> : tensor<f32>", "dense<-5> : tensor<i8>", ""),
		quantCase("i8", "tensor<5xf32>", "dense<[0.5, 0.02, 1.0, 0.25, 0.0078125]> : tensor<5xf32>", "dense<[0, 3, -7, 100, -128]> : tensor<5xi8>", " {axis = 0}"),
		quantCase("ui8", "tensor<37xf32>", "dense<0.1> : tensor<37xf32>", "dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 255]> : tensor<37xui8>", " {axis = -1}"),
		opCase{"conv2d i32", []string{"tensor<1x2x5x6xi32>", "tensor<3x2x3x3xi32>"}, "tensor<1x3x2x3xi32>",
			`%0 = graph.conv2d %arg0, %arg1 {pads = [1, 0, 0, 1], strides = [2, 2]} : (tensor<1x2x5x6xi32>, tensor<3x2x3x3xi32>) -> tensor<1x3x2x3xi32>`},
		opCase{"cast f32 i1", []string{"tensor<41xf32>"}, "tensor<41xi1>", `%0 = graph.cast %arg0 : (tensor<41xf32>) -> tensor<41xi1>`},
		opCase{"cast f32 i32", []string{"tensor<41xf32>"}, "tensor<41xi32>", `%0 = graph.cast %arg0 : (tensor<41xf32>) -> tensor<41xi32>`},
		opCase{"cast i1 f32", []string{"tensor<41xi1>"}, "tensor<41xf32>", `%0 = graph.cast %arg0 : (tensor<41xi1>) -> tensor<41xf32>`},
		opCase{"cast i32 f32", []string{"tensor<41xi32>"}, "tensor<41xf32>", `%0 = graph.cast %arg0 : (tensor<41xi32>) -> tensor<41xf32>`},
	)
	for _, op := range []string{"equal", "less", "greater", "less_equal", "greater_equal"} {
		cs = append(cs, binaryCase(op, "tensor<4x1x9xf32>", "tensor<3x1xf32>", "tensor<4x3x9xi1>"))
	}
	cs = append(cs, binaryCase("equal", "tensor<19xi32>", "tensor<i32>", "tensor<19xi1>"),
		binaryCase("equal", "tensor<19xi1>", "tensor<19xi1>", "tensor<19xi1>"))
	return cs
}()

// elementwiseEdges are mixed into the float inputs.
var elementwiseEdges = []float32{0, float32(math.Copysign(0, -1)), 1, -1, 2, -2, 0.5, -0.5, 2.5, -2.5, 1e-30, -1e-30, 100, -100,
	float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}

// writeInput writes a random .npy of type tt and returns its graph tensor.
func writeInput(t *testing.T, r *rand.Rand, tt *graphir.TensorType, path string, edges bool) *graphir.Tensor {
	t.Helper()
	gt := graphir.NewZeroTensor(tt)
	var x *rt.Tensor
	var err error
	switch tt.Elem {
	case graphir.F32:
		data := make([]float32, len(gt.Data))
		for j := range data {
			data[j] = float32(r.Float64()*6 - 3)
			if edges && r.IntN(4) == 0 {
				data[j] = elementwiseEdges[r.IntN(len(elementwiseEdges))]
			}
			gt.Data[j] = float64(data[j])
		}
		x, err = rt.FromSlice(tt.Shape, data)
	case graphir.I1:
		data := make([]bool, len(gt.Data))
		for j := range data {
			data[j] = r.IntN(2) == 0
			if data[j] {
				gt.Data[j] = 1
			}
		}
		x, err = rt.FromSlice(tt.Shape, data)
	case graphir.I32:
		data := make([]int32, len(gt.Data))
		for j := range data {
			data[j] = int32(r.IntN(19) - 9)
			gt.Data[j] = float64(data[j])
		}
		x, err = rt.FromSlice(tt.Shape, data)
	default:
		t.Fatalf("no input generator for %s", tt)
	}
	require.NoError(t, err)
	require.NoError(t, rt.WriteNPY(path, x))
	return gt
}

// readOutput reads a .npy result as float64 values.
func readOutput(t *testing.T, path string, elem graphir.DType) []float64 {
	t.Helper()
	tn, err := rt.ReadNPY(path)
	require.NoError(t, err)
	var out []float64
	switch elem {
	case graphir.F32:
		v, err := tn.Float32s()
		require.NoError(t, err)
		for _, x := range v {
			out = append(out, float64(x))
		}
	case graphir.I32:
		v, err := tn.Int32s()
		require.NoError(t, err)
		for _, x := range v {
			out = append(out, float64(x))
		}
	case graphir.I64:
		v, err := tn.Int64s()
		require.NoError(t, err)
		for _, x := range v {
			out = append(out, float64(x))
		}
	default:
		t.Fatalf("no output reader for %s", elem)
	}
	return out
}

func TestElementwiseOpsCompiledMatchInterpreter(t *testing.T) {
	covered := map[string]bool{}
	for ci, c := range elementwiseOpCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var params []string
			for i, ty := range c.ins {
				params = append(params, fmt.Sprintf("%%arg%d: %s", i, ty))
			}
			src := fmt.Sprintf("func.func @main(%s) -> %s {\n    %s\n    func.return %%0 : %s\n}\n", strings.Join(params, ", "), c.result, c.body, c.result)
			if strings.HasSuffix(c.result, "xi1>") || c.result == "tensor<i1>" {
				f32 := strings.TrimSuffix(strings.TrimSuffix(c.result, "i1>"), "x") + "xf32>"
				if c.result == "tensor<i1>" {
					f32 = "tensor<f32>"
				}
				src = fmt.Sprintf("func.func @main(%s) -> %s {\n    %s\n    %%r = graph.cast %%0 : (%s) -> %s\n    func.return %%r : %s\n}\n",
					strings.Join(params, ", "), f32, c.body, c.result, f32, f32)
			}
			model := filepath.Join(dir, "op.mlir")
			require.NoError(t, os.WriteFile(model, []byte(src), 0o644))
			m, err := graphir.ParseString(model, src)
			require.NoError(t, err)
			require.NoError(t, graphir.Verify(m))
			m.Walk(func(op *graphir.Op) { covered[op.Name] = true })

			// Casts to integers of out-of-range values are unspecified: plain values there.
			edges := !strings.HasPrefix(c.name, "cast f32 i32")
			r := rand.New(rand.NewPCG(11, uint64(ci)))
			for trial := 0; trial < 2; trial++ {
				args := []string{"run", model, "--output", filepath.Join(dir, "y.npy")}
				var ins []*graphir.Tensor
				for i, ty := range m.Funcs[0].Type.Inputs {
					p := filepath.Join(dir, fmt.Sprintf("x%d.npy", i))
					ins = append(ins, writeInput(t, r, ty.(*graphir.TensorType), p, edges))
					args = append(args, "--input", p)
				}
				want, err := graphir.Interpret(m.Funcs[0], ins)
				require.NoError(t, err)
				_, stderr, code := tessera(args...)
				require.Equal(t, 0, code, stderr)
				got := readOutput(t, filepath.Join(dir, "y.npy"), want[0].Type.Elem)
				require.Len(t, got, len(want[0].Data))
				for i, g := range got {
					w := want[0].Data[i]
					switch {
					case math.IsNaN(w):
						require.True(t, math.IsNaN(g), "element %d: want NaN, got %v", i, g)
					case math.IsInf(w, 0) || !want[0].Type.Elem.IsFloat():
						require.Equal(t, w, g, "element %d", i)
					default:
						require.InDelta(t, w, g, 2e-5*math.Max(1, math.Abs(w)), "element %d (inputs %v)", i, ins)
					}
				}
			}
		})
	}
	for _, name := range append(unaryOps(), "graph.pow", "graph.max", "graph.min", "graph.mod", "graph.cast", "graph.prelu", "graph.celu", "graph.shrink",
		"graph.equal", "graph.less", "graph.greater", "graph.less_equal", "graph.greater_equal",
		"graph.not", "graph.and", "graph.or", "graph.where", "graph.quantize_linear", "graph.dequantize_linear") {
		assert.True(t, covered[name], "no compiled test for %s", name)
	}
}

// init adds one f32 case per elementwise op to opCases, so that
// TestEveryGraphOpCompiledMatchesInterpreter (inputs in [-2, 2), f32 results)
// covers them too: ops undefined for negative inputs read |x|, and the
// i1-valued ops run inside one function ending in where/cast.
func init() {
	seen := map[string]bool{}
	for _, c := range opCases {
		seen[strings.Fields(c.body)[2]] = true
	}
	for _, c := range elementwiseOpCases {
		op := strings.Fields(c.body)[2]
		f32Only := strings.HasSuffix(c.result, "f32>")
		for _, in := range c.ins {
			f32Only = f32Only && strings.HasSuffix(in, "f32>")
		}
		if seen[op] || !f32Only {
			continue
		}
		switch op {
		case "graph.log", "graph.sqrt", "graph.pow", "graph.cast", "graph.where":
			continue
		}
		seen[op] = true
		opCases = append(opCases, c)
	}
	const t = "tensor<3x13xf32>"
	const b = "tensor<3x13xi1>"
	opCases = append(opCases,
		opCase{"log sqrt pow of |x|", []string{t, t}, t, strings.NewReplacer("T", t).Replace(`%a = graph.abs %arg0 : T
    %l = graph.log %a : T
    %s = graph.sqrt %a : T
    %p = graph.pow %a, %arg1 : (T, T) -> T
    %q = graph.add %l, %s : (T, T) -> T
    %0 = graph.add %q, %p : (T, T) -> T`)},
		opCase{"compare logical where cast", []string{t, t}, t, strings.NewReplacer("T", t, "B", b).Replace(`%lt = graph.less %arg0, %arg1 : (T, T) -> B
    %ge = graph.greater_equal %arg0, %arg1 : (T, T) -> B
    %eq = graph.equal %arg0, %arg0 : (T, T) -> B
    %le = graph.less_equal %arg0, %arg1 : (T, T) -> B
    %gt = graph.greater %arg1, %arg0 : (T, T) -> B
    %n = graph.not %lt : B
    %a = graph.and %n, %ge : (B, B) -> B
    %o = graph.or %a, %le : (B, B) -> B
    %x = graph.and %o, %eq : (B, B) -> B
    %w = graph.where %x, %arg0, %arg1 : (B, T, T) -> T
    %f = graph.cast %gt : (B) -> T
    %0 = graph.add %w, %f : (T, T) -> T`)},
	)
}

// TestMinMaxEdgePairs runs max, min and the max/min reductions over every
// pair of edge values (±0, ±inf, NaN, ...) compiled and interpreted: NaN
// propagates in both, also next to +inf (where Go's math.Max would give
// +inf), and max(−0, +0) = +0.
func TestMinMaxEdgePairs(t *testing.T) {
	n := int64(len(elementwiseEdges))
	src := fmt.Sprintf(`func.func @main(%%a: tensor<%[1]dx1xf32>, %%b: tensor<1x%[1]dxf32>) -> (tensor<%[1]dx%[1]dxf32>, tensor<%[1]dx%[1]dxf32>, tensor<%[1]dx1xf32>, tensor<%[1]dx1xf32>) {
    %%0 = graph.max %%a, %%b : (tensor<%[1]dx1xf32>, tensor<1x%[1]dxf32>) -> tensor<%[1]dx%[1]dxf32>
    %%1 = graph.min %%a, %%b : (tensor<%[1]dx1xf32>, tensor<1x%[1]dxf32>) -> tensor<%[1]dx%[1]dxf32>
    %%2 = graph.reduce_max %%0 {axes = [1]} : (tensor<%[1]dx%[1]dxf32>) -> tensor<%[1]dx1xf32>
    %%3 = graph.reduce_min %%1 {axes = [1]} : (tensor<%[1]dx%[1]dxf32>) -> tensor<%[1]dx1xf32>
    func.return %%0, %%1, %%2, %%3 : tensor<%[1]dx%[1]dxf32>, tensor<%[1]dx%[1]dxf32>, tensor<%[1]dx1xf32>, tensor<%[1]dx1xf32>
}
`, n)
	dir := t.TempDir()
	model := filepath.Join(dir, "minmax.mlir")
	require.NoError(t, os.WriteFile(model, []byte(src), 0o644))
	m, err := graphir.ParseString(model, src)
	require.NoError(t, err)
	args := []string{"run", model}
	var ins []*graphir.Tensor
	for i, shape := range [][]int64{{n, 1}, {1, n}} {
		g := graphir.NewZeroTensor(graphir.NewTensor(graphir.F32, shape...))
		for j, v := range elementwiseEdges {
			g.Data[j] = float64(v)
		}
		x, err := rt.FromSlice(shape, elementwiseEdges)
		require.NoError(t, err)
		p := filepath.Join(dir, fmt.Sprintf("x%d.npy", i))
		require.NoError(t, rt.WriteNPY(p, x))
		args = append(args, "--input", p)
		ins = append(ins, g)
	}
	want, err := graphir.Interpret(m.Funcs[0], ins)
	require.NoError(t, err)
	for i := range want {
		args = append(args, "--output", filepath.Join(dir, fmt.Sprintf("y%d.npy", i)))
	}
	_, stderr, code := tessera(args...)
	require.Equal(t, 0, code, stderr)
	inf, nan := int64(14), int64(16) // +inf and NaN in elementwiseEdges
	require.True(t, math.IsNaN(want[0].Data[inf*n+nan]) && math.IsNaN(want[0].Data[nan*n+inf]), "interpreted max(+inf, NaN)")
	require.True(t, math.IsNaN(want[1].Data[inf*n+nan]), "interpreted min(+inf, NaN)")
	for i := range want {
		got := readOutput(t, filepath.Join(dir, fmt.Sprintf("y%d.npy", i)), graphir.F32)
		for j, w := range want[i].Data {
			if math.IsNaN(w) {
				require.True(t, math.IsNaN(got[j]), "result %d element %d: want NaN, got %v", i, j, got[j])
				continue
			}
			require.Equal(t, math.Float64bits(w), math.Float64bits(got[j]), "result %d element %d: want %v, got %v", i, j, w, got[j])
		}
	}
}
