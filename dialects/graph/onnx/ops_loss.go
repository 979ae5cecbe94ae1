package onnx

import (
	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
)

// Losses: NegativeLogLikelihoodLoss imports directly (graph.nll_loss);
// SoftmaxCrossEntropyLoss (opsets 12–17) is its ONNX function body,
// log_prob = graph.log_softmax(scores) {axis = 1} and loss =
// graph.nll_loss(log_prob, labels[, weights]) {reduction, ignore_index};
// the optional second output is log_prob.

func init() {
	register(convertSoftmaxCrossEntropy, "SoftmaxCrossEntropyLoss")
}

func convertSoftmaxCrossEntropy(n *node) ([]*value, error) {
	if err := n.need(2, 3); err != nil {
		return nil, err
	}
	if err := n.onlyAttrs("reduction", "ignore_index"); err != nil {
		return nil, err
	}
	logp, err := n.emit1("graph.log_softmax", list(n.in(0)), attrs("axis", graphir.IntAttr(1)))
	if err != nil {
		return nil, err
	}
	a := graphir.DictAttr{}
	for _, name := range []string{"reduction", "ignore_index"} {
		if at := n.attr(name); at != nil {
			v, err := n.graphAttr(at, graphir.LookupOp(graph.NLLLossOp).Spec(name).Kind)
			if err != nil {
				return nil, err
			}
			a = a.Set(name, v)
		}
	}
	ins := list(logp, n.in(1))
	if w := n.in(2); w != nil {
		ins = append(ins, w)
	}
	loss, err := n.emit1(graph.NLLLossOp, ins, a)
	if err != nil {
		return nil, err
	}
	return list(loss, logp), nil
}
