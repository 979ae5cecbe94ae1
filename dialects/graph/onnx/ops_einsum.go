package onnx

import (
	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
)

// Einsum (opset 12, the only version ONNX defines up to opset 17) imports
// as graph.einsum with the node's equation, spaces and all; the graph
// op's verifier checks the equation against the inputs, and its
// diagnostics name the node. Einsum in a model of an opset before 12 is
// refused: the op did not exist yet.

func init() {
	register(convertEinsum, "Einsum")
}

func convertEinsum(n *node) ([]*value, error) {
	if n.opset < 12 {
		return nil, n.errorf("unsupported: 'Einsum' at opset %d predates its definition (Einsum-12); re-export the model with opset 12 or later", n.opset)
	}
	if err := n.need(1, -1); err != nil {
		return nil, err
	}
	for i, x := range n.ins {
		if x == nil {
			return nil, n.errorf("input #%d is empty; every Einsum input is required", i)
		}
	}
	if err := n.onlyAttrs("equation"); err != nil {
		return nil, err
	}
	if !n.has("equation") {
		return nil, n.errorf("attribute 'equation' is required")
	}
	eq, err := n.stringAttr("equation", "")
	if err != nil {
		return nil, err
	}
	return n.emit(graph.EinsumOp, n.ins, attrs("equation", graphir.StringAttr(eq)))
}
