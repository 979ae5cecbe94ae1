package llvm

import tir "github.com/tessera-ml/tessera/tensorir"

// walkStmt calls stmtFn on s and every statement nested in it (pre-order)
// and exprFn on every expression they hold: loop bounds, values, indices,
// conditions, block iteration domains and bindings, and the shape,
// stride and offset expressions of the buffers they access or allocate.
// Either function may be nil.
func walkStmt(s tir.Stmt, stmtFn func(tir.Stmt), exprFn func(tir.Expr)) {
	visitE := func(e tir.Expr) {
		if e == nil || exprFn == nil {
			return
		}
		tir.VisitExpr(e, func(x tir.Expr) bool {
			exprFn(x)
			if ld, ok := x.(*tir.BufferLoad); ok {
				bufExprs(ld.Buffer, exprFn)
			}
			return true
		})
	}
	var walk func(s tir.Stmt)
	walk = func(s tir.Stmt) {
		if s == nil {
			return
		}
		if stmtFn != nil {
			stmtFn(s)
		}
		switch x := s.(type) {
		case *tir.SeqStmt:
			for _, t := range x.Stmts {
				walk(t)
			}
		case *tir.For:
			visitE(x.Min)
			visitE(x.Extent)
			walk(x.Body)
		case *tir.LetStmt:
			visitE(x.Value)
			walk(x.Body)
		case *tir.IfThenElse:
			visitE(x.Cond)
			walk(x.Then)
			walk(x.Else)
		case *tir.BufferStore:
			if exprFn != nil {
				bufExprs(x.Buffer, exprFn)
			}
			visitE(x.Value)
			for _, e := range x.Indices {
				visitE(e)
			}
		case *tir.Allocate:
			if exprFn != nil {
				bufExprs(x.Buffer, exprFn)
			}
			walk(x.Body)
		case *tir.Evaluate:
			visitE(x.Value)
		case *tir.BlockRealize:
			for _, e := range x.Values {
				visitE(e)
			}
			visitE(x.Predicate)
			walk(x.Block)
		case *tir.CallKernel:
			for _, b := range x.Args {
				if exprFn != nil {
					bufExprs(b, exprFn)
				}
			}
			for _, e := range x.Scalars {
				visitE(e)
			}
		case *tir.AllocateConst:
			if exprFn != nil {
				bufExprs(x.Buffer, exprFn)
			}
			walk(x.Body)
		case *tir.ArenaAlloc:
			visitE(x.Size)
			for i, b := range x.Buffers {
				if exprFn != nil {
					bufExprs(b, exprFn)
				}
				if i < len(x.Offsets) {
					visitE(x.Offsets[i])
				}
			}
			walk(x.Body)
		case *tir.Block:
			for _, iv := range x.IterVars {
				visitE(iv.Dom.Min)
				visitE(iv.Dom.Extent)
			}
			for _, b := range x.Allocs {
				if exprFn != nil {
					bufExprs(b, exprFn)
				}
			}
			walk(x.Init)
			walk(x.Body)
		}
	}
	walk(s)
}

// bufExprs calls fn on the shape, stride and offset expressions of b
// (and their sub-expressions).
func bufExprs(b *tir.Buffer, fn func(tir.Expr)) {
	each := func(e tir.Expr) {
		tir.VisitExpr(e, func(x tir.Expr) bool { fn(x); return true })
	}
	for _, e := range b.Shape {
		each(e)
	}
	for _, e := range b.Strides {
		each(e)
	}
	if b.ElemOffset != nil {
		each(b.ElemOffset)
	}
}

// usedBuffers lists the buffers s loads from, stores to, allocates or
// passes to tir.call, in order of first appearance.
func usedBuffers(s tir.Stmt) []*tir.Buffer {
	seen := map[*tir.Buffer]bool{}
	var out []*tir.Buffer
	add := func(b *tir.Buffer) {
		if !seen[b] {
			seen[b] = true
			out = append(out, b)
		}
	}
	walkStmt(s, func(t tir.Stmt) {
		switch x := t.(type) {
		case *tir.BufferStore:
			add(x.Buffer)
		case *tir.Allocate:
			add(x.Buffer)
		case *tir.Block:
			for _, b := range x.Allocs {
				add(b)
			}
		case *tir.CallKernel:
			for _, b := range x.Args {
				add(b)
			}
		case *tir.AllocateConst:
			add(x.Buffer)
		case *tir.ArenaAlloc:
			for _, b := range x.Buffers {
				add(b)
			}
		}
	}, func(e tir.Expr) {
		if ld, ok := e.(*tir.BufferLoad); ok {
			add(ld.Buffer)
		}
	})
	return out
}

// usedVars lists the variables s reads, in order of first appearance.
func usedVars(s tir.Stmt) []*tir.Var {
	seen := map[*tir.Var]bool{}
	var out []*tir.Var
	walkStmt(s, nil, func(e tir.Expr) {
		if v, ok := e.(*tir.Var); ok && !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	})
	return out
}
