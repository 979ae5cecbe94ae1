package hlo

import (
	g "github.com/tessera-ml/tessera/graphir"
	"slices"
)

// RNNScanOp is the op's name.
const RNNScanOp = "hlo.rnn_scan"

// RNNCells are the values of hlo.rnn_scan's cell attribute.
var RNNCells = []string{"rnn", "gru", "lstm"}

// hlo.rnn_scan is Tessera's, not StableHLO's (StableHLO expresses a
// recurrence as a `while` loop; like CHLO's ops, this one names a
// composite the compiler lowers as a whole): the recurrence of one
// direction of an ONNX RNN, GRU or LSTM layer whose input projection has
// already been computed for every time step.
//
//	rnn:  hlo.rnn_scan(xw, rt, h0[, mask])
//	gru:  hlo.rnn_scan(xw, rt, h0, rbh[, mask])
//	lstm: hlo.rnn_scan(xw, rt, h0, c0, p[, mask])
//	{cell, activations, activation_alpha, activation_beta, clip?,
//	 input_forget, linear_before_reset, reverse}
//
// xw [S, B, n·H] is X·Wᵀ + biases for every step (n = 1, 3, 4 gates in
// ONNX order: i, o, f, c for LSTM; z, r, h for GRU), rt [H, n·H] the
// recurrence weights R transposed (k-major, so a step's product reads its
// rows contiguously), h0 and c0 [B, H] the initial states, p [3H] the LSTM
// peepholes (i, o, f), rbh [H] GRU's recurrence bias of the h gate (used
// with linear_before_reset only; otherwise it is part of xw). At step
// t = 0 … S−1 (t' = S−1−t when reverse, else t), with
// a = xw[t'] + h·rt (per gate) and clip(x) = min(max(x, −clip), clip)
// when clip is given, f, g, h the activations:
//
//	rnn:  h = f(clip(a))
//	gru:  z = f(clip(a_z)), r = f(clip(a_r)),
//	      ĥ = g(clip(xw_h + (r ⊙ h)·rt_h))           (linear_before_reset false)
//	      ĥ = g(clip(xw_h + r ⊙ (h·rt_h + rbh)))     (linear_before_reset true)
//	      h = (1 − z) ⊙ ĥ + z ⊙ h
//	lstm: i = f(clip(a_i + p_i ⊙ c)), f' = 1 − i (input_forget) or
//	      f(clip(a_f + p_f ⊙ c)), c = f' ⊙ c + i ⊙ g(clip(a_c)),
//	      o = f(clip(a_o + p_o ⊙ c)), h = o ⊙ h(c)
//
// and Y[t'] = h. With the optional mask (i1 [S, B]; ONNX sequence_lens
// as mask[t', b] = t' < L_b), a step t' whose mask[t', b] is false leaves
// entry b's states unchanged and sets Y[t', b] = 0. Results: Y [S, B, H],
// the last h [B, H] and, for lstm,
// the last c [B, H]; every tensor has one float element type. The op is
// Opaque: it is a fusion of its own, lowered by Lowering.Kernel to one
// kernel with a serial loop over time (see rnnScanKernel).
type rnnCfg struct {
	cell                   string
	s, b, h, gates         int64
	acts                   []RNNActivation
	clip                   float64
	hasClip                bool
	inputForget, lbr, rev  bool
	elem                   g.DType
	xw, rt, h0, c0, p, rbh *g.TensorType
	mask                   *g.TensorType // nil without a mask
}

// gatesOf is the number of gates of each cell and its activation count.
var gatesOf = map[string][2]int64{"rnn": {1, 1}, "gru": {3, 2}, "lstm": {4, 3}}

func init() {
	register(&g.OpDef{
		Name:     RNNScanOp,
		Summary:  "one direction of an RNN/GRU/LSTM recurrence over precomputed input projections (Tessera; StableHLO would use while)",
		Operands: g.Arity{Min: 3, Max: 6}, Results: g.Arity{Min: 2, Max: 3},
		Traits: g.Pure | g.Opaque, Pretty: true,
		Attrs: []g.AttrSpec{
			{Name: "cell", Kind: g.KindEnum, Required: true, Enum: RNNCells},
			{Name: "activations", Kind: g.KindArray, Required: true},
			{Name: "activation_alpha", Kind: g.KindFloatArray, Required: true},
			{Name: "activation_beta", Kind: g.KindFloatArray, Required: true},
			{Name: "clip", Kind: g.KindFloat},
			{Name: "input_forget", Kind: g.KindBool, Default: g.BoolAttr(false)},
			{Name: "linear_before_reset", Kind: g.KindBool, Default: g.BoolAttr(false)},
			{Name: "reverse", Kind: g.KindBool, Default: g.BoolAttr(false)},
		},
		Infer: func(op *g.Op) ([]g.Type, error) {
			c, err := rnnConfig(op)
			if err != nil {
				return nil, err
			}
			st := g.NewTensor(c.elem, c.b, c.h)
			out := []g.Type{g.NewTensor(c.elem, c.s, c.b, c.h), st}
			if c.cell == "lstm" {
				out = append(out, st)
			}
			return out, nil
		},
		Eval: evalRNNScan,
	}, Lowering{Kernel: rnnScanKernel})
}

