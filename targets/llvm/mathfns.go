package llvm

import (
	"strings"

	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// Math intrinsics (tensorir.Intrinsics).
//
// In f32 every transcendental is Tessera's own code, scalar and vector
// alike, expanded inline, so that a vectorized loop and its scalar tail
// compute identical values, no vector math library is needed and no lane
// calls libm (except sin/cos/tan for |x| > 2^27):
//
//   - exp, tanh, sigmoid and erf: f32 polynomial approximations (below);
//   - sin, cos and tan: computed in f64 (mathfns_trig.go, TrigMaxULP 0.51);
//     lanes with |x| > 2^27 call libm's double sin/cos/tan;
//   - log: f32, Cephes logf's scheme (mathfns_log.go, LogMaxULP 1);
//   - atan, asin, acos, sinh, cosh, asinh, acosh, atanh and pow: computed
//     in f64 with our own ln, 2^t and atan kernels and rounded once
//     (mathfns_log.go, WideMathMaxULP and PowMaxULP 0.51).
//
// The *MaxULP constants are the bounds TestMathULP, TestTrigULP,
// TestOwnMathULP and TestPowULP check against Go's float64 math over about
// a million points spread over every binade of both signs plus the edges
// (±0, ±Inf, NaN, overflow and underflow thresholds, branch cut-offs); the
// maxima measured there are exp 0.93, tanh 1.19, sigmoid 2.07, erf 2.37,
// sin/cos/tan 0.50, log 0.85, the f64-computed ones 0.50 ulp. f16 computes
// in f32 and rounds. f64 calls libm (exp, tanh, erf, log, pow, sin, ...,
// atanh; sigmoid as 1/(1+exp(-x))) one lane at a time (the GPU target
// refuses it). fmod is LLVM's frem (exact; a call of libm's fmodf/fmod on
// x86). sqrt, fabs, fma, floor and ceil are LLVM intrinsics (single
// instructions with -mcpu=native: vroundps/vrndscaleps for floor and
// ceil); rsqrt is 1/sqrt(x) (correctly rounded division, not the
// approximate rsqrtps); integer abs wraps (abs(MinInt) = MinInt).
const (
	ExpMaxULP     = 1.5 // in ulp of the correctly rounded f32 result (2^-149 for subnormal results)
	TanhMaxULP    = 2
	SigmoidMaxULP = 3
	ErfMaxULP     = 3
)

// mathImpl is how the CPU target computes one intrinsic: any for every
// float dtype (an LLVM intrinsic or exact operations), else f32 (f16
// computes in f32 and rounds back) and f64. A new intrinsic is a row of
// mathImpls beside the row of tensorir.Intrinsics.
type mathImpl struct {
	any, f32, f64 func(g *fgen, args []value.Value) value.Value
}

// mathImpls holds the CPU implementation of every float intrinsic.
var mathImpls = map[string]mathImpl{
	"abs":       {any: llvmMath("llvm.fabs")},
	"sqrt":      {any: llvmMath("llvm.sqrt")},
	"fma":       {any: llvmMath("llvm.fma")},
	"floor":     {any: llvmMath("llvm.floor")},
	"ceil":      {any: llvmMath("llvm.ceil")},
	"roundeven": {any: llvmMath("llvm.roundeven")},
	"rsqrt": {any: func(g *fgen, a []value.Value) value.Value {
		return g.cur.NewFDiv(fk(a[0], 1), g.callIntrinsic("llvm.sqrt", a[0]))
	}},
	"exp":     {f32: unaryMath((*fgen).expf), f64: libmMath("exp")},
	"tanh":    {f32: unaryMath((*fgen).tanhf), f64: libmMath("tanh")},
	"erf":     {f32: unaryMath((*fgen).erff), f64: libmMath("erf")},
	"log":     {f32: unaryMath(logMath), f64: libmMath("log")},
	"atan":    {f32: unaryMath(atanMath), f64: libmMath("atan")},
	"sin":     {f32: trigMath(trigSin), f64: libmMath("sin")},
	"cos":     {f32: trigMath(trigCos), f64: libmMath("cos")},
	"tan":     {f32: trigMath(trigTan), f64: libmMath("tan")},
	"asin":    {f32: unaryMath(asinMath), f64: libmMath("asin")},
	"acos":    {f32: unaryMath(acosMath), f64: libmMath("acos")},
	"sinh":    {f32: unaryMath(sinhMath), f64: libmMath("sinh")},
	"cosh":    {f32: unaryMath(coshMath), f64: libmMath("cosh")},
	"asinh":   {f32: unaryMath(asinhMath), f64: libmMath("asinh")},
	"acosh":   {f32: unaryMath(acoshMath), f64: libmMath("acosh")},
	"atanh":   {f32: unaryMath(atanhMath), f64: libmMath("atanh")},
	"fmod":    {any: func(g *fgen, a []value.Value) value.Value { return g.cur.NewFRem(a[0], a[1]) }},
	"pow":     {f32: powMath, f64: libmMath("pow")},
	"sigmoid": {f32: sigmoidWith((*fgen).expf), f64: sigmoidWith(func(g *fgen, v value.Value) value.Value { return g.libm("exp", v) })},
}

// llvmMath is the LLVM intrinsic base applied to the arguments.
func llvmMath(base string) func(*fgen, []value.Value) value.Value {
	return func(g *fgen, a []value.Value) value.Value { return g.callIntrinsic(base, a...) }
}

// libmMath calls the C math function name one lane at a time.
func libmMath(name string) func(*fgen, []value.Value) value.Value {
	return func(g *fgen, a []value.Value) value.Value { return g.libm(name, a...) }
}

// unaryMath adapts a one-argument generator.
func unaryMath(f func(*fgen, value.Value) value.Value) func(*fgen, []value.Value) value.Value {
	return func(g *fgen, a []value.Value) value.Value { return f(g, a[0]) }
}

// sigmoidWith is sigmoid computed with the exponential exp.
func sigmoidWith(exp func(*fgen, value.Value) value.Value) func(*fgen, []value.Value) value.Value {
	return func(g *fgen, a []value.Value) value.Value {
		return g.sigmoid(a[0], func(v value.Value) value.Value { return exp(g, v) })
	}
}

// call generates an intrinsic Call. Errors: an intrinsic the target
// cannot compute (in a GPU kernel, one that needs libm).
func (g *fgen) call(x *tir.Call) (value.Value, error) {
	v, err := g.callMath(x)
	if err == nil && g.deviceErr != nil {
		err, g.deviceErr = g.deviceErr, nil
	}
	return v, err
}

func (g *fgen) callMath(x *tir.Call) (value.Value, error) {
	in, ok := tir.Intrinsics[x.Name]
	if !ok {
		return nil, g.errorf("unknown intrinsic %q", x.Name)
	}
	if len(x.Args) != in.Arity {
		return nil, g.errorf("intrinsic %q takes %d arguments, got %d", x.Name, in.Arity, len(x.Args))
	}
	args := make([]value.Value, len(x.Args))
	for i, a := range x.Args {
		v, err := g.expr(a)
		if err != nil {
			return nil, err
		}
		args[i] = v
	}
	args = g.unify(args...)
	t := x.DType()
	if !t.IsFloat() {
		if x.Name != "abs" || !in.IntOK {
			return nil, g.errorf("intrinsic %q needs float arguments, got %v", x.Name, t)
		}
		if t.IsUnsigned() {
			return args[0], nil
		}
		a, zero := args[0], constOf(args[0].Type(), 0)
		return g.cur.NewSelect(g.cur.NewICmp(enum.IPredSLT, a, zero), g.cur.NewSub(zero, a), a), nil
	}
	impl, ok := mathImpls[x.Name]
	switch {
	case !ok:
		return nil, g.errorf("intrinsic %q is not supported by the CPU target", x.Name)
	case impl.any != nil && t.Kind == tir.BF16:
		return g.roundBF16(impl.any(g, args)), nil
	case impl.any != nil:
		return impl.any(g, args), nil
	case t.Kind == tir.F64:
		return impl.f64(g, args), nil
	}
	narrow := t.Kind == tir.F16
	if narrow {
		for i := range args {
			args[i] = g.cur.NewFPExt(args[i], withLanes(types.Float, lanesOf(args[i])))
		}
	}
	r := impl.f32(g, args)
	switch {
	case narrow:
		r = g.cur.NewFPTrunc(r, withLanes(types.Half, lanesOf(r)))
	case t.Kind == tir.BF16:
		r = g.roundBF16(r)
	}
	return r, nil
}

// libm calls the C math function name (float or double) on each lane.
func (g *fgen) libm(name string, args ...value.Value) value.Value {
	if g.m.device && g.deviceErr == nil {
		g.deviceErr = g.errorf("%s needs libm's %s, which GPU kernels do not have (Tessera's own f32 exp, tanh, sigmoid, erf, log, pow, atan, asin, acos, sinh, cosh, asinh, acosh and atanh run in kernels)", strings.TrimSuffix(name, "f"), name)
	}
	et := elemOf(args[0].Type())
	ps := make([]types.Type, len(args))
	for i := range ps {
		ps[i] = et
	}
	f := g.m.declare(name, et, ps...)
	n := lanesOf(args[0])
	if n == 1 {
		return g.cur.NewCall(f, args...)
	}
	var out value.Value = constant.NewUndef(args[0].Type())
	for l := 0; l < n; l++ {
		lc := constant.NewInt(types.I32, int64(l))
		la := make([]value.Value, len(args))
		for i, a := range args {
			la[i] = g.cur.NewExtractElement(a, lc)
		}
		out = g.cur.NewInsertElement(out, g.cur.NewCall(f, la...), lc)
	}
	return out
}

// fk is the f32 constant k with x's lanes.
func fk(x value.Value, k float64) constant.Constant { return constOf(x.Type(), k) }

// horner evaluates Σ cs[i] x^i (cs lowest degree first) with f32 mul/add.
func (g *fgen) horner(x value.Value, cs []float64) value.Value {
	c := g.cur
	var r value.Value = fk(x, cs[len(cs)-1])
	for i := len(cs) - 2; i >= 0; i-- {
		r = c.NewFAdd(c.NewFMul(r, x), fk(x, cs[i]))
	}
	return r
}

func (g *fgen) fcmp(p enum.FPred, a value.Value, k float64) value.Value {
	return g.cur.NewFCmp(p, a, fk(a, k))
}

// expf is e^x in f32 (Cephes expf): n = rint(x·log2 e); r = x − n·ln 2 in
// two parts (n·C1 is exact); e^r by a degree-7 polynomial on
// [−ln2/2, ln2/2]; the result is scaled by 2^n in two steps so that
// subnormal results and 2^128 overflow come out right. x is clamped to
// [−104, 89] first (beyond, the result is 0 or +Inf anyway); NaN passes
// through.
func (g *fgen) expf(x value.Value) value.Value {
	c := g.cur
	it := withLanes(types.I32, lanesOf(x))
	isNaN := c.NewFCmp(enum.FPredUNO, x, x)
	xc := c.NewSelect(isNaN, fk(x, 0), x)
	xc = c.NewSelect(g.fcmp(enum.FPredOGT, xc, 89), fk(x, 89), xc)
	xc = c.NewSelect(g.fcmp(enum.FPredOLT, xc, -104), fk(x, -104), xc)
	n := g.callIntrinsic("llvm.rint", c.NewFMul(xc, fk(x, 1.44269504088896341)))
	r := c.NewFSub(xc, c.NewFMul(n, fk(x, 0.693359375)))
	r = c.NewFSub(r, c.NewFMul(n, fk(x, -2.12194440e-4)))
	z := c.NewFMul(r, r)
	p := g.horner(r, []float64{5.0000001201e-1, 1.6666665459e-1, 4.1665795894e-2, 8.3334519073e-3, 1.3981999507e-3, 1.9875691500e-4})
	y := c.NewFAdd(c.NewFAdd(c.NewFMul(p, z), r), fk(x, 1))
	ni := c.NewFPToSI(n, it)
	k1 := c.NewAShr(ni, constOf(it, 1))
	k2 := c.NewSub(ni, k1)
	pow2 := func(k value.Value) value.Value {
		bits := c.NewShl(c.NewAdd(k, constOf(it, 127)), constOf(it, 23))
		return c.NewBitCast(bits, x.Type())
	}
	res := c.NewFMul(c.NewFMul(y, pow2(k1)), pow2(k2))
	return c.NewSelect(isNaN, x, res)
}

// tanhf is tanh in f32: for |x| < 0.625 the Cephes odd polynomial
// x + x³·P(x²); otherwise 1 − 2/(e^{2|x|} + 1) with expf (which
// saturates to 1 for large |x|); the result takes the sign of x. ±0 and
// NaN pass through.
func (g *fgen) tanhf(x value.Value) value.Value {
	c := g.cur
	ax := g.callIntrinsic("llvm.fabs", x)
	z := c.NewFMul(x, x)
	p := g.horner(z, []float64{-3.33332819422e-1, 1.33314422036e-1, -5.37397155531e-2, 2.06390887954e-2, -5.70498872745e-3})
	small := c.NewFAdd(x, c.NewFMul(c.NewFMul(x, z), p))
	e := g.expf(c.NewFAdd(ax, ax))
	large := c.NewFSub(fk(x, 1), c.NewFDiv(fk(x, 2), c.NewFAdd(e, fk(x, 1))))
	r := c.NewSelect(g.fcmp(enum.FPredOLT, ax, 0.625), small, large)
	// tanh is odd: the sign of x (also makes tanh(-0) = -0).
	return g.callIntrinsic("llvm.copysign", r, x)
}

// sigmoid is 1/(1+e^{-x}) computed as 1/(1+e) for x ≥ 0 and e/(1+e) for
// x < 0, with e = e^{-|x|}, so that it neither overflows nor loses the
// tiny results for very negative x. exp is the exponential to use.
func (g *fgen) sigmoid(x value.Value, exp func(value.Value) value.Value) value.Value {
	ax := g.callIntrinsic("llvm.fabs", x)
	c := g.cur
	e := exp(c.NewFNeg(ax))
	c = g.cur
	d := c.NewFAdd(e, fk(x, 1))
	pos := c.NewFDiv(fk(x, 1), d)
	neg := c.NewFDiv(e, d)
	return c.NewSelect(g.fcmp(enum.FPredOGE, x, 0), pos, neg)
}

// Coefficients of erff (fitted by weighted least squares in float64 for
// relative error, then rounded to f32).
var (
	// erf(x) = x·P(x²) on [0, 0.921875].
	erfP = []float64{1.1283792, -0.37612635, 0.11283713, -0.026860343, 0.0052033328, -0.00081683544, 8.476792e-05}
	// erfc(x) = e^{-x²}·Q(s) on [0.921875, 3.92], s = (1/x − erfMid)·erfInvHalf ∈ [−1, 1].
	erfQ       = []float64{0.3227828, 0.15226746, -0.028608195, 0.0033605117, 0.00041234258, -0.00044447498, 0.0001873788, -5.4513814e-05, -6.02375e-08, 6.478776e-06}
	erfMid     = 0.6699239
	erfInvHalf = 2.4106734
)

// erff is erf in f32: x·P(x²) for |x| < 0.921875; sign(x)·(1 −
// e^{−x²}·Q(1/|x|)) up to |x| = 3.92 and ±1 beyond (erf rounds to 1 in
// f32 there). NaN passes through.
func (g *fgen) erff(x value.Value) value.Value {
	c := g.cur
	ax := g.callIntrinsic("llvm.fabs", x)
	z := c.NewFMul(x, x)
	small := c.NewFMul(x, g.horner(z, erfP))
	// Keep the large branch finite for |x| < 0.92 and huge |x|.
	axc := c.NewSelect(g.fcmp(enum.FPredOLT, ax, 0.921875), fk(x, 0.921875), ax)
	axc = c.NewSelect(g.fcmp(enum.FPredOGT, axc, 3.92), fk(x, 3.92), axc)
	s := c.NewFMul(c.NewFSub(c.NewFDiv(fk(x, 1), axc), fk(x, erfMid)), fk(x, erfInvHalf))
	q := g.horner(s, erfQ)
	e := g.expf(c.NewFNeg(c.NewFMul(axc, axc)))
	c = g.cur
	var large value.Value = c.NewFSub(fk(x, 1), c.NewFMul(e, q))
	large = c.NewSelect(g.fcmp(enum.FPredOGT, ax, 3.92), fk(x, 1), large)
	large = g.callIntrinsic("llvm.copysign", large, x)
	// ax < cutoff is false for NaN: propagate NaN explicitly.
	r := c.NewSelect(g.fcmp(enum.FPredOLT, ax, 0.921875), small, large)
	return c.NewSelect(c.NewFCmp(enum.FPredUNO, x, x), x, r)
}
