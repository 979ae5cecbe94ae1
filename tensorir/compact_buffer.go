package tensorir

import "strings"

// CompactMaxMoveBytes is the largest compacted buffer (in bytes) that
// CompactBufferAllocation moves into a loop: a bigger or symbolic-size
// buffer would be allocated on the heap once per iteration, so it stays
// where it was (still compacted).
const CompactMaxMoveBytes = 256 << 10

// CompactBufferAllocation returns f with every buffer it allocates
// (tir.allocate or a block's alloc; buffers with explicit strides or an
// element offset are left alone) moved down to the innermost statement
// that holds all its accesses and shrunk to the region accessed there —
// TVM's PlanAndUpdateBufferAllocationLocation followed by
// CompactBufferAllocation (src/tir/transforms/compact_buffer_region.cc).
// After cache_write, cache_read, rfactor or compute_at, a cache becomes a
// tile-sized buffer allocated inside the loop nest: inside a parallel
// loop it is per-thread stack memory, and code generation can keep a
// register tile in registers.
//
// The region of each dimension is the hull of every load and store of
// the buffer with the loops below the new allocation point relaxed over
// their ranges (the symbolic region analysis of compute_at); its minimum
// becomes the new origin (indices and block regions are shifted by it)
// and the constant bound of its extent the new extent. A dimension whose
// extent has no constant bound smaller than the old one is kept. Loads
// and stores of a compacted buffer inside blocks are rewritten in terms
// of the loops (bindingIndices), so the shift simplifies away and a
// register tile's address is visibly invariant in the reduction loops
// (LLVM then keeps the accumulators in registers: GEMM 1024³ at 4.9 ms
// instead of 10.5 ms with the shift left in terms of the iteration
// variables).
//
// The allocation moves down through sequences, lets, branches, blocks
// and loops, but never into:
//   - a vectorized or unrolled loop, or a serial loop that
//     pragma_auto_unroll_max_step unrolls (each copy would allocate);
//   - a thread-bound loop, except any thread axis for shared and local
//     scope (a global buffer is per launch). A shared buffer is per thread block wherever it is
//     allocated (the GPU code generation makes it one static array), so
//     inside threadIdx loops its region is the union over the block's
//     threads: those loops' variables are relaxed too (TVM relaxes
//     regions by storage scope);
//   - a loop across whose iterations the buffer carries values: a block
//     storing the buffer has a reduce iteration variable bound to the
//     loop, a store outside blocks reads the buffer it stores, the loop
//     body reads the buffer before its first store (in program order), or
//     it reads elements its own stores do not provably cover;
//   - a reduction block that stores the buffer;
//   - a loop, when the compacted buffer is not a constant size of at most
//     CompactMaxMoveBytes.
//
// f is not modified; untouched statements are shared.
func CompactBufferAllocation(f *PrimFunc) *PrimFunc {
	out := *f
	for _, b := range allocatedBuffers(f.Body) {
		out.Body = compactBuffer(out.Body, b)
	}
	return &out
}

// CompactBufferAllocationModule applies CompactBufferAllocation to every
// function of m in place.
func CompactBufferAllocationModule(m *Module) {
	for i, f := range m.Funcs {
		m.Funcs[i] = CompactBufferAllocation(f)
	}
}

func init() {
	RegisterModulePass("compact-buffer-allocation", "move every allocation to the innermost statement holding its accesses and shrink it to the region accessed there (TVM's CompactBufferAllocation)",
		func(m *Module) error { CompactBufferAllocationModule(m); return nil })
}

// allocatedBuffers are the buffers allocated in body (pre-order) that the
// pass may compact.
func allocatedBuffers(body Stmt) []*Buffer {
	var out []*Buffer
	add := func(b *Buffer) {
		if b != nil && b.Strides == nil && b.ElemOffset == nil {
			out = append(out, b)
		}
	}
	VisitStmt(body, func(s Stmt) bool {
		switch x := s.(type) {
		case *Allocate:
			add(x.Buffer)
		case *Block:
			for _, a := range x.Allocs {
				add(a)
			}
		}
		return true
	})
	return out
}