// RNNScanAttrs are hlo.rnn_scan's attributes.
type RNNScanAttrs struct {
	Cell                           string
	Activations                    []RNNActivation
	Clip                           *float64
	InputForget, LinearBeforeReset bool
	Reverse                        bool
}

// Dict returns the attributes as an attribute dictionary.
func (a RNNScanAttrs) Dict() g.DictAttr {
	names, alphas, betas := g.ArrayAttr{}, g.ArrayAttr{}, g.ArrayAttr{}
	for _, f := range a.Activations {
		names = append(names, g.StringAttr(f.Name))
		alphas = append(alphas, g.F32Attr(f.Alpha))
		betas = append(betas, g.F32Attr(f.Beta))
	}
	d := g.DictAttr{}.Set("cell", g.StringAttr(a.Cell)).Set("activations", names).
		Set("activation_alpha", alphas).Set("activation_beta", betas)
	if a.Clip != nil {
		d = d.Set("clip", g.F32Attr(*a.Clip))
	}
	for _, b := range []struct {
		name string
		on   bool
	}{{"input_forget", a.InputForget}, {"linear_before_reset", a.LinearBeforeReset}, {"reverse", a.Reverse}} {
		if b.on {
			d = d.Set(b.name, g.BoolAttr(true))
		}
	}
	return d
}

// RNNScan builds a detached hlo.rnn_scan with inferred result types, or a
// diagnostic.
func RNNScan(operands []*g.Value, a RNNScanAttrs, loc g.Location) (*g.Op, error) {
	return g.Build(RNNScanOp, operands, a.Dict(), loc)
}

func rnnConfig(op *g.Op) (*rnnCfg, error) {
	ts, err := tensorOperands(op)
	if err != nil {
		return nil, err
	}
	c := &rnnCfg{}
	if c.cell, err = op.Str("cell"); err != nil {
		return nil, err
	}
	n, ok := gatesOf[c.cell]
	if !ok {
		return nil, op.Errorf("unknown cell '%s' (rnn, gru or lstm)", c.cell)
	}
	want := map[string]int{"rnn": 3, "gru": 4, "lstm": 5}[c.cell]
	if len(ts) != want && len(ts) != want+1 {
		return nil, op.Errorf("cell '%s' takes %d operands (and an optional mask), got %d", c.cell, want, len(ts))
	}
	if len(ts) == want+1 {
		c.mask, ts = ts[want], ts[:want]
	}
	if c.acts, err = rnnActivations(op, int(n[1])); err != nil {
		return nil, err
	}
	if err := c.readFlags(op); err != nil {
		return nil, err
	}
	c.xw, c.rt, c.h0 = ts[0], ts[1], ts[2]
	switch c.cell {
	case "gru":
		c.rbh = ts[3]
	case "lstm":
		c.c0, c.p = ts[3], ts[4]
	}
	return c, c.checkShapes(op, n[0], ts)
}

func (c *rnnCfg) readFlags(op *g.Op) error {
	var err error
	if op.Attr("clip") != nil {
		c.hasClip = true
		if c.clip, err = op.Float("clip"); err != nil {
			return err
		}
		if c.clip <= 0 {
			return op.Errorf("'clip' must be positive, got %g", c.clip)
		}
	}
	for _, f := range []struct {
		name string
		dst  *bool
	}{{"input_forget", &c.inputForget}, {"linear_before_reset", &c.lbr}, {"reverse", &c.rev}} {
		if *f.dst, err = op.Bool(f.name); err != nil {
			return err
		}
	}
	return nil
}

func (c *rnnCfg) checkShapes(op *g.Op, n int64, ts []*g.TensorType) error {
	if c.xw.Rank() != 3 || c.rt.Rank() != 2 {
		return op.Errorf("xw must be [S, B, %d·H] and rt [H, %d·H], got %s and %s", n, n, c.xw, c.rt)
	}
	c.s, c.b, c.h = c.xw.Shape[0], c.xw.Shape[1], c.rt.Shape[0]
	c.gates = n * c.h
	c.elem = c.xw.Elem
	if !c.elem.IsFloat() {
		return op.Errorf("operands must have a float element type, got %s", c.elem)
	}
	for _, t := range ts {
		if t.Elem != c.elem {
			return op.Errorf("operands must have one element type, got %s and %s", c.elem, t.Elem)
		}
	}
	expect := []struct {
		t     *g.TensorType
		what  string
		shape []int64
	}{{c.xw, "xw", []int64{c.s, c.b, c.gates}}, {c.rt, "rt", []int64{c.h, c.gates}}, {c.h0, "h0", []int64{c.b, c.h}},
		{c.c0, "c0", []int64{c.b, c.h}}, {c.p, "p", []int64{3 * c.h}}, {c.rbh, "rbh", []int64{c.h}}}
	for _, e := range expect {
		if e.t != nil && !slices.Equal(e.t.Shape, e.shape) {
			return op.Errorf("%s must have shape %v for cell '%s' with hidden size %d, got %s", e.what, e.shape, c.cell, c.h, e.t)
		}
	}
	if c.mask != nil && (c.mask.Elem != g.I1 || !slices.Equal(c.mask.Shape, []int64{c.s, c.b})) {
		return op.Errorf("mask must be tensor<%dx%dxi1> ([S, B]), got %s", c.s, c.b, c.mask)
	}
	return nil
}

