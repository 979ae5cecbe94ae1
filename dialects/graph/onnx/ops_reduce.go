package onnx

import (
	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
)

// Reductions: ReduceSum (axes input from opset 13), ReduceMean, ReduceMax,
// ReduceMin, ReduceProd, ReduceL2, ReduceLogSumExp (axes attribute up to
// opset 17, the newest accepted) → graph.reduce_* {axes, keepdims};
// ReduceSumSquare, ReduceL1 and ReduceLogSum as short compositions.
// TopK → graph.topk {k, axis, largest, sorted} with k constant. ArgMax and
// ArgMin map one-to-one (graph.ArgMaxOp's Conversions).

var reduceOps = map[string]string{
	"ReduceSum": "graph.reduce_sum", "ReduceMean": "graph.reduce_mean", "ReduceMax": "graph.reduce_max",
	"ReduceMin": "graph.reduce_min", "ReduceProd": "graph.reduce_prod", "ReduceL2": "graph.reduce_l2",
	"ReduceLogSumExp": "graph.reduce_log_sum_exp",
	// compositions: ReduceSumSquare = reduce_sum(x·x), ReduceL1 =
	// reduce_sum(|x|), ReduceLogSum = log(reduce_sum(x))
	"ReduceSumSquare": "graph.reduce_sum", "ReduceL1": "graph.reduce_sum", "ReduceLogSum": "graph.reduce_sum",
}

func init() {
	for k := range reduceOps {
		registerSymbolic(convertReduce, k)
	}
	register(convertTopK, "TopK")
}

func convertReduce(n *node) ([]*value, error) {
	if err := n.need(1, 2); err != nil {
		return nil, err
	}
	// axes became an input in opset 13 for ReduceSum and in opset 18 for
	// the others (beyond MaxOpset).
	from := int64(18)
	if n.p.GetOpType() == "ReduceSum" {
		from = 13
	}
	axes, given, err := n.axesArg(from)
	if err != nil {
		return nil, err
	}
	keep, err := n.intOf("keepdims", graph.ReduceSumOp, "keepdims")
	if err != nil {
		return nil, err
	}
	noop, err := n.intOf("noop_with_empty_axes", graph.ReduceSumOp, "noop_with_empty_axes")
	if err != nil {
		return nil, err
	}
	x := n.in(0)
	if len(axes) == 0 && noop != 0 {
		return list(x), nil
	}
	seen := map[int]bool{}
	for i, a := range axes {
		d, err := n.normAxis(a, x.typ().Rank())
		if err != nil {
			return nil, err
		}
		if seen[d] {
			return nil, n.errorf("axis %d is repeated", a)
		}
		seen[d] = true
		axes[i] = int64(d)
	}
	a := attrs("keepdims", graphir.BoolAttr(keep != 0))
	if given && len(axes) > 0 {
		a = a.Set("axes", graphir.I64Array(axes...))
	}
	switch n.p.GetOpType() {
	case "ReduceSumSquare":
		if x, err = n.emit1("graph.mul", list(x, x), nil); err != nil {
			return nil, err
		}
	case "ReduceL1":
		if x, err = n.emit1("graph.abs", list(x), nil); err != nil {
			return nil, err
		}
	case "ReduceLogSum":
		if err := n.requireOp("graph.log"); err != nil {
			return nil, err
		}
		s, err := n.emit1("graph.reduce_sum", list(x), a)
		if err != nil {
			return nil, err
		}
		return n.emit("graph.log", list(s), nil)
	}
	return n.emit(reduceOps[n.p.GetOpType()], list(x), a)
}

// convertTopK maps TopK to graph.topk {k, axis, largest, sorted}. k is the
// attribute before opset 10, then input #1 K, a one-element int64 tensor
// that must be a constant: it sets the shape of both outputs, and Tessera
// needs static shapes. largest and sorted exist from opset 11 (absent:
// the defaults, 1).
func convertTopK(n *node) ([]*value, error) {
	k, err := n.topKCount()
	if err != nil {
		return nil, err
	}
	a := attrs("k", graphir.IntAttr(k))
	axis, err := n.intOf("axis", graph.TopKOp, "axis")
	if err != nil {
		return nil, err
	}
	a = a.Set("axis", graphir.IntAttr(axis))
	for _, name := range []string{"largest", "sorted"} {
		v, err := n.intOf(name, graph.TopKOp, name)
		if err != nil {
			return nil, err
		}
		a = a.Set(name, graphir.BoolAttr(v != 0))
	}
	return n.emit(graph.TopKOp, list(n.in(0)), a)
}

// topKCount is TopK's k: the required attribute before opset 10, the
// constant one-element input K from opset 10.
func (n *node) topKCount() (int64, error) {
	if n.opset < 10 {
		if err := n.need(1, 1); err != nil {
			return 0, err
		}
		if !n.has("k") {
			return 0, n.errorf("attribute 'k' is required before opset 10")
		}
		return n.intAttr("k", 0)
	}
	if err := n.need(2, 2); err != nil {
		return 0, err
	}
	ks, err := n.constInts(1, "K")
	if err != nil {
		return 0, err
	}
	if len(ks) != 1 {
		return 0, n.errorf("input #1 (K) must hold one element, got %d", len(ks))
	}
	return ks[0], nil
}