// compactScope is the state of the descent from the allocation site: the
// constant bounds of the variables defined above the current statement,
// the auto-unroll budget in force, and the candidate allocation points
// found so far (the statement the allocation wraps, and whether it lies
// inside a loop below the site).
type compactScope struct {
	buf    *Buffer
	env    BoundEnv
	budget int64
	points []compactPoint
	// threads are the threadIdx loops entered below the site.
	threads []*For
}

type compactPoint struct {
	at      Stmt
	env     BoundEnv
	inLoop  bool
	threads []*For
}

// compactBuffer moves and shrinks b in body.
func compactBuffer(body Stmt, b *Buffer) Stmt {
	site, sc := findAllocation(body, b)
	if site == nil || passedToCall(site, b) {
		return body
	}
	start := site
	if a, ok := site.(*Allocate); ok {
		start = a.Body
	}
	if start == nil {
		return body
	}
	sc.descend(start, false)
	for i := len(sc.points) - 1; i >= 0; i-- {
		p := sc.points[i]
		off, shape, ok := compactRegion(p, b)
		if !ok {
			continue
		}
		if p.inLoop && !fitsMove(b, shape) {
			continue
		}
		if p.at == start && sameShape(shape, b.Shape) {
			return body
		}
		nb := *b
		nb.Shape = shape
		moved := bindingIndices(placeAllocation(body, site, p.at, b), b)
		return ReplaceBuffers(moved, map[*Buffer]*Buffer{b: &nb}, map[*Buffer][]Expr{b: off})
	}
	return body
}

// findAllocation returns the statement allocating b (an Allocate or a
// Block) and the scope state there.
func findAllocation(body Stmt, b *Buffer) (Stmt, *compactScope) {
	sc := &compactScope{buf: b, env: BoundEnv{}}
	var site Stmt
	var walk func(s Stmt) bool
	walk = func(s Stmt) bool {
		switch x := s.(type) {
		case nil:
			return false
		case *Allocate:
			if x.Buffer == b {
				site = x
				return true
			}
		case *Block:
			for _, a := range x.Allocs {
				if a == b {
					site = x
					sc.defineIters(x)
					return true
				}
			}
		}
		undo := sc.enter(s)
		for _, c := range SubStmts(s) {
			if walk(c) {
				return true
			}
		}
		undo()
		return false
	}
	walk(body)
	return site, sc
}

// enter records the variables s defines for the statements below it and
// returns the function that forgets them.
func (sc *compactScope) enter(s Stmt) func() {
	budget := sc.budget
	var defined []*Var
	threads := len(sc.threads)
	switch x := s.(type) {
	case *For:
		if bu, ok := AutoUnrollBudget(x); ok {
			sc.budget = bu
		}
		if x.Kind == ThreadBinding && strings.HasPrefix(x.Thread, "threadIdx") {
			sc.threads = append(sc.threads, x)
		}
		lo, ext := Bound(x.Min, sc.env), Bound(x.Extent, sc.env)
		if !lo.IsFull() && !ext.IsFull() && ext.Hi >= 1 {
			sc.env[x.Var] = Interval{lo.Lo, lo.Hi + ext.Hi - 1}
			defined = append(defined, x.Var)
		}
	case *Block:
		defined = sc.defineIters(x)
	case *LetStmt:
		if iv := Bound(x.Value, sc.env); !iv.IsFull() {
			sc.env[x.Var] = iv
			defined = append(defined, x.Var)
		}
	}
	return func() {
		sc.budget = budget
		sc.threads = sc.threads[:threads]
		for _, v := range defined {
			delete(sc.env, v)
		}
	}
}

func (sc *compactScope) defineIters(b *Block) []*Var {
	var defined []*Var
	for _, iv := range b.IterVars {
		lo, ext := Bound(iv.Dom.Min, sc.env), Bound(iv.Dom.Extent, sc.env)
		if lo.IsPoint() && ext.IsPoint() && ext.Lo >= 1 {
			sc.env[iv.Var] = Interval{lo.Lo, lo.Lo + ext.Lo - 1}
			defined = append(defined, iv.Var)
		}
	}
	return defined
}

