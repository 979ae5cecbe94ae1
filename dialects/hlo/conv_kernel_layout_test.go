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
	after, err := g.ParseString("conv-kernel-layout.mlir", string(src))
	require.NoError(t, err)
	r := rand.New(rand.NewSource(5))
	for i, f := range after.Funcs {
		require.NoError(t, ConvKernelLayoutFunc(f))
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
