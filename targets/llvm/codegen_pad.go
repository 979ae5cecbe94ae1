package llvm

import (
	"maps"

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
//
// The row's extent E may be replaced by a live bound L: when every access
// to the buffer while it is allocated sits under a block predicate or if
// condition with a conjunct idx < L, L depending only on values bound
// outside the allocation (a matrix-vector product's last tile of outputs,
// fused·112 + idx < 1000, gives L = 1000 − fused·112), the elements from L
// on are never touched by an active lane during the allocation's
// lifetime, and a store whose inactive lanes all lie there may write them.

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
// above): a buffer allocated by the CPU code being generated only (a GPU
// block's shared buffer is written by other threads too), and for a
// store only when the inactive lanes fall in the row's padding or past
// its live bound.
func (g *fgen) unmasked(buf *tir.Buffer, indices []tir.Expr, store bool) bool {
	vs := g.vec
	n := len(indices)
	lb := g.local[buf]
	if vs == nil || vs.mask == nil || vs.opaque || lb == nil || g.m.device || n == 0 || n != len(buf.Shape) {
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
	if g.inactiveDead(row, tir.Int(e.Value)) {
		return true
	}
	live := lb.liveBound(buf)
	return live != nil && g.inactiveDead(row, live)
}

// inactiveDead reports whether every lane whose row index is below lim
// is active under the current mask, so that inactive lanes touch only
// elements from lim on.
func (g *fgen) inactiveDead(row, lim tir.Expr) bool {
	// below ≥ 0: the lane's element is below lim.
	below := g.expandDefs(tir.Bin(tir.OpSub, tir.Bin(tir.OpSub, lim, tir.Int(1)), row))
	for _, c := range g.vec.conds {
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

// localBuf is a buffer allocated by the code being generated: the
// statement its allocation covers and, once a store needs it, its rows'
// live bound (nil: none).
type localBuf struct {
	scope tir.Stmt
	live  tir.Expr
	done  bool
}

// liveBound is buf's live bound, found on the first call.
func (lb *localBuf) liveBound(buf *tir.Buffer) tir.Expr {
	if !lb.done {
		lb.live, lb.done = liveBound(buf, lb.scope), true
	}
	return lb.live
}

// liveBound is the live bound L of local buffer buf's rows over scope,
// the statement its allocation covers (see above), or nil when some
// access is not under a conjunct giving the same L.
func liveBound(buf *tir.Buffer, scope tir.Stmt) tir.Expr {
	if len(buf.Shape) == 0 {
		return nil
	}
	w := &liveWalk{buf: buf, inner: map[*tir.Var]bool{}, ok: true}
	w.stmt(scope, nil, map[*tir.Var]tir.Expr{})
	if !w.ok {
		return nil
	}
	return w.bound
}

// liveWalk finds the live bound of buf's rows: conds are the conditions
// (block predicates, if conditions) around the statement walked, in the
// variables of the loops; sub maps block iteration and let variables to
// their values in those variables; inner holds the variables bound
// inside the allocation.
type liveWalk struct {
	buf   *tir.Buffer
	inner map[*tir.Var]bool
	bound tir.Expr
	ok    bool
}

func (w *liveWalk) stmt(s tir.Stmt, conds []tir.Expr, sub map[*tir.Var]tir.Expr) {
	if !w.ok || s == nil {
		return
	}
	switch x := s.(type) {
	case *tir.SeqStmt:
		for _, c := range x.Stmts {
			w.stmt(c, conds, sub)
		}
	case *tir.For:
		w.inner[x.Var] = true
		w.exprs(conds, sub, x.Min, x.Extent)
		w.stmt(x.Body, conds, sub)
	case *tir.LetStmt:
		w.inner[x.Var] = true
		w.exprs(conds, sub, x.Value)
		w.stmt(x.Body, conds, with(sub, x.Var, tir.Substitute(x.Value, sub)))
	case *tir.IfThenElse:
		w.exprs(conds, sub, x.Cond)
		w.stmt(x.Then, append(conds[:len(conds):len(conds)], tir.Substitute(x.Cond, sub)), sub)
		w.stmt(x.Else, conds, sub)
	case *tir.Allocate:
		w.stmt(x.Body, conds, sub)
	case *tir.BlockRealize:
		w.realize(x, conds, sub)
	case *tir.Block:
		w.stmt(x.Init, conds, sub)
		w.stmt(x.Body, conds, sub)
	case *tir.BufferStore:
		if x.Buffer == w.buf {
			w.access(x.Indices, conds, sub)
		}
		w.exprs(conds, sub, x.Value)
		w.exprs(conds, sub, x.Indices...)
	case *tir.Evaluate:
		w.exprs(conds, sub, x.Value)
	default:
		w.ok = !tir.AccessesBuffer(s, w.buf)
	}
}

// realize walks a block under its predicate with its iteration variables
// substituted.
func (w *liveWalk) realize(x *tir.BlockRealize, conds []tir.Expr, sub map[*tir.Var]tir.Expr) {
	w.exprs(conds, sub, x.Values...)
	if x.Predicate != nil {
		w.exprs(conds, sub, x.Predicate)
		conds = append(conds[:len(conds):len(conds)], tir.Substitute(x.Predicate, sub))
	}
	if x.Block == nil || len(x.Values) != len(x.Block.IterVars) {
		w.ok = !tir.AccessesBuffer(x, w.buf)
		return
	}
	inner := sub
	for i, iv := range x.Block.IterVars {
		w.inner[iv.Var] = true
		inner = with(inner, iv.Var, tir.Substitute(x.Values[i], sub))
	}
	w.stmt(x.Block, conds, inner)
}

// exprs checks the loads of buf in es.
func (w *liveWalk) exprs(conds []tir.Expr, sub map[*tir.Var]tir.Expr, es ...tir.Expr) {
	for _, e := range es {
		if e == nil {
			continue
		}
		tir.VisitExpr(e, func(y tir.Expr) bool {
			if ld, ok := y.(*tir.BufferLoad); ok && ld.Buffer == w.buf {
				w.access(ld.Indices, conds, sub)
			}
			return w.ok
		})
	}
}

// access requires a conjunct of conds that bounds the row index of an
// access at indices by the live bound (the first such access sets it).
func (w *liveWalk) access(indices []tir.Expr, conds []tir.Expr, sub map[*tir.Var]tir.Expr) {
	if len(indices) != len(w.buf.Shape) {
		w.ok = false
		return
	}
	idx := asIndex(tir.Substitute(indices[len(indices)-1], sub))
	for _, c := range conds {
		for _, b := range conjuncts(c) {
			d := compareFact(b)
			if d == nil {
				continue
			}
			// d ≥ 0 is idx < L for L = d + idx + 1.
			l := tir.Simplify(tir.Bin(tir.OpAdd, tir.Bin(tir.OpAdd, asIndex(d), idx), tir.Int(1)), nil)
			if usesAny(l, w.inner) {
				continue
			}
			if w.bound == nil {
				w.bound = l
				return
			}
			if k, ok := tir.Simplify(tir.Bin(tir.OpSub, l, w.bound), nil).(*tir.IntImm); ok && k.Value == 0 {
				return
			}
		}
	}
	w.ok = false
}

// with is sub with v mapped to e (sub is not modified).
func with(sub map[*tir.Var]tir.Expr, v *tir.Var, e tir.Expr) map[*tir.Var]tir.Expr {
	out := maps.Clone(sub)
	out[v] = e
	return out
}
