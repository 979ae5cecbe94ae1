package graph

import (
	"math"

	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// Elementwise math ops (ONNX opset 13+ semantics):
//
//	graph.exp, graph.log, graph.sqrt, graph.erf, graph.atan, graph.reciprocal,
//	graph.floor, graph.ceil, graph.round (x float) → same type ONNX Exp, Log, Sqrt, Erf, Atan, Reciprocal, Floor, Ceil, Round
//	    (round: to the nearest integer, ties to even)
//	graph.sin, graph.cos, graph.tan, graph.asin, graph.acos,
//	graph.sinh, graph.cosh, graph.asinh, graph.acosh,
//	graph.atanh (x float) → same type                        ONNX Sin, Cos, Tan, Asin, Acos, Sinh, Cosh, Asinh, Acosh, Atanh
//	    (radians; NaN outside the domain: |x| > 1 for asin/acos/atanh, x < 1 for acosh; atanh(±1) = ±inf)
//	graph.neg, graph.abs, graph.sign (x signed int or float)  ONNX Neg, Abs, Sign (sign(0) = 0, sign(NaN) = NaN)
//	graph.pow(a, b), graph.max(a, b), graph.min(a, b)         ONNX Pow, Max, Min (two operands, NumPy broadcasting,
//	    one element type; pow of a negative base with an integral exponent is real, otherwise NaN; max/min propagate NaN)
//	graph.mod(a, b) {fmod = 0}                                ONNX Mod (NumPy broadcasting, one element type, not i1):
//	    fmod = 0 (integers only): the sign of the divisor (Python's %); fmod = 1: C fmod, the sign of the
//	    dividend (floats: exact, mod(x, 0) = NaN); an integer x mod 0 is x in both modes
//	graph.cast(x) → the written result type, same shape       ONNX Cast (float → int truncates toward zero, → i1 is x ≠ 0)
//
// log(0) = -inf, log(x<0) = NaN, sqrt(x<0) = NaN, 1/0 = +inf (IEEE), as ONNX.

// Math op names.
const (
	ExpOp        = "graph.exp"
	LogOp        = "graph.log"
	SqrtOp       = "graph.sqrt"
	ErfOp        = "graph.erf"
	AtanOp       = "graph.atan"
	NegOp        = "graph.neg"
	AbsOp        = "graph.abs"
	ReciprocalOp = "graph.reciprocal"
	FloorOp      = "graph.floor"
	CeilOp       = "graph.ceil"
	RoundOp      = "graph.round"
	SignOp       = "graph.sign"
	PowOp        = "graph.pow"
	MaxOp        = "graph.max"
	MinOp        = "graph.min"
	ModOp        = "graph.mod"
	SinOp        = "graph.sin"
	CosOp        = "graph.cos"
	TanOp        = "graph.tan"
	AsinOp       = "graph.asin"
	AcosOp       = "graph.acos"
	SinhOp       = "graph.sinh"
	CoshOp       = "graph.cosh"
	AsinhOp      = "graph.asinh"
	AcoshOp      = "graph.acosh"
	AtanhOp      = "graph.atanh"
	CastOp       = "graph.cast"
)

func init() {
	registerUnary([]unaryOp{
		{name: ExpOp, summary: "e^x (ONNX Exp); float element types", kind: floatElem, fn: func(x float64, _ []float64) float64 { return math.Exp(x) }, hlo: hlo.ExponentialOp, onnx: "Exp"},
		{name: LogOp, summary: "natural logarithm (ONNX Log; log 0 = -inf, log of a negative = NaN); float element types", kind: floatElem, fn: func(x float64, _ []float64) float64 { return math.Log(x) }, hlo: hlo.LogOp, onnx: "Log"},
		{name: SqrtOp, summary: "square root (ONNX Sqrt; negative → NaN); float element types", kind: floatElem, fn: func(x float64, _ []float64) float64 { return math.Sqrt(x) }, hlo: hlo.SqrtOp, onnx: "Sqrt"},
		{name: ErfOp, summary: "Gauss error function (ONNX Erf); float element types", kind: floatElem, fn: func(x float64, _ []float64) float64 { return math.Erf(x) }, hlo: hlo.ErfOp, onnx: "Erf"},
		{name: AtanOp, summary: "arctangent in radians, in [-π/2, π/2] (ONNX Atan); float element types", kind: floatElem, fn: func(x float64, _ []float64) float64 { return math.Atan(x) }, hlo: hlo.AtanOp, onnx: "Atan"},
		{name: SinOp, summary: "sine of radians (ONNX Sin; ±inf → NaN); float element types", kind: floatElem, fn: unaryFn(math.Sin), hlo: hlo.SineOp, onnx: "Sin"},
		{name: CosOp, summary: "cosine of radians (ONNX Cos; ±inf → NaN); float element types", kind: floatElem, fn: unaryFn(math.Cos), hlo: hlo.CosineOp, onnx: "Cos"},
		{name: TanOp, summary: "tangent of radians (ONNX Tan; ±inf → NaN); float element types", kind: floatElem, fn: unaryFn(math.Tan), hlo: hlo.TanOp, onnx: "Tan"},
		{name: AsinOp, summary: "arcsine in radians, in [-π/2, π/2] (ONNX Asin; NaN outside [-1, 1]); float element types", kind: floatElem, fn: unaryFn(math.Asin), hlo: hlo.AsinOp, onnx: "Asin"},
		{name: AcosOp, summary: "arccosine in radians, in [0, π] (ONNX Acos; NaN outside [-1, 1]); float element types", kind: floatElem, fn: unaryFn(math.Acos), hlo: hlo.AcosOp, onnx: "Acos"},
		{name: SinhOp, summary: "hyperbolic sine (ONNX Sinh); float element types", kind: floatElem, fn: unaryFn(math.Sinh), hlo: hlo.SinhOp, onnx: "Sinh"},
		{name: CoshOp, summary: "hyperbolic cosine (ONNX Cosh); float element types", kind: floatElem, fn: unaryFn(math.Cosh), hlo: hlo.CoshOp, onnx: "Cosh"},
		{name: AsinhOp, summary: "inverse hyperbolic sine (ONNX Asinh); float element types", kind: floatElem, fn: unaryFn(math.Asinh), hlo: hlo.AsinhOp, onnx: "Asinh"},
		{name: AcoshOp, summary: "inverse hyperbolic cosine (ONNX Acosh; NaN below 1); float element types", kind: floatElem, fn: unaryFn(math.Acosh), hlo: hlo.AcoshOp, onnx: "Acosh"},
		{name: AtanhOp, summary: "inverse hyperbolic tangent (ONNX Atanh; ±1 → ±inf, NaN beyond); float element types", kind: floatElem, fn: unaryFn(math.Atanh), hlo: hlo.AtanhOp, onnx: "Atanh"},
		{name: ReciprocalOp, summary: "1 / x (ONNX Reciprocal; 1/±0 = ±inf); float element types", kind: floatElem, fn: func(x float64, _ []float64) float64 { return 1 / x }, legalize: legalizeReciprocal, onnx: "Reciprocal"},
		{name: FloorOp, summary: "largest integer ≤ x (ONNX Floor; ±0, ±inf, NaN unchanged); float element types", kind: floatElem, fn: func(x float64, _ []float64) float64 { return math.Floor(x) }, hlo: hlo.FloorOp, onnx: "Floor"},
		{name: CeilOp, summary: "smallest integer ≥ x (ONNX Ceil; ±0, ±inf, NaN unchanged); float element types", kind: floatElem, fn: func(x float64, _ []float64) float64 { return math.Ceil(x) }, hlo: hlo.CeilOp, onnx: "Ceil"},
		{name: RoundOp, summary: "nearest integer, ties to even (ONNX Round; ±0, ±inf, NaN unchanged); float element types", kind: floatElem, fn: func(x float64, _ []float64) float64 { return math.RoundToEven(x) }, hlo: hlo.RoundNearestEvenOp, onnx: "Round"},
		{name: NegOp, summary: "-x (ONNX Neg); signed integer or float element types", kind: negElem, fn: func(x float64, _ []float64) float64 { return -x }, hlo: hlo.NegateOp, onnx: "Neg"},
		{name: AbsOp, summary: "|x| (ONNX Abs); integer (unsigned: the identity) or float element types, not i1", kind: signedElem, fn: func(x float64, _ []float64) float64 { return math.Abs(x) }, hlo: hlo.AbsOp, onnx: "Abs"},
		{name: SignOp, summary: "-1, 0 or 1 by the sign of x (ONNX Sign; NaN → NaN); integer or float element types, not i1", kind: signedElem, fn: func(x float64, _ []float64) float64 { return hlo.Sign(x) }, hlo: hlo.SignOp, onnx: "Sign"},
	})
	registerBinary([]binaryOp{
		{name: PowOp, summary: "a ** b with NumPy broadcasting (ONNX Pow; same element type, not i1)", kind: signedElem, fn: math.Pow, hlo: hlo.PowerOp},
		{name: MaxOp, summary: "max(a, b) with NumPy broadcasting (ONNX Max of two operands; NaN propagates)", traits: graphir.Commutative, fn: hlo.FMax, hlo: hlo.MaximumOp},
		{name: MinOp, summary: "min(a, b) with NumPy broadcasting (ONNX Min of two operands; NaN propagates)", traits: graphir.Commutative, fn: hlo.FMin, hlo: hlo.MinimumOp},
	})
	register(&graphir.OpDef{
		Name:     ModOp,
		Summary:  "remainder of a / b with NumPy broadcasting (ONNX Mod): fmod = 0 (integers) takes the divisor's sign, fmod = 1 the dividend's (C fmod); integer x mod 0 = x",
		Operands: graphir.Exactly(2),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure | graphir.Elementwise,
		Attrs:    []graphir.AttrSpec{{Name: "fmod", Kind: graphir.KindInt, Default: graphir.IntAttr(0)}},
		Infer:    inferMod,
		Eval: func(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
			fmod, err := modMode(op)
			if err != nil {
				return nil, err
			}
			if err := checkArgs(op, args); err != nil {
				return nil, err
			}
			dt := args[0].Type.Elem
			return evalBinary(op, args, func(a, b float64) float64 { return Mod(a, b, fmod, dt) })
		},
		Pretty: true,
	}, Conversions{Legalize: legalizeMod, ONNX: "Mod"})
	register(&graphir.OpDef{
		Name:     CastOp,
		Summary:  "element type conversion to the written result type, same shape (ONNX Cast; float → int truncates toward zero, → i1 is x != 0)",
		Operands: graphir.Exactly(1),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure | graphir.Elementwise,
		Symbolic: true,
		Verify:   verifyCast,
		Eval:     evalCast,
		Pretty:   true,
	}, Conversions{Legalize: legalizeCast, Symbolic: true})
}

// Mod is ONNX Mod of a and b of element type dt: with fmod the remainder
// of truncated division (C fmod: the sign of a; exact for floats, where
// mod(x, 0) is NaN), otherwise of floored division (Python's %: the sign
// of b; integers only). An integer b = 0 gives a in both modes (as
// hlo.remainder); MinInt mod -1 is 0.
func Mod(a, b float64, fmod bool, dt graphir.DType) float64 {
	if dt.IsFloat() {
		return math.Mod(a, b)
	}
	if b == 0 {
		return a
	}
	x, y := int64(a), int64(b)
	r := x % y
	if !fmod && r != 0 && (r < 0) != (y < 0) {
		r += y
	}
	return float64(r)
}

// modMode reads graph.mod's fmod attribute: 0 or 1.
func modMode(op *graphir.Op) (bool, error) {
	v, err := op.Int("fmod")
	if err != nil {
		return false, err
	}
	if v != 0 && v != 1 {
		return false, op.Errorf("attribute 'fmod' must be 0 or 1, got %d", v)
	}
	return v == 1, nil
}

// inferMod: broadcast operands of one integer (signed or unsigned) or
// float element type; floats need fmod = 1 (ONNX: fmod = 0 is for
// integers). On unsigned types both modes are the plain remainder.
func inferMod(op *graphir.Op) ([]graphir.Type, error) {
	tys, err := inferBinary(op)
	if err != nil {
		return nil, err
	}
	t := graphir.AsTensor(tys[0])
	if err := checkElem(op, t, signedElem); err != nil {
		return nil, err
	}
	fmod, err := modMode(op)
	if err != nil {
		return nil, err
	}
	if t.Elem.IsFloat() && !fmod {
		return nil, op.Errorf("floating-point operands need fmod = 1 (fmod = 0 is integer modulo), got %s", t)
	}
	return tys, nil
}

// legalizeMod: graph.mod → hlo.remainder of the broadcast operands (the
// dividend's sign; on unsigned types that is all); with fmod = 0 on signed
// types, r = remainder(a, b) is moved to the
// divisor's sign: select(r ≠ 0 and (r < 0) ≠ (b < 0), r + b, r). b = 0
// leaves r = a either way.
func legalizeMod(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	fmod, err := modMode(op)
	if err != nil {
		return nil, err
	}
	return broadcastThen(func(b *builder, xs []*graphir.Value) (*graphir.Value, error) {
		c := &chain{b: b, t: graphir.AsTensor(xs[0].Type)}
		r := c.op(hlo.RemainderOp, xs[0], xs[1])
		if fmod || c.t.Elem.IsUnsigned() {
			return r, c.err // unsigned: no signs to fix
		}
		zero := c.splat(0)
		signsDiffer := c.cmp("NE", c.cmp("LT", r, zero), c.cmp("LT", xs[1], zero))
		fix := c.op(hlo.AndOp, c.cmp("NE", r, zero), signsDiffer)
		return c.op(hlo.SelectOp, fix, c.op(hlo.AddOp, r, xs[1]), r), c.err
	})(op, b)
}

// unaryFn adapts a float64 function to a unaryOp's reference semantics.
func unaryFn(f func(float64) float64) func(float64, []float64) float64 {
	return func(x float64, _ []float64) float64 { return f(x) }
}

// castResult returns the operand and result types of a cast with equal shapes.
func castResult(op *graphir.Op) (*graphir.TensorType, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	if len(op.Results) != 1 {
		return nil, op.Errorf("expects one result, got %d", len(op.Results))
	}
	rt := graphir.AsTensor(op.Results[0].Type)
	if rt == nil {
		return nil, op.Errorf("result must be a tensor, got %s", op.Results[0].Type)
	}
	if !ts[0].WithElem(rt.Elem).Equal(rt) {
		return nil, op.Errorf("result shape must equal the operand shape: operand %s, result %s", ts[0], rt)
	}
	return rt, nil
}

func verifyCast(op *graphir.Op) error {
	_, err := castResult(op)
	return err
}

func evalCast(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	if err := checkArgs(op, args); err != nil {
		return nil, err
	}
	rt, err := castResult(op)
	if err != nil {
		return nil, err
	}
	out := graphir.NewZeroTensor(rt)
	for i, v := range args[0].Data {
		if rt.Elem.IsInt() && rt.Elem != graphir.I1 {
			v = math.Trunc(v)
		}
		out.Data[i] = v
	}
	return []*graphir.Tensor{out.Round()}, nil
}

// legalizeReciprocal: graph.reciprocal(x) → hlo.divide(splat 1, x).
func legalizeReciprocal(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x := op.Operand(0)
	c := &chain{b: b, t: graphir.AsTensor(x.Type)}
	return c.done(c.op(hlo.DivideOp, c.splat(1), x))
}

// legalizeCast: graph.cast(x) → hlo.convert(x) to the written result type
// (nothing when the types are equal).
func legalizeCast(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x := op.Operand(0)
	rt, err := castResult(op)
	if err != nil {
		return nil, err
	}
	if x.Type.Equal(rt) {
		return []*graphir.Value{x}, nil
	}
	r, err := b.insert(hlo.Convert(x, rt.Elem, op.Loc))
	return []*graphir.Value{r}, err
}
