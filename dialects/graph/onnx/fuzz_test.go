package onnx

import (
	"os"
	"path/filepath"
	"testing"

	pb "github.com/tessera-ml/tessera/dialects/graph/onnx/onnxpb"
	"github.com/tessera-ml/tessera/graphir"
)

// FuzzImport: ImportBytes never panics, and a module it returns verifies
// and prints.
func FuzzImport(f *testing.F) {
	f.Add(mlpSpec().bytes(f))
	f.Add(modelSpec{
		opset:   13,
		inputs:  []*pb.ValueInfoProto{f32In("x", 2, 3, 4)},
		outputs: []*pb.ValueInfoProto{out("y")},
		inits:   []*pb.TensorProto{i64Tensor("zero", nil, 0), i64Tensor("axes", []int64{1}, 0), i64Tensor("minus1", []int64{1}, -1)},
		nodes: []*pb.NodeProto{
			mkNode("Shape", ss("x"), ss("s")),
			mkNode("Gather", ss("s", "zero"), ss("d0")),
			mkNode("Unsqueeze", ss("d0", "axes"), ss("u")),
			mkNode("Concat", ss("u", "minus1"), ss("shape"), aInt("axis", 0)),
			mkNode("Reshape", ss("x", "shape"), ss("r")),
			mkNode("Softmax", ss("r"), ss("y")),
		},
	}.bytes(f))
	// The same shape computation over symbolic dimensions (shape values).
	f.Add(modelSpec{
		opset:   13,
		inputs:  []*pb.ValueInfoProto{f32In("x", "b", "s", 4)},
		outputs: []*pb.ValueInfoProto{out("y")},
		inits:   []*pb.TensorProto{i64Tensor("zero", nil, 0), i64Tensor("one", nil, 1), i64Tensor("axes", []int64{1}, 0), i64Tensor("minus1", []int64{1}, -1)},
		nodes: []*pb.NodeProto{
			mkNode("Shape", ss("x"), ss("s")),
			mkNode("Gather", ss("s", "zero"), ss("d0")),
			mkNode("Gather", ss("s", "one"), ss("d1")),
			mkNode("Mul", ss("d0", "d1"), ss("d")),
			mkNode("Unsqueeze", ss("d", "axes"), ss("u")),
			mkNode("Concat", ss("u", "minus1"), ss("shape"), aInt("axis", 0)),
			mkNode("Reshape", ss("x", "shape"), ss("r")),
			mkNode("Softmax", ss("r"), ss("y")),
		},
	}.bytes(f))
	f.Add(modelSpec{
		opset:   11,
		inputs:  []*pb.ValueInfoProto{f32In("x", 1, 2, 4, 4)},
		outputs: []*pb.ValueInfoProto{out("y")},
		inits:   []*pb.TensorProto{f32Tensor("w", dims(2, 1, 3, 3), 1, 2, 3, 4, 5, 6, 7, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8, 9)},
		nodes: []*pb.NodeProto{
			mkNode("Conv", ss("x", "w"), ss("c"), aInt("group", 2), aString("auto_pad", "SAME_UPPER")),
			mkNode("MaxPool", ss("c"), ss("p"), aInts("kernel_shape", 2, 2), aInts("strides", 2, 2)),
			mkNode("Slice", ss("p"), ss("s"), aInts("starts", 0), aInts("ends", 1), aInts("axes", 1)),
			mkNode("Pad", ss("s"), ss("y"), aInts("pads", 0, 0, 1, 1, 0, 0, 1, 1)),
		},
	}.bytes(f))
	for _, name := range []string{"test_relu", "test_conv_with_strides_padding", "test_maxpool_2d_pads", "test_batchnorm_example", "test_gemm_default_zero_bias"} {
		if data, err := os.ReadFile(filepath.Join(nodeTests, name, "model.onnx")); err == nil {
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ImportBytes("fuzz.onnx", data)
		if err != nil {
			if m != nil {
				t.Fatalf("module and error returned together: %v", err)
			}
			return
		}
		if err := graphir.Verify(m); err != nil {
			t.Fatalf("imported module does not verify: %v", err)
		}
		_ = graphir.Print(m)
	})
}
