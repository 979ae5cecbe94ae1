package lowering

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
)

// An agreement case is a one-op graph function: the op named op applied to
// function arguments of the given shapes (f32) with attrs. positive lists
// operand indices whose random values must be > 0 (divisors, variances).
type agreeCase struct {
	name     string
	op       string
	inputs   [][]int64
	attrs    graphir.DictAttr
	positive []int
}

var caseLoc = graphir.Location{File: "case.mlir", Line: 3, Col: 7}

func attrs(kv ...any) graphir.DictAttr {
	d := graphir.DictAttr{}
	for i := 0; i < len(kv); i += 2 {
		var a graphir.Attribute
		switch v := kv[i+1].(type) {
		case []int64:
			a = graphir.I64Array(v...)
		case int:
			a = graphir.IntAttr(int64(v))
		case float64:
			a = graphir.F32Attr(v)
		case bool:
			a = graphir.BoolAttr(v)
		case string:
			a = graphir.StringAttr(v)
		case []float64:
			arr := make(graphir.ArrayAttr, len(v))
			for j, f := range v {
				arr[j] = graphir.F32Attr(f)
			}
			a = arr
		case graphir.Attribute:
			a = v
		default:
			panic(fmt.Sprintf("attrs: unsupported %T", v))
		}
		d = d.Set(kv[i].(string), a)
	}
	return d
}

func shapes(ss ...[]int64) [][]int64 { return ss }

func s(dims ...int64) []int64 { return append([]int64{}, dims...) }

