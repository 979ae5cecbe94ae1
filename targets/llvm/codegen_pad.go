package llvm

import (
	tir "github.com/tessera-ml/tessera/tensorir"
)

// Padded rows of local buffers, and the masks they make unnecessary.
//
// A register tile whose row does not fill its last vector (a convolution
// 28 outputs wide in 8-lane vectors) is accumulated by a block with a
// predicate (v < 28): every reduction step's load and store of the tile
// is masked. LLVM cannot promote masked memory to registers, so the tail
// tile's accumulators stay on the stack, and on Zen 3 a masked store
// costs over ten cycles: LeNet-5's first convolution spent most of its
// time in them. As Halide's RoundUp tail strategy does for its
// intermediates, a buffer allocated in the kernel gets rows padded to a
// whole number of the vectors that access it (the row pitch; the rest of
// the layout row-major on top, as storage_align's padded strides), and a
// contiguous vector access to it under a lane mask is generated unmasked
// when that is invisible:
//
//   - every lane's index lies in [0, pitch) along the row (the loop
//     ranges bound it), and the other indices do not depend on the lanes,
//     so each lane touches an element or the padding of the same row;
//   - for a store, each lane whose row index is below the row's extent E
//     is active: every lane-dependent conjunct c of the conditions that
//     made the mask satisfies c ≥ (E − 1 − index) + r with r ≥ 0
//     independent of the lanes (the split tail's v < E is exactly this),
//     so inactive lanes write padding only, which no active lane reads
//     or writes (active lanes access elements in bounds), and a lane-
//     invariant conjunct holds because the masked code runs only when
//     some lane is active.
//
// Inactive lanes of a load read padding or elements of the same row; the
// values of inactive lanes are unspecified anyway (codegen_memory.go).

// padRows gives local buffer buf (allocated by the code being
// generated) rows padded to a multiple of the lanes of the vectorized
// loops in body that access it, when its last dimension is not one
// already: its strides go to mgen.aligned. Buffers with explicit strides,
// an element offset or storage_align'ed strides keep their layout.
func (g *fgen) padRows(buf *tir.Buffer, body tir.Stmt) {
	n := len(buf.Shape)
	if n < 2 || len(buf.Strides) > 0 || buf.ElemOffset != nil || g.m.device {
		return
	}
	if _, ok := g.m.aligned[buf]; ok {
		return
	}
	shape := make([]int64, n)
	for d, s := range buf.Shape {
		c, ok := s.(*tir.IntImm)
		if !ok || c.Value < 1 {
			return
		}
		shape[d] = c.Value
	}
	lanes := vectorLanesAccessing(body, buf)
	e := shape[n-1]
	if lanes < 2 || e%lanes == 0 {
		return
	}
	st := make([]int64, n)
	st[n-1] = 1
	st[n-2] = (e + lanes - 1) / lanes * lanes
	for d := n - 3; d >= 0; d-- {
		st[d] = st[d+1] * shape[d+1]
	}
	g.m.aligned[buf] = st
}

// vectorLanesAccessing is the largest number of lanes of a vectorized
// loop in s whose body loads or stores buf (0 when none does).
func vectorLanesAccessing(s tir.Stmt, buf *tir.Buffer) int64 {
	var lanes int64
	tir.VisitStmt(s, func(st tir.Stmt) bool {
		f, ok := st.(*tir.For)
		if !ok || f.Kind != tir.Vectorized {
			return true
		}
		ext, ok := f.Extent.(*tir.IntImm)
		if ok && ext.Value <= MaxVectorLanes && ext.Value > lanes && tir.AccessesBuffer(f.Body, buf) {
			lanes = ext.Value
		}
		return true
	})
	return lanes
}

// rowPitch is the distance in elements between consecutive rows (the
// last dimension) of buf as laid out: its padded stride, else the row's
// extent (0 when not a constant).
func (g *fgen) rowPitch(buf *tir.Buffer) int64 {
	n := len(buf.Shape)
	if st, ok := g.m.aligned[buf]; ok && n >= 2 {
		return st[n-2]
	}
	if len(buf.Strides) > 0 || n == 0 {
		return 0
	}
	if c, ok := buf.Shape[n-1].(*tir.IntImm); ok {
		return c.Value
	}
	return 0
}

// unmasked reports whether the contiguous vector access of buf at
// indices, under the current lane mask, may be generated unmasked (see
// above): a local buffer only, and for a store only when the inactive
// lanes fall in the row's padding.
func (g *fgen) unmasked(buf *tir.Buffer, indices []tir.Expr, store bool) bool {
	vs := g.vec
	n := len(indices)
	if vs == nil || vs.mask == nil || vs.opaque || !g.local[buf] || n == 0 || n != len(buf.Shape) {
		return false
	}
	for _, ix := range indices[:n-1] {
		if vs.isVarying(ix) {
			return false
		}
	}
	if c, ok := vs.coeff(indices[n-1]); !ok || c != 1 {
		return false
	}
	e, ok := buf.Shape[n-1].(*tir.IntImm)
	pitch := g.rowPitch(buf)
	if !ok || pitch < e.Value {
		return false
	}
	row := g.expandDefs(asIndex(indices[n-1]))
	if !tir.Bound(row, g.ranges).Within(0, pitch-1) {
		return false
	}
	if !store {
		return true
	}
	// below: (E − 1 − row) ≥ 0, the lane holds an element.
	below := tir.Bin(tir.OpSub, tir.Int(e.Value-1), row)
	for _, c := range vs.conds {
		for _, b := range conjuncts(c) {
			if !g.impliedByRow(b, below) {
				return false
			}
		}
	}
	return true
}

// impliedByRow reports whether conjunct b holds on every lane where
// below ≥ 0, given that some lane is active: b is lane-invariant, or
// b's d ≥ 0 form is below + r with r ≥ 0 and lane-invariant.
func (g *fgen) impliedByRow(b *tir.Binary, below tir.Expr) bool {
	d := compareFact(b)
	if d == nil {
		return false
	}
	d = g.expandDefs(asIndex(d))
	if !g.vec.isVarying(d) {
		return true
	}
	r := tir.Simplify(tir.Bin(tir.OpSub, d, below), g.ranges)
	if g.vec.isVarying(r) {
		return false
	}
	bd := tir.Bound(r, g.ranges)
	return !bd.IsFull() && bd.Lo >= 0
}

// expandDefs replaces the block iteration and let variables in e by
// their defining expressions, down to loop variables.
func (g *fgen) expandDefs(e tir.Expr) tir.Expr {
	for range 8 {
		next := tir.Substitute(e, g.defs)
		if next == e {
			break
		}
		e = next
	}
	return e
}
