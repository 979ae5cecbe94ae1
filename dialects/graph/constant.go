package graph

import (
	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// ConstantOp is graph.constant: a tensor given by its `value` attribute.
const ConstantOp = "graph.constant"

func init() {
	register(&graphir.OpDef{
		Name:     ConstantOp,
		Summary:  "constant tensor: {value = dense<...> : tensor<...>} (ONNX Constant)",
		Operands: graphir.Exactly(0),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure | graphir.ConstantLike,
		Attrs:    []graphir.AttrSpec{{Name: "value", Kind: graphir.KindDense, Required: true}},
		Infer:    inferConstant,
		Verify:   verifyConstant,
		Eval:     evalConstant,
		Pretty:   true,
	}, Conversions{Legalize: legalizeConstant, Symbolic: true})
}

// legalizeConstant: graph.constant → hlo.constant with the same value.
func legalizeConstant(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	d, err := constantValue(op)
	if err != nil {
		return nil, err
	}
	r, err := b.insert(hlo.ConstantFromDense(d, op.Loc), nil)
	return []*graphir.Value{r}, err
}

func constantValue(op *graphir.Op) (*graphir.DenseElementsAttr, error) {
	d, ok := op.Attr("value").(*graphir.DenseElementsAttr)
	if !ok || d == nil || d.Type == nil {
		return nil, op.Errorf("requires a dense elements attribute 'value'")
	}
	return d, nil
}

// inferConstant: the result type is the type of `value`.
func inferConstant(op *graphir.Op) ([]graphir.Type, error) {
	d, err := constantValue(op)
	if err != nil {
		return nil, err
	}
	return one(d.Type), nil
}

// verifyConstant checks that the stored element count is 1 (splat) or the
// type's element count, unless the data was elided.
func verifyConstant(op *graphir.Op) error {
	d, err := constantValue(op)
	if err != nil {
		return err
	}
	if d.Elided {
		return nil
	}
	n := d.Type.NumElements()
	if l := int64(d.Len()); l != n && !(l == 1 && n > 0) {
		return op.Errorf("value holds %d elements, but %s has %d", l, d.Type, n)
	}
	return nil
}

func evalConstant(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	if err := verifyConstant(op); err != nil {
		return nil, err
	}
	d, _ := constantValue(op)
	t, err := graphir.TensorFromDense(d)
	if err != nil {
		return nil, op.Errorf("%v", err)
	}
	return []*graphir.Tensor{t.Round()}, nil
}

// ConstantOf returns the dense value of v when v is the result of a
// graph.constant with non-elided data, else nil.
func ConstantOf(v *graphir.Value) *graphir.DenseElementsAttr {
	if v == nil || v.Def == nil || v.Def.Name != ConstantOp {
		return nil
	}
	d, ok := v.Def.Attr("value").(*graphir.DenseElementsAttr)
	if !ok || d == nil || d.Elided {
		return nil
	}
	return d
}

// newConstant builds a detached graph.constant holding t.
func newConstant(t *graphir.Tensor, loc graphir.Location) *graphir.Op {
	d := t.ToDense()
	return graphir.NewOp(ConstantOp, nil, []graphir.Type{d.Type}, graphir.DictAttr{}.Set("value", d), loc)
}
