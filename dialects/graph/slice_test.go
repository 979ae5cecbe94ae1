package graph

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tessera-ml/tessera/graphir"
)

// A minimal protobuf reader for the ONNX backend node tests of Debian's
// libonnx-testdata: the node of model.onnx (op type and attributes) and
// the TensorProtos of test_data_set_0.

const onnxNodeTests = "/usr/share/libonnx-testdata/data/node"

type pbField struct {
	num   int
	wire  int
	value uint64 // varint, fixed32, fixed64
	bytes []byte // length-delimited
}

func pbFields(t *testing.T, b []byte) []pbField {
	t.Helper()
	var out []pbField
	for len(b) > 0 {
		key, n := binary.Uvarint(b)
		require.Positive(t, n, "bad protobuf key")
		b = b[n:]
		f := pbField{num: int(key >> 3), wire: int(key & 7)}
		switch f.wire {
		case 0:
			f.value, n = binary.Uvarint(b)
			require.Positive(t, n)
			b = b[n:]
		case 1:
			f.value = binary.LittleEndian.Uint64(b)
			b = b[8:]
		case 2:
			l, n := binary.Uvarint(b)
			require.Positive(t, n)
			f.bytes = b[n : n+int(l)]
			b = b[n+int(l):]
		case 5:
			f.value = uint64(binary.LittleEndian.Uint32(b))
			b = b[4:]
		default:
			require.Failf(t, "protobuf", "unsupported wire type %d", f.wire)
		}
		out = append(out, f)
	}
	return out
}

// pbInts reads a repeated integer field, packed or not.
func pbInts(t *testing.T, f pbField) []int64 {
	if f.wire == 0 {
		return []int64{int64(f.value)}
	}
	var out []int64
	b := f.bytes
	for len(b) > 0 {
		v, n := binary.Uvarint(b)
		require.Positive(t, n)
		out = append(out, int64(v))
		b = b[n:]
	}
	return out
}

// onnxTensor decodes a TensorProto (float, double, int32, int64) into
// its shape, values and element type.
func onnxTensor(t *testing.T, b []byte) ([]int64, []float64, graphir.DType) {
	var dims []int64
	var vals []float64
	var raw []byte
	dtype := 0
	for _, f := range pbFields(t, b) {
		switch f.num {
		case 1:
			dims = append(dims, pbInts(t, f)...)
		case 2:
			dtype = int(f.value)
		case 4: // float_data
			if f.wire == 5 {
				vals = append(vals, float64(math.Float32frombits(uint32(f.value))))
			} else {
				for i := 0; i+4 <= len(f.bytes); i += 4 {
					vals = append(vals, float64(math.Float32frombits(binary.LittleEndian.Uint32(f.bytes[i:]))))
				}
			}
		case 5, 7: // int32_data, int64_data
			for _, v := range pbInts(t, f) {
				vals = append(vals, float64(v))
			}
		case 10: // double_data
			if f.wire == 1 {
				vals = append(vals, math.Float64frombits(f.value))
			} else {
				for i := 0; i+8 <= len(f.bytes); i += 8 {
					vals = append(vals, math.Float64frombits(binary.LittleEndian.Uint64(f.bytes[i:])))
				}
			}
		case 9:
			raw = f.bytes
		}
	}
	if raw != nil {
		switch dtype {
		case 1:
			for i := 0; i+4 <= len(raw); i += 4 {
				vals = append(vals, float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[i:]))))
			}
		case 6:
			for i := 0; i+4 <= len(raw); i += 4 {
				vals = append(vals, float64(int32(binary.LittleEndian.Uint32(raw[i:]))))
			}
		case 7:
			for i := 0; i+8 <= len(raw); i += 8 {
				vals = append(vals, float64(int64(binary.LittleEndian.Uint64(raw[i:]))))
			}
		case 11:
			for i := 0; i+8 <= len(raw); i += 8 {
				vals = append(vals, math.Float64frombits(binary.LittleEndian.Uint64(raw[i:])))
			}
		default:
			require.Failf(t, "tensor", "unsupported raw data type %d", dtype)
		}
	}
	dt := map[int]graphir.DType{1: graphir.F32, 6: graphir.I32, 7: graphir.I64, 11: graphir.F64}[dtype]
	require.NotZero(t, dtype, "tensor without data type")
	return dims, vals, dt
}

