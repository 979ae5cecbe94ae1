package hlo

import (
	"math"

	g "github.com/tessera-ml/tessera/graphir"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// Op names; each op is one row of binaryOps or unaryOps below, or one
// registration in init.
const (
	AddOp              = "hlo.add"
	SubtractOp         = "hlo.subtract"
	MultiplyOp         = "hlo.multiply"
	DivideOp           = "hlo.divide"
	MaximumOp          = "hlo.maximum"
	MinimumOp          = "hlo.minimum"
	PowerOp            = "hlo.power"
	RemainderOp        = "hlo.remainder"
	AndOp              = "hlo.and"
	OrOp               = "hlo.or"
	NegateOp           = "hlo.negate"
	AbsOp              = "hlo.abs"
	ExponentialOp      = "hlo.exponential"
	LogOp              = "hlo.log"
	TanhOp             = "hlo.tanh"
	LogisticOp         = "hlo.logistic"
	RsqrtOp            = "hlo.rsqrt"
	SqrtOp             = "hlo.sqrt"
	ErfOp              = "hlo.erf"
	AtanOp             = "hlo.atan"
	SineOp             = "hlo.sine"
	CosineOp           = "hlo.cosine"
	TanOp              = "hlo.tan"
	AsinOp             = "hlo.asin"
	AcosOp             = "hlo.acos"
	SinhOp             = "hlo.sinh"
	CoshOp             = "hlo.cosh"
	AsinhOp            = "hlo.asinh"
	AcoshOp            = "hlo.acosh"
	AtanhOp            = "hlo.atanh"
	FloorOp            = "hlo.floor"
	CeilOp             = "hlo.ceil"
	RoundNearestEvenOp = "hlo.round_nearest_even"
	SignOp             = "hlo.sign"
	NotOp              = "hlo.not"
	CompareOp          = "hlo.compare"
	SelectOp           = "hlo.select"
	ConvertOp          = "hlo.convert"
	ClampOp            = "hlo.clamp"
	// ShiftLeftOp and ShiftRightLogicalOp shift integers by the bits of
	// the second operand (StableHLO §shift_left, §shift_right_logical).
	ShiftLeftOp         = "hlo.shift_left"
	ShiftRightLogicalOp = "hlo.shift_right_logical"
	// ShiftRightArithmeticOp shifts right filling with the sign bit
	// (StableHLO §shift_right_arithmetic): floor(a / 2^b).
	ShiftRightArithmeticOp = "hlo.shift_right_arithmetic"
)

// Elementwise ops: binary arithmetic (StableHLO §add, §subtract,
// §multiply, §divide, §remainder, §maximum, §minimum, §power), logic
// (§and, §or, §not; Tessera's take i1 only, StableHLO's also integers
// bitwise), unary math (§negate, §exponential, §log, §tanh, §logistic,
// §rsqrt, §sqrt, §abs, §floor, §ceil, §sign, §sine, §cosine, §tan, and
// CHLO's erf, atan, asin, acos, sinh, cosh, asinh, acosh and atanh),
// §compare, §select, §convert and §clamp. No implicit broadcasting: binary
// operands have identical types.
//
// Each op is one row of a table: its element-type rule, its reference
// evaluator (the interpreter's semantics) and its scalar lowering to
// tensor IR (Lowering.Scalar), which matches the evaluator:
//   - add/multiply/maximum/minimum on i1 are or/and/or/and;
//   - integer divide truncates toward zero and x / 0 = -1 (XLA);
//   - remainder has the dividend's sign: C fmod on floats, the truncated
//     remainder on integers, with x % 0 = x (XLA: x == (x/y)·y + x%y
//     holds for y = 0 too);
//   - negate of a float multiplies by -1 (so -(+0) = -0);
//   - integer power is computed in f64 and truncated back;
//   - sign is select(x > 0, 1, select(x < 0, -1, x)): NaN and ±0 pass
//     through;
//   - clamp(lo, x, hi) is min(max(x, lo), hi) (NaN propagates; a rank-0
//     bound is read at []);
//   - compare gives i1; convert is a cast (float → int truncates toward
//     zero, → i1 tests for non-zero);
//   - shift_left and shift_right_logical take integers (not i1); the
//     amount is read as unsigned and amounts of the bit width or more give
//     0 (XLA's semantics; numpy's for unsigned operands);
//     shift_right_arithmetic reads the operand as signed and gives the
//     sign fill (−1 or 0) for such amounts;
//   - on unsigned types (ui8 ... ui64) compare, maximum, minimum, divide
//     and remainder are unsigned, and convert zero-extends.

// elems is the element types an elementwise op accepts.
type elems uint8

const (
	numbersOrBool elems = iota // any element type
	numbers                    // integers and floats, not i1
	floatsOnly                 // floating-point types
	boolOnly                   // i1
	intsOnly                   // integers, not i1
)

// binaryDef is one binary op of two same-typed operands.
type binaryDef struct {
	name, summary string
	comm          bool
	elems         elems
	fn            func(a, b float64, dt g.DType) float64
	scalar        func(a, b tir.Expr, t tir.DType) tir.Expr // nil result: t is not accepted
}

var binaryOps = []binaryDef{
	{AddOp, "elementwise a + b (logical or on i1)", true, numbersOrBool,
		func(a, b float64, _ g.DType) float64 { return a + b }, boolOr(tir.Add)},
	{SubtractOp, "elementwise a - b", false, numbers,
		func(a, b float64, _ g.DType) float64 { return a - b }, numeric(ignoreType(tir.Sub))},
	{MultiplyOp, "elementwise a * b (logical and on i1)", true, numbersOrBool,
		func(a, b float64, _ g.DType) float64 { return a * b }, boolAnd(tir.Mul)},
	{DivideOp, "elementwise a / b; integers truncate toward zero, x / 0 = -1 as XLA", false, numbers, divide, numeric(divideExpr)},
	{RemainderOp, "elementwise remainder of a / b with the sign of a (C fmod on floats; integers: x % 0 = x as XLA)", false, numbers, remainder, numeric(remainderExpr)},
	{MaximumOp, "elementwise max(a, b), NaN propagates", true, numbersOrBool, fmax, boolOr(tir.Max)},
	{MinimumOp, "elementwise min(a, b), NaN propagates", true, numbersOrBool, fmin, boolAnd(tir.Min)},
	{PowerOp, "elementwise a ** b; on integers a negative exponent gives 0 unless the base is ±1 (StableHLO)", false, numbers, power, numeric(powerExpr)},
	{AndOp, "elementwise logical and of i1 tensors", true, boolOnly,
		func(a, b float64, _ g.DType) float64 { return b2f(a != 0 && b != 0) }, logical(tir.OpAnd)},
	{OrOp, "elementwise logical or of i1 tensors", true, boolOnly,
		func(a, b float64, _ g.DType) float64 { return b2f(a != 0 || b != 0) }, logical(tir.OpOr)},
	{ShiftLeftOp, "elementwise a << b on integers; amounts ≥ the bit width give 0", false, intsOnly, shiftLeft, shiftExpr(tir.OpShl)},
	{ShiftRightLogicalOp, "elementwise a >> b on integers, shifting in zeros (a read as unsigned); amounts ≥ the bit width give 0", false, intsOnly, shiftRightLogical, shiftExpr(tir.OpShr)},
	{ShiftRightArithmeticOp, "elementwise a >> b on integers, shifting in the sign bit (a read as signed): floor(a / 2^b); amounts ≥ the bit width give the sign fill, -1 or 0", false, intsOnly, shiftRightArithmetic, shiftArithmeticExpr},
}

// shiftAmount is b read as an unsigned integer of dt's width; ok is false
// when it is the width or more.
func shiftAmount(b float64, dt g.DType) (int, bool) {
	bits := dt.Bits()
	u := uint64(g.IntBits(dt, b))
	if bits < 64 {
		u &= 1<<bits - 1
	}
	if u >= uint64(bits) {
		return 0, false
	}
	return int(u), true
}

// shiftLeft is a·2^b wrapped to dt (the caller rounds), 0 for b ≥ width.
func shiftLeft(a, b float64, dt g.DType) float64 {
	n, ok := shiftAmount(b, dt)
	if !ok {
		return 0
	}
	return math.Ldexp(a, n)
}

// shiftRightLogical is floor(a' / 2^b) for a' = a read as unsigned, 0 for
// b ≥ width.
func shiftRightLogical(a, b float64, dt g.DType) float64 {
	n, ok := shiftAmount(b, dt)
	if !ok {
		return 0
	}
	bits := dt.Bits()
	u := uint64(g.IntBits(dt, a))
	if bits < 64 {
		u &= 1<<bits - 1
	}
	return float64(u >> n)
}

// shiftRightArithmetic is floor(a' / 2^b) for a' = a read as signed (an
// unsigned operand's top bit is its sign), the sign fill (−1 or 0) for
// b ≥ width; the result is read back in dt.
func shiftRightArithmetic(a, b float64, dt g.DType) float64 {
	bits := dt.Bits()
	n, ok := shiftAmount(b, dt)
	if !ok {
		n = bits - 1
	}
	v := g.IntBits(dt, a) << (64 - bits) >> (64 - bits) >> n
	if dt.IsUnsigned() && bits < 64 {
		return float64(uint64(v) & (1<<bits - 1))
	}
	return g.IntValue(dt, v)
}

// shiftArithmeticExpr lowers shift_right_arithmetic: tensor IR's shr,
// which fills with the sign on signed dtypes (an unsigned operand is
// shifted as its signed image).
func shiftArithmeticExpr(a, b tir.Expr, t tir.DType) tir.Expr {
	if !t.IsInt() || t.IsBool() {
		return nil
	}
	return shiftAs(tir.OpShr, a, b, t, intOfWidth(t, false))
}

// shiftExpr lowers a shift: tensor IR's shl, and shr, which is logical on
// unsigned dtypes; a signed operand is shifted as its unsigned image.
func shiftExpr(op tir.BinOp) func(a, b tir.Expr, t tir.DType) tir.Expr {
	return func(a, b tir.Expr, t tir.DType) tir.Expr {
		if !t.IsInt() || t.IsBool() {
			return nil
		}
		if op == tir.OpShl {
			return tir.Bin(op, a, b)
		}
		return shiftAs(op, a, b, t, intOfWidth(t, true))
	}
}

// shiftAs is a op b on t's operands seen as dtype as (t's width, the
// other signedness), read back as t.
func shiftAs(op tir.BinOp, a, b tir.Expr, t, as tir.DType) tir.Expr {
	if t == as {
		return tir.Bin(op, a, b)
	}
	return &tir.Cast{Type: t, X: tir.Bin(op, &tir.Cast{Type: as, X: a}, &tir.Cast{Type: as, X: b})}
}

// intOfWidth is the unsigned or signed integer dtype of t's width.
func intOfWidth(t tir.DType, unsigned bool) tir.DType {
	types := map[int][2]tir.DType{8: {tir.DI8, tir.DUI8}, 16: {tir.DI16, tir.DUI16}, 32: {tir.DI32, tir.DUI32}, 64: {tir.DI64, tir.DUI64}}
	if unsigned {
		return types[t.Bits()][1]
	}
	return types[t.Bits()][0]
}

// numeric is a binary lowering for non-i1 dtypes.
func numeric(f func(a, b tir.Expr, t tir.DType) tir.Expr) func(a, b tir.Expr, t tir.DType) tir.Expr {
	return func(a, b tir.Expr, t tir.DType) tir.Expr {
		if t.IsBool() {
			return nil
		}
		return f(a, b, t)
	}
}

// ignoreType adapts a dtype-independent expression builder.
func ignoreType(f func(a, b tir.Expr) tir.Expr) func(a, b tir.Expr, t tir.DType) tir.Expr {
	return func(a, b tir.Expr, _ tir.DType) tir.Expr { return f(a, b) }
}

// boolOr is f on numbers and logical or on i1; boolAnd likewise with and.
func boolOr(f func(a, b tir.Expr) tir.Expr) func(a, b tir.Expr, t tir.DType) tir.Expr {
	return withBool(f, tir.OpOr)
}

func boolAnd(f func(a, b tir.Expr) tir.Expr) func(a, b tir.Expr, t tir.DType) tir.Expr {
	return withBool(f, tir.OpAnd)
}

func withBool(f func(a, b tir.Expr) tir.Expr, onBool tir.BinOp) func(a, b tir.Expr, t tir.DType) tir.Expr {
	return func(a, b tir.Expr, t tir.DType) tir.Expr {
		if t.IsBool() {
			return tir.Bin(onBool, a, b)
		}
		return f(a, b)
	}
}

// logical is an i1-only binary lowering.
func logical(op tir.BinOp) func(a, b tir.Expr, t tir.DType) tir.Expr {
	return func(a, b tir.Expr, t tir.DType) tir.Expr {
		if !t.IsBool() {
			return nil
		}
		return tir.Bin(op, a, b)
	}
}

func divide(a, b float64, dt g.DType) float64 {
	if dt.IsInt() {
		if b == 0 {
			return -1
		}
		return math.Trunc(a / b)
	}
	return a / b
}

// remainder is a − trunc(a/b)·b with the sign of a: math.Mod on floats,
// Go's % on integers (MinInt % -1 = 0), and a when an integer b is 0.
func remainder(a, b float64, dt g.DType) float64 {
	if !dt.IsInt() {
		return math.Mod(a, b)
	}
	if b == 0 {
		return a
	}
	return float64(int64(a) % int64(b))
}

// power is a ** b; for integers as StableHLO defines it: a negative
// exponent gives 1 for base 1, ±1 for base -1 (by the exponent's parity)
// and 0 otherwise; other results are computed in f64 (exact while they are
// below 2^53 in magnitude), truncated to an integer and wrapped to the type.
func power(a, b float64, dt g.DType) float64 {
	if !dt.IsInt() || b >= 0 {
		return math.Pow(a, b)
	}
	switch {
	case a == 1:
		return 1
	case a == -1 && math.Mod(b, 2) != 0:
		return -1
	case a == -1:
		return 1
	}
	return 0
}

// FMax and FMin are hlo.maximum's and hlo.minimum's evaluation (NaN
// propagates, as in compiled code; tensorir.FMax, tensorir.FMin), shared
// with the graph dialect's reference evaluators.
var FMax, FMin = tir.FMax, tir.FMin

func fmax(a, b float64, _ g.DType) float64 { return tir.FMax(a, b) }
func fmin(a, b float64, _ g.DType) float64 { return tir.FMin(a, b) }

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// divideExpr is a / b; on integers it truncates toward zero with x / 0 =
// -1: with d = (b == 0 ? 1 : b), q = floordiv(a, d), corrected by one
// when the remainder is non-zero and the signs differ.
func divideExpr(a, b tir.Expr, t tir.DType) tir.Expr {
	if t.IsFloat() {
		return tir.Div(a, b)
	}
	zero := tir.IntOf(t, 0)
	isZero := tir.Bin(tir.OpEQ, b, zero)
	d := &tir.Select{Cond: isZero, T: tir.IntOf(t, 1), F: b}
	q := tir.FloorDiv(a, d)
	r := tir.FloorMod(a, d)
	signsDiffer := tir.Bin(tir.OpNE, tir.LT(a, zero), tir.LT(d, zero))
	fix := tir.Bin(tir.OpAnd, tir.Bin(tir.OpNE, r, zero), signsDiffer)
	tq := &tir.Select{Cond: fix, T: tir.Add(q, tir.IntOf(t, 1)), F: q}
	return &tir.Select{Cond: isZero, T: tir.IntOf(t, -1), F: tq}
}

// remainderExpr is the intrinsic fmod(a, b) on floats; on integers the
// truncated remainder from floormod (the divisor's sign): with d = (b == 0
// ? 1 : b), r = floormod(a, d) is moved to the dividend's sign by
// subtracting d when r ≠ 0 and the signs of a and d differ; b == 0 gives a.
func remainderExpr(a, b tir.Expr, t tir.DType) tir.Expr {
	if t.IsFloat() {
		return &tir.Call{Name: "fmod", Args: []tir.Expr{a, b}}
	}
	zero := tir.IntOf(t, 0)
	isZero := tir.Bin(tir.OpEQ, b, zero)
	d := &tir.Select{Cond: isZero, T: tir.IntOf(t, 1), F: b}
	r := tir.FloorMod(a, d)
	signsDiffer := tir.Bin(tir.OpNE, tir.LT(a, zero), tir.LT(d, zero))
	fix := tir.Bin(tir.OpAnd, tir.Bin(tir.OpNE, r, zero), signsDiffer)
	tr := &tir.Select{Cond: fix, T: tir.Sub(r, d), F: r}
	return &tir.Select{Cond: isZero, T: a, F: tr}
}

// powerExpr is pow(a, b); integers follow power: raised in f64 and
// truncated back, with the negative-exponent cases selected explicitly.
func powerExpr(a, b tir.Expr, t tir.DType) tir.Expr {
	if t.IsFloat() {
		return &tir.Call{Name: "pow", Args: []tir.Expr{a, b}}
	}
	p := &tir.Call{Name: "pow", Args: []tir.Expr{&tir.Cast{Type: tir.DF64, X: a}, &tir.Cast{Type: tir.DF64, X: b}}}
	one, minusOne := tir.IntOf(t, 1), tir.IntOf(t, -1)
	even := tir.Bin(tir.OpEQ, tir.FloorMod(b, tir.IntOf(t, 2)), tir.IntOf(t, 0))
	minusOnePow := &tir.Select{Cond: even, T: one, F: minusOne}
	negExp := &tir.Select{Cond: tir.Bin(tir.OpEQ, a, one), T: one,
		F: &tir.Select{Cond: tir.Bin(tir.OpEQ, a, minusOne), T: minusOnePow, F: tir.IntOf(t, 0)}}
	// Through i64, so a result beyond t's range wraps as the reference's
	// truncation does (a float → integer cast saturates).
	var v tir.Expr = &tir.Cast{Type: tir.DI64, X: p}
	if t != tir.DI64 {
		v = &tir.Cast{Type: t, X: v}
	}
	return &tir.Select{Cond: tir.LT(b, tir.IntOf(t, 0)), T: negExp, F: v}
}

// unaryDef is one unary op whose result has the operand's type.
type unaryDef struct {
	name, summary string
	elems         elems
	fn            func(x float64) float64
	// intrinsic is the tensor IR intrinsic computing the op; without one,
	// scalar does.
	intrinsic string
	scalar    func(x tir.Expr, t tir.DType) tir.Expr
}

var unaryOps = []unaryDef{
	{name: NegateOp, summary: "elementwise -x", elems: numbers, fn: func(x float64) float64 { return -x }, scalar: negateExpr},
	{name: AbsOp, summary: "elementwise |x|", elems: numbers, fn: math.Abs, intrinsic: "abs"},
	{name: ExponentialOp, summary: "elementwise e^x", elems: floatsOnly, fn: math.Exp, intrinsic: "exp"},
	{name: LogOp, summary: "elementwise natural logarithm", elems: floatsOnly, fn: math.Log, intrinsic: "log"},
	{name: TanhOp, summary: "elementwise hyperbolic tangent", elems: floatsOnly, fn: math.Tanh, intrinsic: "tanh"},
	{name: LogisticOp, summary: "elementwise 1 / (1 + e^-x)", elems: floatsOnly, fn: func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }, intrinsic: "sigmoid"},
	{name: RsqrtOp, summary: "elementwise 1 / sqrt(x)", elems: floatsOnly, fn: func(x float64) float64 { return 1 / math.Sqrt(x) }, intrinsic: "rsqrt"},
	{name: SqrtOp, summary: "elementwise square root", elems: floatsOnly, fn: math.Sqrt, intrinsic: "sqrt"},
	{name: ErfOp, summary: "elementwise Gauss error function", elems: floatsOnly, fn: math.Erf, intrinsic: "erf"},
	{name: AtanOp, summary: "elementwise arctangent in radians (CHLO atan)", elems: floatsOnly, fn: math.Atan, intrinsic: "atan"},
	{name: SineOp, summary: "elementwise sine of radians (±inf → NaN)", elems: floatsOnly, fn: math.Sin, intrinsic: "sin"},
	{name: CosineOp, summary: "elementwise cosine of radians (±inf → NaN)", elems: floatsOnly, fn: math.Cos, intrinsic: "cos"},
	{name: TanOp, summary: "elementwise tangent of radians (±inf → NaN)", elems: floatsOnly, fn: math.Tan, intrinsic: "tan"},
	{name: AsinOp, summary: "elementwise arcsine in radians, NaN outside [-1, 1] (CHLO asin)", elems: floatsOnly, fn: math.Asin, intrinsic: "asin"},
	{name: AcosOp, summary: "elementwise arccosine in radians, NaN outside [-1, 1] (CHLO acos)", elems: floatsOnly, fn: math.Acos, intrinsic: "acos"},
	{name: SinhOp, summary: "elementwise hyperbolic sine (CHLO sinh)", elems: floatsOnly, fn: math.Sinh, intrinsic: "sinh"},
	{name: CoshOp, summary: "elementwise hyperbolic cosine (CHLO cosh)", elems: floatsOnly, fn: math.Cosh, intrinsic: "cosh"},
	{name: AsinhOp, summary: "elementwise inverse hyperbolic sine (CHLO asinh)", elems: floatsOnly, fn: math.Asinh, intrinsic: "asinh"},
	{name: AcoshOp, summary: "elementwise inverse hyperbolic cosine, NaN below 1 (CHLO acosh)", elems: floatsOnly, fn: math.Acosh, intrinsic: "acosh"},
	{name: AtanhOp, summary: "elementwise inverse hyperbolic tangent, ±inf at ±1, NaN beyond (CHLO atanh)", elems: floatsOnly, fn: math.Atanh, intrinsic: "atanh"},
	{name: FloorOp, summary: "elementwise round toward -inf", elems: floatsOnly, fn: math.Floor, intrinsic: "floor"},
	{name: CeilOp, summary: "elementwise round toward +inf", elems: floatsOnly, fn: math.Ceil, intrinsic: "ceil"},
	{name: RoundNearestEvenOp, summary: "elementwise round to the nearest integer, ties to even (StableHLO round_nearest_even)", elems: floatsOnly, fn: math.RoundToEven, intrinsic: "roundeven"},
	{name: SignOp, summary: "elementwise sign: -1, 0 or 1 (NaN and ±0 pass through)", elems: numbers, fn: Sign, scalar: signExpr},
	{name: NotOp, summary: "elementwise logical not of an i1 tensor", elems: boolOnly, fn: func(x float64) float64 { return b2f(x == 0) },
		scalar: func(x tir.Expr, t tir.DType) tir.Expr { return &tir.Not{X: x} }},
}

