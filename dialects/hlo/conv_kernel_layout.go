package hlo

import (
	g "github.com/tessera-ml/tessera/graphir"
)

// The conv-kernel-layout pass (a layout assignment for convolution
// kernels, as XLA's LayoutAssignment and TVM's AlterOpLayout do for
// CPU convolutions): every hlo.convolution whose kernel is an
// hlo.constant in the default OIHW layout gets that constant transposed at
// compile time to [spatial..., input feature, output feature] (HWIO) and
// the kernel dimension numbers that say so. The output features become
// the kernel's innermost, contiguous dimension: a schedule that vectorizes
// the output channels loads the weights as whole vectors, and one that
// vectorizes the image width reads the weights of neighbouring output
// channels from neighbouring addresses. Results are unchanged (only the
// layout of a constant moves); kernels that are function arguments, and
// convolutions that already carry kernel dimension numbers, are left
// alone. A constant shared by several convolutions is transposed once.

// ConvKernelLayoutPassName is the pass's name in pipelines.
const ConvKernelLayoutPassName = "conv-kernel-layout"

func init() {
	g.RegisterFuncPass(ConvKernelLayoutPassName, "transpose constant convolution kernels to HWIO (output features innermost) at compile time", ConvKernelLayoutFunc)
}

// ConvKernelLayoutFunc applies conv-kernel-layout to f. Errors: a
// convolution or constant that does not verify.
func ConvKernelLayoutFunc(f *g.Func) error {
	done := map[*g.Value]*g.Value{} // OIHW constant → its HWIO copy
	var convs []*g.Op
	f.Walk(func(op *g.Op) {
		if op.Name == ConvolutionOp && !hasKernelDims(op) {
			convs = append(convs, op)
		}
	})
	for _, op := range convs {
		w := op.Operand(1)
		c := w.Def
		if c == nil || c.Name != ConstantOp || c.Block == nil {
			continue
		}
		if d, ok := c.Attr("value").(*g.DenseElementsAttr); !ok || d.Elided {
			continue
		}
		rank := w.Type.(*g.TensorType).Rank()
		perm := hwioPermutation(rank)
		hw, ok := done[w]
		if !ok {
			t, err := c.Def.Eval(c, nil)
			if err != nil {
				return err
			}
			nc := Constant(transposeData(t[0], perm, permutedType(t[0].Type, perm)), c.Loc)
			c.Block.InsertAfter(c, nc)
			hw = nc.Results[0]
			done[w] = hw
		}
		op.SetOperand(1, hw)
		spatial := make([]int64, rank-2)
		for i := range spatial {
			spatial[i] = int64(i)
		}
		op.SetAttr("kernel_output_feature_dimension", g.IntAttr(int64(rank-1)))
		op.SetAttr("kernel_input_feature_dimension", g.IntAttr(int64(rank-2)))
		op.SetAttr("kernel_spatial_dimensions", g.I64Array(spatial...))
		if c.IsUnused() {
			c.Erase()
		}
	}
	return nil
}

func hasKernelDims(op *g.Op) bool {
	for _, n := range []string{"kernel_output_feature_dimension", "kernel_input_feature_dimension", "kernel_spatial_dimensions"} {
		if op.Attr(n) != nil {
			return true
		}
	}
	return false
}

// hwioPermutation is the hlo.transpose permutation from O×I×K0×K1… to
// K0×K1…×I×O.
func hwioPermutation(rank int) []int64 {
	perm := make([]int64, 0, rank)
	for d := 2; d < rank; d++ {
		perm = append(perm, int64(d))
	}
	return append(perm, 1, 0)
}

// permutedType is t with its dimensions in the order perm.
func permutedType(t *g.TensorType, perm []int64) *g.TensorType {
	shape := make([]int64, len(perm))
	for i, p := range perm {
		shape[i] = t.Shape[p]
	}
	return g.NewTensor(t.Elem, shape...)
}
