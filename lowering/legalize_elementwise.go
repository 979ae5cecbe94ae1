package lowering

import (
	"math"

	"github.com/tessera-ml/tessera/graphir"
)

var negInf = math.Inf(-1)

// Elementwise graph ops.
//
//	graph.add/sub/mul/div(a, b) → hlo.broadcast_in_dim of each operand whose
//	    shape differs from the result (NumPy broadcasting: right-aligned,
//	    rank extension and size-1 expansion) + hlo.add/subtract/multiply/divide
//	graph.relu(x)    → hlo.maximum(x, hlo.constant splat 0)
//	graph.sigmoid(x) → hlo.logistic(x)
//	graph.tanh(x)    → hlo.tanh(x)
//	graph.constant   → hlo.constant (same dense value)
func init() {
	for graphName, hloName := range map[string]string{
		"graph.add": "hlo.add",
		"graph.sub": "hlo.subtract",
		"graph.mul": "hlo.multiply",
		"graph.div": "hlo.divide",
	} {
		registerLegalization(graphName, legalizeBroadcastBinary(hloName))
	}
	registerLegalization("graph.sigmoid", legalizeUnary("hlo.logistic"))
	registerLegalization("graph.tanh", legalizeUnary("hlo.tanh"))
	registerLegalization("graph.relu", legalizeRelu)
	registerLegalization("graph.constant", legalizeConstant)
}

// legalizeBroadcastBinary lowers a NumPy-broadcasting binary graph op to
// the hlo op name after broadcasting both operands to the result shape.
func legalizeBroadcastBinary(name string) legalizeFn {
	return func(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
		rt, err := b.resultTensor()
		if err != nil {
			return nil, err
		}
		if op.NumOperands() != 2 {
			return nil, op.Errorf("expects 2 operands, got %d", op.NumOperands())
		}
		var xs [2]*graphir.Value
		for i := range xs {
			t, err := b.tensorOf(op.Operand(i), "operand")
			if err != nil {
				return nil, err
			}
			if t.Elem != rt.Elem {
				return nil, op.Errorf("operand #%d has element type %s, result has %s", i, t.Elem, rt.Elem)
			}
			if xs[i], err = b.broadcastTo(op.Operand(i), rt.Shape); err != nil {
				return nil, err
			}
		}
		r, err := b.binary(name, xs[0], xs[1])
		if err != nil {
			return nil, err
		}
		return []*graphir.Value{r}, nil
	}
}

func legalizeUnary(name string) legalizeFn {
	return func(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
		if op.NumOperands() != 1 {
			return nil, op.Errorf("expects 1 operand, got %d", op.NumOperands())
		}
		if _, err := b.tensorOf(op.Operand(0), "operand"); err != nil {
			return nil, err
		}
		r, err := b.unary(name, op.Operand(0))
		if err != nil {
			return nil, err
		}
		return []*graphir.Value{r}, nil
	}
}

func legalizeRelu(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	if op.NumOperands() != 1 {
		return nil, op.Errorf("expects 1 operand, got %d", op.NumOperands())
	}
	t, err := b.tensorOf(op.Operand(0), "operand")
	if err != nil {
		return nil, err
	}
	zero, err := b.splat(t, 0)
	if err != nil {
		return nil, err
	}
	r, err := b.binary("hlo.maximum", op.Operand(0), zero)
	if err != nil {
		return nil, err
	}
	return []*graphir.Value{r}, nil
}

func legalizeConstant(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	d, ok := op.Attr("value").(*graphir.DenseElementsAttr)
	if !ok {
		return nil, op.Errorf("requires a dense 'value' attribute")
	}
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	if !d.Type.Equal(rt) {
		return nil, op.Errorf("value has type %s but the result is %s", d.Type, rt)
	}
	r, err := b.constant(d)
	if err != nil {
		return nil, err
	}
	return []*graphir.Value{r}, nil
}
