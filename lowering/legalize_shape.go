package lowering

import "github.com/tessera-ml/tessera/graphir"

// Shape ops.
//
//	graph.flatten(x) {axis}  → hlo.reshape to the 2-D result type
//	graph.reshape(x) {shape} → hlo.reshape to the result type (the -1 and 0
//	                           entries are already resolved in it)
//	graph.transpose(x) {perm} → hlo.transpose {permutation = perm}
//	                           (reversed dims when perm is absent)
//	graph.concat(xs...) {axis} → hlo.concatenate {dimension = axis},
//	                           negative axis normalized against the rank
func init() {
	registerLegalization("graph.flatten", legalizeReshapeLike)
	registerLegalization("graph.reshape", legalizeReshapeLike)
	registerLegalization("graph.transpose", legalizeTranspose)
	registerLegalization("graph.concat", legalizeConcat)
}

func legalizeReshapeLike(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	if op.NumOperands() != 1 {
		return nil, op.Errorf("expects 1 operand, got %d", op.NumOperands())
	}
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	xt, err := b.tensorOf(op.Operand(0), "input")
	if err != nil {
		return nil, err
	}
	if xt.NumElements() != rt.NumElements() || xt.Elem != rt.Elem {
		return nil, op.Errorf("cannot reshape %s to %s", xt, rt)
	}
	if xt.Equal(rt) {
		return []*graphir.Value{op.Operand(0)}, nil
	}
	r, err := b.create("hlo.reshape", []*graphir.Value{op.Operand(0)}, rt, nil)
	if err != nil {
		return nil, err
	}
	return []*graphir.Value{r}, nil
}

func legalizeTranspose(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	if op.NumOperands() != 1 {
		return nil, op.Errorf("expects 1 operand, got %d", op.NumOperands())
	}
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	xt, err := b.tensorOf(op.Operand(0), "input")
	if err != nil {
		return nil, err
	}
	rev := make([]int64, xt.Rank())
	for i := range rev {
		rev[i] = int64(xt.Rank() - 1 - i)
	}
	perm, err := intsAttr(op, "perm", xt.Rank(), rev)
	if err != nil {
		return nil, err
	}
	seen := make([]bool, xt.Rank())
	shape := make([]int64, xt.Rank())
	for i, p := range perm {
		if p < 0 || int(p) >= xt.Rank() || seen[p] {
			return nil, op.Errorf("perm %v is not a permutation of 0..%d", perm, xt.Rank()-1)
		}
		seen[p] = true
		shape[i] = xt.Shape[p]
	}
	if !shapeEqual(shape, rt.Shape) || xt.Elem != rt.Elem {
		return nil, op.Errorf("perm %v of %s gives %s, not %s", perm, xt, graphir.NewTensor(xt.Elem, shape...), rt)
	}
	r, err := b.create("hlo.transpose", []*graphir.Value{op.Operand(0)}, rt,
		graphir.DictAttr{}.Set("permutation", graphir.I64Array(perm...)))
	if err != nil {
		return nil, err
	}
	return []*graphir.Value{r}, nil
}

func legalizeConcat(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	if op.NumOperands() < 1 {
		return nil, op.Errorf("expects at least 1 operand")
	}
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	if _, ok := op.Attr("axis").(*graphir.IntegerAttr); !ok {
		return nil, op.Errorf("requires an integer attribute 'axis'")
	}
	axis, err := normalizeAxis(op, op.IntAttrOr("axis", 0), rt.Rank())
	if err != nil {
		return nil, err
	}
	for i, v := range op.Operands() {
		t, err := b.tensorOf(v, "operand")
		if err != nil {
			return nil, err
		}
		if t.Rank() != rt.Rank() || t.Elem != rt.Elem {
			return nil, op.Errorf("operand #%d %s does not match the result %s", i, t, rt)
		}
	}
	r, err := b.create("hlo.concatenate", op.Operands(), rt,
		graphir.DictAttr{}.Set("dimension", graphir.IntAttr(axis)))
	if err != nil {
		return nil, err
	}
	return []*graphir.Value{r}, nil
}
