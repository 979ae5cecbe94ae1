package lowering

import (
	"github.com/tessera-ml/tessera/graphir"
)

// Comparison, logical and selection graph ops (dialects/graph/compare.go).
// Every operand is first broadcast to the result shape (hlo.broadcast_in_dim,
// NumPy rules), then:
//
//	graph.equal/less/greater/less_equal/greater_equal(a, b)
//	    → hlo.compare {comparison_direction = "EQ"/"LT"/"GT"/"LE"/"GE"}
//	graph.and/or(a, b) → hlo.and/or
//	graph.not(x)       → hlo.not
//	graph.where(c, a, b) → hlo.select(c, a, b)
func init() {
	for graphName, dir := range map[string]string{
		"graph.equal":         "EQ",
		"graph.less":          "LT",
		"graph.greater":       "GT",
		"graph.less_equal":    "LE",
		"graph.greater_equal": "GE",
	} {
		registerLegalization(graphName, legalizeCompare(dir))
	}
	registerLegalization("graph.and", legalizeBroadcastBinary("hlo.and"))
	registerLegalization("graph.or", legalizeBroadcastBinary("hlo.or"))
	registerLegalization("graph.not", legalizeUnary("hlo.not"))
	registerLegalization("graph.where", legalizeWhere)
}

// broadcastOperands broadcasts every operand of op to shape.
func broadcastOperands(op *graphir.Op, b *builder, n int, shape []int64) ([]*graphir.Value, []*graphir.TensorType, error) {
	if op.NumOperands() != n {
		return nil, nil, op.Errorf("expects %d operands, got %d", n, op.NumOperands())
	}
	xs := make([]*graphir.Value, n)
	ts := make([]*graphir.TensorType, n)
	for i := range xs {
		t, err := b.tensorOf(op.Operand(i), "operand")
		if err != nil {
			return nil, nil, err
		}
		ts[i] = t
		if xs[i], err = b.broadcastTo(op.Operand(i), shape); err != nil {
			return nil, nil, err
		}
	}
	return xs, ts, nil
}

// compare creates hlo.compare(x, y) {comparison_direction = dir}.
func (b *builder) compare(dir string, x, y *graphir.Value) (*graphir.Value, error) {
	t, err := b.tensorOf(x, "compare operand")
	if err != nil {
		return nil, err
	}
	attrs := graphir.DictAttr{}.Set("comparison_direction", graphir.StringAttr(dir))
	return b.create("hlo.compare", []*graphir.Value{x, y}, graphir.NewTensor(graphir.I1, t.Shape...), attrs)
}

// selectOp creates hlo.select(pred, t, f).
func (b *builder) selectOp(pred, t, f *graphir.Value) (*graphir.Value, error) {
	return b.create("hlo.select", []*graphir.Value{pred, t, f}, t.Type, nil)
}

func legalizeCompare(dir string) legalizeFn {
	return func(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
		rt, err := b.resultTensor()
		if err != nil {
			return nil, err
		}
		if rt.Elem != graphir.I1 {
			return nil, op.Errorf("result must have element type i1, got %s", rt)
		}
		xs, ts, err := broadcastOperands(op, b, 2, rt.Shape)
		if err != nil {
			return nil, err
		}
		if ts[0].Elem != ts[1].Elem {
			return nil, op.Errorf("operand #1 has element type %s, operand #0 has %s", ts[1].Elem, ts[0].Elem)
		}
		r, err := b.compare(dir, xs[0], xs[1])
		if err != nil {
			return nil, err
		}
		return []*graphir.Value{r}, nil
	}
}

func legalizeWhere(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	xs, ts, err := broadcastOperands(op, b, 3, rt.Shape)
	if err != nil {
		return nil, err
	}
	if ts[0].Elem != graphir.I1 || ts[1].Elem != rt.Elem || ts[2].Elem != rt.Elem {
		return nil, op.Errorf("expects an i1 condition and values of the result element type %s", rt.Elem)
	}
	r, err := b.selectOp(xs[0], xs[1], xs[2])
	if err != nil {
		return nil, err
	}
	return []*graphir.Value{r}, nil
}
