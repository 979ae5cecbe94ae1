package graph

import (
	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// OneHotOp is graph.one_hot(indices, values) {depth, axis = -1}: ONNX
// OneHot (opsets 9–17) with its depth input as an attribute. indices is
// any numeric tensor (floats are truncated toward zero), values a
// 2-element [off, on] tensor whose type the result takes; the result is
// indices' shape with a new dim of size depth inserted at axis (in
// [−r−1, r]). out[..., j, ...] = on where j equals the index (a negative
// index counts from the end: j = index + depth), else off; an index
// outside [−depth, depth−1] gives a row of off.
const OneHotOp = "graph.one_hot"

func init() {
	register(&graphir.OpDef{
		Name:     OneHotOp,
		Summary:  "one-hot encoding of indices along a new axis (ONNX OneHot)",
		Operands: graphir.Exactly(2),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Attrs: []graphir.AttrSpec{
			{Name: "depth", Kind: graphir.KindInt, Required: true},
			{Name: "axis", Kind: graphir.KindInt, Default: graphir.IntAttr(-1)},
		},
		Infer: func(op *graphir.Op) ([]graphir.Type, error) {
			_, _, rt, err := oneHotConfig(op)
			if err != nil {
				return nil, err
			}
			return one(rt), nil
		},
		Eval:   evalOneHot,
		Pretty: true,
	}, Conversions{Legalize: legalizeOneHot})
}

// oneHotConfig returns depth, the normalized axis and the result type.
func oneHotConfig(op *graphir.Op) (int64, int, *graphir.TensorType, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return 0, 0, nil, err
	}
	ind, vals := ts[0], ts[1]
	if ind.Elem == graphir.I1 {
		return 0, 0, nil, op.Errorf("indices must be numeric, got %s", ind)
	}
	if vals.NumElements() != 2 || vals.Rank() != 1 {
		return 0, 0, nil, op.Errorf("values must be a 2-element vector [off, on], got %s", vals)
	}
	depth, err := op.Int("depth")
	if err != nil {
		return 0, 0, nil, err
	}
	if depth < 1 {
		return 0, 0, nil, op.Errorf("depth must be at least 1, got %d", depth)
	}
	a, err := op.Int("axis")
	if err != nil {
		return 0, 0, nil, err
	}
	ax, err := normAxis(op, a, ind.Rank()+1)
	if err != nil {
		return 0, 0, nil, err
	}
	shape := append(append(append([]int64{}, ind.Shape[:ax]...), depth), ind.Shape[ax:]...)
	return depth, ax, graphir.NewTensor(vals.Elem, shape...), nil
}

func evalOneHot(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	depth, ax, rt, err := oneHotConfig(op)
	if err != nil {
		return nil, err
	}
	ind, off, on := args[0], args[1].Data[0], args[1].Data[1]
	idx := make([]int64, rt.Rank())
	pos := make([]int64, 0, rt.Rank()-1)
	for k := range out.Data {
		unravelInto(int64(k), rt.Shape, idx)
		pos = append(append(pos[:0], idx[:ax]...), idx[ax+1:]...)
		v := int64(ind.Data[offsetOf(pos, ind.Shape())])
		if v < 0 {
			v += depth
		}
		out.Data[k] = off
		if v == idx[ax] {
			out.Data[k] = on
		}
	}
	return []*graphir.Tensor{out}, nil
}

// legalizeOneHot: the indices converted to i64 (truncating floats) and
// wrapped, broadcast along the new axis and compared with the positions
// along it; select(on, off) with the two values broadcast.
func legalizeOneHot(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	depth, ax, rt, err := oneHotConfig(op)
	if err != nil {
		return nil, err
	}
	ind, vals := op.Operand(0), op.Operand(1)
	it := graphir.AsTensor(ind.Type)
	i64 := graphir.NewTensor(graphir.I64, it.Shape...)
	wide := graphir.NewTensor(graphir.I64, rt.Shape...)
	keep := make([]int64, 0, it.Rank())
	for d := 0; d < rt.Rank(); d++ {
		if d != ax {
			keep = append(keep, int64(d))
		}
	}
	ci := &chain{b: b, t: i64}
	x := ind
	if it.Elem != graphir.I64 {
		x = ci.do(func() (*graphir.Value, error) { return b.insert(hlo.Convert(ind, graphir.I64, b.src.Loc)) })
	}
	x = ci.op(hlo.SelectOp, ci.cmp("LT", x, ci.splat(0)), ci.op(hlo.AddOp, x, ci.splat(float64(depth))), x)
	cw := &chain{b: b, t: wide, err: ci.err}
	hit := cw.cmp("EQ", cw.do(func() (*graphir.Value, error) { return b.broadcastInDim(x, rt.Shape, keep) }),
		cw.do(func() (*graphir.Value, error) { return b.iotaAlong(wide, ax) }))
	pick := func(i int64) *graphir.Value {
		return cw.do(func() (*graphir.Value, error) {
			v, err := b.axisSlice(vals, 0, i, 1, 1)
			if err != nil {
				return nil, err
			}
			if v, err = b.reshape(v, nil); err != nil {
				return nil, err
			}
			return b.broadcastInDim(v, rt.Shape, nil)
		})
	}
	return cw.done(cw.op(hlo.SelectOp, hit, pick(1), pick(0)))
}
