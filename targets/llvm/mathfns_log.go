package llvm

import (
	"math"

	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"
)

// f32 log, pow, atan, asin, acos, sinh, cosh, asinh, acosh and atanh,
// scalar and vector alike, are Tessera's own code expanded inline (no libm:
// they vectorize on the CPU and run in GPU kernels).
//
// log is computed in f32 (Cephes logf's scheme): subnormal x is scaled by
// 2^23 first; an integer subtraction of √½'s bits from x's bits splits
// x = 2^k·m with m ∈ [√½, √2) (exponent and mantissa fields); with f =
// m − 1 (exact), log x = f − f²/2 + f³·P(f) + k·ln 2, P Cephes logf's
// degree-8 minimax polynomial, k·ln 2 added in two parts (k·C1 exact).
// log(±0) = −Inf, log(x < 0) = NaN, log(+Inf) = +Inf, NaN → NaN.
// LogMaxULP bounds it (measured 0.85).
//
// The others are computed in f64 from the exact widened f32 arguments and
// rounded once to f32, with these f64 kernels:
//
//   - ln a (a > 0 finite): a = 2^k·m, m ∈ [√½, √2) as for log (no
//     subnormals in f64), ln m = 2·atanh s, s = (m−1)/(m+1), |s| ≤ 0.172,
//     by the atanh series to s^17 (truncation 2^-50), plus k·ln 2;
//     log2 a = k + ln m·log2 e;
//   - 2^t (t clamped to ±200, where every f32 result is 0 or Inf):
//     2^n·2^r, n = rint(t), |r| ≤ ½ exact, 2^r by its Taylor series to
//     degree 12 (truncation 2^-52), 2^n exact by its bits; e^x = 2^(x·log2 e);
//   - atan a (a ≥ 0): Cephes atan.c (Moshier): a > tan 3π/8 maps to
//     π/2 + atan(−1/a), a > 0.66 to π/4 + atan((a−1)/(a+1)), and atan r =
//     r + r³·P(r²)/Q(r²), a degree 4/5 rational, π/2 and π/4 carried with
//     their next 53 bits.
//
// From them: atan x; asin x = atan(x/√(1−x²)); acos x = 2·atan √((1−x)/(1+x))
// (1 ± x and x² are exact in f64); cosh x = (E + 1/E)/2 and sinh x = (E −
// 1/E)/2, E = e^|x|, with the Taylor series to x⁷ for |x| < 2^-5; asinh x
// = ln(1 + u), u = |x| + x²/(1 + √(1+x²)); acosh x = ln(1 + u), u = t +
// √(t·(t+2)), t = x − 1; atanh x = ½·ln(1 + 2|x|/(1−|x|)); below 2^-13
// asinh and atanh are x − x³/6 and x + x³/3 (above, 1 + u keeps u to
// 2^-40); odd functions take the sign of x (±0 → ±0). The f64 results are
// within about 2^-44 relative, so the f32 results are correctly rounded
// except within about 2^-20 ulp of a tie: WideMathMaxULP. Edges: atan(±Inf)
// = ±π/2, asin, acos, acosh and atanh outside their domains are NaN,
// asin(±1) = ±π/2, acos(1) = 0, acos(−1) = π, acosh(1) = 0, atanh(±1) =
// ±Inf, sinh, cosh, asinh and acosh of ±Inf are ±Inf (cosh +Inf), sinh
// and cosh overflow to Inf exactly where the f32 result does.
//
// pow(x, y) = 2^(y·log2|x|) with the kernels above (y·log2|x| to 2^-51
// relative), correctly rounded but for ties within 2^-20 ulp: PowMaxULP.
// C99 Annex F's special cases: pow(x, ±0) = 1 and pow(1, y) = 1 for every
// x and y (NaN included); pow(−1, ±Inf) = 1; NaN otherwise propagates;
// finite x < 0 with finite non-integer y gives NaN; when x has its sign
// bit set (−0 and −Inf included) and y is an odd integer the result is
// negative; ±0 and ±Inf bases give 0 or Inf by the sign of y (through
// log2 0 = −Inf, log2 Inf = +Inf); overflow gives Inf, underflow 0 or a
// correctly rounded subnormal.
//
// TestOwnMathULP and TestPowULP check the bounds against Go's float64 math.
const (
	LogMaxULP = 1 // measured 0.85 (0.82 over every 2^8-th f32)
	// WideMathMaxULP bounds atan, asin, acos, sinh, cosh, asinh, acosh and
	// atanh (each measured 0.50).
	WideMathMaxULP = 0.51
	PowMaxULP      = 0.51 // measured 0.50
)