type onnxNode struct {
	opType string
	ints   map[string][]int64
	strs   map[string]string
	ins    [][]float64
	inDims [][]int64
	inType []graphir.DType
	outs   [][]float64
	outDim [][]int64
}

// readOnnxNodeTest reads the single node and test_data_set_0 of a test.
func readOnnxNodeTest(t *testing.T, name string) *onnxNode {
	dir := filepath.Join(onnxNodeTests, name)
	model, err := os.ReadFile(filepath.Join(dir, "model.onnx"))
	require.NoError(t, err)
	n := &onnxNode{ints: map[string][]int64{}, strs: map[string]string{}}
	for _, f := range pbFields(t, model) {
		if f.num != 7 { // ModelProto.graph
			continue
		}
		for _, g := range pbFields(t, f.bytes) {
			if g.num != 1 { // GraphProto.node
				continue
			}
			for _, nf := range pbFields(t, g.bytes) {
				switch nf.num {
				case 4:
					n.opType = string(nf.bytes)
				case 5: // AttributeProto
					var an string
					var ints []int64
					var s *string
					for _, af := range pbFields(t, nf.bytes) {
						switch af.num {
						case 1:
							an = string(af.bytes)
						case 3:
							ints = append(ints, int64(af.value))
						case 8:
							ints = append(ints, pbInts(t, af)...)
						case 4:
							v := string(af.bytes)
							s = &v
						}
					}
					if s != nil {
						n.strs[an] = *s
					} else {
						n.ints[an] = ints
					}
				}
			}
		}
	}
	for _, kind := range []string{"input", "output"} {
		for i := 0; ; i++ {
			b, err := os.ReadFile(filepath.Join(dir, "test_data_set_0", fmt.Sprintf("%s_%d.pb", kind, i)))
			if err != nil {
				break
			}
			d, v, dt := onnxTensor(t, b)
			if kind == "input" {
				n.ins, n.inDims, n.inType = append(n.ins, v), append(n.inDims, d), append(n.inType, dt)
			} else {
				n.outs, n.outDim = append(n.outs, v), append(n.outDim, d)
			}
		}
	}
	return n
}

func toInts(v []float64) []int64 {
	out := make([]int64, len(v))
	for i, x := range v {
		out[i] = int64(x)
	}
	return out
}

// onnxToGraph maps an ONNX node test onto a graph op name and attributes,
// or "" when the test uses a feature outside the graph op (reported by name).
func onnxToGraph(n *onnxNode) (string, graphir.DictAttr) {
	a := graphir.DictAttr{}
	reduces := map[string]string{"ReduceSum": ReduceSumOp, "ReduceMean": ReduceMeanOp, "ReduceMax": ReduceMaxOp,
		"ReduceMin": ReduceMinOp, "ReduceProd": ReduceProdOp, "ReduceL2": ReduceL2Op, "ReduceLogSumExp": ReduceLogSumExpOp}
	if op, ok := reduces[n.opType]; ok {
		if v := n.ints["noop_with_empty_axes"]; len(v) == 1 {
			a = a.Set("noop_with_empty_axes", graphir.BoolAttr(v[0] != 0))
		}
		if v, ok := n.ints["keepdims"]; ok {
			a = a.Set("keepdims", graphir.BoolAttr(v[0] != 0))
		}
		if v, ok := n.ints["axes"]; ok {
			a = a.Set("axes", graphir.I64Array(v...))
		}
		if len(n.ins) > 1 {
			a = a.Set("axes", graphir.I64Array(toInts(n.ins[1])...))
		}
		return op, a
	}
	switch n.opType {
	case "Split":
		if v, ok := n.ints["axis"]; ok {
			a = a.Set("axis", graphir.IntAttr(v[0]))
		}
		if v, ok := n.ints["split"]; ok {
			a = a.Set("split", graphir.I64Array(v...))
		}
		if len(n.ins) > 1 {
			a = a.Set("split", graphir.I64Array(toInts(n.ins[1])...))
		}
		if v, ok := n.ints["num_outputs"]; ok {
			a = a.Set("num_outputs", graphir.IntAttr(v[0]))
		} else if a.Get("split") == nil {
			// Older opsets: equal parts, one per node output.
			a = a.Set("num_outputs", graphir.IntAttr(int64(len(n.outs))))
		}
		return SplitOp, a
	case "Slice":
		for i, k := range []string{"", "starts", "ends", "axes", "steps"} {
			if i > 0 && i < len(n.ins) {
				a = a.Set(k, graphir.I64Array(toInts(n.ins[i])...))
			}
		}
		return SliceOp, a
	case "Gather":
		if v, ok := n.ints["axis"]; ok {
			a = a.Set("axis", graphir.IntAttr(v[0]))
		}
		a = a.Set("indices", &graphir.DenseElementsAttr{Type: graphir.NewTensor(graphir.I64, n.inDims[1]...), Ints: toInts(n.ins[1])})
		return GatherOp, a
	case "Pad":
		if len(n.ins) > 3 {
			return "", nil
		}
		a = a.Set("pads", graphir.I64Array(toInts(n.ins[1])...))
		if m, ok := n.strs["mode"]; ok {
			a = a.Set("mode", graphir.StringAttr(m))
		}
		if len(n.ins) > 2 {
			a = a.Set("value", graphir.F32Attr(n.ins[2][0]))
		}
		return PadOp, a
	case "Expand":
		return ExpandOp, a.Set("shape", graphir.I64Array(toInts(n.ins[1])...))
	case "Tile":
		return TileOp, a.Set("repeats", graphir.I64Array(toInts(n.ins[1])...))
	case "LogSoftmax":
		if v, ok := n.ints["axis"]; ok {
			a = a.Set("axis", graphir.IntAttr(v[0]))
		}
		return LogSoftmaxOp, a
	}
	return "", nil
}

