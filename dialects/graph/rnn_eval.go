package graph

import "github.com/tessera-ml/tessera/graphir"

// evalRNN is the reference evaluator of graph.lstm/gru/rnn: ONNX's gate
// equations step by step in float64, per direction and batch entry, from
// the operands as given (layouts, weights and biases read in place).
func evalRNN(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	if err := checkArgs(op, args); err != nil {
		return nil, err
	}
	l, err := rnnConfig(op)
	if err != nil {
		return nil, err
	}
	types, err := inferRNN(op)
	if err != nil {
		return nil, err
	}
	outs := make([]*graphir.Tensor, len(types))
	for i, t := range types {
		outs[i] = graphir.NewZeroTensor(t.(*graphir.TensorType))
	}
	e := &rnnEval{l: l, args: args}
	for d := int64(0); d < l.dirs; d++ {
		for b := int64(0); b < l.b; b++ {
			e.run(d, b, outs)
		}
	}
	return outs, nil
}

type rnnEval struct {
	l    *rnnLayer
	args []*graphir.Tensor
}

// stateAt is the flat index of state element (d, b, k) in the layout.
func (e *rnnEval) stateAt(d, b, k int64) int64 {
	l := e.l
	if l.layout == 1 {
		return (b*l.dirs+d)*l.h + k
	}
	return (d*l.b+b)*l.h + k
}

func (e *rnnEval) xAt(t, b, i int64) float64 {
	l := e.l
	if l.layout == 1 {
		return e.args[0].Data[(b*l.s+t)*l.in+i]
	}
	return e.args[0].Data[(t*l.b+b)*l.in+i]
}

func (e *rnnEval) yAt(t, d, b, k int64) int64 {
	l := e.l
	if l.layout == 1 {
		return ((b*l.s+t)*l.dirs+d)*l.h + k
	}
	return ((t*l.dirs+d)*l.b+b)*l.h + k
}

// initial returns operand i's state for (d, b), zeros when absent.
func (e *rnnEval) initial(i int, d, b int64) []float64 {
	out := make([]float64, e.l.h)
	if i < len(e.args) {
		for k := range out {
			out[k] = e.args[i].Data[e.stateAt(d, b, int64(k))]
		}
	}
	return out
}

// project returns x_t·W_gᵀ + Wb_g (+ Rb_g unless skipRb) for gate row g.
func (e *rnnEval) project(d, t, b, g int64, skipRb bool) float64 {
	l := e.l
	n := l.gates * l.h
	s := 0.0
	w := e.args[1].Data[(d*n+g)*l.in:]
	for i := int64(0); i < l.in; i++ {
		s += e.xAt(t, b, i) * w[i]
	}
	if l.hasB {
		bias := e.args[3].Data[d*2*n:]
		s += bias[g]
		if !skipRb {
			s += bias[n+g]
		}
	}
	return s
}

// recur returns v·R_gᵀ for gate row g.
func (e *rnnEval) recur(d, g int64, v []float64) float64 {
	l := e.l
	r := e.args[2].Data[(d*l.gates*l.h+g)*l.h:]
	s := 0.0
	for k, x := range v {
		s += x * r[k]
	}
	return s
}

func (e *rnnEval) run(d, b int64, outs []*graphir.Tensor) {
	l := e.l
	h := e.initial(4, d, b)
	c := e.initial(5, d, b)
	steps := l.length(b)
	for step := int64(0); step < steps; step++ {
		t := step
		if l.reverseDir(d) {
			t = steps - 1 - step
		}
		switch l.cell {
		case "rnn":
			h = e.rnnStep(d, t, b, h)
		case "gru":
			h = e.gruStep(d, t, b, h)
		case "lstm":
			h, c = e.lstmStep(d, t, b, h, c)
		}
		for k := int64(0); k < l.h; k++ {
			outs[0].Data[e.yAt(t, d, b, k)] = h[k]
		}
	}
	for k := int64(0); k < l.h; k++ {
		outs[1].Data[e.stateAt(d, b, k)] = h[k]
		if l.cell == "lstm" {
			outs[2].Data[e.stateAt(d, b, k)] = c[k]
		}
	}
}