// descend records s as an allocation point and moves down into the one
// child of s that holds every access of the buffer, when the rules allow.
func (sc *compactScope) descend(s Stmt, inLoop bool) {
	sc.points = append(sc.points, compactPoint{at: s, env: copyEnv(sc.env), inLoop: inLoop, threads: append([]*For(nil), sc.threads...)})
	if nodeAccesses(s, sc.buf) {
		return
	}
	var holding []Stmt
	for _, c := range SubStmts(s) {
		if AccessesBuffer(c, sc.buf) {
			holding = append(holding, c)
		}
	}
	if len(holding) != 1 {
		return
	}
	child := holding[0]
	switch x := s.(type) {
	case *For:
		if !sc.canEnterLoop(x) {
			return
		}
		inLoop = true
	case *Block:
		if isReduction(x) && storesBuffer(x, sc.buf) {
			return
		}
	}
	undo := sc.enter(s)
	defer undo()
	sc.descend(child, inLoop)
}

// canEnterLoop reports whether the allocation may move into the body of
// loop f (see CompactBufferAllocation).
func (sc *compactScope) canEnterLoop(f *For) bool {
	b := sc.buf
	switch f.Kind {
	case Vectorized, Unrolled:
		return false
	case ThreadBinding:
		switch b.Scope {
		case ScopeLocal:
		case ScopeShared:
		default:
			return false
		}
	case Serial:
		budget := sc.budget
		if bu, ok := AutoUnrollBudget(f); ok {
			budget = bu
		}
		if AutoUnrolls(f, budget) {
			return false
		}
	}
	if reductionCarried(f, b) || accumulatingStore(f.Body, b) || !firstAccessStores(f.Body, b) {
		return false
	}
	return sc.storesCoverLoads(f)
}

// firstAccessStores reports whether, in program order, the first access
// of b under s is a store (an iteration that reads b first would read
// what the previous iteration left).
func firstAccessStores(s Stmt, b *Buffer) bool {
	result, found := true, false
	var walk func(s Stmt)
	walk = func(s Stmt) {
		if found || s == nil {
			return
		}
		if st, ok := s.(*BufferStore); ok {
			if loadsBuffer(st.Value, b) || anyLoads(st.Indices, b) {
				result, found = false, true
			} else if st.Buffer == b {
				found = true
			}
			return
		}
		if _, isBlock := s.(*Block); !isBlock && nodeAccesses(s, b) {
			result, found = false, true
			return
		}
		for _, c := range SubStmts(s) {
			walk(c)
		}
	}
	walk(s)
	return result
}

// storesCoverLoads reports whether, in one iteration of f, the loads of
// the buffer lie inside the region its stores write.
func (sc *compactScope) storesCoverLoads(f *For) bool {
	undo := sc.enter(f)
	defer undo()
	bufs := map[*Buffer]bool{sc.buf: true}
	env := copyEnv(sc.env)
	loads := CollectAccesses(f.Body, bufs, false, NewRelaxEnv(env))[sc.buf]
	if loads == nil {
		return true
	}
	stores := CollectAccesses(f.Body, bufs, true, NewRelaxEnv(env))[sc.buf]
	if stores == nil || !loads.OK || !stores.OK {
		return false
	}
	for d := range loads.Dims {
		if !ProveLE(stores.Dims[d].Lo, loads.Dims[d].Lo, env) || !ProveLE(loads.Dims[d].Hi, stores.Dims[d].Hi, env) {
			return false
		}
	}
	return true
}

// reductionCarried reports whether a block under f that stores b has a
// reduce iteration variable whose binding depends on f's variable.
func reductionCarried(f *For, b *Buffer) bool {
	carried := false
	sub := map[*Var]Expr{}
	var walk func(s Stmt)
	walk = func(s Stmt) {
		if carried {
			return
		}
		if r, ok := s.(*BlockRealize); ok && r.Block != nil {
			for i, iv := range r.Block.IterVars {
				if i < len(r.Values) {
					sub[iv.Var] = Substitute(r.Values[i], sub)
					if iv.Kind == Reduce && UsesVar(sub[iv.Var], f.Var) && storesBuffer(r.Block, b) {
						carried = true
					}
				}
			}
		}
		for _, c := range SubStmts(s) {
			walk(c)
		}
	}
	walk(f.Body)
	return carried
}

// accumulatingStore reports whether a store of b outside any block, under
// s, reads b.
func accumulatingStore(s Stmt, b *Buffer) bool {
	found := false
	var walk func(s Stmt)
	walk = func(s Stmt) {
		switch x := s.(type) {
		case *BlockRealize:
			return
		case *BufferStore:
			if x.Buffer == b && loadsBuffer(x.Value, b) {
				found = true
			}
		}
		for _, c := range SubStmts(s) {
			walk(c)
		}
	}
	walk(s)
	return found
}