// TestStructuralOpsONNXBackendTests evaluates every ONNX backend node test
// of the structural ops (reductions, split, slice, gather, pad, expand,
// tile, log_softmax) and compares with the expected outputs. Tests that
// use a feature outside the graph ops are listed as skipped by name.
func TestStructuralOpsONNXBackendTests(t *testing.T) {
	if _, err := os.Stat(onnxNodeTests); err != nil {
		t.Skip("libonnx-testdata is not installed")
	}
	entries, err := os.ReadDir(onnxNodeTests)
	require.NoError(t, err)
	prefixes := []string{"test_reduce_sum_", "test_reduce_mean_", "test_reduce_max_", "test_reduce_min_", "test_reduce_prod_",
		"test_reduce_l2_", "test_reduce_log_sum_exp_", "test_split_", "test_slice", "test_gather_0", "test_gather_1",
		"test_gather_2d", "test_gather_negative", "test_constant_pad", "test_edge_pad", "test_reflect_pad",
		"test_expand_", "test_tile", "test_logsoftmax_"}
	var names, skipped []string
	for _, e := range entries {
		for _, p := range prefixes {
			if strings.HasPrefix(e.Name(), p) && !strings.HasSuffix(e.Name(), "_expanded") && !strings.Contains(e.Name(), "sum_square") {
				names = append(names, e.Name())
				break
			}
		}
	}
	sort.Strings(names)
	require.GreaterOrEqual(t, len(names), 80)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			n := readOnnxNodeTest(t, name)
			opName, a := onnxToGraph(n)
			if opName == "" {
				skipped = append(skipped, name)
				t.Skipf("%s (%s) uses a feature outside the graph op", name, n.opType)
			}
			x := &graphir.Tensor{Type: graphir.NewTensor(n.inType[0], n.inDims[0]...), Data: n.ins[0]}
			b := graphir.NewBlock(x.Type)
			op, err := graphir.Build(opName, b.Args, a, graphir.Location{})
			require.NoError(t, err)
			require.Len(t, op.Results, len(n.outs))
			outs, err := op.Def.Eval(op, []*graphir.Tensor{x})
			require.NoError(t, err)
			for i, o := range outs {
				require.Equal(t, append([]int64{}, n.outDim[i]...), append([]int64{}, o.Type.Shape...), "output %d shape", i)
				requireClose(t, n.outs[i], o.Data, 2e-6)
			}
		})
	}
	t.Logf("skipped: %v", skipped)
	require.Empty(t, skipped)
}

