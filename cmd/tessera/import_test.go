package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	pb "github.com/tessera-ml/tessera/dialects/graph/onnx/onnxpb"
	rt "github.com/tessera-ml/tessera/runtime"
)

// writeImportModel writes a model y = Relu(Gemm(x, W, B)) with x of shape
// [1, k] (dims as given: an int is static, a string symbolic), W k×n,
// plus extra nodes appended after the Relu (reading "y0", writing "y").
func writeImportModel(t *testing.T, path string, batch any, k, n int, tail ...*pb.NodeProto) {
	t.Helper()
	dim := func(d any) *pb.TensorShapeProto_Dimension {
		if s, ok := d.(string); ok {
			return &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimParam{DimParam: s}}
		}
		return &pb.TensorShapeProto_Dimension{Value: &pb.TensorShapeProto_Dimension_DimValue{DimValue: int64(d.(int))}}
	}
	w := make([]float32, k*n)
	for i := range w {
		w[i] = float32(i%7) - 3
	}
	b := make([]float32, n)
	nodes := []*pb.NodeProto{
		{OpType: proto.String("Gemm"), Input: []string{"x", "W", "B"}, Output: []string{"h"}},
		{OpType: proto.String("Relu"), Input: []string{"h"}, Output: []string{"y0"}},
	}
	if len(tail) == 0 {
		tail = []*pb.NodeProto{{OpType: proto.String("Identity"), Input: []string{"y0"}, Output: []string{"y"}}}
	}
	m := &pb.ModelProto{
		IrVersion:   proto.Int64(8),
		OpsetImport: []*pb.OperatorSetIdProto{{Version: proto.Int64(13)}},
		Graph: &pb.GraphProto{
			Name: proto.String("mlp"),
			Node: append(nodes, tail...),
			Input: []*pb.ValueInfoProto{{Name: proto.String("x"), Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{TensorType: &pb.TypeProto_Tensor{
				ElemType: proto.Int32(int32(pb.TensorProto_FLOAT)), Shape: &pb.TensorShapeProto{Dim: []*pb.TensorShapeProto_Dimension{dim(batch), dim(k)}}}}}}},
			Output: []*pb.ValueInfoProto{{Name: proto.String("y")}},
			Initializer: []*pb.TensorProto{
				{Name: proto.String("W"), Dims: []int64{int64(k), int64(n)}, DataType: proto.Int32(int32(pb.TensorProto_FLOAT)), FloatData: w},
				{Name: proto.String("B"), Dims: []int64{int64(n)}, DataType: proto.Int32(int32(pb.TensorProto_FLOAT)), FloatData: b},
			},
		},
	}
	data, err := proto.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

func TestImportCLI(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "mlp.onnx")
	writeImportModel(t, model, 1, 20, 16) // W has 320 elements: above the elision threshold

	stdout, stderr, code := tessera("import", model)
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stderr)
	assert.Contains(t, stdout, "func.func @main(%arg0: tensor<1x20xf32>) -> tensor<1x16xf32>")
	assert.Contains(t, stdout, `graph.gemm %arg0, %0, %1 : (tensor<1x20xf32>, tensor<20x16xf32>, tensor<16xf32>) -> tensor<1x16xf32> loc("`+model+`":1:1)`)
	assert.Contains(t, stdout, "graph.relu")
	assert.NotContains(t, stdout, "__elided__", "large constants must be printed in full")
	assert.Contains(t, stdout, "dense<[[-3.0, -2.0, -1.0, 0.0, 1.0, 2.0, 3.0, -3.0,")

	// -o writes the same text and nothing to stdout
	out := filepath.Join(dir, "mlp.mlir")
	stdout2, stderr, code := tessera("import", model, "-o", out)
	require.Equal(t, 0, code, stderr)
	assert.Empty(t, stdout2)
	written, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Equal(t, stdout, string(written))

	// the output is a model the compiler reads
	hlo, stderr, code := tessera("compile", out, "--emit", "hlo")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, hlo, "hlo.")

	// --locations=false drops loc(...)
	plain, _, code := tessera("import", model, "--locations=false")
	require.Equal(t, 0, code)
	assert.NotContains(t, plain, "loc(")
}

