package onnx

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	pb "github.com/tessera-ml/tessera/dialects/graph/onnx/onnxpb"
	"github.com/tessera-ml/tessera/graphir"
)

// Builders of small ModelProtos for the tests.

type modelSpec struct {
	opset   int64
	inputs  []*pb.ValueInfoProto
	outputs []*pb.ValueInfoProto
	inits   []*pb.TensorProto
	nodes   []*pb.NodeProto
}

func (s modelSpec) proto() *pb.ModelProto {
	if s.opset == 0 {
		s.opset = 13
	}
	return &pb.ModelProto{
		IrVersion:   proto.Int64(8),
		OpsetImport: []*pb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(s.opset)}},
		Graph: &pb.GraphProto{
			Name: proto.String("g"), Node: s.nodes, Input: s.inputs, Output: s.outputs, Initializer: s.inits,
		},
	}
}

func (s modelSpec) bytes(t testing.TB) []byte {
	data, err := proto.Marshal(s.proto())
	require.NoError(t, err)
	return data
}

// tensorInfo declares a tensor value; dims are int (static) or string (symbolic).
func tensorInfo(name string, elem pb.TensorProto_DataType, dims ...any) *pb.ValueInfoProto {
	shape := &pb.TensorShapeProto{}
	for _, d := range dims {
		switch d := d.(type) {
		case int:
			shape.Dim = append(shape.Dim, &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimValue{DimValue: int64(d)}})
		case string:
			shape.Dim = append(shape.Dim, &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimParam{DimParam: d}})
		case nil:
			shape.Dim = append(shape.Dim, &pb.TensorShapeProto_Dimension{})
		}
	}
	return &pb.ValueInfoProto{Name: proto.String(name), Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{
		TensorType: &pb.TypeProto_Tensor{ElemType: proto.Int32(int32(elem)), Shape: shape}}}}
}

func f32In(name string, dims ...any) *pb.ValueInfoProto {
	return tensorInfo(name, pb.TensorProto_FLOAT, dims...)
}

// out declares an output without type information.
func out(name string) *pb.ValueInfoProto { return &pb.ValueInfoProto{Name: proto.String(name)} }

func f32Tensor(name string, dims []int64, vals ...float32) *pb.TensorProto {
	return &pb.TensorProto{Name: proto.String(name), Dims: dims, DataType: proto.Int32(int32(pb.TensorProto_FLOAT)), FloatData: vals}
}

func i64Tensor(name string, dims []int64, vals ...int64) *pb.TensorProto {
	return &pb.TensorProto{Name: proto.String(name), Dims: dims, DataType: proto.Int32(int32(pb.TensorProto_INT64)), Int64Data: vals}
}

func mkNode(op string, ins, outs []string, attrs ...*pb.AttributeProto) *pb.NodeProto {
	return &pb.NodeProto{OpType: proto.String(op), Input: ins, Output: outs, Attribute: attrs}
}

func named(n *pb.NodeProto, name string) *pb.NodeProto {
	n.Name = proto.String(name)
	return n
}

func aInt(name string, v int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

func aInts(name string, v ...int64) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_INTS.Enum(), Ints: v}
}

func aFloat(name string, v float32) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_FLOAT.Enum(), F: proto.Float32(v)}
}

func aString(name, v string) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_STRING.Enum(), S: []byte(v)}
}

func aTensor(name string, t *pb.TensorProto) *pb.AttributeProto {
	return &pb.AttributeProto{Name: proto.String(name), Type: pb.AttributeProto_TENSOR.Enum(), T: t}
}

func ss(xs ...string) []string { return xs }

// importSpec imports s as "m.onnx".
func importSpec(t testing.TB, s modelSpec) (*graphir.Module, error) {
	return ImportBytes("m.onnx", s.bytes(t))
}

func mustImport(t testing.TB, s modelSpec) *graphir.Module {
	t.Helper()
	m, err := importSpec(t, s)
	require.NoError(t, err)
	return m
}

// tensor builds a reference tensor.
func tensor(dt graphir.DType, shape []int64, vals ...float64) *graphir.Tensor {
	return &graphir.Tensor{Type: graphir.NewTensor(dt, shape...), Data: vals}
}

// interpret runs @main and returns its results.
func interpret(t testing.TB, m *graphir.Module, args ...*graphir.Tensor) []*graphir.Tensor {
	t.Helper()
	got, err := graphir.Interpret(m.Lookup("main"), args)
	require.NoError(t, err)
	return got
}

// requireTensor compares type and values (|Δ| ≤ 1e-6).
func requireTensor(t testing.TB, want, got *graphir.Tensor) {
	t.Helper()
	require.Equal(t, want.Type.String(), got.Type.String())
	require.InDeltaSlice(t, want.Data, got.Data, 1e-6)
}

// opNames lists the op names of @main in order.
func opNames(m *graphir.Module) []string {
	var names []string
	for _, op := range m.Lookup("main").Entry().Ops() {
		names = append(names, op.Name)
	}
	return names
}
