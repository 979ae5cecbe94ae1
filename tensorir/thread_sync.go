package tensorir

import (
	"fmt"
	"strings"
)

// Thread synchronization for shared memory (TVM's ThreadSync pass for the
// "shared" scope, registered as thread-sync).
//
// In a GPU kernel (tessera.kernel) every thread runs the statements
// outside its thread-bound loops, and the body of a threadIdx loop once.
// A shared buffer written by some threads and then read (RAW), or read
// and then written (WAR), by others needs a barrier between the two
// accesses. The pass walks each statement sequence in program order,
// keeping the shared buffers read and written since the last barrier; a
// statement that reads a buffer written since then, or writes one read
// since then, gets a tir.barrier before it; for a loop, before the
// loop (once) rather than before the access inside it. A serial loop's body
// is planned for the state flowing around its back edge too (a
// loop-carried WAR: iteration k+1 refilling a tile that iteration k's
// threads still read), iterating to a fixed point; a blockIdx loop has no
// back-edge dependence (its iterations are different thread blocks).
//
// Barriers go only where every thread of the block reaches them: between
// statements of a sequence outside conditionals and predicated blocks,
// inside serial loops of constant extent, and inside threadIdx loops
// whose extent is the launch extent of their axis (no guard). A block
// instance runs in one thread, so accesses inside it need no barrier. A
// dependence inside a construct where no barrier can go (an if, a guarded
// thread loop, a loop of thread-dependent extent) is an error naming the
// buffer. The analysis is at whole-buffer granularity: it may place a
// barrier that an index analysis would prove unnecessary, never omit one
// that is needed.

func init() {
	RegisterModulePass("thread-sync", "insert thread-block barriers (tir.barrier) between shared-memory accesses of different threads (TVM's ThreadSync)", ThreadSync)
}

// ThreadSync inserts barriers into every kernel of m that uses shared
// memory. Errors: a dependence where no barrier can be placed.
func ThreadSync(m *Module) error {
	for _, f := range m.Funcs {
		if _, ok := f.Attrs[AttrKernel]; !ok {
			continue
		}
		body, err := ThreadSyncFunc(f)
		if err != nil {
			return err
		}
		f.Body = body
	}
	return nil
}

// ThreadSyncFunc returns f's body with barriers inserted.
func ThreadSyncFunc(f *PrimFunc) (Stmt, error) {
	ts := &threadSync{launch: ThreadExtents(f)}
	st := newSyncState()
	body := ts.stmt(f.Body, st)
	return body, ts.err
}

// ThreadExtents returns the launch extent of each thread axis bound in
// f (blockIdx.x … threadIdx.z): the largest constant extent of the loops
// bound to it. Non-constant extents are left out.
func ThreadExtents(f *PrimFunc) map[string]int64 {
	ext := map[string]int64{}
	VisitStmt(f.Body, func(s Stmt) bool {
		if l, ok := s.(*For); ok && l.Kind == ThreadBinding && l.Thread != "vthread" {
			if c, ok := l.Extent.(*IntImm); ok {
				ext[l.Thread] = max(ext[l.Thread], c.Value)
			}
		}
		return true
	})
	return ext
}

// syncState holds the shared buffers accessed since the last barrier.
type syncState struct {
	reads, writes map[*Buffer]bool
}

func newSyncState() *syncState {
	return &syncState{reads: map[*Buffer]bool{}, writes: map[*Buffer]bool{}}
}

func (s *syncState) clone() *syncState {
	c := newSyncState()
	c.union(s)
	return c
}

func (s *syncState) union(o *syncState) {
	for b := range o.reads {
		s.reads[b] = true
	}
	for b := range o.writes {
		s.writes[b] = true
	}
}

func (s *syncState) clear() {
	clear(s.reads)
	clear(s.writes)
}

func (s *syncState) equal(o *syncState) bool {
	return len(s.reads) == len(o.reads) && len(s.writes) == len(o.writes) && s.contains(o)
}

func (s *syncState) contains(o *syncState) bool {
	for b := range o.reads {
		if !s.reads[b] {
			return false
		}
	}
	for b := range o.writes {
		if !s.writes[b] {
			return false
		}
	}
	return true
}

// conflict names a shared buffer that acc accesses in conflict with s, a
// read after a write (RAW) or a write after a read (WAR), or nil. Two
// writes are not a conflict (as in TVM's ThreadSync): a schedule writes
// each element of a tile once per fill, and the barrier before the next
// read orders them.
func (s *syncState) conflict(acc *syncState) *Buffer {
	for b := range acc.reads {
		if s.writes[b] {
			return b
		}
	}
	for b := range acc.writes {
		if s.reads[b] {
			return b
		}
	}
	return nil
}

type threadSync struct {
	launch map[string]int64
	err    error
}

func (ts *threadSync) fail(loc Location, format string, args ...any) {
	if ts.err == nil {
		ts.err = Errorf(loc, "thread-sync: "+format, args...)
	}
}

// stmt plans s entered with st (updated to the state after s) and
// returns s with barriers inserted.
func (ts *threadSync) stmt(s Stmt, st *syncState) Stmt {
	switch x := s.(type) {
	case *SeqStmt:
		out := make([]Stmt, 0, len(x.Stmts))
		for _, c := range x.Stmts {
			out = append(out, ts.child(c, st)...)
		}
		return &SeqStmt{Stmts: out, Loc: x.Loc}
	case *Allocate:
		c := *x
		c.Body = ts.seqBody(x.Body, st)
		return &c
	case *LetStmt:
		c := *x
		c.Body = ts.seqBody(x.Body, st)
		return &c
	case *For:
		return ts.loop(x, st)
	}
	return Seq(ts.child(s, st)...)
}

