package hlo

import (
	g "github.com/tessera-ml/tessera/graphir"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// rnnScanKernel lowers hlo.rnn_scan to the body of one kernel: the state
// buffers h [B, H] (and c for lstm) are allocated in the kernel and
// initialised from h0 (c0) by the blocks "h_init" ("c_init"); a serial loop
// over time t holds, per step,
//   - the GEMM-shaped reduce block "gates": gates[b, g] = Σ_k h[b, k]·rt[k, g]
//     (for GRU without linear_before_reset only the z and r gates, followed
//     by "reset" rh = r ⊙ h and a second GEMM "gates_h" over rh),
//   - elementwise blocks adding xw[t'] and applying the gate math, writing
//     the states ("cell", "candidate", "hidden"),
//   - "y": Y[t'] = h (t' = S−1−t when reverse);
//
// With a mask, the blocks writing the states select the old value where
// mask[t', b] is false, and "y" stores 0 there.
//
// after the loop "y_h" (and "y_c") copy the last states to their results.
// Blocks in the loop read the time loop variable directly (t' in their
// bodies and Y's store index), as TVM's opaque accesses do. The kernel
// builder schedules the result (lowering/: the reduce blocks' gate loop
// split and vectorized with the reduction inside it) and marks it
// scheduled.
func rnnScanKernel(op *g.Op, ins []*tir.Operand, outs []*tir.Buffer) (tir.Stmt, error) {
	c, err := rnnConfig(op)
	if err != nil {
		return nil, err
	}
	if len(ins) != op.NumOperands() || len(outs) != len(op.Results) {
		return nil, errorAt(op, "'%s' kernel expects %d inputs and %d outputs", op.Name, op.NumOperands(), len(op.Results))
	}
	dt := outs[0].DType
	if !dt.IsFloat() {
		return nil, errorAt(op, "'%s' needs a float element type", op.Name)
	}
	k := &scanKernel{c: c, dt: dt, loc: op.Loc, ins: ins, outs: outs}
	return k.build(), nil
}

type scanKernel struct {
	c      *rnnCfg
	dt     tir.DType
	loc    tir.Location
	ins    []*tir.Operand
	outs   []*tir.Buffer
	allocs []*tir.Buffer
	t      *tir.Var
}

func (k *scanKernel) local(name string, shape ...int64) *tir.Buffer {
	b := tir.NewBuffer(name, k.dt, shape...)
	b.Scope = tir.ScopeLocal
	b.Loc = k.loc
	k.allocs = append(k.allocs, b)
	return b
}

// masked returns v where the step is active for batch entry b (always
// without a mask) and old elsewhere.
func (k *scanKernel) masked(b, v, old tir.Expr) tir.Expr {
	if k.c.mask == nil {
		return v
	}
	return &tir.Select{Cond: k.ins[len(k.ins)-1].At(k.step(), b), T: v, F: old}
}

// state is the elementwise block updating the state buffer st in place:
// st[b, j] = f(b, j) on active steps.
func (k *scanKernel) state(name string, st *tir.Buffer, f func(b, j tir.Expr) tir.Expr) tir.Stmt {
	return k.elementwise(name, st, k.c.h, func(b, j tir.Expr) tir.Expr {
		return k.masked(b, f(b, j), tir.Load(st, b, j))
	})
}

// elementwise is the block name computing out[b, j] = f(b, j) over [B, n].
func (k *scanKernel) elementwise(name string, out *tir.Buffer, n int64, f func(b, j tir.Expr) tir.Expr) tir.Stmt {
	return (&tir.Compute{Shape: []int64{k.c.b, n}, Body: func(nn tir.Nest, _ tir.Expr) tir.Expr {
		return f(nn.Spatial[0], nn.Spatial[1])
	}}).Block(name, out, k.loc)
}

// gemm is the reduce block out[b, j] = Σ_k lhs[b, k]·rt[k, col+j] over
// [B, n] × [H].
func (k *scanKernel) gemm(name string, lhs *tir.Buffer, col, n int64, out *tir.Buffer) tir.Stmt {
	rt := k.ins[1]
	return (&tir.Compute{Shape: []int64{k.c.b, n}, Reduce: []int64{k.c.h},
		Init: func(tir.Nest) tir.Expr { return tir.Zero(k.dt) },
		Body: func(nn tir.Nest, acc tir.Expr) tir.Expr {
			r := nn.Reduce[0]
			return tir.Add(acc, tir.Mul(tir.Load(lhs, nn.Spatial[0], r), rt.At(r, tir.Add(nn.Spatial[1], tir.Int(col)))))
		}}).Block(name, out, k.loc)
}

// step is t' (the time index read and written at loop iteration t).
func (k *scanKernel) step() tir.Expr {
	if k.c.rev {
		return tir.Sub(tir.Int(k.c.s-1), k.t)
	}
	return k.t
}

// pre is the pre-activation xw[t', b, gate·H + j] + gates[b, gate·H + j].
func (k *scanKernel) pre(gates *tir.Buffer, gate int64, b, j tir.Expr) tir.Expr {
	col := tir.Add(j, tir.Int(gate*k.c.h))
	return tir.Add(k.ins[0].At(k.step(), b, col), tir.Load(gates, b, col))
}

func (k *scanKernel) xw(gate int64, b, j tir.Expr) tir.Expr {
	return k.ins[0].At(k.step(), b, tir.Add(j, tir.Int(gate*k.c.h)))
}

func (k *scanKernel) clip(x tir.Expr) tir.Expr {
	if !k.c.hasClip {
		return x
	}
	return tir.Min(tir.Max(x, tir.Float(k.dt, -k.c.clip)), tir.Float(k.dt, k.c.clip))
}

func (k *scanKernel) act(i int, x tir.Expr) tir.Expr { return k.c.acts[i].Expr(k.clip(x), k.dt) }

func (k *scanKernel) build() tir.Stmt {
	c := k.c
	h := k.local("h", c.b, c.h)
	var cs *tir.Buffer
	pre := []tir.Stmt{k.copyBlock("h_init", h, k.ins[2])}
	post := []tir.Stmt{k.copyBlock("y_h", k.outs[1], &tir.Operand{Buffer: h, Shape: []int64{c.b, c.h}, DType: k.dt})}
	if c.cell == "lstm" {
		cs = k.local("c", c.b, c.h)
		pre = append(pre, k.copyBlock("c_init", cs, k.ins[3]))
		post = append(post, k.copyBlock("y_c", k.outs[2], &tir.Operand{Buffer: cs, Shape: []int64{c.b, c.h}, DType: k.dt}))
	}
	k.t = tir.NewVar("t", tir.DIndex)
	var body []tir.Stmt
	switch c.cell {
	case "rnn":
		body = k.rnnStep(h)
	case "gru":
		body = k.gruStep(h)
	case "lstm":
		body = k.lstmStep(h, cs)
	}
	body = append(body, (&tir.Compute{Shape: []int64{c.b, c.h},
		Body: func(n tir.Nest, _ tir.Expr) tir.Expr {
			return k.masked(n.Spatial[0], tir.Load(h, n.Index()...), tir.Zero(k.dt))
		},
		Out: func(n tir.Nest) []tir.Expr { return []tir.Expr{k.step(), n.Spatial[0], n.Spatial[1]} },
	}).Block("y", k.outs[0], k.loc))
	var s tir.Stmt = tir.Seq(append(append(pre, &tir.For{Var: k.t, Min: tir.Int(0), Extent: tir.Int(c.s), Body: tir.Seq(body...), Loc: k.loc}), post...)...)
	if c.s == 0 {
		s = tir.Seq(append(pre, post...)...)
	}
	for i := len(k.allocs) - 1; i >= 0; i-- {
		s = &tir.Allocate{Buffer: k.allocs[i], Body: s, Loc: k.loc}
	}
	return s
}

func (k *scanKernel) copyBlock(name string, out *tir.Buffer, src *tir.Operand) tir.Stmt {
	return (&tir.Compute{Shape: []int64{k.c.b, k.c.h}, Body: func(n tir.Nest, _ tir.Expr) tir.Expr {
		return src.At(n.Index()...)
	}}).Block(name, out, k.loc)
}

func (k *scanKernel) rnnStep(h *tir.Buffer) []tir.Stmt {
	gates := k.local("gates", k.c.b, k.c.gates)
	return []tir.Stmt{
		k.gemm("gates", h, 0, k.c.gates, gates),
		k.state("hidden", h, func(b, j tir.Expr) tir.Expr { return k.act(0, k.pre(gates, 0, b, j)) }),
	}
}

func (k *scanKernel) gruStep(h *tir.Buffer) []tir.Stmt {
	c := k.c
	hc := k.local("hc", c.b, c.h)
	var out []tir.Stmt
	var gates *tir.Buffer
	if c.lbr {
		gates = k.local("gates", c.b, c.gates)
		rbh := k.ins[3]
		out = append(out, k.gemm("gates", h, 0, c.gates, gates),
			k.elementwise("candidate", hc, c.h, func(b, j tir.Expr) tir.Expr {
				r := k.act(0, k.pre(gates, 1, b, j))
				rec := tir.Add(tir.Load(gates, b, tir.Add(j, tir.Int(2*c.h))), rbh.At(j))
				return k.act(1, tir.Add(k.xw(2, b, j), tir.Mul(r, rec)))
			}))
	} else {
		gates = k.local("gates", c.b, 2*c.h)
		rh, gh := k.local("rh", c.b, c.h), k.local("gh", c.b, c.h)
		out = append(out, k.gemm("gates", h, 0, 2*c.h, gates),
			k.elementwise("reset", rh, c.h, func(b, j tir.Expr) tir.Expr {
				return tir.Mul(k.act(0, k.pre(gates, 1, b, j)), tir.Load(h, b, j))
			}),
			k.gemm("gates_h", rh, 2*c.h, c.h, gh),
			k.elementwise("candidate", hc, c.h, func(b, j tir.Expr) tir.Expr {
				return k.act(1, tir.Add(k.xw(2, b, j), tir.Load(gh, b, j)))
			}))
	}
	return append(out, k.state("hidden", h, func(b, j tir.Expr) tir.Expr {
		z := k.act(0, k.pre(gates, 0, b, j))
		return tir.Add(tir.Mul(tir.Sub(tir.Float(k.dt, 1), z), tir.Load(hc, b, j)), tir.Mul(z, tir.Load(h, b, j)))
	}))
}

func (k *scanKernel) lstmStep(h, cs *tir.Buffer) []tir.Stmt {
	c := k.c
	p := k.ins[4]
	gates := k.local("gates", c.b, c.gates)
	// gates i, o, f (0, 1, 2) have peepholes p[gate·H + j]
	peep := func(gate int64, b, j tir.Expr) tir.Expr {
		if isZeroSplat(p) {
			return k.pre(gates, gate, b, j)
		}
		return tir.Add(k.pre(gates, gate, b, j), tir.Mul(p.At(tir.Add(j, tir.Int(gate*c.h))), tir.Load(cs, b, j)))
	}
	return []tir.Stmt{
		k.gemm("gates", h, 0, c.gates, gates),
		k.state("cell", cs, func(b, j tir.Expr) tir.Expr {
			i := k.act(0, peep(0, b, j))
			var f tir.Expr = tir.Sub(tir.Float(k.dt, 1), i)
			if !c.inputForget {
				f = k.act(0, peep(2, b, j))
			}
			return tir.Add(tir.Mul(f, tir.Load(cs, b, j)), tir.Mul(i, k.act(1, k.pre(gates, 3, b, j))))
		}),
		k.state("hidden", h, func(b, j tir.Expr) tir.Expr {
			return tir.Mul(k.act(0, peep(1, b, j)), k.c.acts[2].Expr(tir.Load(cs, b, j), k.dt))
		}),
	}
}

// isZeroSplat reports whether o is a splat of 0 (absent peepholes).
func isZeroSplat(o *tir.Operand) bool {
	f, ok := o.Splat.(*tir.FloatImm)
	return ok && f.Value == 0
}
