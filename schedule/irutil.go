package schedule

import (
	tir "github.com/tessera-ml/tessera/tensorir"
)

// SetBody installs a rebuilt body as the scheduled function's body.
func (s *Schedule) SetBody(body tir.Stmt) { s.f.Body = body }

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
		for _, c := range tir.SubStmts(st) {
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

// coversDim reports whether the iteration domain dom is exactly [0, dim):
// a zero minimum and an extent equal to the dimension, both constants or
// (symbolic shapes) the same expression once simplified.
func coversDim(dom tir.Range, dim tir.Expr) bool {
	if lo, ok := constInt(dom.Min); !ok || lo != 0 {
		return false
	}
	ext, ok1 := constInt(dom.Extent)
	n, ok2 := constInt(dim)
	if ok1 || ok2 {
		return ok1 && ok2 && ext == n
	}
	return tir.Equal(tir.Simplify(dom.Extent, nil), tir.Simplify(dim, nil))
}
