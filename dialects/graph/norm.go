package graph

import (
	"math"

	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// BatchNormOp is graph.batch_norm(x, scale, bias, mean, var) {epsilon = 1e-5}:
// inference-mode batch normalization over channel axis 1 (ONNX
// BatchNormalization, training_mode = 0). x is N×C×... (rank ≥ 2); the four
// parameters are [C]. y = (x − mean) / sqrt(var + epsilon) · scale + bias.
const BatchNormOp = "graph.batch_norm"

// SoftmaxOp is graph.softmax(x) {axis = -1}: exp(x) / sum(exp(x)) along one
// axis (ONNX Softmax, opset 13 semantics), computed with the maximum
// subtracted for stability.
const SoftmaxOp = "graph.softmax"

// DefaultBatchNormEpsilon is the epsilon of a batch_norm without the attribute.
const DefaultBatchNormEpsilon = 1e-5

func init() {
	register(&graphir.OpDef{
		Name:     BatchNormOp,
		Summary:  "inference batch normalization over axis 1 (ONNX BatchNormalization)",
		Operands: graphir.Exactly(5),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Attrs:    []graphir.AttrSpec{{Name: "epsilon", Kind: graphir.KindFloat, Default: graphir.F32Attr(DefaultBatchNormEpsilon)}},
		Symbolic: true,
		Infer:    inferBatchNorm,
		Verify: func(op *graphir.Op) error {
			t, err := op.TensorOperand(0)
			if err != nil {
				return err
			}
			if err := requireFloat(op, t); err != nil {
				return err
			}
			eps, err := op.Float("epsilon")
			if err != nil {
				return err
			}
			if !(eps >= 0) || math.IsInf(eps, 0) {
				return op.Errorf("epsilon %g must be finite and non-negative", eps)
			}
			return nil
		},
		Eval:   evalBatchNorm,
		Pretty: true,
	}, Conversions{Legalize: legalizeBatchNorm, Symbolic: true})
	registerSoftmaxLike(SoftmaxOp, "softmax along one axis (ONNX Softmax, opset 13)", evalSoftmax, false)
	registerSoftmaxLike(LogSoftmaxOp, "log of softmax along one axis (ONNX LogSoftmax, opset 13)", evalLogSoftmax, true)
}

func inferBatchNorm(op *graphir.Op) ([]graphir.Type, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	if len(ts) != 5 {
		return nil, op.Errorf("expects 5 operands, got %d", len(ts))
	}
	if err := sameElem(op, ts); err != nil {
		return nil, err
	}
	x := ts[0]
	if x.Rank() < 2 {
		return nil, op.Errorf("input must have rank at least 2 (N×C×...), got %s", x)
	}
	if err := requireStatic(op, x, 1, "the channel count"); err != nil {
		return nil, err
	}
	c := x.Shape[1]
	names := [...]string{"", "scale", "bias", "mean", "var"}
	for i := 1; i < 5; i++ {
		if ts[i].Rank() != 1 || ts[i].Shape[0] != c {
			return nil, op.Errorf("%s must have shape [%d] (channels of %s), got %s", names[i], c, x, ts[i])
		}
	}
	return one(x), nil
}

func evalBatchNorm(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	eps, err := op.Float("epsilon")
	if err != nil {
		return nil, err
	}
	x := args[0]
	c := x.Shape()[1]
	inner := product(x.Shape()[2:])
	scale, bias, mean, vr := args[1].Data, args[2].Data, args[3].Data, args[4].Data
	for i, v := range x.Data {
		ch := (int64(i) / inner) % c
		out.Data[i] = (v-mean[ch])/math.Sqrt(vr[ch]+eps)*scale[ch] + bias[ch]
	}
	return []*graphir.Tensor{out.Round()}, nil
}

func inferSoftmax(op *graphir.Op) ([]graphir.Type, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	axis, err := op.Int("axis")
	if err != nil {
		return nil, err
	}
	if ts[0].Rank() == 0 {
		return nil, op.Errorf("input must have rank at least 1, got %s", ts[0])
	}
	if _, err := normAxis(op, axis, ts[0].Rank()); err != nil {
		return nil, err
	}
	return one(ts[0]), nil
}

func evalSoftmax(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	return evalSoftmaxLike(op, args, false)
}

// evalSoftmaxLike evaluates softmax (logOut false) or log_softmax (logOut
// true) along the op's axis attribute, in float64, subtracting each row's
// maximum first (the numerically stable form).
func evalSoftmaxLike(op *graphir.Op, args []*graphir.Tensor, logOut bool) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	x := args[0]
	err = forEachAxisRow(op, x, func(base, n, stride int64) {
		m := math.Inf(-1)
		for k := int64(0); k < n; k++ {
			m = math.Max(m, x.Data[base+k*stride])
		}
		sum := 0.0
		for k := int64(0); k < n; k++ {
			sum += math.Exp(x.Data[base+k*stride] - m)
		}
		ls := math.Log(sum)
		for k := int64(0); k < n; k++ {
			d := x.Data[base+k*stride] - m
			if logOut {
				out.Data[base+k*stride] = d - ls
			} else {
				out.Data[base+k*stride] = math.Exp(d) / sum
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return []*graphir.Tensor{out.Round()}, nil
}

// forEachAxisRow calls row for every line of x along op's axis attribute:
// the line's n elements are at base, base+stride, ... (row-major).
func forEachAxisRow(op *graphir.Op, x *graphir.Tensor, row func(base, n, stride int64)) error {
	axis, err := op.Int("axis")
	if err != nil {
		return err
	}
	ax, err := normAxis(op, axis, x.Type.Rank())
	if err != nil {
		return err
	}
	shape := x.Shape()
	outer, n, inner := product(shape[:ax]), shape[ax], product(shape[ax+1:])
	for o := int64(0); o < outer; o++ {
		for in := int64(0); in < inner; in++ {
			row(o*n*inner+in, n, inner)
		}
	}
	return nil
}

// legalizeBatchNorm: the per-channel factor s = scale · rsqrt(var + ε) is
// computed on the [C] vectors with hlo ops, then y = (x − mean) · s + bias
// with each [C] vector broadcast along dimension 1.
func legalizeBatchNorm(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, scale, bias, mean, variance := op.Operand(0), op.Operand(1), op.Operand(2), op.Operand(3), op.Operand(4)
	eps, err := op.Float("epsilon")
	if err != nil {
		return nil, err
	}
	xt := graphir.AsTensor(x.Type)
	vec := &chain{b: b, t: graphir.AsTensor(variance.Type)}
	s := vec.op(hlo.MultiplyOp, scale, vec.op(hlo.RsqrtOp, vec.op(hlo.AddOp, variance, vec.splat(eps))))
	if vec.err != nil {
		return nil, vec.err
	}
	c := &chain{b: b, t: xt}
	perChannel := func(v *graphir.Value) *graphir.Value {
		return c.do(func() (*graphir.Value, error) { return b.broadcastInDimDims(v, xt.Dims(), []int64{1}) })
	}
	y := c.op(hlo.SubtractOp, x, perChannel(mean))
	y = c.op(hlo.MultiplyOp, y, perChannel(s))
	return c.done(c.op(hlo.AddOp, y, perChannel(bias)))
}

// legalizeSoftmaxLike lowers softmax (logOut false) and log_softmax (logOut
// true) along the op's axis in the numerically stable form: m = reduce
// max over the axis (init the lowest value), d = x − broadcast(m),
// s = reduce add of exp(d); softmax is exp(d) / broadcast(s), log_softmax
// d − broadcast(log(s)).
func legalizeSoftmaxLike(logOut bool) legalizeFn {
	return func(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
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
		var keep []int64 // maps the reduced tensor's dims back to x's
		for i := 0; i < xt.Rank(); i++ {
			if i != ax {
				keep = append(keep, int64(i))
			}
		}
		c := &chain{b: b, t: xt}
		back := func(v *graphir.Value) *graphir.Value {
			return c.do(func() (*graphir.Value, error) { return b.broadcastInDimDims(v, xt.Dims(), keep) })
		}
		reduce := func(v *graphir.Value, init float64, combiner string) *graphir.Value {
			return c.do(func() (*graphir.Value, error) { return b.reduce(v, init, combiner, []int64{int64(ax)}) })
		}
		d := c.op(hlo.SubtractOp, x, back(reduce(x, lowestValue(xt.Elem), hlo.MaximumOp)))
		e := c.op(hlo.ExponentialOp, d)
		s := reduce(e, 0, hlo.AddOp)
		if logOut {
			return c.done(c.op(hlo.SubtractOp, d, back(c.op(hlo.LogOp, s))))
		}
		return c.done(c.op(hlo.DivideOp, e, back(s)))
	}
}

// registerSoftmaxLike registers softmax (log false) or log_softmax: one
// float operand, the result of its type, the axis attribute (default -1).
func registerSoftmaxLike(name, summary string, eval func(*graphir.Op, []*graphir.Tensor) ([]*graphir.Tensor, error), log bool) {
	register(&graphir.OpDef{
		Name:     name,
		Summary:  summary,
		Operands: graphir.Exactly(1),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure | graphir.SameOperandsAndResultType,
		Attrs:    []graphir.AttrSpec{{Name: "axis", Kind: graphir.KindInt, Default: graphir.IntAttr(-1)}},
		Symbolic: true,
		Infer:    inferSoftmax,
		Verify: func(op *graphir.Op) error {
			t, err := op.TensorOperand(0)
			if err != nil {
				return err
			}
			return requireFloat(op, t)
		},
		Eval:   eval,
		Pretty: true,
	}, Conversions{Legalize: legalizeSoftmaxLike(log), Symbolic: true})
}