// compactRegion is the origin and shape of b compacted to its accesses
// below point p; false when an access cannot be bounded.
func compactRegion(p compactPoint, b *Buffer) (off, shape []Expr, ok bool) {
	bufs := map[*Buffer]bool{b: true}
	var acc *AccessRegion
	for _, stores := range []bool{false, true} {
		re := NewRelaxEnv(p.env)
		if b.Scope == ScopeShared {
			for _, f := range p.threads {
				re.Relaxed[f.Var] = SymRange{Lo: f.Min, Hi: Simplify(Add(f.Min, Sub(f.Extent, IntOf(f.Extent.DType(), 1))), p.env)}
			}
		}
		a := CollectAccesses(p.at, bufs, stores, re)[b]
		switch {
		case a == nil:
			continue
		case !a.OK:
			return nil, nil, false
		case acc == nil:
			acc = a
		default:
			for d := range acc.Dims {
				acc.Dims[d] = UnionRange(acc.Dims[d], a.Dims[d], p.env)
			}
		}
	}
	if acc == nil {
		return nil, nil, false
	}
	off, shape = make([]Expr, len(b.Shape)), make([]Expr, len(b.Shape))
	for d, old := range b.Shape {
		t := old.DType()
		off[d], shape[d] = IntOf(t, 0), old
		lo, hi := acc.Dims[d].Lo, acc.Dims[d].Hi
		if lo.DType() != t || hi.DType() != t {
			continue
		}
		ext := Bound(Simplify(Add(Sub(hi, lo), IntOf(t, 1)), p.env), p.env)
		if ext.IsFull() || ext.Hi < 1 {
			continue
		}
		if c, isConst := old.(*IntImm); isConst && ext.Hi >= c.Value {
			continue
		}
		off[d], shape[d] = Simplify(lo, p.env), IntOf(t, ext.Hi)
	}
	return off, shape, true
}

// fitsMove reports whether a buffer of b's dtype and this shape may be
// allocated inside a loop.
func fitsMove(b *Buffer, shape []Expr) bool {
	n := int64(ElemBytes(b.DType))
	for _, d := range shape {
		c, ok := d.(*IntImm)
		if !ok || c.Value <= 0 {
			return false
		}
		n *= c.Value
		if n > CompactMaxMoveBytes {
			return false
		}
	}
	return true
}

// placeAllocation removes b's allocation at site and allocates it around
// at instead (in at's alloc list when at is a block).
func placeAllocation(body, site, at Stmt, b *Buffer) Stmt {
	without := func(as []*Buffer) []*Buffer {
		var out []*Buffer
		for _, a := range as {
			if a != b {
				out = append(out, a)
			}
		}
		return out
	}
	var fn func(x Stmt) (Stmt, bool)
	fn = func(x Stmt) (Stmt, bool) {
		switch {
		case x == at:
			if blk, ok := x.(*Block); ok {
				c := *blk
				c.Allocs = append(without(blk.Allocs), b)
				return &c, true
			}
			return &Allocate{Buffer: b, Body: x, Loc: x.Location()}, true
		case x == site:
			if a, ok := x.(*Allocate); ok {
				return Mutate(a.Body, fn), true
			}
			blk := *x.(*Block)
			blk.Allocs = without(blk.Allocs)
			blk.Init, blk.Body = Mutate(blk.Init, fn), Mutate(blk.Body, fn)
			return &blk, true
		}
		return nil, false
	}
	return Mutate(body, fn)
}

