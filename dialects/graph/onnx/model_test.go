package onnx

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	pb "github.com/tessera-ml/tessera/dialects/graph/onnx/onnxpb"
	"github.com/tessera-ml/tessera/graphir"
)

// A two-layer MLP: Gemm(transB) → Relu → MatMul → Add. W1/B1 are
// initializers also listed as graph inputs (constants, not arguments).
func mlpSpec() modelSpec {
	return modelSpec{
		opset:   13,
		inputs:  []*pb.ValueInfoProto{f32In("x", 1, 2), f32In("W1", 3, 2), f32In("B1", 3)},
		outputs: []*pb.ValueInfoProto{f32In("y", 1, 2)},
		inits: []*pb.TensorProto{
			f32Tensor("W1", []int64{3, 2}, 1, 0, 0, 1, 1, -1),
			f32Tensor("B1", []int64{3}, 0, 0, 0.5),
			f32Tensor("W2", []int64{3, 2}, 1, 2, 3, 4, 5, 6),
			f32Tensor("B2", []int64{2}, -1, 1),
		},
		nodes: []*pb.NodeProto{
			named(mkNode("Gemm", ss("x", "W1", "B1"), ss("h"), aInt("transB", 1)), "fc1"),
			mkNode("Relu", ss("h"), ss("r")),
			mkNode("MatMul", ss("r", "W2"), ss("z")),
			mkNode("Add", ss("z", "B2"), ss("y")),
		},
	}
}

func TestImportMLP(t *testing.T) {
	m := mustImport(t, mlpSpec())
	text := graphir.PrintWith(m, graphir.PrintOptions{DebugInfo: true})
	assert.Equal(t, `module {
  func.func @main(%arg0: tensor<1x2xf32>) -> tensor<1x2xf32> {
    %0 = graph.constant {value = dense<[[1.0, 0.0], [0.0, 1.0], [1.0, -1.0]]> : tensor<3x2xf32>} : tensor<3x2xf32> loc("m.onnx":1:1)
    %1 = graph.constant {value = dense<[0.0, 0.0, 0.5]> : tensor<3xf32>} : tensor<3xf32> loc("m.onnx":1:1)
    %2 = graph.gemm %arg0, %0, %1 {transB = true} : (tensor<1x2xf32>, tensor<3x2xf32>, tensor<3xf32>) -> tensor<1x3xf32> loc("m.onnx":1:1)
    %3 = graph.relu %2 : tensor<1x3xf32> loc("m.onnx":2:1)
    %4 = graph.constant {value = dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>} : tensor<3x2xf32> loc("m.onnx":3:1)
    %5 = graph.matmul %3, %4 : (tensor<1x3xf32>, tensor<3x2xf32>) -> tensor<1x2xf32> loc("m.onnx":3:1)
    %6 = graph.constant {value = dense<[-1.0, 1.0]> : tensor<2xf32>} : tensor<2xf32> loc("m.onnx":4:1)
    %7 = graph.add %5, %6 : (tensor<1x2xf32>, tensor<2xf32>) -> tensor<1x2xf32> loc("m.onnx":4:1)
    func.return %7 : tensor<1x2xf32> loc("m.onnx":5:1)
  } loc("m.onnx":1:1)
} loc(unknown)
`, text)
	// the printed text parses back to the same module
	back, err := graphir.ParseString("m.mlir", text)
	require.NoError(t, err)
	assert.Equal(t, text, graphir.PrintWith(back, graphir.PrintOptions{DebugInfo: true}))
	// x = [2, 3]: h = [2, 3, -0.5], r = [2, 3, 0], z = [2+9, 4+12] = [11, 16], y = [10, 17]
	got := interpret(t, m, tensor(graphir.F32, []int64{1, 2}, 2, 3))
	requireTensor(t, tensor(graphir.F32, []int64{1, 2}, 10, 17), got[0])
}

