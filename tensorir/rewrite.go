package tensorir

import "maps"

// Mutate rebuilds st in pre-order: fn is called on every statement; when
// it returns (replacement, true) the statement is replaced (nil removes it
// from its sequence) and its children are not visited. Nodes whose
// children are unchanged are kept (shared), so the identity of untouched
// loops and blocks is preserved.
func Mutate(st Stmt, fn func(Stmt) (Stmt, bool)) Stmt {
	if st == nil {
		return nil
	}
	if r, ok := fn(st); ok {
		return r
	}
	switch x := st.(type) {
	case *SeqStmt:
		changed := false
		out := make([]Stmt, 0, len(x.Stmts))
		for _, c := range x.Stmts {
			n := Mutate(c, fn)
			changed = changed || n != c
			if n != nil {
				out = append(out, n)
			}
		}
		if !changed {
			return x
		}
		switch len(out) {
		case 0:
			return nil
		case 1:
			return out[0]
		}
		return &SeqStmt{Stmts: flatten(out), Loc: x.Loc}
	case *For:
		if b := Mutate(x.Body, fn); b != x.Body {
			c := *x
			c.Body = b
			return &c
		}
	case *BlockRealize:
		if x.Block != nil {
			if b := Mutate(x.Block, fn); b != Stmt(x.Block) {
				c := *x
				nb, ok := b.(*Block)
				if !ok {
					return b
				}
				c.Block = nb
				return &c
			}
		}
	case *Block:
		init, body := Mutate(x.Init, fn), Mutate(x.Body, fn)
		if init != x.Init || body != x.Body {
			c := *x
			c.Init, c.Body = init, body
			return &c
		}
	case *Allocate:
		if b := Mutate(x.Body, fn); b != x.Body {
			c := *x
			c.Body = b
			return &c
		}
	case *IfThenElse:
		t, e := Mutate(x.Then, fn), Mutate(x.Else, fn)
		if t != x.Then || e != x.Else {
			c := *x
			c.Then, c.Else = t, e
			return &c
		}
	case *LetStmt:
		if b := Mutate(x.Body, fn); b != x.Body {
			c := *x
			c.Body = b
			return &c
		}
	case *AllocateConst:
		if b := Mutate(x.Body, fn); b != x.Body {
			c := *x
			c.Body = b
			return &c
		}
	case *ArenaAlloc:
		if b := Mutate(x.Body, fn); b != x.Body {
			c := *x
			c.Body = b
			return &c
		}
	}
	return st
}

func flatten(stmts []Stmt) []Stmt {
	var out []Stmt
	for _, s := range stmts {
		if q, ok := s.(*SeqStmt); ok {
			out = append(out, q.Stmts...)
		} else {
			out = append(out, s)
		}
	}
	return out
}

// MapExpr rebuilds e bottom-up: each variable goes through leaf (nil
// keeps it) and each buffer load, with its indices already mapped,
// through load (nil keeps the load). Immediates are kept as they are.
func MapExpr(e Expr, leaf func(*Var) Expr, load func(b *Buffer, idx []Expr) Expr) Expr {
	var ex func(e Expr) Expr
	ex = func(e Expr) Expr {
		switch x := e.(type) {
		case nil:
			return nil
		case *Var:
			if leaf != nil {
				return leaf(x)
			}
			return x
		case *BufferLoad:
			idx := make([]Expr, len(x.Indices))
			for i, a := range x.Indices {
				idx[i] = ex(a)
			}
			if load != nil {
				return load(x.Buffer, idx)
			}
			return &BufferLoad{Buffer: x.Buffer, Indices: idx}
		case *Binary:
			return &Binary{Op: x.Op, A: ex(x.A), B: ex(x.B)}
		case *Not:
			return &Not{X: ex(x.X)}
		case *Select:
			return &Select{Cond: ex(x.Cond), T: ex(x.T), F: ex(x.F)}
		case *Cast:
			return &Cast{Type: x.Type, X: ex(x.X)}
		case *Call:
			args := make([]Expr, len(x.Args))
			for i, a := range x.Args {
				args[i] = ex(a)
			}
			return &Call{Name: x.Name, Args: args}
		}
		return e
	}
	return ex(e)
}

// ReplaceBuffers returns st with every use of a buffer in m (loads,
// stores, regions, allocations) replaced. When off[b] is set (one
// expression per dimension), b's indices and region minima are also
// shifted by -off[b]: the replacement's origin lies at off[b] in b's
// coordinates (a compacted buffer, see CompactBufferAllocation).
func ReplaceBuffers(st Stmt, m map[*Buffer]*Buffer, off map[*Buffer][]Expr) Stmt {
	sm := &stmtMapper{bufs: m}
	sm.index = func(b *Buffer, idx []Expr) []Expr {
		o, ok := off[b]
		if !ok {
			return idx
		}
		out := make([]Expr, len(idx))
		for d, e := range idx {
			out[d] = shiftIndex(e, o[d])
		}
		return out
	}
	sm.region = func(b *Buffer, d int, r Range) Range {
		if o, ok := off[b]; ok {
			return Range{Min: shiftIndex(r.Min, o[d]), Extent: r.Extent}
		}
		return r
	}
	return sm.stmt(st)
}

