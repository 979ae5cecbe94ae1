package graph

import (
	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// Comparison, logical and selection ops (ONNX semantics, NumPy broadcasting):
//
//	graph.equal, graph.less, graph.greater, graph.less_equal,
//	graph.greater_equal (a, b) → i1 of the broadcast shape   ONNX Equal, Less, Greater, LessOrEqual, GreaterOrEqual
//	    (a and b of one element type; every comparison with NaN is false)
//	graph.not(x) (i1) → i1                                   ONNX Not
//	graph.and, graph.or (a, b) (i1) → i1 of the broadcast shape ONNX And, Or
//	graph.where(cond, a, b) → broadcast of all three shapes, a's element type
//	    (cond i1; a and b of one element type)                ONNX Where
//
// Legalization broadcasts every operand to the result shape
// (hlo.broadcast_in_dim, NumPy rules), then: the comparisons → hlo.compare
// {comparison_direction = "EQ"/"LT"/"GT"/"LE"/"GE"}; and, or, not →
// hlo.and, hlo.or, hlo.not; where → hlo.select.

// Comparison and logical op names.
const (
	EqualOp        = "graph.equal"
	LessOp         = "graph.less"
	GreaterOp      = "graph.greater"
	LessEqualOp    = "graph.less_equal"
	GreaterEqualOp = "graph.greater_equal"
	NotOp          = "graph.not"
	AndOp          = "graph.and"
	OrOp           = "graph.or"
	WhereOp        = "graph.where"
)

func boolOf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func init() {
	cmp := func(name, summary, dir, onnx string, comm bool, fn func(a, b float64) bool) binaryOp {
		var traits graphir.Trait
		if comm {
			traits = graphir.Commutative
		}
		return binaryOp{name: name, summary: summary, traits: traits, boolResult: true,
			fn: func(a, b float64) float64 { return boolOf(fn(a, b)) }, legalize: legalizeCompare(dir), onnx: onnx}
	}
	registerBinary([]binaryOp{
		cmp(EqualOp, "a == b with NumPy broadcasting, i1 result (ONNX Equal)", "EQ", "Equal", true, func(a, b float64) bool { return a == b }),
		cmp(LessOp, "a < b with NumPy broadcasting, i1 result (ONNX Less)", "LT", "Less", false, func(a, b float64) bool { return a < b }),
		cmp(GreaterOp, "a > b with NumPy broadcasting, i1 result (ONNX Greater)", "GT", "Greater", false, func(a, b float64) bool { return a > b }),
		cmp(LessEqualOp, "a <= b with NumPy broadcasting, i1 result (ONNX LessOrEqual)", "LE", "LessOrEqual", false, func(a, b float64) bool { return a <= b }),
		cmp(GreaterEqualOp, "a >= b with NumPy broadcasting, i1 result (ONNX GreaterOrEqual)", "GE", "GreaterOrEqual", false, func(a, b float64) bool { return a >= b }),
		{name: AndOp, summary: "logical a && b with NumPy broadcasting on i1 (ONNX And)", kind: boolElem, traits: graphir.Commutative,
			fn: func(a, b float64) float64 { return boolOf(a != 0 && b != 0) }, hlo: hlo.AndOp, onnx: "And"},
		{name: OrOp, summary: "logical a || b with NumPy broadcasting on i1 (ONNX Or)", kind: boolElem, traits: graphir.Commutative,
			fn: func(a, b float64) float64 { return boolOf(a != 0 || b != 0) }, hlo: hlo.OrOp, onnx: "Or"},
	})
	registerUnary([]unaryOp{
		{name: NotOp, summary: "logical negation of an i1 tensor (ONNX Not)", kind: boolElem,
			fn: func(x float64, _ []float64) float64 { return boolOf(x == 0) }, hlo: hlo.NotOp, onnx: "Not"},
	})
	register(&graphir.OpDef{
		Name:     WhereOp,
		Summary:  "cond ? a : b with NumPy broadcasting of all three operands; cond is i1 (ONNX Where)",
		Operands: graphir.Exactly(3),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure | graphir.Elementwise,
		Infer:    inferWhere,
		Eval:     evalWhere,
		Pretty:   true,
	}, Conversions{Legalize: legalizeBroadcast(hlo.SelectOp), ONNX: "Where"})
}

// legalizeCompare: both operands broadcast to the result shape, then
// hlo.compare {comparison_direction = dir}.
func legalizeCompare(dir string) legalizeFn {
	return broadcastThen(func(b *builder, xs []*graphir.Value) (*graphir.Value, error) { return b.compare(dir, xs[0], xs[1]) })
}

func inferWhere(op *graphir.Op) ([]graphir.Type, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	if ts[0].Elem != graphir.I1 {
		return nil, op.Errorf("condition must have element type i1, got %s", ts[0])
	}
	if ts[1].Elem != ts[2].Elem {
		return nil, op.Errorf("operand #2 has element type %s, but operand #1 has %s", ts[2].Elem, ts[1].Elem)
	}
	shape, err := BroadcastShapes(ts[0].Shape, ts[1].Shape)
	if err == nil {
		shape, err = BroadcastShapes(shape, ts[2].Shape)
	}
	if err != nil {
		return nil, op.Errorf("operand %s", err)
	}
	return one(graphir.NewTensor(ts[1].Elem, shape...)), nil
}

func evalWhere(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	ic := broadcastIndex(args[0].Shape(), out.Shape())
	ia := broadcastIndex(args[1].Shape(), out.Shape())
	ib := broadcastIndex(args[2].Shape(), out.Shape())
	for i := range out.Data {
		if args[0].Data[ic[i]] != 0 {
			out.Data[i] = args[1].Data[ia[i]]
		} else {
			out.Data[i] = args[2].Data[ib[i]]
		}
	}
	return []*graphir.Tensor{out}, nil
}
