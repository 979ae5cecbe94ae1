package hlo

import (
	"math"

	g "github.com/tessera-ml/tessera/graphir"
)

// Elementwise ops: binary arithmetic (StableHLO §add, §subtract, §multiply,
// §divide, §maximum, §minimum, §power), unary math (§negate, §exponential,
// §log, §tanh, §logistic, §rsqrt, §sqrt, §abs), §compare, §select and
// §convert. No implicit broadcasting: binary operands have identical types.

// binaryDef describes one elementwise binary op.
type binaryDef struct {
	name    string
	summary string
	comm    bool
	// boolOK allows i1 operands (add = or, multiply = and, max = or, min = and).
	boolOK bool
	fn     func(a, b float64, dt g.DType) float64
}

var binaryOps = []binaryDef{
	{AddOp, "elementwise a + b (logical or on i1)", true, true, func(a, b float64, _ g.DType) float64 { return a + b }},
	{SubtractOp, "elementwise a - b", false, false, func(a, b float64, _ g.DType) float64 { return a - b }},
	{MultiplyOp, "elementwise a * b (logical and on i1)", true, true, func(a, b float64, _ g.DType) float64 { return a * b }},
	{DivideOp, "elementwise a / b; integers truncate toward zero, x / 0 = -1 as XLA", false, false, divide},
	{MaximumOp, "elementwise max(a, b), NaN propagates", true, true, fmax},
	{MinimumOp, "elementwise min(a, b), NaN propagates", true, true, fmin},
	{PowerOp, "elementwise a ** b", false, false, func(a, b float64, _ g.DType) float64 { return math.Pow(a, b) }},
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

func fmax(a, b float64, _ g.DType) float64 { return math.Max(a, b) }
func fmin(a, b float64, _ g.DType) float64 { return math.Min(a, b) }

// unaryDef describes one elementwise unary op.
type unaryDef struct {
	name      string
	summary   string
	floatOnly bool
	fn        func(x float64) float64
}

var unaryOps = []unaryDef{
	{NegateOp, "elementwise -x", false, func(x float64) float64 { return -x }},
	{ExponentialOp, "elementwise e^x", true, math.Exp},
	{LogOp, "elementwise natural logarithm", true, math.Log},
	{TanhOp, "elementwise hyperbolic tangent", true, math.Tanh},
	{LogisticOp, "elementwise 1 / (1 + e^-x)", true, func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }},
	{RsqrtOp, "elementwise 1 / sqrt(x)", true, func(x float64) float64 { return 1 / math.Sqrt(x) }},
	{SqrtOp, "elementwise square root", true, math.Sqrt},
	{AbsOp, "elementwise |x|", false, math.Abs},
}

// ComparisonDirections are the values of hlo.compare's comparison_direction.
var ComparisonDirections = []string{"EQ", "NE", "LT", "LE", "GT", "GE"}

func init() {
	for _, d := range binaryOps {
		d := d
		traits := g.Pure | g.Elementwise | g.SameOperandsAndResultType
		if d.comm {
			traits |= g.Commutative
		}
		g.RegisterOp(&g.OpDef{
			Name: d.name, Summary: d.summary,
			Operands: g.Exactly(2), Results: g.Exactly(1), Traits: traits, Pretty: true,
			Infer: func(op *g.Op) ([]g.Type, error) { return inferBinary(op, d.boolOK) },
			Eval: func(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
				if err := checkArgs(op, args, 2); err != nil {
					return nil, err
				}
				rt, err := evalResultType(op)
				if err != nil {
					return nil, err
				}
				a, b := args[0], args[1]
				if len(a.Data) != len(b.Data) || int64(len(a.Data)) != rt.NumElements() {
					return nil, op.Errorf("evaluator got inputs of %d and %d elements for a result of %d", len(a.Data), len(b.Data), rt.NumElements())
				}
				out := g.NewZeroTensor(rt)
				for i := range out.Data {
					out.Data[i] = d.fn(a.Data[i], b.Data[i], rt.Elem)
				}
				return []*g.Tensor{out.Round()}, nil
			},
		})
	}
	for _, d := range unaryOps {
		d := d
		g.RegisterOp(&g.OpDef{
			Name: d.name, Summary: d.summary,
			Operands: g.Exactly(1), Results: g.Exactly(1),
			Traits: g.Pure | g.Elementwise | g.SameOperandsAndResultType, Pretty: true,
			Infer: func(op *g.Op) ([]g.Type, error) {
				ts, err := tensorOperands(op)
				if err != nil {
					return nil, err
				}
				if e := ts[0].Elem; e == g.I1 || (d.floatOnly && !e.IsFloat()) {
					want := "a signed integer or floating-point"
					if d.floatOnly {
						want = "a floating-point"
					}
					return nil, op.Errorf("operand must have %s element type, got %s", want, ts[0])
				}
				return []g.Type{ts[0]}, nil
			},
			Eval: func(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
				if err := checkArgs(op, args, 1); err != nil {
					return nil, err
				}
				rt, err := evalResultType(op)
				if err != nil {
					return nil, err
				}
				if int64(len(args[0].Data)) != rt.NumElements() {
					return nil, op.Errorf("evaluator got %d elements for a result of %d", len(args[0].Data), rt.NumElements())
				}
				out := g.NewZeroTensor(rt)
				for i, x := range args[0].Data {
					out.Data[i] = d.fn(x)
				}
				return []*g.Tensor{out.Round()}, nil
			},
		})
	}
	g.RegisterOp(&g.OpDef{
		Name:     CompareOp,
		Summary:  "elementwise comparison of two same-typed tensors, giving an i1 tensor",
		Operands: g.Exactly(2), Results: g.Exactly(1), Traits: g.Pure | g.Elementwise, Pretty: true,
		Attrs: []g.AttrSpec{{Name: "comparison_direction", Kind: g.KindEnum, Required: true, Enum: ComparisonDirections}},
		Infer: inferCompare,
		Eval:  evalCompare,
	})
	g.RegisterOp(&g.OpDef{
		Name:     SelectOp,
		Summary:  "elementwise pred ? on_true : on_false; pred is i1 of the same shape or rank 0",
		Operands: g.Exactly(3), Results: g.Exactly(1), Traits: g.Pure | g.Elementwise, Pretty: true,
		Infer: inferSelect,
		Eval:  evalSelect,
	})
	g.RegisterOp(&g.OpDef{
		Name:     ConvertOp,
		Summary:  "elementwise element type conversion; the result type is written explicitly",
		Operands: g.Exactly(1), Results: g.Exactly(1), Traits: g.Pure | g.Elementwise, Pretty: true,
		Verify: verifyConvert,
		Eval: func(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
			if err := checkArgs(op, args, 1); err != nil {
				return nil, err
			}
			rt, err := evalResultType(op)
			if err != nil {
				return nil, err
			}
			if int64(len(args[0].Data)) != rt.NumElements() {
				return nil, op.Errorf("evaluator got %d elements for a result of %d", len(args[0].Data), rt.NumElements())
			}
			out := &g.Tensor{Type: rt, Data: append([]float64(nil), args[0].Data...)}
			return []*g.Tensor{out.Round()}, nil
		},
	})
}

