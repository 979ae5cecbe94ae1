package hlo

import (
	g "github.com/tessera-ml/tessera/graphir"
)

// The explicit-conv-padding pass moves a convolution's spatial padding
// into an hlo.pad of its input, as TVM's TOPI convolutions do (a
// `pad_temp` stage before the window reduction) and XLA's
// ConvPaddingLegalization does for the padding its backends cannot
// express: conv(x, w){padding p} becomes conv(pad(x, 0){p}, w){padding 0}.
// Results are unchanged: the padding reads 0 either way, of the input's
// element type. The padded input is a kernel of its own, and the
// convolution's inner loops then read it without the bound tests and
// clamped indices of a padded window read. Those tests are paid per
// input read, and a convolution reads each input element once per
// output channel of its group and window tap, while the pad kernel
// copies it once. So the pass pads the input of a convolution with at
// least MinPaddedGroupOutputs output channels per group, and leaves a
// depthwise convolution (one per group), whose reads are as few as the
// copy's, with its guarded reads. On this project's AVX2 machine
// (2 threads) ResNet-18 ran 1.43× faster with every convolution padded
// explicitly, most on its 7×7 and 14×14 layers, where every register
// tile touches the border; the code generator's loop partitioning keeps
// the tests out of interior rows only (targets/llvm/codegen_guard.go).
// MobileNetV2, padded everywhere, lost in its depthwise convolutions
// what the pad kernels cost.
//
// A convolution is rewritten when its padding is non-negative and not all
// zero, its input is not dilated (lhs_dilation 1: a transposed
// convolution's holes stay in the window read) and its spatial dimensions
// are static.

// ExplicitConvPaddingPassName is the pass's name in pipelines.
const ExplicitConvPaddingPassName = "explicit-conv-padding"

// MinPaddedGroupOutputs is the number of output channels per group from
// which explicit-conv-padding pads a convolution's input in a kernel of
// its own.
const MinPaddedGroupOutputs = 8

func init() {
	g.RegisterFuncPass(ExplicitConvPaddingPassName, "pad the input of a convolution with several output channels per group in an hlo.pad of its own, so that its window reads need no bound tests", ExplicitConvPaddingFunc)
}

// ExplicitConvPaddingFunc applies explicit-conv-padding to f. Errors: a
// convolution that does not verify.
func ExplicitConvPaddingFunc(f *g.Func) error {
	for _, op := range convolutions(f) {
		c, err := convConfig(op)
		if err != nil {
			return err
		}
		if !padsExplicitly(c) {
			continue
		}
		if err := padInput(op, c); err != nil {
			return err
		}
	}
	return nil
}

// padsExplicitly reports whether the convolution c gets its padding as an
// hlo.pad of its input.
func padsExplicitly(c *convCfg) bool {
	if c.rhs.Shape[c.kernel.OutputFeature] < MinPaddedGroupOutputs*c.groups {
		return false
	}
	padded := false
	for i := range c.lo {
		if c.lo[i] < 0 || c.hi[i] < 0 || c.lhsDil[i] != 1 || c.inSpatial[i] < 0 {
			return false
		}
		padded = padded || c.lo[i] > 0 || c.hi[i] > 0
	}
	return padded
}

// padInput inserts before op an hlo.pad of its input by its spatial
// padding (zeros of the input's element type) and makes op read it
// unpadded. Errors: the pad's (none for a convolution that verifies).
func padInput(op *g.Op, c *convCfg) error {
	rank := c.lhs.Rank()
	lo, hi := make([]int64, rank), make([]int64, rank)
	for i, d := range c.input.Spatial {
		lo[d], hi[d] = c.lo[i], c.hi[i]
	}
	zero := Splat(c.lhs.Elem, nil, 0, op.Loc)
	pad, err := Pad(op.Operand(0), zero.Results[0], lo, hi, nil, op.Loc)
	if err != nil {
		return err
	}
	op.Block.InsertBefore(op, zero)
	op.Block.InsertBefore(op, pad)
	op.SetOperand(0, pad.Results[0])
	op.Attrs = op.Attrs.Delete("padding")
	return nil
}