// Sign is -1, 0 or 1 by the sign of x; NaN and ±0 pass through
// (StableHLO sign, ONNX Sign).
func Sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return x
}

func negateExpr(x tir.Expr, t tir.DType) tir.Expr {
	if t.IsFloat() {
		return tir.Mul(x, tir.Float(t, -1))
	}
	return tir.Sub(tir.IntOf(t, 0), x)
}

func signExpr(x tir.Expr, t tir.DType) tir.Expr {
	zero, one, minus := tir.Imm(t, 0), tir.Imm(t, 1), tir.Imm(t, -1)
	neg := &tir.Select{Cond: tir.LT(x, zero), T: minus, F: x}
	return &tir.Select{Cond: tir.Bin(tir.OpGT, x, zero), T: one, F: neg}
}

// ComparisonDirections are the values of hlo.compare's comparison_direction.
var ComparisonDirections = []string{"EQ", "NE", "LT", "LE", "GT", "GE"}

var compareOps = map[string]struct {
	fn func(a, b float64) bool
	op tir.BinOp
}{
	"EQ": {func(a, b float64) bool { return a == b }, tir.OpEQ},
	"NE": {func(a, b float64) bool { return a != b }, tir.OpNE},
	"LT": {func(a, b float64) bool { return a < b }, tir.OpLT},
	"LE": {func(a, b float64) bool { return a <= b }, tir.OpLE},
	"GT": {func(a, b float64) bool { return a > b }, tir.OpGT},
	"GE": {func(a, b float64) bool { return a >= b }, tir.OpGE},
}

