package hlo

import (
	"math/rand"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	g "github.com/tessera-ml/tessera/graphir"
)

// TestExplicitConvPaddingPreservesResults runs the pass on every function
// of its lit test and evaluates each before and after on random inputs:
// the results are identical, and the convolutions the pass takes (every
// function but @untouched) read an hlo.pad of their input with no padding
// of their own.
func TestExplicitConvPaddingPreservesResults(t *testing.T) {
	src, err := os.ReadFile("../../lit/hlo/explicit-conv-padding.mlir")
	require.NoError(t, err)
	before, err := g.ParseString("explicit-conv-padding.mlir", string(src))
	require.NoError(t, err)
	after, err := g.ParseString("explicit-conv-padding.mlir", string(src))
	require.NoError(t, err)
	r := rand.New(rand.NewSource(3))
	for i, f := range after.Funcs {
		require.NoError(t, ExplicitConvPaddingFunc(f))
		require.NoError(t, g.Verify(after))
		pads, convs := 0, 0
		f.Walk(func(op *g.Op) {
			switch op.Name {
			case PadOp:
				pads++
			case ConvolutionOp:
				convs++
				if op.Operand(0).Def != nil && op.Operand(0).Def.Name == PadOp {
					assert.Nil(t, op.Attr("padding"), "@%s: the padded input is read unpadded", f.Name)
				}
			}
		})
		if f.Name == "untouched" {
			assert.Zero(t, pads, "@untouched")
		} else {
			assert.Equal(t, convs, pads, "@%s: one pad per convolution", f.Name)
		}
		requireSameResults(t, r, before.Funcs[i], f)
	}
}