// active reports whether step tt of batch entry b updates the states.
func (c *rnnCfg) active(mask *g.Tensor, tt, b int64) bool {
	return c.mask == nil || mask.Data[tt*c.b+b] != 0
}

// clipped applies the clip to a pre-activation.
func (c *rnnCfg) clipped(x float64) float64 {
	if !c.hasClip {
		return x
	}
	return min(max(x, -c.clip), c.clip)
}

// evalRNNScan runs the recurrence step by step in float64.
func evalRNNScan(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
	if err := checkArgSizes(op, args); err != nil {
		return nil, err
	}
	c, err := rnnConfig(op)
	if err != nil {
		return nil, err
	}
	y := g.NewZeroTensor(g.NewTensor(c.elem, c.s, c.b, c.h))
	hs := append([]float64(nil), args[2].Data...)
	var cs []float64
	if c.cell == "lstm" {
		cs = append([]float64(nil), args[3].Data...)
	}
	a := make([]float64, c.gates)
	for t := int64(0); t < c.s; t++ {
		tt := t
		if c.rev {
			tt = c.s - 1 - t
		}
		for b := int64(0); b < c.b; b++ {
			if !c.active(args[len(args)-1], tt, b) {
				continue // Y[tt, b] stays 0, the states stay
			}
			xw := args[0].Data[(tt*c.b+b)*c.gates : (tt*c.b+b+1)*c.gates]
			h := hs[b*c.h : (b+1)*c.h]
			c.recurrent(args[1].Data, h, a)
			switch c.cell {
			case "rnn":
				for j := range h {
					h[j] = c.acts[0].Eval(c.clipped(xw[j] + a[j]))
				}
			case "gru":
				c.evalGRU(args[1].Data, args[3].Data, xw, a, h)
			case "lstm":
				c.evalLSTM(args[4].Data, xw, a, cs[b*c.h:(b+1)*c.h], h)
			}
			copy(y.Data[(tt*c.b+b)*c.h:], h)
		}
	}
	out := []*g.Tensor{y, {Type: g.NewTensor(c.elem, c.b, c.h), Data: hs}}
	if c.cell == "lstm" {
		out = append(out, &g.Tensor{Type: g.NewTensor(c.elem, c.b, c.h), Data: cs})
	}
	return out, nil
}

// recurrent sets a[g] = Σ_k h[k]·rt[k, g].
func (c *rnnCfg) recurrent(rt, h, a []float64) {
	for gi := range a {
		s := 0.0
		for k, hk := range h {
			s += hk * rt[int64(k)*c.gates+int64(gi)]
		}
		a[gi] = s
	}
}

func (c *rnnCfg) evalGRU(rt, rbh, xw, a, h []float64) {
	H := c.h
	f, gAct := c.acts[0], c.acts[1]
	hh := make([]float64, H)
	if c.lbr {
		for j := int64(0); j < H; j++ {
			r := f.Eval(c.clipped(xw[H+j] + a[H+j]))
			hh[j] = gAct.Eval(c.clipped(xw[2*H+j] + r*(a[2*H+j]+rbh[j])))
		}
	} else {
		rh := make([]float64, H)
		for k := int64(0); k < H; k++ {
			rh[k] = f.Eval(c.clipped(xw[H+k]+a[H+k])) * h[k]
		}
		for j := int64(0); j < H; j++ {
			s := 0.0
			for k := int64(0); k < H; k++ {
				s += rh[k] * rt[k*c.gates+2*H+j]
			}
			hh[j] = gAct.Eval(c.clipped(xw[2*H+j] + s))
		}
	}
	for j := int64(0); j < H; j++ {
		z := f.Eval(c.clipped(xw[j] + a[j]))
		h[j] = (1-z)*hh[j] + z*h[j]
	}
}

func (c *rnnCfg) evalLSTM(p, xw, a, cs, h []float64) {
	H := c.h
	f, gAct, hAct := c.acts[0], c.acts[1], c.acts[2]
	for j := int64(0); j < H; j++ {
		i := f.Eval(c.clipped(xw[j] + a[j] + p[j]*cs[j]))
		fg := 1 - i
		if !c.inputForget {
			fg = f.Eval(c.clipped(xw[2*H+j] + a[2*H+j] + p[2*H+j]*cs[j]))
		}
		cs[j] = fg*cs[j] + i*gAct.Eval(c.clipped(xw[3*H+j]+a[3*H+j]))
		o := f.Eval(c.clipped(xw[H+j] + a[H+j] + p[H+j]*cs[j]))
		h[j] = o * hAct.Eval(cs[j])
	}
}
