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
		requireSameResults(t, r, before.Funcs[i], f)
	}
}

// checkPassOnLit parses the lit test file (relative to lit/hlo) twice,
// runs pass on every function of the second copy, verifies it, calls
// check on it and requires the results of each function before and
// after the pass to be identical on random inputs.
func checkPassOnLit(t *testing.T, file string, pass func(*g.Func) error, check func(*g.Func)) {
	t.Helper()
	src, err := os.ReadFile("../../lit/hlo/" + file)
	require.NoError(t, err)
	before, err := g.ParseString(file, string(src))
	require.NoError(t, err)
	after, err := g.ParseString(file, string(src))
	require.NoError(t, err)
	r := rand.New(rand.NewSource(3))
	for i, f := range after.Funcs {
		require.NoError(t, pass(f))
		require.NoError(t, g.Verify(after))
		check(f)
		requireSameResults(t, r, before.Funcs[i], f)
	}
}

// requireSameResults interprets want and got (functions of the same
// type) on one set of random arguments and requires identical results.
func requireSameResults(t *testing.T, r *rand.Rand, want, got *g.Func) {
	t.Helper()
	var args []*g.Tensor
	for _, a := range got.Args() {
		args = append(args, randTensor(r, a.Type.(*g.TensorType)))
	}
	w, err := g.Interpret(want, args)
	require.NoError(t, err)
	o, err := g.Interpret(got, args)
	require.NoError(t, err)
	require.Equal(t, len(w), len(o))
	for k := range w {
		require.Equal(t, w[k].Data, o[k].Data, "@%s result %d", got.Name, k)
	}
}
