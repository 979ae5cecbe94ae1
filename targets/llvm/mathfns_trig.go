package llvm

import (
	"math"

	"github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"
)

// f32 sin, cos and tan, scalar and vector alike, are expanded inline and
// computed in f64, then rounded once to f32:
//
//   - Cody–Waite reduction: n = rint(x·2/π), r = ((x − n·P1) − n·P2) − n·P3,
//     |r| ≤ π/4 (to rounding), with π/2 = P1 + P2 + P3 split so that P1 and
//     P2 have at most 26 significant bits: for |x| ≤ TrigMaxFastArg (2^27)
//     n < 2^27, n·P1 and n·P2 are exact, x − n·P1 is exact (Sterbenz), and
//     r carries a relative error of a few 2^-53 even where it cancels most,
//     next to a multiple of π/2 (P1 + P2 + P3 is π/2 to 1.5e-33);
//   - sin r = r + r³·S(r²), cos r = 1 − r²/2 + r⁴·C(r²) with the degree-13/14
//     minimax coefficients of Cephes sin.c (Moshier; the ones Go's math.Sin
//     uses), accurate to about 1e-16 relative on [−π/4, π/4];
//   - the quadrant q = n mod 4 picks ±sin r or ±cos r; tan is sin r / cos r
//     for even q and −cos r / sin r for odd q.
//
// The f64 result is within a few 2^-53 relative of the true value, a few
// 2^-29 f32 ulp, so after the one rounding to f32 the error is 0.5 ulp and
// a hair (TestTrigULP checks TrigMaxULP over ~2.5M points, the f32 values
// nearest k·π/2 included; measured 0.500). Lanes with TrigMaxFastArg <
// |x| < inf call libm's double sin/cos/tan (full-range Payne–Hanek
// reduction) on the exact widened argument, behind a branch taken only
// when some lane needs it, so the bound holds for every finite f32. ±0
// keeps its sign through sin and tan, ±inf and NaN give NaN. f64 calls
// libm sin/cos/tan one lane at a time.
const (
	TrigMaxULP     = 0.51
	TrigMaxFastArg = 1 << 27
)

// π/2 = trigP1 + trigP2 + trigP3 (+ 1.5e-33); trigP1 and trigP2 are π/2's
// leading bits truncated to 26 significant bits each.
const (
	trigP1 = 1.57079631090164184570e+00 // 0x3ff921fb50000000
	trigP2 = 1.58932547122958567343e-08 // 0x3e5110b460000000
	trigP3 = 6.12323399573676603587e-17 // 0x3c91a62633145c07
)

// Cephes sin.c coefficients, lowest degree first: sin r = r + r·z·S(z),
// cos r = 1 − z/2 + z²·C(z), z = r².
var (
	trigS = []float64{-1.66666666666666307295e-1, 8.33333333332211858878e-3, -1.98412698295895385996e-4,
		2.75573136213857245213e-6, -2.50507477628578072866e-8, 1.58962301576546568060e-10}
	trigC = []float64{4.16666666666665929218e-2, -1.38888888888730564116e-3, 2.48015872888517045348e-5,
		-2.75573141792967388112e-7, 2.08757008419747316778e-9, -1.13585365213876817300e-11}
)

// trigFn selects sin, cos or tan; its name is the libm function of the
// large-argument path.
type trigFn string

const (
	trigSin trigFn = "sin"
	trigCos trigFn = "cos"
	trigTan trigFn = "tan"
)

// trigMath is the f32 implementation of fn (a mathImpls entry).
func trigMath(fn trigFn) func(*fgen, []value.Value) value.Value {
	return func(g *fgen, a []value.Value) value.Value { return g.trigf(fn, a[0]) }
}

// trigf is fn(x) for f32 x (scalar or vector), computed in f64.
func (g *fgen) trigf(fn trigFn, x value.Value) value.Value {
	xd := g.cur.NewFPExt(x, withLanes(types.Double, lanesOf(x)))
	r := g.largeArgs(xd, g.trigReduced(fn, xd), string(fn))
	r = g.cur.NewFPTrunc(r, x.Type())
	if fn == trigCos {
		return r
	}
	// sin and tan are odd: ±0 → ±0 (the reduction gives +0 for -0).
	return g.cur.NewSelect(g.fcmp(enum.FPredOEQ, x, 0), x, r)
}

// trigReduced is fn(x) for f64 x with |x| ≤ TrigMaxFastArg by Cody–Waite
// reduction and the Cephes polynomials.
func (g *fgen) trigReduced(fn trigFn, x value.Value) value.Value {
	c := g.cur
	n := g.callIntrinsic("llvm.rint", c.NewFMul(x, fk(x, 2/math.Pi)))
	r := c.NewFSub(x, c.NewFMul(n, fk(x, trigP1)))
	r = c.NewFSub(r, c.NewFMul(n, fk(x, trigP2)))
	r = c.NewFSub(r, c.NewFMul(n, fk(x, trigP3)))
	z := c.NewFMul(r, r)
	sin := c.NewFAdd(r, c.NewFMul(c.NewFMul(r, z), g.horner(z, trigS)))
	cos := c.NewFAdd(c.NewFSub(fk(x, 1), c.NewFMul(z, fk(x, 0.5))), c.NewFMul(c.NewFMul(z, z), g.horner(z, trigC)))
	// q = n mod 4 in {0, 1, 2, 3} (exact in f64; NaN for NaN and ±inf x).
	q := c.NewFSub(n, c.NewFMul(g.callIntrinsic("llvm.floor", c.NewFMul(n, fk(x, 0.25))), fk(x, 4)))
	odd := c.NewOr(g.fcmp(enum.FPredOEQ, q, 1), g.fcmp(enum.FPredOEQ, q, 3))
	switch fn {
	case trigSin: // sin, cos, −sin, −cos
		v := c.NewSelect(odd, cos, sin)
		return c.NewSelect(g.fcmp(enum.FPredOGE, q, 2), c.NewFNeg(v), v)
	case trigCos: // cos, −sin, −cos, sin
		v := c.NewSelect(odd, sin, cos)
		neg := c.NewAnd(g.fcmp(enum.FPredOGE, q, 1), g.fcmp(enum.FPredOLE, q, 2))
		return c.NewSelect(neg, c.NewFNeg(v), v)
	}
	return c.NewSelect(odd, c.NewFNeg(c.NewFDiv(cos, sin)), c.NewFDiv(sin, cos))
}

// largeArgs replaces the lanes of fast whose f64 argument x has
// TrigMaxFastArg < |x| < inf by libm's name(x), in a block entered only
// when some lane needs it; the result is a phi in the join block, where
// generation continues.
func (g *fgen) largeArgs(x, fast value.Value, name string) value.Value {
	pre := g.cur
	ax := g.callIntrinsic("llvm.fabs", x)
	big := pre.NewAnd(g.fcmp(enum.FPredOGT, ax, TrigMaxFastArg), g.fcmp(enum.FPredONE, ax, math.Inf(1)))
	var some value.Value = big
	if n := lanesOf(x); n > 1 {
		it := types.NewInt(uint64(n))
		some = pre.NewICmp(enum.IPredNE, pre.NewBitCast(big, it), constant.NewInt(it, 0))
	}
	slow, join := g.newBlock("trig.large"), g.newBlock("trig.join")
	pre.NewCondBr(some, slow, join)
	g.cur = slow
	v := slow.NewSelect(big, g.libm(name, x), fast)
	slow.NewBr(join)
	g.cur = join
	return join.NewPhi(ir.NewIncoming(fast, pre), ir.NewIncoming(v, slow))
}
