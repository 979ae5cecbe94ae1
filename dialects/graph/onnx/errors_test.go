package onnx

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	pb "github.com/tessera-ml/tessera/dialects/graph/onnx/onnxpb"
	"github.com/tessera-ml/tessera/graphir"
)

// Every import error is one located diagnostic with a fixed message.
func TestImportErrors(t *testing.T) {
	relu := []*pb.NodeProto{mkNode("Relu", ss("x"), ss("y"))}
	x := []*pb.ValueInfoProto{f32In("x", 2, 3)}
	y := []*pb.ValueInfoProto{out("y")}
	withOpsets := func(ops ...*pb.OperatorSetIdProto) []byte {
		m := modelSpec{inputs: x, outputs: y, nodes: relu}.proto()
		m.OpsetImport = ops
		data, err := proto.Marshal(m)
		require.NoError(t, err)
		return data
	}
	mlp := mlpSpec().bytes(t)
	cases := []struct {
		name string
		data []byte
		msg  string
	}{
		{"empty file", nil, "m.onnx: error: not a valid ONNX model: no ir_version"},
		{"truncated", mlp[:len(mlp)-7], "m.onnx: error: not a valid ONNX model: proto: cannot parse invalid wire-format data"},
		{"random bytes", []byte("\xff\xfe\x00garbage that is not protobuf\x01\x02"), "m.onnx: error: not a valid ONNX model: proto:"},
		{"text file", []byte("func.func @main() {}\n"), "m.onnx: error: not a valid ONNX model: proto:"},
		{"no graph", func() []byte { b, _ := proto.Marshal(&pb.ModelProto{IrVersion: proto.Int64(8)}); return b }(), "m.onnx: error: not a valid ONNX model: no graph"},
		{"no opset", withOpsets(), "m.onnx: error: not a valid ONNX model: no opset_import"},
		{"opset too old", withOpsets(&pb.OperatorSetIdProto{Version: proto.Int64(0)}), "m.onnx: error: unsupported opset 0: Tessera imports ai.onnx opsets 1 to 17 (below 7, only the ops unchanged since)"},
		{"opset too new", withOpsets(&pb.OperatorSetIdProto{Domain: proto.String("ai.onnx"), Version: proto.Int64(18)}), "m.onnx: error: unsupported opset 18: Tessera imports ai.onnx opsets 1 to 17 (below 7, only the ops unchanged since)"},
		{"op changed at opset 7", modelSpec{opset: 6, inputs: x, outputs: y, nodes: []*pb.NodeProto{mkNode("Add", ss("x", "x"), ss("y"))}}.bytes(t),
			"m.onnx:1:1: error: node #0 (Add, opset 6): unsupported: 'Add' at opset 6: its definition changed at opset 7 or later, and Tessera reads models of opsets 1 to 6 only for the ops that mean the same as at opset 7; re-export the model with opset 7 or later"},
		{"op older than its opset-7 definition", modelSpec{opset: 5, inputs: x, outputs: y, nodes: []*pb.NodeProto{mkNode("Elu", ss("x"), ss("y"))}}.bytes(t),
			"m.onnx:1:1: error: node #0 (Elu, opset 5): unsupported: 'Elu' at opset 5 predates the definition Tessera implements (Elu-6); re-export the model with opset 6 or later"},
		{"only a custom domain", withOpsets(&pb.OperatorSetIdProto{Domain: proto.String("com.microsoft"), Version: proto.Int64(1)}),
			"m.onnx: error: unsupported: the model imports no default-domain (ai.onnx) operator set; only ai.onnx is supported"},
		{"unknown dim", modelSpec{inputs: []*pb.ValueInfoProto{f32In("x", 2, nil)}, outputs: y, nodes: relu}.bytes(t),
			"m.onnx: error: dynamic shape: input 'x' dimension 1 is unknown (neither a number nor a named symbol); Tessera needs its size or name"},
		{"symbolic input of an op that needs shapes", modelSpec{inputs: []*pb.ValueInfoProto{f32In("x", "batch", 3)}, outputs: y, nodes: []*pb.NodeProto{mkNode("Shape", ss("x"), ss("y"))}}.bytes(t),
			"m.onnx: error: graph output 'y' is a shape value [batch, 3] over symbolic dimensions, which Tessera computes only at import; pin them with --fix-dim batch=N"},
		{"symbolic input of a graph op that needs shapes", modelSpec{inputs: []*pb.ValueInfoProto{f32In("x", "batch", 3)}, outputs: y, nodes: []*pb.NodeProto{mkNode("Tile", ss("x", "r"), ss("y"))},
			inits: []*pb.TensorProto{{Name: proto.String("r"), DataType: pbType(pb.TensorProto_INT64), Dims: []int64{2}, Int64Data: []int64{2, 1}}}}.bytes(t),
			"does not take symbolic dimensions yet ('batch'); pin them with --fix-dim batch=N"},
		{"no input shape", modelSpec{inputs: []*pb.ValueInfoProto{{Name: proto.String("x"), Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{TensorType: &pb.TypeProto_Tensor{ElemType: proto.Int32(1)}}}}}, outputs: y, nodes: relu}.bytes(t),
			"m.onnx: error: dynamic shape: input 'x' has no shape; Tessera needs static shapes"},
		{"string input", modelSpec{inputs: []*pb.ValueInfoProto{tensorInfo("x", pb.TensorProto_STRING, 2)}, outputs: y, nodes: relu}.bytes(t),
			"m.onnx: error: input 'x': unsupported element type STRING"},
		{"external data", modelSpec{inputs: x, outputs: y, nodes: []*pb.NodeProto{mkNode("Add", ss("x", "w"), ss("y"))},
			inits: []*pb.TensorProto{{Name: proto.String("w"), DataType: pbType(pb.TensorProto_FLOAT), Dims: []int64{3}, DataLocation: pb.TensorProto_EXTERNAL.Enum(),
				ExternalData: []*pb.StringStringEntryProto{{Key: proto.String("location"), Value: proto.String("weights.bin")}}}}}.bytes(t),
			"m.onnx: error: initializer: tensor 'w' keeps its data in an external file, which Tessera does not read"},
		{"unsupported op", modelSpec{inputs: x, outputs: y, nodes: []*pb.NodeProto{named(mkNode("Loop", ss("x"), ss("y")), "loop")}}.bytes(t),
			"m.onnx:1:1: error: node #0 'loop' (Loop, opset 13): unsupported op 'Loop' (the supported ops are listed in the README's \"Importing ONNX models\" section)"},
		{"every unsupported op at once", modelSpec{inputs: x, outputs: y, nodes: []*pb.NodeProto{
			named(mkNode("Loop", ss("x"), ss("a")), "loop"), mkNode("Relu", ss("a"), ss("b")), mkNode("RoiAlign", ss("b"), ss("c")), mkNode("Unique", ss("c"), ss("y"))}}.bytes(t),
			"m.onnx:1:1: error: node #0 'loop' (Loop, opset 13): unsupported op 'Loop' (the supported ops are listed in the README's \"Importing ONNX models\" section)\n" +
				"m.onnx:3:1: error: node #2 (RoiAlign, opset 13): unsupported op 'RoiAlign' (the supported ops are listed in the README's \"Importing ONNX models\" section)\n" +
				"m.onnx:4:1: error: node #3 (Unique, opset 13): unsupported op 'Unique' (the supported ops are listed in the README's \"Importing ONNX models\" section)"},
		{"custom domain node", modelSpec{inputs: x, outputs: y, nodes: []*pb.NodeProto{func() *pb.NodeProto {
			n := mkNode("Relu", ss("x"), ss("y"))
			n.Domain = proto.String("com.microsoft")
			return n
		}()}}.bytes(t), "m.onnx:1:1: error: node #0 (Relu, opset 13): unsupported operator domain 'com.microsoft'; only the default ONNX domain (ai.onnx) is supported"},
		{"undefined input", modelSpec{inputs: x, outputs: y, nodes: []*pb.NodeProto{mkNode("Relu", ss("x"), ss("r")), mkNode("Add", ss("r", "nope"), ss("y"))}}.bytes(t),
			"m.onnx:2:1: error: node #1 (Add, opset 13): input 'nope' is not defined before this node"},
		{"output not produced", modelSpec{inputs: x, outputs: []*pb.ValueInfoProto{out("z")}, nodes: relu}.bytes(t),
			"m.onnx: error: graph output 'z' is not produced by any node"},
		{"output type mismatch", modelSpec{inputs: x, outputs: []*pb.ValueInfoProto{f32In("y", 3, 2)}, nodes: relu}.bytes(t),
			"m.onnx: error: output 'y' dimension 0 is declared 3 but computes tensor<2x3xf32>"},
		{"float Gather indices", modelSpec{inputs: []*pb.ValueInfoProto{f32In("x", 2, 3), f32In("i", 2)}, outputs: y,
			nodes: []*pb.NodeProto{mkNode("Gather", ss("x", "i"), ss("y"))}}.bytes(t),
			"m.onnx:1:1: error: node #0 (Gather, opset 13): 'graph.gather' op indices must have an integer element type, got tensor<2xf32>"},
		{"non-constant Reshape shape", modelSpec{inputs: []*pb.ValueInfoProto{f32In("x", 2, 3), tensorInfo("s", pb.TensorProto_INT64, 1)}, outputs: y,
			nodes: []*pb.NodeProto{mkNode("Reshape", ss("x", "s"), ss("y"))}}.bytes(t),
			"m.onnx:1:1: error: node #0 (Reshape, opset 13): unsupported: input #1 (shape) must be a constant (an initializer or computable at import time)"},
		{"non-constant TopK K", modelSpec{inputs: []*pb.ValueInfoProto{f32In("x", 2, 3), tensorInfo("k", pb.TensorProto_INT64, 1)}, outputs: y,
			nodes: []*pb.NodeProto{mkNode("TopK", ss("x", "k"), ss("y", "i"))}}.bytes(t),
			"m.onnx:1:1: error: node #0 (TopK, opset 13): unsupported: input #1 (K) must be a constant (an initializer or computable at import time)"},
		{"TopK without k (opset 9)", modelSpec{opset: 9, inputs: x, outputs: y, nodes: []*pb.NodeProto{mkNode("TopK", ss("x"), ss("y", "i"))}}.bytes(t),
			"m.onnx:1:1: error: node #0 (TopK, opset 9): attribute 'k' is required before opset 10"},
		{"TopK K above the axis", modelSpec{inputs: x, outputs: y, inits: []*pb.TensorProto{i64Tensor("k", dims(1), 4)},
			nodes: []*pb.NodeProto{mkNode("TopK", ss("x", "k"), ss("y", "i"))}}.bytes(t),
			"m.onnx:1:1: error: node #0 (TopK, opset 13): 'graph.topk' op k = 4 exceeds the size 3 of dimension 1 (the axis) of tensor<2x3xf32>"},
		{"TopK K of two elements", modelSpec{inputs: x, outputs: y, inits: []*pb.TensorProto{i64Tensor("k", dims(2), 1, 1)},
			nodes: []*pb.NodeProto{mkNode("TopK", ss("x", "k"), ss("y", "i"))}}.bytes(t),
			"m.onnx:1:1: error: node #0 (TopK, opset 13): input #1 (K) must hold one element, got 2"},
		{"ArgMax of bool", modelSpec{inputs: []*pb.ValueInfoProto{tensorInfo("x", pb.TensorProto_BOOL, 2)}, outputs: y,
			nodes: []*pb.NodeProto{mkNode("ArgMax", ss("x"), ss("y"))}}.bytes(t),
			"m.onnx:1:1: error: node #0 (ArgMax, opset 13): 'graph.argmax' op requires a numeric (float or integer, not i1) element type, got tensor<2xi1>"},
		{"RNN sequence_lens count", modelSpec{inputs: []*pb.ValueInfoProto{f32In("x", 4, 2, 3)}, outputs: y,
			inits: []*pb.TensorProto{f32Tensor("w", dims(1, 5, 3), make([]float32, 15)...), f32Tensor("r", dims(1, 5, 5), make([]float32, 25)...), i64Tensor("l", dims(3), 4, 2, 1)},
			nodes: []*pb.NodeProto{mkNode("RNN", ss("x", "w", "r", "", "l"), ss("y"), aInt("hidden_size", 5))}}.bytes(t),
			"m.onnx:1:1: error: node #0 (RNN, opset 13): sequence_lens must have one length per batch entry (2), got 3"},
		{"RNN sequence_lens above the sequence length", modelSpec{inputs: []*pb.ValueInfoProto{f32In("x", 4, 2, 3)}, outputs: y,
			inits: []*pb.TensorProto{f32Tensor("w", dims(1, 5, 3), make([]float32, 15)...), f32Tensor("r", dims(1, 5, 5), make([]float32, 25)...), i64Tensor("l", dims(2), 4, 6)},
			nodes: []*pb.NodeProto{mkNode("RNN", ss("x", "w", "r", "", "l"), ss("y"), aInt("hidden_size", 5))}}.bytes(t),
			"m.onnx:1:1: error: node #0 (RNN, opset 13): 'graph.rnn' op sequence_lens[1] = 6 is outside [0, 4] (the sequence length)"},
		{"1-D conv", modelSpec{inputs: []*pb.ValueInfoProto{f32In("x", 1, 1, 5)}, outputs: y, inits: []*pb.TensorProto{f32Tensor("w", dims(1, 1, 2), 1, 1)},
			nodes: []*pb.NodeProto{mkNode("Conv", ss("x", "w"), ss("y"))}}.bytes(t),
			"m.onnx:1:1: error: node #0 (Conv, opset 13): unsupported: 1-D Conv (only 2-D, i.e. N×C×H×W inputs, is supported)"},
		{"3-D conv", modelSpec{inputs: []*pb.ValueInfoProto{f32In("x", 1, 1, 2, 2, 2)}, outputs: y, inits: []*pb.TensorProto{f32Tensor("w", dims(1, 1, 1, 1, 1), 1)},
			nodes: []*pb.NodeProto{mkNode("Conv", ss("x", "w"), ss("y"))}}.bytes(t),
			"m.onnx:1:1: error: node #0 (Conv, opset 13): unsupported: 3-D Conv (only 2-D, i.e. N×C×H×W inputs, is supported)"},
		{"bad auto_pad", modelSpec{inputs: []*pb.ValueInfoProto{f32In("x", 1, 1, 2, 2)}, outputs: y, nodes: []*pb.NodeProto{mkNode("MaxPool", ss("x"), ss("y"), aInts("kernel_shape", 1, 1), aString("auto_pad", "SAME_MIDDLE"))}}.bytes(t),
			"m.onnx:1:1: error: node #0 (MaxPool, opset 13): unsupported auto_pad value 'SAME_MIDDLE'"},
		{"training batch norm", modelSpec{opset: 15, inputs: []*pb.ValueInfoProto{f32In("x", 1, 1, 2, 2)}, outputs: y,
			inits: []*pb.TensorProto{f32Tensor("s", dims(1), 1), f32Tensor("b", dims(1), 0), f32Tensor("m", dims(1), 0), f32Tensor("v", dims(1), 1)},
			nodes: []*pb.NodeProto{mkNode("BatchNormalization", ss("x", "s", "b", "m", "v"), ss("y"), aInt("training_mode", 1))}}.bytes(t),
			"m.onnx:1:1: error: node #0 (BatchNormalization, opset 15): unsupported: training_mode = 1 (only inference is supported)"},
		{"attribute of the wrong kind", modelSpec{inputs: x, outputs: y, nodes: []*pb.NodeProto{mkNode("LeakyRelu", ss("x"), ss("y"), aInt("alpha", 1))}}.bytes(t),
			"m.onnx:1:1: error: node #0 (LeakyRelu, opset 13): attribute 'alpha' must be FLOAT, got INT"},
		{"graph op shape error", modelSpec{inputs: []*pb.ValueInfoProto{f32In("x", 2, 3), f32In("z", 4, 3)}, outputs: y, nodes: []*pb.NodeProto{mkNode("Add", ss("x", "z"), ss("y"))}}.bytes(t),
			"m.onnx:1:1: error: node #0 (Add, opset 13): "},
		{"Range with zero delta", modelSpec{inputs: x, outputs: []*pb.ValueInfoProto{out("r")}, inits: []*pb.TensorProto{i64Tensor("a", nil, 0), i64Tensor("d", nil, 0)},
			nodes: []*pb.NodeProto{mkNode("Range", ss("a", "a", "d"), ss("r"))}}.bytes(t),
			"m.onnx:1:1: error: node #0 (Range, opset 13): delta must not be 0"},
		{"folding too large", modelSpec{inputs: x, outputs: []*pb.ValueInfoProto{out("r")}, inits: []*pb.TensorProto{i64Tensor("s", dims(3), 1<<20, 1<<20, 1<<20)},
			nodes: []*pb.NodeProto{mkNode("ConstantOfShape", ss("s"), ss("r"))}}.bytes(t),
			"m.onnx:1:1: error: node #0 (ConstantOfShape, opset 13): constant of shape [1048576 1048576 1048576] is too large to fold"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := ImportBytes("m.onnx", c.data)
			require.Error(t, err)
			require.Nil(t, m)
			assert.Contains(t, err.Error(), c.msg)
			_, isDiag := err.(*graphir.Diagnostic)
			_, isDiags := err.(graphir.Diagnostics)
			assert.True(t, isDiag || isDiags, "want diagnostics, got %T", err)
		})
	}
}

func TestImportFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "mlp.onnx")
	require.NoError(t, os.WriteFile(path, mlpSpec().bytes(t), 0o644))
	m, err := Import(path)
	require.NoError(t, err)
	assert.Equal(t, path, m.Lookup("main").Entry().First().Loc.File)

	_, err = Import(filepath.Join(dir, "missing.onnx"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "missing.onnx: error: cannot read model: open ")
}

// An op whose graph op is not registered is reported as unsupported
// instead of being built.
func TestUnregisteredGraphOp(t *testing.T) {
	n := &node{p: mkNode("Foo", nil, nil), idx: 2, loc: graphir.Location{File: "m.onnx", Line: 3, Col: 1}, opset: 13}
	_, err := n.emit("graph.no_such_op", nil, nil)
	require.Error(t, err)
	assert.Equal(t, "m.onnx:3:1: error: node #2 (Foo, opset 13): unsupported: needs graph op 'graph.no_such_op', which is not available", err.Error())
}
