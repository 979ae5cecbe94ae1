package onnx

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	pb "github.com/tessera-ml/tessera/dialects/graph/onnx/onnxpb"
	"github.com/tessera-ml/tessera/graphir"
)

func i64(shape []int64, vals ...float64) *graphir.Tensor { return tensor(graphir.I64, shape, vals...) }
func f32(shape []int64, vals ...float64) *graphir.Tensor { return tensor(graphir.F32, shape, vals...) }
func dims(d ...int64) []int64                            { return d }

// The shape-computation chain of PyTorch's x.view(x.size(0), -1) folds:
// Shape → Gather → Unsqueeze → Concat → Reshape becomes one graph.reshape
// with a constant target.
func TestFoldShapeChain(t *testing.T) {
	s := modelSpec{
		opset:   13,
		inputs:  []*pb.ValueInfoProto{f32In("x", 2, 3, 4)},
		outputs: []*pb.ValueInfoProto{f32In("y", 2, 12)},
		inits:   []*pb.TensorProto{i64Tensor("zero", nil, 0), i64Tensor("axes", []int64{1}, 0), i64Tensor("minus1", []int64{1}, -1)},
		nodes: []*pb.NodeProto{
			mkNode("Shape", ss("x"), ss("s")),
			mkNode("Gather", ss("s", "zero"), ss("d0"), aInt("axis", 0)),
			mkNode("Unsqueeze", ss("d0", "axes"), ss("u")),
			mkNode("Concat", ss("u", "minus1"), ss("shape"), aInt("axis", 0)),
			mkNode("Reshape", ss("x", "shape"), ss("y")),
		},
	}
	m := mustImport(t, s)
	assert.Equal(t, []string{"graph.reshape", "func.return"}, opNames(m))
	assert.Contains(t, graphir.Print(m), "graph.reshape %arg0 {shape = [2, 12]}")
	x := f32(dims(2, 3, 4))
	x.Data = make([]float64, 24)
	for i := range x.Data {
		x.Data[i] = float64(i)
	}
	got := interpret(t, m, x)
	requireTensor(t, &graphir.Tensor{Type: graphir.NewTensor(graphir.F32, 2, 12), Data: x.Data}, got[0])
}

// foldCase is a graph whose outputs are all constants: after import @main
// holds only graph.constant ops and the return.
type foldCase struct {
	name  string
	opset int64
	inits []*pb.TensorProto
	nodes []*pb.NodeProto
	outs  []string
	want  []*graphir.Tensor
}

