package onnx

import (
	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
)

// CumSum (opsets 11–17): the axis input must be a constant (bind a graph
// input with --bind-input); exclusive and reverse are attributes.

func init() {
	register(convertCumSum, "CumSum")
	register(convertOneHot, "OneHot")
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

// OneHot (opsets 9–17): the depth input must be a constant (bind a graph
// input with --bind-input); it becomes graph.one_hot's depth attribute.
func convertOneHot(n *node) ([]*value, error) {
	if err := n.need(3, 3); err != nil {
		return nil, err
	}
	if err := n.onlyAttrs("axis"); err != nil {
		return nil, err
	}
	t, err := n.constInput(1, "depth")
	if err != nil {
		return nil, err
	}
	if len(t.Data) != 1 {
		return nil, n.errorf("depth must hold one value, got %d", len(t.Data))
	}
	axis, err := n.intAttr("axis", -1)
	if err != nil {
		return nil, err
	}
	return n.emit(graph.OneHotOp, list(n.in(0), n.in(2)), attrs("depth", graphir.IntAttr(int64(t.Data[0])), "axis", graphir.IntAttr(axis)))
}
