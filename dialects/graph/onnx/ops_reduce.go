package onnx

import (
	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
)

// Reductions: ReduceSum (axes input from opset 13), ReduceMean, ReduceMax,
// ReduceMin, ReduceProd, ReduceL2, ReduceLogSumExp (axes attribute up to
// opset 17, the newest accepted) → graph.reduce_* {axes, keepdims};
// ReduceSumSquare, ReduceL1 and ReduceLogSum as short compositions.

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
		register(convertReduce, k)
	}
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
