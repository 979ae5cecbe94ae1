package onnx

import (
	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
)

// CumSum (opsets 11–17): the axis input must be a constant (bind a graph
// input with --bind-input); exclusive and reverse are attributes.

func init() {
	register(convertCumSum, "CumSum")
}

func convertCumSum(n *node) ([]*value, error) {
	if err := n.need(2, 2); err != nil {
		return nil, err
	}
	if err := n.onlyAttrs("exclusive", "reverse"); err != nil {
		return nil, err
	}
	axis, err := n.constInts(1, "axis")
	if err != nil {
		return nil, err
	}
	if len(axis) != 1 {
		return nil, n.errorf("axis must hold one value, got %d", len(axis))
	}
	a := attrs("axis", graphir.IntAttr(axis[0]))
	for _, name := range []string{"exclusive", "reverse"} {
		v, err := n.intAttr(name, 0)
		if err != nil {
			return nil, err
		}
		a = a.Set(name, graphir.BoolAttr(v != 0))
	}
	return n.emit(graph.CumSumOp, list(n.in(0)), a)
}
