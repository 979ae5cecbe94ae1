package schedule

import (
	tir "github.com/tessera-ml/tessera/tensorir"
)

// SetBody installs a rebuilt body as the scheduled function's body.
func (s *Schedule) SetBody(body tir.Stmt) { s.f.Body = body }

// Mutate rebuilds st in pre-order: fn is called on every statement; when
// it returns (replacement, true) the statement is replaced (nil removes it
// from its sequence) and its children are not visited. Nodes whose
// children are unchanged are kept (shared), so the identity of untouched
// loops and blocks is preserved.
func Mutate(st tir.Stmt, fn func(tir.Stmt) (tir.Stmt, bool)) tir.Stmt {
	if st == nil {
		return nil
	}
	if r, ok := fn(st); ok {
		return r
	}
	switch x := st.(type) {
	case *tir.SeqStmt:
		changed := false
		out := make([]tir.Stmt, 0, len(x.Stmts))
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
		return &tir.SeqStmt{Stmts: flatten(out), Loc: x.Loc}
	case *tir.For:
		if b := Mutate(x.Body, fn); b != x.Body {
			c := *x
			c.Body = b
			return &c
		}
	case *tir.BlockRealize:
		if x.Block != nil {
			if b := Mutate(x.Block, fn); b != tir.Stmt(x.Block) {
				c := *x
				nb, ok := b.(*tir.Block)
				if !ok {
					return b
				}
				c.Block = nb
				return &c
			}
		}
	case *tir.Block:
		init, body := Mutate(x.Init, fn), Mutate(x.Body, fn)
		if init != x.Init || body != x.Body {
			c := *x
			c.Init, c.Body = init, body
			return &c
		}
	case *tir.Allocate:
		if b := Mutate(x.Body, fn); b != x.Body {
			c := *x
			c.Body = b
			return &c
		}
	case *tir.IfThenElse:
		t, e := Mutate(x.Then, fn), Mutate(x.Else, fn)
		if t != x.Then || e != x.Else {
			c := *x
			c.Then, c.Else = t, e
			return &c
		}
	case *tir.LetStmt:
		if b := Mutate(x.Body, fn); b != x.Body {
			c := *x
			c.Body = b
			return &c
		}
	case *tir.AllocateConst:
		if b := Mutate(x.Body, fn); b != x.Body {
			c := *x
			c.Body = b
			return &c
		}
	case *tir.ArenaAlloc:
		if b := Mutate(x.Body, fn); b != x.Body {
			c := *x
			c.Body = b
			return &c
		}
	}
	return st
}

func flatten(stmts []tir.Stmt) []tir.Stmt {
	var out []tir.Stmt
	for _, s := range stmts {
		if q, ok := s.(*tir.SeqStmt); ok {
			out = append(out, q.Stmts...)
		} else {
			out = append(out, s)
		}
	}
	return out
}

// subStmts are the statements directly below st (a realize's block, a
// block's init and body).
func subStmts(st tir.Stmt) []tir.Stmt {
	var out []tir.Stmt
	add := func(c tir.Stmt) {
		if c != nil {
			out = append(out, c)
		}
	}
	switch x := st.(type) {
	case *tir.SeqStmt:
		out = append(out, x.Stmts...)
	case *tir.For:
		add(x.Body)
	case *tir.BlockRealize:
		if x.Block != nil {
			add(x.Block)
		}
	case *tir.Block:
		add(x.Init)
		add(x.Body)
	case *tir.Allocate:
		add(x.Body)
	case *tir.IfThenElse:
		add(x.Then)
		add(x.Else)
	case *tir.LetStmt:
		add(x.Body)
	case *tir.AllocateConst:
		add(x.Body)
	case *tir.ArenaAlloc:
		add(x.Body)
	}
	return out
}

func findLoop(body tir.Stmt, v *tir.Var) *tir.For {
	var found *tir.For
	tir.VisitStmt(body, func(st tir.Stmt) bool {
		if found != nil {
			return false
		}
		if f, ok := st.(*tir.For); ok && f.Var == v {
			found = f
			return false
		}
		return true
	})
	return found
}

func findBlock(body tir.Stmt, name string) *tir.BlockRealize {
	var found *tir.BlockRealize
	tir.VisitStmt(body, func(st tir.Stmt) bool {
		if found != nil {
			return false
		}
		if r, ok := st.(*tir.BlockRealize); ok && r.Block != nil && r.Block.Name == name {
			found = r
			return false
		}
		return true
	})
	return found
}