func init() {
	for _, d := range binaryOps {
		registerBinary(d)
	}
	for _, d := range unaryOps {
		registerUnary(d)
	}
	register(&g.OpDef{
		Name:     CompareOp,
		Symbolic: true,
		Summary:  "elementwise comparison of two same-typed tensors, giving an i1 tensor",
		Operands: g.Exactly(2), Results: g.Exactly(1), Traits: g.Pure | g.Elementwise, Pretty: true,
		Attrs: []g.AttrSpec{{Name: "comparison_direction", Kind: g.KindEnum, Required: true, Enum: ComparisonDirections}},
		Infer: inferCompare,
		Eval:  evalCompare,
	}, Lowering{Scalar: compareScalar})
	register(&g.OpDef{
		Name:     SelectOp,
		Symbolic: true,
		Summary:  "elementwise pred ? on_true : on_false; pred is i1 of the same shape or rank 0",
		Operands: g.Exactly(3), Results: g.Exactly(1), Traits: g.Pure | g.Elementwise, Pretty: true,
		Infer: inferSelect,
		Eval:  evalSelect,
	}, Lowering{Scalar: func(op *g.Op, args []tir.Expr, _ tir.DType) (tir.Expr, error) {
		return &tir.Select{Cond: args[0], T: args[1], F: args[2]}, nil
	}})
	register(&g.OpDef{
		Name:     ConvertOp,
		Symbolic: true,
		Summary:  "elementwise element type conversion; the result type is written explicitly",
		Operands: g.Exactly(1), Results: g.Exactly(1), Traits: g.Pure | g.Elementwise, Pretty: true,
		Verify: verifyConvert,
		Eval: func(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
			return evalMap(op, args, func(x []float64) float64 { return x[0] })
		},
	}, Lowering{Scalar: func(op *g.Op, args []tir.Expr, res tir.DType) (tir.Expr, error) {
		if args[0].DType() == res {
			return args[0], nil
		}
		return &tir.Cast{Type: res, X: args[0]}, nil
	}})
	register(&g.OpDef{
		Name:     ClampOp,
		Symbolic: true,
		Summary:  "elementwise min(max(x, min), max); min and max have the operand's type or are rank 0",
		Operands: g.Exactly(3), Results: g.Exactly(1), Traits: g.Pure | g.Elementwise, Pretty: true,
		Infer: inferClamp,
		Eval: func(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
			return evalMap(op, args, func(x []float64) float64 { return tir.FMin(tir.FMax(x[1], x[0]), x[2]) })
		},
	}, Lowering{Scalar: func(op *g.Op, args []tir.Expr, res tir.DType) (tir.Expr, error) {
		if res.IsBool() {
			return nil, errorAt(op, "'%s' does not take %s", op.Name, res)
		}
		return tir.Min(tir.Max(args[1], args[0]), args[2]), nil
	}})
}