func iotaTensor(shape ...int64) *graphir.Tensor {
	t := graphir.NewZeroTensor(tt(shape...))
	for i := range t.Data {
		t.Data[i] = float64(i)
	}
	return t
}

func i64Dense(shape []int64, vs ...int64) *graphir.DenseElementsAttr {
	return &graphir.DenseElementsAttr{Type: graphir.NewTensor(graphir.I64, shape...), Ints: append([]int64{}, vs...)}
}

func TestSliceClamping(t *testing.T) {
	const big = int64(math.MaxInt64)
	for _, c := range []struct{ s, e, st, d, start, size int64 }{
		{1, 3, 1, 5, 1, 2},
		{-2, 100, 1, 5, 3, 2},
		{-100, -1, 1, 5, 0, 4},
		{7, 10, 1, 5, 0, 0},
		{3, 1, 1, 5, 0, 0},
		{0, 5, 2, 5, 0, 3},
		{-1, -big, -1, 5, 4, 5},
		{big, -big, -2, 5, 4, 3},
		{4, 0, -3, 5, 4, 2},
		{-1, -6, -1, 5, 4, 5},
		{1, 3, -1, 5, 0, 0},
		{0, -1, -1, 0, 0, 0},
		{2, 2, 1, 5, 0, 0},
	} {
		start, _, size := clampSlice(c.s, c.e, c.st, c.d)
		assert.Equal(t, []int64{c.start, c.size}, []int64{start, size}, "start %d end %d step %d dim %d", c.s, c.e, c.st, c.d)
	}
}