func agreementCases() []agreeCase {
	var cs []agreeCase
	add := func(c agreeCase) { cs = append(cs, c) }

	// Broadcasting binary ops: equal shapes, trailing vector, rank 0 on
	// either side, size-1 expansion on both sides, rank extension.
	bshapes := [][2][]int64{
		{s(2, 3), s(2, 3)},
		{s(2, 3), s(3)},
		{s(3), s(2, 3)},
		{s(2, 3), s()},
		{s(), s(2, 3)},
		{s(), s()},
		{s(2, 1), s(1, 3)},
		{s(4, 1, 5), s(3, 1)},
		{s(1), s(2, 3)},
		{s(2, 3, 1), s(2, 1, 4)},
		{s(1, 1), s(1)},
		{s(5, 1, 3, 1), s(2, 1, 2)},
	}
	for _, op := range []string{"graph.add", "graph.sub", "graph.mul", "graph.div"} {
		for _, sh := range bshapes {
			c := agreeCase{name: fmt.Sprintf("%s/%v_%v", op, sh[0], sh[1]), op: op, inputs: shapes(sh[0], sh[1])}
			if op == "graph.div" {
				c.positive = []int{1}
			}
			add(c)
		}
	}
	for _, op := range []string{"graph.relu", "graph.sigmoid", "graph.tanh"} {
		for _, sh := range [][]int64{s(2, 3, 4), s(), s(7)} {
			add(agreeCase{name: fmt.Sprintf("%s/%v", op, sh), op: op, inputs: shapes(sh)})
		}
	}

	r := rand.New(rand.NewPCG(7, 11))
	dense := func(shape ...int64) *graphir.DenseElementsAttr {
		t := graphir.NewTensor(graphir.F32, shape...)
		vs := make([]float64, t.NumElements())
		for i := range vs {
			vs[i] = graphir.Float32Round(r.Float64()*4 - 2)
		}
		return &graphir.DenseElementsAttr{Type: t, Floats: vs}
	}
	add(agreeCase{name: "constant/dense", op: "graph.constant", attrs: attrs("value", dense(2, 3))})
	add(agreeCase{name: "constant/rank0", op: "graph.constant", attrs: attrs("value", dense())})
	add(agreeCase{name: "constant/splat", op: "graph.constant",
		attrs: attrs("value", &graphir.DenseElementsAttr{Type: graphir.NewTensor(graphir.F32, 3, 4), Floats: []float64{0.25}})})

	// Convolutions: plain, bias, stride+pad, asymmetric pads, dilation,
	// groups, depthwise, non-square kernels on odd sizes.
	convs := []struct {
		name string
		x, w []int64
		bias bool
		a    graphir.DictAttr
	}{
		{"plain", s(1, 3, 8, 8), s(4, 3, 3, 3), false, nil},
		{"bias", s(2, 3, 6, 5), s(4, 3, 3, 3), true, nil},
		{"stride_pad", s(1, 2, 9, 9), s(3, 2, 3, 3), true, attrs("strides", s(2, 2), "pads", s(1, 1, 1, 1))},
		{"asym_pads", s(1, 2, 7, 8), s(3, 2, 3, 2), true, attrs("strides", s(2, 3), "pads", s(0, 1, 2, 1))},
		{"dilation", s(1, 2, 10, 9), s(2, 2, 3, 3), false, attrs("dilations", s(2, 3), "pads", s(1, 2, 1, 0))},
		{"groups", s(2, 4, 7, 7), s(6, 2, 3, 3), true, attrs("groups", 2, "strides", s(2, 1))},
		{"depthwise", s(1, 4, 6, 6), s(4, 1, 3, 3), true, attrs("groups", 4, "pads", s(1, 1, 1, 1))},
		{"depthwise_mult", s(1, 3, 5, 6), s(6, 1, 2, 2), false, attrs("groups", 3, "strides", s(2, 2))},
		{"nonsquare", s(1, 5, 9, 7), s(2, 5, 2, 4), true, attrs("strides", s(3, 2), "pads", s(2, 0, 1, 3), "dilations", s(1, 2))},
		{"1x1", s(3, 8, 4, 4), s(5, 8, 1, 1), true, nil},
	}
	for _, c := range convs {
		in := shapes(c.x, c.w)
		if c.bias {
			in = append(in, s(c.w[0]))
		}
		add(agreeCase{name: "conv2d/" + c.name, op: "graph.conv2d", inputs: in, attrs: c.a})
	}
	cs = append(cs, convTransposeCases()...)

	mms := [][2][]int64{
		{s(3, 4), s(4, 5)},
		{s(4), s(4)},
		{s(4), s(4, 5)},
		{s(3, 4), s(4)},
		{s(2, 3, 4), s(4, 5)},
		{s(2, 3, 4), s(2, 4, 5)},
		{s(3, 4), s(2, 4, 5)},
		{s(2, 1, 3, 4), s(5, 4, 2)},
		{s(4), s(2, 4, 5)},
		{s(2, 3, 4), s(4)},
		{s(1, 3, 4), s(2, 4, 5)},
		{s(2, 1, 3, 4), s(1, 3, 4, 2)},
	}
	for _, m := range mms {
		add(agreeCase{name: fmt.Sprintf("matmul/%v_%v", m[0], m[1]), op: "graph.matmul", inputs: shapes(m[0], m[1])})
	}

	// Gemm: every transA/transB, alpha, beta and C shape combination.
	const M, K, N = 3, 4, 5
	cShapes := [][]int64{nil, s(N), s(M, N), s(1, N), s(M, 1), s(), s(1, 1), s(1)}
	for _, ta := range []bool{false, true} {
		for _, tb := range []bool{false, true} {
			for _, alpha := range []float64{1, 0.5} {
				for _, beta := range []float64{1, -2} {
					for _, cs := range cShapes {
						a, b := s(M, K), s(K, N)
						if ta {
							a = s(K, M)
						}
						if tb {
							b = s(N, K)
						}
						in := shapes(a, b)
						if cs != nil {
							in = append(in, cs)
						}
						at := attrs("transA", ta, "transB", tb)
						if alpha != 1 {
							at = at.Set("alpha", graphir.F32Attr(alpha))
						}
						if beta != 1 {
							at = at.Set("beta", graphir.F32Attr(beta))
						}
						add(agreeCase{name: fmt.Sprintf("gemm/tA=%v,tB=%v,a=%g,b=%g,C=%v", ta, tb, alpha, beta, cs), op: "graph.gemm", inputs: in, attrs: at})
					}
				}
			}
		}
	}

	// Pools: strides, padding (symmetric and not), ceil mode (including the
	// ONNX rule dropping a window that would start in the high padding),
	// dilation for max, count_include_pad for avg.
	pools := []struct {
		name string
		x    []int64
		a    graphir.DictAttr
	}{
		{"k2s2", s(1, 2, 8, 8), attrs("kernel", s(2, 2), "strides", s(2, 2))},
		{"k3s1p1", s(2, 3, 5, 6), attrs("kernel", s(3, 3), "pads", s(1, 1, 1, 1))},
		{"k2s2_ceil_odd", s(1, 2, 7, 7), attrs("kernel", s(2, 2), "strides", s(2, 2), "ceil_mode", true)},
		{"k3s2_floor_odd", s(1, 1, 8, 9), attrs("kernel", s(3, 3), "strides", s(2, 2))},
		{"k3s2_ceil_pad", s(1, 2, 8, 9), attrs("kernel", s(3, 3), "strides", s(2, 2), "pads", s(1, 1, 1, 1), "ceil_mode", true)},
		{"asym_ceil", s(1, 1, 7, 6), attrs("kernel", s(3, 2), "strides", s(2, 3), "pads", s(1, 1, 2, 1), "ceil_mode", true)},
		{"ceil_last_window_dropped", s(1, 1, 3, 3), attrs("kernel", s(2, 2), "strides", s(2, 2), "pads", s(1, 1, 1, 1), "ceil_mode", true)},
		{"rect_stride", s(2, 1, 9, 10), attrs("kernel", s(2, 3), "strides", s(3, 2), "pads", s(0, 1, 1, 0))},
		{"global_window", s(1, 2, 4, 5), attrs("kernel", s(4, 5))},
	}
	for _, p := range pools {
		add(agreeCase{name: "max_pool2d/" + p.name, op: "graph.max_pool2d", inputs: shapes(p.x), attrs: p.a})
		for _, inc := range []bool{false, true} {
			add(agreeCase{name: fmt.Sprintf("avg_pool2d/%s/include_pad=%v", p.name, inc), op: "graph.avg_pool2d", inputs: shapes(p.x),
				attrs: append(graphir.DictAttr(nil), p.a...).Set("count_include_pad", graphir.BoolAttr(inc))})
		}
	}
	add(agreeCase{name: "max_pool2d/dilated", op: "graph.max_pool2d", inputs: shapes(s(1, 2, 9, 8)),
		attrs: attrs("kernel", s(2, 3), "dilations", s(2, 2), "pads", s(1, 2, 1, 2), "strides", s(1, 2))})
	add(agreeCase{name: "max_pool2d/dilated_ceil", op: "graph.max_pool2d", inputs: shapes(s(1, 1, 8, 8)),
		attrs: attrs("kernel", s(2, 2), "dilations", s(2, 2), "strides", s(2, 2), "ceil_mode", true)})
	for _, sh := range [][]int64{s(2, 3, 5, 4), s(1, 2, 3), s(1, 2, 2, 3, 2), s(1, 1, 1, 1)} {
		add(agreeCase{name: fmt.Sprintf("global_avg_pool/%v", sh), op: "graph.global_avg_pool", inputs: shapes(sh)})
	}

	for _, sh := range [][]int64{s(2, 3, 4, 5), s(2, 3), s(1, 4, 3)} {
		c := sh[1]
		add(agreeCase{name: fmt.Sprintf("batch_norm/%v", sh), op: "graph.batch_norm",
			inputs: shapes(sh, s(c), s(c), s(c), s(c)), positive: []int{4}})
	}
	add(agreeCase{name: "batch_norm/eps", op: "graph.batch_norm", inputs: shapes(s(1, 2, 3, 3), s(2), s(2), s(2), s(2)),
		attrs: attrs("epsilon", 0.1), positive: []int{4}})

	for _, ax := range []int{-1, 0, 1, 2, -3, -2} {
		add(agreeCase{name: fmt.Sprintf("softmax/axis=%d", ax), op: "graph.softmax", inputs: shapes(s(2, 3, 4)), attrs: attrs("axis", ax)})
	}
	add(agreeCase{name: "softmax/default", op: "graph.softmax", inputs: shapes(s(3, 5))})
	add(agreeCase{name: "softmax/1d", op: "graph.softmax", inputs: shapes(s(6)), attrs: attrs("axis", 0)})

	for _, ax := range []int{0, 1, 2, 3, 4, -1, -3} {
		add(agreeCase{name: fmt.Sprintf("flatten/axis=%d", ax), op: "graph.flatten", inputs: shapes(s(2, 3, 4, 5)), attrs: attrs("axis", ax)})
	}
	add(agreeCase{name: "flatten/default", op: "graph.flatten", inputs: shapes(s(2, 1, 4, 4))})
	for _, shp := range [][]int64{s(6, -1), s(0, -1), s(-1), s(4, 0, 2), s(0, 0, -1), s(2, -1, 2), s(24), s(1, 2, 3, 4, 1)} {
		add(agreeCase{name: fmt.Sprintf("reshape/%v", shp), op: "graph.reshape", inputs: shapes(s(2, 3, 4)), attrs: attrs("shape", shp)})
	}
	add(agreeCase{name: "transpose/default", op: "graph.transpose", inputs: shapes(s(2, 3, 4))})
	add(agreeCase{name: "transpose/102", op: "graph.transpose", inputs: shapes(s(2, 3, 4)), attrs: attrs("perm", s(1, 0, 2))})
	add(agreeCase{name: "transpose/nchw_nhwc", op: "graph.transpose", inputs: shapes(s(1, 3, 2, 5)), attrs: attrs("perm", s(0, 2, 3, 1))})
	add(agreeCase{name: "transpose/identity", op: "graph.transpose", inputs: shapes(s(3, 2)), attrs: attrs("perm", s(0, 1))})
	add(agreeCase{name: "hardmax/last", op: "graph.hardmax", inputs: shapes(s(3, 4, 5))})
	add(agreeCase{name: "hardmax/axis0", op: "graph.hardmax", inputs: shapes(s(4, 3)), attrs: attrs("axis", 0)})
	add(agreeCase{name: "resize/nearest_up", op: "graph.resize", inputs: shapes(s(1, 2, 3, 4)), attrs: attrs("sizes", s(1, 2, 7, 9))})
	add(agreeCase{name: "resize/nearest_ceil_asym", op: "graph.resize", inputs: shapes(s(2, 5, 3)), attrs: attrs("sizes", s(2, 3, 8), "coordinate_transformation_mode", "asymmetric", "nearest_mode", "ceil")})
	add(agreeCase{name: "resize/nearest_floor_align", op: "graph.resize", inputs: shapes(s(6, 4)), attrs: attrs("sizes", s(4, 7), "coordinate_transformation_mode", "align_corners", "nearest_mode", "floor")})
	add(agreeCase{name: "resize/nearest_prefer_ceil_scales", op: "graph.resize", inputs: shapes(s(1, 1, 4, 6)), attrs: attrs("sizes", s(1, 1, 8, 3), "scales", []float64{1, 1, 2, 0.6}, "nearest_mode", "round_prefer_ceil")})
	add(agreeCase{name: "resize/linear_half_pixel_down", op: "graph.resize", inputs: shapes(s(1, 3, 7, 5)), attrs: attrs("sizes", s(1, 3, 4, 3), "mode", "linear")})
	add(agreeCase{name: "resize/linear_align_corners_up", op: "graph.resize", inputs: shapes(s(2, 1, 3, 4)), attrs: attrs("sizes", s(2, 1, 8, 9), "mode", "linear", "coordinate_transformation_mode", "align_corners")})
	add(agreeCase{name: "resize/linear_pytorch_3d", op: "graph.resize", inputs: shapes(s(3, 4, 2)), attrs: attrs("sizes", s(5, 1, 6), "mode", "linear", "coordinate_transformation_mode", "pytorch_half_pixel")})
	add(agreeCase{name: "resize/cubic_exclude_outside", op: "graph.resize", inputs: shapes(s(1, 1, 5, 6)), attrs: attrs("sizes", s(1, 1, 9, 4), "mode", "cubic", "cubic_coeff_a", -0.5, "exclude_outside", true)})
	add(agreeCase{name: "resize/cubic_asymmetric", op: "graph.resize", inputs: shapes(s(4, 3)), attrs: attrs("sizes", s(10, 7), "mode", "cubic", "coordinate_transformation_mode", "asymmetric")})
	add(agreeCase{name: "resize/tf_crop_and_resize", op: "graph.resize", inputs: shapes(s(1, 2, 5, 5)), attrs: attrs("sizes", s(1, 2, 4, 3), "mode", "linear", "coordinate_transformation_mode", "tf_crop_and_resize",
		"roi", []float64{0, 0, -0.2, 0.3, 1, 1, 0.7, 1.4}, "extrapolation_value", 2.5)})
	add(agreeCase{name: "resize/identity", op: "graph.resize", inputs: shapes(s(2, 3)), attrs: attrs("sizes", s(2, 3), "mode", "cubic")})
	add(agreeCase{name: "argmax/axis1", op: "graph.argmax", inputs: shapes(s(3, 7, 2)), attrs: attrs("axis", 1)})
	add(agreeCase{name: "argmin/last_drop_select_last", op: "graph.argmin", inputs: shapes(s(4, 9)), attrs: attrs("axis", -1, "keepdims", false, "select_last_index", true)})
	add(agreeCase{name: "topk/last", op: "graph.topk", inputs: shapes(s(3, 7)), attrs: attrs("k", 3)})
	add(agreeCase{name: "topk/axis0_smallest", op: "graph.topk", inputs: shapes(s(5, 2, 3)), attrs: attrs("k", 5, "axis", 0, "largest", false)})
	add(agreeCase{name: "cumsum/axis0", op: "graph.cumsum", inputs: shapes(s(7, 3))})
	add(agreeCase{name: "cumsum/exclusive_last", op: "graph.cumsum", inputs: shapes(s(2, 3, 9)), attrs: attrs("axis", -1, "exclusive", true)})
	add(agreeCase{name: "cumsum/reverse", op: "graph.cumsum", inputs: shapes(s(4, 5)), attrs: attrs("axis", 1, "reverse", true)})
	add(agreeCase{name: "cumsum/reverse_exclusive", op: "graph.cumsum", inputs: shapes(s(6)), attrs: attrs("reverse", true, "exclusive", true)})
	add(agreeCase{name: "trilu/upper", op: "graph.trilu", inputs: shapes(s(2, 4, 5))})
	add(agreeCase{name: "trilu/lower", op: "graph.trilu", inputs: shapes(s(6, 3)), attrs: attrs("upper", false)})
	add(agreeCase{name: "layer_norm/last", op: "graph.layer_norm", inputs: shapes(s(3, 4, 10), s(10), s(10))})
	add(agreeCase{name: "layer_norm/axis1_no_bias", op: "graph.layer_norm", inputs: shapes(s(2, 3, 5), s(3, 5)), attrs: attrs("axis", 1, "epsilon", 0.5)})
	add(agreeCase{name: "layer_norm/axis0_broadcast", op: "graph.layer_norm", inputs: shapes(s(2, 3, 4), s(1, 4), s(3, 1)), attrs: attrs("axis", -3)})
	add(agreeCase{name: "depth_to_space/dcr", op: "graph.depth_to_space", inputs: shapes(s(2, 8, 3, 5)), attrs: attrs("blocksize", 2)})
	add(agreeCase{name: "depth_to_space/crd", op: "graph.depth_to_space", inputs: shapes(s(1, 18, 2, 3)), attrs: attrs("blocksize", 3, "mode", graphir.StringAttr("CRD"))})
	add(agreeCase{name: "depth_to_space/b1", op: "graph.depth_to_space", inputs: shapes(s(1, 3, 2, 2)), attrs: attrs("blocksize", 1)})
	add(agreeCase{name: "space_to_depth/b2", op: "graph.space_to_depth", inputs: shapes(s(2, 3, 4, 6)), attrs: attrs("blocksize", 2)})
	add(agreeCase{name: "space_to_depth/b3", op: "graph.space_to_depth", inputs: shapes(s(1, 2, 3, 9)), attrs: attrs("blocksize", 3)})
	add(agreeCase{name: "concat/axis1", op: "graph.concat", inputs: shapes(s(2, 3), s(2, 1), s(2, 4)), attrs: attrs("axis", 1)})
	add(agreeCase{name: "concat/neg", op: "graph.concat", inputs: shapes(s(2, 3), s(2, 2)), attrs: attrs("axis", -1)})
	add(agreeCase{name: "concat/neg_rank4", op: "graph.concat", inputs: shapes(s(1, 2, 2, 2), s(1, 3, 2, 2)), attrs: attrs("axis", -3)})
	add(agreeCase{name: "concat/axis0", op: "graph.concat", inputs: shapes(s(1, 3), s(2, 3)), attrs: attrs("axis", 0)})
	add(agreeCase{name: "concat/single", op: "graph.concat", inputs: shapes(s(2, 3)), attrs: attrs("axis", 0)})
	return cs
}