func registerBinary(d binaryDef) {
	traits := g.Pure | g.Elementwise | g.SameOperandsAndResultType
	if d.comm {
		traits |= g.Commutative
	}
	register(&g.OpDef{
		Name: d.name, Summary: d.summary,
		Operands: g.Exactly(2), Results: g.Exactly(1), Traits: traits, Pretty: true, Symbolic: true,
		Infer: func(op *g.Op) ([]g.Type, error) { return inferBinary(op, d.elems) },
		Eval: func(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
			rt, err := evalResultType(op)
			if err != nil {
				return nil, err
			}
			return evalMap(op, args, func(x []float64) float64 { return d.fn(x[0], x[1], rt.Elem) })
		},
	}, Lowering{Scalar: func(op *g.Op, args []tir.Expr, res tir.DType) (tir.Expr, error) {
		e := d.scalar(args[0], args[1], res)
		if e == nil {
			return nil, errorAt(op, "'%s' does not take %s", op.Name, res)
		}
		return e, nil
	}})
}

func registerUnary(d unaryDef) {
	register(&g.OpDef{
		Name: d.name, Summary: d.summary,
		Operands: g.Exactly(1), Results: g.Exactly(1), Symbolic: true,
		Traits: g.Pure | g.Elementwise | g.SameOperandsAndResultType, Pretty: true,
		Infer: func(op *g.Op) ([]g.Type, error) {
			ts, err := tensorOperands(op)
			if err != nil {
				return nil, err
			}
			if err := checkUnaryElems(op, ts[0], d.elems); err != nil {
				return nil, err
			}
			return []g.Type{ts[0]}, nil
		},
		Eval: func(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
			return evalMap(op, args, func(x []float64) float64 { return d.fn(x[0]) })
		},
	}, Lowering{Scalar: func(op *g.Op, args []tir.Expr, res tir.DType) (tir.Expr, error) {
		if !acceptsElems(res, d.elems) {
			return nil, errorAt(op, "'%s' does not take %s", op.Name, res)
		}
		if d.intrinsic != "" {
			return intrinsicCall(op, d.intrinsic, res, args...)
		}
		return d.scalar(args[0], res), nil
	}})
}

