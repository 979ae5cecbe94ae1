package hlo

import (
	"runtime"

	"golang.org/x/sync/errgroup"

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

// ConvKernelLayoutFunc applies conv-kernel-layout to f. The transposes
// run concurrently, one per core at a time (they are the pass's work:
// every weight of a CNN). Errors: a convolution or constant that does not
// verify.
func ConvKernelLayoutFunc(f *g.Func) error {
	var convs []*g.Op
	f.Walk(func(op *g.Op) {
		if op.Name == ConvolutionOp && !hasKernelDims(op) && constKernel(op) != nil {
			convs = append(convs, op)
		}
	})
	hwio, err := transposeKernels(convs)
	if err != nil {
		return err
	}
	done := map[*g.Value]*g.Value{} // OIHW constant → its HWIO copy
	for _, op := range convs {
		w := op.Operand(1)
		c := w.Def
		hw, ok := done[w]
		if !ok {
			nc := ConstantFromDense(hwio[w].SharedDense(), c.Loc)
			c.Block.InsertAfter(c, nc)
			hw = nc.Results[0]
			done[w] = hw
		}
		op.SetOperand(1, hw)
		rank := w.Type.(*g.TensorType).Rank()
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

// constKernel is the hlo.constant (with its data) that convolution op
// takes as its kernel, or nil.
func constKernel(op *g.Op) *g.Op {
	c := op.Operand(1).Def
	if c == nil || c.Name != ConstantOp || c.Block == nil {
		return nil
	}
	if d, ok := c.Attr("value").(*g.DenseElementsAttr); !ok || d.Elided {
		return nil
	}
	return c
}

// transposeKernels transposes the constant kernel of every convolution in
// convs (each distinct constant once) to HWIO, concurrently. The error is
// that of the first kernel, in order, that fails.
func transposeKernels(convs []*g.Op) (map[*g.Value]*g.Tensor, error) {
	var ws []*g.Value
	seen := map[*g.Value]bool{}
	for _, op := range convs {
		if w := op.Operand(1); !seen[w] {
			seen[w] = true
			ws = append(ws, w)
		}
	}
	out := make([]*g.Tensor, len(ws))
	errs := make([]error, len(ws))
	var eg errgroup.Group
	eg.SetLimit(runtime.GOMAXPROCS(0))
	for i, w := range ws {
		eg.Go(func() error {
			c := w.Def
			wt, err := denseView(c, c.Attr("value").(*g.DenseElementsAttr))
			if err != nil {
				errs[i] = err
				return nil
			}
			perm := hwioPermutation(wt.Type.Rank())
			out[i] = transposeData(wt, perm, permutedType(wt.Type, perm))
			return nil
		})
	}
	eg.Wait()
	m := make(map[*g.Value]*g.Tensor, len(ws))
	for i, w := range ws {
		if errs[i] != nil {
			return nil, errs[i]
		}
		m[w] = out[i]
	}
	return m, nil
}

// denseView is the value of constant c, whose attribute is d, as a
// tensor to read: d's own float data when it holds every element (no
// copy of a model's weights), else the evaluated constant.
func denseView(c *g.Op, d *g.DenseElementsAttr) (*g.Tensor, error) {
	if d.Type.Elem.IsFloat() && int64(len(d.Floats)) == d.Type.NumElements() {
		return &g.Tensor{Type: d.Type, Data: d.Floats}, nil
	}
	t, err := c.Def.Eval(c, nil)
	if err != nil {
		return nil, err
	}
	return t[0], nil
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
