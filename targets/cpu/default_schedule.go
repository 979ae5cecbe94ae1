package cpu

import tir "github.com/tessera-ml/tessera/tensorir"

// DefaultSchedule is the schedule a PrimFunc gets until the schedule
// package (or a tuning record) provides one. In every loop nest it
//
//   - vectorizes the innermost spatial loop with a constant extent: split
//     into a serial outer loop of ⌊E/W⌋ iterations around a vectorized
//     loop of W lanes, then a separate serial tail loop of E mod W
//     iterations (the tail is its own loop after the main part, not a
//     predicate in the vector body; its blocks are renamed <name>_tail;
//     an extent E ≤ W is vectorized whole),
//     where W = vectorBits / (widest element stored in the loop, in bits),
//     e.g. 16 f32 lanes for 512-bit AVX-512; a loop whose widened body
//     CheckVectorizable refuses stays serial and the next loop out is
//     tried;
//   - parallelizes the outermost spatial loop of the nest (descending
//     through perfectly nested loops past non-spatial ones and loops of
//     extent 1); when that loop is the one vectorized, its outer ⌊E/W⌋
//     loop is parallel.
//
// A loop is spatial when it is serial and its iterations write disjoint
// elements: every block it binds uses its variable only in spatial
// iteration variables (TVM's contract for blocks), and every store
// outside blocks has an index that uses the variable, with every load of
// the same buffer outside blocks at exactly the store's indices (so a
// scan like B[i] = B[i-1] + 1 is not spatial); a loop containing a
// tir.call is not spatial. Loops that are already
// parallel, vectorized, unrolled or thread-bound are kept as they are.
// The result computes the same values as f (tests compare both with the
// tensorir interpreter). f is not modified.
func DefaultSchedule(f *tir.PrimFunc, vectorBits int) *tir.PrimFunc {
	nf := *f
	nf.Body = ScheduleStmt(f.Body, vectorBits)
	return &nf
}

// DefaultScheduleModule applies DefaultSchedule to every function of m
// and returns the new module (m is not modified).
func DefaultScheduleModule(m *tir.Module, vectorBits int) *tir.Module {
	out := &tir.Module{}
	for _, f := range m.Funcs {
		out.Funcs = append(out.Funcs, DefaultSchedule(f, vectorBits))
	}
	return out
}

// ScheduleStmt applies the default schedule to every loop nest in s.
func ScheduleStmt(s tir.Stmt, vectorBits int) tir.Stmt {
	d := &scheduler{bits: vectorBits}
	return d.top(s)
}

type scheduler struct {
	bits int
	par  *tir.For // the loop to parallelize in the current nest
}

// top finds the outermost loops (the nests) of s.
func (d *scheduler) top(s tir.Stmt) tir.Stmt {
	switch x := s.(type) {
	case *tir.For:
		d.par = d.pickParallel(x)
		out, _ := d.rewrite(x)
		d.par = nil
		return out
	case *tir.SeqStmt:
		out := make([]tir.Stmt, len(x.Stmts))
		for i, t := range x.Stmts {
			out[i] = d.top(t)
		}
		return &tir.SeqStmt{Stmts: out, Loc: x.Loc}
	case *tir.LetStmt:
		n := *x
		n.Body = d.top(x.Body)
		return &n
	case *tir.IfThenElse:
		n := *x
		n.Then, n.Else = d.top(x.Then), d.top(x.Else)
		return &n
	case *tir.Allocate:
		n := *x
		n.Body = d.top(x.Body)
		return &n
	case *tir.AllocateConst:
		n := *x
		n.Body = d.top(x.Body)
		return &n
	case *tir.ArenaAlloc:
		n := *x
		n.Body = d.top(x.Body)
		return &n
	case *tir.BlockRealize:
		n := *x
		b := *x.Block
		b.Body = d.top(x.Block.Body)
		n.Block = &b
		return &n
	}
	return s
}