func TestImportCLIErrors(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.onnx")
	writeImportModel(t, good, 1, 4, 3)
	data, err := os.ReadFile(good)
	require.NoError(t, err)
	truncated := filepath.Join(dir, "truncated.onnx")
	require.NoError(t, os.WriteFile(truncated, data[:len(data)/2], 0o644))
	garbage := filepath.Join(dir, "garbage.onnx")
	require.NoError(t, os.WriteFile(garbage, []byte("\x00\xff this is not a protobuf \xff\xff\xff"), 0o644))
	unsupported := filepath.Join(dir, "unsupported.onnx")
	writeImportModel(t, unsupported, 1, 4, 3, &pb.NodeProto{Name: proto.String("nms"), OpType: proto.String("NonMaxSuppression"), Input: []string{"y0"}, Output: []string{"y"}})

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"import", filepath.Join(dir, "missing.onnx")}, filepath.Join(dir, "missing.onnx") + ": error: cannot read model: open "},
		{[]string{"import", truncated}, truncated + ": error: not a valid ONNX model: "},
		{[]string{"import", garbage}, garbage + ": error: not a valid ONNX model: "},
		{[]string{"import", unsupported}, unsupported + ":3:1: error: node #2 'nms' (NonMaxSuppression, opset 13): unsupported op 'NonMaxSuppression'"},
		{[]string{"import"}, "accepts 1 arg(s), received 0"},
	} {
		out := filepath.Join(dir, "out.mlir")
		stdout, stderr, code := tessera(append(c.args, "-o", out)...)
		assert.Equal(t, 1, code, "%v: %s", c.args, stderr)
		assert.Contains(t, stderr, c.want, "%v", c.args)
		assert.Empty(t, stdout)
		assert.True(t, strings.Count(stderr, "\n") <= 1, "one diagnostic line: %q", stderr)
		_, err := os.Stat(out)
		assert.True(t, os.IsNotExist(err), "%v: no output file on error", c.args)
	}
}

// TestFixDim: a model exported with a symbolic batch imports, compiles and
// runs once --fix-dim pins the symbol, with the results of the same model
// exported at that batch size; a symbol the model lacks, a malformed
// value and --fix-dim on graph-dialect text are one-line errors.
func TestFixDim(t *testing.T) {
	dir := t.TempDir()
	dynamic := filepath.Join(dir, "dynamic.onnx")
	writeImportModel(t, dynamic, "batch_size", 4, 3)
	static := filepath.Join(dir, "static.onnx")
	writeImportModel(t, static, 2, 4, 3)

	out, stderr, code := tessera("import", dynamic, "--fix-dim", "batch_size=3")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "func.func @main(%arg0: tensor<3x4xf32>")

	// Unpinned, the symbol stays in the graph-dialect text, which compiles
	// and runs once it is pinned or sized from the input.
	out, stderr, code = tessera("import", dynamic)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, `func.func @main(%arg0: tensor<?x4xf32, ["batch_size"]>) -> tensor<?x3xf32, ["batch_size"]>`)
	symbolic := filepath.Join(dir, "dynamic.mlir")
	require.NoError(t, os.WriteFile(symbolic, []byte(out), 0o644))

	x, err := rt.FromSlice([]int64{2, 4}, []float32{1, -2, 3, 0.5, -1, 4, 2, -3})
	require.NoError(t, err)
	in := filepath.Join(dir, "x.npy")
	require.NoError(t, rt.WriteNPY(in, x))
	want, stderr, code := tessera("run", static, "--input", in)
	require.Equal(t, 0, code, stderr)
	got, stderr, code := tessera("run", dynamic, "--fix-dim", "batch_size=2", "--input", in)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, want, got)
	for _, args := range [][]string{{"run", symbolic, "--input", in}, {"run", symbolic, "--fix-dim", "batch_size=2", "--input", in}} {
		got, stderr, code = tessera(args...)
		require.Equal(t, 0, code, "%v: %s", args, stderr)
		assert.Equal(t, want, got, "%v", args)
	}
	assert.Contains(t, got, "tensor<2x3xf32>")
	// Without --fix-dim, run takes the symbol's size from the input file.
	got, stderr, code = tessera("run", dynamic, "--input", in)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, want, got)
	// So does quantize, from the first calibration batch.
	out, stderr, code = tessera("quantize", dynamic, "--calibrate", in)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "graph.quantize_linear %arg0")
	assert.Contains(t, out, "tensor<2x4xf32>")

	model := filepath.Join(examples, "mlp.mlir")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"compile", dynamic, "--target", "npu", "--emit", "npu-asm"}, "error: @main has symbolic dimensions (batch_size), and target npu compiles static shapes only (the cpu target compiles them once for every size): specialize them with --bind-dim batch_size=N or --fix-dim batch_size=N"},
		{[]string{"compile", symbolic, "--emit", "hlo", "--fix-dim", "batch=1"}, "error: cannot fix dimension 'batch': no input dimension of @main is named so (its symbolic dimensions: batch_size)"},
		{[]string{"import", dynamic, "--fix-dim", "batch_size=1", "--fix-dim", "batch=1"}, "error: cannot fix dimension 'batch': no input dimension of the model is named so (its symbolic dimensions: 'batch_size')"},
		{[]string{"import", static, "--fix-dim", "batch=1"}, "(its symbolic dimensions: none)"},
		{[]string{"import", dynamic, "--fix-dim", "batch_size=0"}, `--fix-dim "batch_size=0": expected NAME=N, N a positive integer`},
		{[]string{"import", dynamic, "--fix-dim", "batch_size=1", "--fix-dim", "batch_size=2"}, "--fix-dim: dimension 'batch_size' is given twice"},
		{[]string{"compile", dynamic, "--emit", "hlo", "--fix-dim", "batch_size"}, `--fix-dim "batch_size": expected NAME=N`},
		{[]string{"compile", model, "--emit", "hlo", "--fix-dim", "batch=1"}, "cannot fix dimension 'batch': no input dimension of @main is named so (its symbolic dimensions: none)"},
	} {
		_, stderr, code := tessera(c.args...)
		assert.Equal(t, 1, code, "%v: %s", c.args, stderr)
		assert.Contains(t, stderr, c.want, "%v", c.args)
		assert.True(t, strings.Count(stderr, "\n") <= 1, "one diagnostic line: %q", stderr)
	}
}