func TestStructuralEval(t *testing.T) {
	x := tensor([]int64{2, 4}, 1, 2, 3, 4, 5, 6, 7, 8)
	g := tensor([]int64{3, 2}, 1, 1.2, 2.3, 3.4, 4.5, 5.7)
	g3 := tensor([]int64{3, 3}, 1, 1.2, 1.9, 2.3, 3.4, 3.9, 4.5, 5.7, 5.9)
	v := iotaTensor(10)
	reflect, edge := graphir.StringAttr("reflect"), graphir.StringAttr("edge")
	runEvalCases(t, []evalCase{
		// ONNX Slice documentation examples and negative steps.
		{"slice doc1", SliceOp, x, attrs("axes", []int64{0, 1}, "starts", []int64{1, 0}, "ends", []int64{2, 3}, "steps", []int64{1, 2}), []int64{1, 2}, []float64{5, 7}},
		{"slice doc2", SliceOp, x, attrs("starts", []int64{0, 1}, "ends", []int64{-1, 1000}), []int64{1, 3}, []float64{2, 3, 4}},
		{"slice step -3", SliceOp, v, attrs("starts", []int64{-1}, "ends", []int64{-100}, "steps", []int64{-3}), []int64{4}, []float64{9, 6, 3, 0}},
		{"slice start clamped reversed", SliceOp, v, attrs("starts", []int64{20}, "ends", []int64{6}, "steps", []int64{-1}), []int64{3}, []float64{9, 8, 7}},
		{"slice empty", SliceOp, v, attrs("starts", []int64{5}, "ends", []int64{2}), []int64{0}, nil},
		{"slice reverse rows", SliceOp, x, attrs("starts", []int64{-1}, "ends", []int64{math.MinInt64}, "axes", []int64{-2}, "steps", []int64{-1}), []int64{2, 4}, []float64{5, 6, 7, 8, 1, 2, 3, 4}},
		// ONNX Gather documentation examples, negative and scalar indices.
		{"gather doc axis0", GatherOp, g, attrs("indices", i64Dense([]int64{2, 2}, 0, 1, 1, 2)), []int64{2, 2, 2}, []float64{1, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7}},
		{"gather doc axis1", GatherOp, g3, attrs("axis", 1, "indices", i64Dense([]int64{1, 2}, 0, 2)), []int64{3, 1, 2}, []float64{1, 1.9, 2.3, 3.9, 4.5, 5.9}},
		{"gather negative repeated", GatherOp, v, attrs("indices", i64Dense([]int64{4}, -1, 0, -1, -10)), []int64{4}, []float64{9, 0, 9, 0}},
		{"gather scalar", GatherOp, x, attrs("axis", -1, "indices", i64Dense(nil, -3)), []int64{2}, []float64{2, 6}},
		{"gather none", GatherOp, x, attrs("axis", 1, "indices", i64Dense([]int64{0})), []int64{2, 0}, nil},
		// ONNX Pad documentation examples (pads [0, 2, 0, 0]) and cropping.
		{"pad constant", PadOp, g, attrs("pads", []int64{0, 2, 0, 0}), []int64{3, 4}, []float64{0, 0, 1, 1.2, 0, 0, 2.3, 3.4, 0, 0, 4.5, 5.7}},
		{"pad reflect", PadOp, g, attrs("pads", []int64{0, 2, 0, 0}, "mode", reflect), []int64{3, 4}, []float64{1, 1.2, 1, 1.2, 2.3, 3.4, 2.3, 3.4, 4.5, 5.7, 4.5, 5.7}},
		{"pad edge", PadOp, g, attrs("pads", []int64{0, 2, 0, 0}, "mode", edge), []int64{3, 4}, []float64{1, 1, 1, 1.2, 2.3, 2.3, 2.3, 3.4, 4.5, 4.5, 4.5, 5.7}},
		{"pad value", PadOp, tensor([]int64{2}, 1, 2), attrs("pads", []int64{1, 2}, "value", 9.5), []int64{5}, []float64{9.5, 1, 2, 9.5, 9.5}},
		{"pad crop", PadOp, g, attrs("pads", []int64{-1, 0, 0, -1}), []int64{2, 1}, []float64{2.3, 4.5}},
		{"pad reflect both", PadOp, iotaTensor(5), attrs("pads", []int64{3, 4}, "mode", reflect), []int64{12}, []float64{3, 2, 1, 0, 1, 2, 3, 4, 3, 2, 1, 0}},
		{"pad reflect after crop", PadOp, iotaTensor(5), attrs("pads", []int64{-1, 2}, "mode", reflect), []int64{6}, []float64{1, 2, 3, 4, 3, 2}},
		{"pad edge after crop", PadOp, iotaTensor(5), attrs("pads", []int64{2, -2}, "mode", edge), []int64{5}, []float64{0, 0, 0, 1, 2}},
		// Reflection past the edge keeps mirroring (NumPy); size 1 repeats.
		{"pad reflect long", PadOp, iotaTensor(3), attrs("pads", []int64{4, 5}, "mode", reflect), []int64{12}, []float64{0, 1, 2, 1, 0, 1, 2, 1, 0, 1, 2, 1}},
		{"pad reflect size1", PadOp, iotaTensor(1), attrs("pads", []int64{2, 1}, "mode", reflect), []int64{4}, []float64{0, 0, 0, 0}},
		// Expand and tile (ONNX documentation examples).
		{"expand doc", ExpandOp, tensor([]int64{3, 1}, 1, 2, 3), attrs("shape", []int64{2, 1, 6}), []int64{2, 3, 6},
			[]float64{1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3}},
		{"expand smaller shape", ExpandOp, tensor([]int64{3, 1}, 1, 2, 3), attrs("shape", []int64{4}), []int64{3, 4}, []float64{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}},
		{"tile doc", TileOp, tensor([]int64{2, 2}, 1, 2, 3, 4), attrs("repeats", []int64{1, 2}), []int64{2, 4}, []float64{1, 2, 1, 2, 3, 4, 3, 4}},
		{"tile rows", TileOp, tensor([]int64{1, 2}, 1, 2), attrs("repeats", []int64{3, 1}), []int64{3, 2}, []float64{1, 2, 1, 2, 1, 2}},
		{"tile zero", TileOp, tensor([]int64{1, 2}, 1, 2), attrs("repeats", []int64{0, 1}), []int64{0, 2}, nil},
	})
}

