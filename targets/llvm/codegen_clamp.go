package llvm

import (
	"github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// clampOf matches min(max(e, lo), hi) or max(min(e, hi), lo) with
// constant lo ≤ hi, and the one-sided max(e, lo) and min(e, hi) (what
// simplification leaves of a clamp whose other side is provably in
// range): there the missing bound is 0 or dim-1.
func clampOf(x tir.Expr, dim int64) (e tir.Expr, lo, hi int64, ok bool) {
	outer, isBin := x.(*tir.Binary)
	if !isBin || (outer.Op != tir.OpMin && outer.Op != tir.OpMax) {
		return nil, 0, 0, false
	}
	k1, isK1 := outer.B.(*tir.IntImm)
	if !isK1 {
		return nil, 0, 0, false
	}
	inner, isBin := outer.A.(*tir.Binary)
	var k2 *tir.IntImm
	if isBin && inner.Op != outer.Op && (inner.Op == tir.OpMin || inner.Op == tir.OpMax) {
		k2, _ = inner.B.(*tir.IntImm)
	}
	switch {
	case k2 != nil && outer.Op == tir.OpMin:
		e, lo, hi = inner.A, k2.Value, k1.Value
	case k2 != nil:
		e, lo, hi = inner.A, k1.Value, k2.Value
	case outer.Op == tir.OpMax:
		e, lo, hi = outer.A, k1.Value, dim-1
	default:
		e, lo, hi = outer.A, 0, k1.Value
	}
	return e, lo, hi, lo <= hi
}

// clampedLoad generates, inside a widened body, a load whose last index is
// clamp(e, lo, hi) with e of constant lane stride s, 1 ≤ s ≤
// maxLoadStride (and every other index lane-independent, row-major
// layout, 0 ≤ lo ≤ hi < the last dimension) — what a padded
// convolution's or pooling's input access lowers to — as one masked
// vector load at e for the lanes with lo ≤ e ≤ hi (stridedMaskedLoad:
// for s > 1 lanes·s contiguous elements and a shuffle), the
// other lanes taking the element at lo (e < lo) or hi (e > hi): exactly
// the gathered values, without a per-lane gather. ok is false when the
// load does not match.
func (g *fgen) clampedLoad(x *tir.BufferLoad) (value.Value, bool, error) {
	n := len(x.Indices)
	if g.vec == nil || g.lane0 || n == 0 || len(x.Buffer.Strides) != 0 || x.Buffer.ElemOffset != nil {
		return nil, false, nil
	}
	shape, okShape := x.Buffer.ConstShape()
	if !okShape {
		return nil, false, nil
	}
	for _, ix := range x.Indices[:n-1] {
		if g.vec.isVarying(ix) {
			return nil, false, nil
		}
	}
	e, lo, hi, ok := clampOf(x.Indices[n-1], shape[n-1])
	if !ok || lo < 0 || hi >= shape[n-1] {
		return nil, false, nil
	}
	stride, okc := g.vec.coeff(e)
	if !okc || stride < 1 || stride > maxLoadStride {
		return nil, false, nil
	}
	at := func(last tir.Expr) (*access, value.Value, error) {
		ix := append(append([]tir.Expr{}, x.Indices[:n-1]...), last)
		a, err := g.access(x.Buffer, ix)
		if err != nil {
			return nil, nil, err
		}
		idx, err := g.scalarIndex(a)
		return a, idx, err
	}
	a, idx, err := at(e)
	if err != nil {
		return nil, false, err
	}
	_, loIdx, err := at(tir.IntOf(e.DType(), lo))
	if err != nil {
		return nil, false, err
	}
	_, hiIdx, err := at(tir.IntOf(e.DType(), hi))
	if err != nil {
		return nil, false, err
	}
	align := ir.Align(tir.ElemBytes(x.Buffer.DType))
	loV := g.cur.NewLoad(a.st, g.elemPtr(a, loIdx))
	loV.Align = align
	hiV := g.cur.NewLoad(a.st, g.elemPtr(a, hiIdx))
	hiV.Align = align
	ev, err := g.expr(e)
	if err != nil {
		return nil, false, err
	}
	lanes := g.vec.lanes
	ev = g.splat(g.toI64(ev), lanes)
	below := g.cur.NewICmp(enum.IPredSLT, ev, g.splat(iconst(lo), lanes))
	above := g.cur.NewICmp(enum.IPredSGT, ev, g.splat(iconst(hi), lanes))
	out := g.cur.NewOr(below, above)
	allOnes := g.splat(constant.True, lanes)
	var m value.Value = g.cur.NewXor(out, allOnes)
	if g.vec.mask != nil {
		m = g.cur.NewAnd(m, g.vec.mask)
	}
	pass := g.cur.NewSelect(below, g.splat(loV, lanes), g.splat(hiV, lanes))
	v := g.stridedMaskedLoad(g.elemPtr(a, idx), a.st, int(stride), m, align)
	return g.fromStorage(a, g.cur.NewSelect(m, v, pass)), true, nil
}

// stridedMaskedLoad loads lane l from p + l·s for the lanes active in the
// i1 vector m (the others are zero) as one masked load of lanes·s
// contiguous elements, of which only every s-th of an active lane
// touches memory, and a shuffle that picks them. For s = 1 the shuffle
// is the identity, which LLVM folds away (as it folds a select on m
// into the load's pass-through).
func (g *fgen) stridedMaskedLoad(p value.Value, st types.Type, s int, m value.Value, align ir.Align) value.Value {
	lanes := g.vec.lanes
	wide := lanes * s
	i32 := func(n int) constant.Constant { return constant.NewInt(types.I32, int64(n)) }
	sel := make([]constant.Constant, wide)
	for j := range sel {
		sel[j] = i32(lanes) // the false of the zero vector
		if j%s == 0 {
			sel[j] = i32(j / s)
		}
	}
	wm := g.cur.NewShuffleVector(m, constant.NewZeroInitializer(m.Type()), constant.NewVector(types.NewVector(uint64(wide), types.I32), sel...))
	wt := types.NewVector(uint64(wide), st)
	wp := g.cur.NewBitCast(p, ptrTo(wt, p))
	f := g.m.declare("llvm.masked.load."+llvmSuffix(wt)+".p0"+llvmSuffix(wt), wt, wp.Type(), types.I32, wm.Type(), wt)
	ld := g.cur.NewCall(f, wp, constant.NewInt(types.I32, int64(align)), wm, constant.NewZeroInitializer(wt))
	return g.cur.NewShuffleVector(ld, constant.NewUndef(wt), laneMask(0, s, lanes))
}

// addends flattens the top-level integer additions of e.
func addends(e tir.Expr) []tir.Expr {
	if b, ok := e.(*tir.Binary); ok && b.Op == tir.OpAdd && !b.A.DType().IsFloat() {
		return append(addends(b.A), addends(b.B)...)
	}
	return []tir.Expr{e}
}

// lane0Ptr is the address of a's element for lane 0 (or the only lane),
// one getelementptr per addend of the flat index (Σ index_d × stride_d):
// LLVM's alias analysis decomposes each GEP index on its own, so
// accesses to different rows of one buffer (an unrolled register tile of
// a local accumulator) are seen as disjoint, which lets LICM keep the
// accumulators in registers across the reduction loop. One GEP of the
// summed index hides that.
func (g *fgen) lane0Ptr(a *access) (value.Value, error) {
	terms := addends(a.flat)
	if len(terms) < 2 {
		idx, err := g.scalarIndex(a)
		if err != nil {
			return nil, err
		}
		return g.elemPtr(a, idx), nil
	}
	saved := g.lane0
	g.lane0 = g.vec != nil
	defer func() { g.lane0 = saved }()
	p := a.base
	for _, t := range terms {
		v, err := g.expr(t)
		if err != nil {
			return nil, err
		}
		p = g.cur.NewGetElementPtr(a.st, p, g.toI64(v))
	}
	return p, nil
}
