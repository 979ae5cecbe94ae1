package schedule

import (
	"strings"

	"fmt"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// Compute location primitives (TVM's
// src/tir/schedule/primitive/compute_at.cc): compute_at moves a producer
// block under a loop of its consumers, computing at each iteration the
// region the consumers below the loop need; reverse_compute_at moves a
// consumer under a loop of its producers, computing at each iteration the
// region they have just produced; sample_compute_location draws one of the
// loops where compute_at is legal (or the root, meaning "stay").
//
// Region inference: every access of the buffer below the loop is taken
// with the enclosing block bindings substituted, the loops below the
// target loop relaxed to their ranges and the loops at and above it kept
// symbolic (TVM's arith::EvalSet over the loop domains). The moved block's
// iteration variables that index the buffer directly (v or v + c) get the
// required range intersected with their domain; the others keep their
// whole domain. A range whose extent is not a constant gets the constant
// bound of its extent as loop extent and a predicate (TVM does the same).
// The moved block keeps its name, iteration variables, regions and body;
// its new loops are named ax0, ax1, ... and loops of extent 1 are dropped.

// ---- tree positions ----

// treePos gives every statement of a body its pre-order position and the
// last position of its subtree.
type treePos struct {
	pre, end map[tir.Stmt]int
	order    []tir.Stmt
}

func positions(body tir.Stmt) *treePos {
	p := &treePos{pre: map[tir.Stmt]int{}, end: map[tir.Stmt]int{}}
	var walk func(s tir.Stmt)
	walk = func(s tir.Stmt) {
		if _, seen := p.pre[s]; !seen {
			p.pre[s] = len(p.order)
		}
		p.order = append(p.order, s)
		for _, c := range tir.SubStmts(s) {
			walk(c)
		}
		p.end[s] = len(p.order) - 1
	}
	if body != nil {
		walk(body)
	}
	return p
}

// inside reports whether x lies in the subtree of s.
func (p *treePos) inside(x, s tir.Stmt) bool {
	return p.pre[x] >= p.pre[s] && p.pre[x] <= p.end[s]
}

// nodeLoads are the buffers st itself (not its children) loads; nodeStore
// is the buffer it stores, or nil.
func nodeLoads(st tir.Stmt) []*tir.Buffer {
	var es []tir.Expr
	switch x := st.(type) {
	case *tir.For:
		es = []tir.Expr{x.Min, x.Extent}
	case *tir.BlockRealize:
		es = append(append(es, x.Values...), x.Predicate)
	case *tir.BufferStore:
		es = append([]tir.Expr{x.Value}, x.Indices...)
	case *tir.IfThenElse:
		es = []tir.Expr{x.Cond}
	case *tir.LetStmt:
		es = []tir.Expr{x.Value}
	case *tir.Evaluate:
		es = []tir.Expr{x.Value}
	}
	var out []*tir.Buffer
	for _, e := range es {
		tir.VisitExpr(e, func(x tir.Expr) bool {
			if l, ok := x.(*tir.BufferLoad); ok {
				out = append(out, l.Buffer)
			}
			return true
		})
	}
	return out
}

func nodeStore(st tir.Stmt) *tir.Buffer {
	if x, ok := st.(*tir.BufferStore); ok {
		return x.Buffer
	}
	return nil
}

// blockBuffers are the buffers the statements of st load and store.
func blockBuffers(st tir.Stmt) (loads, stores map[*tir.Buffer]bool) {
	loads, stores = map[*tir.Buffer]bool{}, map[*tir.Buffer]bool{}
	tir.VisitStmt(st, func(x tir.Stmt) bool {
		for _, b := range nodeLoads(x) {
			loads[b] = true
		}
		if b := nodeStore(x); b != nil {
			stores[b] = true
		}
		return true
	})
	return
}

// enclosingBlockName is the name of the innermost block around position i
// of p ("" when none).
func (p *treePos) enclosingBlockName(i int) string {
	name := ""
	for j := 0; j <= i; j++ {
		if r, ok := p.order[j].(*tir.BlockRealize); ok && r.Block != nil && p.end[r] >= i {
			name = r.Block.Name
		}
	}
	return name
}

// scopeOf is the innermost block strictly above target on path (nil: the
// function body).
func scopeOf(path []tir.Stmt) *tir.Block {
	for i := len(path) - 2; i >= 0; i-- {
		if b, ok := path[i].(*tir.Block); ok {
			return b
		}
	}
	return nil
}

func isParam(f *tir.PrimFunc, b *tir.Buffer) bool {
	for _, p := range f.Params {
		if p.Buffer == b {
			return true
		}
	}
	return false
}

// ---- index patterns ----

// ivPattern maps block iteration variables to the buffer dimension that
// they index directly (index v + off).
type ivUse struct {
	dim int
	off int64
}

// directIndex matches e against v + c for an iteration variable of ivs.
func directIndex(e tir.Expr, ivs map[*tir.Var]bool) (*tir.Var, int64, bool) {
	switch x := e.(type) {
	case *tir.Var:
		if ivs[x] {
			return x, 0, true
		}
	case *tir.Binary:
		if v, ok := x.A.(*tir.Var); ok && ivs[v] {
			if c, ok := constInt(x.B); ok {
				switch x.Op {
				case tir.OpAdd:
					return v, c, true
				case tir.OpSub:
					return v, -c, true
				}
			}
		}
	}
	return nil, 0, false
}

// accessPattern returns, for the accesses of buf in block b (stores when
// stores, else loads), how b's iteration variables index it; all the
// accesses must agree. The error is a reason.
func accessPattern(b *tir.Block, buf *tir.Buffer, stores bool) (map[*tir.Var]ivUse, string) {
	ivs := map[*tir.Var]bool{}
	for _, iv := range b.IterVars {
		ivs[iv.Var] = true
	}
	var first []tir.Expr
	agree := true
	see := func(idx []tir.Expr) {
		if first == nil {
			first = idx
			return
		}
		for i := range idx {
			if !tir.Equal(idx[i], first[i]) {
				agree = false
			}
		}
	}
	for _, st := range []tir.Stmt{b.Init, b.Body} {
		tir.VisitStmt(st, func(x tir.Stmt) bool {
			if s, ok := x.(*tir.BufferStore); ok && stores && s.Buffer == buf {
				see(s.Indices)
			}
			if !stores {
				for _, e := range nodeExprs(x) {
					tir.VisitExpr(e, func(y tir.Expr) bool {
						if l, ok := y.(*tir.BufferLoad); ok && l.Buffer == buf {
							see(l.Indices)
						}
						return true
					})
				}
			}
			return true
		})
	}
	verb := "loads"
	if stores {
		verb = "stores"
	}
	if first == nil {
		return nil, fmt.Sprintf("%s nothing of %%%s", verb, buf.Name)
	}
	if !agree {
		return nil, fmt.Sprintf("%s %%%s at different indices", verb, buf.Name)
	}
	out := map[*tir.Var]ivUse{}
	for d, e := range first {
		v, c, ok := directIndex(e, ivs)
		if !ok {
			continue
		}
		if _, dup := out[v]; dup {
			return nil, fmt.Sprintf("%s %%%s with %%%s in two dimensions", verb, buf.Name, v.Name)
		}
		out[v] = ivUse{dim: d, off: c}
	}
	return out, ""
}

func nodeExprs(st tir.Stmt) []tir.Expr {
	switch x := st.(type) {
	case *tir.For:
		return []tir.Expr{x.Min, x.Extent}
	case *tir.BlockRealize:
		return append(append([]tir.Expr(nil), x.Values...), x.Predicate)
	case *tir.BufferStore:
		return append([]tir.Expr{x.Value}, x.Indices...)
	case *tir.IfThenElse:
		return []tir.Expr{x.Cond}
	case *tir.LetStmt:
		return []tir.Expr{x.Value}
	case *tir.Evaluate:
		return []tir.Expr{x.Value}
	}
	return nil
}

// ---- loop nest construction ----

// buildNest realizes block under new loops: iteration variable i ranges
// over need[i] (nil: its whole domain) intersected with its domain. A
// range of non-constant length gets a loop of its constant upper bound
// and a guard, or, when it has none (a symbolic shape), a loop of the
// symbolic length (empty when that is not positive). Returns the nest or
// a reason.
func buildNest(r *tir.BlockRealize, need []*tir.SymRange, env tir.BoundEnv) (tir.Stmt, string) {
	b := r.Block
	type lp struct {
		v   *tir.Var
		ext tir.Expr
	}
	var loops []lp
	values := make([]tir.Expr, len(b.IterVars))
	var pred tir.Expr
	inner := tir.BoundEnv{}
	for k, v := range env {
		inner[k] = v
	}
	for i, iv := range b.IterVars {
		dlo := iv.Dom.Min
		dhi := tir.Simplify(tir.Sub(tir.Add(iv.Dom.Min, iv.Dom.Extent), tir.IntOf(iv.Dom.Min.DType(), 1)), env)
		lo, hi := dlo, dhi
		if need[i] != nil {
			lo = tir.SymMax(need[i].Lo, dlo, env)
			hi = tir.SymMin(need[i].Hi, dhi, env)
		}
		ext := tir.Simplify(tir.Add(tir.Sub(hi, lo), tir.IntOf(lo.DType(), 1)), env)
		n, isConst := constInt(ext)
		guarded := false
		if !isConst {
			hiBound, ok := extentBound(lo, hi, env)
			if !ok {
				if !symbolicLength(ext, env) {
					return nil, fmt.Sprintf("cannot bound the extent %s of the region of %%%s", tir.ExprString(ext), iv.Var.Name)
				}
				t := tir.NewVar(fmt.Sprintf("ax%d", len(loops)), lo.DType())
				loops = append(loops, lp{t, ext})
				values[i] = tir.Simplify(tir.Add(lo, t), inner)
				continue
			}
			n, guarded = hiBound, true
		}
		if n <= 0 {
			return nil, fmt.Sprintf("the region of %%%s is empty", iv.Var.Name)
		}
		if n == 1 && !guarded {
			values[i] = lo
			continue
		}
		t := tir.NewVar(fmt.Sprintf("ax%d", len(loops)), lo.DType())
		loops = append(loops, lp{t, tir.IntOf(lo.DType(), n)})
		inner[t] = tir.Interval{Lo: 0, Hi: n - 1}
		values[i] = tir.Simplify(tir.Add(lo, t), inner)
		if guarded {
			// value < hi + 1, one conjunct per term of hi = min(...).
			for _, h := range minTerms(hi) {
				c := tir.Simplify(tir.Bin(tir.OpLT, values[i], tir.Simplify(tir.Add(h, tir.IntOf(h.DType(), 1)), env)), inner)
				if k, ok := c.(*tir.IntImm); ok && k.Value != 0 {
					continue
				}
				if pred == nil {
					pred = c
				} else {
					pred = tir.Bin(tir.OpAnd, pred, c)
				}
			}
		}
	}
	var st tir.Stmt = &tir.BlockRealize{Values: values, Predicate: pred, Block: b, Loc: r.Loc}
	for i := len(loops) - 1; i >= 0; i-- {
		st = &tir.For{Var: loops[i].v, Min: tir.IntOf(loops[i].v.Type, 0), Extent: loops[i].ext, Body: st, Loc: r.Loc}
	}
	return st, ""
}

// symbolicLength reports whether ext, a length with no constant bound,
// is symbolic: it uses a variable env does not bound (a scalar parameter,
// or a loop of non-constant extent) and loads no memory; it then serves
// as a loop extent as it is.
func symbolicLength(ext tir.Expr, env tir.BoundEnv) bool {
	free, load := false, false
	tir.VisitExpr(ext, func(e tir.Expr) bool {
		switch x := e.(type) {
		case *tir.BufferLoad:
			load = true
		case *tir.Var:
			if _, bounded := env[x]; !bounded {
				free = true
			}
		}
		return true
	})
	return free && !load
}

// minTerms are the operands of a tree of min (e itself otherwise).
func minTerms(e tir.Expr) []tir.Expr {
	if b, ok := e.(*tir.Binary); ok && b.Op == tir.OpMin {
		return append(minTerms(b.A), minTerms(b.B)...)
	}
	return []tir.Expr{e}
}

func maxTerms(e tir.Expr) []tir.Expr {
	if b, ok := e.(*tir.Binary); ok && b.Op == tir.OpMax {
		return append(maxTerms(b.A), maxTerms(b.B)...)
	}
	return []tir.Expr{e}
}

// extentBound is a constant upper bound of hi - lo + 1: the smallest over
// the terms of hi = min(...) and lo = max(...) of the bound of their
// difference.
func extentBound(lo, hi tir.Expr, env tir.BoundEnv) (int64, bool) {
	best, found := int64(0), false
	for _, h := range minTerms(hi) {
		for _, l := range maxTerms(lo) {
			d := tir.Simplify(tir.Add(tir.Sub(h, l), tir.IntOf(h.DType(), 1)), env)
			bd := tir.Bound(d, env)
			if bd.IsFull() {
				continue
			}
			if !found || bd.Hi < best {
				best, found = bd.Hi, true
			}
		}
	}
	return best, found
}

// removeBlock removes realization r from body together with the loops
// that hold nothing else.
func removeBlock(body tir.Stmt, r *tir.BlockRealize) tir.Stmt {
	path := PathTo(body, r)
	top := tir.Stmt(r)
	for i := len(path) - 2; i >= 0; i-- {
		f, ok := path[i].(*tir.For)
		if !ok || f.Body != path[i+1] {
			break
		}
		top = f
	}
	// The parent must be a sequence for the removal to be a deletion.
	empty := &tir.SeqStmt{}
	for i := len(path) - 1; i > 0; i-- {
		if path[i] == top {
			if _, seq := path[i-1].(*tir.SeqStmt); !seq {
				return tir.Mutate(body, func(x tir.Stmt) (tir.Stmt, bool) {
					if x == top {
						return empty, true
					}
					return nil, false
				})
			}
		}
	}
	return tir.Mutate(body, func(x tir.Stmt) (tir.Stmt, bool) {
		if x == top {
			return nil, true
		}
		return nil, false
	})
}

// insertInLoop returns loop with st inserted in its body before child
// index at (after the last child when at < 0 ... see callers).
func insertInLoop(loop *tir.For, at int, st tir.Stmt) *tir.For {
	var kids []tir.Stmt
	if q, ok := loop.Body.(*tir.SeqStmt); ok {
		kids = q.Stmts
	} else {
		kids = []tir.Stmt{loop.Body}
	}
	out := append(append(append([]tir.Stmt(nil), kids[:at]...), st), kids[at:]...)
	c := *loop
	c.Body = &tir.SeqStmt{Stmts: out, Loc: loop.Body.Location()}
	return &c
}

func loopKids(loop *tir.For) []tir.Stmt {
	if q, ok := loop.Body.(*tir.SeqStmt); ok {
		return q.Stmts
	}
	return []tir.Stmt{loop.Body}
}

// ---- compute_at / reverse_compute_at ----

// locate finds b and l and checks that they are disjoint and in the same
// scope.
func (s *Schedule) locate(prim string, b BlockRV, l LoopRV) (*tir.BlockRealize, *tir.For, *treePos, error) {
	r := findBlock(s.f.Body, b.Name)
	if r == nil {
		return nil, nil, nil, s.Errorf(prim, &b, nil, "no such block in @%s", s.f.Name)
	}
	loop := findLoop(s.f.Body, l.Var)
	if loop == nil {
		return nil, nil, nil, s.Errorf(prim, &b, &l, "no such loop in @%s", s.f.Name)
	}
	p := positions(s.f.Body)
	if p.inside(r, loop) {
		return nil, nil, nil, s.Errorf(prim, &b, &l, "the block is already under the loop")
	}
	if p.inside(loop, r) {
		return nil, nil, nil, s.Errorf(prim, &b, &l, "the loop is inside the block")
	}
	if scopeOf(PathTo(s.f.Body, r)) != scopeOf(PathTo(s.f.Body, loop)) {
		return nil, nil, nil, s.Errorf(prim, &b, &l, "the block and the loop are not in the same scope block")
	}
	reads, writes := blockBuffers(r.Block)
	if x := selfRead(r.Block); x != nil {
		return nil, nil, nil, s.ErrorAt(prim, &b, &l, r, "the block reads %%%s, which it writes, at other elements than it updates (not a complete block)", x.Name)
	}
	for x := range writes {
		reads[x] = true
	}
	if x := allocatedOutside(s.f.Body, reads, loop); x != nil {
		return nil, nil, nil, s.Errorf(prim, &b, &l, "the block accesses %%%s, whose allocation does not enclose the loop", x.Name)
	}
	if r.Predicate != nil {
		return nil, nil, nil, s.ErrorAt(prim, &b, &l, r, "the block has a predicate %s (a guarded tail); move it before splitting its loops", tir.ExprString(r.Predicate))
	}
	return r, loop, p, nil
}

// selfRead returns a buffer that block b loads and stores other than as
// a reduction's update (a load at exactly the store's indices in a block
// with reduce variables), or nil.
func selfRead(b *tir.Block) *tir.Buffer {
	reduce := false
	for _, iv := range b.IterVars {
		reduce = reduce || iv.Kind == tir.Reduce
	}
	stores := map[*tir.Buffer][][]tir.Expr{}
	for _, st := range []tir.Stmt{b.Init, b.Body} {
		tir.VisitStmt(st, func(x tir.Stmt) bool {
			if s, ok := x.(*tir.BufferStore); ok {
				stores[s.Buffer] = append(stores[s.Buffer], s.Indices)
			}
			return true
		})
	}
	var bad *tir.Buffer
	for _, st := range []tir.Stmt{b.Init, b.Body} {
		tir.VisitStmt(st, func(x tir.Stmt) bool {
			for _, e := range nodeExprs(x) {
				tir.VisitExpr(e, func(y tir.Expr) bool {
					l, ok := y.(*tir.BufferLoad)
					if !ok || stores[l.Buffer] == nil {
						return true
					}
					ok = reduce
					for _, idx := range stores[l.Buffer] {
						ok = ok && equalExprs(idx, l.Indices)
					}
					if !ok && bad == nil {
						bad = l.Buffer
					}
					return true
				})
			}
			return true
		})
	}
	return bad
}

// bindingEnv is the schedule's loop environment plus the domains of the
// enclosing blocks' iteration variables.
func (s *Schedule) bindingEnv() tir.BoundEnv {
	env := s.loopEnv()
	tir.VisitStmt(s.f.Body, func(x tir.Stmt) bool {
		if b, ok := x.(*tir.Block); ok {
			for _, iv := range b.IterVars {
				lo, ok1 := constInt(iv.Dom.Min)
				ext, ok2 := constInt(iv.Dom.Extent)
				if ok1 && ok2 && ext > 0 {
					env[iv.Var] = tir.Interval{Lo: lo, Hi: lo + ext - 1}
				}
			}
		}
		return true
	})
	return env
}

// relaxSharedThreads relaxes the threadIdx-bound loops enclosing loop when
// an output is in shared memory (TVM relaxes regions by storage scope): a
// shared buffer is visible to every thread of the block, so the block
// computes the region all its threads read, not one thread's.
func relaxSharedThreads(re *tir.RelaxEnv, body tir.Stmt, loop *tir.For, outs []*tir.Buffer) {
	shared := false
	for _, x := range outs {
		shared = shared || x.Scope == tir.ScopeShared
	}
	if !shared {
		return
	}
	for _, st := range PathTo(body, loop) {
		f, ok := st.(*tir.For)
		if !ok || f.Kind != tir.ThreadBinding || !strings.HasPrefix(f.Thread, "threadIdx") {
			continue
		}
		re.Relaxed[f.Var] = tir.SymRange{Lo: f.Min, Hi: tir.Simplify(tir.Add(f.Min, tir.Sub(f.Extent, tir.Int(1))), re.Fixed)}
	}
}

// planComputeAt returns the body after compute_at(b, l), or the refusal.
func (s *Schedule) planComputeAt(prim string, b BlockRV, l LoopRV) (tir.Stmt, error) {
	r, loop, p, err := s.locate(prim, b, l)
	if err != nil {
		return nil, err
	}
	blk := r.Block
	reads, writes := blockBuffers(blk)
	if len(writes) == 0 {
		return nil, s.Errorf(prim, &b, &l, "the block stores nothing")
	}
	for x := range writes {
		delete(reads, x)
	}
	if p.pre[r] > p.pre[loop] {
		return nil, s.Errorf(prim, &b, &l, "the block runs after the loop; use reverse_compute_at to move a consumer")
	}
	var outBufs []*tir.Buffer
	for _, st := range p.order {
		if x := nodeStore(st); x != nil && writes[x] && !p.inside(st, r) {
			return nil, s.ErrorAt(prim, &b, &l, p.realizeAt(st), "buffer %%%s is also written by %s", x.Name, describeAt(p, st))
		}
	}
	for _, x := range sortedBufs(writes) {
		if isParam(s.f, x) {
			return nil, s.Errorf(prim, &b, &l, "the block writes %%%s, a parameter of @%s (an output block cannot be computed at a loop)", x.Name, s.f.Name)
		}
		outBufs = append(outBufs, x)
	}
	// Consumers: every load of the written buffers lies under the loop.
	firstUse := -1
	for i, st := range p.order {
		if p.inside(st, r) {
			continue
		}
		for _, x := range nodeLoads(st) {
			if !writes[x] {
				continue
			}
			if !p.inside(st, loop) {
				return nil, s.ErrorAt(prim, &b, &l, p.realizeAt(st), "consumer %s of %%%s is not under the loop", describeAt(p, st), x.Name)
			}
			if firstUse < 0 {
				firstUse = i
			}
		}
	}
	if firstUse < 0 {
		return nil, s.Errorf(prim, &b, &l, "no consumer of the block's output under the loop")
	}
	// Dependences: nothing between the block and its new place changes
	// its inputs or touches its outputs; nothing in the loop writes its
	// inputs.
	for i := p.end[r] + 1; i < firstUse; i++ {
		st := p.order[i]
		if x := nodeStore(st); x != nil && (reads[x] || (writes[x] && !p.inside(st, r))) {
			return nil, s.ErrorAt(prim, &b, &l, p.realizeAt(st), "%s writes %%%s between the block and the loop; moving the block would break the dependence", describeAt(p, st), x.Name)
		}
	}
	for i := p.pre[loop]; i <= p.end[loop]; i++ {
		st := p.order[i]
		if x := nodeStore(st); x != nil && reads[x] {
			return nil, s.ErrorAt(prim, &b, &l, p.realizeAt(st), "%s under the loop writes %%%s, which the block reads", describeAt(p, st), x.Name)
		}
	}
	// Region inference.
	env := s.bindingEnv()
	re := tir.NewRelaxEnv(env)
	relaxSharedThreads(re, s.f.Body, loop, outBufs)
	acc := tir.CollectAccesses(loop.Body, writes, false, re)
	need := make([]*tir.SymRange, len(blk.IterVars))
	for _, x := range outBufs {
		a := acc[x]
		if a == nil {
			continue
		}
		if !a.OK {
			return nil, s.Errorf(prim, &b, &l, "cannot bound the region of %%%s the loop's consumers read", x.Name)
		}
		pat, why := accessPattern(blk, x, true)
		if why != "" {
			return nil, s.Errorf(prim, &b, &l, "the block %s", why)
		}
		for i, iv := range blk.IterVars {
			u, ok := pat[iv.Var]
			if !ok || iv.Kind != tir.Spatial {
				continue
			}
			off := tir.IntOf(iv.Var.Type, u.off)
			rg := tir.SymRange{Lo: tir.Simplify(tir.Sub(a.Dims[u.dim].Lo, off), env), Hi: tir.Simplify(tir.Sub(a.Dims[u.dim].Hi, off), env)}
			if need[i] != nil {
				rg = tir.UnionRange(*need[i], rg, env)
			}
			need[i] = &rg
		}
	}
	nest, why := buildNest(r, need, env)
	if why != "" {
		return nil, s.Errorf(prim, &b, &l, "%s", why)
	}
	kids := loopKids(loop)
	at := 0
	for i, k := range kids {
		if p.inside(p.order[firstUse], k) {
			at = i
			break
		}
	}
	return s.moveInto(r, loop, at, nest), nil
}

// moveInto inserts nest in loop's body at child index at and removes r's
// old nest.
func (s *Schedule) moveInto(r *tir.BlockRealize, loop *tir.For, at int, nest tir.Stmt) tir.Stmt {
	nl := insertInLoop(loop, at, nest)
	body := tir.Mutate(s.f.Body, func(x tir.Stmt) (tir.Stmt, bool) {
		if x == tir.Stmt(loop) {
			return nl, true
		}
		return nil, false
	})
	return removeBlock(body, r)
}

// realizeAt is the realization of the innermost block holding st (st
// itself when none), the part of the IR an error about st renders.
func (p *treePos) realizeAt(st tir.Stmt) tir.Stmt {
	var out tir.Stmt = st
	for j := 0; j <= p.pre[st]; j++ {
		if r, ok := p.order[j].(*tir.BlockRealize); ok && p.end[r] >= p.pre[st] {
			out = r
		}
	}
	return out
}

// describeAt names the statement at st: its block, else the statement.
func describeAt(p *treePos, st tir.Stmt) string {
	if name := p.enclosingBlockName(p.pre[st]); name != "" {
		return fmt.Sprintf("block %q", name)
	}
	return "a statement"
}

func sortedBufs(m map[*tir.Buffer]bool) []*tir.Buffer {
	var out []*tir.Buffer
	for b := range m {
		out = append(out, b)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Name < out[j-1].Name; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// planReverseComputeAt returns the body after reverse_compute_at(b, l).
func (s *Schedule) planReverseComputeAt(prim string, b BlockRV, l LoopRV) (tir.Stmt, error) {
	r, loop, p, err := s.locate(prim, b, l)
	if err != nil {
		return nil, err
	}
	blk := r.Block
	reads, writes := blockBuffers(blk)
	if len(writes) == 0 {
		return nil, s.Errorf(prim, &b, &l, "the block stores nothing")
	}
	for x := range writes {
		delete(reads, x)
	}
	if p.pre[r] < p.pre[loop] {
		return nil, s.Errorf(prim, &b, &l, "the block runs before the loop; use compute_at to move a producer")
	}
	produced := map[*tir.Buffer]bool{}
	lastProd := -1
	for i, st := range p.order {
		x := nodeStore(st)
		if x == nil {
			continue
		}
		if writes[x] && !p.inside(st, r) {
			return nil, s.ErrorAt(prim, &b, &l, p.realizeAt(st), "buffer %%%s is also written by %s", x.Name, describeAt(p, st))
		}
		if reads[x] && p.inside(st, loop) {
			produced[x] = true
			lastProd = i
		}
	}
	if len(produced) == 0 {
		return nil, s.Errorf(prim, &b, &l, "no producer of the block's inputs under the loop")
	}
	for _, st := range p.order {
		if x := nodeStore(st); x != nil && produced[x] && !p.inside(st, loop) {
			return nil, s.ErrorAt(prim, &b, &l, p.realizeAt(st), "producer %s of %%%s is not under the loop", describeAt(p, st), x.Name)
		}
	}
	for i := p.end[loop] + 1; i < p.pre[r]; i++ {
		st := p.order[i]
		if x := nodeStore(st); x != nil && (reads[x] || writes[x]) {
			return nil, s.ErrorAt(prim, &b, &l, p.realizeAt(st), "%s writes %%%s between the loop and the block; moving the block would break the dependence", describeAt(p, st), x.Name)
		}
		for _, x := range nodeLoads(st) {
			if writes[x] {
				return nil, s.ErrorAt(prim, &b, &l, p.realizeAt(st), "%s reads %%%s, the block's output, between the loop and the block", describeAt(p, st), x.Name)
			}
		}
	}
	for i := p.pre[loop]; i <= p.end[loop]; i++ {
		for _, x := range nodeLoads(p.order[i]) {
			if writes[x] {
				return nil, s.ErrorAt(prim, &b, &l, p.realizeAt(p.order[i]), "%s under the loop reads %%%s, the block's output", describeAt(p, p.order[i]), x.Name)
			}
		}
	}
	env := s.bindingEnv()
	re := tir.NewRelaxEnv(env)
	acc := tir.CollectAccesses(loop.Body, produced, true, re)
	need := make([]*tir.SymRange, len(blk.IterVars))
	for _, x := range sortedBufs(produced) {
		a := acc[x]
		if !a.OK {
			return nil, s.Errorf(prim, &b, &l, "cannot bound the region of %%%s the loop produces", x.Name)
		}
		pat, why := accessPattern(blk, x, false)
		if why != "" {
			return nil, s.Errorf(prim, &b, &l, "the block %s", why)
		}
		used := map[int]bool{}
		for i, iv := range blk.IterVars {
			u, ok := pat[iv.Var]
			if !ok {
				continue
			}
			used[u.dim] = true
			// Produced elements lie inside the buffer.
			dim := a.Dims[u.dim]
			dim.Lo = tir.SymMax(dim.Lo, tir.IntOf(dim.Lo.DType(), 0), env)
			dim.Hi = tir.SymMin(dim.Hi, tir.Simplify(tir.Sub(x.Shape[u.dim], tir.IntOf(x.Shape[u.dim].DType(), 1)), env), env)
			off := tir.IntOf(iv.Var.Type, u.off)
			rg := tir.SymRange{Lo: tir.Simplify(tir.Sub(dim.Lo, off), env), Hi: tir.Simplify(tir.Sub(dim.Hi, off), env)}
			if need[i] != nil && !(tir.Equal(need[i].Lo, rg.Lo) && tir.Equal(need[i].Hi, rg.Hi)) {
				return nil, s.Errorf(prim, &b, &l, "the loop produces different regions of the block's inputs for %%%s", iv.Var.Name)
			}
			if iv.Kind == tir.Reduce {
				dhi := tir.Simplify(tir.Sub(tir.Add(iv.Dom.Min, iv.Dom.Extent), tir.IntOf(iv.Var.Type, 1)), env)
				if !tir.ProveLE(rg.Lo, iv.Dom.Min, env) || !tir.ProveLE(dhi, rg.Hi, env) {
					return nil, s.Errorf(prim, &b, &l, "the loop produces part of the range of the reduce variable %%%s; moving the block would split its reduction", iv.Var.Name)
				}
				continue
			}
			need[i] = &rg
		}
		// Dimensions not indexed by an iteration variable must be produced
		// whole at every iteration.
		for d := range x.Shape {
			if used[d] {
				continue
			}
			hi := tir.Simplify(tir.Sub(x.Shape[d], tir.IntOf(x.Shape[d].DType(), 1)), env)
			if !tir.ProveLE(a.Dims[d].Lo, tir.IntOf(hi.DType(), 0), env) || !tir.ProveLE(hi, a.Dims[d].Hi, env) {
				return nil, s.Errorf(prim, &b, &l, "the block reads dimension %d of %%%s, which the loop produces in part, at an index that is not an iteration variable", d, x.Name)
			}
		}
	}
	nest, why := buildNest(r, need, env)
	if why != "" {
		return nil, s.Errorf(prim, &b, &l, "%s", why)
	}
	kids := loopKids(loop)
	at := len(kids)
	for i, k := range kids {
		if p.inside(p.order[lastProd], k) {
			at = i + 1
		}
	}
	return s.moveInto(r, loop, at, nest), nil
}

// install verifies a rebuilt body and makes it the function's body; the
// loops given get their trace ids (looked up in the IR before it
// changes) once the result is known to verify.
func (s *Schedule) install(prim string, b *BlockRV, l *LoopRV, body tir.Stmt, loops ...LoopRV) error {
	f := *s.f
	f.Body = body
	if err := tir.VerifyFunc(&f); err != nil {
		return s.Errorf(prim, b, l, "the result does not verify: %v", err)
	}
	s.EnsureLoopIDs(loops...)
	s.SetBody(body)
	return nil
}

// allocatedOutside returns a buffer of bufs that is allocated in the
// function (tir.allocate or a block's alloc) by no ancestor of target: a
// block accessing it cannot be placed at target.
func allocatedOutside(body tir.Stmt, bufs map[*tir.Buffer]bool, target tir.Stmt) *tir.Buffer {
	allocated := map[*tir.Buffer]bool{}
	tir.VisitStmt(body, func(x tir.Stmt) bool {
		switch n := x.(type) {
		case *tir.Allocate:
			allocated[n.Buffer] = true
		case *tir.Block:
			for _, a := range n.Allocs {
				allocated[a] = true
			}
		}
		return true
	})
	inScope := map[*tir.Buffer]bool{}
	for _, st := range PathTo(body, target) {
		switch n := st.(type) {
		case *tir.Allocate:
			inScope[n.Buffer] = true
		case *tir.Block:
			for _, a := range n.Allocs {
				inScope[a] = true
			}
		}
	}
	for _, x := range sortedBufs(bufs) {
		if allocated[x] && !inScope[x] {
			return x
		}
	}
	return nil
}

// ComputeAt moves producer block b under loop l (TVM's compute_at): at
// each iteration of l the block computes the region of its output that
// the consumers below l read. The root loop (RootLoop) leaves the block
// where it is. Refused when the block writes a parameter (an output
// block), has a predicate, is under l or in another scope, when some
// consumer of its output is not under l, when another statement writes
// its output, or when a statement between the block and l (or any
// statement under l) writes what it reads.
func (s *Schedule) ComputeAt(b BlockRV, l LoopRV) error {
	const prim = "compute_at"
	if !l.IsRoot() {
		body, err := s.planComputeAt(prim, b, l)
		if err != nil {
			return err
		}
		if err := s.install(prim, &b, &l, body, l); err != nil {
			return err
		}
	} else if findBlock(s.f.Body, b.Name) == nil {
		return s.Errorf(prim, &b, nil, "no such block in @%s", s.f.Name)
	}
	s.Record(prim, []any{b, l}, nil, nil, nil)
	return nil
}

// ReverseComputeAt moves consumer block b under loop l (TVM's
// reverse_compute_at): at each iteration of l the block computes the
// elements whose inputs the producers below l have just produced. The
// block must read each such input at one index whose dimensions are its
// iteration variables (v or v + c); a reduce variable must see its whole
// range produced at once. Refused also when a producer of its inputs is
// not under l, when statements between l and the block touch its inputs
// or outputs, or when its output is read under l.
func (s *Schedule) ReverseComputeAt(b BlockRV, l LoopRV) error {
	const prim = "reverse_compute_at"
	if !l.IsRoot() {
		body, err := s.planReverseComputeAt(prim, b, l)
		if err != nil {
			return err
		}
		if err := s.install(prim, &b, &l, body, l); err != nil {
			return err
		}
	} else if findBlock(s.f.Body, b.Name) == nil {
		return s.Errorf(prim, &b, nil, "no such block in @%s", s.f.Name)
	}
	s.Record(prim, []any{b, l}, nil, nil, nil)
	return nil
}

// computeLocations are the loops where compute_at(b, ·) is legal, in
// program order.
func (s *Schedule) computeLocations(b BlockRV) []LoopRV {
	var out []LoopRV
	tir.VisitStmt(s.f.Body, func(x tir.Stmt) bool {
		if f, ok := x.(*tir.For); ok {
			if _, err := s.planComputeAt("sample_compute_location", b, LoopRV{Var: f.Var}); err == nil {
				out = append(out, LoopRV{Var: f.Var})
			}
		}
		return true
	})
	return out
}

// SampleComputeLocation draws uniformly one of the loops where
// compute_at(b, loop) is legal, or the root (RootLoop: leave the block
// where it is). The decision recorded is the index of the loop among the
// legal ones in program order, -1 for the root.
func (s *Schedule) SampleComputeLocation(b BlockRV) (LoopRV, error) {
	return s.sampleComputeLocation(b, nil)
}

func (s *Schedule) sampleComputeLocation(b BlockRV, decision *int64) (LoopRV, error) {
	const prim = "sample_compute_location"
	if findBlock(s.f.Body, b.Name) == nil {
		return LoopRV{}, s.Errorf(prim, &b, nil, "no such block in @%s", s.f.Name)
	}
	cands := s.computeLocations(b)
	var d int64
	if decision != nil {
		d = *decision
		if d < -1 || d >= int64(len(cands)) {
			return LoopRV{}, s.Errorf(prim, &b, nil, "decision %d is not -1 (root) or the index of one of the %d legal locations", d, len(cands))
		}
	} else {
		d = int64(s.rng.Intn(len(cands)+1)) - 1
	}
	out := RootLoop
	if d >= 0 {
		out = cands[d]
	}
	s.Record(prim, []any{b}, nil, d, []any{out})
	return out, nil
}

func init() {
	for _, kind := range []string{"compute_at", "reverse_compute_at"} {
		kind := kind
		RegisterInstruction(kind, func(s *Schedule, in []any, _ map[string]any, _ any) ([]any, error) {
			b, err := BlockInput(in, 0)
			if err != nil {
				return nil, err
			}
			l, err := LoopInput(in, 1)
			if err != nil {
				return nil, err
			}
			if kind == "compute_at" {
				return nil, s.ComputeAt(b, l)
			}
			return nil, s.ReverseComputeAt(b, l)
		})
	}
	RegisterInstruction("sample_compute_location", func(s *Schedule, in []any, _ map[string]any, decision any) ([]any, error) {
		b, err := BlockInput(in, 0)
		if err != nil {
			return nil, err
		}
		d, err := toInt(decision, "decision")
		if err != nil {
			return nil, err
		}
		l, err := s.sampleComputeLocation(b, &d)
		if err != nil {
			return nil, err
		}
		return []any{l}, nil
	})
}