func TestSplitEval(t *testing.T) {
	x := iotaTensor(2, 7)
	b := graphir.NewBlock(x.Type)
	op, err := graphir.Build(SplitOp, b.Args, attrs("axis", -1, "num_outputs", 4), graphir.Location{})
	require.NoError(t, err)
	outs, err := op.Def.Eval(op, []*graphir.Tensor{x})
	require.NoError(t, err)
	require.Len(t, outs, 4)
	assert.Equal(t, []float64{0, 1, 7, 8}, outs[0].Data)
	assert.Equal(t, []float64{2, 3, 9, 10}, outs[1].Data)
	assert.Equal(t, []float64{4, 5, 11, 12}, outs[2].Data)
	assert.Equal(t, []float64{6, 13}, outs[3].Data)
	// Sizes with a zero piece.
	op, err = graphir.Build(SplitOp, b.Args, attrs("axis", 1, "split", []int64{0, 5, 2}), graphir.Location{})
	require.NoError(t, err)
	outs, err = op.Def.Eval(op, []*graphir.Tensor{x})
	require.NoError(t, err)
	require.Len(t, outs, 3)
	assert.Empty(t, outs[0].Data)
	assert.Equal(t, []int64{2, 0}, outs[0].Type.Shape)
	assert.Equal(t, []float64{5, 6, 12, 13}, outs[2].Data)
	// Equal parts from the written results.
	m := parseModule(t, `func.func @main(%x: tensor<6x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>) {
  %0:2 = graph.split %x : (tensor<6x2xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>)
  func.return %0#0, %0#1 : tensor<3x2xf32>, tensor<3x2xf32>
}`)
	res, err := graphir.Interpret(m.Funcs[0], []*graphir.Tensor{iotaTensor(6, 2)})
	require.NoError(t, err)
	assert.Equal(t, []float64{6, 7, 8, 9, 10, 11}, res[1].Data)
}

func TestStructuralErrors(t *testing.T) {
	mode := func(s string) graphir.Attribute { return graphir.StringAttr(s) }
	for _, c := range []struct {
		op    string
		x     *graphir.TensorType
		attrs graphir.DictAttr
		msg   string
	}{
		{SliceOp, tt(4), attrs("starts", []int64{0}), "requires attribute 'ends'"},
		{SliceOp, tt(4), attrs("starts", []int64{0}, "ends", []int64{1, 2}), "starts [0] and ends [1, 2] must have the same length"},
		{SliceOp, tt(4), attrs("starts", []int64{0}, "ends", []int64{1}, "steps", []int64{0}), "steps [0] must be non-zero"},
		{SliceOp, tt(4, 2), attrs("starts", []int64{0, 0}, "ends", []int64{1, 1}, "axes", []int64{1, -1}), "axes [1, -1] names dimension 1 more than once"},
		{SliceOp, tt(4, 2), attrs("starts", []int64{0}, "ends", []int64{1}, "axes", []int64{2}), "axis 2 is out of range for rank 2"},
		{SliceOp, tt(4, 2), attrs("starts", []int64{0}, "ends", []int64{1}, "axes", []int64{0, 1}), "axes [0, 1] must have 1 entries"},
		{SliceOp, tt(4, 2), attrs("starts", []int64{0}, "ends", []int64{1}, "steps", []int64{1, 1}), "steps [1, 1] must have 1 entries"},
		{SplitOp, tt(5), attrs("split", []int64{2, 2}), "split sizes [2, 2] sum to 4, but dimension 0 has size 5"},
		{SplitOp, tt(5), attrs("split", []int64{6, -1}), "split sizes [6, -1] must be non-negative"},
		{SplitOp, tt(5), attrs("split", []int64{5}, "num_outputs", 1), "takes 'split' or 'num_outputs', not both"},
		{SplitOp, tt(5), attrs("num_outputs", 4), "cannot split dimension 0 of size 5 into 4 pieces of 2"},
		{SplitOp, tt(5), attrs("num_outputs", 0), "needs 'split', 'num_outputs' or at least one result"},
		{SplitOp, tt(), attrs("num_outputs", 1), "input must have rank at least 1"},
		{SplitOp, tt(4), attrs("axis", 1, "num_outputs", 2), "axis 1 is out of range for rank 1"},
		{GatherOp, tt(3, 2), attrs("indices", i64Dense([]int64{2}, 0, 3)), "index 3 is out of range for dimension 0 of size 3 (expected [-3, 2])"},
		{GatherOp, tt(3, 2), attrs("axis", 1, "indices", i64Dense([]int64{1}, -3)), "index -3 is out of range for dimension 1 of size 2"},
		{GatherOp, tt(3, 2), attrs("indices", &graphir.DenseElementsAttr{Type: tt(1), Floats: []float64{0}}), "indices must have an integer element type"},
		{GatherOp, tt(3, 2), attrs("axis", -3, "indices", i64Dense(nil, 0)), "axis -3 is out of range"},
		{GatherOp, tt(), attrs("indices", i64Dense(nil, 0)), "input must have rank at least 1"},
		{GatherOp, tt(3), nil, "requires attribute 'indices'"},
		{PadOp, tt(3, 2), attrs("pads", []int64{1, 1}), "pads [1, 1] must have 4 entries (2 × rank 2)"},
		{PadOp, tt(3, 2), attrs("pads", []int64{0, 0, 0, 0}, "mode", mode("wrap")), "mode"},
		{PadOp, tt(3, 2), attrs("pads", []int64{-2, 0, -2, 0}), "pads crop 4 elements from dimension 0 of size 3"},
		{PadOp, tt(3, 2), attrs("pads", []int64{0, 1, 0, -2}, "mode", mode("reflect")), "reflect pad of dimension 1 needs a non-empty dimension"},
		{PadOp, tt(0, 2), attrs("pads", []int64{1, 0, 0, 0}, "mode", mode("reflect")), "reflect pad of dimension 0 needs a non-empty dimension"},
		{PadOp, tt(3, 2), attrs("pads", []int64{1, 0, -3, 0}, "mode", mode("edge")), "edge pad of dimension 0 needs a non-empty dimension"},
		{ExpandOp, tt(3, 2), attrs("shape", []int64{4}), "cannot expand tensor<3x2xf32> to shape [4]"},
		{ExpandOp, tt(3, 2), attrs("shape", []int64{-1, 2}), "shape [-1, 2] must not have negative entries"},
		{TileOp, tt(3, 2), attrs("repeats", []int64{2}), "repeats [2] must have 2 entries (the input rank)"},
		{TileOp, tt(3, 2), attrs("repeats", []int64{2, -1}), "repeats [2, -1] must be in [0, 2^31)"},
	} {
		err := checkOp(c.op, []*graphir.TensorType{c.x}, c.attrs)
		require.Error(t, err, "%s %v", c.op, c.attrs)
		assert.Contains(t, err.Error(), c.msg)
	}
}