// bindingIndices rewrites the indices of b's loads and stores inside
// blocks in terms of the enclosing loops (the block iteration variables
// replaced by their bindings, as TVM's ConvertBlocksToOpaque does before
// compaction), so that the shift to the compacted origin simplifies away:
// (i0*64 + i1*8 + i2) - i0*64 is i1*8 + i2, an address code generation
// sees as loop-invariant in the reduction loops. The value is the same
// wherever the block runs (an iteration variable equals its binding).
func bindingIndices(body Stmt, b *Buffer) Stmt {
	sub := map[*Var]Expr{}
	idx := func(ix []Expr) []Expr {
		out := make([]Expr, len(ix))
		for i, e := range ix {
			out[i] = Substitute(e, sub)
		}
		return out
	}
	load := func(buf *Buffer, ix []Expr) Expr {
		if buf == b {
			ix = idx(ix)
		}
		return &BufferLoad{Buffer: buf, Indices: ix}
	}
	return Mutate(body, func(x Stmt) (Stmt, bool) {
		switch n := x.(type) {
		case *BlockRealize:
			// Iteration variables are unique, so bindings are never
			// removed: no expression outside the block mentions them.
			if n.Block != nil {
				for i, iv := range n.Block.IterVars {
					if i < len(n.Values) {
						sub[iv.Var] = Substitute(n.Values[i], sub)
					}
				}
			}
		case *BufferStore:
			if len(sub) == 0 {
				return nil, false
			}
			c := *n
			c.Value = MapExpr(n.Value, nil, load)
			if n.Buffer == b {
				c.Indices = idx(n.Indices)
			}
			return &c, true
		}
		return nil, false
	})
}

// ---- access queries ----

// nodeAccesses reports whether s itself (not a child statement) uses b:
// its expressions load it, it stores it, or it is a block naming b in a
// read or write region.
func nodeAccesses(s Stmt, b *Buffer) bool {
	switch x := s.(type) {
	case *BufferStore:
		return x.Buffer == b || loadsBuffer(x.Value, b) || anyLoads(x.Indices, b)
	case *For:
		return loadsBuffer(x.Min, b) || loadsBuffer(x.Extent, b)
	case *BlockRealize:
		return anyLoads(x.Values, b) || loadsBuffer(x.Predicate, b)
	case *Block:
		for _, rs := range [][]BufferRegion{x.Reads, x.Writes} {
			for _, r := range rs {
				if r.Buffer == b {
					return true
				}
			}
		}
	case *IfThenElse:
		return loadsBuffer(x.Cond, b)
	case *LetStmt:
		return loadsBuffer(x.Value, b)
	case *Evaluate:
		return loadsBuffer(x.Value, b)
	case *CallKernel:
		return passesBuffer(x, b)
	}
	return false
}

func passesBuffer(c *CallKernel, b *Buffer) bool {
	for _, a := range c.Args {
		if a == b {
			return true
		}
	}
	return false
}

// passedToCall reports whether a tir.call below s passes b (its callee
// expects the whole buffer, so b is not compacted).
func passedToCall(s Stmt, b *Buffer) bool {
	return anyStmt(s, func(x Stmt) bool {
		c, ok := x.(*CallKernel)
		return ok && passesBuffer(c, b)
	})
}

// AccessesBuffer reports whether s or a statement below it uses b (a
// load, a store, or a block region naming it).
func AccessesBuffer(s Stmt, b *Buffer) bool {
	return anyStmt(s, func(x Stmt) bool { return nodeAccesses(x, b) })
}

// storesBuffer reports whether a store below s writes b.
func storesBuffer(s Stmt, b *Buffer) bool {
	return anyStmt(s, func(x Stmt) bool {
		st, ok := x.(*BufferStore)
		return ok && st.Buffer == b
	})
}

func isReduction(b *Block) bool {
	for _, iv := range b.IterVars {
		if iv.Kind == Reduce {
			return true
		}
	}
	return false
}

func loadsBuffer(e Expr, b *Buffer) bool {
	return anyExpr(e, func(x Expr) bool {
		l, ok := x.(*BufferLoad)
		return ok && l.Buffer == b
	})
}

func anyLoads(es []Expr, b *Buffer) bool {
	for _, e := range es {
		if loadsBuffer(e, b) {
			return true
		}
	}
	return false
}

// anyStmt reports whether pred holds for s or a statement below it.
func anyStmt(s Stmt, pred func(Stmt) bool) bool {
	found := false
	VisitStmt(s, func(x Stmt) bool {
		found = found || pred(x)
		return !found
	})
	return found
}

// anyExpr reports whether pred holds for e or a sub-expression.
func anyExpr(e Expr, pred func(Expr) bool) bool {
	found := false
	VisitExpr(e, func(x Expr) bool {
		found = found || pred(x)
		return !found
	})
	return found
}

func copyEnv(env BoundEnv) BoundEnv {
	out := make(BoundEnv, len(env))
	for k, v := range env {
		out[k] = v
	}
	return out
}
