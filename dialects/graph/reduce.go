package graph

import (
	"math"

	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// Reductions and log_softmax.
//
//	graph.reduce_sum / reduce_mean / reduce_max / reduce_min / reduce_prod /
//	reduce_l2 / reduce_log_sum_exp (x) {axes = [...], keepdims = true,
//	noop_with_empty_axes = false}
//
// ONNX ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL2 and
// ReduceLogSumExp (opset 18, axes as an attribute): x of any rank; axes in
// [-r, r-1], distinct after normalization; an absent or empty axes reduces
// every axis, or with noop_with_empty_axes none (the reduction of each
// element alone: x for sum/mean/max/min/prod/log_sum_exp, |x| for l2). With keepdims the reduced dimensions
// stay as 1s, without they are dropped (a full reduction gives rank 0).
// sum/max/min/prod take float or integer (not i1) elements; mean, l2 and
// log_sum_exp take floats. Accumulation is in float64 and the result is
// rounded to the element type. Reductions over an empty domain give the
// identity: sum 0, prod 1, max −inf, min +inf, l2 0, log_sum_exp −inf, mean
// NaN (0/0). log_sum_exp is computed stably as m + log(Σ exp(x − m)) with m
// the maximum (m replaced by 0 when it is ±inf or NaN, as SciPy's logsumexp).
//
//	graph.log_softmax(x) {axis = -1}
//
// ONNX LogSoftmax (opset 13): x rank ≥ 1, float; axis in [-r, r-1];
// y = (x − m) − log(Σ exp(x − m)) along axis, m the maximum along axis.
const (
	ReduceSumOp       = "graph.reduce_sum"
	ReduceMeanOp      = "graph.reduce_mean"
	ReduceMaxOp       = "graph.reduce_max"
	ReduceMinOp       = "graph.reduce_min"
	ReduceProdOp      = "graph.reduce_prod"
	ReduceL2Op        = "graph.reduce_l2"
	ReduceLogSumExpOp = "graph.reduce_log_sum_exp"
	LogSoftmaxOp      = "graph.log_softmax"
)

// reduceKinds lists every reduction op with whether it needs floats and
// its ONNX name.
var reduceKinds = []struct {
	name, onnx string
	float      bool
}{
	{ReduceSumOp, "ReduceSum", false},
	{ReduceMeanOp, "ReduceMean", true},
	{ReduceMaxOp, "ReduceMax", false},
	{ReduceMinOp, "ReduceMin", false},
	{ReduceProdOp, "ReduceProd", false},
	{ReduceL2Op, "ReduceL2", true},
	{ReduceLogSumExpOp, "ReduceLogSumExp", true},
}

func init() {
	for _, k := range reduceKinds {
		needFloat := k.float
		register(&graphir.OpDef{
			Name:     k.name,
			Summary:  "reduce over axes, keepdims (ONNX " + k.onnx + ")",
			Operands: graphir.Exactly(1),
			Results:  graphir.Exactly(1),
			Traits:   graphir.Pure,
			Attrs: []graphir.AttrSpec{
				{Name: "axes", Kind: graphir.KindIntArray},
				{Name: "keepdims", Kind: graphir.KindBool, Default: graphir.BoolAttr(true)},
				{Name: "noop_with_empty_axes", Kind: graphir.KindBool, Default: graphir.BoolAttr(false)},
			},
			Symbolic: true,
			Infer:    inferReduce,
			Verify: func(op *graphir.Op) error {
				t, err := op.TensorOperand(0)
				if err != nil {
					return err
				}
				if needFloat {
					return requireFloat(op, t)
				}
				if t.Elem == graphir.I1 {
					return op.Errorf("requires a numeric element type, got %s", t)
				}
				return nil
			},
			Eval:   evalReduce,
			Pretty: true,
		}, Conversions{Legalize: legalizeReduce, Symbolic: true})
	}
}

// ReduceAxes returns, for a reduction op on an input of rank r, which
// dimensions are reduced (absent or empty axes: all) and the keepdims flag.
// Errors: malformed attributes, an axis outside [-r, r-1], a repeated axis.
func ReduceAxes(op *graphir.Op, r int) ([]bool, bool, error) {
	axes, err := op.Ints("axes")
	if err != nil {
		return nil, false, err
	}
	keep, err := op.Bool("keepdims")
	if err != nil {
		return nil, false, err
	}
	noop, err := op.Bool("noop_with_empty_axes")
	if err != nil {
		return nil, false, err
	}
	red := make([]bool, r)
	if len(axes) == 0 && noop {
		return red, keep, nil
	}
	if len(axes) == 0 {
		for i := range red {
			red[i] = true
		}
		return red, keep, nil
	}
	for _, a := range axes {
		ax, err := normAxis(op, a, r)
		if err != nil {
			return nil, false, err
		}
		if red[ax] {
			return nil, false, op.Errorf("axes %s names dimension %d more than once", shapeString(axes), ax)
		}
		red[ax] = true
	}
	return red, keep, nil
}

// reducedShape is the result shape of a reduction of shape over red.
func reducedShape(shape []int64, red []bool, keep bool) []int64 {
	out := []int64{}
	for i, d := range shape {
		switch {
		case !red[i]:
			out = append(out, d)
		case keep:
			out = append(out, 1)
		}
	}
	return out
}

func inferReduce(op *graphir.Op) ([]graphir.Type, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	red, keep, err := ReduceAxes(op, ts[0].Rank())
	if err != nil {
		return nil, err
	}
	if !ts[0].IsStatic() {
		var dims []*graphir.SymExpr
		for i, d := range ts[0].Dims() {
			switch {
			case !red[i]:
				dims = append(dims, d)
			case keep:
				dims = append(dims, graphir.SymConst(1))
			}
		}
		return one(graphir.NewTensorDims(ts[0].Elem, dims...)), nil
	}
	return one(&graphir.TensorType{Shape: reducedShape(ts[0].Shape, red, keep), Elem: ts[0].Elem}), nil
}

// reduceOffsets returns, for every element of x (row-major), the offset of
// the output element it reduces into.
func reduceOffsets(shape []int64, red []bool) []int64 {
	// outStride[i] is the output stride of input dim i (0 when reduced).
	outStride := make([]int64, len(shape))
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		if !red[i] {
			outStride[i] = acc
			acc *= shape[i]
		}
	}
	n := product(shape)
	offs := make([]int64, n)
	pos := make([]int64, len(shape))
	off := int64(0)
	for k := int64(0); k < n; k++ {
		offs[k] = off
		for d := len(shape) - 1; d >= 0; d-- {
			pos[d]++
			off += outStride[d]
			if pos[d] < shape[d] {
				break
			}
			off -= outStride[d] * pos[d]
			pos[d] = 0
		}
	}
	return offs
}