// oneOpModule builds @main(args) { %r = op(args) {attrs}; return %r }.
func oneOpModule(t *testing.T, c agreeCase) *graphir.Module {
	t.Helper()
	var in []graphir.Type
	for _, sh := range c.inputs {
		in = append(in, graphir.NewTensor(graphir.F32, sh...))
	}
	f := graphir.NewFunc("main", &graphir.FunctionType{Inputs: in}, caseLoc)
	op, err := graphir.Build(c.op, f.Args(), c.attrs, caseLoc)
	require.NoError(t, err, "building %s", c.name)
	f.Entry().Append(op)
	f.Entry().Append(graphir.NewOp(graphir.ReturnOpName, op.Results, nil, nil, caseLoc))
	for _, r := range op.Results {
		f.Type.Results = append(f.Type.Results, r.Type)
	}
	m := &graphir.Module{}
	m.AddFunc(f)
	require.NoError(t, graphir.Verify(m), "graph IR of %s", c.name)
	return m
}

// randomArgs draws f32 inputs in [-2, 2), or (0.1, 2.1) for positive ones.
func randomArgs(f *graphir.Func, positive []int, seed uint64) []*graphir.Tensor {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	var out []*graphir.Tensor
	for i, ty := range f.Type.Inputs {
		t := graphir.NewZeroTensor(graphir.AsTensor(ty))
		pos := false
		for _, p := range positive {
			pos = pos || p == i
		}
		for j := range t.Data {
			if pos {
				t.Data[j] = 0.1 + 2*r.Float64()
			} else {
				t.Data[j] = 4*r.Float64() - 2
			}
		}
		out = append(out, t.Round())
	}
	return out
}

