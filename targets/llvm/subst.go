package llvm

import tir "github.com/tessera-ml/tessera/tensorir"

// rewriter copies statements while substituting variables and buffers.
// With fresh set, every variable and buffer the statement defines (loop,
// let and block iteration variables, Allocate and block buffers) is
// replaced by a new one of the same name and type, and blockSuffix is
// appended to block names, so that the copy can sit beside the original
// with unique definitions.
type rewriter struct {
	vars  map[*tir.Var]tir.Expr
	bufs  map[*tir.Buffer]*tir.Buffer
	fresh bool
	// blockSuffix is appended to the names of copied blocks (block names
	// are unique within a function).
	blockSuffix string
}

func newRewriter(fresh bool) *rewriter {
	return &rewriter{vars: map[*tir.Var]tir.Expr{}, bufs: map[*tir.Buffer]*tir.Buffer{}, fresh: fresh}
}

func (r *rewriter) defVar(v *tir.Var) *tir.Var {
	if !r.fresh {
		return v
	}
	nv := tir.NewVar(v.Name, v.Type)
	r.vars[v] = nv
	return nv
}

func (r *rewriter) defBuf(b *tir.Buffer) *tir.Buffer {
	if !r.fresh {
		return r.buf(b)
	}
	nb := *b
	nb.Shape = r.exprs(b.Shape)
	if b.Strides != nil {
		nb.Strides = r.exprs(b.Strides)
	}
	if b.ElemOffset != nil {
		nb.ElemOffset = r.expr(b.ElemOffset)
	}
	r.bufs[b] = &nb
	return &nb
}

func (r *rewriter) buf(b *tir.Buffer) *tir.Buffer {
	if nb, ok := r.bufs[b]; ok {
		return nb
	}
	return b
}

func (r *rewriter) exprs(es []tir.Expr) []tir.Expr {
	if es == nil {
		return nil
	}
	out := make([]tir.Expr, len(es))
	for i, e := range es {
		out[i] = r.expr(e)
	}
	return out
}

func (r *rewriter) expr(e tir.Expr) tir.Expr {
	switch x := e.(type) {
	case nil:
		return nil
	case *tir.Var:
		if s, ok := r.vars[x]; ok {
			return s
		}
		return x
	case *tir.Binary:
		return &tir.Binary{Op: x.Op, A: r.expr(x.A), B: r.expr(x.B)}
	case *tir.Not:
		return &tir.Not{X: r.expr(x.X)}
	case *tir.Select:
		return &tir.Select{Cond: r.expr(x.Cond), T: r.expr(x.T), F: r.expr(x.F)}
	case *tir.Cast:
		return &tir.Cast{Type: x.Type, X: r.expr(x.X)}
	case *tir.Call:
		return &tir.Call{Name: x.Name, Args: r.exprs(x.Args)}
	case *tir.BufferLoad:
		return &tir.BufferLoad{Buffer: r.buf(x.Buffer), Indices: r.exprs(x.Indices)}
	}
	return e
}

func (r *rewriter) region(rs []tir.BufferRegion) []tir.BufferRegion {
	if rs == nil {
		return nil
	}
	out := make([]tir.BufferRegion, len(rs))
	for i, br := range rs {
		rg := make([]tir.Range, len(br.Region))
		for d, x := range br.Region {
			rg[d] = tir.Range{Min: r.expr(x.Min), Extent: r.expr(x.Extent)}
		}
		out[i] = tir.BufferRegion{Buffer: r.buf(br.Buffer), Region: rg}
	}
	return out
}

func (r *rewriter) stmt(s tir.Stmt) tir.Stmt {
	switch x := s.(type) {
	case nil:
		return nil
	case *tir.SeqStmt:
		out := make([]tir.Stmt, len(x.Stmts))
		for i, t := range x.Stmts {
			out[i] = r.stmt(t)
		}
		return &tir.SeqStmt{Stmts: out, Loc: x.Loc}
	case *tir.For:
		n := *x
		n.Min, n.Extent = r.expr(x.Min), r.expr(x.Extent)
		n.Var = r.defVar(x.Var)
		n.Body = r.stmt(x.Body)
		return &n
	case *tir.LetStmt:
		val := r.expr(x.Value)
		return &tir.LetStmt{Var: r.defVar(x.Var), Value: val, Body: r.stmt(x.Body), Loc: x.Loc}
	case *tir.IfThenElse:
		return &tir.IfThenElse{Cond: r.expr(x.Cond), Then: r.stmt(x.Then), Else: r.stmt(x.Else), Loc: x.Loc}
	case *tir.BufferStore:
		return &tir.BufferStore{Buffer: r.buf(x.Buffer), Value: r.expr(x.Value), Indices: r.exprs(x.Indices), Loc: x.Loc}
	case *tir.Allocate:
		return &tir.Allocate{Buffer: r.defBuf(x.Buffer), Body: r.stmt(x.Body), Loc: x.Loc}
	case *tir.Evaluate:
		return &tir.Evaluate{Value: r.expr(x.Value), Loc: x.Loc}
	case *tir.BlockRealize:
		return &tir.BlockRealize{Values: r.exprs(x.Values), Predicate: r.expr(x.Predicate), Block: r.block(x.Block), Loc: x.Loc}
	case *tir.Block:
		return r.block(x)
	case *tir.CallKernel:
		args := make([]*tir.Buffer, len(x.Args))
		for i, b := range x.Args {
			args[i] = r.buf(b)
		}
		return &tir.CallKernel{Callee: x.Callee, Args: args, Loc: x.Loc}
	case *tir.AllocateConst:
		n := *x
		n.Buffer = r.defBuf(x.Buffer)
		n.Body = r.stmt(x.Body)
		return &n
	case *tir.ArenaAlloc:
		n := *x
		n.Buffers = make([]*tir.Buffer, len(x.Buffers))
		for i, b := range x.Buffers {
			n.Buffers[i] = r.defBuf(b)
		}
		n.Body = r.stmt(x.Body)
		return &n
	}
	return s
}

func (r *rewriter) block(b *tir.Block) *tir.Block {
	n := *b
	n.Name += r.blockSuffix
	n.IterVars = make([]*tir.IterVar, len(b.IterVars))
	for i, iv := range b.IterVars {
		dom := tir.Range{Min: r.expr(iv.Dom.Min), Extent: r.expr(iv.Dom.Extent)}
		n.IterVars[i] = &tir.IterVar{Var: r.defVar(iv.Var), Dom: dom, Kind: iv.Kind}
	}
	n.Allocs = nil
	for _, a := range b.Allocs {
		n.Allocs = append(n.Allocs, r.defBuf(a))
	}
	n.Reads, n.Writes = r.region(b.Reads), r.region(b.Writes)
	n.Init, n.Body = r.stmt(b.Init), r.stmt(b.Body)
	return &n
}
