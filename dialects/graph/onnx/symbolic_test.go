package onnx

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	gproto "google.golang.org/protobuf/proto"

	pb "github.com/tessera-ml/tessera/dialects/graph/onnx/onnxpb"
	"github.com/tessera-ml/tessera/graphir"
)

// A dim_param that nothing pins stays symbolic, named after the ONNX
// symbol (made an identifier), and flows through shape inference; the
// imported function runs in the interpreter at any size of the symbol,
// with the results of the same model imported at that size.
func TestImportSymbolic(t *testing.T) {
	spec := modelSpec{
		inputs:  []*pb.ValueInfoProto{f32In("x", "batch size", 2, 3)},
		outputs: []*pb.ValueInfoProto{out("y")},
		nodes: []*pb.NodeProto{
			mkNode("Flatten", ss("x"), ss("f")),
			mkNode("MatMul", ss("f", "w"), ss("m")),
			mkNode("Relu", ss("m"), ss("y")),
		},
		inits: []*pb.TensorProto{{Name: gproto.String("w"), DataType: pbType(pb.TensorProto_FLOAT), Dims: []int64{6, 4}, FloatData: []float32{
			1, -1, 0.5, 2, 0, 1, -2, 1, 3, 0, 1, -1, -1, 2, 0, 0.5, 0.25, -0.5, 1, 1, 2, 1, -1, 0}}},
	}
	m, err := importSpec(t, spec)
	require.NoError(t, err)
	main := m.Lookup("main")
	assert.Equal(t, `tensor<?x2x3xf32, ["batch_size"]>`, main.Type.Inputs[0].String())
	assert.Equal(t, `tensor<?x4xf32, ["batch_size"]>`, main.Type.Results[0].String())
	assert.Equal(t, []string{"batch_size"}, graphir.FuncSymbols(main))

	for _, n := range []int64{1, 3, 8} {
		x := graphir.NewZeroTensor(graphir.NewTensor(graphir.F32, n, 2, 3))
		for i := range x.Data {
			x.Data[i] = float64(i%7) - 3
		}
		got, err := graphir.Interpret(main, []*graphir.Tensor{x})
		require.NoError(t, err, "batch %d", n)
		st, err := ImportBytesWith("m.onnx", spec.bytes(t), Options{FixDims: map[string]int64{"batch size": n}})
		require.NoError(t, err)
		want, err := graphir.Interpret(st.Lookup("main"), []*graphir.Tensor{x})
		require.NoError(t, err)
		assert.Equal(t, want[0].Data, got[0].Data, "batch %d", n)
		assert.Equal(t, []int64{n, 4}, got[0].Shape())
	}
}

// A shape computation over symbols, as torch.onnx.export writes for
// x.reshape(x.size(1), x.size(0), -1) (Shape, Gather, Unsqueeze, Mul,
// Concat into Reshape), folds at import into one graph.reshape whose
// result keeps the expressions; the function runs at any size.
func TestImportSymbolicShapeComputation(t *testing.T) {
	spec := modelSpec{
		inputs:  []*pb.ValueInfoProto{f32In("x", "b", "s", 6)},
		outputs: []*pb.ValueInfoProto{out("y")},
		nodes: []*pb.NodeProto{
			mkNode("Shape", ss("x"), ss("shape")),
			mkNode("Gather", ss("shape", "i0"), ss("b")),
			mkNode("Gather", ss("shape", "i1"), ss("s")),
			mkNode("Gather", ss("shape", "i2"), ss("c")), // 6: a constant again
			mkNode("Div", ss("c", "two"), ss("c2")),
			mkNode("Mul", ss("b", "two"), ss("b2")),
			mkNode("Unsqueeze", ss("s", "ax0"), ss("us")),
			mkNode("Unsqueeze", ss("b2", "ax0"), ss("ub")),
			mkNode("Unsqueeze", ss("c2", "ax0"), ss("uc")),
			mkNode("Concat", ss("us", "ub", "uc"), ss("target"), aInt("axis", 0)),
			mkNode("Reshape", ss("x", "target"), ss("y")),
		},
		inits: []*pb.TensorProto{i64Tensor("i0", nil, 0), i64Tensor("i1", nil, 1), i64Tensor("i2", nil, 2), i64Tensor("two", nil, 2), i64Tensor("ax0", []int64{1}, 0)},
	}
	m, err := importSpec(t, spec)
	require.NoError(t, err)
	main := m.Lookup("main")
	assert.Equal(t, `tensor<?x?x3xf32, ["s", "2*b"]>`, main.Type.Results[0].String())
	x := graphir.NewZeroTensor(graphir.NewTensor(graphir.F32, 2, 5, 6))
	for i := range x.Data {
		x.Data[i] = float64(i)
	}
	got, err := graphir.Interpret(main, []*graphir.Tensor{x})
	require.NoError(t, err)
	assert.Equal(t, []int64{5, 4, 3}, got[0].Shape())
	assert.Equal(t, x.Data, got[0].Data, "a reshape keeps the row-major data")

	// Reparsed from text, the reshape is the same.
	text := graphir.Print(m)
	back, err := graphir.ParseString("m.mlir", text)
	require.NoError(t, err)
	require.NoError(t, graphir.Verify(back))
	assert.Equal(t, text, graphir.Print(back))
}