// intrinsicCall is the tensor IR intrinsic name applied to args, refused
// (at op) for integer dtypes the intrinsic does not take.
func intrinsicCall(op *g.Op, name string, res tir.DType, args ...tir.Expr) (tir.Expr, error) {
	if in := tir.Intrinsics[name]; !res.IsFloat() && !in.IntOK {
		return nil, errorAt(op, "'%s' does not take %s", op.Name, res)
	}
	return &tir.Call{Name: name, Args: args}, nil
}

// acceptsElems reports whether tensor IR dtype t is of kind k.
func acceptsElems(t tir.DType, k elems) bool {
	switch k {
	case numbers:
		return !t.IsBool()
	case floatsOnly:
		return t.IsFloat()
	case boolOnly:
		return t.IsBool()
	}
	return true
}

// checkUnaryElems reports the unary operand types an op refuses.
func checkUnaryElems(op *g.Op, t *g.TensorType, k elems) error {
	switch e := t.Elem; {
	case k == boolOnly && e != g.I1:
		return op.Errorf("operand must have element type i1, got %s", t)
	case k == floatsOnly && !e.IsFloat():
		return op.Errorf("operand must have a floating-point element type, got %s", t)
	case k == numbers && e == g.I1:
		return op.Errorf("operand must have a signed integer or floating-point element type, got %s", t)
	}
	return nil
}