// requireClose checks max |got − want| ≤ 1e-5·max(1, |want|) elementwise.
func requireClose(t *testing.T, want, got []*graphir.Tensor, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		require.True(t, want[i].Type.Equal(got[i].Type), "%s: result #%d type %s, want %s", what, i, got[i].Type, want[i].Type)
		for j, w := range want[i].Data {
			g := got[i].Data[j]
			if math.IsNaN(w) {
				require.True(t, math.IsNaN(g), "%s: result #%d[%d] = %g, want NaN", what, i, j, g)
				continue
			}
			require.LessOrEqual(t, math.Abs(g-w), 1e-5*math.Max(1, math.Abs(w)),
				"%s: result #%d[%d] = %.9g, want %.9g", what, i, j, g, w)
		}
	}
}

// runPipeline parses and runs a textual pipeline with verification after each pass.
func runPipeline(t *testing.T, m *graphir.Module, pipeline string) {
	t.Helper()
	if err := graphir.RunPipeline(m, pipeline); err != nil {
		t.Fatalf("pipeline %s: %v\non\n%s", pipeline, err, graphir.Print(m))
	}
}

// checkLowered asserts that only hlo ops (and func.return) remain and that
// every op carries loc.
func checkLowered(t *testing.T, m *graphir.Module, loc *graphir.Location, what string) {
	t.Helper()
	m.Walk(func(op *graphir.Op) {
		if op.Name == graphir.ReturnOpName {
			return
		}
		assert.Equal(t, "hlo", op.Dialect(), "%s: op %s remains", what, op.Name)
		if loc != nil {
			assert.Equal(t, *loc, op.Loc, "%s: %s lost the location", what, op.Name)
		}
	})
}