func inferBinary(op *g.Op, boolOK bool) ([]g.Type, error) {
	ts, err := tensorOperands(op)
	if err != nil {
		return nil, err
	}
	if !ts[0].Equal(ts[1]) {
		return nil, op.Errorf("operands must have the same type (no implicit broadcasting), got %s and %s", ts[0], ts[1])
	}
	if ts[0].Elem == g.I1 && !boolOK {
		return nil, op.Errorf("does not accept i1 operands, got %s", ts[0])
	}
	return []g.Type{ts[0]}, nil
}

func inferCompare(op *g.Op) ([]g.Type, error) {
	ts, err := tensorOperands(op)
	if err != nil {
		return nil, err
	}
	if !ts[0].Equal(ts[1]) {
		return nil, op.Errorf("operands must have the same type, got %s and %s", ts[0], ts[1])
	}
	return []g.Type{g.NewTensor(g.I1, ts[0].Shape...)}, nil
}

func evalCompare(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
	if err := checkArgs(op, args, 2); err != nil {
		return nil, err
	}
	rt, err := evalResultType(op)
	if err != nil {
		return nil, err
	}
	dir := op.StringAttrOr("comparison_direction", "")
	var cmp func(a, b float64) bool
	switch dir {
	case "EQ":
		cmp = func(a, b float64) bool { return a == b }
	case "NE":
		cmp = func(a, b float64) bool { return a != b }
	case "LT":
		cmp = func(a, b float64) bool { return a < b }
	case "LE":
		cmp = func(a, b float64) bool { return a <= b }
	case "GT":
		cmp = func(a, b float64) bool { return a > b }
	case "GE":
		cmp = func(a, b float64) bool { return a >= b }
	default:
		return nil, op.Errorf("unknown comparison_direction %q", dir)
	}
	a, b := args[0], args[1]
	if len(a.Data) != len(b.Data) || int64(len(a.Data)) != rt.NumElements() {
		return nil, op.Errorf("evaluator got inputs of %d and %d elements for a result of %d", len(a.Data), len(b.Data), rt.NumElements())
	}
	out := g.NewZeroTensor(rt)
	for i := range out.Data {
		if cmp(a.Data[i], b.Data[i]) {
			out.Data[i] = 1
		}
	}
	return []*g.Tensor{out}, nil
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
	if pred.Rank() != 0 && !g.NewTensor(g.I1, t.Shape...).Equal(pred) {
		return nil, op.Errorf("predicate must be rank 0 or have the shape of on_true, got %s and %s", pred, t)
	}
	return []g.Type{t}, nil
}

func evalSelect(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
	if err := checkArgs(op, args, 3); err != nil {
		return nil, err
	}
	rt, err := evalResultType(op)
	if err != nil {
		return nil, err
	}
	p, t, f := args[0], args[1], args[2]
	n := rt.NumElements()
	if int64(len(t.Data)) != n || int64(len(f.Data)) != n || (p.Type.Rank() == 0 && len(p.Data) != 1) || (p.Type.Rank() != 0 && int64(len(p.Data)) != n) {
		return nil, op.Errorf("evaluator got inputs of mismatched sizes")
	}
	out := g.NewZeroTensor(rt)
	for i := range out.Data {
		pv := p.Data[0]
		if p.Type.Rank() != 0 {
			pv = p.Data[i]
		}
		if pv != 0 {
			out.Data[i] = t.Data[i]
		} else {
			out.Data[i] = f.Data[i]
		}
	}
	return []*g.Tensor{out}, nil
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
	if !g.NewTensor(rt.Elem, ts[0].Shape...).Equal(rt) {
		return op.Errorf("result shape must equal operand shape: operand %s, result %s", ts[0], rt)
	}
	return nil
}