// Cephes logf: log(1+f) = f − f²/2 + f³·logP(f), lowest degree first;
// ln 2 = logC1 + logC2 (logC1 has 9 significant bits).
var logP = []float64{3.3333331174e-1, -2.4999993993e-1, 2.0000714765e-1, -1.6668057665e-1,
	1.4249322787e-1, -1.2420140846e-1, 1.1676998740e-1, -1.1514610310e-1, 7.0376836292e-2}

const (
	logC1 = 0.693359375
	logC2 = -2.12194440e-4
)

// Cephes atan.c: atan r = r + r·z·atanP(z)/atanQ(z), z = r², lowest
// degree first (atanQ monic); atanMore is π/2 − fl(π/2).
var (
	atanP = []float64{-6.485021904942025371773e+01, -1.228866684490136173410e+02, -7.500855792314704667340e+01,
		-1.615753718733365076637e+01, -8.750608600031904122785e-01}
	atanQ = []float64{1.945506571482613964425e+02, 4.853903996359136964868e+02, 4.328810604912902668951e+02,
		1.650270098316988542046e+02, 2.485846490142306297962e+01, 1}
)

const (
	atanMore    = 6.123233995736765886130e-17
	tan3PiOver8 = 2.41421356237309504880
)

// lnAtanh are the coefficients 1/3, 1/5, ..., 1/17 of atanh s = s + s³/3
// + s⁵/5 + ...; exp2Taylor those of 2^r = Σ (r·ln 2)^k/k!, k = 0..12.
var lnAtanh, exp2Taylor = func() ([]float64, []float64) {
	var a, e []float64
	for k := 3; k <= 17; k += 2 {
		a = append(a, 1/float64(k))
	}
	c := 1.0
	for k := 0; k <= 12; k++ {
		e = append(e, c)
		c *= math.Ln2 / float64(k+1)
	}
	return a, e
}()

// ik is the integer constant v with t's lanes (t an integer type).
func ik(t types.Type, v int64) constant.Constant {
	return splatConst(constant.NewInt(elemOf(t).(*types.IntType), v), t)
}

func (g *fgen) isNaN(x value.Value) value.Value { return g.cur.NewFCmp(enum.FPredUNO, x, x) }

func (g *fgen) fabs(x value.Value) value.Value { return g.callIntrinsic("llvm.fabs", x) }

func (g *fgen) copysign(mag, sign value.Value) value.Value {
	return g.callIntrinsic("llvm.copysign", mag, sign)
}

// logf is log x for f32 x (see above).
func (g *fgen) logf(x value.Value) value.Value {
	c := g.cur
	it := withLanes(types.I32, lanesOf(x))
	tiny := g.fcmp(enum.FPredOLT, x, 0x1p-126)
	xs := c.NewSelect(tiny, c.NewFMul(x, fk(x, 0x1p23)), x)
	const sqrtHalf = 0x3f3504f3 // the f32 bits of √½
	ix := c.NewSub(c.NewBitCast(xs, it), ik(it, sqrtHalf))
	m := c.NewBitCast(c.NewAdd(c.NewAnd(ix, ik(it, 0x7fffff)), ik(it, sqrtHalf)), x.Type())
	k := c.NewFAdd(c.NewSIToFP(c.NewAShr(ix, ik(it, 23)), x.Type()), c.NewSelect(tiny, fk(x, -23), fk(x, 0)))
	f := c.NewFSub(m, fk(x, 1))
	z := c.NewFMul(f, f)
	var y value.Value = c.NewFMul(c.NewFMul(f, z), g.horner(f, logP))
	y = c.NewFAdd(y, c.NewFMul(k, fk(x, logC2)))
	y = c.NewFSub(y, c.NewFMul(z, fk(x, 0.5)))
	var r value.Value = c.NewFAdd(c.NewFAdd(f, y), c.NewFMul(k, fk(x, logC1)))
	r = c.NewSelect(g.fcmp(enum.FPredOEQ, x, math.Inf(1)), x, r)
	r = c.NewSelect(g.fcmp(enum.FPredOEQ, x, 0), fk(x, math.Inf(-1)), r)
	r = c.NewSelect(g.fcmp(enum.FPredOLT, x, 0), fk(x, math.NaN()), r)
	return c.NewSelect(g.isNaN(x), x, r)
}