// TestLegalizeAgreement: each case's graph function and its legalization
// (and the legalization followed by fuse) compute the same values on random
// inputs; every registered graph op has a rule and at least one case.
func TestLegalizeAgreement(t *testing.T) {
	covered := map[string]bool{}
	for i, c := range agreementCases() {
		t.Run(c.name, func(t *testing.T) {
			covered[c.op] = true
			m := oneOpModule(t, c)
			f := m.Funcs[0]
			for trial := 0; trial < 2; trial++ {
				args := randomArgs(f, c.positive, uint64(i*10+trial))
				want, err := graphir.Interpret(f, args)
				require.NoError(t, err)
				lm := oneOpModule(t, c)
				runPipeline(t, lm, graph.LegalizeToHLOPassName)
				checkLowered(t, lm, &caseLoc, c.name)
				got, err := graphir.Interpret(lm.Funcs[0], args)
				require.NoError(t, err, "interpreting\n%s", graphir.Print(lm))
				requireClose(t, want, got, c.name)
				// Fusion of the legalized op keeps the numbers too.
				fm := oneOpModule(t, c)
				runPipeline(t, fm, graph.LegalizeToHLOPassName+",fuse")
				checkLowered(t, fm, nil, c.name)
				got, err = graphir.Interpret(fm.Funcs[0], args)
				require.NoError(t, err, "interpreting\n%s", graphir.Print(fm))
				requireClose(t, want, got, c.name+" (fused)")
			}
		})
	}
	// Every registered graph op has a rule and at least one case.
	for _, c := range elementwiseExtCases() {
		covered[c.op] = true
	}
	for _, c := range append(sliceCases(), reduceCases()...) {
		covered[c.op] = true
	}
	for _, c := range gatherCases() {
		covered[c.op] = true
	}
	for _, c := range scatterCases() {
		covered[c.op] = true
	}
	for _, c := range rnnCases() {
		covered[c.op] = true
	}
	if len(einsumCases()) > 0 {
		covered[graph.EinsumOp] = true
	}
	for _, name := range graphir.RegisteredOps() {
		if !strings.HasPrefix(name, "graph.") || name == graph.NoneOp {
			continue
		}
		assert.True(t, graph.Legalizes(name), "no legalization rule for %s", name)
		assert.True(t, covered[name], "no agreement case for %s", name)
	}
}

// modelBuilder assembles a multi-op graph function with random weights.
type modelBuilder struct {
	t   *testing.T
	f   *graphir.Func
	r   *rand.Rand
	loc int
}

func newModel(t *testing.T, input ...int64) (*modelBuilder, *graphir.Value) {
	f := graphir.NewFunc("main", &graphir.FunctionType{Inputs: []graphir.Type{graphir.NewTensor(graphir.F32, input...)}}, graphir.Location{File: "model.mlir", Line: 1, Col: 1})
	return &modelBuilder{t: t, f: f, r: rand.New(rand.NewPCG(1, 2))}, f.Args()[0]
}

func (mb *modelBuilder) op(name string, a graphir.DictAttr, operands ...*graphir.Value) *graphir.Value {
	mb.loc++
	op, err := graphir.Build(name, operands, a, graphir.Location{File: "model.mlir", Line: mb.loc + 1, Col: 5})
	require.NoError(mb.t, err)
	mb.f.Entry().Append(op)
	return op.Results[0]
}

// weight makes a graph.constant with values uniform in ±scale.
func (mb *modelBuilder) weight(scale float64, shape ...int64) *graphir.Value {
	t := graphir.NewTensor(graphir.F32, shape...)
	vs := make([]float64, t.NumElements())
	for i := range vs {
		vs[i] = graphir.Float32Round(scale * (2*mb.r.Float64() - 1))
	}
	return mb.op("graph.constant", attrs("value", &graphir.DenseElementsAttr{Type: t, Floats: vs}))
}

func (mb *modelBuilder) finish(out *graphir.Value) *graphir.Module {
	mb.f.Entry().Append(graphir.NewOp(graphir.ReturnOpName, []*graphir.Value{out}, nil, nil, mb.f.Loc))
	mb.f.Type.Results = []graphir.Type{out.Type}
	m := &graphir.Module{}
	m.AddFunc(mb.f)
	require.NoError(mb.t, graphir.Verify(m))
	return m
}

func lenetModel(t *testing.T) *graphir.Module {
	mb, x := newModel(t, 2, 1, 16, 16)
	c1 := mb.op("graph.conv2d", attrs("pads", s(2, 2, 2, 2)), x, mb.weight(0.4, 6, 1, 5, 5), mb.weight(0.1, 6))
	bn := mb.op("graph.batch_norm", nil, c1, mb.weight(1, 6), mb.weight(0.1, 6), mb.weight(0.1, 6),
		mb.op("graph.add", nil, mb.weight(0.4, 6), mb.weight(1, 6)))
	p1 := mb.op("graph.max_pool2d", attrs("kernel", s(2, 2), "strides", s(2, 2)), mb.op("graph.relu", nil, bn))
	c2 := mb.op("graph.conv2d", nil, p1, mb.weight(0.2, 16, 6, 5, 5), mb.weight(0.1, 16))
	p2 := mb.op("graph.avg_pool2d", attrs("kernel", s(2, 2), "strides", s(2, 2), "ceil_mode", true), mb.op("graph.tanh", nil, c2))
	fl := mb.op("graph.flatten", nil, p2)
	h := mb.op("graph.relu", nil, mb.op("graph.gemm", attrs("transB", true), fl, mb.weight(0.2, 30, 64), mb.weight(0.1, 30)))
	o := mb.op("graph.gemm", nil, h, mb.weight(0.3, 30, 10), mb.weight(0.1, 10))
	return mb.finish(mb.op("graph.softmax", nil, o))
}

func mlpModel(t *testing.T) *graphir.Module {
	mb, x := newModel(t, 3, 1, 8, 8)
	fl := mb.op("graph.flatten", nil, x)
	h := mb.op("graph.relu", nil, mb.op("graph.gemm", attrs("transB", true), fl, mb.weight(0.2, 32, 64), mb.weight(0.1, 32)))
	h2 := mb.op("graph.sigmoid", nil, mb.op("graph.add", nil, mb.op("graph.matmul", nil, h, mb.weight(0.3, 32, 16)), mb.weight(0.1, 16)))
	o := mb.op("graph.gemm", attrs("alpha", 0.5, "beta", 2.0), h2, mb.weight(0.3, 16, 10), mb.weight(0.1, 1, 10))
	return mb.finish(o)
}