func TestTensorDecoding(t *testing.T) {
	f32raw := []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0} // 1.0, -2.0
	cases := []struct {
		name string
		tp   *pb.TensorProto
		want *graphir.Tensor
	}{
		{"float typed", f32Tensor("t", []int64{2}, 1.5, -2), tensor(graphir.F32, []int64{2}, 1.5, -2)},
		{"float raw", &pb.TensorProto{DataType: pbType(pb.TensorProto_FLOAT), Dims: []int64{2}, RawData: f32raw}, tensor(graphir.F32, []int64{2}, 1, -2)},
		{"double typed", &pb.TensorProto{DataType: pbType(pb.TensorProto_DOUBLE), Dims: []int64{1}, DoubleData: []float64{0.1}}, tensor(graphir.F64, []int64{1}, 0.1)},
		{"double raw", &pb.TensorProto{DataType: pbType(pb.TensorProto_DOUBLE), RawData: []byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f}}, tensor(graphir.F64, nil, 1)},
		{"int32 typed", &pb.TensorProto{DataType: pbType(pb.TensorProto_INT32), Dims: []int64{2}, Int32Data: []int32{-7, 9}}, tensor(graphir.I32, []int64{2}, -7, 9)},
		{"int32 raw", &pb.TensorProto{DataType: pbType(pb.TensorProto_INT32), Dims: []int64{1}, RawData: []byte{0xff, 0xff, 0xff, 0xff}}, tensor(graphir.I32, []int64{1}, -1)},
		{"int64 typed", i64Tensor("t", []int64{2, 1}, 5, -6), tensor(graphir.I64, []int64{2, 1}, 5, -6)},
		{"int64 raw", &pb.TensorProto{DataType: pbType(pb.TensorProto_INT64), Dims: []int64{1}, RawData: []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}}, tensor(graphir.I64, []int64{1}, -2)},
		{"int8 typed", &pb.TensorProto{DataType: pbType(pb.TensorProto_INT8), Dims: []int64{2}, Int32Data: []int32{-128, 127}}, tensor(graphir.I8, []int64{2}, -128, 127)},
		{"int8 raw", &pb.TensorProto{DataType: pbType(pb.TensorProto_INT8), Dims: []int64{2}, RawData: []byte{0x80, 0x05}}, tensor(graphir.I8, []int64{2}, -128, 5)},
		{"uint8 typed", &pb.TensorProto{DataType: pbType(pb.TensorProto_UINT8), Dims: []int64{1}, Int32Data: []int32{255}}, tensor(graphir.UI8, []int64{1}, 255)},
		{"uint8 raw", &pb.TensorProto{DataType: pbType(pb.TensorProto_UINT8), Dims: []int64{2}, RawData: []byte{0xff, 1}}, tensor(graphir.UI8, []int64{2}, 255, 1)},
		{"int16 typed", &pb.TensorProto{DataType: pbType(pb.TensorProto_INT16), Dims: []int64{2}, Int32Data: []int32{-32768, 7}}, tensor(graphir.I16, []int64{2}, -32768, 7)},
		{"int16 raw", &pb.TensorProto{DataType: pbType(pb.TensorProto_INT16), Dims: []int64{1}, RawData: []byte{0xfe, 0xff}}, tensor(graphir.I16, []int64{1}, -2)},
		{"uint16 typed", &pb.TensorProto{DataType: pbType(pb.TensorProto_UINT16), Dims: []int64{1}, Int32Data: []int32{65535}}, tensor(graphir.UI16, []int64{1}, 65535)},
		{"uint16 raw", &pb.TensorProto{DataType: pbType(pb.TensorProto_UINT16), Dims: []int64{1}, RawData: []byte{0xfe, 0xff}}, tensor(graphir.UI16, []int64{1}, 65534)},
		{"uint32 typed", &pb.TensorProto{DataType: pbType(pb.TensorProto_UINT32), Dims: []int64{1}, Uint64Data: []uint64{4294967295}}, tensor(graphir.UI32, []int64{1}, 4294967295)},
		{"uint32 raw", &pb.TensorProto{DataType: pbType(pb.TensorProto_UINT32), Dims: []int64{1}, RawData: []byte{0, 0, 0, 0x80}}, tensor(graphir.UI32, []int64{1}, 1<<31)},
		{"uint64 typed", &pb.TensorProto{DataType: pbType(pb.TensorProto_UINT64), Dims: []int64{1}, Uint64Data: []uint64{1 << 40}}, tensor(graphir.UI64, []int64{1}, 1<<40)},
		{"uint64 raw", &pb.TensorProto{DataType: pbType(pb.TensorProto_UINT64), Dims: []int64{1}, RawData: []byte{5, 0, 0, 0, 0, 0, 0, 0x80}}, tensor(graphir.UI64, []int64{1}, 1<<63+5)},
		{"float16 typed", &pb.TensorProto{DataType: pbType(pb.TensorProto_FLOAT16), Dims: []int64{2}, Int32Data: []int32{0x3C00, 0xC100}}, tensor(graphir.F16, []int64{2}, 1, -2.5)},
		{"float16 raw", &pb.TensorProto{DataType: pbType(pb.TensorProto_FLOAT16), Dims: []int64{1}, RawData: []byte{0xff, 0x7b}}, tensor(graphir.F16, []int64{1}, 65504)},
		{"bfloat16 typed", &pb.TensorProto{DataType: pbType(pb.TensorProto_BFLOAT16), Dims: []int64{1}, Int32Data: []int32{0x3FC0}}, tensor(graphir.BF16, []int64{1}, 1.5)},
		{"bfloat16 raw", &pb.TensorProto{DataType: pbType(pb.TensorProto_BFLOAT16), Dims: []int64{1}, RawData: []byte{0x80, 0xbf}}, tensor(graphir.BF16, []int64{1}, -1)},
		{"bool typed", &pb.TensorProto{DataType: pbType(pb.TensorProto_BOOL), Dims: []int64{3}, Int32Data: []int32{1, 0, 1}}, tensor(graphir.I1, []int64{3}, 1, 0, 1)},
		{"bool raw", &pb.TensorProto{DataType: pbType(pb.TensorProto_BOOL), Dims: []int64{2}, RawData: []byte{0, 1}}, tensor(graphir.I1, []int64{2}, 0, 1)},
		{"empty", f32Tensor("t", []int64{0, 3}), tensor(graphir.F32, []int64{0, 3})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := decodeTensor(c.tp)
			require.NoError(t, err)
			require.Equal(t, c.want.Type.String(), got.Type.String())
			if len(c.want.Data) == 0 {
				require.Empty(t, got.Data)
				return
			}
			require.Equal(t, c.want.Data, got.Data)
			// An initializer decodes to the same values; float raw_data is
			// kept as it is (shared with the message, not widened).
			x, err := decodeInitializer(c.tp, graphir.Location{})
			require.NoError(t, err)
			require.Equal(t, c.want.Type.String(), x.typ().String())
			require.Equal(t, c.want.Data, x.tensor().Data)
			if c.tp.RawData != nil && c.want.Type.Elem.IsFloat() {
				require.NotNil(t, x.raw)
				require.Same(t, &c.tp.RawData[0], &x.raw.Raw[0])
			}
		})
	}
	bad := []struct {
		name string
		tp   *pb.TensorProto
		msg  string
	}{
		{"external", &pb.TensorProto{Name: strp("w"), DataType: pbType(pb.TensorProto_FLOAT), Dims: []int64{2}, DataLocation: pb.TensorProto_EXTERNAL.Enum(),
			ExternalData: []*pb.StringStringEntryProto{{Key: strp("location"), Value: strp("w.bin")}}}, "tensor 'w' keeps its data in an external file, which Tessera does not read"},
		{"count", f32Tensor("w", []int64{3}, 1, 2), "tensor 'w' of shape [3] holds 2 elements, want 3"},
		{"raw size", &pb.TensorProto{Name: strp("w"), DataType: pbType(pb.TensorProto_FLOAT), Dims: []int64{1}, RawData: []byte{1, 2, 3}}, "raw_data has 3 bytes, not a multiple of 4"},
		{"string", &pb.TensorProto{Name: strp("s"), DataType: pbType(pb.TensorProto_STRING), Dims: []int64{1}}, "unsupported element type STRING"},
		{"complex64", &pb.TensorProto{Name: strp("c"), DataType: pbType(pb.TensorProto_COMPLEX64), Dims: []int64{1}}, "unsupported element type COMPLEX64"},
		{"float16 raw size", &pb.TensorProto{Name: strp("h"), DataType: pbType(pb.TensorProto_FLOAT16), Dims: []int64{2}, RawData: []byte{1, 2, 3}}, "raw_data has 3 bytes, not a multiple of 2"},
		{"negative dim", &pb.TensorProto{Name: strp("w"), DataType: pbType(pb.TensorProto_FLOAT), Dims: []int64{-1}}, "negative dimension -1"},
		{"huge", &pb.TensorProto{Name: strp("w"), DataType: pbType(pb.TensorProto_FLOAT), Dims: []int64{1 << 20, 1 << 20}}, "is too large"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := decodeTensor(c.tp)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.msg)
			_, err = decodeInitializer(c.tp, graphir.Location{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "tensor '"+c.tp.GetName()+"'")
		})
	}
}

func pbType(dt pb.TensorProto_DataType) *int32 { v := int32(dt); return &v }
func strp(s string) *string                    { return &s }