// rnnStep: Ht = f(Xt·Wiᵀ + Ht-1·Riᵀ + Wbi + Rbi).
func (e *rnnEval) rnnStep(d, t, b int64, h []float64) []float64 {
	out := make([]float64, len(h))
	for k := range out {
		g := int64(k)
		out[k] = e.l.acts[d][0].Eval(e.l.clipped(e.project(d, t, b, g, false) + e.recur(d, g, h)))
	}
	return out
}

// gruStep: zt = f(Xt·Wzᵀ + Ht-1·Rzᵀ + Wbz + Rbz), rt likewise,
// ht = g(Xt·Whᵀ + (rt ⊙ Ht-1)·Rhᵀ + Rbh + Wbh) (linear_before_reset 0) or
// g(Xt·Whᵀ + rt ⊙ (Ht-1·Rhᵀ + Rbh) + Wbh) (1), Ht = (1 − zt) ⊙ ht + zt ⊙ Ht-1.
func (e *rnnEval) gruStep(d, t, b int64, h []float64) []float64 {
	l := e.l
	H := l.h
	f, g := l.acts[d][0], l.acts[d][1]
	z, r, rh := make([]float64, H), make([]float64, H), make([]float64, H)
	for k := int64(0); k < H; k++ {
		z[k] = f.Eval(l.clipped(e.project(d, t, b, k, false) + e.recur(d, k, h)))
		r[k] = f.Eval(l.clipped(e.project(d, t, b, H+k, false) + e.recur(d, H+k, h)))
		rh[k] = r[k] * h[k]
	}
	out := make([]float64, H)
	for k := int64(0); k < H; k++ {
		var pre float64
		if l.lbr {
			rbh := 0.0
			if l.hasB {
				rbh = e.args[3].Data[d*6*H+3*H+2*H+k]
			}
			pre = e.project(d, t, b, 2*H+k, true) + r[k]*(e.recur(d, 2*H+k, h)+rbh)
		} else {
			pre = e.project(d, t, b, 2*H+k, false) + e.recur(d, 2*H+k, rh)
		}
		hh := g.Eval(l.clipped(pre))
		out[k] = (1-z[k])*hh + z[k]*h[k]
	}
	return out
}

// lstmStep: it = f(Xt·Wiᵀ + Ht-1·Riᵀ + Pi ⊙ Ct-1 + Wbi + Rbi), ft likewise
// (or 1 − it with input_forget), ct = g(Xt·Wcᵀ + Ht-1·Rcᵀ + Wbc + Rbc),
// Ct = ft ⊙ Ct-1 + it ⊙ ct, ot = f(Xt·Woᵀ + Ht-1·Roᵀ + Po ⊙ Ct + Wbo + Rbo),
// Ht = ot ⊙ h(Ct). Gate rows: i, o, f, c; peepholes: i, o, f.
func (e *rnnEval) lstmStep(d, t, b int64, h, c []float64) ([]float64, []float64) {
	l := e.l
	H := l.h
	f, g, hf := l.acts[d][0], l.acts[d][1], l.acts[d][2]
	p := func(gate, k int64) float64 {
		if !l.hasP {
			return 0
		}
		return e.args[6].Data[d*3*H+gate*H+k]
	}
	pre := func(gate, k int64) float64 { return e.project(d, t, b, gate*H+k, false) + e.recur(d, gate*H+k, h) }
	nh, nc := make([]float64, H), make([]float64, H)
	for k := int64(0); k < H; k++ {
		i := f.Eval(l.clipped(pre(0, k) + p(0, k)*c[k]))
		ft := 1 - i
		if !l.inputForget {
			ft = f.Eval(l.clipped(pre(2, k) + p(2, k)*c[k]))
		}
		nc[k] = ft*c[k] + i*g.Eval(l.clipped(pre(3, k)))
		o := f.Eval(l.clipped(pre(1, k) + p(1, k)*nc[k]))
		nh[k] = o * hf.Eval(nc[k])
	}
	return nh, nc
}