// child plans one statement of a sequence. A uniform statement is
// planned inside (its own barriers go where its accesses need them); an
// atomic one (a block, a conditional, a guarded thread loop) gets a
// barrier before it when any of its accesses conflicts with the state.
func (ts *threadSync) child(c Stmt, st *syncState) []Stmt {
	if ts.uniform(c) {
		// A barrier a loop needs on entry goes before it rather than
		// inside: once, not once per iteration (a thread loop runs its body
		// once per thread; a serial loop's back edge is planned inside).
		if l, ok := c.(*For); ok && st.conflict(firstAccesses(l.Body)) != nil {
			st.clear()
			return []Stmt{&Barrier{Loc: c.Location()}, ts.stmt(c, st)}
		}
		return []Stmt{ts.stmt(c, st)}
	}
	acc := accesses(c)
	ts.checkInside(c)
	var out []Stmt
	if st.conflict(acc) != nil {
		out = append(out, &Barrier{Loc: c.Location()})
		st.clear()
	}
	st.union(acc)
	return append(out, c)
}

// seqBody plans a body as a one-statement sequence (so that a barrier may
// go before its first statement).
func (ts *threadSync) seqBody(b Stmt, st *syncState) Stmt {
	return Seq(ts.child(b, st)...)
}

// loop plans a uniform loop's body; a serial (or vthread) loop's body is
// planned for entry states that include its own exit state until they
// stop growing, so back-edge dependences get their barrier.
func (ts *threadSync) loop(x *For, st *syncState) Stmt {
	c := *x
	if x.Kind == ThreadBinding && strings.HasPrefix(x.Thread, "blockIdx") {
		c.Body = ts.seqBody(x.Body, st)
		return &c
	}
	entry := st.clone()
	for range 8 {
		probe := entry.clone()
		c.Body = ts.seqBody(x.Body, probe)
		if (x.Kind == ThreadBinding && x.Thread != "vthread") || entry.contains(probe) {
			st.clear()
			st.union(probe)
			st.union(entry)
			return &c
		}
		entry.union(probe)
	}
	ts.fail(x.Loc, "loop %%%s: the barrier plan does not converge", x.Var.Name)
	return &c
}

// uniform reports whether every thread of the block runs s's statements
// the same number of times, so a barrier may go inside it.
func (ts *threadSync) uniform(s Stmt) bool {
	switch x := s.(type) {
	case *SeqStmt, *Allocate, *LetStmt:
		return true
	case *For:
		if x.Kind == ThreadBinding {
			if x.Thread == "vthread" || strings.HasPrefix(x.Thread, "blockIdx") {
				return true
			}
			c, ok := x.Extent.(*IntImm)
			m, ok2 := x.Min.(*IntImm)
			return ok && ok2 && m.Value == 0 && c.Value >= ts.launch[x.Thread]
		}
		if x.Kind == Vectorized {
			return false // one vector statement: no barrier inside
		}
		_, ok := x.Extent.(*IntImm)
		_, ok2 := x.Min.(*IntImm)
		return ok && ok2
	}
	return false
}

// checkInside refuses a shared-memory dependence between two statements
// inside a construct where no barrier can go (block bodies run in one
// thread and are exempt).
func (ts *threadSync) checkInside(s Stmt) {
	if _, ok := s.(*BlockRealize); ok {
		return
	}
	st := newSyncState()
	var walk func(Stmt)
	walk = func(s Stmt) {
		switch x := s.(type) {
		case *SeqStmt:
			for _, c := range x.Stmts {
				walk(c)
			}
			return
		case *For:
			walk(x.Body)
			return
		case *Allocate:
			walk(x.Body)
			return
		case *LetStmt:
			walk(x.Body)
			return
		case *IfThenElse:
			walk(x.Then)
			if x.Else != nil {
				walk(x.Else)
			}
			return
		}
		acc := accesses(s)
		if b := st.conflict(acc); b != nil {
			ts.fail(s.Location(), "shared buffer %%%s is written and read by different threads inside a conditional or a guarded thread loop, where no barrier can be placed", b.Name)
		}
		st.union(acc)
	}
	walk(s)
}

// accesses are the shared buffers s reads and writes anywhere inside.
func accesses(s Stmt) *syncState {
	st := newSyncState()
	VisitStmt(s, func(x Stmt) bool {
		switch y := x.(type) {
		case *BufferStore:
			if y.Buffer.Scope == ScopeShared {
				st.writes[y.Buffer] = true
			}
		}
		forEachStmtExpr(x, func(e Expr) {
			VisitExpr(e, func(e Expr) bool {
				if l, ok := e.(*BufferLoad); ok && l.Buffer.Scope == ScopeShared {
					st.reads[l.Buffer] = true
				}
				return true
			})
		})
		return true
	})
	return st
}

// firstAccesses are the shared accesses of s in program order up to the
// first statement that conflicts with those before it (where planning
// would put s's first barrier), or all of them.
func firstAccesses(s Stmt) *syncState {
	st := newSyncState()
	var stop bool
	var walk func(Stmt)
	walk = func(s Stmt) {
		if stop {
			return
		}
		switch x := s.(type) {
		case *SeqStmt:
			for _, c := range x.Stmts {
				walk(c)
			}
			return
		case *Allocate:
			walk(x.Body)
			return
		case *LetStmt:
			walk(x.Body)
			return
		}
		acc := accesses(s)
		if st.conflict(acc) != nil {
			stop = true
			return
		}
		st.union(acc)
	}
	walk(s)
	return st
}

// String prints the state, for tests.
func (s *syncState) String() string {
	return fmt.Sprintf("reads %d writes %d", len(s.reads), len(s.writes))
}
