package lowering

import (
	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
)

// Data-movement ops with static attributes. hlo has no reverse or gather,
// so taking an arbitrary constant list of indices along an axis ("take") is
// built from slices: the list is cut into maximal runs, an ascending run
// with a constant stride ≥ 1 is one strided hlo.slice, a run of one
// repeated index is a 1-element hlo.slice broadcast (hlo.broadcast_in_dim)
// to the run length, and the pieces are joined by one hlo.concatenate.
// A descending run (a reversal) therefore costs one 1-element slice per
// element; the tensor-IR lowering turns the concatenate into a select
// chain over its pieces, so taking n indices costs O(n) ops and O(n) work
// per output element — meant for the short reversals and index lists of
// real models (reflect padding, flips of small dims, embedding lookups of
// a few tokens), not for reversing long axes.
//
//	graph.split(x) {axis, split} → one hlo.slice per piece
//	graph.slice(x) {starts, ends, axes, steps} → one hlo.slice with the
//	    clamped starts and limits and |steps| as strides (dims in ascending
//	    order; nothing when it is the identity); each negative-step dim is
//	    then reversed with a take of indices n−1, ..., 0
//	graph.gather(x) {axis, indices} → take of the flattened (wrapped)
//	    indices along axis, then hlo.reshape to x[:axis] ++ indices.shape
//	    ++ x[axis+1:]
//	graph.pad(x) constant → hlo.pad (negative pads crop; the value is a
//	    rank-0 hlo.constant); reflect / edge → per padded dim: hlo.slice
//	    for the crop, then hlo.concatenate of the left take (reflect:
//	    indices b, ..., 1; edge: index 0 broadcast b times), the cropped
//	    tensor and the right take
//	graph.expand(x) {shape} → hlo.broadcast_in_dim (right-aligned dims)
//	graph.tile(x) {repeats} → hlo.broadcast_in_dim of x (d0, ..., dk) to
//	    (r0, d0, ..., rk, dk) with dims [1, 3, ...], hlo.reshape to
//	    (r0·d0, ..., rk·dk); nothing when every repeat is 1
func init() {
	registerLegalization(graph.SplitOp, legalizeSplit)
	registerLegalization(graph.SliceOp, legalizeSlice)
	registerLegalization(graph.GatherOp, legalizeGather)
	registerLegalization(graph.PadOp, legalizePad)
	registerLegalization(graph.ExpandOp, legalizeExpand)
	registerLegalization(graph.TileOp, legalizeTile)
}

// hloSlice creates hlo.slice of x with explicit start, limit and strides,
// or returns x when the slice is the identity.
func (b *builder) hloSlice(x *graphir.Value, start, limit, strides []int64) (*graphir.Value, error) {
	t, err := b.tensorOf(x, "slice operand")
	if err != nil {
		return nil, err
	}
	shape := make([]int64, t.Rank())
	identity := true
	for i := range shape {
		shape[i] = (limit[i] - start[i] + strides[i] - 1) / strides[i]
		identity = identity && start[i] == 0 && limit[i] == t.Shape[i] && strides[i] == 1
	}
	if identity {
		return x, nil
	}
	attrs := graphir.DictAttr{}.
		Set("start_indices", graphir.I64Array(start...)).
		Set("limit_indices", graphir.I64Array(limit...)).
		Set("strides", graphir.I64Array(strides...))
	return b.create("hlo.slice", []*graphir.Value{x}, graphir.NewTensor(t.Elem, shape...), attrs)
}

// hloConcat joins xs along dim with hlo.concatenate (xs itself when there
// is one piece).
func (b *builder) hloConcat(xs []*graphir.Value, dim int) (*graphir.Value, error) {
	if len(xs) == 1 {
		return xs[0], nil
	}
	t0, err := b.tensorOf(xs[0], "concatenate operand")
	if err != nil {
		return nil, err
	}
	shape := append([]int64(nil), t0.Shape...)
	shape[dim] = 0
	for _, x := range xs {
		shape[dim] += graphir.AsTensor(x.Type).Shape[dim]
	}
	return b.create("hlo.concatenate", xs, graphir.NewTensor(t0.Elem, shape...),
		graphir.DictAttr{}.Set("dimension", graphir.IntAttr(int64(dim))))
}

