// Package schedule holds TVM-style schedule primitives on tensor IR.
// Each primitive is a function on a PrimFunc that checks its legality and
// refuses with an error naming the primitive, the block and the reason.
package schedule

import (
	"fmt"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// ComputeInline inlines the block named block of f into all its consumers
// (TVM's compute_inline, tvm/src/tir/schedule/primitive/compute_inline.cc):
// every load of the buffer the block writes is replaced by the block's
// stored value with its iteration variables substituted by the load's
// indices; the block, its loop nest and its buffer's allocation are
// removed. f is modified in place.
//
// Legality (as TVM's): the block exists and is realized; it has no reduce
// iteration variables (a reduction cannot be inlined); its body is a
// single store and it has no init or predicate; the store's indices are
// exactly its iteration variables, in order, whose domains cover the
// buffer (an injective, complete producer); the stored value does not read
// the buffer itself; the buffer is a local intermediate (allocated with
// tir.allocate or a block's alloc), not a parameter (an output), and no
// other block writes it; the block's loop nest holds nothing else; the
// buffer is not read before the block runs, and no buffer the block reads
// is written after it (either would change what the consumers compute).
// Errors read "compute_inline: block 'NAME' REASON".
func ComputeInline(f *tir.PrimFunc, block string) error {
	p, err := analyzeProducer(f, block)
	if err != nil {
		return err
	}
	f.Body = inlineStmt(f.Body, p)
	return nil
}

// InlineElementwise inlines every inlinable intermediate block of f, in
// program order, until none is left (TVM's auto-inline of injective
// producers): after it a chain of fused elementwise ops is one loop nest.
func InlineElementwise(f *tir.PrimFunc) error {
	_, err := InlineElementwiseBlocks(f)
	return err
}

// InlineElementwiseBlocks is InlineElementwise returning the names of the
// inlined blocks in the order they were inlined.
func InlineElementwiseBlocks(f *tir.PrimFunc) ([]string, error) {
	var done []string
	for {
		changed := false
		for _, name := range blockNames(f.Body) {
			if _, err := analyzeProducer(f, name); err != nil {
				continue
			}
			if err := ComputeInline(f, name); err != nil {
				return done, err
			}
			done = append(done, name)
			changed = true
			break
		}
		if !changed {
			return done, nil
		}
	}
}

// InlineElementwiseModule applies InlineElementwise to every function of
// m (host functions have no blocks and are left as they are, and so are
// kernels already scheduled, tensorir.AttrSchedule, and recurrence
// kernels, tensorir.AttrRecurrence, whose blocks carry state in a loop).
func InlineElementwiseModule(m *tir.Module) error {
	for _, f := range m.Funcs {
		_, done := f.Attrs[tir.AttrSchedule]
		if _, rec := f.Attrs[tir.AttrRecurrence]; done || rec {
			continue
		}
		if err := InlineElementwise(f); err != nil {
			return err
		}
	}
	return nil
}

func init() {
	tir.RegisterModulePass("inline-elementwise", "inline every spatial, injective intermediate block of each kernel into its consumers (compute_inline)", InlineElementwiseModule)
}

// producer is an inlinable block.
type producer struct {
	realize *tir.BlockRealize
	block   *tir.Block
	buf     *tir.Buffer
	store   *tir.BufferStore
	vars    []*tir.Var
	root    tir.Stmt // the outermost loop holding only the block (or the realize)
}

func refuse(block, format string, args ...any) error {
	return fmt.Errorf("compute_inline: block '%s' %s", block, fmt.Sprintf(format, args...))
}

func analyzeProducer(f *tir.PrimFunc, name string) (*producer, error) {
	var p *producer
	var path []tir.Stmt
	var found []tir.Stmt
	var walk func(s tir.Stmt)
	walk = func(s tir.Stmt) {
		if s == nil || p != nil {
			return
		}
		path = append(path, s)
		defer func() { path = path[:len(path)-1] }()
		if r, ok := s.(*tir.BlockRealize); ok && r.Block != nil && r.Block.Name == name {
			p = &producer{realize: r, block: r.Block}
			found = append([]tir.Stmt(nil), path...)
			return
		}
		for _, c := range children(s) {
			walk(c)
		}
	}
	walk(f.Body)
	if p == nil {
		return nil, refuse(name, "not found in @%s", f.Name)
	}
	b := p.block
	for _, iv := range b.IterVars {
		if iv.Kind == tir.Reduce {
			return nil, refuse(name, "is a reduction (reduce iteration variable %%%s); only spatial blocks can be inlined", iv.Var.Name)
		}
	}
	if b.Init != nil {
		return nil, refuse(name, "has an init statement")
	}
	if p.realize.Predicate != nil {
		return nil, refuse(name, "has a predicate")
	}
	if len(b.Allocs) > 0 {
		return nil, refuse(name, "allocates buffers")
	}
	st, ok := b.Body.(*tir.BufferStore)
	if !ok {
		return nil, refuse(name, "is not a single store")
	}
	p.store, p.buf = st, st.Buffer
	if f.Param(st.Buffer.Name) != nil && f.Param(st.Buffer.Name).Buffer == st.Buffer {
		return nil, refuse(name, "writes the output buffer %%%s (a parameter of @%s)", st.Buffer.Name, f.Name)
	}
	if len(st.Indices) != len(b.IterVars) {
		return nil, refuse(name, "has store indices that are not exactly its iteration variables")
	}
	for i, e := range st.Indices {
		v, ok := e.(*tir.Var)
		if !ok || v != b.IterVars[i].Var {
			return nil, refuse(name, "has store indices that are not exactly its iteration variables")
		}
		p.vars = append(p.vars, v)
		if i >= len(st.Buffer.Shape) {
			return nil, refuse(name, "stores with more indices than buffer %%%s has dimensions", st.Buffer.Name)
		}
		if !coversDim(b.IterVars[i].Dom, st.Buffer.Shape[i]) {
			return nil, refuse(name, "does not cover buffer %%%s (iteration domain of %%%s is not the dimension's extent)", st.Buffer.Name, v.Name)
		}
	}
	selfRead := false
	tir.VisitExpr(st.Value, func(e tir.Expr) bool {
		if l, ok := e.(*tir.BufferLoad); ok && l.Buffer == st.Buffer {
			selfRead = true
		}
		return true
	})
	if selfRead {
		return nil, refuse(name, "reads the buffer %%%s it writes", st.Buffer.Name)
	}
	// The buffer must be allocated in f and written only by this block.
	allocated, writers := false, 0
	tir.VisitStmt(f.Body, func(s tir.Stmt) bool {
		switch x := s.(type) {
		case *tir.Allocate:
			allocated = allocated || x.Buffer == st.Buffer
		case *tir.Block:
			for _, a := range x.Allocs {
				allocated = allocated || a == st.Buffer
			}
		case *tir.BufferStore:
			if x.Buffer == st.Buffer {
				writers++
			}
		}
		return true
	})
	if !allocated {
		return nil, refuse(name, "writes buffer %%%s, which is not an intermediate allocated in @%s", st.Buffer.Name, f.Name)
	}
	if writers != 1 {
		return nil, refuse(name, "writes buffer %%%s, which %d other stores also write", st.Buffer.Name, writers-1)
	}
	// The loop nest around the block must hold only the block: walk up
	// through loops whose body is exactly the statement below.
	p.root = p.realize
	for i := len(found) - 2; i >= 0; i-- {
		loop, ok := found[i].(*tir.For)
		if !ok || loop.Body != found[i+1] {
			break
		}
		p.root = loop
	}
	if r := p.root; r != p.realize {
		for _, v := range p.realize.Values {
			usesOuter := false
			tir.VisitExpr(v, func(e tir.Expr) bool {
				if x, ok := e.(*tir.Var); ok && !loopVarIn(r, x) {
					usesOuter = true
				}
				return true
			})
			if usesOuter {
				return nil, refuse(name, "is bound to loops that also hold other statements")
			}
		}
	}
	if err := checkOrder(f, p, name); err != nil {
		return nil, err
	}
	return p, nil
}

// checkOrder walks f in program order: the producer's buffer must not be
// read before the producer runs (the consumers would see different
// values), and no buffer the producer reads may be written after it (the
// inlined expression would read the new values).
func checkOrder(f *tir.PrimFunc, p *producer, name string) error {
	reads := map[*tir.Buffer]bool{}
	tir.VisitExpr(p.store.Value, func(e tir.Expr) bool {
		if l, ok := e.(*tir.BufferLoad); ok {
			reads[l.Buffer] = true
		}
		return true
	})
	after := false
	var err error
	loadsBuf := func(e tir.Expr, b *tir.Buffer) bool {
		found := false
		tir.VisitExpr(e, func(x tir.Expr) bool {
			if l, ok := x.(*tir.BufferLoad); ok && l.Buffer == b {
				found = true
			}
			return !found
		})
		return found
	}
	var walk func(s tir.Stmt)
	walk = func(s tir.Stmt) {
		if s == nil || err != nil {
			return
		}
		if s == p.root {
			after = true
			return
		}
		switch x := s.(type) {
		case *tir.BufferStore:
			if !after && loadsBuf(x.Value, p.buf) {
				err = refuse(name, "writes buffer %%%s, which is read before the block runs", p.buf.Name)
			}
			if after && reads[x.Buffer] {
				err = refuse(name, "reads buffer %%%s, which is written after the block; inlining would read the new values", x.Buffer.Name)
			}
		case *tir.IfThenElse:
			if !after && loadsBuf(x.Cond, p.buf) {
				err = refuse(name, "writes buffer %%%s, which is read before the block runs", p.buf.Name)
			}
		case *tir.LetStmt:
			if !after && loadsBuf(x.Value, p.buf) {
				err = refuse(name, "writes buffer %%%s, which is read before the block runs", p.buf.Name)
			}
		}
		for _, c := range children(s) {
			walk(c)
		}
	}
	walk(f.Body)
	return err
}

func loopVarIn(s tir.Stmt, v *tir.Var) bool {
	found := false
	tir.VisitStmt(s, func(x tir.Stmt) bool {
		if l, ok := x.(*tir.For); ok && l.Var == v {
			found = true
		}
		return !found
	})
	return found
}

func children(s tir.Stmt) []tir.Stmt {
	switch x := s.(type) {
	case *tir.SeqStmt:
		return x.Stmts
	case *tir.For:
		return []tir.Stmt{x.Body}
	case *tir.BlockRealize:
		if x.Block != nil {
			return []tir.Stmt{x.Block.Init, x.Block.Body}
		}
	case *tir.Block:
		return []tir.Stmt{x.Init, x.Body}
	case *tir.Allocate:
		return []tir.Stmt{x.Body}
	case *tir.IfThenElse:
		return []tir.Stmt{x.Then, x.Else}
	case *tir.LetStmt:
		return []tir.Stmt{x.Body}
	case *tir.AllocateConst:
		return []tir.Stmt{x.Body}
	case *tir.ArenaAlloc:
		return []tir.Stmt{x.Body}
	}
	return nil
}

func blockNames(s tir.Stmt) []string {
	var names []string
	var walk func(s tir.Stmt)
	walk = func(s tir.Stmt) {
		if s == nil {
			return
		}
		if r, ok := s.(*tir.BlockRealize); ok && r.Block != nil {
			names = append(names, r.Block.Name)
		}
		for _, c := range children(s) {
			walk(c)
		}
	}
	walk(s)
	return names
}

// inlineExpr replaces every load of p.buf in e by the producer's value at
// the load's indices.
func inlineExpr(e tir.Expr, p *producer) tir.Expr {
	if e == nil {
		return nil
	}
	switch x := e.(type) {
	case *tir.BufferLoad:
		idx := make([]tir.Expr, len(x.Indices))
		for i, a := range x.Indices {
			idx[i] = inlineExpr(a, p)
		}
		if x.Buffer != p.buf {
			return &tir.BufferLoad{Buffer: x.Buffer, Indices: idx}
		}
		m := make(map[*tir.Var]tir.Expr, len(p.vars))
		for i, v := range p.vars {
			m[v] = idx[i]
		}
		return tir.Substitute(p.store.Value, m)
	case *tir.Binary:
		return &tir.Binary{Op: x.Op, A: inlineExpr(x.A, p), B: inlineExpr(x.B, p)}
	case *tir.Not:
		return &tir.Not{X: inlineExpr(x.X, p)}
	case *tir.Select:
		return &tir.Select{Cond: inlineExpr(x.Cond, p), T: inlineExpr(x.T, p), F: inlineExpr(x.F, p)}
	case *tir.Cast:
		return &tir.Cast{Type: x.Type, X: inlineExpr(x.X, p)}
	case *tir.Call:
		args := make([]tir.Expr, len(x.Args))
		for i, a := range x.Args {
			args[i] = inlineExpr(a, p)
		}
		return &tir.Call{Name: x.Name, Args: args}
	}
	return e
}

// inlineReads replaces the read region of p.buf by the producer's reads.
func inlineReads(rs []tir.BufferRegion, p *producer) []tir.BufferRegion {
	var out []tir.BufferRegion
	hit := false
	have := map[*tir.Buffer]bool{}
	for _, r := range rs {
		if r.Buffer == p.buf {
			hit = true
			continue
		}
		have[r.Buffer] = true
		out = append(out, r)
	}
	if !hit {
		return rs
	}
	for _, r := range p.block.Reads {
		if !have[r.Buffer] {
			have[r.Buffer] = true
			out = append(out, fullRegion(r.Buffer))
		}
	}
	return out
}

func fullRegion(b *tir.Buffer) tir.BufferRegion {
	r := tir.BufferRegion{Buffer: b, Region: make([]tir.Range, len(b.Shape))}
	for i, d := range b.Shape {
		r.Region[i] = tir.Range{Min: tir.Int(0), Extent: d}
	}
	return r
}

// inlineStmt rebuilds s without the producer's loop nest and allocation,
// with every load of its buffer inlined.
func inlineStmt(s tir.Stmt, p *producer) tir.Stmt {
	if s != nil && s == p.root {
		return &tir.SeqStmt{Loc: s.Location()}
	}
	switch x := s.(type) {
	case nil:
		return nil
	case *tir.SeqStmt:
		var out []tir.Stmt
		for _, c := range x.Stmts {
			if c == p.root {
				continue
			}
			out = append(out, inlineStmt(c, p))
		}
		if len(out) == 1 {
			return out[0]
		}
		return &tir.SeqStmt{Stmts: out, Loc: x.Loc}
	case *tir.For:
		n := *x
		n.Body = inlineStmt(x.Body, p)
		return &n
	case *tir.BlockRealize:
		n := *x
		if x.Predicate != nil {
			n.Predicate = inlineExpr(x.Predicate, p)
		}
		b := *x.Block
		b.Reads = inlineReads(x.Block.Reads, p)
		b.Init = inlineStmt(x.Block.Init, p)
		b.Body = inlineStmt(x.Block.Body, p)
		var allocs []*tir.Buffer
		for _, a := range x.Block.Allocs {
			if a != p.buf {
				allocs = append(allocs, a)
			}
		}
		b.Allocs = allocs
		n.Block = &b
		return &n
	case *tir.BufferStore:
		idx := make([]tir.Expr, len(x.Indices))
		for i, a := range x.Indices {
			idx[i] = inlineExpr(a, p)
		}
		return &tir.BufferStore{Buffer: x.Buffer, Value: inlineExpr(x.Value, p), Indices: idx, Loc: x.Loc}
	case *tir.Allocate:
		body := inlineStmt(x.Body, p)
		if x.Buffer == p.buf {
			return body
		}
		return &tir.Allocate{Buffer: x.Buffer, Body: body, Loc: x.Loc}
	case *tir.IfThenElse:
		return &tir.IfThenElse{Cond: inlineExpr(x.Cond, p), Then: inlineStmt(x.Then, p), Else: inlineStmt(x.Else, p), Loc: x.Loc}
	case *tir.LetStmt:
		return &tir.LetStmt{Var: x.Var, Value: inlineExpr(x.Value, p), Body: inlineStmt(x.Body, p), Loc: x.Loc}
	case *tir.Evaluate:
		return &tir.Evaluate{Value: inlineExpr(x.Value, p), Loc: x.Loc}
	case *tir.AllocateConst:
		n := *x
		n.Body = inlineStmt(x.Body, p)
		return &n
	case *tir.ArenaAlloc:
		n := *x
		n.Body = inlineStmt(x.Body, p)
		return &n
	}
	return s
}
