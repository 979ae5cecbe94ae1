package hlo

import (
	g "github.com/tessera-ml/tessera/graphir"
)

// ConstantOp is the op's name.
const ConstantOp = "hlo.constant"

// hlo.constant {value = dense<...> : tensor<...>} (StableHLO §constant):
// produces the tensor held by its value attribute; the result type is the
// attribute's type.

func init() {
	g.RegisterOp(&g.OpDef{
		Name:     ConstantOp,
		Summary:  "a constant tensor given by its dense value attribute",
		Operands: g.Exactly(0), Results: g.Exactly(1), Traits: g.Pure | g.ConstantLike, Pretty: true,
		Attrs: []g.AttrSpec{{Name: "value", Kind: g.KindDense, Required: true}},
		Infer: func(op *g.Op) ([]g.Type, error) {
			d, ok := op.Attr("value").(*g.DenseElementsAttr)
			if !ok || d.Type == nil {
				return nil, op.Errorf("requires a dense elements attribute 'value'")
			}
			if !d.Elided && d.Len() != 1 && int64(d.Len()) != d.Type.NumElements() {
				return nil, op.Errorf("value holds %d elements but its type %s has %d", d.Len(), d.Type, d.Type.NumElements())
			}
			return []g.Type{d.Type}, nil
		},
		Eval: func(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
			d, ok := op.Attr("value").(*g.DenseElementsAttr)
			if !ok {
				return nil, op.Errorf("requires a dense elements attribute 'value'")
			}
			t, err := g.TensorFromDense(d)
			if err != nil {
				return nil, op.Errorf("%v", err)
			}
			return []*g.Tensor{t.Round()}, nil
		},
	})
}

// Constant returns a detached hlo.constant holding t's data.
func Constant(t *g.Tensor, loc g.Location) *g.Op {
	return ConstantFromDense(t.ToDense(), loc)
}

// ConstantFromDense returns a detached hlo.constant with value d.
func ConstantFromDense(d *g.DenseElementsAttr, loc g.Location) *g.Op {
	return g.NewOp(ConstantOp, nil, []g.Type{d.Type}, g.DictAttr{{Name: "value", Value: d}}, loc)
}

// Splat returns a detached hlo.constant of type t whose elements all equal v
// (stored as a one-element splat); shape may be empty for a rank-0 scalar.
// A shape with a zero dimension gives the empty constant.
func Splat(elem g.DType, shape []int64, v float64, loc g.Location) *g.Op {
	t := g.NewTensor(elem, shape...)
	d := &g.DenseElementsAttr{Type: t}
	v = g.RoundTo(elem, v)
	switch {
	case t.NumElements() == 0 && elem.IsFloat():
		d.Floats = []float64{}
	case t.NumElements() == 0:
		d.Ints = []int64{}
	case elem.IsFloat():
		d.Floats = []float64{v}
	default:
		d.Ints = []int64{g.IntBits(elem, v)}
	}
	return ConstantFromDense(d, loc)
}

// isSplatConstant reports whether op is an hlo.constant holding a single
// stored element (a splat or a one-element tensor): the fusion pass clones
// these into every fusion that uses them.
func isSplatConstant(op *g.Op) bool {
	if op == nil || op.Name != ConstantOp {
		return false
	}
	d, ok := op.Attr("value").(*g.DenseElementsAttr)
	return ok && !d.Elided && d.Len() == 1
}
