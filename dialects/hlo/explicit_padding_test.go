package hlo

import (
	"testing"

	"github.com/stretchr/testify/assert"

	g "github.com/tessera-ml/tessera/graphir"
)

// TestExplicitConvPaddingPreservesResults runs the pass on every function
// of its lit test and evaluates each before and after on random inputs:
// the results are identical, and the convolutions the pass takes (every
// function but @untouched) read an hlo.pad of their input with no padding
// of their own.
func TestExplicitConvPaddingPreservesResults(t *testing.T) {
	checkPassOnLit(t, "explicit-conv-padding.mlir", ExplicitConvPaddingFunc, func(f *g.Func) {
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
	})
}
