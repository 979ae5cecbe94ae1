package schedule

import (
	"strconv"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// reindex (TVM's ReIndex, src/tir/schedule/primitive/cache_read_write.cc).
//
// reindex(b, i, "read"|"write") gives the buffer X of block b's read
// (write) region i a copy "<X>_reindex" laid out by b's own iteration
// variables: one dimension per iteration variable b's access of X uses,
// in b's order, of that variable's extent. b then accesses the copy at
// exactly those variables, so an access through fused index expressions
// (a dense layer's flatten X[n, k floordiv 49, ...], a convolution's
// window X[n, c, y + ky - 1, ...]) becomes a plain one that pad_einsum,
// cache_read and tensorize take. A block "<X>_reindex" of the same loops
// copies X into the copy before b's loop nest — as early in the sequence
// holding it as X's writers allow (read) —, or the copy back into X
// right after it (write); the copy is allocated for the function.
//
// For a read, the copied value is b's operand: the load of X, with the
// select that guards it when the load is select(c, X[...], constant) and
// c uses b's iteration variables only (a padded window: the copy is the
// zero-padded im2col matrix). Every load of X in b must be that operand.
// For a write, b's store of X and its loads of X (a reduction's update)
// must share one index.
//
// Like TVM's it needs the block's bindings trivial (each iteration
// variable bound to a loop of its own over its domain, no predicate) and
// a single store as body: apply it before splitting or fusing b's loops.
// Differences from TVM: a guarding select is part of a read's copied
// value (TVM pads in a separate block, so its reindex only copies loads).

// ReIndex copies the buffer of block b's read (bufferType "read") or write
// ("write") region bufferIndex into a new buffer indexed by b's iteration
// variables (TVM's reindex) and returns the copying block.
func (s *Schedule) ReIndex(b BlockRV, bufferIndex int, bufferType string) (BlockRV, error) {
	const prim = "reindex"
	x, err := s.layoutBuffer(prim, b, bufferIndex, bufferType)
	if err != nil {
		return BlockRV{}, err
	}
	r := findBlock(s.f.Body, b.Name)
	fail := func(format string, args ...any) (BlockRV, error) {
		return BlockRV{}, s.Errorf(prim, &b, nil, format, args...)
	}
	if why := s.trivialBinding(b, r); why != "" {
		return fail("%s; reindex before splitting or fusing the block's loops", why)
	}
	st, ok := r.Block.Body.(*tir.BufferStore)
	init, initOK := r.Block.Init.(*tir.BufferStore)
	if !ok || r.Block.Init != nil && !initOK {
		return fail("the block's body and init are not single stores")
	}
	op, why := reindexOperand(r.Block, st, init, x, bufferType == "read")
	if why != "" {
		return fail("%s", why)
	}
	ri, why := newReindex(r.Block, x, op, freshName(x.Name+"_reindex", allBufferNames(s.f)))
	if why != "" {
		return fail("%s", why)
	}
	nr, why := ri.rewrite(r, st, init, bufferType == "read")
	if why != "" {
		return fail("%s", why)
	}
	anchor, conflict := s.reindexAnchor(r, x, bufferType == "read")
	if conflict != nil {
		p := positions(s.f.Body)
		return BlockRV{}, s.ErrorAt(prim, &b, nil, p.realizeAt(conflict), "%s also accesses %%%s inside the block's loop nest, where the copy would be stale", describeAt(p, conflict), x.Name)
	}
	name := freshName(ri.buf.Name, allBlockNames(s.f))
	nest := ri.copyNest(name, x, bufferType == "read", r.Loc)
	var body tir.Stmt
	if bufferType == "read" {
		body = hoistCopy(s.f.Body, anchor, nest, x)
	}
	body = tir.Mutate(orElse(body, s.f.Body), func(y tir.Stmt) (tir.Stmt, bool) {
		if y != anchor {
			return nil, false
		}
		repl := tir.Mutate(y, func(z tir.Stmt) (tir.Stmt, bool) {
			if z == tir.Stmt(r) {
				return nr, true
			}
			return nil, false
		})
		if bufferType == "read" && body == nil {
			return tir.Seq(nest, repl), true
		}
		if bufferType == "read" {
			return repl, true
		}
		return tir.Seq(repl, nest), true
	})
	body = allocateFor(body, PathTo(body, nr), ri.buf)
	if err := s.install(prim, &b, nil, body); err != nil {
		return BlockRV{}, err
	}
	out := BlockRV{Name: name}
	s.Record(prim, []any{b}, map[string]any{"buffer_index": int64(bufferIndex), "buffer_type": bufferType}, nil, []any{out})
	return out, nil
}

// trivialBinding is why block realize r's bindings are not each its own
// loop over the variable's domain ("" when they are).
func (s *Schedule) trivialBinding(b BlockRV, r *tir.BlockRealize) string {
	if r.Predicate != nil {
		return "the block has a predicate " + tir.ExprString(r.Predicate)
	}
	fors, err := s.LoopsOf(b)
	if err != nil {
		return err.Error()
	}
	loop := map[*tir.Var]*tir.For{}
	for _, f := range fors {
		loop[f.Var] = f
	}
	used := map[*tir.Var]bool{}
	for k, iv := range r.Block.IterVars {
		v, ok := r.Values[k].(*tir.Var)
		f := loop[v]
		if !ok || f == nil || used[v] || !tir.Equal(f.Min, iv.Dom.Min) || !tir.Equal(f.Extent, iv.Dom.Extent) {
			return "%" + iv.Var.Name + " is bound to " + tir.ExprString(r.Values[k]) + ", not to a loop of its own over its domain"
		}
		used[v] = true
	}
	return ""
}

// reindexOperand is the expression of b the copy holds: for a read, the
// operand every load of x in b is (the load, or its guarding select); for
// a write, the load of x at the store's index. why says what is refused.
func reindexOperand(b *tir.Block, st, init *tir.BufferStore, x *tir.Buffer, read bool) (tir.Expr, string) {
	if !read {
		if st.Buffer != x {
			return nil, "the block's store writes %" + st.Buffer.Name + ", not %" + x.Name
		}
		if init != nil && (init.Buffer != x || !sameIndices(init.Indices, st.Indices)) {
			return nil, "the block's init does not store %" + x.Name + " at the body's index"
		}
		return &tir.BufferLoad{Buffer: x, Indices: st.Indices}, ""
	}
	if st.Buffer == x || init != nil && init.Buffer == x {
		return nil, "the block also writes %" + x.Name + "; a copy of it would be stale"
	}
	var ops []tir.Expr
	var find func(e tir.Expr)
	find = func(e tir.Expr) {
		if sel, ok := e.(*tir.Select); ok && guardedLoad(sel, x, b) {
			ops = append(ops, sel)
			return
		}
		if l, ok := e.(*tir.BufferLoad); ok && l.Buffer == x {
			ops = append(ops, l)
			return
		}
		tir.VisitExpr(e, func(y tir.Expr) bool {
			if y == e {
				return true
			}
			find(y)
			return false
		})
	}
	find(st.Value)
	for _, i := range st.Indices {
		find(i)
	}
	if len(ops) == 0 {
		return nil, "the block does not load %" + x.Name
	}
	for _, o := range ops[1:] {
		if !tir.Equal(o, ops[0]) {
			return nil, "the block reads %" + x.Name + " as two operands, " + tir.ExprString(ops[0]) + " and " + tir.ExprString(o)
		}
	}
	return ops[0], ""
}

// guardedLoad reports whether sel is select(c, x[...], constant) with c of
// b's iteration variables only: a padded operand.
func guardedLoad(sel *tir.Select, x *tir.Buffer, b *tir.Block) bool {
	l, ok := sel.T.(*tir.BufferLoad)
	if !ok || l.Buffer != x {
		return false
	}
	switch sel.F.(type) {
	case *tir.IntImm, *tir.FloatImm:
	default:
		return false
	}
	only := true
	tir.VisitExpr(sel.Cond, func(e tir.Expr) bool {
		switch y := e.(type) {
		case *tir.Var:
			only = only && iterIndex(b, y) >= 0
		case *tir.BufferLoad:
			only = false
		}
		return true
	})
	return only
}

func iterIndex(b *tir.Block, v *tir.Var) int {
	for i, iv := range b.IterVars {
		if iv.Var == v {
			return i
		}
	}
	return -1
}

// reindexed is a reindex copy: its buffer, the operand it holds, and the
// iteration variables of b that index it (in b's order).
type reindexed struct {
	buf     *tir.Buffer
	op      tir.Expr
	covered []*tir.IterVar
}

// newReindex makes the copy of operand op of b, named name.
func newReindex(b *tir.Block, x *tir.Buffer, op tir.Expr, name string) (*reindexed, string) {
	uses := map[*tir.Var]bool{}
	var stray *tir.Var
	tir.VisitExpr(op, func(e tir.Expr) bool {
		if v, ok := e.(*tir.Var); ok {
			uses[v] = true
			if iterIndex(b, v) < 0 && stray == nil {
				stray = v
			}
		}
		return true
	})
	if stray != nil {
		return nil, "the access of %" + x.Name + " uses %" + stray.Name + ", not an iteration variable of the block"
	}
	ri := &reindexed{op: op}
	for _, iv := range b.IterVars {
		if uses[iv.Var] {
			ri.covered = append(ri.covered, iv)
		}
	}
	if len(ri.covered) == 0 {
		return nil, "the access of %" + x.Name + " uses no iteration variable: nothing to reindex"
	}
	ri.buf = &tir.Buffer{Name: name, DType: op.DType(), Scope: x.Scope, Loc: x.Loc}
	for _, iv := range ri.covered {
		ri.buf.Shape = append(ri.buf.Shape, iv.Dom.Extent)
	}
	return ri, ""
}

// index is the copy's element for the covered variables' values vals.
func (ri *reindexed) index(vals []tir.Expr) []tir.Expr {
	idx := make([]tir.Expr, len(vals))
	for j, v := range vals {
		idx[j] = v
		if c, ok := constInt(ri.covered[j].Dom.Min); !ok || c != 0 {
			idx[j] = tir.Sub(v, ri.covered[j].Dom.Min)
		}
	}
	return idx
}

// point is the copy's element at b's own variables, as a load and a region.
func (ri *reindexed) point() (*tir.BufferLoad, tir.BufferRegion) {
	vals := make([]tir.Expr, len(ri.covered))
	for j, iv := range ri.covered {
		vals[j] = iv.Var
	}
	idx := ri.index(vals)
	return &tir.BufferLoad{Buffer: ri.buf, Indices: idx}, pointRegion(ri.buf, idx)
}

func pointRegion(b *tir.Buffer, idx []tir.Expr) tir.BufferRegion {
	rg := make([]tir.Range, len(idx))
	for i, e := range idx {
		rg[i] = tir.Range{Min: e, Extent: tir.Int(1)}
	}
	return tir.BufferRegion{Buffer: b, Region: rg}
}

// rewrite is block realize r accessing the copy instead of the operand
// (read) or of x (write), or why some access of x is left.
func (ri *reindexed) rewrite(r *tir.BlockRealize, st, init *tir.BufferStore, read bool) (*tir.BlockRealize, string) {
	load, region := ri.point()
	old := operandBuffer(ri.op)
	nb := *r.Block
	ns := &tir.BufferStore{Buffer: st.Buffer, Value: replaceExpr(st.Value, ri.op, load), Indices: replaceExprs(st.Indices, ri.op, load), Loc: st.Loc}
	if !read {
		ns.Buffer, ns.Indices = ri.buf, load.Indices
	}
	nb.Body = ns
	if init != nil && !read {
		nb.Init = &tir.BufferStore{Buffer: ri.buf, Value: init.Value, Indices: load.Indices, Loc: init.Loc}
	}
	nb.Reads = swapRegion(r.Block.Reads, old, region)
	nb.Writes = swapRegion(r.Block.Writes, old, region)
	loads, stores := blockBuffers(&nb)
	if loads[old] || stores[old] {
		return nil, "the block accesses %" + old.Name + " outside the operand " + tir.ExprString(ri.op)
	}
	nr := *r
	nr.Block = &nb
	return &nr, ""
}

// operandBuffer is the buffer an operand (a load or a guarded load) reads.
func operandBuffer(op tir.Expr) *tir.Buffer {
	if sel, ok := op.(*tir.Select); ok {
		op = sel.T
	}
	return op.(*tir.BufferLoad).Buffer
}

// swapRegion replaces the first region of old in rs by region and drops
// its other regions.
func swapRegion(rs []tir.BufferRegion, old *tir.Buffer, region tir.BufferRegion) []tir.BufferRegion {
	var out []tir.BufferRegion
	done := false
	for _, rg := range rs {
		switch {
		case rg.Buffer != old:
			out = append(out, rg)
		case !done:
			out = append(out, region)
			done = true
		}
	}
	return out
}

// replaceExpr replaces every occurrence of target (structurally equal) in
// e by with.
func replaceExpr(e, target, with tir.Expr) tir.Expr {
	return rewriteExpr(e, func(x tir.Expr) (tir.Expr, bool) {
		if tir.Equal(x, target) {
			return with, true
		}
		return nil, false
	})
}

func replaceExprs(es []tir.Expr, target, with tir.Expr) []tir.Expr {
	out := make([]tir.Expr, len(es))
	for i, e := range es {
		out[i] = replaceExpr(e, target, with)
	}
	return out
}

// rewriteExpr is e with every outermost subexpression fn replaces (fn
// returns the replacement and true) replaced, the rest rebuilt.
func rewriteExpr(e tir.Expr, fn func(tir.Expr) (tir.Expr, bool)) tir.Expr {
	if r, ok := fn(e); ok {
		return r
	}
	all := func(es []tir.Expr) []tir.Expr {
		out := make([]tir.Expr, len(es))
		for i, a := range es {
			out[i] = rewriteExpr(a, fn)
		}
		return out
	}
	switch x := e.(type) {
	case *tir.BufferLoad:
		return &tir.BufferLoad{Buffer: x.Buffer, Indices: all(x.Indices)}
	case *tir.Binary:
		return &tir.Binary{Op: x.Op, A: rewriteExpr(x.A, fn), B: rewriteExpr(x.B, fn)}
	case *tir.Not:
		return &tir.Not{X: rewriteExpr(x.X, fn)}
	case *tir.Select:
		return &tir.Select{Cond: rewriteExpr(x.Cond, fn), T: rewriteExpr(x.T, fn), F: rewriteExpr(x.F, fn)}
	case *tir.Cast:
		return &tir.Cast{Type: x.Type, X: rewriteExpr(x.X, fn)}
	case *tir.Call:
		return &tir.Call{Name: x.Name, Args: all(x.Args)}
	}
	return e
}

// reindexAnchor is the statement the copy goes next to: the outermost one
// holding r in its scope (other than a sequence or an allocation); and a
// statement in it other than r's that accesses x in a way the copy would
// not see (a write for a read copy; any access for a write-back), or nil.
func (s *Schedule) reindexAnchor(r *tir.BlockRealize, x *tir.Buffer, read bool) (anchor, conflict tir.Stmt) {
	path := PathTo(s.f.Body, r)
	k, _ := cacheAnchor(path, func(tir.Stmt) bool { return false })
	anchor = path[k]
	p := positions(s.f.Body)
	for i := p.pre[anchor]; i <= p.end[anchor]; i++ {
		o := p.order[i]
		if p.inside(o, r) {
			continue
		}
		if nodeStore(o) == x {
			return anchor, o
		}
		for _, l := range nodeLoads(o) {
			if l == x && !read {
				return anchor, o
			}
		}
	}
	return anchor, nil
}

// copyNest is the loop nest of the copy block name: over the covered
// variables' domains, op into the copy (read) or the copy into x at op's
// index (write).
func (ri *reindexed) copyNest(name string, x *tir.Buffer, read bool, loc tir.Location) tir.Stmt {
	blk := &tir.Block{Name: name, Loc: loc}
	sub := map[*tir.Var]tir.Expr{}
	loops := make([]*tir.Var, len(ri.covered))
	vals := make([]tir.Expr, len(ri.covered))
	for j, iv := range ri.covered {
		w := tir.NewVar("v"+strconv.Itoa(j), iv.Var.DType())
		loops[j] = tir.NewVar("ax"+strconv.Itoa(j), iv.Var.DType())
		blk.IterVars = append(blk.IterVars, &tir.IterVar{Var: w, Dom: iv.Dom, Kind: tir.Spatial})
		sub[iv.Var] = w
		vals[j] = w
	}
	idx := ri.index(vals)
	mine := pointRegion(ri.buf, idx)
	op := tir.Substitute(ri.op, sub)
	src := op
	if sel, ok := src.(*tir.Select); ok {
		src = sel.T
	}
	l := src.(*tir.BufferLoad)
	theirs := pointRegion(x, l.Indices)
	if read {
		blk.Reads, blk.Writes = []tir.BufferRegion{theirs}, []tir.BufferRegion{mine}
		blk.Body = &tir.BufferStore{Buffer: ri.buf, Value: op, Indices: idx, Loc: loc}
	} else {
		blk.Reads, blk.Writes = []tir.BufferRegion{mine}, []tir.BufferRegion{theirs}
		blk.Body = &tir.BufferStore{Buffer: x, Value: &tir.BufferLoad{Buffer: ri.buf, Indices: idx}, Indices: l.Indices, Loc: loc}
	}
	values := make([]tir.Expr, len(loops))
	for j, v := range loops {
		values[j] = v
	}
	var st tir.Stmt = &tir.BlockRealize{Values: values, Block: blk, Loc: loc}
	for j := len(loops) - 1; j >= 0; j-- {
		d := ri.covered[j].Dom
		st = &tir.For{Var: loops[j], Min: d.Min, Extent: d.Extent, Body: st, Loc: loc}
	}
	return st
}

func init() {
	RegisterInstruction("reindex", func(s *Schedule, in []any, attrs map[string]any, _ any) ([]any, error) {
		b, err := BlockInput(in, 0)
		if err != nil {
			return nil, err
		}
		i, err := AttrInt(attrs, "buffer_index")
		if err != nil {
			return nil, err
		}
		kind, err := AttrString(attrs, "buffer_type")
		if err != nil {
			return nil, err
		}
		out, err := s.ReIndex(b, int(i), kind)
		if err != nil {
			return nil, err
		}
		return []any{out}, nil
	})
}

func orElse(a, b tir.Stmt) tir.Stmt {
	if a != nil {
		return a
	}
	return b
}

// hoistCopy is body with the read copy nest placed as early in the
// sequence holding anchor as x's writers allow (after the last statement
// before anchor that writes x), so that later primitives can move the
// reading block into loops that statements between would otherwise
// separate it from; nil when anchor is not in a sequence.
func hoistCopy(body, anchor, nest tir.Stmt, x *tir.Buffer) tir.Stmt {
	done := false
	out := tir.Mutate(body, func(y tir.Stmt) (tir.Stmt, bool) {
		q, ok := y.(*tir.SeqStmt)
		if !ok || done {
			return nil, false
		}
		at := -1
		for i, st := range q.Stmts {
			if st == anchor {
				at = i
			}
		}
		if at < 0 {
			return nil, false
		}
		pos := 0
		for i := 0; i < at; i++ {
			if writes(q.Stmts[i], x) {
				pos = i + 1
			}
		}
		stmts := append(append(append([]tir.Stmt(nil), q.Stmts[:pos]...), nest), q.Stmts[pos:]...)
		done = true
		return &tir.SeqStmt{Stmts: stmts, Loc: q.Loc}, true
	})
	if !done {
		return nil
	}
	return out
}

// writes reports whether st stores x.
func writes(st tir.Stmt, x *tir.Buffer) bool {
	found := false
	tir.VisitStmt(st, func(y tir.Stmt) bool {
		if nodeStore(y) == x {
			found = true
		}
		return !found
	})
	return found
}
