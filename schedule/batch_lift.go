package schedule

import (
	"fmt"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// Batch lifting: a kernel over one symbolic dimension S that is the
// leading dimension of every buffer it appears in, and along which the
// computation is separable (each element of a row along S is computed
// from the same row of the inputs alone: a batch), is scheduled once for
// a chunk of B rows and once for one row, with every rule and tiling that
// needs constant extents, and run as a loop over chunks and a loop over
// the remaining rows (the main loop and remainder of loop tiling; TVM
// Relax's dynamic-batch kernels and XLA's bucketing meet the same need by
// specializing). Every schedule is the one a static compile of B rows (or
// of one row) would get, so the code runs as fast per row, at every size.

// separableSymbol returns f's symbol S when f is batch-separable along
// it: f has exactly one scalar parameter S; every buffer whose shape
// mentions S (parameters and allocations) has the default layout, S as
// its leading dimension and constant other dimensions; and in every
// block, the accesses of those buffers all index their leading dimension
// with the same spatial iteration variable over [0, S), which appears
// nowhere else in the block. The reason is returned when it is not.
func separableSymbol(f *tir.PrimFunc) (*tir.Var, string) {
	var sym *tir.Var
	for _, p := range f.Params {
		if p.Var != nil {
			if sym != nil {
				return nil, "more than one symbolic dimension"
			}
			sym = p.Var
		}
	}
	if sym == nil {
		return nil, "no symbolic dimension"
	}
	batched := map[*tir.Buffer]bool{}
	check := func(b *tir.Buffer) string {
		if b == nil || !mentions(b.Shape, sym) {
			return ""
		}
		if len(b.Shape) == 0 || b.Shape[0] != tir.Expr(sym) || mentions(b.Shape[1:], sym) || b.Strides != nil || b.ElemOffset != nil {
			return fmt.Sprintf("buffer %%%s is not %%%s rows of a constant shape", b.Name, sym.Name)
		}
		batched[b] = true
		return ""
	}
	for _, p := range f.Params {
		if why := check(p.Buffer); why != "" {
			return nil, why
		}
	}
	why := ""
	tir.VisitStmt(f.Body, func(s tir.Stmt) bool {
		switch x := s.(type) {
		case *tir.Allocate:
			if w := check(x.Buffer); w != "" && why == "" {
				why = w
			}
		case *tir.Block:
			for _, a := range x.Allocs {
				if w := check(a); w != "" && why == "" {
					why = w
				}
			}
		}
		return why == ""
	})
	if why != "" {
		return nil, why
	}
	tir.VisitStmt(f.Body, func(s tir.Stmt) bool {
		if b, ok := s.(*tir.Block); ok && why == "" {
			why = blockSeparable(b, sym, batched)
		}
		return why == ""
	})
	if why != "" {
		return nil, why
	}
	return sym, ""
}

// mentions reports whether one of es uses v.
func mentions(es []tir.Expr, v *tir.Var) bool {
	found := false
	for _, e := range es {
		tir.VisitExpr(e, func(x tir.Expr) bool {
			found = found || x == tir.Expr(v)
			return !found
		})
	}
	return found
}

// blockSeparable checks one block for separableSymbol ("" when it is).
func blockSeparable(b *tir.Block, sym *tir.Var, batched map[*tir.Buffer]bool) string {
	var row *tir.Var
	uses, rowUses := 0, 0
	bad := ""
	// Iteration variables over one value (a window of 1 over the rows)
	// are 0.
	unit := map[*tir.Var]tir.Expr{}
	for _, iv := range b.IterVars {
		if lo, ok := iv.Dom.Min.(*tir.IntImm); ok && lo.Value == 0 {
			if n, ok := iv.Dom.Extent.(*tir.IntImm); ok && n.Value == 1 {
				unit[iv.Var] = tir.IntOf(iv.Var.Type, 0)
			}
		}
	}
	access := func(buf *tir.Buffer, idx []tir.Expr) {
		if !batched[buf] || bad != "" {
			return
		}
		v, ok := tir.Simplify(tir.Substitute(idx[0], unit), nil).(*tir.Var)
		switch {
		case !ok:
			bad = fmt.Sprintf("block %q indexes the rows of %%%s with %s, not an iteration variable", b.Name, buf.Name, tir.ExprString(idx[0]))
		case row == nil:
			row = v
		case row != v:
			bad = fmt.Sprintf("block %q indexes batched buffers' rows with both %%%s and %%%s", b.Name, row.Name, v.Name)
		}
		rowUses++
	}
	count := func(e tir.Expr) {
		tir.VisitExpr(e, func(x tir.Expr) bool {
			if l, ok := x.(*tir.BufferLoad); ok && len(l.Indices) > 0 {
				access(l.Buffer, l.Indices)
			}
			if v, ok := x.(*tir.Var); ok && v == row {
				uses++
			}
			return true
		})
	}
	// Two passes: the first finds the row variable, the second counts
	// its uses.
	for pass := 0; pass < 2; pass++ {
		uses, rowUses = 0, 0
		for _, st := range []tir.Stmt{b.Init, b.Body} {
			tir.VisitStmt(st, func(s tir.Stmt) bool {
				if x, ok := s.(*tir.BufferStore); ok && len(x.Indices) > 0 {
					access(x.Buffer, x.Indices)
					for _, e := range x.Indices {
						count(e)
					}
					count(x.Value)
					return true
				}
				for _, e := range nodeExprs(s) {
					count(e)
				}
				return true
			})
		}
	}
	switch {
	case bad != "":
		return bad
	case row == nil:
		return ""
	case uses != rowUses:
		return fmt.Sprintf("block %q uses its row variable %%%s other than as a batched buffer's row", b.Name, row.Name)
	}
	for _, iv := range b.IterVars {
		if iv.Var == row && (iv.Kind != tir.Spatial || !tir.Equal(iv.Dom.Extent, sym) || !tir.Equal(iv.Dom.Min, tir.IntOf(iv.Dom.Min.DType(), 0))) {
			return fmt.Sprintf("block %q: the row variable %%%s does not range over [0, %%%s)", b.Name, row.Name, sym.Name)
		}
	}
	return ""
}

// liftBatch builds the kernel running f (separable along sym) as chunks
// of chunk rows scheduled as main (f specialized at chunk rows and
// scheduled) and remaining rows one at a time scheduled as one (f at one
// row): for c in [0, S / chunk): main on rows [c·chunk, c·chunk + chunk);
// for r in [S − S mod chunk, S): one on row r. The scheduled functions'
// buffer parameters are replaced by f's, their row indices shifted; their
// own allocations stay (chunk or one row). main is nil when chunk is 1.
func liftBatch(f *tir.PrimFunc, sym *tir.Var, chunk int64, main, one *tir.PrimFunc) (*tir.PrimFunc, error) {
	t := sym.Type
	var loops []tir.Stmt
	if main != nil && chunk > 1 {
		c := tir.NewVar("chunk", t)
		body, err := shiftedBody(f, main, tir.Mul(c, tir.IntOf(t, chunk)))
		if err != nil {
			return nil, err
		}
		loops = append(loops, &tir.For{Var: c, Min: tir.IntOf(t, 0), Extent: tir.FloorDiv(sym, tir.IntOf(t, chunk)), Body: body, Loc: f.Loc})
	} else {
		chunk = 1
	}
	r := tir.NewVar("row", t)
	body, err := shiftedBody(f, one, r)
	if err != nil {
		return nil, err
	}
	if len(loops) > 0 {
		body = tir.FreshCopy(body, "_row")
	}
	var from, n tir.Expr = tir.IntOf(t, 0), sym
	if chunk > 1 {
		from = tir.Simplify(tir.Mul(tir.FloorDiv(sym, tir.IntOf(t, chunk)), tir.IntOf(t, chunk)), nil)
		n = tir.Simplify(tir.FloorMod(sym, tir.IntOf(t, chunk)), nil)
	}
	loops = append(loops, &tir.For{Var: r, Min: from, Extent: n, Body: body, Loc: f.Loc})
	out := *one
	out.Params = f.Params
	out.Body = tir.Seq(loops...)
	if err := tir.VerifyFunc(&out); err != nil {
		return nil, fmt.Errorf("lifting the batch of @%s: %v", f.Name, err)
	}
	return &out, nil
}

// shiftedBody is g's body (g: f specialized and scheduled) on f's buffer
// parameters, the rows of those with a symbolic leading dimension
// shifted by off.
func shiftedBody(f, g *tir.PrimFunc, off tir.Expr) (tir.Stmt, error) {
	m := map[*tir.Buffer]*tir.Buffer{}
	shift := map[*tir.Buffer][]tir.Expr{}
	var fb []*tir.Buffer
	for _, p := range f.Params {
		if p.Buffer != nil {
			fb = append(fb, p.Buffer)
		}
	}
	i := 0
	for _, p := range g.Params {
		if p.Buffer == nil {
			return nil, fmt.Errorf("lifting the batch of @%s: the specialized kernel keeps scalar parameter %%%s", f.Name, p.Name())
		}
		if i >= len(fb) {
			return nil, fmt.Errorf("lifting the batch of @%s: parameter counts differ", f.Name)
		}
		m[p.Buffer] = fb[i]
		if _, static := fb[i].ConstShape(); !static {
			o := make([]tir.Expr, len(p.Buffer.Shape))
			o[0] = tir.Simplify(tir.Sub(tir.IntOf(off.DType(), 0), off), nil)
			for d := 1; d < len(o); d++ {
				o[d] = tir.IntOf(off.DType(), 0)
			}
			shift[p.Buffer] = o
		}
		i++
	}
	return tir.ReplaceBuffers(g.Body, m, shift), nil
}
