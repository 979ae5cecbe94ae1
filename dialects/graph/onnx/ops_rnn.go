package onnx

import (
	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/dialects/graph/onnx/onnxpb"
	"github.com/tessera-ml/tessera/graphir"
)

// LSTM, GRU and RNN (opsets 7–17) → graph.lstm, graph.gru, graph.rnn with
// hidden_size, direction, activations, activation_alpha/beta, clip,
// input_forget (LSTM), linear_before_reset (GRU) and layout (opset 14).
// sequence_lens (input 4) must be a constant (bind a graph input with
// tessera import --bind-input); lengths that differ from the sequence
// length become the op's sequence_lens attribute (each in [0, S]), all
// equal to it are the identity and dropped. An absent optional input
// before a present one (B, initial_h, initial_c) becomes zeros, its ONNX
// default.

var rnnOps = map[string]string{"LSTM": graph.LSTMOp, "GRU": graph.GRUOp, "RNN": graph.RNNOp}

func init() {
	register(convertRNN, "LSTM", "GRU", "RNN")
}

func convertRNN(n *node) ([]*value, error) {
	kind := n.p.GetOpType()
	name := rnnOps[kind]
	maxIn := 6
	if kind == "LSTM" {
		maxIn = 8
	}
	if err := n.need(3, maxIn); err != nil {
		return nil, err
	}
	a, err := n.rnnAttrs(kind)
	if err != nil {
		return nil, err
	}
	layout := intOfAttr(a, "layout")
	if a, err = n.sequenceLens(a, layout); err != nil {
		return nil, err
	}
	ins, err := n.rnnOperands(a, layout)
	if err != nil {
		return nil, err
	}
	return n.emit(name, ins, a)
}

// rnnAttrs maps the node's attributes; unknown ones are refused.
func (n *node) rnnAttrs(kind string) (graphir.DictAttr, error) {
	allowed := map[string]bool{"hidden_size": true, "direction": true, "activations": true, "activation_alpha": true,
		"activation_beta": true, "clip": true, "layout": true}
	switch kind {
	case "LSTM":
		allowed["input_forget"] = true
	case "GRU":
		allowed["linear_before_reset"] = true
	}
	a := graphir.DictAttr{}
	for _, at := range n.p.GetAttribute() {
		name := at.GetName()
		if !allowed[name] {
			return nil, n.errorf("unsupported: attribute '%s'", name)
		}
		v, err := n.rnnAttr(at)
		if err != nil {
			return nil, err
		}
		a = a.Set(name, v)
	}
	if a.Get("hidden_size") == nil {
		return nil, n.errorf("attribute 'hidden_size' is required")
	}
	if a.Get("layout") != nil && n.opset < 14 {
		return nil, n.errorf("attribute 'layout' needs opset 14")
	}
	return a, nil
}

func (n *node) rnnAttr(at *onnxpb.AttributeProto) (graphir.Attribute, error) {
	switch name := at.GetName(); name {
	case "hidden_size", "layout":
		v, err := n.intAttr(name, 0)
		return graphir.IntAttr(v), err
	case "input_forget", "linear_before_reset":
		v, err := n.intAttr(name, 0)
		return graphir.BoolAttr(v != 0), err
	case "direction":
		v, err := n.stringAttr(name, "forward")
		return graphir.StringAttr(v), err
	case "clip":
		v, err := n.floatAttr(name, 0)
		return graphir.F32Attr(v), err
	case "activations":
		if err := n.checkKind(at, onnxpb.AttributeProto_STRINGS); err != nil {
			return nil, err
		}
		out := graphir.ArrayAttr{}
		for _, s := range at.GetStrings() {
			out = append(out, graphir.StringAttr(s))
		}
		return out, nil
	}
	if err := n.checkKind(at, onnxpb.AttributeProto_FLOATS); err != nil {
		return nil, err
	}
	fs, err := n.floatsAttr(at.GetName())
	out := graphir.ArrayAttr{}
	for _, f := range fs {
		out = append(out, graphir.F32Attr(f))
	}
	return out, err
}

// sequenceLens adds a constant sequence_lens to the attributes a unless
// it is absent or every length is the sequence length; the graph op's
// verifier checks the count and the range.
func (n *node) sequenceLens(a graphir.DictAttr, layout int64) (graphir.DictAttr, error) {
	if n.in(4) == nil {
		return a, nil
	}
	lens, err := n.constInts(4, "sequence_lens")
	if err != nil {
		return nil, err
	}
	x := n.in(0).typ()
	if x == nil || x.Rank() != 3 {
		return nil, n.errorf("X must have rank 3")
	}
	if batch := x.Shape[1-layout]; int64(len(lens)) != batch {
		return nil, n.errorf("sequence_lens must have one length per batch entry (%d), got %d", batch, len(lens))
	}
	for _, l := range lens {
		if l != x.Shape[layout] {
			return a.Set("sequence_lens", graphir.I64Array(lens...)), nil
		}
	}
	return a, nil
}

// rnnOperands lists X, W, R and the optional inputs up to the last
// present one (sequence_lens left out), absent ones as zeros.
func (n *node) rnnOperands(a graphir.DictAttr, layout int64) ([]*value, error) {
	ins := []*value{n.in(0), n.in(1), n.in(2)}
	optional := []int{3, 5, 6, 7} // B, initial_h, initial_c, P
	last := -1
	for i, k := range optional {
		if n.in(k) != nil {
			last = i
		}
	}
	x, w := n.in(0).typ(), n.in(1).typ()
	if x == nil || w == nil || x.Rank() != 3 || w.Rank() != 3 {
		return nil, n.errorf("X and W must have rank 3")
	}
	h := intOfAttr(a, "hidden_size")
	dirs, batch := w.Shape[0], x.Shape[1-layout]
	state := []int64{dirs, batch, h}
	if layout == 1 {
		state = []int64{batch, dirs, h}
	}
	zeros := [][]int64{{dirs, 2 * w.Shape[1]}, state, state}
	for i := 0; i <= last; i++ {
		v := n.in(optional[i])
		if v == nil {
			v = constValue(graphir.NewZeroTensor(graphir.NewTensor(x.Elem, zeros[i]...)), n.loc)
		}
		ins = append(ins, v)
	}
	return ins, nil
}

// intOfAttr is integer attribute name of a, 0 when absent.
func intOfAttr(a graphir.DictAttr, name string) int64 {
	if v, ok := a.Get(name).(*graphir.IntegerAttr); ok {
		return v.Value
	}
	return 0
}
