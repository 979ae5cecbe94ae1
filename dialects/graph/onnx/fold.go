package onnx

import (
	"fmt"
	"math"

	"github.com/tessera-ml/tessera/graphir"
)

// Static evaluation of shape-computation chains. Shape, Size,
// ConstantOfShape and Range have no graph op: they always produce
// constants. The ops below fold here, in plain Go, whenever all their
// inputs are constants (a graph value input emits the graph op instead):
// Cast, Gather, Slice, Concat, Squeeze, Unsqueeze, Reshape, Flatten,
// Expand, Tile, Transpose, Where, the arithmetic, comparison and logical
// elementwise ops. Every other op with constant inputs folds through its
// graph op's reference evaluator (node.emit). Folding keeps ONNX
// semantics: integer arithmetic stays integral (Div truncates), results
// are rounded to their element type.

// maxFoldElements bounds the tensors produced by folding (ConstantOfShape,
// Range, Expand, Tile with absurd sizes from a corrupt model).
const maxFoldElements = 1 << 26

func checkFoldSize(shape []int64) error {
	n := int64(1)
	for _, d := range shape {
		if d < 0 {
			return fmt.Errorf("negative dimension in %v", shape)
		}
		if d > 0 && n > maxFoldElements/d {
			return fmt.Errorf("constant of shape %v is too large to fold", shape)
		}
		n *= d
	}
	return nil
}

func newConst(dt graphir.DType, shape []int64) (*graphir.Tensor, error) {
	if err := checkFoldSize(shape); err != nil {
		return nil, err
	}
	return graphir.NewZeroTensor(graphir.NewTensor(dt, shape...)), nil
}

// int64Const makes a 1-D i64 constant.
func int64Const(vs []int64) *graphir.Tensor {
	t := graphir.NewZeroTensor(graphir.NewTensor(graphir.I64, int64(len(vs))))
	for i, v := range vs {
		t.Data[i] = float64(v)
	}
	return t
}

// unravel writes the multi-index of flat index i in shape into idx.
func unravel(i int64, shape []int64, idx []int64) {
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 0 {
			idx[d] = i % shape[d]
			i /= shape[d]
		}
	}
}

// broadcastOffset is the flat offset in a tensor of shape s (right-aligned
// to the output index idx, broadcasting dims of size 1).
func broadcastOffset(idx []int64, s []int64) int64 {
	off, stride := int64(0), int64(1)
	for d := len(s) - 1; d >= 0; d-- {
		j := idx[len(idx)-len(s)+d]
		if s[d] == 1 {
			j = 0
		}
		off += j * stride
		stride *= s[d]
	}
	return off
}

// foldElementwise evaluates f over the NumPy broadcast of ts.
func foldElementwise(ts []*graphir.Tensor, dt graphir.DType, f func(xs []float64) (float64, error)) (*graphir.Tensor, error) {
	shape := []int64{}
	for _, t := range ts {
		var ok bool
		if shape, ok = broadcastShapes(shape, t.Shape()); !ok {
			return nil, fmt.Errorf("shapes %v and %v do not broadcast", shape, t.Shape())
		}
	}
	out, err := newConst(dt, shape)
	if err != nil {
		return nil, err
	}
	idx := make([]int64, len(shape))
	xs := make([]float64, len(ts))
	for i := range out.Data {
		unravel(int64(i), shape, idx)
		for k, t := range ts {
			xs[k] = t.Data[broadcastOffset(idx, t.Shape())]
		}
		v, err := f(xs)
		if err != nil {
			return nil, err
		}
		out.Data[i] = v
	}
	return out.Round(), nil
}

// foldReshape returns t's data with a new shape.
func foldReshape(t *graphir.Tensor, shape []int64) *graphir.Tensor {
	return &graphir.Tensor{Type: graphir.NewTensor(t.Type.Elem, shape...), Data: append([]float64(nil), t.Data...)}
}

// foldCast converts t to dt with ONNX Cast semantics: float to integer
// truncates toward zero, anything nonzero to bool is true.
func foldCast(t *graphir.Tensor, dt graphir.DType) *graphir.Tensor {
	out := &graphir.Tensor{Type: graphir.NewTensor(dt, t.Shape()...), Data: append([]float64(nil), t.Data...)}
	return out.Round()
}

// foldGather is ONNX Gather: out = x.shape[:axis] ++ idx.shape ++ x.shape[axis+1:].
func foldGather(x *graphir.Tensor, axis int, idx []int64, idxShape []int64) (*graphir.Tensor, error) {
	xs := x.Shape()
	shape := append(append(append([]int64{}, xs[:axis]...), idxShape...), xs[axis+1:]...)
	out, err := newConst(x.Type.Elem, shape)
	if err != nil {
		return nil, err
	}
	outer, inner := int64(1), int64(1)
	for _, d := range xs[:axis] {
		outer *= d
	}
	for _, d := range xs[axis+1:] {
		inner *= d
	}
	k := 0
	for o := int64(0); o < outer; o++ {
		for _, j := range idx {
			if j < -xs[axis] || j >= xs[axis] {
				return nil, fmt.Errorf("index %d is out of range for dimension %d of size %d", j, axis, xs[axis])
			}
			if j < 0 {
				j += xs[axis]
			}
			base := (o*xs[axis] + j) * inner
			copy(out.Data[k:k+int(inner)], x.Data[base:base+inner])
			k += int(inner)
		}
	}
	return out, nil
}

// sliceRange holds the normalized start, step and count of one axis.
type sliceRange struct{ start, step, count int64 }

