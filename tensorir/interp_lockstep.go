package tensorir

import "strings"

// Lockstep execution of thread blocks (the interpreter's GPU semantics
// for kernels with barriers).
//
// Without barriers the interpreter runs thread-bound loops as serial
// loops; a cooperative fetch nested in the compute's threadIdx loop (TVM's
// merged binding) then repeats the whole fetch in every outer iteration,
// which computes what the GPU computes without relying on barriers. Once
// thread-sync has placed barriers, a threadIdx loop whose body holds one
// runs as the GPU runs it: its iterations are threads with a frame each,
// and the body advances in lockstep from barrier to barrier: the
// statements between two barriers run in one thread after another (one
// legal interleaving), a barrier is a point every thread has reached, and
// so is each iteration's end of a loop around a barrier (a missing
// barrier at a loop's back edge is not detected). A threadIdx loop on the same axis nested in
// it runs one iteration in each thread, its own (thread t runs iteration
// t when t is below the loop's extent); local buffers are per thread,
// shared ones per block. A missing barrier therefore shows as a wrong
// result (a thread reads a shared tile other threads have not written
// yet), and code that keeps data in a thread's registers across a
// barrier (a register prefetch) is interpreted as it runs. Loops,
// conditions and lets around a barrier must be uniform across the
// threads, as on the GPU; otherwise the run fails naming the statement.

// maxLockstepThreads bounds the threads of a lockstep loop (CUDA's
// threads per block).
const maxLockstepThreads = 1024

// lockFn runs a statement in every thread of a block in lockstep.
type lockFn func(frs []*frame)

// lockCtx is an enclosing lockstep threadIdx loop: its variable's slot
// and minimum.
type lockCtx struct {
	slot int
	lo   intFn
}

// holdsBarrier reports whether s contains a tir.barrier.
func holdsBarrier(s Stmt) bool {
	found := false
	VisitStmt(s, func(x Stmt) bool {
		if _, ok := x.(*Barrier); ok {
			found = true
		}
		return !found
	})
	return found
}

// lockstepLoop compiles threadIdx loop x whose body holds a barrier.
func (c *compiler) lockstepLoop(x *For) stmtFn {
	lo, ext := c.intExpr(x.Min), c.intExpr(x.Extent)
	slot, restore := c.defineVar(x.Var)
	if c.lock == nil {
		c.lock = map[string]lockCtx{}
	}
	c.lock[x.Thread] = lockCtx{slot: slot, lo: lo}
	body := c.lockStmt(x.Body)
	delete(c.lock, x.Thread)
	restore()
	t := x.Var.Type
	loc, block := c.loc, c.block
	return func(fr *frame) {
		l, n := lo(fr), ext(fr)
		if n > maxLockstepThreads {
			raise(loc, block, "threadIdx loop %%%s has %d iterations around a barrier: a thread block has at most %d threads", x.Var.Name, n, maxLockstepThreads)
		}
		frs := make([]*frame, max(n, 0))
		for i := range frs {
			f := *fr
			f.vals = append([]scalar(nil), fr.vals...)
			f.bufs = append([]*boundBuf(nil), fr.bufs...)
			f.vals[slot] = scalar{i: WrapInt(t, l+int64(i))}
			frs[i] = &f
		}
		if n > 0 {
			body(frs)
		}
	}
}

// ownIteration compiles a threadIdx loop nested in a lockstep loop on the
// same axis: each thread runs its own iteration.
func (c *compiler) ownIteration(x *For, outer lockCtx) stmtFn {
	lo, ext := c.intExpr(x.Min), c.intExpr(x.Extent)
	slot, restore := c.defineVar(x.Var)
	body := c.stmtOrNop(x.Body)
	restore()
	t := x.Var.Type
	return func(fr *frame) {
		tid := fr.vals[outer.slot].i - outer.lo(fr)
		if tid < ext(fr) {
			fr.vals[slot] = scalar{i: WrapInt(t, lo(fr)+tid)}
			body(fr)
		}
	}
}

