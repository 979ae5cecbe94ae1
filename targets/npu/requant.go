package npu

import (
	"fmt"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// requantSteps maps an int8 kernel's epilogue value e =
// cast<i8|ui8>(clamp(y, lo, hi)) that graph.requantize lowers to
// (dialects/graph/requantize.go, legalizeRequantize: gemmlowp/TFLite's
// integer-only requantization, Jacob et al. 2018, in exact i64
// arithmetic):
//
//	A = cast<i64>(acc)   (acc: an i32 chain over the contraction C)
//	y = shr(A·mh + r + shr(A·ml, 16), tp) + zp
//
// where, for a multiplier m and shift s per output channel (loads of
// N-indexed parameters, or constants), mh = m >> 16, ml = m − (mh << 16),
// tp = s + 15 and r = 2^(tp−1): y = zp + floor((acc·m + 2^(30+s)) /
// 2^(31+s)). It returns acc's steps followed by mulq m, shr s, add zp,
// max lo, min hi — exact for s ≥ 1 (ISA.md, "ALU"). The channel
// expressions mh, ml, tp and r are recognized by value, not by form: each
// is evaluated over multipliers and shifts that span their ranges.
func (g *gemmKernel) requantSteps(f *tir.PrimFunc, cast *tir.Cast, cload *tir.BufferLoad, c *contractionInfo, sub func([]tir.Expr) []tir.Expr) ([]aluStep, error) {
	bad := func(why string) error {
		return refuse("int8 epilogue %s is not a requantization (%s)", tir.ExprString(cast), why)
	}
	y, lo, hi, ok := clampOf(cast.X)
	if !ok {
		return nil, bad("no constant clamp")
	}
	shifted, zpExpr, ok := splitAdd(y, func(e tir.Expr) bool { return readsBuffer(e, cload.Buffer) })
	if !ok {
		return nil, bad("no zero point added to the shifted sum")
	}
	zp, okZ := evalConst(zpExpr, nil)
	sh, okS := shifted.(*tir.Binary)
	if !okZ || !okS || sh.Op != tir.OpShr || readsBuffer(sh.B, cload.Buffer) {
		return nil, bad("no rounding shift by a channel amount")
	}
	r, err := matchRequantSum(sh.A, cload.Buffer)
	if err != nil {
		return nil, bad(err.Error())
	}
	r.tp = sh.B
	m, s, err := r.channels(g, f, c, sub)
	if err != nil {
		return nil, bad(err.Error())
	}
	acc := r.a1
	if !readsLoad(acc, cload) {
		acc = r.a2
	}
	steps, err := g.chain(f, acc.X, cload, c, sub)
	if err != nil {
		return nil, err
	}
	m.Op, s.Op, s.Shift = "mulq", "shr", true
	steps = append(steps, m, s)
	if zp != 0 {
		steps = append(steps, aluStep{Op: "add", Kind: opConst, Value: float64(zp)})
	}
	return append(steps, aluStep{Op: "max", Kind: opConst, Value: float64(lo)}, aluStep{Op: "min", Kind: opConst, Value: float64(hi)}), nil
}

// requantSum is the parts of the sum A·mh + r + shr(A·ml, 16) and the
// shift amount tp.
type requantSum struct {
	a1, a2        *tir.Cast // the two occurrences of A = cast<i64>(acc)
	mh, ml, r, tp tir.Expr
}

// matchRequantSum splits e into the three terms (in any order and
// association) and checks that both A's are the same i32 value widened.
func matchRequantSum(e tir.Expr, c *tir.Buffer) (*requantSum, error) {
	var terms []tir.Expr
	var flatten func(e tir.Expr)
	flatten = func(e tir.Expr) {
		if b, ok := e.(*tir.Binary); ok && b.Op == tir.OpAdd {
			flatten(b.A)
			flatten(b.B)
			return
		}
		terms = append(terms, e)
	}
	flatten(e)
	if len(terms) != 3 {
		return nil, fmt.Errorf("%d terms in the shifted sum, not 3", len(terms))
	}
	rs := &requantSum{}
	for _, t := range terms {
		if !readsBuffer(t, c) {
			if rs.r != nil {
				return nil, fmt.Errorf("two terms without the accumulator")
			}
			rs.r = t
			continue
		}
		if b, ok := t.(*tir.Binary); ok && b.Op == tir.OpShr {
			if k, ok := evalConst(b.B, nil); !ok || k != 16 || rs.a2 != nil {
				return nil, fmt.Errorf("a shift of the accumulator's product by %s", tir.ExprString(b.B))
			}
			a, other, ok := productWithAcc(b.A, c)
			if !ok {
				return nil, fmt.Errorf("the low product %s", tir.ExprString(b.A))
			}
			rs.a2, rs.ml = a, other
			continue
		}
		a, other, ok := productWithAcc(t, c)
		if !ok || rs.a1 != nil {
			return nil, fmt.Errorf("the term %s", tir.ExprString(t))
		}
		rs.a1, rs.mh = a, other
	}
	if rs.a1 == nil || rs.a2 == nil || rs.r == nil {
		return nil, fmt.Errorf("missing term")
	}
	if !tir.Equal(rs.a1, rs.a2) {
		return nil, fmt.Errorf("two different accumulator values")
	}
	return rs, nil
}

// productWithAcc matches A·x or x·A with A = cast<i64>(an i32 value
// reading c) and x not reading c.
func productWithAcc(e tir.Expr, c *tir.Buffer) (*tir.Cast, tir.Expr, bool) {
	b, ok := e.(*tir.Binary)
	if !ok || b.Op != tir.OpMul {
		return nil, nil, false
	}
	for _, p := range [][2]tir.Expr{{b.A, b.B}, {b.B, b.A}} {
		a, ok := p[0].(*tir.Cast)
		if ok && a.Type == tir.DI64 && a.X.DType() == tir.DI32 && readsBuffer(a, c) && !readsBuffer(p[1], c) {
			return a, p[1], true
		}
	}
	return nil, nil, false
}

// channels identifies the multiplier and the shift: each is one
// parameter load (the same in mh and ml; in tp and r) or absent (the
// parts are constants), and the parts must compute m >> 16, m mod 2^16,
// s + 15 and 2^(s+14) for every multiplier in [2^30, 2^31) and shift in
// [−14, 31] tried. It returns the mulq and shr operands.
func (r *requantSum) channels(g *gemmKernel, f *tir.PrimFunc, c *contractionInfo, sub func([]tir.Expr) []tir.Expr) (aluStep, aluStep, error) {
	mLoad, err := singleLoad(r.mh, r.ml)
	if err != nil {
		return aluStep{}, aluStep{}, err
	}
	sLoad, err := singleLoad(r.tp, r.r)
	if err != nil {
		return aluStep{}, aluStep{}, err
	}
	var m, s aluStep
	if mLoad == nil {
		mh, ok1 := evalConst(r.mh, nil)
		ml, ok2 := evalConst(r.ml, nil)
		if !ok1 || !ok2 || ml < 0 || ml >= 1<<16 {
			return m, s, fmt.Errorf("multiplier parts %s and %s", tir.ExprString(r.mh), tir.ExprString(r.ml))
		}
		m = aluStep{Kind: opConst, Value: float64(mh<<16 + ml)}
	} else {
		for _, v := range []int64{1 << 30, 1<<30 + 1, 1<<30 + 65535, 1<<30 + 65536, 1518500250, 1234567890, 1<<31 - 1} {
			mh, ok1 := evalConst(r.mh, map[*tir.Buffer]int64{mLoad.Buffer: v})
			ml, ok2 := evalConst(r.ml, map[*tir.Buffer]int64{mLoad.Buffer: v})
			if !ok1 || !ok2 || mh != v>>16 || ml != v&0xffff {
				return m, s, fmt.Errorf("the multiplier's parts at %d", v)
			}
		}
		if m, err = g.operand(f, "mulq", mLoad, c, sub); err != nil {
			return m, s, err
		}
	}
	if sLoad == nil {
		tp, ok1 := evalConst(r.tp, nil)
		rv, ok2 := evalConst(r.r, nil)
		if !ok1 || !ok2 || tp < 1 || tp > 62 || rv != 1<<(tp-1) {
			return m, s, fmt.Errorf("shift parts %s and %s", tir.ExprString(r.tp), tir.ExprString(r.r))
		}
		if tp-15 < 1 {
			return m, s, fmt.Errorf("shift %d below 1: the NPU's mulq then shr is exact only from 1", tp-15)
		}
		return m, aluStep{Kind: opConst, Value: float64(tp - 15)}, nil
	}
	for v := int64(-14); v <= 31; v++ {
		tp, ok1 := evalConst(r.tp, map[*tir.Buffer]int64{sLoad.Buffer: v})
		rv, ok2 := evalConst(r.r, map[*tir.Buffer]int64{sLoad.Buffer: v})
		if !ok1 || !ok2 || tp != v+15 || rv != 1<<(v+14) {
			return m, s, fmt.Errorf("the shift's parts at %d", v)
		}
	}
	s, err = g.operand(f, "shr", sLoad, c, sub)
	return m, s, err
}

// singleLoad is the one parameter load the expressions read (all its
// occurrences equal), or nil when they read none.
func singleLoad(es ...tir.Expr) (*tir.BufferLoad, error) {
	var found *tir.BufferLoad
	var err error
	for _, e := range es {
		tir.VisitExpr(e, func(x tir.Expr) bool {
			l, ok := x.(*tir.BufferLoad)
			if !ok {
				return true
			}
			if found != nil && !tir.Equal(found, l) {
				err = fmt.Errorf("%s and %s in one channel value", tir.ExprString(found), tir.ExprString(l))
			}
			if found == nil {
				found = l
			}
			return false
		})
	}
	return found, err
}

// clampOf matches min(max(y, lo), hi) or max(min(y, hi), lo) (operands
// in either order) with constant bounds.
func clampOf(e tir.Expr) (y tir.Expr, lo, hi int64, ok bool) {
	outer, ok1 := e.(*tir.Binary)
	if !ok1 || (outer.Op != tir.OpMin && outer.Op != tir.OpMax) {
		return nil, 0, 0, false
	}
	innerOp := tir.OpMax
	if outer.Op == tir.OpMax {
		innerOp = tir.OpMin
	}
	for _, p := range [][2]tir.Expr{{outer.A, outer.B}, {outer.B, outer.A}} {
		b1, okB := evalConst(p[1], nil)
		in, okI := p[0].(*tir.Binary)
		if !okB || !okI || in.Op != innerOp {
			continue
		}
		for _, q := range [][2]tir.Expr{{in.A, in.B}, {in.B, in.A}} {
			if b2, ok := evalConst(q[1], nil); ok {
				if outer.Op == tir.OpMin {
					return q[0], b2, b1, true
				}
				return q[0], b1, b2, true
			}
		}
	}
	return nil, 0, 0, false
}

// splitAdd matches a + b where exactly one side satisfies pick; it returns
// that side and the other.
func splitAdd(e tir.Expr, pick func(tir.Expr) bool) (tir.Expr, tir.Expr, bool) {
	b, ok := e.(*tir.Binary)
	if !ok || b.Op != tir.OpAdd {
		return nil, nil, false
	}
	switch pa, pb := pick(b.A), pick(b.B); {
	case pa && !pb:
		return b.A, b.B, true
	case pb && !pa:
		return b.B, b.A, true
	}
	return nil, nil, false
}

func readsBuffer(e tir.Expr, b *tir.Buffer) bool {
	found := false
	tir.VisitExpr(e, func(x tir.Expr) bool {
		if l, ok := x.(*tir.BufferLoad); ok && l.Buffer == b {
			found = true
		}
		return !found
	})
	return found
}

// evalConst evaluates an integer expression of constants and loads of
// the buffers in loads (each load standing for its value there) with the
// interpreter's semantics (tensorir.EvalInt); ok is false when it reads
// another buffer or is not integer arithmetic.
func evalConst(e tir.Expr, loads map[*tir.Buffer]int64) (int64, bool) {
	known := true
	e = tir.MapExpr(e, nil, func(b *tir.Buffer, _ []tir.Expr) tir.Expr {
		v, ok := loads[b]
		known = known && ok
		return tir.IntOf(b.DType, v)
	})
	v, ok := tir.EvalInt(e, func(*tir.Var) (int64, bool) { return 0, false })
	return v, ok && known
}
