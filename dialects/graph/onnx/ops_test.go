package onnx

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	pb "github.com/tessera-ml/tessera/dialects/graph/onnx/onnxpb"
	"github.com/tessera-ml/tessera/graphir"
)

// opCase imports a one-input graph and checks the ops it becomes and the
// interpreted result on x.
type opCase struct {
	name  string
	opset int64
	in    *pb.ValueInfoProto
	x     *graphir.Tensor
	inits []*pb.TensorProto
	nodes []*pb.NodeProto
	ops   []string // graph ops expected in @main (constants and return excluded)
	want  *graphir.Tensor
}

func seq(dt graphir.DType, shape ...int64) *graphir.Tensor {
	t := graphir.NewZeroTensor(graphir.NewTensor(dt, shape...))
	for i := range t.Data {
		t.Data[i] = float64(i)
	}
	return t
}

func TestOpsByOpset(t *testing.T) {
	x23 := seq(graphir.F32, 2, 3)
	x123 := seq(graphir.F32, 1, 2, 3)
	e := math.Exp
	// softmax over all 6 elements of x123 (opset 11: axis 1 flattens [1, 6])
	var sum6 float64
	for i := 0; i < 6; i++ {
		sum6 += e(float64(i))
	}
	soft6 := make([]float64, 6)
	for i := range soft6 {
		soft6[i] = float64(float32(e(float64(i)) / sum6))
	}
	// softmax along the last axis (opset 13 default)
	s3 := e(0) + e(1) + e(2)
	soft3 := []float64{e(0) / s3, e(1) / s3, e(2) / s3, e(0) / s3, e(1) / s3, e(2) / s3}
	cases := []opCase{
		{name: "Softmax opset 11 coerces to 2-D", opset: 11, in: f32In("x", 1, 2, 3), x: x123,
			nodes: []*pb.NodeProto{mkNode("Softmax", ss("x"), ss("y"))},
			ops:   []string{"graph.reshape", "graph.softmax", "graph.reshape"}, want: f32(dims(1, 2, 3), soft6...)},
		{name: "Softmax opset 13 axis -1", opset: 13, in: f32In("x", 1, 2, 3), x: x123,
			nodes: []*pb.NodeProto{mkNode("Softmax", ss("x"), ss("y"))}, ops: []string{"graph.softmax"}, want: f32(dims(1, 2, 3), soft3...)},
		{name: "Squeeze attribute (opset 11)", opset: 11, in: f32In("x", 1, 2, 3), x: x123,
			nodes: []*pb.NodeProto{mkNode("Squeeze", ss("x"), ss("y"), aInts("axes", 0))}, ops: []string{"graph.reshape"}, want: seq(graphir.F32, 2, 3)},
		{name: "Squeeze input (opset 13)", opset: 13, in: f32In("x", 1, 2, 3), x: x123, inits: []*pb.TensorProto{i64Tensor("a", dims(1), -3)},
			nodes: []*pb.NodeProto{mkNode("Squeeze", ss("x", "a"), ss("y"))}, ops: []string{"graph.reshape"}, want: seq(graphir.F32, 2, 3)},
		{name: "Unsqueeze input (opset 13)", opset: 13, in: f32In("x", 2, 3), x: x23, inits: []*pb.TensorProto{i64Tensor("a", dims(1), 1)},
			nodes: []*pb.NodeProto{mkNode("Unsqueeze", ss("x", "a"), ss("y"))}, ops: []string{"graph.reshape"}, want: seq(graphir.F32, 2, 1, 3)},
		{name: "Flatten", in: f32In("x", 1, 2, 3), x: x123, nodes: []*pb.NodeProto{mkNode("Flatten", ss("x"), ss("y"), aInt("axis", -1))},
			ops: []string{"graph.flatten"}, want: seq(graphir.F32, 2, 3)},
		{name: "Transpose", in: f32In("x", 2, 3), x: x23, nodes: []*pb.NodeProto{mkNode("Transpose", ss("x"), ss("y"), aInts("perm", 1, 0))},
			ops: []string{"graph.transpose"}, want: f32(dims(3, 2), 0, 3, 1, 4, 2, 5)},
		{name: "Identity and Dropout removed", opset: 13, in: f32In("x", 2, 3), x: x23,
			nodes: []*pb.NodeProto{mkNode("Identity", ss("x"), ss("i")), mkNode("Dropout", ss("i"), ss("d")), mkNode("Relu", ss("d"), ss("y"))},
			ops:   []string{"graph.relu"}, want: x23},
		{name: "Clip attributes (opset 9)", opset: 9, in: f32In("x", 2, 3), x: x23,
			nodes: []*pb.NodeProto{mkNode("Clip", ss("x"), ss("y"), aFloat("min", 1), aFloat("max", 3.5))}, ops: []string{"graph.clip"}, want: f32(dims(2, 3), 1, 1, 2, 3, 3.5, 3.5)},
		{name: "Clip inputs (opset 11), max only", opset: 11, in: f32In("x", 2, 3), x: x23, inits: []*pb.TensorProto{f32Tensor("hi", nil, 2)},
			nodes: []*pb.NodeProto{mkNode("Clip", ss("x", "", "hi"), ss("y"))}, ops: []string{"graph.clip"}, want: f32(dims(2, 3), 0, 1, 2, 2, 2, 2)},
		{name: "ReduceSum attribute (opset 11)", opset: 11, in: f32In("x", 2, 3), x: x23,
			nodes: []*pb.NodeProto{mkNode("ReduceSum", ss("x"), ss("y"), aInts("axes", 1), aInt("keepdims", 0))}, ops: []string{"graph.reduce_sum"}, want: f32(dims(2), 3, 12)},
		{name: "ReduceSum input (opset 13)", opset: 13, in: f32In("x", 2, 3), x: x23, inits: []*pb.TensorProto{i64Tensor("a", dims(1), 0)},
			nodes: []*pb.NodeProto{mkNode("ReduceSum", ss("x", "a"), ss("y"))}, ops: []string{"graph.reduce_sum"}, want: f32(dims(1, 3), 3, 5, 7)},
		{name: "ReduceSum noop_with_empty_axes", opset: 13, in: f32In("x", 2, 3), x: x23,
			nodes: []*pb.NodeProto{mkNode("ReduceSum", ss("x"), ss("y"), aInt("noop_with_empty_axes", 1))}, ops: nil, want: x23},
		{name: "ReduceMean all axes", opset: 13, in: f32In("x", 2, 3), x: x23,
			nodes: []*pb.NodeProto{mkNode("ReduceMean", ss("x"), ss("y"))}, ops: []string{"graph.reduce_mean"}, want: f32(dims(1, 1), 2.5)},
		{name: "Split attribute (opset 11)", opset: 11, in: f32In("x", 2, 3), x: x23,
			nodes: []*pb.NodeProto{mkNode("Split", ss("x"), ss("a", "b"), aInt("axis", 1), aInts("split", 1, 2)), mkNode("Mul", ss("b", "b"), ss("y"))},
			ops:   []string{"graph.split", "graph.mul"}, want: f32(dims(2, 2), 1, 4, 16, 25)},
		{name: "Split equal parts (opset 13)", opset: 13, in: f32In("x", 2, 3), x: x23,
			nodes: []*pb.NodeProto{mkNode("Split", ss("x"), ss("a", "b")), mkNode("Sub", ss("b", "a"), ss("y"))},
			ops:   []string{"graph.split", "graph.sub"}, want: f32(dims(1, 3), 3, 3, 3)},
		{name: "Slice attributes (opset 9)", opset: 9, in: f32In("x", 2, 3), x: x23,
			nodes: []*pb.NodeProto{mkNode("Slice", ss("x"), ss("y"), aInts("starts", 1), aInts("ends", 1000), aInts("axes", 1))},
			ops:   []string{"graph.slice"}, want: f32(dims(2, 2), 1, 2, 4, 5)},
		{name: "Slice inputs negative step (opset 13)", opset: 13, in: f32In("x", 2, 3), x: x23,
			inits: []*pb.TensorProto{i64Tensor("s", dims(1), -1), i64Tensor("e", dims(1), math.MinInt64), i64Tensor("a", dims(1), 1), i64Tensor("st", dims(1), -2)},
			nodes: []*pb.NodeProto{mkNode("Slice", ss("x", "s", "e", "a", "st"), ss("y"))}, ops: []string{"graph.slice"}, want: f32(dims(2, 2), 2, 0, 5, 3)},
		{name: "Gather constant indices", in: f32In("x", 2, 3), x: x23, inits: []*pb.TensorProto{i64Tensor("i", dims(2), 2, -3)},
			nodes: []*pb.NodeProto{mkNode("Gather", ss("x", "i"), ss("y"), aInt("axis", 1))}, ops: []string{"graph.gather"}, want: f32(dims(2, 2), 2, 0, 5, 3)},
		{name: "Pad attributes (opset 9)", opset: 9, in: f32In("x", 2, 3), x: x23,
			nodes: []*pb.NodeProto{mkNode("Pad", ss("x"), ss("y"), aInts("pads", 0, 1, 0, 0), aFloat("value", -1))}, ops: []string{"graph.pad"},
			want: f32(dims(2, 4), -1, 0, 1, 2, -1, 3, 4, 5)},
		{name: "Pad inputs edge (opset 11)", opset: 11, in: f32In("x", 2, 3), x: x23, inits: []*pb.TensorProto{i64Tensor("p", dims(4), 0, 0, 0, 1)},
			nodes: []*pb.NodeProto{mkNode("Pad", ss("x", "p"), ss("y"), aString("mode", "edge"))}, ops: []string{"graph.pad"},
			want: f32(dims(2, 4), 0, 1, 2, 2, 3, 4, 5, 5)},
		{name: "Expand", in: f32In("x", 2, 1), x: seq(graphir.F32, 2, 1), inits: []*pb.TensorProto{i64Tensor("s", dims(2), 1, 2)},
			nodes: []*pb.NodeProto{mkNode("Expand", ss("x", "s"), ss("y"))}, ops: []string{"graph.expand"}, want: f32(dims(2, 2), 0, 0, 1, 1)},
		{name: "Tile", in: f32In("x", 2, 1), x: seq(graphir.F32, 2, 1), inits: []*pb.TensorProto{i64Tensor("r", dims(2), 1, 2)},
			nodes: []*pb.NodeProto{mkNode("Tile", ss("x", "r"), ss("y"))}, ops: []string{"graph.tile"}, want: f32(dims(2, 2), 0, 0, 1, 1)},
		{name: "Mean of three", in: f32In("x", 2, 3), x: x23, inits: []*pb.TensorProto{f32Tensor("a", dims(3), 3, 3, 3), f32Tensor("b", nil, 0)},
			nodes: []*pb.NodeProto{mkNode("Mean", ss("x", "a", "b"), ss("y"))}, ops: []string{"graph.add", "graph.add", "graph.div"},
			want: f32(dims(2, 3), 1, 4.0/3, 5.0/3, 2, 7.0/3, 8.0/3)},
		{name: "Max Min variadic", in: f32In("x", 2, 3), x: x23, inits: []*pb.TensorProto{f32Tensor("a", nil, 1), f32Tensor("b", nil, 4)},
			nodes: []*pb.NodeProto{mkNode("Max", ss("x", "a"), ss("m")), mkNode("Min", ss("m", "b", "b"), ss("y"))}, ops: []string{"graph.max", "graph.min", "graph.min"},
			want: f32(dims(2, 3), 1, 1, 2, 3, 4, 4)},
		{name: "Cast and compare", in: f32In("x", 2, 3), x: x23, inits: []*pb.TensorProto{f32Tensor("t", nil, 2)},
			nodes: []*pb.NodeProto{mkNode("Greater", ss("x", "t"), ss("g")), mkNode("Cast", ss("g"), ss("y"), aInt("to", int64(pb.TensorProto_FLOAT)))},
			ops:   []string{"graph.greater", "graph.cast"}, want: f32(dims(2, 3), 0, 0, 0, 1, 1, 1)},
		{name: "HardSigmoid defaults", in: f32In("x", 2, 3), x: x23,
			nodes: []*pb.NodeProto{mkNode("HardSigmoid", ss("x"), ss("y"))}, ops: []string{"graph.hard_sigmoid"},
			want: f32(dims(2, 3), 0.5, 0.7, 0.9, 1, 1, 1)},
		{name: "Conv VALID group 2", in: f32In("x", 1, 2, 2, 2), x: seq(graphir.F32, 1, 2, 2, 2),
			inits: []*pb.TensorProto{f32Tensor("w", dims(2, 1, 2, 1), 1, 1, 2, -1)},
			nodes: []*pb.NodeProto{mkNode("Conv", ss("x", "w"), ss("y"), aString("auto_pad", "VALID"), aInt("group", 2))}, ops: []string{"graph.conv2d"},
			// channel 0: x[0,0]=[[0,1],[2,3]] column sums → [2, 4]; channel 1: [[4,5],[6,7]]·[2,-1] → [8−6, 10−7]
			want: f32(dims(1, 2, 1, 2), 2, 4, 2, 3)},
		// ConvTranspose of x = [0, 1, 2] with stride 2: the full outputs are
		// [0, 0, 1, 10, 2, 20] (w = [1, 10]) and [0, 0, 1, 10, 102, 20, 200]
		// (w = [1, 10, 100]); an odd total padding of 1 is cut at the
		// beginning or the end as the opset's spec says.
		{name: "ConvTranspose output_shape (opset 11: NOTSET cuts the beginning)", opset: 11, in: f32In("x", 1, 1, 3), x: seq(graphir.F32, 1, 1, 3),
			inits: []*pb.TensorProto{f32Tensor("w", dims(1, 1, 2), 1, 10)},
			nodes: []*pb.NodeProto{mkNode("ConvTranspose", ss("x", "w"), ss("y"), aInts("strides", 2), aInts("output_shape", 5))},
			ops:   []string{"graph.conv_transpose"}, want: f32(dims(1, 1, 5), 0, 1, 10, 2, 20)},
		{name: "ConvTranspose output_shape (opset 9: NOTSET cuts the end)", opset: 9, in: f32In("x", 1, 1, 3), x: seq(graphir.F32, 1, 1, 3),
			inits: []*pb.TensorProto{f32Tensor("w", dims(1, 1, 2), 1, 10)},
			nodes: []*pb.NodeProto{mkNode("ConvTranspose", ss("x", "w"), ss("y"), aInts("strides", 2), aInts("output_shape", 5))},
			ops:   []string{"graph.conv_transpose"}, want: f32(dims(1, 1, 5), 0, 0, 1, 10, 2)},
		{name: "ConvTranspose SAME_UPPER (opset 11: the end), empty bias", opset: 11, in: f32In("x", 1, 1, 3), x: seq(graphir.F32, 1, 1, 3),
			inits: []*pb.TensorProto{f32Tensor("w", dims(1, 1, 3), 1, 10, 100)},
			nodes: []*pb.NodeProto{mkNode("ConvTranspose", ss("x", "w", ""), ss("y"), aInts("strides", 2), aString("auto_pad", "SAME_UPPER"), aInts("kernel_shape", 3))},
			ops:   []string{"graph.conv_transpose"}, want: f32(dims(1, 1, 6), 0, 0, 1, 10, 102, 20)},
		{name: "ConvTranspose SAME_UPPER (opset 10: the beginning)", opset: 10, in: f32In("x", 1, 1, 3), x: seq(graphir.F32, 1, 1, 3),
			inits: []*pb.TensorProto{f32Tensor("w", dims(1, 1, 3), 1, 10, 100)},
			nodes: []*pb.NodeProto{mkNode("ConvTranspose", ss("x", "w"), ss("y"), aInts("strides", 2), aString("auto_pad", "SAME_UPPER"))},
			ops:   []string{"graph.conv_transpose"}, want: f32(dims(1, 1, 6), 0, 1, 10, 102, 20, 200)},
		{name: "ConvTranspose group 2 with bias", opset: 13, in: f32In("x", 1, 2, 2), x: seq(graphir.F32, 1, 2, 2),
			inits: []*pb.TensorProto{f32Tensor("w", dims(2, 1, 1), 1, -1), f32Tensor("b", dims(2), 0.5, 1)},
			nodes: []*pb.NodeProto{mkNode("ConvTranspose", ss("x", "w", "b"), ss("y"), aInt("group", 2), aInts("pads", 0, 1), aInts("output_padding", 1), aInts("strides", 2))},
			// channel 0: [0, _, 1, _] + 0.5 without the last; channel 1: −[2, _, 3, _] + 1
			ops: []string{"graph.conv_transpose"}, want: f32(dims(1, 2, 3), 0.5, 0.5, 1.5, -1, 1, -2)},
		{name: "MaxPool SAME_UPPER", in: f32In("x", 1, 1, 3, 3), x: seq(graphir.F32, 1, 1, 3, 3),
			nodes: []*pb.NodeProto{mkNode("MaxPool", ss("x"), ss("y"), aInts("kernel_shape", 2, 2), aInts("strides", 2, 2), aString("auto_pad", "SAME_UPPER"))},
			ops:   []string{"graph.max_pool2d"}, want: f32(dims(1, 1, 2, 2), 4, 5, 7, 8)},
		{name: "GlobalMaxPool", in: f32In("x", 1, 2, 1, 3), x: seq(graphir.F32, 1, 2, 1, 3),
			nodes: []*pb.NodeProto{mkNode("GlobalMaxPool", ss("x"), ss("y"))}, ops: []string{"graph.reduce_max"}, want: f32(dims(1, 2, 1, 1), 2, 5)},
		{name: "ArgMin opset 11 defaults", opset: 11, in: f32In("x", 2, 3), x: x23,
			nodes: []*pb.NodeProto{mkNode("ArgMin", ss("x"), ss("y"))}, ops: []string{"graph.argmin"}, want: tensor(graphir.I64, dims(1, 3), 0, 0, 0)},
		{name: "ArgMax opset 13 negative axis, no keepdims, last index", opset: 13, in: f32In("x", 2, 3), x: x23,
			nodes: []*pb.NodeProto{mkNode("ArgMax", ss("x"), ss("y"), aInt("axis", -1), aInt("keepdims", 0), aInt("select_last_index", 1))},
			ops:   []string{"graph.argmax"}, want: tensor(graphir.I64, dims(2), 2, 2)},
		{name: "TopK attribute k (opset 9)", opset: 9, in: f32In("x", 2, 3), x: x23,
			nodes: []*pb.NodeProto{mkNode("TopK", ss("x"), ss("y", "i"), aInt("k", 2))}, ops: []string{"graph.topk"}, want: f32(dims(2, 2), 2, 1, 5, 4)},
		{name: "TopK constant K, smallest along axis 0 (opset 11)", opset: 11, in: f32In("x", 2, 3), x: x23, inits: []*pb.TensorProto{i64Tensor("k", dims(1), 1)},
			nodes: []*pb.NodeProto{mkNode("TopK", ss("x", "k"), ss("y", ""), aInt("axis", 0), aInt("largest", 0), aInt("sorted", 0))},
			ops:   []string{"graph.topk"}, want: f32(dims(1, 3), 0, 1, 2)},
		{name: "LogSoftmax opset 13", opset: 13, in: f32In("x", 2, 3), x: x23,
			nodes: []*pb.NodeProto{mkNode("LogSoftmax", ss("x"), ss("y"))}, ops: []string{"graph.log_softmax"},
			want: f32(dims(2, 3), -math.Log(s3), 1-math.Log(s3), 2-math.Log(s3), -math.Log(s3), 1-math.Log(s3), 2-math.Log(s3))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := modelSpec{opset: c.opset, inputs: []*pb.ValueInfoProto{c.in}, outputs: []*pb.ValueInfoProto{out("y")}, inits: c.inits, nodes: c.nodes}
			m := mustImport(t, s)
			var ops []string
			for _, n := range opNames(m) {
				if n != "graph.constant" && n != "func.return" {
					ops = append(ops, n)
				}
			}
			assert.Equal(t, c.ops, ops, "%s", graphir.Print(m))
			got := interpret(t, m, c.x)
			require.Equal(t, c.want.Type.String(), got[0].Type.String())
			require.InDeltaSlice(t, c.want.Data, got[0].Data, 1e-6)
		})
	}
}

// TestTopKIndices: both TopK outputs, largest first, ties by position.
func TestTopKIndices(t *testing.T) {
	s := modelSpec{opset: 13, inputs: []*pb.ValueInfoProto{f32In("x", 2, 4)}, outputs: []*pb.ValueInfoProto{out("v"), out("i")},
		inits: []*pb.TensorProto{i64Tensor("k", dims(1), 3)}, nodes: []*pb.NodeProto{mkNode("TopK", ss("x", "k"), ss("v", "i"))}}
	m := mustImport(t, s)
	got := interpret(t, m, f32(dims(2, 4), 1, 3, 1, 2, -1, -1, -1, -1))
	requireTensor(t, f32(dims(2, 3), 3, 2, 1, -1, -1, -1), got[0])
	requireTensor(t, tensor(graphir.I64, dims(2, 3), 1, 3, 0, 0, 1, 2), got[1])
}
