package hlo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	g "github.com/tessera-ml/tessera/graphir"
)

// TestConvLayoutPreservesResults runs the pass on every function of its
// lit test and evaluates each before and after on random inputs: the
// results are identical (the pass moves data, never arithmetic), every
// convolution that was NCHW (floating-point or integer) is channels-last, and at most
// one transpose is left per function input and result.
func TestConvLayoutPreservesResults(t *testing.T) {
	checkPassOnLit(t, "conv-layout.mlir", ConvLayoutFunc, func(f *g.Func) {
		transposes := 0
		f.Walk(func(op *g.Op) {
			switch op.Name {
			case TransposeOp:
				transposes++
			case ConvolutionOp:
				c, err := convConfig(op)
				require.NoError(t, err)
				if f.Name != "untouched" {
					assert.Equal(t, NHWC(4), c.input, "@%s", f.Name)
					assert.Equal(t, NHWC(4), c.output, "@%s", f.Name)
				}
			}
		})
		assert.LessOrEqual(t, transposes, len(f.Args())+len(f.Type.Results), "@%s", f.Name)
	})
}

// TestConvLayoutReduceOrder checks the order of a convolution's
// reduction loops (reduceOrder): the input's dimensions in order, except
// that a channels-last input with two or more window dimensions has its
// last window dimension after the channels (the window's rows, the
// channels, then its columns).
func TestConvLayoutReduceOrder(t *testing.T) {
	assert.Equal(t, []int{0, 1, 2}, reduceOrder(NCHW(4)))
	assert.Equal(t, []int{1, 0, 2}, reduceOrder(NHWC(4)))
	assert.Equal(t, []int{0, 1}, reduceOrder(NCHW(3)))
	assert.Equal(t, []int{1, 0}, reduceOrder(NHWC(3)))
	assert.Equal(t, []int{1, 2, 0, 3}, reduceOrder(NHWC(5)))
}