// lockStmt compiles s to run in lockstep; a statement without a barrier
// runs in each thread in turn.
func (c *compiler) lockStmt(s Stmt) lockFn {
	if s == nil {
		return func([]*frame) {}
	}
	if !holdsBarrier(s) {
		f := c.stmt(s)
		return func(frs []*frame) {
			for _, fr := range frs {
				f(fr)
			}
		}
	}
	saved := c.loc
	if l := s.Location(); l.Known() {
		c.loc = l
	}
	defer func() { c.loc = saved }()
	switch x := s.(type) {
	case *SeqStmt:
		// Consecutive statements without a barrier run in each thread in
		// turn as one segment (any interleaving is legal between two
		// barriers; this one exposes a read of data another thread writes
		// later in the segment).
		var fns []lockFn
		var segment []Stmt
		flush := func() {
			if len(segment) > 0 {
				fns = append(fns, c.lockStmt(&SeqStmt{Stmts: segment}))
				segment = nil
			}
		}
		for _, st := range x.Stmts {
			switch {
			case st == nil:
			case holdsBarrier(st):
				flush()
				fns = append(fns, c.lockStmt(st))
			default:
				segment = append(segment, st)
			}
		}
		flush()
		return func(frs []*frame) {
			for _, f := range fns {
				f(frs)
			}
		}
	case *For:
		return c.lockFor(x)
	case *Allocate:
		return c.lockAllocate(x)
	case *IfThenElse:
		cond := c.uniform(c.intExpr(x.Cond), "condition")
		then, els := c.lockStmt(x.Then), c.lockStmt(x.Else)
		return func(frs []*frame) {
			if cond(frs) != 0 {
				then(frs)
			} else {
				els(frs)
			}
		}
	case *LetStmt:
		val := c.scalarExpr(x.Value)
		slot, restore := c.defineVar(x.Var)
		body := c.lockStmt(x.Body)
		restore()
		return func(frs []*frame) {
			for _, fr := range frs {
				fr.vals[slot] = val(fr)
			}
			body(frs)
		}
	case *Barrier:
		return func([]*frame) {}
	}
	return c.lockFail("a barrier inside this statement cannot be reached by every thread together")
}

// lockFor runs a loop around a barrier: its bounds must be the same in
// every thread (a thread-bound loop there is an error).
func (c *compiler) lockFor(x *For) lockFn {
	if x.Kind == ThreadBinding && strings.HasPrefix(x.Thread, "threadIdx") {
		return c.lockFail("a barrier inside threadIdx loop %%%s is reached by some threads only", x.Var.Name)
	}
	lo := c.uniform(c.intExpr(x.Min), "loop minimum")
	ext := c.uniform(c.intExpr(x.Extent), "loop extent")
	slot, restore := c.defineVar(x.Var)
	body := c.lockStmt(x.Body)
	restore()
	t := x.Var.Type
	return func(frs []*frame) {
		l, n := lo(frs), ext(frs)
		for i := int64(0); i < n; i++ {
			for _, fr := range frs {
				fr.vals[slot] = scalar{i: WrapInt(t, l+i)}
			}
			body(frs)
		}
	}
}

// lockAllocate allocates a shared buffer once for the block and a local
// one per thread.
func (c *compiler) lockAllocate(x *Allocate) lockFn {
	l := c.layout(x.Buffer)
	slot, restore := c.defineBuf(x.Buffer)
	body := c.lockStmt(x.Body)
	restore()
	shared := x.Buffer.Scope == ScopeShared
	return func(frs []*frame) {
		var one *boundBuf
		for _, fr := range frs {
			if one == nil || !shared {
				one = l.alloc(fr)
			}
			fr.bufs[slot] = one
		}
		body(frs)
		for _, fr := range frs {
			fr.bufs[slot] = nil
		}
	}
}

// uniform evaluates e in every thread and fails unless all agree.
func (c *compiler) uniform(e intFn, what string) func([]*frame) int64 {
	loc, block := c.loc, c.block
	return func(frs []*frame) int64 {
		v := e(frs[0])
		for _, fr := range frs[1:] {
			if e(fr) != v {
				raise(loc, block, "the %s around a barrier differs between threads", what)
			}
		}
		return v
	}
}

func (c *compiler) lockFail(format string, args ...any) lockFn {
	loc, block := c.loc, c.block
	return func([]*frame) { raise(loc, block, format, args...) }
}
