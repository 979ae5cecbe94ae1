package lowering

import (
	"math"

	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
)

// Reductions and log_softmax.
//
//	graph.reduce_sum / _max / _min / _prod (x) {axes, keepdims}
//	    → hlo.reduce over the reduced dims with an add / maximum / minimum /
//	      multiply body (init 0 / lowest / highest / 1), then hlo.reshape
//	      to the keepdims shape (nothing without keepdims)
//	graph.reduce_mean → the sum, then hlo.divide by a splat of the number
//	      of reduced elements
//	graph.reduce_l2   → hlo.multiply(x, x), add-reduce, hlo.sqrt
//	graph.reduce_log_sum_exp → stable form: m = max-reduce; s = m where
//	      |m| < inf, else 0 (hlo.abs, hlo.compare LT, hlo.select);
//	      hlo.log(add-reduce(exp(x − broadcast(s)))) + s
//	graph.log_softmax(x) {axis} → d = x − broadcast(max-reduce over axis),
//	      d − broadcast(log(add-reduce(exp(d))))
func init() {
	for _, n := range []string{graph.ReduceSumOp, graph.ReduceMeanOp, graph.ReduceMaxOp, graph.ReduceMinOp,
		graph.ReduceProdOp, graph.ReduceL2Op, graph.ReduceLogSumExpOp} {
		registerLegalization(n, legalizeReduceOp)
	}
	registerLegalization(graph.LogSoftmaxOp, legalizeLogSoftmax)
}

// reduceHighestValue is the identity of min for dtype dt.
func reduceHighestValue(dt graphir.DType) float64 {
	switch dt {
	case graphir.I1:
		return 1
	case graphir.I8:
		return math.MaxInt8
	case graphir.I32:
		return math.MaxInt32
	case graphir.I64:
		return math.MaxInt64
	}
	return math.Inf(1)
}

func legalizeReduceOp(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	if op.NumOperands() != 1 {
		return nil, op.Errorf("expects 1 operand, got %d", op.NumOperands())
	}
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	x := op.Operand(0)
	xt, err := b.tensorOf(x, "input")
	if err != nil {
		return nil, err
	}
	red, keepdims, err := graph.ReduceAxes(op, xt.Rank())
	if err != nil {
		return nil, err
	}
	var dims, keep, want []int64
	count := int64(1)
	for i, r := range red {
		switch {
		case !r:
			keep = append(keep, int64(i))
			want = append(want, xt.Shape[i])
		case keepdims:
			want = append(want, 1)
		}
		if r {
			dims = append(dims, int64(i))
			count *= xt.Shape[i]
		}
	}
	if rt.Elem != xt.Elem || !shapeEqual(want, rt.Shape) {
		return nil, op.Errorf("result %s does not match the reduction of %s", rt, xt)
	}
	var y *graphir.Value
	switch op.Name {
	case graph.ReduceSumOp, graph.ReduceMeanOp:
		if y, err = b.reduce(x, 0, "hlo.add", dims); err != nil {
			return nil, err
		}
		if op.Name == graph.ReduceMeanOp {
			n, err := b.splat(graphir.AsTensor(y.Type), float64(count))
			if err != nil {
				return nil, err
			}
			if y, err = b.binary("hlo.divide", y, n); err != nil {
				return nil, err
			}
		}
	case graph.ReduceMaxOp:
		y, err = b.reduce(x, lowestValue(xt.Elem), "hlo.maximum", dims)
	case graph.ReduceMinOp:
		y, err = b.reduce(x, reduceHighestValue(xt.Elem), "hlo.minimum", dims)
	case graph.ReduceProdOp:
		y, err = b.reduce(x, 1, "hlo.multiply", dims)
	case graph.ReduceL2Op:
		sq, err := b.binary("hlo.multiply", x, x)
		if err != nil {
			return nil, err
		}
		if y, err = b.reduce(sq, 0, "hlo.add", dims); err != nil {
			return nil, err
		}
		y, err = b.unary("hlo.sqrt", y)
	case graph.ReduceLogSumExpOp:
		y, err = b.logSumExp(x, xt, dims, keep)
	default:
		return nil, op.Errorf("is not a reduction")
	}
	if err != nil {
		return nil, err
	}
	if y, err = b.reshape(y, rt.Shape); err != nil {
		return nil, err
	}
	return []*graphir.Value{y}, nil
}