// TestSymbolsFromInputs: run and bench take an ONNX model's symbolic
// dimensions from the input files; two inputs that give one symbol
// different sizes are one error naming the symbol and both inputs.
func TestSymbolsFromInputs(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "add.onnx")
	info := func(name string) *pb.ValueInfoProto {
		dims := []*pb.TensorShapeProto_Dimension{{Value: &pb.TensorShapeProto_Dimension_DimParam{DimParam: "batch"}},
			{Value: &pb.TensorShapeProto_Dimension_DimValue{DimValue: 2}}}
		return &pb.ValueInfoProto{Name: proto.String(name), Type: &pb.TypeProto{Value: &pb.TypeProto_TensorType{TensorType: &pb.TypeProto_Tensor{
			ElemType: proto.Int32(int32(pb.TensorProto_FLOAT)), Shape: &pb.TensorShapeProto{Dim: dims}}}}}
	}
	m := &pb.ModelProto{IrVersion: proto.Int64(8), OpsetImport: []*pb.OperatorSetIdProto{{Version: proto.Int64(13)}},
		Graph: &pb.GraphProto{Name: proto.String("add"),
			Node:   []*pb.NodeProto{{OpType: proto.String("Add"), Input: []string{"a", "b"}, Output: []string{"y"}}},
			Input:  []*pb.ValueInfoProto{info("a"), info("b")},
			Output: []*pb.ValueInfoProto{{Name: proto.String("y")}}}}
	data, err := proto.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(model, data, 0o644))
	write := func(name string, rows int) string {
		vals := make([]float32, rows*2)
		for i := range vals {
			vals[i] = float32(i)
		}
		x, err := rt.FromSlice([]int64{int64(rows), 2}, vals)
		require.NoError(t, err)
		p := filepath.Join(dir, name)
		require.NoError(t, rt.WriteNPY(p, x))
		return p
	}
	a3, b3, b4 := write("a3.npy", 3), write("b3.npy", 3), write("b4.npy", 4)
	out, stderr, code := tessera("run", model, "--input", a3, "--input", b3)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "result #0: tensor<3x2xf32> min 0 max 10")
	_, stderr, code = tessera("bench", model, "--input", a3, "--input", b3, "--warmup", "0", "--repeats", "1", "--min-time", "1ms")
	require.Equal(t, 0, code, stderr)
	_, stderr, code = tessera("run", model, "--input", a3, "--input", b4)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "inconsistent inputs: symbolic dimension 'batch' is 3 in input 'a' ("+a3+") but 4 in input 'b' ("+b4+")")
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)

	// The same from the symbolic graph-dialect text the model imports to.
	text, stderr, code := tessera("import", model)
	require.Equal(t, 0, code, stderr)
	mlir := filepath.Join(dir, "add.mlir")
	require.NoError(t, os.WriteFile(mlir, []byte(text), 0o644))
	out, stderr, code = tessera("run", mlir, "--input", a3, "--input", b3)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "result #0: tensor<3x2xf32> min 0 max 10")
	_, stderr, code = tessera("run", mlir, "--input", a3, "--input", b4)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, mlir+": error: inconsistent inputs: symbolic dimension 'batch' is 3 in input #0 ("+a3+") but 4 in input #1 ("+b4+")")
	assert.Equal(t, 1, strings.Count(stderr, "\n"), stderr)
}