// TestStructuralOpsNeverPanic builds the structural ops with random
// operand shapes and random (often malformed) attributes and runs
// inference, the verifier and, where those succeed, the evaluator.
func TestStructuralOpsNeverPanic(t *testing.T) {
	rng := newRNG(123)
	names := []string{ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp, ReduceProdOp, ReduceL2Op, ReduceLogSumExpOp,
		LogSoftmaxOp, SplitOp, SliceOp, GatherOp, PadOp, ExpandOp, TileOp}
	attrNames := []string{"axes", "keepdims", "axis", "split", "num_outputs", "starts", "ends", "steps", "indices", "pads", "mode", "value", "shape", "repeats", "noop_with_empty_axes"}
	for iter := 0; iter < 20000; iter++ {
		name := names[rng.IntN(len(names))]
		shape := make([]int64, rng.IntN(4))
		for i := range shape {
			shape[i] = int64(rng.IntN(4))
		}
		a := graphir.DictAttr{}
		for _, n := range attrNames {
			if rng.IntN(3) != 0 {
				continue
			}
			switch rng.IntN(4) {
			case 0:
				a = a.Set(n, randomAttr(rng))
			case 1:
				a = a.Set(n, i64Dense([]int64{2}, int64(rng.IntN(9)-4), int64(rng.IntN(9)-4)))
			case 2:
				a = a.Set(n, graphir.StringAttr(PadModes[rng.IntN(3)]))
			default:
				vs := make([]int64, rng.IntN(2*len(shape)+1))
				for i := range vs {
					vs[i] = int64(rng.IntN(11) - 5)
				}
				a = a.Set(n, graphir.I64Array(vs...))
			}
		}
		x := tt(shape...)
		b := graphir.NewBlock(x)
		op, err := graphir.Build(name, b.Args, a, graphir.Location{})
		if err != nil {
			continue
		}
		_ = checkOp(name, []*graphir.TensorType{x}, a)
		in := graphir.NewZeroTensor(x)
		for i := range in.Data {
			in.Data[i] = rng.Float64()*4 - 2
		}
		_, _ = op.Def.Eval(op, []*graphir.Tensor{in})
	}
}
