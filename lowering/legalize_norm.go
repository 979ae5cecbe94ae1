package lowering

import "github.com/tessera-ml/tessera/graphir"

// Normalizations.
//
// graph.batch_norm(x, scale, bias, mean, var) {epsilon} (inference, channel
// axis 1, params [C]) → the per-channel factor s = scale · rsqrt(var + ε)
// is computed on the [C] vectors with hlo ops, then
// y = (x − mean) · s + bias with each [C] vector broadcast along dim 1.
//
// graph.softmax(x) {axis = -1} (ONNX opset 13: along one axis), in the
// numerically stable form: m = reduce max over axis (init -inf), e =
// exponential(x − broadcast(m)), y = e / broadcast(reduce add of e over axis).
func init() {
	registerLegalization("graph.batch_norm", legalizeBatchNorm)
	registerLegalization("graph.softmax", legalizeSoftmax)
}

func legalizeBatchNorm(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	if op.NumOperands() != 5 {
		return nil, op.Errorf("expects 5 operands (x, scale, bias, mean, var), got %d", op.NumOperands())
	}
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	xt, err := b.tensorOf(op.Operand(0), "input")
	if err != nil {
		return nil, err
	}
	if xt.Rank() < 2 || !xt.Equal(rt) {
		return nil, op.Errorf("expects an input of rank >= 2 with the result's type, got %s -> %s", xt, rt)
	}
	c := xt.Shape[1]
	names := [...]string{"scale", "bias", "mean", "var"}
	for i, n := range names {
		pt, err := b.tensorOf(op.Operand(1+i), n)
		if err != nil {
			return nil, err
		}
		if pt.Rank() != 1 || pt.Shape[0] != c || pt.Elem != xt.Elem {
			return nil, op.Errorf("%s must be tensor<%dx%s>, got %s", n, c, xt.Elem, pt)
		}
	}
	scale, bias, mean, variance := op.Operand(1), op.Operand(2), op.Operand(3), op.Operand(4)
	eps, err := b.splat(graphir.AsTensor(variance.Type), op.FloatAttrOr("epsilon", 1e-5))
	if err != nil {
		return nil, err
	}
	s, err := b.binary("hlo.add", variance, eps)
	if err != nil {
		return nil, err
	}
	if s, err = b.unary("hlo.rsqrt", s); err != nil {
		return nil, err
	}
	if s, err = b.binary("hlo.multiply", scale, s); err != nil {
		return nil, err
	}
	perChannel := func(v *graphir.Value) (*graphir.Value, error) {
		return b.broadcastInDim(v, xt.Shape, []int64{1})
	}
	mb, err := perChannel(mean)
	if err != nil {
		return nil, err
	}
	y, err := b.binary("hlo.subtract", op.Operand(0), mb)
	if err != nil {
		return nil, err
	}
	sb, err := perChannel(s)
	if err != nil {
		return nil, err
	}
	if y, err = b.binary("hlo.multiply", y, sb); err != nil {
		return nil, err
	}
	bb, err := perChannel(bias)
	if err != nil {
		return nil, err
	}
	if y, err = b.binary("hlo.add", y, bb); err != nil {
		return nil, err
	}
	return []*graphir.Value{y}, nil
}

func legalizeSoftmax(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
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
	if !xt.Equal(rt) || !xt.Elem.IsFloat() {
		return nil, op.Errorf("expects a floating-point input with the result's type, got %s -> %s", xt, rt)
	}
	if xt.Rank() == 0 {
		return nil, op.Errorf("cannot take softmax of a rank-0 tensor")
	}
	axis, err := normalizeAxis(op, op.IntAttrOr("axis", -1), xt.Rank())
	if err != nil {
		return nil, err
	}
	// keep maps the reduced tensor's dims back to x's dims.
	var keep []int64
	for i := 0; i < xt.Rank(); i++ {
		if int64(i) != axis {
			keep = append(keep, int64(i))
		}
	}
	x := op.Operand(0)
	m, err := b.reduce(x, lowestValue(xt.Elem), "hlo.maximum", []int64{axis})
	if err != nil {
		return nil, err
	}
	if m, err = b.broadcastInDim(m, xt.Shape, keep); err != nil {
		return nil, err
	}
	e, err := b.binary("hlo.subtract", x, m)
	if err != nil {
		return nil, err
	}
	if e, err = b.unary("hlo.exponential", e); err != nil {
		return nil, err
	}
	s, err := b.reduce(e, 0, "hlo.add", []int64{axis})
	if err != nil {
		return nil, err
	}
	if s, err = b.broadcastInDim(s, xt.Shape, keep); err != nil {
		return nil, err
	}
	y, err := b.binary("hlo.divide", e, s)
	if err != nil {
		return nil, err
	}
	return []*graphir.Value{y}, nil
}