// logSumExp builds m + log(Σ exp(x − m)) over dims, with m the maximum
// replaced by 0 where it is not finite (all −inf, +inf or NaN), so that an
// all −inf slice gives −inf instead of NaN.
func (b *builder) logSumExp(x *graphir.Value, xt *graphir.TensorType, dims, keep []int64) (*graphir.Value, error) {
	m, err := b.reduce(x, negInf, "hlo.maximum", dims)
	if err != nil {
		return nil, err
	}
	mt := graphir.AsTensor(m.Type)
	am, err := b.unary("hlo.abs", m)
	if err != nil {
		return nil, err
	}
	inf, err := b.splat(mt, math.Inf(1))
	if err != nil {
		return nil, err
	}
	finite, err := b.create("hlo.compare", []*graphir.Value{am, inf}, graphir.NewTensor(graphir.I1, mt.Shape...),
		graphir.DictAttr{}.Set("comparison_direction", graphir.StringAttr("LT")))
	if err != nil {
		return nil, err
	}
	zero, err := b.splat(mt, 0)
	if err != nil {
		return nil, err
	}
	s, err := b.create("hlo.select", []*graphir.Value{finite, m, zero}, mt, nil)
	if err != nil {
		return nil, err
	}
	sb, err := b.broadcastInDim(s, xt.Shape, keep)
	if err != nil {
		return nil, err
	}
	d, err := b.binary("hlo.subtract", x, sb)
	if err != nil {
		return nil, err
	}
	if d, err = b.unary("hlo.exponential", d); err != nil {
		return nil, err
	}
	sum, err := b.reduce(d, 0, "hlo.add", dims)
	if err != nil {
		return nil, err
	}
	if sum, err = b.unary("hlo.log", sum); err != nil {
		return nil, err
	}
	return b.binary("hlo.add", sum, s)
}

func legalizeLogSoftmax(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	if op.NumOperands() != 1 {
		return nil, op.Errorf("expects 1 operand, got %d", op.NumOperands())
	}
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	x := op.Operand(0)
	xt, err := b.tensorOf(x, "input")
	if err != nil {
		return nil, err
	}
	if !xt.Equal(rt) || !xt.Elem.IsFloat() || xt.Rank() == 0 {
		return nil, op.Errorf("expects a floating-point input of rank >= 1 with the result's type, got %s -> %s", xt, rt)
	}
	axis, err := normalizeAxis(op, op.IntAttrOr("axis", -1), xt.Rank())
	if err != nil {
		return nil, err
	}
	var keep []int64
	for i := 0; i < xt.Rank(); i++ {
		if int64(i) != axis {
			keep = append(keep, int64(i))
		}
	}
	m, err := b.reduce(x, lowestValue(xt.Elem), "hlo.maximum", []int64{axis})
	if err != nil {
		return nil, err
	}
	if m, err = b.broadcastInDim(m, xt.Shape, keep); err != nil {
		return nil, err
	}
	d, err := b.binary("hlo.subtract", x, m)
	if err != nil {
		return nil, err
	}
	e, err := b.unary("hlo.exponential", d)
	if err != nil {
		return nil, err
	}
	s, err := b.reduce(e, 0, "hlo.add", []int64{axis})
	if err != nil {
		return nil, err
	}
	if s, err = b.unary("hlo.log", s); err != nil {
		return nil, err
	}
	if s, err = b.broadcastInDim(s, xt.Shape, keep); err != nil {
		return nil, err
	}
	y, err := b.binary("hlo.subtract", d, s)
	if err != nil {
		return nil, err
	}
	return []*graphir.Value{y}, nil
}
