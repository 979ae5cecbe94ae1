package lowering

import (
	"github.com/tessera-ml/tessera/graphir"
)

// Elementwise math graph ops (dialects/graph/math.go).
//
//	graph.exp/log/sqrt/erf/neg/abs/floor/ceil/sign(x) → hlo.exponential/log/sqrt/erf/
//	    negate/abs/floor/ceil/sign(x)
//	graph.reciprocal(x) → hlo.divide(hlo.constant splat 1, x)
//	graph.pow/max/min(a, b) → hlo.broadcast_in_dim of each operand whose shape
//	    differs from the result + hlo.power/maximum/minimum
//	graph.cast(x) → hlo.convert(x) to the written result type
func init() {
	for graphName, hloName := range map[string]string{
		"graph.exp":   "hlo.exponential",
		"graph.log":   "hlo.log",
		"graph.sqrt":  "hlo.sqrt",
		"graph.erf":   "hlo.erf",
		"graph.neg":   "hlo.negate",
		"graph.abs":   "hlo.abs",
		"graph.floor": "hlo.floor",
		"graph.ceil":  "hlo.ceil",
		"graph.sign":  "hlo.sign",
	} {
		registerLegalization(graphName, legalizeUnary(hloName))
	}
	for graphName, hloName := range map[string]string{
		"graph.pow": "hlo.power",
		"graph.max": "hlo.maximum",
		"graph.min": "hlo.minimum",
	} {
		registerLegalization(graphName, legalizeBroadcastBinary(hloName))
	}
	registerLegalization("graph.reciprocal", legalizeReciprocal)
	registerLegalization("graph.cast", legalizeCast)
}

// unaryOperand checks that op has one tensor operand and returns it.
func unaryOperand(op *graphir.Op, b *builder) (*graphir.Value, *graphir.TensorType, error) {
	if op.NumOperands() != 1 {
		return nil, nil, op.Errorf("expects 1 operand, got %d", op.NumOperands())
	}
	t, err := b.tensorOf(op.Operand(0), "operand")
	if err != nil {
		return nil, nil, err
	}
	return op.Operand(0), t, nil
}

func legalizeReciprocal(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, t, err := unaryOperand(op, b)
	if err != nil {
		return nil, err
	}
	one, err := b.splat(t, 1)
	if err != nil {
		return nil, err
	}
	r, err := b.binary("hlo.divide", one, x)
	if err != nil {
		return nil, err
	}
	return []*graphir.Value{r}, nil
}

func legalizeCast(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, t, err := unaryOperand(op, b)
	if err != nil {
		return nil, err
	}
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	if !graphir.NewTensor(rt.Elem, t.Shape...).Equal(rt) {
		return nil, op.Errorf("result shape must equal the operand shape: operand %s, result %s", t, rt)
	}
	if t.Equal(rt) {
		return []*graphir.Value{x}, nil
	}
	r, err := b.create("hlo.convert", []*graphir.Value{x}, rt, nil)
	if err != nil {
		return nil, err
	}
	return []*graphir.Value{r}, nil
}