func TestLegalizeModels(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func(*testing.T) *graphir.Module
	}{{"lenet", lenetModel}, {"mlp", mlpModel}} {
		for _, pipeline := range []string{"legalize-to-hlo", "legalize-to-hlo,fuse"} {
			t.Run(tc.name+"/"+pipeline, func(t *testing.T) {
				ref := tc.build(t)
				args := randomArgs(ref.Funcs[0], nil, 42)
				want, err := graphir.Interpret(ref.Funcs[0], args)
				require.NoError(t, err)
				m := tc.build(t)
				runPipeline(t, m, pipeline)
				checkLowered(t, m, nil, tc.name)
				got, err := graphir.Interpret(m.Funcs[0], args)
				require.NoError(t, err, "interpreting\n%s", graphir.Print(m))
				requireClose(t, want, got, tc.name+" "+pipeline)
				if strings.HasSuffix(pipeline, "fuse") {
					n := 0
					m.Walk(func(op *graphir.Op) {
						if op.Name == "hlo.fusion" {
							n++
						}
					})
					assert.Positive(t, n, "fuse formed no hlo.fusion")
				}
			})
		}
	}
}

// TestLegalizeLocations: each hlo op gets the location of the graph op it came from.
func TestLegalizeLocations(t *testing.T) {
	m := mlpModel(t)
	locs := map[graphir.Location]string{}
	m.Walk(func(op *graphir.Op) { locs[op.Loc] = op.Name })
	require.NoError(t, legalizeModule(m))
	byGraphOp := map[string]map[string]bool{}
	m.Walk(func(op *graphir.Op) {
		src, ok := locs[op.Loc]
		require.True(t, ok, "%s has a location %s no graph op had", op.Name, op.Loc)
		if byGraphOp[src] == nil {
			byGraphOp[src] = map[string]bool{}
		}
		byGraphOp[src][op.Name] = true
	})
	assert.True(t, byGraphOp["graph.gemm"]["hlo.dot_general"])
	assert.True(t, byGraphOp["graph.relu"]["hlo.maximum"])
	assert.True(t, byGraphOp["graph.sigmoid"]["hlo.logistic"])
	assert.True(t, byGraphOp["graph.add"]["hlo.broadcast_in_dim"])
	assert.False(t, byGraphOp["graph.matmul"]["hlo.add"])
}

// TestLegalizeShapesOfIR pins the structure of a few lowerings.
func TestLegalizeShapesOfIR(t *testing.T) {
	lower := func(c agreeCase) []*graphir.Op {
		m := oneOpModule(t, c)
		require.NoError(t, legalizeModule(m))
		require.NoError(t, graphir.Verify(m))
		var ops []*graphir.Op
		for _, op := range m.Funcs[0].Entry().Ops() {
			if op.Name != graphir.ReturnOpName {
				ops = append(ops, op)
			}
		}
		return ops
	}
	names := func(ops []*graphir.Op) []string {
		var out []string
		for _, op := range ops {
			out = append(out, op.Name)
		}
		return out
	}

	ops := lower(agreeCase{op: "graph.add", inputs: shapes(s(2, 3), s(3))})
	require.Equal(t, []string{"hlo.broadcast_in_dim", "hlo.add"}, names(ops))
	assert.Equal(t, []int64{1}, must(ops[0].Ints("broadcast_dimensions")))

	ops = lower(agreeCase{op: "graph.mul", inputs: shapes(s(4, 1, 5), s(3, 1))})
	require.Equal(t, []string{"hlo.broadcast_in_dim", "hlo.broadcast_in_dim", "hlo.multiply"}, names(ops))
	assert.Equal(t, []int64{0, 1, 2}, must(ops[0].Ints("broadcast_dimensions")))
	assert.Equal(t, []int64{1, 2}, must(ops[1].Ints("broadcast_dimensions")))

	ops = lower(agreeCase{op: "graph.gemm", inputs: shapes(s(4, 3), s(5, 4), s(5)), attrs: attrs("transA", true, "transB", true)})
	require.Equal(t, []string{"hlo.dot_general", "hlo.broadcast_in_dim", "hlo.add"}, names(ops))
	assert.Equal(t, []int64{0}, must(ops[0].Ints("lhs_contracting_dimensions")))
	assert.Equal(t, []int64{1}, must(ops[0].Ints("rhs_contracting_dimensions")))

	ops = lower(agreeCase{op: "graph.matmul", inputs: shapes(s(3, 4), s(2, 4, 5))})
	require.Equal(t, []string{"hlo.broadcast_in_dim", "hlo.dot_general"}, names(ops))
	assert.Equal(t, []int64{0}, must(ops[1].Ints("lhs_batching_dimensions")))

	ops = lower(agreeCase{op: "graph.conv2d", inputs: shapes(s(1, 2, 7, 8), s(3, 2, 3, 2), s(3)),
		attrs: attrs("strides", s(2, 3), "pads", s(0, 1, 2, 1), "dilations", s(1, 2))})
	require.Equal(t, []string{"hlo.convolution", "hlo.broadcast_in_dim", "hlo.add"}, names(ops))
	assert.Equal(t, "[[0, 2], [1, 1]]", graphir.FormatAttr(ops[0].Attr("padding")))
	assert.Equal(t, []int64{1, 2}, must(ops[0].Ints("rhs_dilation")))

	// ceil_mode raises the high padding; the count table is not uniform.
	ops = lower(agreeCase{op: "graph.avg_pool2d", inputs: shapes(s(1, 1, 7, 7)),
		attrs: attrs("kernel", s(2, 2), "strides", s(2, 2), "ceil_mode", true, "count_include_pad", true)})
	require.Equal(t, []string{"hlo.constant", "hlo.reduce_window", "hlo.constant", "hlo.broadcast_in_dim", "hlo.divide"}, names(ops))
	assert.Equal(t, "[[0, 0], [0, 0], [0, 1], [0, 1]]", graphir.FormatAttr(ops[1].Attr("padding")))
	counts := ops[2].Attr("value").(*graphir.DenseElementsAttr)
	assert.Equal(t, []int64{4, 4}, counts.Type.Shape)
	assert.Equal(t, 4.0, counts.At(0))
	assert.Equal(t, 2.0, counts.At(3))  // last column: one real column
	assert.Equal(t, 1.0, counts.At(15)) // corner

	ops = lower(agreeCase{op: "graph.max_pool2d", inputs: shapes(s(1, 1, 6, 6)), attrs: attrs("kernel", s(2, 2), "strides", s(2, 2))})
	require.Equal(t, []string{"hlo.constant", "hlo.reduce_window"}, names(ops))
	init := ops[0].Attr("value").(*graphir.DenseElementsAttr)
	assert.Equal(t, 0, init.Type.Rank())
	assert.True(t, math.IsInf(init.At(0), -1))
	body := ops[1].Regions[0].Entry().Ops()
	assert.Equal(t, "hlo.maximum", body[0].Name)

	ops = lower(agreeCase{op: "graph.concat", inputs: shapes(s(2, 3), s(2, 2)), attrs: attrs("axis", -1)})
	assert.Equal(t, int64(1), must(ops[0].Int("dimension")))
}