// lnParts returns k (as f64) and ln m with a = 2^k·m, m ∈ [√½, √2), for
// f64 a > 0 finite.
func (g *fgen) lnParts(a value.Value) (k, lnm value.Value) {
	c := g.cur
	it := withLanes(types.I64, lanesOf(a))
	const sqrtHalf = 0x3fe6a09e667f3bcd // the f64 bits of √½
	ix := c.NewSub(c.NewBitCast(a, it), ik(it, sqrtHalf))
	m := c.NewBitCast(c.NewAdd(c.NewAnd(ix, ik(it, 1<<52-1)), ik(it, sqrtHalf)), a.Type())
	s := c.NewFDiv(c.NewFSub(m, fk(a, 1)), c.NewFAdd(m, fk(a, 1)))
	s2 := c.NewFAdd(s, s)
	z := c.NewFMul(s, s)
	lnm = c.NewFAdd(s2, c.NewFMul(c.NewFMul(s2, z), g.horner(z, lnAtanh)))
	return c.NewSIToFP(c.NewAShr(ix, ik(it, 52)), a.Type()), lnm
}

// lnd is ln a for f64 a > 0 finite.
func (g *fgen) lnd(a value.Value) value.Value {
	k, lnm := g.lnParts(a)
	c := g.cur
	return c.NewFAdd(c.NewFMul(k, fk(a, math.Ln2)), lnm)
}

// exp2d is 2^t for f64 t clamped to [−200, 200] (NaN gives a finite
// value: the caller selects NaN).
func (g *fgen) exp2d(t value.Value) value.Value {
	c := g.cur
	it := withLanes(types.I64, lanesOf(t))
	t = c.NewSelect(g.isNaN(t), fk(t, 0), t)
	t = c.NewSelect(g.fcmp(enum.FPredOGT, t, 200), fk(t, 200), t)
	t = c.NewSelect(g.fcmp(enum.FPredOLT, t, -200), fk(t, -200), t)
	n := g.callIntrinsic("llvm.rint", t)
	p := g.horner(c.NewFSub(t, n), exp2Taylor)
	bits := c.NewShl(c.NewAdd(c.NewFPToSI(n, it), ik(it, 1023)), ik(it, 52))
	return c.NewFMul(p, c.NewBitCast(bits, t.Type()))
}

// atand is atan a for f64 a ≥ 0 or NaN (Cephes atan.c).
func (g *fgen) atand(a value.Value) value.Value {
	c := g.cur
	big := g.fcmp(enum.FPredOGT, a, tan3PiOver8)
	mid := g.fcmp(enum.FPredOGT, a, 0.66)
	r := c.NewSelect(big, c.NewFDiv(fk(a, -1), a),
		c.NewSelect(mid, c.NewFDiv(c.NewFSub(a, fk(a, 1)), c.NewFAdd(a, fk(a, 1))), a))
	base := c.NewSelect(big, fk(a, math.Pi/2), c.NewSelect(mid, fk(a, math.Pi/4), fk(a, 0)))
	more := c.NewSelect(big, fk(a, atanMore), c.NewSelect(mid, fk(a, atanMore/2), fk(a, 0)))
	z := c.NewFMul(r, r)
	q := c.NewFDiv(g.horner(z, atanP), g.horner(z, atanQ))
	y := c.NewFAdd(r, c.NewFMul(c.NewFMul(r, z), q))
	return c.NewFAdd(base, c.NewFAdd(y, more))
}