// sliceRanges applies ONNX Slice's clamping and negative-index rules.
func sliceRanges(shape, starts, ends, axes, steps []int64) ([]sliceRange, error) {
	r := len(shape)
	rs := make([]sliceRange, r)
	for d := range rs {
		rs[d] = sliceRange{0, 1, shape[d]}
	}
	if len(ends) != len(starts) {
		return nil, fmt.Errorf("starts has %d elements but ends %d", len(starts), len(ends))
	}
	if axes == nil {
		for i := range starts {
			axes = append(axes, int64(i))
		}
	}
	if steps == nil {
		for range starts {
			steps = append(steps, 1)
		}
	}
	if len(axes) != len(starts) || len(steps) != len(starts) {
		return nil, fmt.Errorf("starts, ends, axes and steps must have the same length")
	}
	seen := map[int64]bool{}
	for i, a := range axes {
		if a < -int64(r) || a >= int64(r) {
			return nil, fmt.Errorf("axis %d is out of range for rank %d", a, r)
		}
		if a < 0 {
			a += int64(r)
		}
		if seen[a] {
			return nil, fmt.Errorf("axis %d is repeated", a)
		}
		seen[a] = true
		dim, s, e, st := shape[a], starts[i], ends[i], steps[i]
		if st == 0 {
			return nil, fmt.Errorf("step must not be 0")
		}
		if s < 0 {
			s += dim
		}
		if e < 0 {
			e += dim
		}
		var count int64
		if st > 0 {
			s = clamp(s, 0, dim)
			e = clamp(e, 0, dim)
			if e > s {
				count = (e-s-1)/st + 1
			}
		} else {
			s = clamp(s, 0, dim-1)
			e = clamp(e, -1, dim-1)
			if s > e {
				count = int64(uint64(s-e-1)/(uint64(-(st+1))+1)) + 1
			}
		}
		rs[a] = sliceRange{s, st, count}
	}
	return rs, nil
}

func clamp(v, lo, hi int64) int64 {
	return max(lo, min(v, hi))
}

func foldSlice(x *graphir.Tensor, rs []sliceRange) *graphir.Tensor {
	shape := make([]int64, len(rs))
	for d, r := range rs {
		shape[d] = r.count
	}
	out := graphir.NewZeroTensor(graphir.NewTensor(x.Type.Elem, shape...))
	strides := graphir.Strides(x.Shape())
	idx := make([]int64, len(shape))
	for i := range out.Data {
		unravel(int64(i), shape, idx)
		off := int64(0)
		for d, r := range rs {
			off += (r.start + idx[d]*r.step) * strides[d]
		}
		out.Data[i] = x.Data[off]
	}
	return out
}

// foldConcat concatenates along axis (shapes already checked).
func foldConcat(ts []*graphir.Tensor, axis int) (*graphir.Tensor, error) {
	shape := append([]int64{}, ts[0].Shape()...)
	shape[axis] = 0
	for _, t := range ts {
		if t.Type.Rank() != len(shape) || t.Type.Elem != ts[0].Type.Elem {
			return nil, fmt.Errorf("operands %s and %s cannot be concatenated", ts[0].Type, t.Type)
		}
		for d := range shape {
			if d != axis && t.Shape()[d] != shape[d] {
				return nil, fmt.Errorf("operands %s and %s differ outside axis %d", ts[0].Type, t.Type, axis)
			}
		}
		shape[axis] += t.Shape()[axis]
	}
	out, err := newConst(ts[0].Type.Elem, shape)
	if err != nil {
		return nil, err
	}
	outer := int64(1)
	for _, d := range shape[:axis] {
		outer *= d
	}
	k := 0
	for o := int64(0); o < outer; o++ {
		for _, t := range ts {
			chunk := int64(len(t.Data)) / max(outer, 1)
			k += copy(out.Data[k:], t.Data[o*chunk:(o+1)*chunk])
		}
	}
	return out, nil
}

// foldTranspose permutes dims: out dim i = in dim perm[i].
func foldTranspose(x *graphir.Tensor, perm []int64) *graphir.Tensor {
	in := x.Shape()
	shape := make([]int64, len(perm))
	for i, p := range perm {
		shape[i] = in[p]
	}
	out := graphir.NewZeroTensor(graphir.NewTensor(x.Type.Elem, shape...))
	strides := graphir.Strides(in)
	idx := make([]int64, len(shape))
	for i := range out.Data {
		unravel(int64(i), shape, idx)
		off := int64(0)
		for d, p := range perm {
			off += idx[d] * strides[p]
		}
		out.Data[i] = x.Data[off]
	}
	return out
}

// foldTile repeats x along every axis.
func foldTile(x *graphir.Tensor, reps []int64) (*graphir.Tensor, error) {
	in := x.Shape()
	shape := make([]int64, len(in))
	for d := range in {
		shape[d] = in[d] * reps[d]
	}
	out, err := newConst(x.Type.Elem, shape)
	if err != nil {
		return nil, err
	}
	strides := graphir.Strides(in)
	idx := make([]int64, len(shape))
	for i := range out.Data {
		unravel(int64(i), shape, idx)
		off := int64(0)
		for d := range in {
			off += (idx[d] % in[d]) * strides[d]
		}
		out.Data[i] = x.Data[off]
	}
	return out, nil
}

// foldRange is ONNX Range: ceil((limit-start)/delta) elements.
func foldRange(start, limit, delta float64, dt graphir.DType) (*graphir.Tensor, error) {
	if delta == 0 {
		return nil, fmt.Errorf("delta must not be 0")
	}
	n := math.Max(math.Ceil((limit-start)/delta), 0)
	if n > maxFoldElements {
		return nil, fmt.Errorf("range of %g elements is too large to fold", n)
	}
	out := graphir.NewZeroTensor(graphir.NewTensor(dt, int64(n)))
	for i := range out.Data {
		out.Data[i] = start + float64(i)*delta
	}
	return out.Round(), nil
}
