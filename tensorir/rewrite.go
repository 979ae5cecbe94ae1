package tensorir

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
	var ex func(e Expr) Expr
	shift := func(b *Buffer, idx []Expr) []Expr {
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
	ex = func(e Expr) Expr {
		return MapExpr(e, nil, func(b *Buffer, idx []Expr) Expr {
			idx = shift(b, idx)
			if nb, ok := m[b]; ok {
				b = nb
			}
			return &BufferLoad{Buffer: b, Indices: idx}
		})
	}
	exs := func(es []Expr) []Expr {
		out := make([]Expr, len(es))
		for i, e := range es {
			out[i] = ex(e)
		}
		return out
	}
	buf := func(b *Buffer) *Buffer {
		if nb, ok := m[b]; ok {
			return nb
		}
		return b
	}
	regions := func(rs []BufferRegion) []BufferRegion {
		if rs == nil {
			return nil
		}
		out := make([]BufferRegion, len(rs))
		for i, r := range rs {
			rg := r.Region
			if o, ok := off[r.Buffer]; ok {
				rg = make([]Range, len(r.Region))
				for d, x := range r.Region {
					rg[d] = Range{Min: shiftIndex(x.Min, o[d]), Extent: x.Extent}
				}
			}
			out[i] = BufferRegion{Buffer: buf(r.Buffer), Region: rg}
		}
		return out
	}
	var rec func(s Stmt) Stmt
	rec = func(s Stmt) Stmt {
		switch x := s.(type) {
		case nil:
			return nil
		case *SeqStmt:
			out := &SeqStmt{Stmts: make([]Stmt, len(x.Stmts)), Loc: x.Loc}
			for i, c := range x.Stmts {
				out.Stmts[i] = rec(c)
			}
			return out
		case *For:
			c := *x
			c.Min, c.Extent, c.Body = ex(x.Min), ex(x.Extent), rec(x.Body)
			return &c
		case *BlockRealize:
			c := *x
			c.Values, c.Predicate = exs(x.Values), ex(x.Predicate)
			if x.Block != nil {
				c.Block = rec(x.Block).(*Block)
			}
			return &c
		case *Block:
			c := *x
			c.Reads, c.Writes = regions(x.Reads), regions(x.Writes)
			c.Init, c.Body = rec(x.Init), rec(x.Body)
			if x.Allocs != nil {
				c.Allocs = make([]*Buffer, len(x.Allocs))
				for i, a := range x.Allocs {
					c.Allocs[i] = buf(a)
				}
			}
			return &c
		case *BufferStore:
			return &BufferStore{Buffer: buf(x.Buffer), Value: ex(x.Value), Indices: shift(x.Buffer, exs(x.Indices)), Loc: x.Loc}
		case *Allocate:
			return &Allocate{Buffer: buf(x.Buffer), Body: rec(x.Body), Loc: x.Loc}
		case *IfThenElse:
			return &IfThenElse{Cond: ex(x.Cond), Then: rec(x.Then), Else: rec(x.Else), Loc: x.Loc}
		case *LetStmt:
			return &LetStmt{Var: x.Var, Value: ex(x.Value), Body: rec(x.Body), Loc: x.Loc}
		case *Evaluate:
			return &Evaluate{Value: ex(x.Value), Loc: x.Loc}
		case *AllocateConst:
			c := *x
			c.Body = rec(x.Body)
			return &c
		case *ArenaAlloc:
			c := *x
			c.Body = rec(x.Body)
			return &c
		}
		return s
	}
	return rec(st)
}

// shiftIndex is e - o, folded when o is the constant 0.
func shiftIndex(e, o Expr) Expr {
	if c, ok := o.(*IntImm); ok && c.Value == 0 {
		return e
	}
	return Simplify(Sub(e, o), nil)
}