// wide runs f on x widened to f64 and rounds the result back to x's type.
func (g *fgen) wide(x value.Value, f func(xd value.Value) value.Value) value.Value {
	xd := g.cur.NewFPExt(x, withLanes(types.Double, lanesOf(x)))
	return g.cur.NewFPTrunc(f(xd), x.Type())
}

func logMath(g *fgen, x value.Value) value.Value { return g.logf(x) }

func atanMath(g *fgen, x value.Value) value.Value {
	return g.copysign(g.wide(x, func(xd value.Value) value.Value { return g.atand(g.fabs(xd)) }), x)
}

func asinMath(g *fgen, x value.Value) value.Value {
	r := g.wide(x, func(xd value.Value) value.Value {
		c := g.cur
		a := g.fabs(xd)
		return g.atand(c.NewFDiv(a, g.callIntrinsic("llvm.sqrt", c.NewFSub(fk(a, 1), c.NewFMul(a, a)))))
	})
	return g.copysign(r, x)
}

func acosMath(g *fgen, x value.Value) value.Value {
	return g.wide(x, func(xd value.Value) value.Value {
		c := g.cur
		q := c.NewFDiv(c.NewFSub(fk(xd, 1), xd), c.NewFAdd(fk(xd, 1), xd))
		at := g.atand(g.callIntrinsic("llvm.sqrt", q))
		return g.cur.NewFMul(at, fk(xd, 2))
	})
}

// hyperbolic is (E + sign·1/E)/2, E = e^|x| in f64, NaN for NaN.
func (g *fgen) hyperbolic(xd value.Value, sign float64) value.Value {
	a := g.fabs(xd)
	e := g.exp2d(g.cur.NewFMul(a, fk(a, math.Log2E)))
	c := g.cur
	r := c.NewFMul(c.NewFAdd(e, c.NewFMul(c.NewFDiv(fk(a, 1), e), fk(a, sign))), fk(a, 0.5))
	return c.NewSelect(g.isNaN(xd), xd, r)
}

func sinhMath(g *fgen, x value.Value) value.Value {
	r := g.wide(x, func(xd value.Value) value.Value {
		large := g.hyperbolic(xd, -1)
		c := g.cur
		a := g.fabs(xd)
		z := c.NewFMul(a, a)
		small := c.NewFAdd(a, c.NewFMul(c.NewFMul(a, z), g.horner(z, []float64{1.0 / 6, 1.0 / 120, 1.0 / 5040})))
		return c.NewSelect(g.fcmp(enum.FPredOLT, a, 0x1p-5), small, large)
	})
	return g.copysign(r, x)
}

func coshMath(g *fgen, x value.Value) value.Value {
	return g.wide(x, func(xd value.Value) value.Value { return g.hyperbolic(xd, 1) })
}

// lnOnePlus is ln(1 + u) for f64 u ≥ 2^-13 (where 1 + u keeps u to
// 2^-40), +Inf or NaN.
func (g *fgen) lnOnePlus(u value.Value) value.Value {
	r := g.lnd(g.cur.NewFAdd(u, fk(u, 1)))
	c := g.cur
	r = c.NewSelect(g.fcmp(enum.FPredOEQ, u, math.Inf(1)), u, r)
	return c.NewSelect(g.isNaN(u), u, r)
}

func asinhMath(g *fgen, x value.Value) value.Value {
	r := g.wide(x, func(xd value.Value) value.Value {
		c := g.cur
		a := g.fabs(xd)
		a2 := c.NewFMul(a, a)
		s := g.callIntrinsic("llvm.sqrt", c.NewFAdd(a2, fk(a, 1)))
		var u value.Value = c.NewFAdd(a, c.NewFDiv(a2, c.NewFAdd(s, fk(a, 1))))
		u = c.NewSelect(g.fcmp(enum.FPredOEQ, a, math.Inf(1)), a, u)
		r := g.lnOnePlus(u)
		c = g.cur
		tiny := c.NewFSub(a, c.NewFMul(c.NewFMul(a, a2), fk(a, 1.0/6)))
		return c.NewSelect(g.fcmp(enum.FPredOLT, a, 0x1p-13), tiny, r)
	})
	return g.copysign(r, x)
}

