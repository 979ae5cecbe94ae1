package hlo

import (
	"math/rand"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	g "github.com/tessera-ml/tessera/graphir"
)

// TestConvKernelLayoutPreservesResults evaluates every function of the
// pass's lit test before and after the pass on random inputs: the results
// are identical (only a constant's layout moves).
func TestConvKernelLayoutPreservesResults(t *testing.T) {
	src, err := os.ReadFile("../../lit/hlo/conv-kernel-layout.mlir")
	require.NoError(t, err)
	before, err := g.ParseString("conv-kernel-layout.mlir", string(src))
	require.NoError(t, err)
	for _, hex := range []bool{false, true} {
		text := string(src)
		if hex { // the kernels as raw bytes, the form ONNX weights take
			text = g.PrintWith(before, g.PrintOptions{HexLargerThan: 1})
		}
		after, err := g.ParseString("conv-kernel-layout.mlir", text)
		require.NoError(t, err)
		checkConvKernelLayout(t, before, after, hex)
	}
}

func checkConvKernelLayout(t *testing.T, before, after *g.Module, raw bool) {
	r := rand.New(rand.NewSource(5))
	for i, f := range after.Funcs {
		require.NoError(t, ConvKernelLayoutFunc(f))
		f.Walk(func(op *g.Op) {
			if d, ok := op.Attr("value").(*g.DenseElementsAttr); ok && op.Name == ConstantOp && d.Len() > 1 {
				require.Equal(t, raw, d.Raw != nil, "@%s: raw kernels stay raw bytes", f.Name)
			}
		})
		require.NoError(t, g.Verify(after))
		var args []*g.Tensor
		for _, a := range f.Args() {
			args = append(args, randTensor(r, a.Type.(*g.TensorType)))
		}
		want, err := g.Interpret(before.Funcs[i], args)
		require.NoError(t, err)
		got, err := g.Interpret(f, args)
		require.NoError(t, err)
		require.Equal(t, len(want), len(got))
		for k := range want {
			require.Equal(t, want[k].Data, got[k].Data, "@%s result %d", f.Name, k)
		}
	}
}
