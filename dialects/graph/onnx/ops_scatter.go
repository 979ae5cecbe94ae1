package onnx

import (
	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
)

// ScatterElements and ScatterND import one-to-one (graph.ONNXOp: their
// axis and reduction attributes by name, whichever opset defines them).
// The deprecated Scatter (opsets 9–10; 11 marks it deprecated with the
// same meaning) is ScatterElements without reduction.

func init() {
	register(convertScatter, "Scatter")
}

func convertScatter(n *node) ([]*value, error) {
	if err := n.need(3, 3); err != nil {
		return nil, err
	}
	if err := n.onlyAttrs("axis"); err != nil {
		return nil, err
	}
	axis, err := n.intAttr("axis", 0)
	if err != nil {
		return nil, err
	}
	return n.emit(graph.ScatterElementsOp, n.ins, attrs("axis", graphir.IntAttr(axis)))
}
