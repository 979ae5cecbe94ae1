package tensorir

import "strings"

// Register prefetch of shared-memory tiles (registered as
// prefetch-shared): the software pipelining of a GPU reduction loop whose
// body stages tiles in shared memory (a cooperative fetch per tile, then
// the compute reading them), in the form of the classic SGEMM kernels
// (Volkov and Demmel 2008; CUTLASS's "register double buffering"; TVM's
// InjectSoftwarePipeline with the fetch split into a global→local stage
// and a local→shared stage): each thread loads its part of the next
// step's tiles from global memory into registers before computing on the
// current ones, and stores them to the tiles after, so global-memory
// latency overlaps the compute instead of stalling every step. A loop
// annotated AttrPrefetchShared (the GPU rules set it on the reduction
// step loop) whose body is
//
//	allocate S_1 … S_n (shared) { fetch_1; …; fetch_n; compute }
//
// each fetch a loop nest around one block that stores a global buffer's
// element into S_i, becomes
//
//	allocate S_1 … S_n, R_1 … R_n (local) {
//	  fetch_1 … fetch_n at the first step
//	  for v { if v+1 < end { load_i(v+1) into R_i }; compute; if v+1 < end { store_i(v+1) from R_i } }
//	}
//
// R_i holds one thread's elements of fetch i: its shape is the product of
// the fetch's loops that are not thread-bound. thread-sync, run after,
// places the barriers (before the compute and before the stores). A loop
// whose body has another form, or that is not inside a threadIdx loop
// (the register buffers must be per thread in the tensor IR too), is left
// as it is, and the annotation removed. Runs after compact-buffer-allocation (the shared tiles have
// their tile size, independent of the step).

// AttrPrefetchShared is the loop annotation that asks for the register
// prefetch of the shared tiles fetched in the loop's body.
const AttrPrefetchShared = "software_pipeline_prefetch"

func init() {
	RegisterModulePass("prefetch-shared", "prefetch the next reduction step's shared-memory tiles into registers during the compute (loops annotated software_pipeline_prefetch)", PrefetchShared)
}

// PrefetchShared rewrites the annotated loops of every kernel of m.
func PrefetchShared(m *Module) error {
	for _, f := range m.Funcs {
		if _, ok := f.Attrs[AttrKernel]; !ok {
			continue
		}
		f.Body = prefetchIn(f.Body, false)
	}
	return nil
}

// prefetchIn rewrites the annotated loops in s; inThread tells whether s
// lies inside a threadIdx loop. Only a loop inside one is rewritten: its
// register buffers are then allocated per thread in the tensor IR too
// (the interpreter runs such a kernel's threads in lockstep), as the GPU
// rules' kernels, whose cooperative fetches are nested in the compute's
// thread loop, are.
func prefetchIn(s Stmt, inThread bool) Stmt {
	return Mutate(s, func(st Stmt) (Stmt, bool) {
		l, ok := st.(*For)
		if !ok {
			return nil, false
		}
		if l.Kind == ThreadBinding && strings.HasPrefix(l.Thread, "threadIdx") && !inThread {
			c := *l
			c.Body = prefetchIn(l.Body, true)
			return &c, true
		}
		if l.Annotations[AttrPrefetchShared] == nil {
			return nil, false
		}
		return prefetchLoop(l, inThread), true
	})
}

// prefetchLoop is l rewritten (or l without the annotation when it is not
// inside a threadIdx loop or its body is not of the form above).
func prefetchLoop(l *For, inThread bool) Stmt {
	plain := *l
	plain.Annotations = Attrs{}
	for k, v := range l.Annotations {
		if k != AttrPrefetchShared {
			plain.Annotations[k] = v
		}
	}
	plain.Body = prefetchIn(l.Body, inThread)
	if _, ok := l.Extent.(*IntImm); !ok || !inThread {
		return &plain
	}
	var allocs []*Allocate
	body := plain.Body
	for {
		a, ok := body.(*Allocate)
		if !ok || a.Buffer.Scope != ScopeShared || !constShape(a.Buffer) {
			break
		}
		allocs = append(allocs, a)
		body = a.Body
	}
	seq, ok := body.(*SeqStmt)
	if len(allocs) == 0 || !ok {
		return &plain
	}
	shared := map[*Buffer]bool{}
	for _, a := range allocs {
		shared[a.Buffer] = true
	}
	var fetches []*fetchNest
	for _, st := range seq.Stmts {
		fn := matchFetch(st, shared, seq)
		if fn == nil {
			break
		}
		fetches = append(fetches, fn)
	}
	if len(fetches) == 0 || len(fetches) == len(seq.Stmts) {
		return &plain
	}
	compute := Seq(seq.Stmts[len(fetches):]...)
	return buildPrefetch(&plain, allocs, fetches, compute)
}