func evalReduce(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	x := args[0]
	red, _, err := ReduceAxes(op, x.Type.Rank())
	if err != nil {
		return nil, err
	}
	offs := reduceOffsets(x.Shape(), red)
	acc := out.Data
	fill := func(v float64) {
		for i := range acc {
			acc[i] = v
		}
	}
	elem := x.Type.Elem
	switch op.Name {
	case ReduceSumOp, ReduceMeanOp:
		for k, v := range x.Data {
			acc[offs[k]] += v
		}
		if op.Name == ReduceMeanOp {
			n := float64(len(x.Data))
			if len(acc) > 0 {
				n /= float64(len(acc))
			}
			for i := range acc {
				acc[i] /= n
			}
		}
	case ReduceProdOp:
		fill(1)
		for k, v := range x.Data {
			acc[offs[k]] *= v
		}
	case ReduceMaxOp:
		fill(lowestValue(elem))
		for k, v := range x.Data {
			acc[offs[k]] = hlo.FMax(acc[offs[k]], v)
		}
	case ReduceMinOp:
		fill(highestValue(elem))
		for k, v := range x.Data {
			acc[offs[k]] = hlo.FMin(acc[offs[k]], v)
		}
	case ReduceL2Op:
		for k, v := range x.Data {
			acc[offs[k]] += v * v
		}
		for i := range acc {
			acc[i] = math.Sqrt(acc[i])
		}
	case ReduceLogSumExpOp:
		m := make([]float64, len(acc))
		for i := range m {
			m[i] = math.Inf(-1)
		}
		for k, v := range x.Data {
			m[offs[k]] = hlo.FMax(m[offs[k]], v)
		}
		for i := range m {
			if math.IsInf(m[i], 0) || math.IsNaN(m[i]) {
				m[i] = 0
			}
		}
		for k, v := range x.Data {
			acc[offs[k]] += math.Exp(v - m[offs[k]])
		}
		for i := range acc {
			acc[i] = m[i] + math.Log(acc[i])
		}
	default:
		return nil, op.Errorf("is not a reduction")
	}
	return []*graphir.Tensor{out.Round()}, nil
}

