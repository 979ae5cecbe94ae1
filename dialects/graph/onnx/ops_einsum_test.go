package onnx

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/dialects/graph"
	pb "github.com/tessera-ml/tessera/dialects/graph/onnx/onnxpb"
)

// TestEinsumImport: Einsum nodes become graph.einsum with the equation
// as written, over any number of inputs; all-constant inputs fold.
func TestEinsumImport(t *testing.T) {
	s := modelSpec{opset: 12,
		inputs:  []*pb.ValueInfoProto{f32In("a", 2, 3), f32In("b", 3, 2)},
		outputs: []*pb.ValueInfoProto{out("y"), out("z")},
		inits:   []*pb.TensorProto{f32Tensor("v", dims(2), 1, -1)},
		nodes: []*pb.NodeProto{
			mkNode("Einsum", ss("a", "b"), ss("y"), aString("equation", "ij, jk -> ik")),
			mkNode("Einsum", ss("a", "b", "v"), ss("z"), aString("equation", "ij,jk,k")),
		}}
	m := mustImport(t, s)
	assert.Equal(t, []string{graph.EinsumOp, "graph.constant", graph.EinsumOp, "func.return"}, opNames(m))
	a := f32(dims(2, 3), 1, 2, 3, 4, 5, 6)
	b := f32(dims(3, 2), 1, 0, 0, 1, 1, 1)
	got := interpret(t, m, a, b)
	requireTensor(t, f32(dims(2, 2), 4, 5, 10, 11), got[0])
	// z[i] = Σ_k (ab)[i, k] v[k]; implicit output "i".
	requireTensor(t, f32(dims(2), -1, -1), got[1])

	c := modelSpec{opset: 17, outputs: []*pb.ValueInfoProto{out("y")},
		inits: []*pb.TensorProto{f32Tensor("m", dims(2, 2), 1, 2, 3, 4)},
		nodes: []*pb.NodeProto{mkNode("Einsum", ss("m"), ss("y"), aString("equation", "ii"))}}
	cm := mustImport(t, c)
	assert.Equal(t, []string{"graph.constant", "func.return"}, opNames(cm))
	requireTensor(t, f32(nil, 5), interpret(t, cm)[0])
}

// TestEinsumImportErrors: bad nodes are refused with the node named.
func TestEinsumImportErrors(t *testing.T) {
	in := []*pb.ValueInfoProto{f32In("a", 2, 3), f32In("b", 4, 5)}
	cases := []struct {
		opset int64
		node  *pb.NodeProto
		msg   string
	}{
		{11, mkNode("Einsum", ss("a"), ss("y"), aString("equation", "ij->ji")),
			"m.onnx:1:1: error: node #0 (Einsum, opset 11): unsupported: 'Einsum' at opset 11 predates its definition (Einsum-12); re-export the model with opset 12 or later"},
		{12, mkNode("Einsum", ss("a"), ss("y")), "m.onnx:1:1: error: node #0 (Einsum, opset 12): attribute 'equation' is required"},
		{12, mkNode("Einsum", ss("a"), ss("y"), aString("equation", "ij"), aInt("axis", 1)), "node #0 (Einsum, opset 12): unsupported attribute 'axis'"},
		{12, mkNode("Einsum", ss("a"), ss("y"), aInt("equation", 1)), "node #0 (Einsum, opset 12): attribute 'equation' must be STRING, got INT"},
		{12, mkNode("Einsum", ss("a", ""), ss("y"), aString("equation", "ij,->ij")), "node #0 (Einsum, opset 12): input #1 is empty; every Einsum input is required"},
		{12, named(mkNode("Einsum", ss("a", "b"), ss("y"), aString("equation", "ij,jk->ik")), "e"),
			"m.onnx:1:1: error: node #0 'e' (Einsum, opset 12): 'graph.einsum' op equation \"ij,jk->ik\": subscript 'j' has size 3 in operand #0 (tensor<2x3xf32>) but 4 in operand #1 (tensor<4x5xf32>)"},
		{13, mkNode("Einsum", ss("a"), ss("y"), aString("equation", "ij->i$")),
			"node #0 (Einsum, opset 13): 'graph.einsum' op equation \"ij->i$\": invalid character '$' at offset 5"},
		{13, mkNode("Einsum", ss("a", "b"), ss("y"), aString("equation", "ij")), "node #0 (Einsum, opset 13): 'graph.einsum' op equation \"ij\": 1 input terms for 2 operands"},
		{13, mkNode("Einsum", ss("a"), ss("y"), aString("equation", "ijk")), "'graph.einsum' op equation \"ijk\": term #0 \"ijk\" has 3 subscripts but operand #0 has rank 2"},
	}
	for _, c := range cases {
		_, err := importSpec(t, modelSpec{opset: c.opset, inputs: in, outputs: []*pb.ValueInfoProto{out("y")}, nodes: []*pb.NodeProto{c.node}})
		require.Error(t, err, c.msg)
		assert.Contains(t, err.Error(), c.msg)
	}
}
