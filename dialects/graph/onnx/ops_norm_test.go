package onnx

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	pb "github.com/tessera-ml/tessera/dialects/graph/onnx/onnxpb"
)

// TestLpNormalization: p = 1 and p = 2 along the last and the first axis,
// against hand-computed norms.
func TestLpNormalization(t *testing.T) {
	x := f32(dims(2, 3), 3, -4, 0, 1, 2, -2)
	for _, c := range []struct {
		attrs []*pb.AttributeProto
		want  []float64
	}{
		{nil, []float64{0.6, -0.8, 0, 1.0 / 3, 2.0 / 3, -2.0 / 3}},
		{[]*pb.AttributeProto{aInt("p", 1)}, []float64{3.0 / 7, -4.0 / 7, 0, 0.2, 0.4, -0.4}},
		{[]*pb.AttributeProto{aInt("axis", 0), aInt("p", 2)}, []float64{3 / math.Sqrt(10), -4 / math.Sqrt(20), 0, 1 / math.Sqrt(10), 2 / math.Sqrt(20), -1}},
	} {
		s := modelSpec{opset: 13, inputs: []*pb.ValueInfoProto{f32In("x", 2, 3)}, outputs: []*pb.ValueInfoProto{out("y")},
			nodes: []*pb.NodeProto{mkNode("LpNormalization", ss("x"), ss("y"), c.attrs...)}}
		got := interpret(t, mustImport(t, s), x)
		require.InDeltaSlice(t, c.want, got[0].Data, 1e-6)
	}
	s := modelSpec{opset: 13, inputs: []*pb.ValueInfoProto{f32In("x", 2, 3)}, outputs: []*pb.ValueInfoProto{out("y")},
		nodes: []*pb.NodeProto{mkNode("LpNormalization", ss("x"), ss("y"), aInt("p", 3))}}
	_, err := importSpec(t, s)
	require.ErrorContains(t, err, "p must be 1 or 2, got 3")
}