// axisSlice slices x along dim alone: [start, start + (n−1)·stride + 1)
// with stride, full range elsewhere.
func (b *builder) axisSlice(x *graphir.Value, dim int, start, n, stride int64) (*graphir.Value, error) {
	t := graphir.AsTensor(x.Type)
	st, lim, str := make([]int64, t.Rank()), append([]int64(nil), t.Shape...), make([]int64, t.Rank())
	for i := range str {
		str[i] = 1
	}
	st[dim], str[dim] = start, stride
	lim[dim] = start
	if n > 0 {
		lim[dim] = start + (n-1)*stride + 1
	}
	return b.hloSlice(x, st, lim, str)
}

// takePieces returns the pieces whose concatenation along dim is x taken
// at idx (all in range) along dim; see the file comment.
func (b *builder) takePieces(x *graphir.Value, dim int, idx []int64) ([]*graphir.Value, error) {
	t, err := b.tensorOf(x, "operand")
	if err != nil {
		return nil, err
	}
	if len(idx) == 0 {
		v, err := b.axisSlice(x, dim, 0, 0, 1)
		if err != nil {
			return nil, err
		}
		return []*graphir.Value{v}, nil
	}
	var pieces []*graphir.Value
	for k := 0; k < len(idx); {
		n, step := int64(1), int64(1)
		if k+1 < len(idx) && idx[k+1] >= idx[k] {
			step = idx[k+1] - idx[k]
			for k+int(n) < len(idx) && idx[k+int(n)]-idx[k+int(n)-1] == step {
				n++
			}
		}
		var p *graphir.Value
		if step == 0 {
			one, err := b.axisSlice(x, dim, idx[k], 1, 1)
			if err != nil {
				return nil, err
			}
			shape := append([]int64(nil), t.Shape...)
			shape[dim] = n
			p, err = b.broadcastInDim(one, shape, iota64(0, t.Rank()))
			if err != nil {
				return nil, err
			}
		} else if p, err = b.axisSlice(x, dim, idx[k], n, step); err != nil {
			return nil, err
		}
		pieces = append(pieces, p)
		k += int(n)
	}
	return pieces, nil
}

// take is x taken at idx along dim, as one value.
func (b *builder) take(x *graphir.Value, dim int, idx []int64) (*graphir.Value, error) {
	ps, err := b.takePieces(x, dim, idx)
	if err != nil {
		return nil, err
	}
	return b.hloConcat(ps, dim)
}

func singleInput(op *graphir.Op, b *builder) (*graphir.Value, *graphir.TensorType, error) {
	if op.NumOperands() != 1 {
		return nil, nil, op.Errorf("expects 1 operand, got %d", op.NumOperands())
	}
	xt, err := b.tensorOf(op.Operand(0), "input")
	if err != nil {
		return nil, nil, err
	}
	return op.Operand(0), xt, nil
}

func legalizeSplit(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, xt, err := singleInput(op, b)
	if err != nil {
		return nil, err
	}
	ax, sizes, err := graph.SplitSizes(op, xt.Shape)
	if err != nil {
		return nil, err
	}
	if len(sizes) != len(op.Results) {
		return nil, op.Errorf("has %d results for %d pieces", len(op.Results), len(sizes))
	}
	var out []*graphir.Value
	at := int64(0)
	for _, s := range sizes {
		p, err := b.axisSlice(x, ax, at, s, 1)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
		at += s
	}
	return out, nil
}

func legalizeSlice(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, xt, err := singleInput(op, b)
	if err != nil {
		return nil, err
	}
	start, step, size, err := graph.SliceParams(op, xt.Shape)
	if err != nil {
		return nil, err
	}
	r := xt.Rank()
	st, lim, str := make([]int64, r), make([]int64, r), make([]int64, r)
	var reversed []int
	for i := 0; i < r; i++ {
		s, n := step[i], size[i]
		if s < 0 && n > 0 {
			// The same elements in ascending order: the last one taken first.
			s = -s
			start[i] -= (n - 1) * s
			if n > 1 {
				reversed = append(reversed, i)
			}
		}
		if s < 0 {
			s = -s
		}
		st[i], str[i], lim[i] = start[i], s, start[i]
		if n > 0 {
			lim[i] = start[i] + (n-1)*s + 1
		}
	}
	y, err := b.hloSlice(x, st, lim, str)
	if err != nil {
		return nil, err
	}
	for _, d := range reversed {
		rev := make([]int64, size[d])
		for k := range rev {
			rev[k] = size[d] - 1 - int64(k)
		}
		if y, err = b.take(y, d, rev); err != nil {
			return nil, err
		}
	}
	return []*graphir.Value{y}, nil
}

