package onnx

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/dialects/graph"
	pb "github.com/tessera-ml/tessera/dialects/graph/onnx/onnxpb"
	"github.com/tessera-ml/tessera/graphir"
)

// TestLegacySinceIsConsistent: every op of legacySince is one the importer
// converts, dated before opset 7.
func TestLegacySinceIsConsistent(t *testing.T) {
	for op, since := range legacySince {
		_, conv := converters[op]
		assert.True(t, conv || graph.ONNXOp(op) != nil, "legacySince lists %s, which the importer does not convert", op)
		assert.True(t, since >= MinLegacyOpset && since < MinOpset, "%s: version %d", op, since)
	}
}

// TestImportLegacyOpsets: an opset-1 Softplus, an opset-6 Elu and Relu
// model import as at opset 7; an op whose opset-7 definition came later
// is refused (TestImportErrors has the messages).
func TestImportLegacyOpsets(t *testing.T) {
	x, y := []*pb.ValueInfoProto{f32In("x", 2, 3)}, []*pb.ValueInfoProto{f32In("y", 2, 3)}
	for _, c := range []struct {
		opset int64
		nodes []*pb.NodeProto
		want  []string
	}{
		{1, []*pb.NodeProto{mkNode("Softplus", ss("x"), ss("y"))}, []string{"graph.softplus"}},
		{6, []*pb.NodeProto{mkNode("Elu", ss("x"), ss("a"), aFloat("alpha", 2)), mkNode("Relu", ss("a"), ss("y"))}, []string{"graph.elu", "graph.relu"}},
		{6, []*pb.NodeProto{mkNode("Softsign", ss("x"), ss("y"))}, []string{"graph.softsign"}},
	} {
		m, err := ImportBytes("m.onnx", modelSpec{opset: c.opset, inputs: x, outputs: y, nodes: c.nodes}.bytes(t))
		require.NoError(t, err, "opset %d", c.opset)
		var got []string
		m.Walk(func(op *graphir.Op) {
			if op.Name != graphir.ReturnOpName {
				got = append(got, op.Name)
			}
		})
		assert.Equal(t, c.want, got)
	}
	_, err := ImportBytes("m.onnx", modelSpec{opset: 6, inputs: x, outputs: y, nodes: []*pb.NodeProto{
		mkNode("Relu", ss("x"), ss("a")), mkNode("Dropout", ss("a"), ss("y"))}}.bytes(t))
	require.ErrorContains(t, err, "node #1 (Dropout, opset 6): unsupported: 'Dropout' at opset 6")
}
