package llvm

import (
	"github.com/llir/llvm/ir/value"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// blockRealize lowers a block in place (TVM's LowerOpaqueBlock): when the
// predicate holds, bind each iteration variable to its value, allocate
// the block's buffers, run Init when every reduce iteration variable is
// at the minimum of its domain (TVM semantics; a block without reduce
// variables runs Init every time), then run the body. The read/write
// regions are not needed for code generation.
func (g *fgen) blockRealize(x *tir.BlockRealize) error {
	b := x.Block
	if len(x.Values) != len(b.IterVars) {
		return g.errorf("block %q has %d iteration variables but %d bound values", b.Name, len(b.IterVars), len(x.Values))
	}
	run := func() error {
		vals := make([]value.Value, len(x.Values))
		for i, e := range x.Values {
			v, err := g.expr(e)
			if err != nil {
				return err
			}
			vals[i] = v
		}
		return g.bindIters(b, x.Values, vals, 0, func() error { return g.blockBody(b, 0) })
	}
	if g.predicateHolds(x) {
		return run()
	}
	c, err := g.expr(x.Predicate)
	if err != nil {
		return err
	}
	return g.guarded(c, x.Predicate, run, nil)
}

func (g *fgen) bindIters(b *tir.Block, defs []tir.Expr, vals []value.Value, i int, body func() error) error {
	if i == len(vals) {
		return body()
	}
	return g.bind(b.IterVars[i].Var, defs[i], vals[i], func() error {
		return g.bindIters(b, defs, vals, i+1, body)
	})
}

// blockBody allocates b.Allocs[i:] and then runs Init (guarded) and Body.
func (g *fgen) blockBody(b *tir.Block, i int) error {
	if i < len(b.Allocs) {
		return g.allocate(b.Allocs[i], b, func() error { return g.blockBody(b, i+1) })
	}
	if b.Init != nil {
		c := initCond(b)
		if c == nil {
			if err := g.stmt(b.Init); err != nil {
				return err
			}
		} else {
			cv, err := g.expr(c)
			if err != nil {
				return err
			}
			if err := g.guarded(cv, c, func() error { return g.stmt(b.Init) }, nil); err != nil {
				return err
			}
		}
	}
	return g.stmt(b.Body)
}

// initCond is the condition under which a block's Init runs: every
// reduce iteration variable equals its domain minimum (nil: always).
func initCond(b *tir.Block) tir.Expr {
	var c tir.Expr
	for _, iv := range b.IterVars {
		if iv.Kind != tir.Reduce {
			continue
		}
		min := iv.Dom.Min
		if min.DType() != iv.Var.Type {
			min = &tir.Cast{Type: iv.Var.Type, X: min}
		}
		eq := tir.Bin(tir.OpEQ, iv.Var, min)
		if c == nil {
			c = eq
		} else {
			c = tir.Bin(tir.OpAnd, c, eq)
		}
	}
	return c
}