func legalizeGather(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, xt, err := singleInput(op, b)
	if err != nil {
		return nil, err
	}
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	ax, idx, _, err := graph.GatherIndices(op, xt.Shape)
	if err != nil {
		return nil, err
	}
	y, err := b.take(x, ax, idx)
	if err != nil {
		return nil, err
	}
	if y, err = b.reshape(y, rt.Shape); err != nil {
		return nil, err
	}
	return []*graphir.Value{y}, nil
}

func legalizePad(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, xt, err := singleInput(op, b)
	if err != nil {
		return nil, err
	}
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	c, err := graph.PadParams(op, xt.Shape)
	if err != nil {
		return nil, err
	}
	if c.Mode == "constant" {
		v, err := b.scalar(xt.Elem, c.Value)
		if err != nil {
			return nil, err
		}
		zeros := make([]int64, xt.Rank())
		attrs := graphir.DictAttr{}.
			Set("edge_padding_low", graphir.I64Array(c.Begin...)).
			Set("edge_padding_high", graphir.I64Array(c.End...)).
			Set("interior_padding", graphir.I64Array(zeros...))
		y, err := b.create("hlo.pad", []*graphir.Value{x, v}, rt, attrs)
		if err != nil {
			return nil, err
		}
		return []*graphir.Value{y}, nil
	}
	y := x
	for d := 0; d < xt.Rank(); d++ {
		lo, hi := c.Begin[d], c.End[d]
		if lo == 0 && hi == 0 {
			continue
		}
		// Crop first.
		c0 := -min(lo, 0)
		dc := xt.Shape[d] - c0 + min(hi, 0)
		if y, err = b.axisSlice(y, d, c0, dc, 1); err != nil {
			return nil, err
		}
		var left, right []int64
		for k := int64(0); k < max(lo, 0); k++ {
			left = append(left, graph.PadSource(k, max(lo, 0), 0, dc, c.Mode))
		}
		for k := int64(0); k < max(hi, 0); k++ {
			right = append(right, graph.PadSource(max(lo, 0)+dc+k, max(lo, 0), max(hi, 0), dc, c.Mode))
		}
		var pieces []*graphir.Value
		if len(left) > 0 {
			ps, err := b.takePieces(y, d, left)
			if err != nil {
				return nil, err
			}
			pieces = append(pieces, ps...)
		}
		pieces = append(pieces, y)
		if len(right) > 0 {
			ps, err := b.takePieces(y, d, right)
			if err != nil {
				return nil, err
			}
			pieces = append(pieces, ps...)
		}
		if y, err = b.hloConcat(pieces, d); err != nil {
			return nil, err
		}
	}
	if !y.Type.Equal(rt) {
		return nil, op.Errorf("padding %s gives %s, not %s", xt, y.Type, rt)
	}
	return []*graphir.Value{y}, nil
}

func legalizeExpand(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, xt, err := singleInput(op, b)
	if err != nil {
		return nil, err
	}
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	if rt.Elem != xt.Elem {
		return nil, op.Errorf("result %s does not match the input %s", rt, xt)
	}
	y, err := b.broadcastTo(x, rt.Shape)
	if err != nil {
		return nil, err
	}
	return []*graphir.Value{y}, nil
}

func legalizeTile(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, xt, err := singleInput(op, b)
	if err != nil {
		return nil, err
	}
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	reps, err := intsAttr(op, "repeats", xt.Rank(), nil)
	if err != nil {
		return nil, err
	}
	if reps == nil {
		return nil, op.Errorf("requires attribute 'repeats'")
	}
	all1 := true
	var wide, dims []int64
	for i, r := range reps {
		if r < 0 || rt.Rank() != xt.Rank() || rt.Shape[i] != r*xt.Shape[i] || rt.Elem != xt.Elem {
			return nil, op.Errorf("repeats %s of %s do not give %s", shapeString(reps), xt, rt)
		}
		all1 = all1 && r == 1
		wide = append(wide, r, xt.Shape[i])
		dims = append(dims, int64(2*i+1))
	}
	if all1 {
		return []*graphir.Value{x}, nil
	}
	y, err := b.broadcastInDim(x, wide, dims)
	if err != nil {
		return nil, err
	}
	if y, err = b.reshape(y, rt.Shape); err != nil {
		return nil, err
	}
	return []*graphir.Value{y}, nil
}
