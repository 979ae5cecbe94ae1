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
// every weight of a CNN), and each kernel replaces its original as soon
// as it is made, so the original becomes garbage at once: a model's
// weights are not held twice while the pass runs. Errors: a convolution
// or constant that does not verify (the first one, in order, when several
// fail).
func ConvKernelLayoutFunc(f *g.Func) error {
	users := map[*g.Value][]*g.Op{}
	var ws []*g.Value
	f.Walk(func(op *g.Op) {
		if op.Name == ConvolutionOp && !hasKernelDims(op) && constKernel(op) != nil {
			w := op.Operand(1)
			if users[w] == nil {
				ws = append(ws, w)
			}
			users[w] = append(users[w], op)
		}
	})
	type result struct {
		i int
		d *g.DenseElementsAttr
	}
	done := make(chan result)
	errs := make([]error, len(ws))
	go func() {
		var eg errgroup.Group
		eg.SetLimit(runtime.GOMAXPROCS(0))
		for i, w := range ws {
			c := w.Def
			eg.Go(func() error {
				d, err := transposeKernel(c)
				if errs[i] = err; err == nil {
					done <- result{i, d}
				}
				return nil
			})
		}
		eg.Wait()
		close(done)
	}()
	for r := range done {
		w := ws[r.i]
		useKernel(w, r.d, users[w])
		// The erased constant is reachable from w (w.Def): drop the
		// pass's own references so that its data is garbage now.
		ws[r.i] = nil
		delete(users, w)
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// useKernel inserts the HWIO kernel d after the constant defining w,
// makes the convolutions convs take it with the kernel dimension numbers
// that say so, and erases the original constant when nothing else uses
// it.
func useKernel(w *g.Value, d *g.DenseElementsAttr, convs []*g.Op) {
	c := w.Def
	nc := ConstantFromDense(d, c.Loc)
	c.Block.InsertAfter(c, nc)
	rank := w.Type.(*g.TensorType).Rank()
	hwio := KernelDims{OutputFeature: int64(rank - 1), InputFeature: int64(rank - 2)}
	for i := 0; i < rank-2; i++ {
		hwio.Spatial = append(hwio.Spatial, int64(i))
	}
	for _, op := range convs {
		op.SetOperand(1, nc.Results[0])
		op.Attrs = hwio.setAttrs(op.Attrs)
	}
	if c.IsUnused() {
		c.Erase()
	}
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

// transposeKernel returns the value of constant kernel c transposed to
// HWIO: raw bytes stay raw bytes (a model's weights are never widened to
// float64); other data is evaluated and transposed as a tensor.
func transposeKernel(c *g.Op) (*g.DenseElementsAttr, error) {
	d := c.Attr("value").(*g.DenseElementsAttr)
	perm := hwioPermutation(d.Type.Rank())
	rt := permutedType(d.Type, perm)
	if d.Raw != nil && int64(d.Len()) == d.Type.NumElements() {
		size := int64(d.Type.Elem.Format().Size())
		raw := make([]byte, len(d.Raw))
		transposeInto(raw, d.Raw, size, d.Type.Shape, perm, rt.Shape)
		return g.NewRawDense(rt, raw), nil
	}
	t, err := c.Def.Eval(c, nil)
	if err != nil {
		return nil, err
	}
	return transposeData(t[0], perm, rt).SharedDense(), nil
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
