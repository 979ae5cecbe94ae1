package graph

import (
	"math"

	"github.com/tessera-ml/tessera/graphir"
)

// Elementwise math ops (ONNX opset 13+ semantics):
//
//	graph.exp, graph.log, graph.sqrt, graph.erf, graph.reciprocal,
//	graph.floor, graph.ceil (x float) → same type            ONNX Exp, Log, Sqrt, Erf, Reciprocal, Floor, Ceil
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

// elemKind restricts the element type of a unary op's operand.
type elemKind int

const (
	anyElem    elemKind = 0 // every element type
	floatElem  elemKind = 1 // f16, bf16, f32, f64
	signedElem elemKind = 2 // floats and signed integers (not i1)
	boolElem   elemKind = 3 // i1 only
)

// checkElem reports a diagnostic when t's element type is not of kind k.
func checkElem(op *graphir.Op, t *graphir.TensorType, k elemKind) error {
	switch k {
	case floatElem:
		return requireFloat(op, t)
	case signedElem:
		if t.Elem == graphir.I1 {
			return op.Errorf("requires a signed integer or floating-point element type, got %s", t)
		}
	case boolElem:
		if t.Elem != graphir.I1 {
			return op.Errorf("requires element type i1, got %s", t)
		}
	}
	return nil
}

// unaryOp describes an elementwise op of one operand whose result has the
// operand's type; fn may read the op's attributes through params.
type unaryOp struct {
	name, summary string
	kind          elemKind
	attrs         []graphir.AttrSpec
	// params reads and checks the attributes (nil: none).
	params func(op *graphir.Op) ([]float64, error)
	fn     func(x float64, p []float64) float64
}

// registerUnary registers the elementwise unary ops us.
func registerUnary(us []unaryOp) {
	for _, u := range us {
		u := u
		graphir.RegisterOp(&graphir.OpDef{
			Name:     u.name,
			Summary:  u.summary,
			Operands: graphir.Exactly(1),
			Results:  graphir.Exactly(1),
			Traits:   graphir.Pure | graphir.Elementwise | graphir.SameOperandsAndResultType,
			Attrs:    u.attrs,
			Infer: func(op *graphir.Op) ([]graphir.Type, error) {
				ts, err := operandTensors(op)
				if err != nil {
					return nil, err
				}
				if err := checkElem(op, ts[0], u.kind); err != nil {
					return nil, err
				}
				if u.params != nil {
					if _, err := u.params(op); err != nil {
						return nil, err
					}
				}
				return one(ts[0]), nil
			},
			Eval: func(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
				out, err := evalPrologue(op, args)
				if err != nil {
					return nil, err
				}
				var p []float64
				if u.params != nil {
					if p, err = u.params(op); err != nil {
						return nil, err
					}
				}
				for i, v := range args[0].Data {
					out.Data[i] = u.fn(v, p)
				}
				return []*graphir.Tensor{out.Round()}, nil
			},
			Pretty: true,
		})
	}
}

// binaryOp describes an elementwise op of two NumPy-broadcast operands of
// one element type; the result has the broadcast shape and that type.
type binaryOp struct {
	name, summary string
	kind          elemKind
	traits        graphir.Trait
	fn            func(a, b float64) float64
}

func registerBinary(bs []binaryOp) {
	for _, b := range bs {
		b := b
		graphir.RegisterOp(&graphir.OpDef{
			Name:     b.name,
			Summary:  b.summary,
			Operands: graphir.Exactly(2),
			Results:  graphir.Exactly(1),
			Traits:   graphir.Pure | graphir.Elementwise | b.traits,
			Infer: func(op *graphir.Op) ([]graphir.Type, error) {
				tys, err := inferBinary(op)
				if err != nil {
					return nil, err
				}
				if err := checkElem(op, graphir.AsTensor(tys[0]), b.kind); err != nil {
					return nil, err
				}
				return tys, nil
			},
			Eval: func(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
				return evalBinary(op, args, b.fn)
			},
			Pretty: true,
		})
	}
}

// Sign is ONNX Sign: -1, 0 or 1; NaN stays NaN and ±0 gives 0 of that sign.
func Sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return x
}

// Pow is ONNX Pow (NumPy power) in float64: a negative base with an
// integral exponent is real ((-2)^3 = -8), with a fractional one NaN.
func Pow(a, b float64) float64 { return math.Pow(a, b) }

func init() {
	registerUnary([]unaryOp{
		{name: ExpOp, summary: "e^x (ONNX Exp); float element types", kind: floatElem, fn: func(x float64, _ []float64) float64 { return math.Exp(x) }},
		{name: LogOp, summary: "natural logarithm (ONNX Log; log 0 = -inf, log of a negative = NaN); float element types", kind: floatElem, fn: func(x float64, _ []float64) float64 { return math.Log(x) }},
		{name: SqrtOp, summary: "square root (ONNX Sqrt; negative → NaN); float element types", kind: floatElem, fn: func(x float64, _ []float64) float64 { return math.Sqrt(x) }},
		{name: ErfOp, summary: "Gauss error function (ONNX Erf); float element types", kind: floatElem, fn: func(x float64, _ []float64) float64 { return math.Erf(x) }},
		{name: ReciprocalOp, summary: "1 / x (ONNX Reciprocal; 1/±0 = ±inf); float element types", kind: floatElem, fn: func(x float64, _ []float64) float64 { return 1 / x }},
		{name: FloorOp, summary: "largest integer ≤ x (ONNX Floor; ±0, ±inf, NaN unchanged); float element types", kind: floatElem, fn: func(x float64, _ []float64) float64 { return math.Floor(x) }},
		{name: CeilOp, summary: "smallest integer ≥ x (ONNX Ceil; ±0, ±inf, NaN unchanged); float element types", kind: floatElem, fn: func(x float64, _ []float64) float64 { return math.Ceil(x) }},
		{name: NegOp, summary: "-x (ONNX Neg); signed integer or float element types", kind: signedElem, fn: func(x float64, _ []float64) float64 { return -x }},
		{name: AbsOp, summary: "|x| (ONNX Abs); signed integer or float element types", kind: signedElem, fn: func(x float64, _ []float64) float64 { return math.Abs(x) }},
		{name: SignOp, summary: "-1, 0 or 1 by the sign of x (ONNX Sign; NaN → NaN); signed integer or float element types", kind: signedElem, fn: func(x float64, _ []float64) float64 { return Sign(x) }},
	})
	registerBinary([]binaryOp{
		{PowOp, "a ** b with NumPy broadcasting (ONNX Pow; same element type, not i1)", signedElem, 0, Pow},
		{MaxOp, "max(a, b) with NumPy broadcasting (ONNX Max of two operands; NaN propagates)", anyElem, graphir.Commutative, math.Max},
		{MinOp, "min(a, b) with NumPy broadcasting (ONNX Min of two operands; NaN propagates)", anyElem, graphir.Commutative, math.Min},
	})
	graphir.RegisterOp(&graphir.OpDef{
		Name:     CastOp,
		Summary:  "element type conversion to the written result type, same shape (ONNX Cast; float → int truncates toward zero, → i1 is x != 0)",
		Operands: graphir.Exactly(1),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure | graphir.Elementwise,
		Verify:   verifyCast,
		Eval:     evalCast,
		Pretty:   true,
	})
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
