package llvm

import (
	"github.com/llir/llvm/ir/value"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// Loop versioning of lane predicates. A block inside a vectorized loop
// whose predicate depends on the vector lane (a split's guarded tail) is
// predicated: its loads and stores are masked, which keeps a register
// tile's accumulators in memory across the reduction loops around it. A
// serial loop that encloses such a block, where the predicate mentions
// only the vector loop's variable and variables bound outside the serial
// loop, is generated twice: if the predicate holds on every lane (checked
// once, before the loop) a copy where the block runs unpredicated (whole,
// unmasked vectors), else the predicated copy.

// versionCands lists the lane-predicated blocks of x's body that can be
// versioned at x (see above) and are not yet versioned.
func (g *fgen) versionCands(x *tir.For) []versionCand {
	inner := map[*tir.Var]bool{x.Var: true}
	var out []versionCand
	var walk func(st tir.Stmt, vec *tir.For)
	walk = func(st tir.Stmt, vec *tir.For) {
		switch s := st.(type) {
		case nil:
			return
		case *tir.For:
			inner[s.Var] = true
			if s.Kind == tir.Vectorized {
				if vec != nil {
					return
				}
				vec = s
			}
			walk(s.Body, vec)
		case *tir.SeqStmt:
			for _, c := range s.Stmts {
				walk(c, vec)
			}
		case *tir.LetStmt:
			inner[s.Var] = true
			walk(s.Body, vec)
		case *tir.IfThenElse:
			walk(s.Then, vec)
			walk(s.Else, vec)
		case *tir.Allocate:
			walk(s.Body, vec)
		case *tir.BlockRealize:
			b := s.Block
			for _, iv := range b.IterVars {
				inner[iv.Var] = true
			}
			if vec != nil && !g.predicateHolds(s) && !g.versioned[s] {
				if c, ok := g.versionCand(s, vec, inner); ok {
					out = append(out, c)
				}
			}
			if b.Init != nil {
				walk(b.Init, vec)
			}
			walk(b.Body, vec)
		}
	}
	walk(x.Body, nil)
	return out
}

type versionCand struct {
	r     *tir.BlockRealize
	vec   *tir.Var
	lanes int64
}

// versionCand checks r's predicate: pure integer arithmetic on constants,
// the vector loop's variable (which it must mention) and variables bound
// outside the candidate loop; the vector loop from 0 with a constant
// extent.
func (g *fgen) versionCand(r *tir.BlockRealize, vec *tir.For, inner map[*tir.Var]bool) (versionCand, bool) {
	lo, ok1 := vec.Min.(*tir.IntImm)
	ext, ok2 := vec.Extent.(*tir.IntImm)
	if !ok1 || !ok2 || lo.Value != 0 || ext.Value < 2 || ext.Value > MaxVectorLanes {
		return versionCand{}, false
	}
	ok, usesLane := true, false
	tir.VisitExpr(r.Predicate, func(e tir.Expr) bool {
		switch v := e.(type) {
		case *tir.Var:
			if v == vec.Var {
				usesLane = true
			} else if inner[v] {
				ok = false
			} else if _, bound := g.vars[v]; !bound {
				ok = false
			}
		case *tir.IntImm, *tir.Binary, *tir.Cast, *tir.Not:
		default:
			ok = false
		}
		return ok
	})
	if !ok || !usesLane {
		return versionCand{}, false
	}
	return versionCand{r: r, vec: vec.Var, lanes: ext.Value}, true
}

// versionedLoop generates x (a serial loop) versioned on cands.
func (g *fgen) versionedLoop(x *tir.For, cands []versionCand) error {
	// all: every candidate's predicate on every lane, as scalars.
	var all value.Value
	for _, c := range cands {
		for k := int64(0); k < c.lanes; k++ {
			t, err := scalarType(c.vec.Type)
			if err != nil {
				return err
			}
			var p value.Value
			err = g.bind(c.vec, nil, constOf(t, float64(k)), func() error {
				var err error
				p, err = g.cond(c.r.Predicate)
				return err
			})
			if err != nil {
				return err
			}
			if all == nil {
				all = p
			} else {
				all = g.cur.NewAnd(all, p)
			}
		}
	}
	if g.versioned == nil {
		g.versioned = map[*tir.BlockRealize]bool{}
	}
	if g.assumed == nil {
		g.assumed = map[*tir.BlockRealize]bool{}
	}
	for _, c := range cands {
		g.versioned[c.r] = true
	}
	defer func() {
		for _, c := range cands {
			delete(g.versioned, c.r)
		}
	}()
	return g.ifThen(all, func() error {
		for _, c := range cands {
			g.assumed[c.r] = true
		}
		defer func() {
			for _, c := range cands {
				delete(g.assumed, c.r)
			}
		}()
		return g.serialLoop1(x)
	}, func() error { return g.serialLoop1(x) })
}

// peelLast reports whether serial loop x should have its last iteration
// peeled: a constant range of at least one iteration, and x's variable
// appears in the lane predicate of a block inside a vectorized loop in x's
// body. The peeled iteration binds the variable to a constant, so such a
// predicate (a split's tail) becomes a constant lane mask, which LLVM
// folds (loads and stores of whole or constant-masked vectors), while
// the other iterations are versioned (versionedLoop).
func peelLast(x *tir.For) bool {
	_, ok1 := x.Min.(*tir.IntImm)
	ext, ok2 := x.Extent.(*tir.IntImm)
	if !ok1 || !ok2 || ext.Value < 1 {
		return false
	}
	found := false
	var walk func(st tir.Stmt, vec *tir.For)
	walk = func(st tir.Stmt, vec *tir.For) {
		if found {
			return
		}
		switch s := st.(type) {
		case nil:
			return
		case *tir.For:
			if s.Kind == tir.Vectorized {
				if vec != nil {
					return
				}
				vec = s
			}
			walk(s.Body, vec)
		case *tir.SeqStmt:
			for _, c := range s.Stmts {
				walk(c, vec)
			}
		case *tir.LetStmt:
			walk(s.Body, vec)
		case *tir.IfThenElse:
			walk(s.Then, vec)
			walk(s.Else, vec)
		case *tir.Allocate:
			walk(s.Body, vec)
		case *tir.BlockRealize:
			if vec != nil && s.Predicate != nil && tir.UsesVar(s.Predicate, x.Var) && tir.UsesVar(s.Predicate, vec.Var) {
				found = true
				return
			}
			if s.Block.Init != nil {
				walk(s.Block.Init, vec)
			}
			walk(s.Block.Body, vec)
		}
	}
	walk(x.Body, nil)
	return found
}

// peeledLoop generates x's iterations but the last as a loop, then the
// last with x's variable bound to a constant.
func (g *fgen) peeledLoop(x *tir.For) error {
	lo := x.Min.(*tir.IntImm).Value
	ext := x.Extent.(*tir.IntImm).Value
	if ext > 1 {
		main := *x
		main.Extent = &tir.IntImm{Type: x.Extent.(*tir.IntImm).Type, Value: ext - 1}
		if err := g.serialLoop2(&main); err != nil {
			return err
		}
	}
	t, err := scalarType(x.Var.Type)
	if err != nil {
		return err
	}
	return g.bind(x.Var, nil, constOf(t, float64(lo+ext-1)), func() error { return g.stmt(x.Body) })
}