func acoshMath(g *fgen, x value.Value) value.Value {
	return g.wide(x, func(xd value.Value) value.Value {
		c := g.cur
		t := c.NewFSub(xd, fk(xd, 1))
		u := c.NewFAdd(t, g.callIntrinsic("llvm.sqrt", c.NewFMul(t, c.NewFAdd(t, fk(xd, 2)))))
		r := g.lnOnePlus(u)
		c = g.cur
		return c.NewSelect(g.fcmp(enum.FPredOLT, xd, 1), fk(xd, math.NaN()), r)
	})
}

func atanhMath(g *fgen, x value.Value) value.Value {
	r := g.wide(x, func(xd value.Value) value.Value {
		c := g.cur
		a := g.fabs(xd)
		u := c.NewFDiv(c.NewFAdd(a, a), c.NewFSub(fk(a, 1), a))
		var r value.Value = c.NewFMul(g.lnOnePlus(u), fk(a, 0.5))
		c = g.cur
		tiny := c.NewFAdd(a, c.NewFMul(c.NewFMul(a, c.NewFMul(a, a)), fk(a, 1.0/3)))
		r = c.NewSelect(g.fcmp(enum.FPredOLT, a, 0x1p-13), tiny, r)
		return c.NewSelect(g.fcmp(enum.FPredOGT, a, 1), fk(a, math.NaN()), r)
	})
	return g.copysign(r, x)
}

// powMath is pow(x, y) for f32 x and y (see above).
func powMath(g *fgen, args []value.Value) value.Value {
	x, y := args[0], args[1]
	c := g.cur
	dt := withLanes(types.Double, lanesOf(x))
	xd, yd := c.NewFPExt(x, dt), c.NewFPExt(y, dt)
	axd := g.fabs(xd)
	k, lnm := g.lnParts(axd)
	var l value.Value = c.NewFAdd(k, c.NewFMul(lnm, fk(xd, math.Log2E)))
	l = c.NewSelect(g.fcmp(enum.FPredOEQ, axd, 0), fk(xd, math.Inf(-1)), l)
	l = c.NewSelect(g.fcmp(enum.FPredOEQ, axd, math.Inf(1)), fk(xd, math.Inf(1)), l)
	var r value.Value = c.NewFPTrunc(g.exp2d(c.NewFMul(yd, l)), x.Type())

	isInt := func(v value.Value) value.Value {
		return c.NewFCmp(enum.FPredOEQ, g.callIntrinsic("llvm.floor", v), v)
	}
	yInt := isInt(y)
	yOdd := c.NewAnd(yInt, c.NewXor(isInt(c.NewFMul(y, fk(y, 0.5))), constOf(yInt.Type(), 1)))
	it := withLanes(types.I32, lanesOf(x))
	xSign := c.NewICmp(enum.IPredSLT, c.NewBitCast(x, it), ik(it, 0))
	r = c.NewSelect(c.NewAnd(xSign, yOdd), c.NewFNeg(r), r)
	ax := g.fabs(x)
	negFinite := c.NewAnd(g.fcmp(enum.FPredOLT, x, 0), g.fcmp(enum.FPredONE, ax, math.Inf(1)))
	nan := c.NewOr(c.NewAnd(negFinite, c.NewXor(yInt, constOf(yInt.Type(), 1))), c.NewFCmp(enum.FPredUNO, x, y))
	r = c.NewSelect(nan, fk(x, math.NaN()), r)
	one := c.NewOr(g.fcmp(enum.FPredOEQ, y, 0), g.fcmp(enum.FPredOEQ, x, 1))
	one = c.NewOr(one, c.NewAnd(g.fcmp(enum.FPredOEQ, ax, 1), g.fcmp(enum.FPredOEQ, g.fabs(y), math.Inf(1))))
	return c.NewSelect(one, fk(x, 1), r)
}
