package lowering

import "github.com/tessera-ml/tessera/graphir"

// graph.conv2d(x, w[, b]) → hlo.convolution(x, w) {window_strides =
// strides, padding = [[top, bottom], [left, right]],
// rhs_dilation = dilations, feature_group_count = groups}, then, with a
// bias, hlo.add(conv, hlo.broadcast_in_dim(b) {broadcast_dimensions = [1]}).
// lhs_dilation is left at its default [1, 1].
// Both levels use NCHW inputs and OIHW weights, so no transposes appear.
func init() {
	registerLegalization("graph.conv2d", legalizeConv2D)
}

func legalizeConv2D(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	if n := op.NumOperands(); n < 2 || n > 3 {
		return nil, op.Errorf("expects 2 or 3 operands, got %d", n)
	}
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	xt, err := b.tensorOf(op.Operand(0), "input")
	if err != nil {
		return nil, err
	}
	wt, err := b.tensorOf(op.Operand(1), "weight")
	if err != nil {
		return nil, err
	}
	if xt.Rank() != 4 || wt.Rank() != 4 || rt.Rank() != 4 {
		return nil, op.Errorf("expects rank-4 input, weight and result (NCHW, OIHW), got %s, %s -> %s", xt, wt, rt)
	}
	strides, err := intsAttr(op, "strides", 2, []int64{1, 1})
	if err != nil {
		return nil, err
	}
	pads, err := intsAttr(op, "pads", 4, []int64{0, 0, 0, 0})
	if err != nil {
		return nil, err
	}
	dil, err := intsAttr(op, "dilations", 2, []int64{1, 1})
	if err != nil {
		return nil, err
	}
	groups := op.IntAttrOr("groups", 1)
	if groups < 1 {
		return nil, op.Errorf("groups must be positive, got %d", groups)
	}
	attrs := graphir.DictAttr{}.
		Set("window_strides", graphir.I64Array(strides...)).
		Set("padding", graphir.ArrayAttr{graphir.I64Array(pads[0], pads[2]), graphir.I64Array(pads[1], pads[3])}).
		Set("rhs_dilation", graphir.I64Array(dil...)).
		Set("feature_group_count", graphir.IntAttr(groups))
	conv, err := b.create("hlo.convolution", []*graphir.Value{op.Operand(0), op.Operand(1)}, rt, attrs)
	if err != nil {
		return nil, err
	}
	bias := optionalOperand(op, 2)
	if bias == nil {
		return []*graphir.Value{conv}, nil
	}
	bt, err := b.tensorOf(bias, "bias")
	if err != nil {
		return nil, err
	}
	if bt.Rank() != 1 || bt.Shape[0] != rt.Shape[1] || bt.Elem != rt.Elem {
		return nil, op.Errorf("bias must be a vector of %d %s elements, got %s", rt.Shape[1], rt.Elem, bt)
	}
	bb, err := b.broadcastInDim(bias, rt.Shape, []int64{1})
	if err != nil {
		return nil, err
	}
	r, err := b.binary("hlo.add", conv, bb)
	if err != nil {
		return nil, err
	}
	return []*graphir.Value{r}, nil
}
