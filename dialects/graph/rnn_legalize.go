package graph

import (
	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// legalizeRNN: graph.lstm/gru/rnn → per direction d
//
//	xw_d = hlo.dot_general(X', W_d) {contracting X' dim 2 with W_d dim 1}
//	       + broadcast(Wb_d + Rb_d)           (an ordinary GEMM, fused with its bias)
//	y_d, h_d[, c_d] = hlo.rnn_scan(xw_d, R_dᵀ, h0_d[, c0_d, P_d | , Rbh_d])
//
// X' is X in [S, B, I] (transposed from layout 1); GRU with
// linear_before_reset keeps Rbh out of the bias and passes it to the scan.
// Per-direction slices of W, R (transposed to [H, n·H]), B, the initial
// states and P are folded at compile time when they are constants, else
// built with hlo.slice/reshape/transpose. Absent initial states and
// peepholes are zero splats. Y is the concatenation of the y_d along a new
// direction dimension (transposed to [B, S, D, H] for layout 1); Y_h and
// Y_c likewise. With sequence_lens, each scan also takes the constant
// mask[t, b] = t < L_b (see hlo.rnn_scan).
func legalizeRNN(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	l, err := rnnConfig(op)
	if err != nil {
		return nil, err
	}
	x := op.Operand(0)
	if l.layout == 1 {
		if x, err = b.insert(hlo.Transpose(x, []int64{1, 0, 2}, op.Loc)); err != nil {
			return nil, err
		}
	}
	var ys, hs, cs []*graphir.Value
	for d := int64(0); d < l.dirs; d++ {
		res, err := l.legalizeDirection(op, b, x, d)
		if err != nil {
			return nil, err
		}
		y, err := b.reshape(res[0], []int64{l.s, 1, l.b, l.h})
		if err != nil {
			return nil, err
		}
		ys = append(ys, y)
		for i, dst := range []*[]*graphir.Value{&hs, &cs}[:len(res)-1] {
			v, err := b.reshape(res[i+1], []int64{1, l.b, l.h})
			if err != nil {
				return nil, err
			}
			*dst = append(*dst, v)
		}
	}
	out := []*graphir.Value{}
	for i, parts := range [][]*graphir.Value{ys, hs, cs}[:len(op.Results)] {
		v, err := l.joinDirections(op, b, parts, i == 0)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// joinDirections concatenates the per-direction results along the
// direction dimension and applies layout 1's transpose.
func (l *rnnLayer) joinDirections(op *graphir.Op, b *builder, parts []*graphir.Value, isY bool) (*graphir.Value, error) {
	dim := int64(0)
	perm := []int64{1, 0, 2}
	if isY {
		dim, perm = 1, []int64{2, 0, 1, 3}
	}
	v := parts[0]
	if len(parts) > 1 {
		var err error
		if v, err = b.insert(hlo.Concatenate(parts, dim, op.Loc)); err != nil {
			return nil, err
		}
	}
	if l.layout == 1 {
		return b.insert(hlo.Transpose(v, perm, op.Loc))
	}
	return v, nil
}

// legalizeDirection emits the projection and the scan of direction d and
// returns the scan's results.
func (l *rnnLayer) legalizeDirection(op *graphir.Op, b *builder, x *graphir.Value, d int64) ([]*graphir.Value, error) {
	n := l.gates * l.h
	w, err := b.dirSlice(op.Operand(1), 0, d, l.dirs)
	if err != nil {
		return nil, err
	}
	xw, err := b.insert(hlo.DotGeneral(x, w, hlo.DotDims{LhsContracting: []int64{2}, RhsContracting: []int64{1}}, op.Loc))
	if err != nil {
		return nil, err
	}
	if l.hasB {
		bias, err := l.bias(op, b, d)
		if err != nil {
			return nil, err
		}
		bb, err := b.broadcastInDim(bias, []int64{l.s, l.b, n}, []int64{2})
		if err != nil {
			return nil, err
		}
		if xw, err = b.op(hlo.AddOp, xw, bb); err != nil {
			return nil, err
		}
	}
	r, err := b.dirSlice(op.Operand(2), 0, d, l.dirs)
	if err != nil {
		return nil, err
	}
	if r, err = b.transpose2(r); err != nil {
		return nil, err
	}
	operands := []*graphir.Value{xw, r}
	for _, o := range l.stateOperands() {
		v, err := l.stateOperand(op, b, o, d)
		if err != nil {
			return nil, err
		}
		operands = append(operands, v)
	}
	if l.lens != nil {
		mask, err := l.mask(b)
		if err != nil {
			return nil, err
		}
		operands = append(operands, mask)
	}
	clip := l.clip
	scan, err := hlo.RNNScan(operands, hlo.RNNScanAttrs{Cell: l.cell, Activations: l.acts[d], Clip: clip,
		InputForget: l.inputForget, LinearBeforeReset: l.lbr, Reverse: l.reverseDir(d)}, op.Loc)
	if err != nil {
		return nil, b.src.Errorf("failed to legalize to hlo: %s", diagMessage(err))
	}
	b.src.Block.InsertBefore(b.src, scan)
	b.created = append(b.created, scan)
	return scan.Results, nil
}

// mask is the scan's i1 [S, B] constant mask[t, b] = t < L_b: a reverse
// scan then skips entry b's padding steps S−1 … L_b before running
// L_b−1 … 0, a forward one stops after L_b−1, and both zero Y there.
func (l *rnnLayer) mask(b *builder) (*graphir.Value, error) {
	m := graphir.NewZeroTensor(graphir.NewTensor(graphir.I1, l.s, l.b))
	for t := int64(0); t < l.s; t++ {
		for e := int64(0); e < l.b; e++ {
			if t < l.lens[e] {
				m.Data[t*l.b+e] = 1
			}
		}
	}
	return b.constant(m.ToDense())
}

// rnnStateOperand names the scan operands after xw and rt.
type rnnStateOperand int

const (
	stateH0  rnnStateOperand = 0
	stateC0  rnnStateOperand = 1
	stateP   rnnStateOperand = 2
	stateRbh rnnStateOperand = 3
)

func (l *rnnLayer) stateOperands() []rnnStateOperand {
	switch l.cell {
	case "lstm":
		return []rnnStateOperand{stateH0, stateC0, stateP}
	case "gru":
		return []rnnStateOperand{stateH0, stateRbh}
	}
	return []rnnStateOperand{stateH0}
}

// stateOperand returns the scan operand o of direction d: the initial
// state slice [B, H], P's row [3H], Rbh [H], or a zero splat when absent.
func (l *rnnLayer) stateOperand(op *graphir.Op, b *builder, o rnnStateOperand, d int64) (*graphir.Value, error) {
	zero := func(shape ...int64) (*graphir.Value, error) { return b.splat(graphir.NewTensor(l.elem, shape...), 0) }
	stateAxis := int64(0)
	if l.layout == 1 {
		stateAxis = 1
	}
	switch o {
	case stateH0, stateC0:
		i, present := 4, l.hasH0
		if o == stateC0 {
			i, present = 5, l.hasC0
		}
		if !present {
			return zero(l.b, l.h)
		}
		return b.dirSlice(op.Operand(i), stateAxis, d, l.dirs)
	case stateP:
		if !l.hasP {
			return zero(3 * l.h)
		}
		return b.dirSlice(op.Operand(6), 0, d, l.dirs)
	}
	if !l.hasB || !l.lbr {
		return zero(l.h)
	}
	row, err := b.dirSlice(op.Operand(3), 0, d, l.dirs)
	if err != nil {
		return nil, err
	}
	return b.slice1(row, 5*l.h, 6*l.h)
}

// bias returns Wb_d + Rb_d [n·H]; for GRU with linear_before_reset the h
// gate's Rb is left out (the scan adds it inside the reset product).
func (l *rnnLayer) bias(op *graphir.Op, b *builder, d int64) (*graphir.Value, error) {
	n := l.gates * l.h
	skip := l.cell == "gru" && l.lbr
	if c := constantData(op.Operand(3)); c != nil {
		t, err := graphir.TensorFromDense(c)
		if err != nil {
			return nil, err
		}
		out := graphir.NewZeroTensor(graphir.NewTensor(l.elem, n))
		row := t.Data[d*2*n:]
		for g := int64(0); g < n; g++ {
			out.Data[g] = row[g]
			if !skip || g < 2*l.h {
				out.Data[g] += row[n+g]
			}
		}
		return b.constant(out.ToDense())
	}
	row, err := b.dirSlice(op.Operand(3), 0, d, l.dirs)
	if err != nil {
		return nil, err
	}
	wb, err := b.slice1(row, 0, n)
	if err != nil {
		return nil, err
	}
	rb, err := b.slice1(row, n, 2*n)
	if skip && err == nil {
		var part, zeros *graphir.Value
		if part, err = b.slice1(row, n, n+2*l.h); err == nil {
			if zeros, err = b.splat(graphir.NewTensor(l.elem, l.h), 0); err == nil {
				rb, err = b.insert(hlo.Concatenate([]*graphir.Value{part, zeros}, 0, b.src.Loc))
			}
		}
	}
	if err != nil {
		return nil, err
	}
	return b.op(hlo.AddOp, wb, rb)
}

// slice1 is v[lo:hi] of a rank-1 v.
func (b *builder) slice1(v *graphir.Value, lo, hi int64) (*graphir.Value, error) {
	return b.insert(hlo.Slice(v, []int64{lo}, []int64{hi}, nil, b.src.Loc))
}

// dirSlice returns v with dimension axis (of size dirs) fixed at d and
// removed: a folded constant when v is one, else hlo.slice + reshape (v
// itself, reshaped, when dirs is 1).
func (b *builder) dirSlice(v *graphir.Value, axis, d, dirs int64) (*graphir.Value, error) {
	t, err := b.tensorOf(v, "recurrent layer operand")
	if err != nil {
		return nil, err
	}
	shape := append(append([]int64(nil), t.Shape[:axis]...), t.Shape[axis+1:]...)
	if c := constantData(v); c != nil {
		ct, err := graphir.TensorFromDense(c)
		if err != nil {
			return nil, err
		}
		out := graphir.NewZeroTensor(graphir.NewTensor(t.Elem, shape...))
		outer, inner := product(t.Shape[:axis]), product(t.Shape[axis+1:])
		for o := int64(0); o < outer; o++ {
			copy(out.Data[o*inner:(o+1)*inner], ct.Data[(o*dirs+d)*inner:])
		}
		return b.constant(out.ToDense())
	}
	if dirs > 1 {
		start, limit := make([]int64, t.Rank()), append([]int64(nil), t.Shape...)
		start[axis], limit[axis] = d, d+1
		if v, err = b.insert(hlo.Slice(v, start, limit, nil, b.src.Loc)); err != nil {
			return nil, err
		}
	}
	return b.reshape(v, shape)
}

// transpose2 returns the transpose of a rank-2 v (folded for a constant).
func (b *builder) transpose2(v *graphir.Value) (*graphir.Value, error) {
	t, err := b.tensorOf(v, "recurrence weights")
	if err != nil {
		return nil, err
	}
	if c := constantData(v); c != nil {
		ct, err := graphir.TensorFromDense(c)
		if err != nil {
			return nil, err
		}
		rows, cols := t.Shape[0], t.Shape[1]
		out := graphir.NewZeroTensor(graphir.NewTensor(t.Elem, cols, rows))
		for i := int64(0); i < rows; i++ {
			for j := int64(0); j < cols; j++ {
				out.Data[j*rows+i] = ct.Data[i*cols+j]
			}
		}
		return b.constant(out.ToDense())
	}
	return b.insert(hlo.Transpose(v, []int64{1, 0}, b.src.Loc))
}