// What the shape values cannot do is refused naming the symbols.
func TestImportSymbolicShapeRefusals(t *testing.T) {
	shapeOf := func() *pb.NodeProto { return mkNode("Shape", ss("x"), ss("shape")) }
	for _, c := range []struct {
		name  string
		nodes []*pb.NodeProto
		want  string
	}{
		{"a shape value as an output", []*pb.NodeProto{shapeOf()},
			"graph output 'y' is a shape value [b, 3] over symbolic dimensions, which Tessera computes only at import; pin them with --fix-dim b=N"},
		{"a shape value into arithmetic on tensors", []*pb.NodeProto{shapeOf(), mkNode("ConstantOfShape", ss("shape"), ss("y"))},
			"node #1 (ConstantOfShape, opset 13): takes a value computed from the input's shape, which depends on the symbolic dimensions 'b' (only Reshape's shape may); pin them with --fix-dim b=N"},
		{"division by a symbol", []*pb.NodeProto{shapeOf(), mkNode("Gather", ss("shape", "i0"), ss("g")), mkNode("Div", ss("i0", "g"), ss("y"))},
			"only division by a positive constant is supported"},
	} {
		t.Run(c.name, func(t *testing.T) {
			nodes := c.nodes
			nodes[len(nodes)-1].Output = ss("y")
			_, err := importSpec(t, modelSpec{inputs: []*pb.ValueInfoProto{f32In("x", "b", 3)}, outputs: []*pb.ValueInfoProto{out("y")}, nodes: nodes,
				inits: []*pb.TensorProto{i64Tensor("i0", nil, 0)}})
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// Unsqueeze and Squeeze of a tensor with symbolic dimensions reshape it;
// Squeeze without axes is refused over a symbolic dimension, which is 1
// only for some values.
func TestImportSymbolicSqueeze(t *testing.T) {
	spec := modelSpec{
		inputs:  []*pb.ValueInfoProto{f32In("x", "b", 3, "s")},
		outputs: []*pb.ValueInfoProto{out("y")},
		nodes: []*pb.NodeProto{
			mkNode("Unsqueeze", ss("x", "ax"), ss("u")),
			mkNode("Squeeze", ss("u", "ax0"), ss("y")),
		},
		inits: []*pb.TensorProto{i64Tensor("ax", []int64{2}, 0, 3), i64Tensor("ax0", []int64{1}, 0)},
	}
	m, err := importSpec(t, spec)
	require.NoError(t, err)
	main := m.Lookup("main")
	assert.Equal(t, `tensor<?x3x1x?xf32, ["b", "s"]>`, main.Type.Results[0].String())
	x := graphir.NewZeroTensor(graphir.NewTensor(graphir.F32, 2, 3, 5))
	got, err := graphir.Interpret(main, []*graphir.Tensor{x})
	require.NoError(t, err)
	assert.Equal(t, []int64{2, 3, 1, 5}, got[0].Shape())

	spec.nodes = []*pb.NodeProto{mkNode("Squeeze", ss("x"), ss("y"))}
	_, err = importSpec(t, spec)
	assert.ErrorContains(t, err, `Squeeze without axes over tensor<?x3x?xf32, ["b", "s"]>: whether a symbolic dimension is 1 depends on its value; give axes or pin its symbols with --fix-dim b=N --fix-dim s=N`)
}
