package onnx

import (
	"testing"

	"github.com/stretchr/testify/require"

	pb "github.com/tessera-ml/tessera/dialects/graph/onnx/onnxpb"
	"github.com/tessera-ml/tessera/graphir"
)

// TestScatterImport: Scatter (opset 9), ScatterElements (11, 16, 17 with
// a max reduction) and ScatterND (13, 16) become graph.scatter_elements and
// graph.scatter_nd with their attributes; indices and updates may be
// runtime inputs or initializers.
func TestScatterImport(t *testing.T) {
	x := seq(graphir.F32, 3, 3)
	i64In := func(name string, d ...any) *pb.ValueInfoProto { return tensorInfo(name, pb.TensorProto_INT64, d...) }
	upd := f32Tensor("u", dims(2, 2), 10, 20, 30, 40)
	for _, c := range []struct {
		name   string
		opset  int64
		node   *pb.NodeProto
		inits  []*pb.TensorProto
		idx    *graphir.Tensor // a runtime input when set
		attrs  string
		result []float64
	}{
		{"Scatter opset 9 axis 1", 9, mkNode("Scatter", ss("x", "i", "u"), ss("y"), aInt("axis", 1)),
			[]*pb.TensorProto{i64Tensor("i", dims(2, 2), 2, 0, 1, 1), upd}, nil, "{axis = 1}",
			[]float64{20, 1, 10, 3, 40, 5, 6, 7, 8}},
		{"ScatterElements opset 11 runtime indices", 11, mkNode("ScatterElements", ss("x", "i", "u"), ss("y")),
			[]*pb.TensorProto{upd}, tensor(graphir.I64, dims(2, 2), -1, 0, 2, 1), "",
			[]float64{0, 20, 2, 3, 40, 5, 30, 7, 8}},
		{"ScatterElements opset 16 add with duplicates", 16, mkNode("ScatterElements", ss("x", "i", "u"), ss("y"), aInt("axis", -1), aString("reduction", "add")),
			[]*pb.TensorProto{i64Tensor("i", dims(2, 2), 1, -2, 0, 0), upd}, nil, `{axis = -1, reduction = "add"}`,
			[]float64{0, 31, 2, 73, 4, 5, 6, 7, 8}},
		{"ScatterElements opset 17 max", 17, mkNode("ScatterElements", ss("x", "i", "u"), ss("y"), aString("reduction", "max")),
			[]*pb.TensorProto{i64Tensor("i", dims(2, 2), 2, 2, 2, 2), f32Tensor("u", dims(2, 2), 10, -20, 5, 40)}, nil, `{reduction = "max"}`,
			[]float64{0, 1, 2, 3, 4, 5, 10, 40, 8}},
		{"ScatterND opset 13", 13, mkNode("ScatterND", ss("x", "i", "u"), ss("y")),
			[]*pb.TensorProto{i64Tensor("i", dims(2, 1), 2, -3), f32Tensor("u", dims(2, 3), 1, 2, 3, 4, 5, 6)}, nil, "",
			[]float64{4, 5, 6, 3, 4, 5, 1, 2, 3}},
		{"ScatterND opset 16 mul, runtime indices", 16, mkNode("ScatterND", ss("x", "i", "u"), ss("y"), aString("reduction", "mul")),
			[]*pb.TensorProto{f32Tensor("u", dims(3), 2, 3, 4)}, tensor(graphir.I64, dims(3, 2), 1, 1, 1, 1, 0, 2), `{reduction = "mul"}`,
			[]float64{0, 1, 8, 3, 24, 5, 6, 7, 8}},
	} {
		t.Run(c.name, func(t *testing.T) {
			inputs := []*pb.ValueInfoProto{f32In("x", 3, 3)}
			args := []*graphir.Tensor{x}
			if c.idx != nil {
				d := make([]any, len(c.idx.Type.Shape))
				for k, v := range c.idx.Type.Shape {
					d[k] = int(v)
				}
				inputs = append(inputs, i64In("i", d...))
				args = append(args, c.idx)
			}
			m := mustImport(t, modelSpec{opset: c.opset, inputs: inputs, outputs: []*pb.ValueInfoProto{out("y")}, inits: c.inits, nodes: []*pb.NodeProto{c.node}})
			text := graphir.Print(m)
			op := "graph.scatter_elements"
			if c.node.GetOpType() == "ScatterND" {
				op = "graph.scatter_nd"
			}
			require.Contains(t, text, op, text)
			if c.attrs != "" {
				require.Contains(t, text, c.attrs, text)
			} else {
				require.NotContains(t, text, "reduction", text)
			}
			got := interpret(t, m, args...)
			require.Equal(t, c.result, got[0].Data)
		})
	}
}

// TestScatterImportErrors: the node's problems name the node.
func TestScatterImportErrors(t *testing.T) {
	inits := []*pb.TensorProto{i64Tensor("i", dims(1, 2), 0, 1), f32Tensor("u", dims(1, 2), 1, 2)}
	for _, c := range []struct {
		node *pb.NodeProto
		msg  string
	}{
		{mkNode("ScatterElements", ss("x", "i", "u"), ss("y"), aString("reduction", "sum")),
			`node #0 (ScatterElements, opset 16): 'graph.scatter_elements' op attribute 'reduction' must be one of ["none" "add" "mul" "max" "min"], got "sum"`},
		{mkNode("Scatter", ss("x", "i", "u"), ss("y"), aString("reduction", "add")),
			"node #0 (Scatter, opset 16): unsupported attribute 'reduction'"},
		{mkNode("ScatterND", ss("x", "i", "u"), ss("y")),
			"node #0 (ScatterND, opset 16): 'graph.scatter_nd' op updates must have shape [1] (indices.shape[:-1] ++ data.shape[2:]), got tensor<1x2xf32>"},
		{mkNode("Scatter", ss("x", "i"), ss("y")), "node #0 (Scatter, opset 16): "},
	} {
		_, err := importSpec(t, modelSpec{opset: 16, inputs: []*pb.ValueInfoProto{f32In("x", 3, 3)}, outputs: []*pb.ValueInfoProto{out("y")}, inits: inits, nodes: []*pb.NodeProto{c.node}})
		require.Error(t, err)
		require.Contains(t, err.Error(), c.msg)
	}
}