// FindLoop returns the loop of handle l; the error names the loop.
func (s *Schedule) FindLoop(l LoopRV) (*tir.For, error) {
	if l.Var != nil {
		if f := findLoop(s.f.Body, l.Var); f != nil {
			return f, nil
		}
	}
	return nil, &Error{Primitive: "get_loop", Loop: l.Name(), Reason: "no such loop in @" + s.f.Name}
}

// FindBlock returns the realization of block b; the error names the
// block.
func (s *Schedule) FindBlock(b BlockRV) (*tir.BlockRealize, error) {
	if r := findBlock(s.f.Body, b.Name); r != nil {
		return r, nil
	}
	return nil, &Error{Primitive: "get_block", Block: b.Name, Reason: "no such block in @" + s.f.Name}
}

// PathTo returns the statements from the body's root down to target
// (inclusive), or nil when target is not in the body.
func PathTo(body, target tir.Stmt) []tir.Stmt {
	var path []tir.Stmt
	var walk func(st tir.Stmt) bool
	walk = func(st tir.Stmt) bool {
		path = append(path, st)
		if st == target {
			return true
		}
		for _, c := range subStmts(st) {
			if walk(c) {
				return true
			}
		}
		path = path[:len(path)-1]
		return false
	}
	if body == nil || !walk(body) {
		return nil
	}
	return path
}

// LoopsOf returns the loops enclosing block b inside its parent block (or
// the function body), outermost first (TVM's get_loops).
func (s *Schedule) LoopsOf(b BlockRV) ([]*tir.For, error) {
	r, err := s.FindBlock(b)
	if err != nil {
		return nil, err
	}
	path := PathTo(s.f.Body, r)
	var loops []*tir.For
	for _, st := range path[:len(path)-1] {
		switch x := st.(type) {
		case *tir.For:
			loops = append(loops, x)
		case *tir.Block:
			loops = nil
		}
	}
	return loops, nil
}

// BlocksUnder returns the realizations of every block inside st (st
// included), in program order.
func BlocksUnder(st tir.Stmt) []*tir.BlockRealize {
	var out []*tir.BlockRealize
	tir.VisitStmt(st, func(x tir.Stmt) bool {
		if r, ok := x.(*tir.BlockRealize); ok && r.Block != nil {
			out = append(out, r)
		}
		return true
	})
	return out
}

// constInt returns e's value when it is an integer constant.
func constInt(e tir.Expr) (int64, bool) {
	if c, ok := e.(*tir.IntImm); ok {
		return c.Value, true
	}
	return 0, false
}

// usesVar reports whether e mentions v.
func usesVar(e tir.Expr, v *tir.Var) bool {
	found := false
	tir.VisitExpr(e, func(x tir.Expr) bool {
		if x == tir.Expr(v) {
			found = true
		}
		return !found
	})
	return found
}

// MapExpr rebuilds e bottom-up: each variable goes through leaf (nil
// keeps it) and each buffer load, with its indices already mapped,
// through load (nil keeps the load). Immediates are kept as they are.
func MapExpr(e tir.Expr, leaf func(*tir.Var) tir.Expr, load func(b *tir.Buffer, idx []tir.Expr) tir.Expr) tir.Expr {
	var ex func(e tir.Expr) tir.Expr
	ex = func(e tir.Expr) tir.Expr {
		switch x := e.(type) {
		case nil:
			return nil
		case *tir.Var:
			if leaf != nil {
				return leaf(x)
			}
			return x
		case *tir.BufferLoad:
			idx := make([]tir.Expr, len(x.Indices))
			for i, a := range x.Indices {
				idx[i] = ex(a)
			}
			if load != nil {
				return load(x.Buffer, idx)
			}
			return &tir.BufferLoad{Buffer: x.Buffer, Indices: idx}
		case *tir.Binary:
			return &tir.Binary{Op: x.Op, A: ex(x.A), B: ex(x.B)}
		case *tir.Not:
			return &tir.Not{X: ex(x.X)}
		case *tir.Select:
			return &tir.Select{Cond: ex(x.Cond), T: ex(x.T), F: ex(x.F)}
		case *tir.Cast:
			return &tir.Cast{Type: x.Type, X: ex(x.X)}
		case *tir.Call:
			args := make([]tir.Expr, len(x.Args))
			for i, a := range x.Args {
				args[i] = ex(a)
			}
			return &tir.Call{Name: x.Name, Args: args}
		}
		return e
	}
	return ex(e)
}