func inferBinary(op *g.Op, k elems) ([]g.Type, error) {
	ts, err := tensorOperands(op)
	if err != nil {
		return nil, err
	}
	if !ts[0].Equal(ts[1]) {
		return nil, op.Errorf("operands must have the same type (no implicit broadcasting), got %s and %s", ts[0], ts[1])
	}
	switch e := ts[0].Elem; {
	case k == boolOnly && e != g.I1:
		return nil, op.Errorf("operands must have element type i1, got %s", ts[0])
	case k != boolOnly && k != numbersOrBool && e == g.I1:
		return nil, op.Errorf("does not accept i1 operands, got %s", ts[0])
	case k == intsOnly && !e.IsInt():
		return nil, op.Errorf("operands must have an integer element type, got %s", ts[0])
	}
	return []g.Type{ts[0]}, nil
}

// evalMap evaluates an elementwise op: result element i is fn of the
// operands' elements i (a rank-0 operand gives its one element
// everywhere), rounded to the result type.
func evalMap(op *g.Op, args []*g.Tensor, fn func(x []float64) float64) ([]*g.Tensor, error) {
	if err := checkArgSizes(op, args); err != nil {
		return nil, err
	}
	rt, err := evalResultType(op)
	if err != nil {
		return nil, err
	}
	n := rt.NumElements()
	for _, a := range args {
		if a.Type.Rank() != 0 && int64(len(a.Data)) != n {
			return nil, op.Errorf("evaluator got an input of %d elements for a result of %d", len(a.Data), n)
		}
	}
	out := g.NewZeroTensor(rt)
	x := make([]float64, len(args))
	for i := range out.Data {
		for k, a := range args {
			if a.Type.Rank() == 0 {
				x[k] = a.Data[0]
			} else {
				x[k] = a.Data[i]
			}
		}
		out.Data[i] = fn(x)
	}
	return []*g.Tensor{out.Round()}, nil
}