// stmtMapper rebuilds a statement tree: buffers in bufs are replaced
// everywhere, index lists of a buffer's accesses go through index, region
// ranges through region, and every expression (loads' indices mapped
// first) through leaf for its variables; nil hooks keep things as they
// are.
type stmtMapper struct {
	bufs   map[*Buffer]*Buffer
	leaf   func(*Var) Expr
	index  func(b *Buffer, idx []Expr) []Expr
	region func(b *Buffer, d int, r Range) Range
	// def maps the variables statements define (loop, iteration and let
	// variables; nil keeps them), block renames block names.
	def   func(*Var) *Var
	block func(name string) string
}

func (sm *stmtMapper) defVar(v *Var) *Var {
	if sm.def == nil {
		return v
	}
	return sm.def(v)
}

func (sm *stmtMapper) buf(b *Buffer) *Buffer {
	if nb, ok := sm.bufs[b]; ok {
		return nb
	}
	return b
}

func (sm *stmtMapper) indices(b *Buffer, idx []Expr) []Expr {
	if sm.index == nil {
		return idx
	}
	return sm.index(b, idx)
}

func (sm *stmtMapper) expr(e Expr) Expr {
	if e == nil {
		return nil
	}
	return MapExpr(e, sm.leaf, func(b *Buffer, idx []Expr) Expr {
		return &BufferLoad{Buffer: sm.buf(b), Indices: sm.indices(b, idx)}
	})
}

func (sm *stmtMapper) exprs(es []Expr) []Expr {
	out := make([]Expr, len(es))
	for i, e := range es {
		out[i] = sm.expr(e)
	}
	return out
}

func (sm *stmtMapper) regions(rs []BufferRegion) []BufferRegion {
	if rs == nil {
		return nil
	}
	out := make([]BufferRegion, len(rs))
	for i, r := range rs {
		rg := make([]Range, len(r.Region))
		for d, x := range r.Region {
			if sm.region != nil {
				x = sm.region(r.Buffer, d, x)
			}
			rg[d] = Range{Min: sm.expr(x.Min), Extent: sm.expr(x.Extent)}
		}
		out[i] = BufferRegion{Buffer: sm.buf(r.Buffer), Region: rg}
	}
	return out
}

func (sm *stmtMapper) blockOf(x *Block) *Block {
	c := *x
	if sm.block != nil {
		c.Name = sm.block(x.Name)
	}
	c.IterVars = make([]*IterVar, len(x.IterVars))
	for i, iv := range x.IterVars {
		c.IterVars[i] = &IterVar{Var: sm.defVar(iv.Var), Dom: Range{Min: sm.expr(iv.Dom.Min), Extent: sm.expr(iv.Dom.Extent)}, Kind: iv.Kind}
	}
	c.Reads, c.Writes = sm.regions(x.Reads), sm.regions(x.Writes)
	c.Init, c.Body = sm.stmt(x.Init), sm.stmt(x.Body)
	if x.Allocs != nil {
		c.Allocs = make([]*Buffer, len(x.Allocs))
		for i, a := range x.Allocs {
			c.Allocs[i] = sm.buf(a)
		}
	}
	return &c
}

func (sm *stmtMapper) stmt(s Stmt) Stmt {
	switch x := s.(type) {
	case nil:
		return nil
	case *SeqStmt:
		out := &SeqStmt{Stmts: make([]Stmt, len(x.Stmts)), Loc: x.Loc}
		for i, c := range x.Stmts {
			out.Stmts[i] = sm.stmt(c)
		}
		return out
	case *For:
		c := *x
		c.Min, c.Extent = sm.expr(x.Min), sm.expr(x.Extent)
		c.Var = sm.defVar(x.Var)
		c.Body = sm.stmt(x.Body)
		return &c
	case *BlockRealize:
		c := *x
		c.Values, c.Predicate = sm.exprs(x.Values), sm.expr(x.Predicate)
		if x.Block != nil {
			c.Block = sm.blockOf(x.Block)
		}
		return &c
	case *Block:
		return sm.blockOf(x)
	case *BufferStore:
		return &BufferStore{Buffer: sm.buf(x.Buffer), Value: sm.expr(x.Value), Indices: sm.indices(x.Buffer, sm.exprs(x.Indices)), Loc: x.Loc}
	case *Allocate:
		return &Allocate{Buffer: sm.buf(x.Buffer), Body: sm.stmt(x.Body), Loc: x.Loc}
	case *IfThenElse:
		return &IfThenElse{Cond: sm.expr(x.Cond), Then: sm.stmt(x.Then), Else: sm.stmt(x.Else), Loc: x.Loc}
	case *LetStmt:
		value := sm.expr(x.Value)
		return &LetStmt{Var: sm.defVar(x.Var), Value: value, Body: sm.stmt(x.Body), Loc: x.Loc}
	case *Evaluate:
		return &Evaluate{Value: sm.expr(x.Value), Loc: x.Loc}
	case *AllocateConst:
		c := *x
		c.Body = sm.stmt(x.Body)
		return &c
	case *ArenaAlloc:
		c := *x
		c.Body = sm.stmt(x.Body)
		return &c
	}
	return s
}