func TestFoldRules(t *testing.T) {
	maxI64, minI64 := int64(math.MaxInt64), int64(math.MinInt64)
	range10 := i64Tensor("r", []int64{10}, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9)
	cases := []foldCase{
		{name: "Shape", nodes: []*pb.NodeProto{mkNode("Shape", ss("x"), ss("y"))}, want: []*graphir.Tensor{i64(dims(2), 2, 3)}},
		{name: "Shape start end", opset: 15, nodes: []*pb.NodeProto{mkNode("Shape", ss("x"), ss("y"), aInt("start", -1))}, want: []*graphir.Tensor{i64(dims(1), 3)}},
		{name: "Size", nodes: []*pb.NodeProto{mkNode("Size", ss("x"), ss("y"))}, want: []*graphir.Tensor{i64(nil, 6)}},
		{name: "Cast int to float", inits: []*pb.TensorProto{i64Tensor("a", dims(3), 1, 2, 3)},
			nodes: []*pb.NodeProto{mkNode("Cast", ss("a"), ss("y"), aInt("to", int64(pb.TensorProto_FLOAT)))}, want: []*graphir.Tensor{f32(dims(3), 1, 2, 3)}},
		{name: "Cast float to int truncates", inits: []*pb.TensorProto{f32Tensor("a", dims(2), 1.7, -1.7)},
			nodes: []*pb.NodeProto{mkNode("Cast", ss("a"), ss("y"), aInt("to", int64(pb.TensorProto_INT64)))}, want: []*graphir.Tensor{i64(dims(2), 1, -1)}},
		{name: "Cast to bool", inits: []*pb.TensorProto{f32Tensor("a", dims(2), 0, 2.5)},
			nodes: []*pb.NodeProto{mkNode("Cast", ss("a"), ss("y"), aInt("to", int64(pb.TensorProto_BOOL)))}, want: []*graphir.Tensor{tensor(graphir.I1, dims(2), 0, 1)}},
		{name: "integer arithmetic", inits: []*pb.TensorProto{i64Tensor("a", dims(2), 7, -7), i64Tensor("b", nil, 2)},
			nodes: []*pb.NodeProto{
				mkNode("Div", ss("a", "b"), ss("q")), mkNode("Mul", ss("q", "b"), ss("p")),
				mkNode("Sub", ss("a", "p"), ss("r")), mkNode("Add", ss("q", "r"), ss("y")),
			}, outs: ss("q", "y"), want: []*graphir.Tensor{i64(dims(2), 3, -3), i64(dims(2), 4, -4)}},
		{name: "Equal Where", inits: []*pb.TensorProto{i64Tensor("a", dims(3), 1, 2, 3), i64Tensor("b", dims(3), 1, 0, 3), i64Tensor("t", dims(3), 10, 20, 30), i64Tensor("f", dims(1), -1)},
			nodes: []*pb.NodeProto{mkNode("Equal", ss("a", "b"), ss("c")), mkNode("Where", ss("c", "t", "f"), ss("y"))},
			outs:  ss("c", "y"), want: []*graphir.Tensor{tensor(graphir.I1, dims(3), 1, 0, 1), i64(dims(3), 10, -1, 30)}},
		{name: "compare and logic", inits: []*pb.TensorProto{i64Tensor("a", dims(3), 1, 2, 3), i64Tensor("b", nil, 2)},
			nodes: []*pb.NodeProto{
				mkNode("Less", ss("a", "b"), ss("l")), mkNode("GreaterOrEqual", ss("a", "b"), ss("g")),
				mkNode("Or", ss("l", "g"), ss("o")), mkNode("And", ss("l", "g"), ss("n")), mkNode("Not", ss("n"), ss("y")),
			}, outs: ss("l", "g", "o", "y"),
			want: []*graphir.Tensor{tensor(graphir.I1, dims(3), 1, 0, 0), tensor(graphir.I1, dims(3), 0, 1, 1), tensor(graphir.I1, dims(3), 1, 1, 1), tensor(graphir.I1, dims(3), 1, 1, 1)}},
		{name: "Neg Abs", inits: []*pb.TensorProto{i64Tensor("a", dims(2), 4, -5)},
			nodes: []*pb.NodeProto{mkNode("Neg", ss("a"), ss("n")), mkNode("Abs", ss("a"), ss("y"))},
			outs:  ss("n", "y"), want: []*graphir.Tensor{i64(dims(2), -4, 5), i64(dims(2), 4, 5)}},
		{name: "ConstantOfShape", inits: []*pb.TensorProto{i64Tensor("s", dims(2), 2, 2)},
			nodes: []*pb.NodeProto{mkNode("ConstantOfShape", ss("s"), ss("y"), aTensor("value", i64Tensor("", dims(1), 5))), mkNode("ConstantOfShape", ss("s"), ss("z"))},
			outs:  ss("y", "z"), want: []*graphir.Tensor{i64(dims(2, 2), 5, 5, 5, 5), f32(dims(2, 2), 0, 0, 0, 0)}},
		{name: "Range", inits: []*pb.TensorProto{i64Tensor("a", nil, 1), i64Tensor("b", nil, 10), i64Tensor("c", nil, 3), f32Tensor("fa", nil, 0), f32Tensor("fb", nil, 1), f32Tensor("fc", nil, 0.25)},
			nodes: []*pb.NodeProto{mkNode("Range", ss("a", "b", "c"), ss("y")), mkNode("Range", ss("fa", "fb", "fc"), ss("z")), mkNode("Range", ss("b", "a", "c"), ss("e"))},
			outs:  ss("y", "z", "e"), want: []*graphir.Tensor{i64(dims(3), 1, 4, 7), f32(dims(4), 0, 0.25, 0.5, 0.75), i64(dims(0))}},
		{name: "Expand", inits: []*pb.TensorProto{i64Tensor("a", dims(2, 1), 1, 2), i64Tensor("s", dims(2), 1, 3)},
			nodes: []*pb.NodeProto{mkNode("Expand", ss("a", "s"), ss("y"))}, want: []*graphir.Tensor{i64(dims(2, 3), 1, 1, 1, 2, 2, 2)}},
		{name: "Slice clamps", inits: []*pb.TensorProto{range10, i64Tensor("s", dims(1), -3), i64Tensor("e", dims(1), maxI64)},
			nodes: []*pb.NodeProto{mkNode("Slice", ss("r", "s", "e"), ss("y"))}, want: []*graphir.Tensor{i64(dims(3), 7, 8, 9)}},
		{name: "Slice negative step", inits: []*pb.TensorProto{range10, i64Tensor("s", dims(1), -1), i64Tensor("e", dims(1), minI64), i64Tensor("ax", dims(1), 0), i64Tensor("st", dims(1), -2)},
			nodes: []*pb.NodeProto{mkNode("Slice", ss("r", "s", "e", "ax", "st"), ss("y"))}, want: []*graphir.Tensor{i64(dims(5), 9, 7, 5, 3, 1)}},
		{name: "Slice attributes (opset 9)", opset: 9, inits: []*pb.TensorProto{range10},
			nodes: []*pb.NodeProto{mkNode("Slice", ss("r"), ss("y"), aInts("starts", 2), aInts("ends", -5))}, want: []*graphir.Tensor{i64(dims(3), 2, 3, 4)}},
		{name: "Squeeze Unsqueeze attributes (opset 11)", opset: 11, inits: []*pb.TensorProto{i64Tensor("a", dims(1, 2, 1), 3, 4)},
			nodes: []*pb.NodeProto{mkNode("Squeeze", ss("a"), ss("q")), mkNode("Unsqueeze", ss("q"), ss("y"), aInts("axes", -1, 0))},
			outs:  ss("q", "y"), want: []*graphir.Tensor{i64(dims(2), 3, 4), i64(dims(1, 2, 1), 3, 4)}},
		{name: "Tile", inits: []*pb.TensorProto{i64Tensor("a", dims(2), 1, 2), i64Tensor("n", dims(1), 2)},
			nodes: []*pb.NodeProto{mkNode("Tile", ss("a", "n"), ss("y"))}, want: []*graphir.Tensor{i64(dims(4), 1, 2, 1, 2)}},
		{name: "Transpose", inits: []*pb.TensorProto{i64Tensor("a", dims(2, 3), 1, 2, 3, 4, 5, 6)},
			nodes: []*pb.NodeProto{mkNode("Transpose", ss("a"), ss("y"))}, want: []*graphir.Tensor{i64(dims(3, 2), 1, 4, 2, 5, 3, 6)}},
		{name: "Split", inits: []*pb.TensorProto{i64Tensor("a", dims(6), 1, 2, 3, 4, 5, 6), i64Tensor("sp", dims(2), 2, 4)},
			nodes: []*pb.NodeProto{mkNode("Split", ss("a", "sp"), ss("p", "q"))}, outs: ss("p", "q"), want: []*graphir.Tensor{i64(dims(2), 1, 2), i64(dims(4), 3, 4, 5, 6)}},
		{name: "Concat Gather", inits: []*pb.TensorProto{i64Tensor("a", dims(2, 1), 1, 2), i64Tensor("b", dims(2, 2), 3, 4, 5, 6), i64Tensor("i", dims(2), -1, 0)},
			nodes: []*pb.NodeProto{mkNode("Concat", ss("a", "b"), ss("c"), aInt("axis", 1)), mkNode("Gather", ss("c", "i"), ss("y"), aInt("axis", 1))},
			outs:  ss("c", "y"), want: []*graphir.Tensor{i64(dims(2, 3), 1, 3, 4, 2, 5, 6), i64(dims(2, 2), 4, 1, 6, 2)}},
		{name: "Flatten Identity Reshape", inits: []*pb.TensorProto{i64Tensor("a", dims(2, 1, 2), 1, 2, 3, 4), i64Tensor("s", dims(2), 0, -1)},
			nodes: []*pb.NodeProto{mkNode("Flatten", ss("a"), ss("f"), aInt("axis", 2)), mkNode("Identity", ss("a"), ss("i")), mkNode("Reshape", ss("i", "s"), ss("y"))},
			outs:  ss("f", "y"), want: []*graphir.Tensor{i64(dims(2, 2), 1, 2, 3, 4), i64(dims(2, 2), 1, 2, 3, 4)}},
		{name: "Constant", nodes: []*pb.NodeProto{mkNode("Constant", nil, ss("y"), aInts("value_ints", 4, 5)), mkNode("Constant", nil, ss("z"), aFloat("value_float", 0.5))},
			outs: ss("y", "z"), want: []*graphir.Tensor{i64(dims(2), 4, 5), f32(nil, 0.5)}},
		{name: "Dropout mask (opset 13: bool)", nodes: []*pb.NodeProto{mkNode("Dropout", ss("x"), ss("d", "y"))},
			want: []*graphir.Tensor{tensor(graphir.I1, dims(2, 3), 1, 1, 1, 1, 1, 1)}},
		{name: "Dropout mask (opset 9: input type)", opset: 9, nodes: []*pb.NodeProto{mkNode("Dropout", ss("x"), ss("d", "y"))},
			want: []*graphir.Tensor{f32(dims(2, 3), 1, 1, 1, 1, 1, 1)}},
		{name: "Xor", inits: []*pb.TensorProto{{Name: strp("a"), DataType: pbType(pb.TensorProto_BOOL), Dims: dims(4), Int32Data: []int32{0, 0, 1, 1}},
			{Name: strp("b"), DataType: pbType(pb.TensorProto_BOOL), Dims: dims(4), Int32Data: []int32{0, 1, 0, 1}}},
			nodes: []*pb.NodeProto{mkNode("Xor", ss("a", "b"), ss("y"))}, want: []*graphir.Tensor{tensor(graphir.I1, dims(4), 0, 1, 1, 0)}},
		{name: "graph evaluator (Relu, Sqrt)", inits: []*pb.TensorProto{f32Tensor("a", dims(2), -1, 4)},
			nodes: []*pb.NodeProto{mkNode("Relu", ss("a"), ss("r")), mkNode("Sqrt", ss("r"), ss("y"))}, want: []*graphir.Tensor{f32(dims(2), 0, 2)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			outs := c.outs
			if outs == nil {
				outs = ss("y")
			}
			s := modelSpec{opset: c.opset, inputs: []*pb.ValueInfoProto{f32In("x", 2, 3)}, inits: c.inits, nodes: c.nodes}
			for _, o := range outs {
				s.outputs = append(s.outputs, out(o))
			}
			m := mustImport(t, s)
			for _, op := range m.Lookup("main").Entry().Ops() {
				require.Contains(t, []string{"graph.constant", "func.return"}, op.Name, "not folded:\n%s", graphir.Print(m))
			}
			got := interpret(t, m, f32(dims(2, 3), 1, 2, 3, 4, 5, 6))
			require.Len(t, got, len(c.want))
			for i := range c.want {
				requireTensor(t, c.want[i], got[i])
			}
		})
	}
}
