package llvm

import (
	"math"

	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// expr generates e at the current insertion point. Inside a widened loop
// body the result is a vector when e depends on the vector loop variable
// and a scalar otherwise (scalars are broadcast where they meet vectors).
func (g *fgen) expr(e tir.Expr) (value.Value, error) {
	switch x := e.(type) {
	case *tir.IntImm:
		t, err := regType(x.Type)
		if err != nil {
			return nil, g.errorf("%v", err)
		}
		return splatConst(constant.NewInt(elemOf(t).(*types.IntType), x.Value), t), nil
	case *tir.FloatImm:
		t, err := regType(x.Type)
		if err != nil {
			return nil, g.errorf("%v", err)
		}
		return splatConst(constant.NewFloat(elemOf(t).(*types.FloatType), x.Value), t), nil
	case *tir.Var:
		return g.varValue(x)
	case *tir.Binary:
		return g.binary(x)
	case *tir.Not:
		v, err := g.expr(x.X)
		if err != nil {
			return nil, err
		}
		return g.cur.NewXor(v, constOf(v.Type(), 1)), nil
	case *tir.Select:
		return g.selectExpr(x)
	case *tir.Cast:
		return g.cast(x)
	case *tir.Call:
		return g.call(x)
	case *tir.BufferLoad:
		return g.load(x)
	}
	return nil, g.errorf("unsupported expression %T", e)
}

func (g *fgen) errorf(format string, args ...any) error {
	return tir.Errorf(g.loc, format, args...)
}

// varValue is the value bound to x; in lane-0 mode, a variable that
// varies across vector lanes yields its first lane.
func (g *fgen) varValue(x *tir.Var) (value.Value, error) {
	if g.vec != nil && g.lane0 {
		if x == g.vec.v {
			return g.vec.base, nil
		}
		if g.vec.varying[x] {
			v := g.vars[x]
			if lanesOf(v) > 1 {
				return g.cur.NewExtractElement(v, constant.NewInt(types.I32, 0)), nil
			}
			return v, nil
		}
	}
	v, ok := g.vars[x]
	if !ok {
		return nil, g.errorf("variable %%%s is used outside its scope", x.Name)
	}
	return v, nil
}

var (
	fcmpPreds = map[tir.BinOp]enum.FPred{tir.OpEQ: enum.FPredOEQ, tir.OpNE: enum.FPredUNE,
		tir.OpLT: enum.FPredOLT, tir.OpLE: enum.FPredOLE, tir.OpGT: enum.FPredOGT, tir.OpGE: enum.FPredOGE}
	icmpSigned = map[tir.BinOp]enum.IPred{tir.OpEQ: enum.IPredEQ, tir.OpNE: enum.IPredNE,
		tir.OpLT: enum.IPredSLT, tir.OpLE: enum.IPredSLE, tir.OpGT: enum.IPredSGT, tir.OpGE: enum.IPredSGE}
	icmpUnsigned = map[tir.BinOp]enum.IPred{tir.OpEQ: enum.IPredEQ, tir.OpNE: enum.IPredNE,
		tir.OpLT: enum.IPredULT, tir.OpLE: enum.IPredULE, tir.OpGT: enum.IPredUGT, tir.OpGE: enum.IPredUGE}
)

// binary generates a Binary expression with tensor IR semantics: float
// arithmetic is IEEE (no fast-math), min/max follow Go's math.Min/Max (NaN
// if either operand is NaN; min(-0, +0) = -0), integer arithmetic wraps,
// floordiv/floormod round toward −∞ (floordiv(x, -1) = -x wrapping,
// floormod(x, -1) = 0; a zero divisor traps with SIGFPE), i1 operands
// compare unsigned and add/sub/mul as or/xor/and.
func (g *fgen) binary(x *tir.Binary) (value.Value, error) {
	a, err := g.expr(x.A)
	if err != nil {
		return nil, err
	}
	b, err := g.expr(x.B)
	if err != nil {
		return nil, err
	}
	ab := g.unify(a, b)
	a, b = ab[0], ab[1]
	t := x.A.DType()
	c := g.cur
	if t.IsFloat() {
		r, err := g.floatBinary(x, t, a, b)
		if err == nil && t.Kind == tir.BF16 && !x.Op.IsCompare() {
			r = g.roundBF16(r)
		}
		return r, err
	}
	if t.IsBool() {
		switch x.Op {
		case tir.OpAnd, tir.OpMul, tir.OpMin:
			return c.NewAnd(a, b), nil
		case tir.OpOr, tir.OpAdd, tir.OpMax:
			return c.NewOr(a, b), nil
		case tir.OpSub:
			return c.NewXor(a, b), nil
		}
		if p, ok := icmpUnsigned[x.Op]; ok {
			return c.NewICmp(p, a, b), nil
		}
		return nil, g.errorf("operator %v does not apply to i1", x.Op)
	}
	unsigned := t.IsUnsigned()
	lt, gt, preds := enum.IPredSLT, enum.IPredSGT, icmpSigned
	if unsigned {
		lt, gt, preds = enum.IPredULT, enum.IPredUGT, icmpUnsigned
	}
	switch x.Op {
	case tir.OpAdd:
		return c.NewAdd(a, b), nil
	case tir.OpSub:
		return c.NewSub(a, b), nil
	case tir.OpMul:
		return c.NewMul(a, b), nil
	case tir.OpMin:
		return c.NewSelect(c.NewICmp(lt, a, b), a, b), nil
	case tir.OpMax:
		return c.NewSelect(c.NewICmp(gt, a, b), a, b), nil
	case tir.OpFloorDiv, tir.OpFloorMod:
		if unsigned {
			return g.unsignedDivMod(x.Op == tir.OpFloorDiv, a, b), nil
		}
		return g.floorDivMod(x.Op == tir.OpFloorDiv, a, b, x.B), nil
	case tir.OpShl, tir.OpShr:
		return g.shift(x.Op == tir.OpShl, unsigned, a, b), nil
	case tir.OpAnd:
		return c.NewAnd(a, b), nil
	case tir.OpOr:
		return c.NewOr(a, b), nil
	}
	if p, ok := preds[x.Op]; ok {
		return c.NewICmp(p, a, b), nil
	}
	return nil, g.errorf("operator %v does not apply to %v (integers divide with floordiv)", x.Op, t)
}

// floatBinary generates a float Binary (IEEE arithmetic; compare gives i1).
func (g *fgen) floatBinary(x *tir.Binary, t tir.DType, a, b value.Value) (value.Value, error) {
	c := g.cur
	switch x.Op {
	case tir.OpAdd:
		return c.NewFAdd(a, b), nil
	case tir.OpSub:
		return c.NewFSub(a, b), nil
	case tir.OpMul:
		return c.NewFMul(a, b), nil
	case tir.OpDiv:
		return c.NewFDiv(a, b), nil
	case tir.OpMin, tir.OpMax:
		return g.fminmax(x.Op == tir.OpMin, a, b), nil
	case tir.OpFloorDiv:
		return g.callIntrinsic("llvm.floor", c.NewFDiv(a, b)), nil
	case tir.OpFloorMod:
		q := g.callIntrinsic("llvm.floor", c.NewFDiv(a, b))
		return c.NewFSub(a, c.NewFMul(q, b)), nil
	}
	if p, ok := fcmpPreds[x.Op]; ok {
		return c.NewFCmp(p, a, b), nil
	}
	return nil, g.errorf("operator %v does not apply to %v", x.Op, t)
}

// unsignedDivMod is udiv (div) or urem of unsigned integers, for which
// floor division is truncating division. Inactive lanes of a predicated
// body divide by 1; a zero divisor traps as signed division does.
func (g *fgen) unsignedDivMod(div bool, a, b value.Value) value.Value {
	c := g.cur
	if g.vec != nil && g.vec.mask != nil && lanesOf(b) > 1 {
		b = c.NewSelect(g.vec.mask, b, constOf(b.Type(), 1))
	}
	if div {
		return c.NewUDiv(a, b)
	}
	return c.NewURem(a, b)
}

// shift is a << b (left) or a >> b, logical when unsigned, arithmetic
// otherwise, with tensor IR's semantics for amounts b ≥ the width (b read
// as unsigned): 0, or the sign fill for an arithmetic right shift, where
// LLVM's shifts would give poison; the amount is clamped before shifting.
func (g *fgen) shift(left, unsigned bool, a, b value.Value) value.Value {
	c := g.cur
	t := a.Type()
	width := constOf(t, float64(bitsOf(t)))
	big := c.NewICmp(enum.IPredUGE, b, width)
	switch {
	case left:
		return c.NewSelect(big, constOf(t, 0), c.NewShl(a, c.NewSelect(big, constOf(t, 0), b)))
	case unsigned:
		return c.NewSelect(big, constOf(t, 0), c.NewLShr(a, c.NewSelect(big, constOf(t, 0), b)))
	}
	return c.NewAShr(a, c.NewSelect(big, constOf(t, float64(bitsOf(t)-1)), b))
}

// fminmax is Go's math.Min (isMin) or math.Max on IEEE values: NaN when
// either operand is NaN, and min(-0, +0) = -0, max(-0, +0) = +0.
func (g *fgen) fminmax(isMin bool, a, b value.Value) value.Value {
	c := g.cur
	pred := enum.FPredOGT
	if isMin {
		pred = enum.FPredOLT
	}
	r := c.NewSelect(c.NewFCmp(pred, a, b), a, b)
	// Equal operands differ only for ±0: or (min) / and (max) the bits.
	it := withLanes(types.NewInt(uint64(bitsOf(a.Type()))), lanesOf(a))
	ai, bi := c.NewBitCast(a, it), c.NewBitCast(b, it)
	var bits value.Value
	if isMin {
		bits = c.NewOr(ai, bi)
	} else {
		bits = c.NewAnd(ai, bi)
	}
	r2 := c.NewSelect(c.NewFCmp(enum.FPredOEQ, a, b), c.NewBitCast(bits, a.Type()), r)
	return c.NewSelect(c.NewFCmp(enum.FPredUNO, a, b), c.NewFAdd(a, b), r2)
}

// floorDivMod generates floordiv (div) or floormod of integers, rounding
// toward −∞. A positive constant divisor skips the x / -1 guard.
func (g *fgen) floorDivMod(div bool, a, b value.Value, bExpr tir.Expr) value.Value {
	c := g.cur
	t := a.Type()
	one, zero := constOf(t, 1), constOf(t, 0)
	posConst := false
	if k, ok := bExpr.(*tir.IntImm); ok && k.Value > 0 {
		posConst = true
	}
	var isM1 value.Value
	bs := b
	if g.vec != nil && g.vec.mask != nil && lanesOf(b) > 1 {
		// Inactive lanes of a predicated body may hold any divisor.
		bs = c.NewSelect(g.vec.mask, b, one)
		b = bs
	}
	if !posConst {
		isM1 = c.NewICmp(enum.IPredEQ, b, constOf(t, -1))
		bs = c.NewSelect(isM1, one, b)
	}
	q := c.NewSDiv(a, bs)
	r := c.NewSRem(a, bs)
	// The remainder is non-zero and its sign differs from the divisor's.
	adj := c.NewAnd(c.NewICmp(enum.IPredNE, r, zero), c.NewICmp(enum.IPredSLT, c.NewXor(r, bs), zero))
	var res value.Value
	if div {
		res = c.NewSub(q, c.NewZExt(adj, t))
		if !posConst {
			res = c.NewSelect(isM1, c.NewSub(zero, a), res)
		}
	} else {
		res = c.NewSelect(adj, c.NewAdd(r, bs), r)
		if !posConst {
			res = c.NewSelect(isM1, zero, res)
		}
	}
	return res
}

func (g *fgen) selectExpr(x *tir.Select) (value.Value, error) {
	if g.assumedSelect(x) {
		return g.expr(x.T) // codegen_guard.go
	}
	cond, err := g.expr(x.Cond)
	if err != nil {
		return nil, err
	}
	t, err := g.expr(x.T)
	if err != nil {
		return nil, err
	}
	f, err := g.expr(x.F)
	if err != nil {
		return nil, err
	}
	vs := g.unify(cond, t, f)
	if lanesOf(cond) == 1 {
		// A scalar condition may select between vectors.
		vs[0] = cond
	}
	return g.cur.NewSelect(vs[0], vs[1], vs[2]), nil
}

// cast generates a Cast: float→int truncates toward zero and saturates
// (NaN → 0; floatToInt),
// int→int wraps, sign-extends a signed source and zero-extends an unsigned
// one or i1, int→float and float→float round to nearest even (once: f64 →
// f16/bf16 through float32Odd, int → bf16 through double), and a cast to
// i1 tests for non-zero.
func (g *fgen) cast(x *tir.Cast) (value.Value, error) {
	v, err := g.expr(x.X)
	if err != nil {
		return nil, err
	}
	from, to := x.X.DType(), x.Type
	st, err := scalarType(to)
	if err != nil {
		return nil, g.errorf("%v", err)
	}
	n := lanesOf(v)
	dst := withLanes(st, n)
	c := g.cur
	fb, tb := bitsOf(v.Type()), bitsOf(dst)
	switch {
	case to.IsBool():
		if from.IsBool() {
			return v, nil
		}
		if from.IsFloat() {
			return c.NewFCmp(enum.FPredUNE, v, constOf(v.Type(), 0)), nil
		}
		return c.NewICmp(enum.IPredNE, v, constOf(v.Type(), 0)), nil
	case from.IsInt() && to.IsInt():
		switch {
		case fb == tb:
			return v, nil
		case from.IsBool() || from.IsUnsigned():
			if fb < tb {
				return c.NewZExt(v, dst), nil
			}
		case fb < tb:
			return c.NewSExt(v, dst), nil
		}
		return c.NewTrunc(v, dst), nil
	case from.IsInt() && to.IsFloat():
		ft := dst
		if to.Kind == tir.BF16 {
			ft = withLanes(types.Double, n)
		}
		var f value.Value
		if from.IsBool() || from.IsUnsigned() {
			f = c.NewUIToFP(v, ft)
		} else {
			f = c.NewSIToFP(v, ft)
		}
		if to.Kind == tir.BF16 {
			return g.roundBF16(g.float32Odd(f)), nil
		}
		return f, nil
	case from.IsFloat() && to.IsFloat():
		return g.floatCast(v, from, to, dst), nil
	case from.IsFloat() && to.IsInt():
		return g.floatToInt(v, to, dst), nil
	}
	return nil, g.errorf("unsupported cast from %v to %v", from, to)
}

// floatToInt converts float v to the integer dtype to (register type dst),
// truncating toward zero and saturating, NaN → 0: the semantics of
// llvm.fptosi.sat and llvm.fptoui.sat. LLVM 16 scalarizes those
// intrinsics on vectors (a vcvttss2si and a pinsr per lane), so for
// destinations of at most 32 bits the value is clamped in float to the
// destination's range, NaN replaced by 0, and converted by a plain
// fptosi (through i32 for narrower destinations: vcvttps2dq and vpmovdb)
// or fptoui; where the range's top is not a float of v's type (i32 and u32
// from f32) the lanes above the largest float below it take the top.
// Wider destinations keep the intrinsics.
func (g *fgen) floatToInt(v value.Value, to tir.DType, dst types.Type) value.Value {
	c := g.cur
	n := lanesOf(v)
	tb := bitsOf(dst)
	if tb > 32 {
		op := "llvm.fptosi.sat."
		if to.IsUnsigned() {
			op = "llvm.fptoui.sat."
		}
		f := g.m.declare(op+llvmSuffix(dst)+"."+llvmSuffix(v.Type()), dst, v.Type())
		return c.NewCall(f, v)
	}
	if bitsOf(v.Type()) < 32 {
		v = c.NewFPExt(v, withLanes(types.Float, n)) // exact
	}
	ft := v.Type()
	lo, hi := intRange(tb, to.IsUnsigned())
	top := hi
	if bitsOf(ft) == 32 {
		top = float64(largestFloat32AtMost(hi))
	}
	x := c.NewSelect(c.NewFCmp(enum.FPredOLT, v, constOf(ft, lo)), constOf(ft, lo), v)
	x = c.NewSelect(c.NewFCmp(enum.FPredOGT, x, constOf(ft, top)), constOf(ft, top), x)
	x = c.NewSelect(c.NewFCmp(enum.FPredUNO, v, v), constOf(ft, 0), x)
	var r value.Value
	switch {
	case tb < 32:
		r = c.NewTrunc(c.NewFPToSI(x, withLanes(types.I32, n)), dst)
	case to.IsUnsigned():
		r = c.NewFPToUI(x, dst)
	default:
		r = c.NewFPToSI(x, dst)
	}
	if top < hi {
		r = c.NewSelect(c.NewFCmp(enum.FPredOGT, v, constOf(ft, top)), constOf(dst, hi), r)
	}
	return r
}

// intRange is the smallest and largest value of a bits-wide integer.
func intRange(bits int, unsigned bool) (lo, hi float64) {
	if unsigned {
		return 0, math.Ldexp(1, bits) - 1
	}
	return -math.Ldexp(1, bits-1), math.Ldexp(1, bits-1) - 1
}

// largestFloat32AtMost is the largest float32 not above x.
func largestFloat32AtMost(x float64) float32 {
	f := float32(x)
	if float64(f) > x {
		f = math.Nextafter32(f, float32(math.Inf(-1)))
	}
	return f
}

// floatCast converts float v of dtype from to dtype to (register type
// dst), rounding to nearest even once.
func (g *fgen) floatCast(v value.Value, from, to tir.DType, dst types.Type) value.Value {
	c := g.cur
	n := lanesOf(v)
	switch {
	case from.Kind == to.Kind:
		return v
	case to.Kind == tir.BF16:
		switch from.Kind {
		case tir.F64:
			v = g.float32Odd(v)
		case tir.F16:
			v = c.NewFPExt(v, withLanes(types.Float, n))
		}
		return g.roundBF16(v)
	case from.Kind == tir.F64 && to.Kind == tir.F16:
		return c.NewFPTrunc(g.float32Odd(v), dst)
	}
	// bf16 is a float register: the widening and narrowing among half,
	// float and double are LLVM's.
	fb, tb := bitsOf(v.Type()), bitsOf(dst)
	switch {
	case fb == tb:
		return v
	case fb < tb:
		return c.NewFPExt(v, dst)
	}
	return c.NewFPTrunc(v, dst)
}

// callIntrinsic calls the overloaded LLVM intrinsic base (llvm.floor,
// llvm.sqrt, ...) on args of one type, returning that type.
func (g *fgen) callIntrinsic(base string, args ...value.Value) value.Value {
	t := args[0].Type()
	ps := make([]types.Type, len(args))
	for i := range args {
		ps[i] = t
	}
	f := g.m.declare(base+"."+llvmSuffix(t), t, ps...)
	return g.cur.NewCall(f, args...)
}