func inferCompare(op *g.Op) ([]g.Type, error) {
	ts, err := tensorOperands(op)
	if err != nil {
		return nil, err
	}
	if !ts[0].Equal(ts[1]) {
		return nil, op.Errorf("operands must have the same type, got %s and %s", ts[0], ts[1])
	}
	return []g.Type{ts[0].WithElem(g.I1)}, nil
}

func evalCompare(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
	dir, _ := op.Str("comparison_direction")
	c, ok := compareOps[dir]
	if !ok {
		return nil, op.Errorf("unknown comparison_direction %q", dir)
	}
	return evalMap(op, args, func(x []float64) float64 { return b2f(c.fn(x[0], x[1])) })
}

func compareScalar(op *g.Op, args []tir.Expr, _ tir.DType) (tir.Expr, error) {
	dir, _ := op.Str("comparison_direction")
	c, ok := compareOps[dir]
	if !ok {
		return nil, errorAt(op, "unknown comparison_direction %q", dir)
	}
	return tir.Bin(c.op, args[0], args[1]), nil
}

func inferSelect(op *g.Op) ([]g.Type, error) {
	ts, err := tensorOperands(op)
	if err != nil {
		return nil, err
	}
	pred, t, f := ts[0], ts[1], ts[2]
	if pred.Elem != g.I1 {
		return nil, op.Errorf("predicate must have element type i1, got %s", pred)
	}
	if !t.Equal(f) {
		return nil, op.Errorf("on_true and on_false must have the same type, got %s and %s", t, f)
	}
	if pred.Rank() != 0 && !t.WithElem(g.I1).Equal(pred) {
		return nil, op.Errorf("predicate must be rank 0 or have the shape of on_true, got %s and %s", pred, t)
	}
	return []g.Type{t}, nil
}