func evalLogSoftmax(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	return evalSoftmaxLike(op, args, true)
}

// Legalization:
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
//	graph.log_softmax → see legalizeSoftmaxLike (norm.go)

func legalizeReduce(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	x := op.Operand(0)
	xt := graphir.AsTensor(x.Type)
	red, _, err := ReduceAxes(op, xt.Rank())
	if err != nil {
		return nil, err
	}
	var dims, keep []int64
	for i, r := range red {
		if !r {
			keep = append(keep, int64(i))
			continue
		}
		dims = append(dims, int64(i))
	}
	c := &chain{b: b, t: xt}
	reduce := func(v *graphir.Value, init float64, combiner string) *graphir.Value {
		return c.do(func() (*graphir.Value, error) { return b.reduce(v, init, combiner, dims) })
	}
	var y *graphir.Value
	switch op.Name {
	case ReduceSumOp:
		y = reduce(x, 0, hlo.AddOp)
	case ReduceMeanOp:
		sum := reduce(x, 0, hlo.AddOp)
		if c.err != nil {
			return nil, c.err
		}
		st := graphir.AsTensor(sum.Type)
		mean := &chain{b: b, t: st}
		y = mean.op(hlo.DivideOp, sum, mean.do(func() (*graphir.Value, error) { return b.elementCount(x, dims, st) }))
		c.err = mean.err
	case ReduceMaxOp:
		y = reduce(x, lowestValue(xt.Elem), hlo.MaximumOp)
	case ReduceMinOp:
		y = reduce(x, highestValue(xt.Elem), hlo.MinimumOp)
	case ReduceProdOp:
		y = reduce(x, 1, hlo.MultiplyOp)
	case ReduceL2Op:
		y = c.op(hlo.SqrtOp, reduce(c.op(hlo.MultiplyOp, x, x), 0, hlo.AddOp))
	case ReduceLogSumExpOp:
		y = c.logSumExp(x, xt, dims, keep)
	}
	return c.done(c.do(func() (*graphir.Value, error) { return b.reshapeDims(y, rt.Dims()) }))
}

// logSumExp builds m + log(Σ exp(x − m)) over dims, with m the maximum
// replaced by 0 where it is not finite (all −inf, +inf or NaN), so that an
// all −inf slice gives −inf instead of NaN.
func (c *chain) logSumExp(x *graphir.Value, xt *graphir.TensorType, dims, keep []int64) *graphir.Value {
	b := c.b
	m := c.do(func() (*graphir.Value, error) { return b.reduce(x, math.Inf(-1), hlo.MaximumOp, dims) })
	if c.err != nil {
		return nil
	}
	mc := &chain{b: b, t: graphir.AsTensor(m.Type)}
	finite := mc.cmp("LT", mc.op(hlo.AbsOp, m), mc.splat(math.Inf(1)))
	s := mc.op(hlo.SelectOp, finite, m, mc.splat(0))
	if c.err = mc.err; c.err != nil {
		return nil
	}
	sb := c.do(func() (*graphir.Value, error) { return b.broadcastInDimDims(s, xt.Dims(), keep) })
	e := c.op(hlo.ExponentialOp, c.op(hlo.SubtractOp, x, sb))
	sum := c.do(func() (*graphir.Value, error) { return b.reduce(e, 0, hlo.AddOp, dims) })
	return c.op(hlo.AddOp, c.op(hlo.LogOp, sum), s)
}