// pickParallel is the outermost spatial loop of the nest rooted at f,
// looking through perfectly nested loops.
func (d *scheduler) pickParallel(f *tir.For) *tir.For {
	for {
		if ext, isConst := f.Extent.(*tir.IntImm); isSpatial(f) && !(isConst && ext.Value <= 1) {
			return f
		}
		inner, ok := f.Body.(*tir.For)
		if !ok {
			return nil
		}
		f = inner
	}
}

// rewrite copies s, vectorizing the innermost candidate loops; the bool
// reports whether a loop in s was vectorized.
func (d *scheduler) rewrite(s tir.Stmt) (tir.Stmt, bool) {
	switch x := s.(type) {
	case *tir.For:
		body, inner := d.rewrite(x.Body)
		n := *x
		n.Body = body
		if !inner && x.Kind == tir.Serial && isSpatial(x) {
			if out, ok := d.vectorize(&n, x == d.par); ok {
				return out, true
			}
		}
		if x == d.par {
			n.Kind = tir.Parallel
		}
		return &n, inner
	case *tir.SeqStmt:
		out := make([]tir.Stmt, len(x.Stmts))
		vec := false
		for i, t := range x.Stmts {
			var v bool
			out[i], v = d.rewrite(t)
			vec = vec || v
		}
		return &tir.SeqStmt{Stmts: out, Loc: x.Loc}, vec
	case *tir.LetStmt:
		n := *x
		var v bool
		n.Body, v = d.rewrite(x.Body)
		return &n, v
	case *tir.IfThenElse:
		n := *x
		var v1, v2 bool
		n.Then, v1 = d.rewrite(x.Then)
		n.Else, v2 = d.rewrite(x.Else)
		return &n, v1 || v2
	case *tir.Allocate:
		n := *x
		var v bool
		n.Body, v = d.rewrite(x.Body)
		return &n, v
	case *tir.AllocateConst:
		n := *x
		var v bool
		n.Body, v = d.rewrite(x.Body)
		return &n, v
	case *tir.ArenaAlloc:
		n := *x
		var v bool
		n.Body, v = d.rewrite(x.Body)
		return &n, v
	case *tir.BlockRealize:
		n := *x
		b := *x.Block
		var v bool
		b.Body, v = d.rewrite(x.Block.Body)
		n.Block = &b
		return &n, v
	case nil:
		return nil, false
	}
	return s, false
}

// lanesFor is the vector width for loop f: vectorBits over the widest
// element the loop stores (at least 2).
func (d *scheduler) lanesFor(f *tir.For) int64 {
	widest := 8
	walkStmt(f.Body, func(s tir.Stmt) {
		if st, ok := s.(*tir.BufferStore); ok && st.Buffer.DType.Bits() > widest {
			widest = st.Buffer.DType.Bits()
		}
	}, nil)
	w := int64(d.bits / widest)
	return min(max(w, 2), MaxVectorLanes)
}

// vectorize splits and vectorizes f (see DefaultSchedule); ok is false
// when f's extent is not a constant ≥ 2 or its body cannot be widened.
func (d *scheduler) vectorize(f *tir.For, parallel bool) (tir.Stmt, bool) {
	ext, isConst := f.Extent.(*tir.IntImm)
	if !isConst || ext.Value < 2 {
		return nil, false
	}
	w := d.lanesFor(f)
	t := f.Var.Type
	if ext.Value <= w {
		n := *f
		n.Kind = tir.Vectorized
		if CheckVectorizable(&n) != nil {
			return nil, false
		}
		return &n, true
	}
	q, r := ext.Value/w, ext.Value%w
	jo := tir.NewVar(f.Var.Name+"_o", t)
	ji := tir.NewVar(f.Var.Name+"_i", t)
	main := newRewriter(false)
	main.vars[f.Var] = addIdxT(f.Min, tir.Add(tir.Mul(jo, tir.IntOf(t, w)), ji))
	inner := &tir.For{Var: ji, Min: tir.IntOf(t, 0), Extent: tir.IntOf(t, w), Kind: tir.Vectorized,
		Body: main.stmt(f.Body), Loc: f.Loc}
	if CheckVectorizable(inner) != nil {
		return nil, false
	}
	kind := tir.Serial
	if parallel {
		kind = tir.Parallel
	}
	outer := &tir.For{Var: jo, Min: tir.IntOf(t, 0), Extent: tir.IntOf(t, q), Kind: kind, Body: inner,
		Annotations: f.Annotations, Loc: f.Loc}
	if r == 0 {
		return outer, true
	}
	jt := tir.NewVar(f.Var.Name+"_t", t)
	tail := newRewriter(true)
	tail.blockSuffix = "_tail"
	tail.vars[f.Var] = addIdxT(f.Min, tir.Add(tir.IntOf(t, q*w), jt))
	tailLoop := &tir.For{Var: jt, Min: tir.IntOf(t, 0), Extent: tir.IntOf(t, r), Kind: tir.Serial,
		Body: tail.stmt(f.Body), Loc: f.Loc}
	return &tir.SeqStmt{Stmts: []tir.Stmt{outer, tailLoop}, Loc: f.Loc}, true
}