func evalSelect(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
	return evalMap(op, args, func(x []float64) float64 {
		if x[0] != 0 {
			return x[1]
		}
		return x[2]
	})
}

func verifyConvert(op *g.Op) error {
	ts, err := tensorOperands(op)
	if err != nil {
		return err
	}
	rt, err := resultTensor(op, 0)
	if err != nil {
		return err
	}
	if !ts[0].WithElem(rt.Elem).Equal(rt) {
		return op.Errorf("result shape must equal operand shape: operand %s, result %s", ts[0], rt)
	}
	return nil
}

func inferClamp(op *g.Op) ([]g.Type, error) {
	ts, err := tensorOperands(op)
	if err != nil {
		return nil, err
	}
	x := ts[1]
	if x.Elem == g.I1 {
		return nil, op.Errorf("does not accept i1 operands, got %s", x)
	}
	for _, i := range []int{0, 2} {
		b := ts[i]
		if b.Elem != x.Elem {
			return nil, op.Errorf("operand #%d must have element type %s, got %s", i, x.Elem, b)
		}
		if b.Rank() != 0 && !b.Equal(x) {
			return nil, op.Errorf("operand #%d must be rank 0 or have the operand's type %s, got %s", i, x, b)
		}
	}
	return []g.Type{x}, nil
}

// Compare builds a detached hlo.compare of a and b in direction dir (one of
// ComparisonDirections).
func Compare(a, b *g.Value, dir string, loc g.Location) (*g.Op, error) {
	return g.Build(CompareOp, []*g.Value{a, b}, g.DictAttr{{Name: "comparison_direction", Value: g.StringAttr(dir)}}, loc)
}

// Convert builds a detached hlo.convert of x to element type elem.
func Convert(x *g.Value, elem g.DType, loc g.Location) (*g.Op, error) {
	t, ok := x.Type.(*g.TensorType)
	if !ok {
		return nil, g.Errorf(loc, "'%s' op operand must be a tensor, got %s", ConvertOp, x.Type)
	}
	op := g.NewOp(ConvertOp, []*g.Value{x}, []g.Type{t.WithElem(elem)}, nil, loc)
	return op, nil
}
