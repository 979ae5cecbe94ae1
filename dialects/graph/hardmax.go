package graph

import (
	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// HardmaxOp is graph.hardmax(x) {axis = -1}: ONNX Hardmax (opset 13
// semantics): 1 at the first maximum along the axis, 0 elsewhere.
const HardmaxOp = "graph.hardmax"

func init() {
	register(&graphir.OpDef{
		Name:     HardmaxOp,
		Summary:  "one-hot of the first maximum along one axis (ONNX Hardmax, opset 13)",
		Operands: graphir.Exactly(1),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure | graphir.SameOperandsAndResultType,
		Attrs:    []graphir.AttrSpec{{Name: "axis", Kind: graphir.KindInt, Default: graphir.IntAttr(-1)}},
		Infer:    inferSoftmax,
		Verify: func(op *graphir.Op) error {
			t, err := op.TensorOperand(0)
			if err != nil {
				return err
			}
			return requireFloat(op, t)
		},
		Eval:   evalHardmax,
		Pretty: true,
	}, Conversions{Legalize: legalizeHardmax})
}

func evalHardmax(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	x := args[0]
	err = forEachAxisRow(op, x, func(base, n, stride int64) {
		if n == 0 {
			return
		}
		best := int64(0)
		for k := int64(1); k < n; k++ {
			if x.Data[base+k*stride] > x.Data[base+best*stride] {
				best = k
			}
		}
		out.Data[base+best*stride] = 1
	})
	if err != nil {
		return nil, err
	}
	return []*graphir.Tensor{out}, nil
}

// legalizeHardmax: m = reduce max along the axis; the positions p along
// the axis (a broadcast [n] constant) where x = m keep p, the others n;
// the first maximum f is their reduce min; y = select(p = f, 1, 0).
func legalizeHardmax(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x := op.Operand(0)
	xt := graphir.AsTensor(x.Type)
	axis, err := op.Int("axis")
	if err != nil {
		return nil, err
	}
	ax, err := normAxis(op, axis, xt.Rank())
	if err != nil {
		return nil, err
	}
	if product(xt.Shape) == 0 {
		return []*graphir.Value{x}, nil
	}
	var keep []int64
	for i := 0; i < xt.Rank(); i++ {
		if i != ax {
			keep = append(keep, int64(i))
		}
	}
	n := xt.Shape[ax]
	pos := graphir.NewZeroTensor(graphir.NewTensor(xt.Elem, n))
	for i := range pos.Data {
		pos.Data[i] = float64(i)
	}
	c := &chain{b: b, t: xt}
	back := func(v *graphir.Value) *graphir.Value {
		return c.do(func() (*graphir.Value, error) { return b.broadcastInDim(v, xt.Shape, keep) })
	}
	reduce := func(v *graphir.Value, init float64, combiner string) *graphir.Value {
		return c.do(func() (*graphir.Value, error) { return b.reduce(v, init, combiner, []int64{int64(ax)}) })
	}
	p := c.do(func() (*graphir.Value, error) {
		v, err := b.constant(pos.ToDense())
		if err != nil {
			return nil, err
		}
		return b.broadcastInDim(v, xt.Shape, []int64{int64(ax)})
	})
	isMax := c.cmp("EQ", x, back(reduce(x, lowestValue(xt.Elem), hlo.MaximumOp)))
	first := reduce(c.op(hlo.SelectOp, isMax, p, c.splat(float64(n))), float64(n), hlo.MinimumOp)
	return c.done(c.op(hlo.SelectOp, c.cmp("EQ", p, back(first)), c.splat(1), c.splat(0)))
}