func constShape(b *Buffer) bool {
	_, ok := b.ConstShape()
	return ok
}

// fetchNest is a matched cooperative fetch: its loops (outermost first),
// the block realize, the tile it writes and the register buffer that will
// hold one thread's elements.
type fetchNest struct {
	loops   []*For
	realize *BlockRealize
	store   *BufferStore
	reg     *Buffer
	// regIndex is the register index of an element: the serial and
	// vectorized loops' variables (minus their minimum) in row-major order.
	regIndex Expr
}

// matchFetch matches st as a fetch: perfectly nested loops of constant
// extent around one block whose body stores into a shared tile of the
// loop (shared) a value that reads only buffers the loop body (seq) does
// not write.
func matchFetch(st Stmt, shared map[*Buffer]bool, seq *SeqStmt) *fetchNest {
	fn := &fetchNest{}
	cur := st
	for {
		l, ok := cur.(*For)
		if !ok {
			break
		}
		if _, c := l.Extent.(*IntImm); !c {
			return nil
		}
		fn.loops = append(fn.loops, l)
		cur = l.Body
	}
	r, ok := cur.(*BlockRealize)
	if !ok || len(fn.loops) == 0 || r.Block.Init != nil || len(r.Block.Allocs) > 0 {
		return nil
	}
	store, ok := r.Block.Body.(*BufferStore)
	if !ok || !shared[store.Buffer] || len(r.Block.Writes) != 1 {
		return nil
	}
	if anyExpr(store.Value, func(e Expr) bool {
		ld, ok := e.(*BufferLoad)
		return ok && (ld.Buffer.Scope != ScopeGlobal || storesBuffer(seq, ld.Buffer))
	}) {
		return nil
	}
	fn.realize, fn.store = r, store
	var index Expr = Int(0)
	size := int64(1)
	for _, l := range fn.loops {
		if l.Kind == ThreadBinding {
			continue
		}
		ext := l.Extent.(*IntImm).Value
		size *= ext
		index = Add(Mul(index, Int(ext)), Sub(l.Var, l.Min))
	}
	fn.reg = NewBuffer(store.Buffer.Name+"_reg", store.Buffer.DType, size)
	fn.reg.Scope = ScopeLocal
	fn.regIndex = index
	return fn
}

// buildPrefetch assembles the pipelined loop (see above).
func buildPrefetch(l *For, allocs []*Allocate, fetches []*fetchNest, compute Stmt) Stmt {
	v := l.Var
	one := IntOf(v.Type, 1)
	end := Add(l.Min, l.Extent)
	more := Bin(OpLT, Add(v, one), end)
	// The next step, clamped to the last one: the guard skips the last
	// step's fetch, and the bindings stay in their domains.
	next := Min(Add(v, one), Sub(end, one))
	var prologue, loads, stores []Stmt
	for _, fn := range fetches {
		prologue = append(prologue, fn.clone(map[*Var]Expr{v: l.Min}, "", nil))
		loads = append(loads, fn.clone(map[*Var]Expr{v: next}, "_prefetch", fn.loadBody))
		stores = append(stores, fn.clone(map[*Var]Expr{v: next}, "_store", fn.storeBody))
	}
	loop := *l
	loop.Body = Seq(&IfThenElse{Cond: more, Then: Seq(loads...)}, compute, &IfThenElse{Cond: more, Then: Seq(stores...)})
	var out Stmt = Seq(append(prologue, &loop)...)
	for i := len(fetches) - 1; i >= 0; i-- {
		out = &Allocate{Buffer: fetches[i].reg, Body: out, Loc: l.Loc}
	}
	for i := len(allocs) - 1; i >= 0; i-- {
		out = &Allocate{Buffer: allocs[i].Buffer, Body: out, Loc: allocs[i].Loc}
	}
	return out
}

