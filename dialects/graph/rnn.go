package graph

import (
	"strings"

	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// Recurrent layers (ONNX LSTM, GRU and RNN, opsets 7–17):
//
//	graph.lstm(X, W, R[, B[, initial_h[, initial_c[, P]]]]) → (Y, Y_h, Y_c)
//	graph.gru(X, W, R[, B[, initial_h]])                    → (Y, Y_h)
//	graph.rnn(X, W, R[, B[, initial_h]])                    → (Y, Y_h)
//
// with attributes hidden_size H (required), direction ("forward",
// "reverse", "bidirectional"; D = 2 directions for bidirectional, else 1),
// activations (per direction; defaults LSTM Sigmoid, Tanh, Tanh; GRU
// Sigmoid, Tanh; RNN Tanh), activation_alpha / activation_beta (consumed
// in order by the activations that take them; ONNX operator defaults
// otherwise), clip (bounds the gate pre-activations to [−clip, clip]),
// input_forget (LSTM: f = 1 − i), linear_before_reset (GRU) and layout
// (0: X [S, B, I], states [D, B, H], Y [S, D, B, H]; 1: X [B, S, I],
// states [B, D, H], Y [B, S, D, H]). W is [D, n·H, I], R [D, n·H, H], B
// [D, 2n·H] (Wb then Rb), P [D, 3H], with n = 4 gates (i, o, f, c), 3 (z,
// r, h) or 1; the gate equations are ONNX's (Operators.md). All operands
// have one float element type. ONNX's sequence_lens input is not an
// operand but the optional attribute sequence_lens ([B] lengths, each in
// [0, S], compile-time constants): batch entry b then runs only its first
// L_b steps (forward: 0 … L_b−1; reverse: L_b−1 … 0), its Y rows at
// t ≥ L_b are zero, and Y_h (Y_c) hold the states after its last step —
// the initial states when L_b = 0 (TensorFlow's dynamic_rnn copy-through;
// ONNX does not say). Without the attribute every length is S. An absent
// optional operand before a present one is given as zeros (every ONNX
// default is zero).
const (
	LSTMOp = "graph.lstm"
	GRUOp  = "graph.gru"
	RNNOp  = "graph.rnn"
)

// rnnKinds: per op, the hlo cell, gate count and default activations.
var rnnKinds = map[string]struct {
	cell     string
	gates    int64
	acts     []string
	operands int
}{
	LSTMOp: {"lstm", 4, []string{"Sigmoid", "Tanh", "Tanh"}, 7},
	GRUOp:  {"gru", 3, []string{"Sigmoid", "Tanh"}, 5},
	RNNOp:  {"rnn", 1, []string{"Tanh"}, 5},
}

func init() {
	for name, k := range rnnKinds {
		attrs := []graphir.AttrSpec{
			{Name: "hidden_size", Kind: graphir.KindInt, Required: true},
			{Name: "direction", Kind: graphir.KindEnum, Enum: []string{"forward", "reverse", "bidirectional"}, Default: graphir.StringAttr("forward")},
			{Name: "activations", Kind: graphir.KindArray},
			{Name: "activation_alpha", Kind: graphir.KindFloatArray},
			{Name: "activation_beta", Kind: graphir.KindFloatArray},
			{Name: "clip", Kind: graphir.KindFloat},
			{Name: "layout", Kind: graphir.KindInt, Default: graphir.IntAttr(0)},
			{Name: "sequence_lens", Kind: graphir.KindIntArray},
		}
		switch k.cell {
		case "lstm":
			attrs = append(attrs, graphir.AttrSpec{Name: "input_forget", Kind: graphir.KindBool, Default: graphir.BoolAttr(false)})
		case "gru":
			attrs = append(attrs, graphir.AttrSpec{Name: "linear_before_reset", Kind: graphir.KindBool, Default: graphir.BoolAttr(false)})
		}
		results := 2
		if k.cell == "lstm" {
			results = 3
		}
		register(&graphir.OpDef{
			Name:     name,
			Summary:  "ONNX " + strings.ToUpper(k.cell) + " layer: a recurrence over the sequence, in one or both directions",
			Operands: graphir.Arity{Min: 3, Max: k.operands},
			Results:  graphir.Exactly(results),
			Traits:   graphir.Pure,
			Attrs:    attrs,
			Infer:    inferRNN,
			Eval:     evalRNN,
			Pretty:   true,
		}, Conversions{Legalize: legalizeRNN})
	}
}

// rnnLayer is a verified recurrent layer's configuration.
type rnnLayer struct {
	cell               string
	gates              int64
	s, b, in, h, dirs  int64
	layout             int64
	direction          string
	acts               [][]hlo.RNNActivation // per direction
	clip               *float64
	inputForget, lbr   bool
	elem               graphir.DType
	hasB, hasH0, hasC0 bool
	hasP               bool
	lens               []int64 // sequence_lens per batch entry; nil: all S
}

func rnnConfig(op *graphir.Op) (*rnnLayer, error) {
	k, ok := rnnKinds[op.Name]
	if !ok {
		return nil, op.Errorf("not a recurrent layer")
	}
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	if err := sameElem(op, ts); err != nil {
		return nil, err
	}
	if err := requireFloat(op, ts[0]); err != nil {
		return nil, err
	}
	l := &rnnLayer{cell: k.cell, gates: k.gates, elem: ts[0].Elem}
	if err := l.readAttrs(op); err != nil {
		return nil, err
	}
	if err := l.readShapes(op, ts); err != nil {
		return nil, err
	}
	if err := l.readLens(op); err != nil {
		return nil, err
	}
	return l, l.readActivations(op, k.acts)
}

func (l *rnnLayer) readAttrs(op *graphir.Op) error {
	h, err := op.Int("hidden_size")
	if err != nil {
		return err
	}
	if h < 1 {
		return op.Errorf("hidden_size must be positive, got %d", h)
	}
	l.h = h
	if l.direction, err = op.Str("direction"); err != nil {
		return err
	}
	l.dirs = 1
	if l.direction == "bidirectional" {
		l.dirs = 2
	}
	if l.layout, err = op.Int("layout"); err != nil {
		return err
	}
	if l.layout != 0 && l.layout != 1 {
		return op.Errorf("layout must be 0 or 1, got %d", l.layout)
	}
	if op.Attr("clip") != nil {
		c, err := op.Float("clip")
		if err != nil {
			return err
		}
		if c <= 0 {
			return op.Errorf("clip must be positive, got %g", c)
		}
		l.clip = &c
	}
	switch l.cell {
	case "lstm":
		l.inputForget, err = op.Bool("input_forget")
	case "gru":
		l.lbr, err = op.Bool("linear_before_reset")
	}
	return err
}

func (l *rnnLayer) readShapes(op *graphir.Op, ts []*graphir.TensorType) error {
	x := ts[0]
	if x.Rank() != 3 {
		return op.Errorf("X must have rank 3, got %s", x)
	}
	l.s, l.b, l.in = x.Shape[0], x.Shape[1], x.Shape[2]
	if l.layout == 1 {
		l.s, l.b = l.b, l.s
	}
	d, n, h := l.dirs, l.gates*l.h, l.h
	state := []int64{d, l.b, h}
	if l.layout == 1 {
		state = []int64{l.b, d, h}
	}
	want := []struct {
		name  string
		shape []int64
	}{{"W", []int64{d, n, l.in}}, {"R", []int64{d, n, h}}, {"B", []int64{d, 2 * n}}, {"initial_h", state}, {"initial_c", state}, {"P", []int64{d, 3 * h}}}
	for i, t := range ts[1:] {
		if !shapeEq(t.Shape, want[i].shape) {
			return op.Errorf("%s must have shape %s (hidden_size %d, %d direction(s), layout %d), got %s", want[i].name, shapeString(want[i].shape), h, d, l.layout, t)
		}
	}
	l.hasB, l.hasH0 = len(ts) > 3, len(ts) > 4
	l.hasC0, l.hasP = len(ts) > 5, len(ts) > 6
	return nil
}

// readLens reads the optional sequence_lens attribute: one length in
// [0, S] per batch entry. Lengths that are all S are dropped (l.lens nil).
func (l *rnnLayer) readLens(op *graphir.Op) error {
	if op.Attr("sequence_lens") == nil {
		return nil
	}
	lens, err := op.Ints("sequence_lens")
	if err != nil {
		return err
	}
	if int64(len(lens)) != l.b {
		return op.Errorf("sequence_lens must have one length per batch entry (%d), got %d", l.b, len(lens))
	}
	full := true
	for i, n := range lens {
		if n < 0 || n > l.s {
			return op.Errorf("sequence_lens[%d] = %d is outside [0, %d] (the sequence length)", i, n, l.s)
		}
		full = full && n == l.s
	}
	if !full {
		l.lens = lens
	}
	return nil
}

// length is batch entry b's sequence length.
func (l *rnnLayer) length(b int64) int64 {
	if l.lens == nil {
		return l.s
	}
	return l.lens[b]
}

// readActivations resolves the activation names (per direction) and their
// alpha and beta.
func (l *rnnLayer) readActivations(op *graphir.Op, defaults []string) error {
	names := defaults
	if l.dirs == 2 {
		names = append(append([]string(nil), defaults...), defaults...)
	}
	if a := op.Attr("activations"); a != nil {
		arr, ok := a.(graphir.ArrayAttr)
		if !ok || len(arr) != len(names) {
			n := -1
			if ok {
				n = len(arr)
			}
			return op.Errorf("activations must list %d names (%d per direction), got %d", len(names), len(defaults), n)
		}
		names = make([]string, len(arr))
		for i, x := range arr {
			s, ok := x.(graphir.StringAttr)
			canon, known := hlo.CanonicalRNNActivation(string(s))
			if !ok || !known {
				return op.Errorf("unsupported activation '%s' (supported: Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus)", strings.Trim(graphir.FormatAttr(x), `"`))
			}
			names[i] = canon
		}
	}
	alphas, err := floatsOr(op, "activation_alpha")
	if err != nil {
		return err
	}
	betas, err := floatsOr(op, "activation_beta")
	if err != nil {
		return err
	}
	all := hlo.ResolveRNNActivations(names, alphas, betas)
	per := len(defaults)
	for d := 0; d < int(l.dirs); d++ {
		l.acts = append(l.acts, all[d*per:(d+1)*per])
	}
	return nil
}

func floatsOr(op *graphir.Op, name string) ([]float64, error) {
	if op.Attr(name) == nil {
		return nil, nil
	}
	return op.Floats(name)
}

func inferRNN(op *graphir.Op) ([]graphir.Type, error) {
	l, err := rnnConfig(op)
	if err != nil {
		return nil, err
	}
	y := graphir.NewTensor(l.elem, l.s, l.dirs, l.b, l.h)
	st := graphir.NewTensor(l.elem, l.dirs, l.b, l.h)
	if l.layout == 1 {
		y = graphir.NewTensor(l.elem, l.b, l.s, l.dirs, l.h)
		st = graphir.NewTensor(l.elem, l.b, l.dirs, l.h)
	}
	out := []graphir.Type{y, st}
	if l.cell == "lstm" {
		out = append(out, st)
	}
	return out, nil
}

// reverseDir reports whether direction d runs from the last step.
func (l *rnnLayer) reverseDir(d int64) bool {
	return l.direction == "reverse" || d == 1
}

func (l *rnnLayer) clipped(x float64) float64 {
	if l.clip == nil {
		return x
	}
	return min(max(x, -*l.clip), *l.clip)
}