// TestLegalizeDiagnostics: bad input yields a located diagnostic naming
// the op (the op's own verifier runs before its rule), never a panic, and
// a failed rule leaves the function unchanged.
func TestLegalizeDiagnostics(t *testing.T) {
	f32 := func(sh ...int64) graphir.Type { return graphir.NewTensor(graphir.F32, sh...) }
	bad := []struct {
		name   string
		op     string
		inputs []graphir.Type
		result graphir.Type
		attrs  graphir.DictAttr
		want   string
	}{
		{"unknown op", "graph.frobnicate", []graphir.Type{f32(2)}, f32(2), nil, "no rule"},
		{"conv strides length", "graph.conv2d", []graphir.Type{f32(1, 1, 4, 4), f32(1, 1, 3, 3)}, f32(1, 1, 2, 2), attrs("strides", s(1, 1, 1)), "'strides' must have 2 elements"},
		{"conv groups zero", "graph.conv2d", []graphir.Type{f32(1, 1, 4, 4), f32(1, 1, 3, 3)}, f32(1, 1, 2, 2), attrs("groups", 0), "groups 0 must be at least 1"},
		{"conv rank", "graph.conv2d", []graphir.Type{f32(1, 4, 4), f32(1, 1, 3, 3)}, f32(1, 1, 2, 2), nil, "input must be rank 4"},
		{"conv wrong result", "graph.conv2d", []graphir.Type{f32(1, 1, 4, 4), f32(1, 1, 3, 3)}, f32(1, 1, 3, 3), nil, "graph.conv2d"},
		{"pool no kernel", "graph.max_pool2d", []graphir.Type{f32(1, 1, 4, 4)}, f32(1, 1, 2, 2), nil, "requires attribute 'kernel'"},
		{"pool zero stride", "graph.avg_pool2d", []graphir.Type{f32(1, 1, 4, 4)}, f32(1, 1, 2, 2), attrs("kernel", s(2, 2), "strides", s(0, 1)), "strides [0, 1] must be at least 1"},
		{"pool result size", "graph.max_pool2d", []graphir.Type{f32(1, 1, 4, 4)}, f32(1, 1, 2, 2), attrs("kernel", s(2, 2)), "inferred result types (tensor<1x1x3x3xf32>) do not match"},
		{"pool kernel kind", "graph.max_pool2d", []graphir.Type{f32(1, 1, 4, 4)}, f32(1, 1, 2, 2), attrs("kernel", 2), "must be an integer array"},
		{"gemm rank", "graph.gemm", []graphir.Type{f32(2, 3, 4), f32(4, 5)}, f32(3, 5), nil, "A and B must be rank 2"},
		{"gemm inner", "graph.gemm", []graphir.Type{f32(3, 4), f32(5, 5)}, f32(3, 5), nil, "contracting dimensions differ"},
		{"gemm C", "graph.gemm", []graphir.Type{f32(3, 4), f32(4, 5), f32(2, 5)}, f32(3, 5), nil, "broadcastable"},
		{"matmul rank0", "graph.matmul", []graphir.Type{f32(), f32(4)}, f32(4), nil, "rank at least 1"},
		{"matmul batch", "graph.matmul", []graphir.Type{f32(2, 3, 4), f32(3, 4, 5)}, f32(2, 3, 5), nil, "not broadcast-compatible"},
		{"add shapes", "graph.add", []graphir.Type{f32(2, 3), f32(4)}, f32(2, 3), nil, "not broadcast-compatible"},
		{"softmax axis", "graph.softmax", []graphir.Type{f32(2, 3)}, f32(2, 3), attrs("axis", 2), "out of range"},
		{"concat axis", "graph.concat", []graphir.Type{f32(2, 3)}, f32(2, 3), attrs("axis", -3), "out of range"},
		{"concat no axis", "graph.concat", []graphir.Type{f32(2, 3)}, f32(2, 3), nil, "requires attribute 'axis'"},
		{"transpose perm", "graph.transpose", []graphir.Type{f32(2, 3)}, f32(3, 2), attrs("perm", s(0, 0)), "not a permutation"},
		{"reshape count", "graph.reshape", []graphir.Type{f32(2, 3)}, f32(5), attrs("shape", s(5)), "has 5 elements, input [2, 3] has 6"},
		{"batch_norm params", "graph.batch_norm", []graphir.Type{f32(1, 2, 2), f32(3), f32(2), f32(2), f32(2)}, f32(1, 2, 2), nil, "scale must have shape [2]"},
		{"global pool result", "graph.global_avg_pool", []graphir.Type{f32(1, 2, 3, 3)}, f32(1, 2, 3, 1), nil, "inferred result types (tensor<1x2x1x1xf32>)"},
		{"constant no value", "graph.constant", nil, f32(2), nil, "requires attribute 'value'"},
		{"constant type", "graph.constant", nil, f32(3), attrs("value", &graphir.DenseElementsAttr{Type: graphir.NewTensor(graphir.F32, 2), Floats: []float64{1, 2}}), "inferred result types (tensor<2xf32>) do not match the written types (tensor<3xf32>)"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			loc := graphir.Location{File: "bad.mlir", Line: 4, Col: 9}
			f := graphir.NewFunc("main", &graphir.FunctionType{Inputs: c.inputs, Results: []graphir.Type{c.result}}, loc)
			op := graphir.NewOp(c.op, f.Args(), []graphir.Type{c.result}, c.attrs, loc)
			f.Entry().Append(op)
			f.Entry().Append(graphir.NewOp(graphir.ReturnOpName, op.Results, nil, nil, loc))
			before := graphir.PrintWith(&graphir.Module{Funcs: []*graphir.Func{f}}, graphir.PrintOptions{Generic: true})
			var err error
			require.NotPanics(t, func() { err = graph.LegalizeFunc(f) })
			require.Error(t, err)
			d, ok := err.(*graphir.Diagnostic)
			require.True(t, ok, "want a *Diagnostic, got %T: %v", err, err)
			assert.Equal(t, loc, d.Loc)
			assert.Contains(t, d.Message, "'"+c.op+"' op")
			assert.Contains(t, d.Message, c.want)
			after := graphir.PrintWith(&graphir.Module{Funcs: []*graphir.Func{f}}, graphir.PrintOptions{Generic: true})
			assert.Equal(t, before, after, "a failed legalization must leave the IR unchanged")
		})
	}
}