// loadBody is the fetch's block body storing the loaded value into the
// register buffer; storeBody stores the register into the tile.
func (fn *fetchNest) loadBody(b *Block, sub func(Expr) Expr) {
	idx := sub(fn.regIndex)
	b.Body = &BufferStore{Buffer: fn.reg, Indices: []Expr{idx}, Value: sub(fn.store.Value), Loc: fn.store.Loc}
	b.Writes = []BufferRegion{{Buffer: fn.reg, Region: []Range{{Min: idx, Extent: Int(1)}}}}
}

func (fn *fetchNest) storeBody(b *Block, sub func(Expr) Expr) {
	idx := sub(fn.regIndex)
	idxs := make([]Expr, len(fn.store.Indices))
	for i, e := range fn.store.Indices {
		idxs[i] = sub(e)
	}
	b.Body = &BufferStore{Buffer: fn.store.Buffer, Indices: idxs, Value: &BufferLoad{Buffer: fn.reg, Indices: []Expr{idx}}, Loc: fn.store.Loc}
	b.Reads = []BufferRegion{{Buffer: fn.reg, Region: []Range{{Min: idx, Extent: Int(1)}}}}
}

// clone copies the fetch nest with fresh loop and block variables, m
// substituted (the step), the block renamed with suffix and its body
// replaced by body (nil: kept).
func (fn *fetchNest) clone(m map[*Var]Expr, suffix string, body func(*Block, func(Expr) Expr)) Stmt {
	sub := map[*Var]Expr{}
	for k, e := range m {
		sub[k] = e
	}
	s := func(e Expr) Expr {
		if e == nil {
			return nil
		}
		return Simplify(Substitute(e, sub), nil)
	}
	loops := make([]*For, len(fn.loops))
	for i, l := range fn.loops {
		c := *l
		c.Var = NewVar(l.Var.Name, l.Var.Type)
		c.Min, c.Extent = s(l.Min), s(l.Extent)
		sub[l.Var] = c.Var
		loops[i] = &c
	}
	b := *fn.realize.Block
	b.Name += suffix
	b.IterVars = make([]*IterVar, len(fn.realize.Block.IterVars))
	values := make([]Expr, len(fn.realize.Values))
	for i, iv := range fn.realize.Block.IterVars {
		values[i] = s(fn.realize.Values[i])
		nv := &IterVar{Var: NewVar(iv.Var.Name, iv.Var.Type), Dom: iv.Dom, Kind: iv.Kind}
		b.IterVars[i] = nv
	}
	for i, iv := range fn.realize.Block.IterVars {
		sub[iv.Var] = b.IterVars[i].Var
	}
	b.Reads = substRegions(fn.realize.Block.Reads, s)
	b.Writes = substRegions(fn.realize.Block.Writes, s)
	st := *fn.store
	st.Value = s(fn.store.Value)
	st.Indices = make([]Expr, len(fn.store.Indices))
	for i, e := range fn.store.Indices {
		st.Indices[i] = s(e)
	}
	b.Body = &st
	if body != nil {
		body(&b, s)
	}
	r := &BlockRealize{Values: values, Predicate: s(fn.realize.Predicate), Block: &b, Loc: fn.realize.Loc}
	var out Stmt = r
	for i := len(loops) - 1; i >= 0; i-- {
		loops[i].Body = out
		out = loops[i]
	}
	return out
}

func substRegions(rs []BufferRegion, s func(Expr) Expr) []BufferRegion {
	out := make([]BufferRegion, len(rs))
	for i, r := range rs {
		rg := make([]Range, len(r.Region))
		for j, x := range r.Region {
			rg[j] = Range{Min: s(x.Min), Extent: s(x.Extent)}
		}
		out[i] = BufferRegion{Buffer: r.Buffer, Region: rg}
	}
	return out
}
