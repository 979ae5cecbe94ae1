package graph

import (
	"math"

	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// NLLLossOp is graph.nll_loss(input, target[, weight]) {reduction =
// "mean", ignore_index}: ONNX NegativeLogLikelihoodLoss (opsets 12–17).
// input is [N, C, d1, ...] (log-probabilities, float), target [N, d1, ...]
// (integer class indices in [0, C)), weight [C] (per-class weights,
// default 1). Each element's loss is −input[n, target, d...] ·
// weight[target], and 0 where target = ignore_index (when the attribute
// is given). reduction "none" returns the losses (target's shape); "sum"
// their sum; "mean" their sum divided by the sum of the weights of the
// targets that are not ignored (NaN when every target is ignored), a
// rank-0 result. SoftmaxCrossEntropyLoss imports as graph.log_softmax
// (axis 1) followed by this op.
//
// A target outside [0, C) that is not ignore_index is an error in the
// reference evaluator; compiled code clamps it (hlo.gather's semantics).
const NLLLossOp = "graph.nll_loss"

// NLLReductions are the values of graph.nll_loss's reduction attribute.
var NLLReductions = []string{"none", "sum", "mean"}

func init() {
	register(&graphir.OpDef{
		Name:     NLLLossOp,
		Summary:  "negative log-likelihood loss of class scores at target indices (ONNX NegativeLogLikelihoodLoss)",
		Operands: graphir.Arity{Min: 2, Max: 3},
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Attrs: []graphir.AttrSpec{
			{Name: "reduction", Kind: graphir.KindEnum, Enum: NLLReductions, Default: graphir.StringAttr("mean")},
			{Name: "ignore_index", Kind: graphir.KindInt},
		},
		Infer:  inferNLLLoss,
		Eval:   evalNLLLoss,
		Pretty: true,
	}, Conversions{Legalize: legalizeNLLLoss, ONNX: "NegativeLogLikelihoodLoss"})
}

// nllCfg is a resolved graph.nll_loss.
type nllCfg struct {
	x, target  *graphir.TensorType
	reduction  string
	ignore     int64
	hasIgnore  bool
	weighted   bool
	resultType *graphir.TensorType
}

func nllConfig(op *graphir.Op) (*nllCfg, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	c := &nllCfg{x: ts[0], target: ts[1], weighted: len(ts) == 3}
	if err := requireFloat(op, c.x); err != nil {
		return nil, err
	}
	if c.x.Rank() < 2 {
		return nil, op.Errorf("input must be [N, C, d1, ...] (rank ≥ 2), got %s", c.x)
	}
	if !c.target.Elem.IsInt() || c.target.Elem == graphir.I1 {
		return nil, op.Errorf("target must have an integer element type, got %s", c.target)
	}
	want := append([]int64{c.x.Shape[0]}, c.x.Shape[2:]...)
	if !shapeEq(c.target.Shape, want) {
		return nil, op.Errorf("target must have shape %s (input's without the class dim), got %s", shapeString(want), c.target)
	}
	if c.weighted && (ts[2].Elem != c.x.Elem || !shapeEq(ts[2].Shape, []int64{c.x.Shape[1]})) {
		return nil, op.Errorf("weight must be %s, got %s", graphir.NewTensor(c.x.Elem, c.x.Shape[1]), ts[2])
	}
	if c.reduction, err = op.Str("reduction"); err != nil {
		return nil, err
	}
	if op.Attr("ignore_index") != nil {
		c.hasIgnore = true
		if c.ignore, err = op.Int("ignore_index"); err != nil {
			return nil, err
		}
	}
	c.resultType = graphir.NewTensor(c.x.Elem)
	if c.reduction == "none" {
		c.resultType = graphir.NewTensor(c.x.Elem, c.target.Shape...)
	}
	return c, nil
}

func inferNLLLoss(op *graphir.Op) ([]graphir.Type, error) {
	c, err := nllConfig(op)
	if err != nil {
		return nil, err
	}
	return one(c.resultType), nil
}

func evalNLLLoss(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	c, err := nllConfig(op)
	if err != nil {
		return nil, err
	}
	x, t := args[0], args[1]
	classes, inner := c.x.Shape[1], product(c.x.Shape[2:])
	losses := make([]float64, len(t.Data))
	sum, wsum := 0.0, 0.0
	for i, tv := range t.Data {
		k := int64(tv)
		if c.hasIgnore && k == c.ignore {
			continue
		}
		if k < 0 || k >= classes {
			return nil, op.Errorf("target %d is out of range [0, %d)", k, classes)
		}
		w := 1.0
		if c.weighted {
			w = args[2].Data[k]
		}
		n, d := int64(i)/inner, int64(i)%inner
		losses[i] = -x.Data[(n*classes+k)*inner+d] * w
		sum += losses[i]
		wsum += w
	}
	switch c.reduction {
	case "none":
		copy(out.Data, losses)
	case "sum":
		out.Data[0] = sum
	default:
		out.Data[0] = sum / wsum
		if wsum == 0 {
			out.Data[0] = math.NaN()
		}
	}
	return []*graphir.Tensor{out.Round()}, nil
}

// legalizeNLLLoss: the ignored targets become class 0 (t'); the scores at
// (n, t', d...) are one gather of single elements; the weights at t' a
// second gather (or ones), zeroed where the target is ignored; the losses
// are −score · weight, then summed (sum), or summed and divided by the
// summed weights (mean).
func legalizeNLLLoss(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	c, err := nllConfig(op)
	if err != nil {
		return nil, err
	}
	x, target := op.Operand(0), op.Operand(1)
	lt := graphir.NewTensor(c.x.Elem, c.target.Shape...)
	ch := &chain{b: b, t: lt}
	ti := &chain{b: b, t: c.target}
	safe, keep := target, (*graphir.Value)(nil)
	if c.hasIgnore {
		keep = ti.cmp("NE", target, ti.splat(float64(c.ignore)))
		safe = ti.op(hlo.SelectOp, keep, target, ti.splat(0))
	}
	if ti.err != nil {
		return nil, ti.err
	}
	picked, err := b.gatherAtTargets(x, safe)
	if err != nil {
		return nil, err
	}
	w := ch.splat(1)
	if c.weighted {
		w = ch.do(func() (*graphir.Value, error) { return b.gatherRows(op.Operand(2), safe) })
	}
	if keep != nil {
		w = ch.op(hlo.SelectOp, keep, w, ch.splat(0))
	}
	loss := ch.op(hlo.MultiplyOp, ch.op(hlo.NegateOp, picked), w)
	if ch.err != nil || c.reduction == "none" {
		return ch.done(loss)
	}
	all := iota64(0, c.target.Rank())
	sum := ch.do(func() (*graphir.Value, error) { return b.reduce(loss, 0, hlo.AddOp, all) })
	if c.reduction == "sum" {
		return ch.done(sum)
	}
	wsum := ch.do(func() (*graphir.Value, error) { return b.reduce(w, 0, hlo.AddOp, all) })
	return ch.done(ch.op(hlo.DivideOp, sum, wsum))
}

// gatherAtTargets is x[n, t[n, d...], d...] for x [N, C, d...] and class
// indices t [N, d...] in range: a gather of single elements.
func (b *builder) gatherAtTargets(x, t *graphir.Value) (*graphir.Value, error) {
	tt := graphir.AsTensor(t.Type)
	parts := []*graphir.Value{nil, t}
	var err error
	if parts[0], err = b.iotaAlong(tt, 0); err != nil {
		return nil, err
	}
	for d := 1; d < tt.Rank(); d++ {
		p, err := b.iotaAlong(tt, d)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	r, err := b.gatherPoints(x, parts, 0)
	if err != nil {
		return nil, err
	}
	return r[0], nil
}

// gatherRows is w[t] for a vector w and in-range indices t (of t's shape).
func (b *builder) gatherRows(w, t *graphir.Value) (*graphir.Value, error) {
	rank := int64(graphir.AsTensor(t.Type).Rank())
	return b.insert(hlo.Gather(w, t, hlo.GatherDims{
		OffsetDims: []int64{}, CollapsedSliceDims: []int64{0}, StartIndexMap: []int64{0},
		IndexVectorDim: rank, SliceSizes: []int64{1},
	}, b.src.Loc))
}