// addIdxT is lo + e, dropping a constant zero lo.
func addIdxT(lo, e tir.Expr) tir.Expr {
	if c, ok := lo.(*tir.IntImm); ok && c.Value == 0 {
		return e
	}
	return tir.Add(lo, e)
}

// isSpatial reports whether f is serial and its iterations write disjoint
// elements (see DefaultSchedule).
func isSpatial(f *tir.For) bool {
	if f.Kind != tir.Serial {
		return false
	}
	deps := map[*tir.Var]bool{f.Var: true}
	mentions := func(e tir.Expr) bool {
		found := false
		tir.VisitExpr(e, func(x tir.Expr) bool {
			if v, ok := x.(*tir.Var); ok && deps[v] {
				found = true
			}
			return !found
		})
		return found
	}
	ok, wrote := true, false
	var stores []*tir.BufferStore
	var loads []*tir.BufferLoad
	collectLoads := func(e tir.Expr) {
		tir.VisitExpr(e, func(x tir.Expr) bool {
			if ld, isLd := x.(*tir.BufferLoad); isLd {
				loads = append(loads, ld)
			}
			return true
		})
	}
	var walk func(s tir.Stmt)
	walk = func(s tir.Stmt) {
		switch x := s.(type) {
		case *tir.SeqStmt:
			for _, t := range x.Stmts {
				walk(t)
			}
		case *tir.For:
			walk(x.Body)
		case *tir.LetStmt:
			collectLoads(x.Value)
			if mentions(x.Value) {
				deps[x.Var] = true
			}
			walk(x.Body)
		case *tir.IfThenElse:
			collectLoads(x.Cond)
			walk(x.Then)
			walk(x.Else)
		case *tir.Allocate:
			walk(x.Body)
		case *tir.BlockRealize:
			for i, v := range x.Values {
				if mentions(v) && x.Block.IterVars[i].Kind != tir.Spatial {
					ok = false
				}
			}
			wrote = true
		case *tir.BufferStore:
			wrote = true
			uses := false
			for _, ix := range x.Indices {
				uses = uses || mentions(ix)
				collectLoads(ix)
			}
			collectLoads(x.Value)
			if !uses {
				ok = false
			}
			stores = append(stores, x)
		case *tir.Evaluate:
			collectLoads(x.Value)
		case *tir.AllocateConst:
			walk(x.Body)
		case *tir.ArenaAlloc:
			walk(x.Body)
		case *tir.CallKernel:
			// A kernel call may write anything its arguments hold.
			ok = false
		}
	}
	walk(f.Body)
	for _, st := range stores {
		for _, ld := range loads {
			if ld.Buffer != st.Buffer {
				continue
			}
			for d := range st.Indices {
				if !tir.Equal(ld.Indices[d], st.Indices[d]) {
					ok = false
				}
			}
		}
	}
	return ok && wrote
}