// shiftIndex is e - o, folded when o is the constant 0.
func shiftIndex(e, o Expr) Expr {
	if c, ok := o.(*IntImm); ok && c.Value == 0 {
		return e
	}
	return Simplify(Sub(e, o), nil)
}

// Specialize returns f with the scalar parameters vals names bound to
// those constants and removed from its parameters (TVM's
// PrimFunc.specialize): every buffer whose shape, strides or offset uses
// them gets its constant form, and expressions are simplified. Kernels
// over symbolic dimensions are specialized at a representative size to
// be scheduled by rules that need constant extents. f is not modified.
func Specialize(f *PrimFunc, vals map[string]int64) *PrimFunc {
	bind := map[*Var]Expr{}
	out := *f
	out.Params = nil
	out.Attrs = maps.Clone(f.Attrs)
	for _, p := range f.Params {
		if p.Var != nil {
			if v, ok := vals[p.Var.Name]; ok {
				bind[p.Var] = IntOf(p.Var.Type, v)
				continue
			}
		}
		out.Params = append(out.Params, p)
	}
	if len(bind) == 0 {
		return f
	}
	sm := &stmtMapper{bufs: map[*Buffer]*Buffer{}, leaf: func(v *Var) Expr {
		if e, ok := bind[v]; ok {
			return e
		}
		return v
	}}
	subst := func(e Expr) Expr {
		if e == nil {
			return nil
		}
		return Simplify(Substitute(e, bind), nil)
	}
	specialize := func(b *Buffer) {
		if b == nil || sm.bufs[b] != nil {
			return
		}
		nb := *b
		nb.Shape = make([]Expr, len(b.Shape))
		for i, d := range b.Shape {
			nb.Shape[i] = subst(d)
		}
		if b.Strides != nil {
			nb.Strides = make([]Expr, len(b.Strides))
			for i, d := range b.Strides {
				nb.Strides[i] = subst(d)
			}
		}
		nb.ElemOffset = subst(b.ElemOffset)
		sm.bufs[b] = &nb
	}
	for _, p := range f.Params {
		specialize(p.Buffer)
	}
	VisitStmt(f.Body, func(s Stmt) bool {
		switch x := s.(type) {
		case *Allocate:
			specialize(x.Buffer)
		case *Block:
			for _, a := range x.Allocs {
				specialize(a)
			}
		}
		return true
	})
	for i, p := range out.Params {
		if p.Buffer != nil {
			np := *p
			np.Buffer = sm.bufs[p.Buffer]
			out.Params[i] = &np
		}
	}
	out.Body = sm.stmt(f.Body)
	return SimplifyFunc(&out)
}

// FreshCopy returns a copy of st that can sit beside st in one function:
// every variable st defines (loop, iteration and let variables) and every
// buffer it allocates is new (same names), and every block name gets
// suffix.
func FreshCopy(st Stmt, suffix string) Stmt {
	vars := map[*Var]*Var{}
	sm := &stmtMapper{bufs: map[*Buffer]*Buffer{}}
	fresh := func(v *Var) *Var {
		if n, ok := vars[v]; ok {
			return n
		}
		n := NewVar(v.Name, v.Type)
		vars[v] = n
		return n
	}
	VisitStmt(st, func(s Stmt) bool {
		var allocs []*Buffer
		switch x := s.(type) {
		case *For:
			fresh(x.Var)
		case *LetStmt:
			fresh(x.Var)
		case *Block:
			for _, iv := range x.IterVars {
				fresh(iv.Var)
			}
			allocs = x.Allocs
		case *Allocate:
			allocs = []*Buffer{x.Buffer}
		}
		for _, b := range allocs {
			nb := *b
			sm.bufs[b] = &nb
		}
		return true
	})
	sm.def = fresh
	sm.leaf = func(v *Var) Expr {
		if n, ok := vars[v]; ok {
			return n
		}
		return v
	}
	sm.block = func(name string) string { return name + suffix }
	return sm.stmt(st)
}