// TestLegalizeRemainingOp: the pass names the first graph op it cannot remove.
func TestLegalizeRemainingOp(t *testing.T) {
	m := mlpModel(t)
	f := m.Funcs[0]
	// An unknown graph op after the model stops the pass at that op.
	ret := f.Entry().Last()
	loc := graphir.Location{File: "model.mlir", Line: 99, Col: 3}
	odd := graphir.NewOp("graph.mystery", []*graphir.Value{ret.Operand(0)}, []graphir.Type{ret.Operand(0).Type}, nil, loc)
	f.Entry().InsertBefore(ret, odd)
	ret.SetOperand(0, odd.Results[0])
	err := graphir.RunPipeline(m, graph.LegalizeToHLOPassName)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "model.mlir:99:3: error: 'graph.mystery' op failed to legalize to hlo")
}

// TestLegalizeExampleMLP: the README's first command (legalize-to-hlo, fuse)
// on examples/mlp_small.mlir keeps the model's numbers and forms the two
// output fusions.
func TestLegalizeExampleMLP(t *testing.T) {
	src, err := os.ReadFile("../examples/mlp_small.mlir")
	require.NoError(t, err)
	ref, err := graphir.Parse("mlp_small.mlir", src)
	require.NoError(t, err)
	args := randomArgs(ref.Funcs[0], nil, 3)
	want, err := graphir.Interpret(ref.Funcs[0], args)
	require.NoError(t, err)
	m, err := graphir.Parse("mlp_small.mlir", src)
	require.NoError(t, err)
	runPipeline(t, m, "legalize-to-hlo,fuse")
	checkLowered(t, m, nil, "mlp_small")
	got, err := graphir.Interpret(m.Funcs[0], args)
	require.NoError(t, err)
	requireClose(t, want, got, "mlp_small")
	var kinds []string
	for _, op := range m.Funcs[0].Entry().Ops() {
		if op.Name == "hlo.fusion" {
			kinds = append(kinds, must(op.Str("kind")))
		}
	}
	assert.Equal(t, []string{"output", "output"}, kinds)
}

// TestLegalizeRandomWindows: pools and convolutions on random geometry
// (odd sizes, non-dividing strides, asymmetric pads, dilation, ceil mode)
// agree with the graph evaluators.
func TestLegalizeRandomWindows(t *testing.T) {
	r := rand.New(rand.NewPCG(99, 1))
	n := func(lo, hi int) int64 { return int64(lo + r.IntN(hi-lo+1)) }
	var cs []agreeCase
	for len(cs) < 80 {
		kh, kw := n(1, 4), n(1, 4)
		x := s(n(1, 2), n(1, 3), n(int(kh), 11), n(int(kw), 11))
		pads := s(n(0, int(kh)-1), n(0, int(kw)-1), n(0, int(kh)-1), n(0, int(kw)-1))
		a := attrs("kernel", s(kh, kw), "strides", s(n(1, 3), n(1, 3)), "pads", pads, "ceil_mode", r.IntN(2) == 0)
		switch len(cs) % 3 {
		case 0:
			a = a.Set("dilations", graphir.I64Array(n(1, 2), n(1, 2)))
			cs = append(cs, agreeCase{name: fmt.Sprintf("max_pool2d/%d", len(cs)), op: "graph.max_pool2d", inputs: shapes(x), attrs: a})
		case 1:
			a = a.Set("count_include_pad", graphir.BoolAttr(r.IntN(2) == 0))
			cs = append(cs, agreeCase{name: fmt.Sprintf("avg_pool2d/%d", len(cs)), op: "graph.avg_pool2d", inputs: shapes(x), attrs: a})
		case 2:
			groups := n(1, 3)
			x[1] = groups * n(1, 2)
			w := s(groups*n(1, 2), x[1]/groups, kh, kw)
			ca := attrs("strides", s(n(1, 3), n(1, 3)), "pads", pads, "dilations", s(n(1, 2), n(1, 2)), "groups", int(groups))
			cs = append(cs, agreeCase{name: fmt.Sprintf("conv2d/%d", len(cs)), op: "graph.conv2d", inputs: shapes(x, w, s(w[0])), attrs: ca})
		}
		// Drop geometry the graph dialect rejects (a dilated kernel larger
		// than the padded input, or pads not smaller than the kernel).
		if _, err := graphir.Build(cs[len(cs)-1].op, fakeArgs(cs[len(cs)-1].inputs), cs[len(cs)-1].attrs, caseLoc); err != nil {
			cs = cs[:len(cs)-1]
		}
	}
	for i, c := range cs {
		t.Run(c.name, func(t *testing.T) {
			ref := oneOpModule(t, c)
			args := randomArgs(ref.Funcs[0], nil, uint64(1000+i))
			want, err := graphir.Interpret(ref.Funcs[0], args)
			require.NoError(t, err)
			m := oneOpModule(t, c)
			runPipeline(t, m, graph.LegalizeToHLOPassName)
			got, err := graphir.Interpret(m.Funcs[0], args)
			require.NoError(t, err)
			requireClose(t, want, got, fmt.Sprintf("%s %s on %v", c.op, graphir.FormatAttr(c.attrs), c.inputs))
		})
	}
}

// fakeArgs returns detached f32 values of the given shapes, for type inference.
func fakeArgs(ss [][]int64) []*graphir.Value {
	b := graphir.NewBlock()
	for _, sh := range ss {
		b.AddArg(graphir.NewTensor(graphir.F32, sh...), graphir.Location{})
	}
	return b.Args
}
