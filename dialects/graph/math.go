package graph

import (
	"math"

	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// Elementwise math ops (ONNX opset 13+ semantics):
//
//	graph.exp, graph.log, graph.sqrt, graph.erf, graph.atan, graph.reciprocal,
//	graph.floor, graph.ceil (x float) → same type            ONNX Exp, Log, Sqrt, Erf, Atan, Reciprocal, Floor, Ceil
//	graph.neg, graph.abs, graph.sign (x signed int or float)  ONNX Neg, Abs, Sign (sign(0) = 0, sign(NaN) = NaN)
//	graph.pow(a, b), graph.max(a, b), graph.min(a, b)         ONNX Pow, Max, Min (two operands, NumPy broadcasting,
//	    one element type; pow of a negative base with an integral exponent is real, otherwise NaN; max/min propagate NaN)
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
	SignOp       = "graph.sign"
	PowOp        = "graph.pow"
	MaxOp        = "graph.max"
	MinOp        = "graph.min"
	CastOp       = "graph.cast"
)

func init() {
	registerUnary([]unaryOp{
		{name: ExpOp, summary: "e^x (ONNX Exp); float element types", kind: floatElem, fn: func(x float64, _ []float64) float64 { return math.Exp(x) }, hlo: hlo.ExponentialOp, onnx: "Exp"},
		{name: LogOp, summary: "natural logarithm (ONNX Log; log 0 = -inf, log of a negative = NaN); float element types", kind: floatElem, fn: func(x float64, _ []float64) float64 { return math.Log(x) }, hlo: hlo.LogOp, onnx: "Log"},
		{name: SqrtOp, summary: "square root (ONNX Sqrt; negative → NaN); float element types", kind: floatElem, fn: func(x float64, _ []float64) float64 { return math.Sqrt(x) }, hlo: hlo.SqrtOp, onnx: "Sqrt"},
		{name: ErfOp, summary: "Gauss error function (ONNX Erf); float element types", kind: floatElem, fn: func(x float64, _ []float64) float64 { return math.Erf(x) }, hlo: hlo.ErfOp, onnx: "Erf"},
		{name: AtanOp, summary: "arctangent in radians, in [-π/2, π/2] (ONNX Atan); float element types", kind: floatElem, fn: func(x float64, _ []float64) float64 { return math.Atan(x) }, hlo: hlo.AtanOp, onnx: "Atan"},
		{name: ReciprocalOp, summary: "1 / x (ONNX Reciprocal; 1/±0 = ±inf); float element types", kind: floatElem, fn: func(x float64, _ []float64) float64 { return 1 / x }, legalize: legalizeReciprocal, onnx: "Reciprocal"},
		{name: FloorOp, summary: "largest integer ≤ x (ONNX Floor; ±0, ±inf, NaN unchanged); float element types", kind: floatElem, fn: func(x float64, _ []float64) float64 { return math.Floor(x) }, hlo: hlo.FloorOp, onnx: "Floor"},
		{name: CeilOp, summary: "smallest integer ≥ x (ONNX Ceil; ±0, ±inf, NaN unchanged); float element types", kind: floatElem, fn: func(x float64, _ []float64) float64 { return math.Ceil(x) }, hlo: hlo.CeilOp, onnx: "Ceil"},
		{name: NegOp, summary: "-x (ONNX Neg); signed integer or float element types", kind: signedElem, fn: func(x float64, _ []float64) float64 { return -x }, hlo: hlo.NegateOp, onnx: "Neg"},
		{name: AbsOp, summary: "|x| (ONNX Abs); signed integer or float element types", kind: signedElem, fn: func(x float64, _ []float64) float64 { return math.Abs(x) }, hlo: hlo.AbsOp, onnx: "Abs"},
		{name: SignOp, summary: "-1, 0 or 1 by the sign of x (ONNX Sign; NaN → NaN); signed integer or float element types", kind: signedElem, fn: func(x float64, _ []float64) float64 { return hlo.Sign(x) }, hlo: hlo.SignOp, onnx: "Sign"},
	})
	registerBinary([]binaryOp{
		{name: PowOp, summary: "a ** b with NumPy broadcasting (ONNX Pow; same element type, not i1)", kind: signedElem, fn: math.Pow, hlo: hlo.PowerOp},
		{name: MaxOp, summary: "max(a, b) with NumPy broadcasting (ONNX Max of two operands; NaN propagates)", traits: graphir.Commutative, fn: math.Max, hlo: hlo.MaximumOp},
		{name: MinOp, summary: "min(a, b) with NumPy broadcasting (ONNX Min of two operands; NaN propagates)", traits: graphir.Commutative, fn: math.Min, hlo: hlo.MinimumOp},
	})
	register(&graphir.OpDef{
		Name:     CastOp,
		Summary:  "element type conversion to the written result type, same shape (ONNX Cast; float → int truncates toward zero, → i1 is x != 0)",
		Operands: graphir.Exactly(1),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure | graphir.Elementwise,
		Verify:   verifyCast,
		Eval:     evalCast,
		Pretty:   true,
	}, Conversions{Legalize: legalizeCast})
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
	if !graphir.NewTensor(rt.Elem, ts[0].Shape...).Equal(rt) {
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
