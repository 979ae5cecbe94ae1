package schedule

import (
	"fmt"
	"strings"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// Loop transformations (TVM's src/tir/schedule/primitive/
// loop_transformation.cc): split, fuse, reorder and the tile convenience.

// substStmt substitutes m in every expression of st (loop bounds, block
// bindings, predicates, regions, stores, conditions), simplifying the
// changed expressions under env.
func substStmt(st tir.Stmt, m map[*tir.Var]tir.Expr, env tir.BoundEnv) tir.Stmt {
	sub := func(e tir.Expr) tir.Expr {
		if e == nil {
			return nil
		}
		n := tir.Substitute(e, m)
		if n != e {
			n = tir.Simplify(n, env)
		}
		return n
	}
	subs := func(es []tir.Expr) []tir.Expr {
		out := make([]tir.Expr, len(es))
		for i, e := range es {
			out[i] = sub(e)
		}
		return out
	}
	regions := func(rs []tir.BufferRegion) []tir.BufferRegion {
		out := make([]tir.BufferRegion, len(rs))
		for i, r := range rs {
			out[i] = tir.BufferRegion{Buffer: r.Buffer, Region: make([]tir.Range, len(r.Region))}
			for j, rg := range r.Region {
				out[i].Region[j] = tir.Range{Min: sub(rg.Min), Extent: sub(rg.Extent)}
			}
		}
		return out
	}
	var rec func(x tir.Stmt) tir.Stmt
	rec = func(x tir.Stmt) tir.Stmt {
		return tir.Mutate(x, func(y tir.Stmt) (tir.Stmt, bool) {
			switch n := y.(type) {
			case *tir.For:
				c := *n
				c.Min, c.Extent, c.Body = sub(n.Min), sub(n.Extent), rec(n.Body)
				return &c, true
			case *tir.BlockRealize:
				c := *n
				c.Values = subs(n.Values)
				c.Predicate = sub(n.Predicate)
				if n.Block != nil {
					b := *n.Block
					b.IterVars = make([]*tir.IterVar, len(n.Block.IterVars))
					for i, iv := range n.Block.IterVars {
						b.IterVars[i] = &tir.IterVar{Var: iv.Var, Kind: iv.Kind, Dom: tir.Range{Min: sub(iv.Dom.Min), Extent: sub(iv.Dom.Extent)}}
					}
					b.Reads, b.Writes = regions(n.Block.Reads), regions(n.Block.Writes)
					b.Init, b.Body = rec(n.Block.Init), rec(n.Block.Body)
					c.Block = &b
				}
				return &c, true
			case *tir.BufferStore:
				c := *n
				c.Value, c.Indices = sub(n.Value), subs(n.Indices)
				return &c, true
			case *tir.IfThenElse:
				c := *n
				c.Cond, c.Then, c.Else = sub(n.Cond), rec(n.Then), rec(n.Else)
				return &c, true
			case *tir.LetStmt:
				c := *n
				c.Value, c.Body = sub(n.Value), rec(n.Body)
				return &c, true
			case *tir.Evaluate:
				c := *n
				c.Value = sub(n.Value)
				return &c, true
			}
			return nil, false
		})
	}
	return rec(st)
}

// firstBlock is the name of the first block under st ("" when none).
func firstBlock(st tir.Stmt) string {
	if bs := BlocksUnder(st); len(bs) > 0 {
		return bs[0].Block.Name
	}
	return ""
}

// loopErr is Errorf for a loop, naming the first block under it.
func (s *Schedule) loopErr(prim string, l LoopRV, format string, args ...any) *Error {
	var b *BlockRV
	if f := findLoop(s.f.Body, l.Var); f != nil {
		if name := firstBlock(f); name != "" {
			b = &BlockRV{Name: name}
		}
	}
	return s.Errorf(prim, b, &l, format, args...)
}

func (s *Schedule) loopEnv() tir.BoundEnv {
	env := tir.BoundEnv{}
	tir.VisitStmt(s.f.Body, func(st tir.Stmt) bool {
		if f, ok := st.(*tir.For); ok {
			lo, ok1 := constInt(f.Min)
			ext, ok2 := constInt(f.Extent)
			if ok1 && ok2 && ext > 0 {
				env[f.Var] = tir.Interval{Lo: lo, Hi: lo + ext - 1}
			}
		}
		return true
	})
	return env
}

// guard adds cond to st: conjoined to the predicate of every block
// directly below st when st holds no statements outside blocks, else as
// an enclosing tir.if.
func guard(st tir.Stmt, cond tir.Expr) tir.Stmt {
	bare := false
	var walk func(x tir.Stmt)
	walk = func(x tir.Stmt) {
		switch x.(type) {
		case *tir.BlockRealize:
			return
		case *tir.BufferStore, *tir.Evaluate, *tir.CallKernel:
			bare = true
			return
		}
		for _, c := range tir.SubStmts(x) {
			walk(c)
		}
	}
	walk(st)
	if bare {
		return &tir.IfThenElse{Cond: cond, Then: st, Loc: st.Location()}
	}
	return tir.Mutate(st, func(x tir.Stmt) (tir.Stmt, bool) {
		r, ok := x.(*tir.BlockRealize)
		if !ok {
			return nil, false
		}
		c := *r
		if r.Predicate == nil {
			c.Predicate = cond
		} else {
			c.Predicate = tir.Bin(tir.OpAnd, cond, r.Predicate)
		}
		return &c, true
	})
}

func formatInts(xs []int64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// Split splits loop l into len(factors) nested loops %<name>_0 (outermost)
// ... %<name>_{n-1} with the given extents (TVM's split). One factor may
// be -1: it is inferred as ceil(extent / product of the others). The loop
// variable is replaced in the body by min + ((l_0*f_1 + l_1)*f_2 + l_2)...
// When the factors' product exceeds the extent (a non-dividing split) the
// tail is guarded: `fused < extent` is conjoined (TVM style) to the
// predicate of every block below the loop (or, for statements outside
// blocks, an enclosing tir.if). The new loops are serial and carry no
// annotations.
//
// A symbolic (non-constant) extent E is split the same way: an inferred
// factor becomes the loop extent floordiv(E + P - 1, P), P the product of
// the given factors, and the tail is guarded unless the simplifier proves
// floormod(E, P) = 0 (no divisibility is assumed). All-constant factors
// of a symbolic extent are accepted when the bound analysis (constant
// enclosing loops) proves E ≤ their product, and guarded as well.
//
// Refused: an unknown loop, fewer than two factors, a factor that is zero
// or negative (other than one -1), two inferred factors, factors whose
// product is less than the extent (for a symbolic extent with no inferred
// factor: not proven at least the extent).
func (s *Schedule) Split(l LoopRV, factors []int64) ([]LoopRV, error) {
	const prim = "split"
	f, err := s.FindLoop(l)
	if err != nil {
		return nil, s.Errorf(prim, nil, &l, "no such loop in @%s", s.f.Name)
	}
	ext, isConst := constInt(f.Extent)
	if len(factors) < 2 {
		return nil, s.loopErr(prim, l, "needs at least two factors, have %s", formatInts(factors))
	}
	infer := -1
	prod := int64(1)
	for i, x := range factors {
		switch {
		case x == -1 && infer >= 0:
			return nil, s.loopErr(prim, l, "factors %s: only one factor can be inferred (-1)", formatInts(factors))
		case x == -1:
			infer = i
		case x <= 0:
			return nil, s.loopErr(prim, l, "factors %s: factor %d is not positive", formatInts(factors), x)
		default:
			if prod > (1<<62)/x {
				return nil, s.loopErr(prim, l, "factors %s: product overflows", formatInts(factors))
			}
			prod *= x
		}
	}
	if !isConst {
		if s.generalize && infer < 0 {
			// A tiling chosen at a representative size: the outermost
			// factor becomes the inferred one.
			prod /= factors[0]
			factors = append([]int64{-1}, factors[1:]...)
			infer = 0
		}
		return s.splitSymbolic(l, f, factors, infer, prod)
	}
	fs := append([]int64(nil), factors...)
	if s.generalize && infer < 0 && prod != ext {
		fs, infer, prod = generalizedFactors(fs, ext)
	}
	if infer >= 0 {
		fs[infer] = (ext + prod - 1) / prod
		prod *= fs[infer]
	}
	if prod < ext {
		return nil, s.loopErr(prim, l, "factors %s multiply to %d, less than the extent %d", formatInts(fs), prod, ext)
	}
	t := f.Var.Type
	exts := make([]tir.Expr, len(fs))
	for i, x := range fs {
		exts[i] = tir.IntOf(t, x)
	}
	var tail tir.Expr
	if prod > ext {
		tail = tir.IntOf(t, ext)
	}
	return s.splitInto(l, f, factors, exts, tail), nil
}

// splitSymbolic is Split of loop f with a non-constant extent: factors
// were checked (at most one -1, at infer; prod is the product of the
// others).
// generalizedFactors adapts the constant factors of a split recorded at a
// representative size to a loop of constant extent ext that they do not
// tile exactly (ReplayGeneralized): a loop of one iteration is split into
// ones; otherwise the outermost factor is inferred. It returns the
// factors, the inferred position (or -1) and the product of the others.
func generalizedFactors(fs []int64, ext int64) ([]int64, int, int64) {
	if ext == 1 {
		for i := range fs {
			fs[i] = 1
		}
		return fs, -1, 1
	}
	prod := int64(1)
	for _, x := range fs[1:] {
		prod *= x
	}
	fs[0] = -1
	return fs, 0, prod
}

func (s *Schedule) splitSymbolic(l LoopRV, f *tir.For, factors []int64, infer int, prod int64) ([]LoopRV, error) {
	const prim = "split"
	t := f.Var.Type
	env := s.loopEnv()
	exts := make([]tir.Expr, len(factors))
	for i, x := range factors {
		exts[i] = tir.IntOf(t, x)
	}
	var tail tir.Expr = f.Extent
	if infer >= 0 {
		// ceil(E / P) as floordiv(E + (P - 1), P): exact for every E,
		// and ≤ 0 (an empty loop) when E ≤ 0.
		exts[infer] = tir.Simplify(tir.FloorDiv(tir.Add(f.Extent, tir.IntOf(t, prod-1)), tir.IntOf(t, prod)), env)
		if r, ok := constInt(tir.Simplify(tir.FloorMod(f.Extent, tir.IntOf(t, prod)), env)); ok && r == 0 {
			tail = nil
		}
	} else if b := tir.Bound(f.Extent, env); b.IsFull() || b.Hi > prod {
		return nil, s.loopErr(prim, l, "factors %s multiply to %d, which is not proven at least the extent %s (give one factor as -1 to infer it)", formatInts(factors), prod, tir.ExprString(f.Extent))
	}
	return s.splitInto(l, f, factors, exts, tail), nil
}

// splitInto replaces loop f by nested loops with extents exts (outermost
// first), guarding the body with fused < tail when tail is not nil, and
// records the split with the factors given.
func (s *Schedule) splitInto(l LoopRV, f *tir.For, factors []int64, exts []tir.Expr, tail tir.Expr) []LoopRV {
	const prim = "split"
	t := f.Var.Type
	vars := make([]*tir.Var, len(exts))
	env := s.loopEnv()
	var fused tir.Expr
	for i, x := range exts {
		vars[i] = tir.NewVar(fmt.Sprintf("%s_%d", f.Var.Name, i), t)
		if c, ok := constInt(x); ok {
			env[vars[i]] = tir.Interval{Lo: 0, Hi: c - 1}
		}
		if fused == nil {
			fused = vars[i]
		} else {
			fused = tir.Add(tir.Mul(fused, x), vars[i])
		}
	}
	val := fused
	if lo, ok := constInt(f.Min); !ok || lo != 0 {
		val = tir.Add(f.Min, fused)
	}
	body := substStmt(f.Body, map[*tir.Var]tir.Expr{f.Var: val}, env)
	if tail != nil {
		if cond := tir.Simplify(tir.LT(fused, tail), env); !isTrue(cond) {
			body = guard(body, cond)
		}
	}
	for i := len(vars) - 1; i >= 0; i-- {
		body = &tir.For{Var: vars[i], Min: tir.IntOf(t, 0), Extent: exts[i], Body: body, Loc: f.Loc}
	}
	s.EnsureLoopIDs(l)
	s.replaceStmt(f, body)
	out := make([]LoopRV, len(vars))
	for i, v := range vars {
		out[i] = LoopRV{Var: v}
	}
	s.Record(prim, []any{l}, map[string]any{"factors": s.valueRefs(l.Var, factors)}, nil, []any{out})
	return out
}

// isTrue reports whether e is a non-zero integer constant.
func isTrue(e tir.Expr) bool {
	c, ok := constInt(e)
	return ok && c != 0
}

// replaceStmt replaces the statement old (by identity) with repl.
func (s *Schedule) replaceStmt(old, repl tir.Stmt) {
	s.SetBody(tir.Mutate(s.f.Body, func(x tir.Stmt) (tir.Stmt, bool) {
		if x == old {
			return repl, true
		}
		return nil, false
	}))
}

// onlyChild returns the single loop that is st's body, or nil.
func onlyChild(f *tir.For) *tir.For {
	body := f.Body
	if q, ok := body.(*tir.SeqStmt); ok && len(q.Stmts) == 1 {
		body = q.Stmts[0]
	}
	c, _ := body.(*tir.For)
	return c
}

// Fuse fuses consecutive perfectly nested loops (each the only statement
// of the previous one's body), outermost first, into one loop
// %<a>_<b>_..._fused whose extent is the product of theirs (TVM's fuse);
// the old variables are recovered with floordiv/floormod.
//
// Refused: fewer than two loops, an unknown loop, loops that are not
// consecutive or not perfectly nested, a non-zero minimum, an extent
// depending on a fused loop, loops feeding both spatial and reduce
// iteration variables of one block.
func (s *Schedule) Fuse(loops ...LoopRV) (LoopRV, error) {
	const prim = "fuse"
	if len(loops) < 2 {
		return LoopRV{}, s.Errorf(prim, nil, nil, "needs at least two loops, have %d", len(loops))
	}
	fors := make([]*tir.For, len(loops))
	for i, l := range loops {
		f, err := s.FindLoop(l)
		if err != nil {
			return LoopRV{}, s.Errorf(prim, nil, &loops[i], "no such loop in @%s", s.f.Name)
		}
		fors[i] = f
		if lo, ok := constInt(f.Min); !ok || lo != 0 {
			return LoopRV{}, s.loopErr(prim, l, "the loop starts at %s, not 0", tir.ExprString(f.Min))
		}
		if i > 0 {
			if onlyChild(fors[i-1]) != f {
				return LoopRV{}, s.loopErr(prim, loops[i-1], "loop %%%s is not the only statement in the body of loop %%%s (loops must be consecutive and perfectly nested)", l.Name(), loops[i-1].Name())
			}
			for _, g := range fors[:i] {
				if tir.UsesVar(f.Extent, g.Var) {
					return LoopRV{}, s.loopErr(prim, l, "the extent %s depends on the fused loop %%%s", tir.ExprString(f.Extent), g.Var.Name)
				}
			}
		}
	}
	inner := fors[len(fors)-1]
	for _, r := range BlocksUnder(inner.Body) {
		var sp, rd string
		for i, iv := range r.Block.IterVars {
			for _, f := range fors {
				if i < len(r.Values) && tir.UsesVar(r.Values[i], f.Var) {
					if iv.Kind == tir.Spatial {
						sp = f.Var.Name
					} else {
						rd = f.Var.Name
					}
				}
			}
		}
		if sp != "" && rd != "" {
			return LoopRV{}, s.ErrorAt(prim, &BlockRV{Name: r.Block.Name}, &loops[0], fors[0], "loop %%%s feeds a spatial and loop %%%s a reduce iteration variable of the block; they cannot be fused", sp, rd)
		}
	}
	t := fors[0].Var.Type
	names := make([]string, len(fors))
	for i, f := range fors {
		names[i] = f.Var.Name
	}
	fv := tir.NewVar(strings.Join(names, "_")+"_fused", t)
	var ext tir.Expr = fors[0].Extent
	for _, f := range fors[1:] {
		ext = tir.Mul(ext, f.Extent)
	}
	env := s.loopEnv()
	ext = tir.Simplify(ext, env)
	if e, ok := constInt(ext); ok {
		env[fv] = tir.Interval{Lo: 0, Hi: e - 1}
	}
	m := map[*tir.Var]tir.Expr{}
	var stride tir.Expr
	for i := len(fors) - 1; i >= 0; i-- {
		var v tir.Expr = fv
		if stride != nil {
			v = tir.FloorDiv(v, stride)
		}
		if i > 0 {
			v = tir.FloorMod(v, fors[i].Extent)
		}
		m[fors[i].Var] = v
		if stride == nil {
			stride = fors[i].Extent
		} else {
			stride = tir.Simplify(tir.Mul(fors[i].Extent, stride), env)
		}
	}
	body := substStmt(inner.Body, m, env)
	s.EnsureLoopIDs(loops...)
	nf := &tir.For{Var: fv, Min: tir.IntOf(t, 0), Extent: ext, Body: body, Loc: fors[0].Loc}
	s.replaceStmt(fors[0], nf)
	out := LoopRV{Var: fv}
	s.Record(prim, []any{loops}, nil, nil, []any{out})
	return out, nil
}

// AddUnitLoop wraps a block or a loop (target: a BlockRV or a LoopRV) in
// a new loop of extent 1 and returns it (TVM's add_unit_loop): a block
// with no spatial loop of its own, such as a full reduction's scalar
// output, then has a loop to bind to blockIdx and threadIdx. The loop's
// variable is used by nothing, so the schedule stays equivalent.
// Refused: an unknown block or loop, another kind of target.
func (s *Schedule) AddUnitLoop(target any) (LoopRV, error) {
	const prim = "add_unit_loop"
	var st tir.Stmt
	var base string
	switch x := target.(type) {
	case BlockRV:
		br := findBlock(s.f.Body, x.Name)
		if br == nil {
			return LoopRV{}, s.Errorf(prim, &x, nil, "no such block in @%s", s.f.Name)
		}
		st, base = br, sanitizeName(x.Name)
	case LoopRV:
		f, err := s.FindLoop(x)
		if err != nil {
			return LoopRV{}, s.Errorf(prim, nil, &x, "no such loop in @%s", s.f.Name)
		}
		st, base = f, f.Var.Name
	default:
		return LoopRV{}, s.Errorf(prim, nil, nil, "the target must be a block or a loop, not %T", target)
	}
	v := tir.NewVar(s.freshLoopName(base+"_unit"), tir.DIndex)
	s.replaceStmt(st, &tir.For{Var: v, Min: tir.IntOf(tir.DIndex, 0), Extent: tir.IntOf(tir.DIndex, 1), Body: st, Loc: st.Location()})
	out := LoopRV{Var: v}
	s.Record(prim, []any{target}, nil, nil, []any{out})
	return out, nil
}

// freshLoopName is name, or name with a number appended, such that no
// loop of the function has that name.
func (s *Schedule) freshLoopName(name string) string {
	used := map[string]bool{}
	tir.VisitStmt(s.f.Body, func(st tir.Stmt) bool {
		if f, ok := st.(*tir.For); ok {
			used[f.Var.Name] = true
		}
		return true
	})
	out := name
	for i := 1; used[out]; i++ {
		out = fmt.Sprintf("%s%d", name, i)
	}
	return out
}

// sanitizeName keeps the letters, digits and underscores of a block name
// for a variable name.
func sanitizeName(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, name)
}

// Reorder reorders loops of one perfect nest (TVM's reorder): the loops
// given occupy the same positions of the nest as before, in the order
// given (loops between them that are not given stay in place).
//
// Refused: an unknown or duplicated loop, loops not on one chain of nested
// loops, a loop between the outermost and innermost given ones whose body
// holds anything besides the next loop, a loop moved above a loop its
// bounds depend on.
func (s *Schedule) Reorder(loops ...LoopRV) error {
	const prim = "reorder"
	if len(loops) == 0 {
		return s.Errorf(prim, nil, nil, "no loops given")
	}
	given := map[*tir.Var]int{}
	for i, l := range loops {
		if _, err := s.FindLoop(l); err != nil {
			return s.Errorf(prim, nil, &loops[i], "no such loop in @%s", s.f.Name)
		}
		if _, dup := given[l.Var]; dup {
			return s.loopErr(prim, l, "loop %%%s is given twice", l.Name())
		}
		given[l.Var] = i
	}
	// The outermost given loop: the one whose subtree holds all others.
	var top *tir.For
	for _, l := range loops {
		f, _ := s.FindLoop(l)
		all := true
		for _, m := range loops {
			if findLoop(f, m.Var) == nil {
				all = false
				break
			}
		}
		if all {
			top = f
			break
		}
	}
	if top == nil {
		return s.loopErr(prim, loops[0], "the loops %s are not nested in one another", loopNames(loops))
	}
	var chain []*tir.For
	found := 0
	for f := top; ; {
		chain = append(chain, f)
		if _, ok := given[f.Var]; ok {
			found++
		}
		if found == len(loops) {
			break
		}
		c := onlyChild(f)
		if c == nil {
			missing := ""
			for _, l := range loops {
				if findLoop(f.Body, l.Var) != nil {
					missing = l.Name()
					break
				}
			}
			if missing == "" {
				return s.loopErr(prim, LoopRV{Var: top.Var}, "the loops %s are not nested in one another", loopNames(loops))
			}
			return s.ErrorAt(prim, nil, &LoopRV{Var: f.Var}, f, "loop %%%s holds more than loop %%%s (the loops between %%%s and %%%s are not perfectly nested)", f.Var.Name, missing, top.Var.Name, missing)
		}
		f = c
	}
	order := make([]*tir.For, len(chain))
	k := 0
	for i, f := range chain {
		if _, ok := given[f.Var]; ok {
			g, _ := s.FindLoop(loops[k])
			order[i] = g
			k++
		} else {
			order[i] = f
		}
	}
	for i, f := range order {
		for _, g := range order[i+1:] {
			if tir.UsesVar(f.Min, g.Var) || tir.UsesVar(f.Extent, g.Var) {
				return s.ErrorAt(prim, nil, &LoopRV{Var: f.Var}, top, "the bounds of loop %%%s depend on loop %%%s, which would be moved inside it", f.Var.Name, g.Var.Name)
			}
		}
	}
	body := chain[len(chain)-1].Body
	for i := len(order) - 1; i >= 0; i-- {
		c := *order[i]
		c.Body = body
		body = &c
	}
	s.replaceStmt(top, body)
	s.Record(prim, []any{loops}, nil, nil, nil)
	return nil
}

func loopNames(ls []LoopRV) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = "%" + l.Name()
	}
	return strings.Join(parts, ", ")
}

// Tile splits each loops[i] by factors[i] and reorders the pieces level by
// level: all level-0 loops first (in the order of loops), then level 1,
// ... (TVM's tile idiom; the SSRSRS tiling of a matmul is Tile([i, j, k],
// ...) with a reorder). Loops split into fewer pieces than the others
// contribute to the first levels only. It returns the loops in their new
// order, outermost first. It records split and reorder instructions.
func (s *Schedule) Tile(loops []LoopRV, factors [][]int64) ([]LoopRV, error) {
	if len(loops) != len(factors) {
		return nil, s.Errorf("tile", nil, nil, "%d loops but %d factor lists", len(loops), len(factors))
	}
	pieces := make([][]LoopRV, len(loops))
	depth := 0
	for i, l := range loops {
		if len(factors[i]) <= 1 {
			pieces[i] = []LoopRV{l}
		} else {
			ps, err := s.Split(l, factors[i])
			if err != nil {
				return nil, err
			}
			pieces[i] = ps
		}
		depth = max(depth, len(pieces[i]))
	}
	var order []LoopRV
	for lvl := 0; lvl < depth; lvl++ {
		for _, ps := range pieces {
			if lvl < len(ps) {
				order = append(order, ps[lvl])
			}
		}
	}
	if len(order) > 1 {
		if err := s.Reorder(order...); err != nil {
			return nil, err
		}
	}
	return order, nil
}

func loopsOf(in []any) ([]LoopRV, error) {
	out := make([]LoopRV, len(in))
	for i := range in {
		l, err := LoopInput(in, i)
		if err != nil {
			return nil, err
		}
		out[i] = l
	}
	return out, nil
}

func init() {
	RegisterInstruction("split", func(s *Schedule, in []any, attrs map[string]any, _ any) ([]any, error) {
		l, err := LoopInput(in, 0)
		if err != nil {
			return nil, err
		}
		fs, err := AttrInts(attrs, "factors")
		if err != nil {
			return nil, err
		}
		ls, err := s.Split(l, fs)
		return []any{ls}, err
	})
	RegisterInstruction("fuse", func(s *Schedule, in []any, _ map[string]any, _ any) ([]any, error) {
		ls, err := loopsOf(in)
		if err != nil {
			return nil, err
		}
		l, err := s.Fuse(ls...)
		return []any{l}, err
	})
	RegisterInstruction("add_unit_loop", func(s *Schedule, in []any, _ map[string]any, _ any) ([]any, error) {
		if len(in) != 1 {
			return nil, fmt.Errorf("add_unit_loop takes one input, got %d", len(in))
		}
		l, err := s.AddUnitLoop(in[0])
		return []any{l}, err
	})
	RegisterInstruction("reorder", func(s *Schedule, in []any, _ map[string]any, _ any) ([]any, error) {
		ls, err := loopsOf(in)
		if err != nil {
			return nil, err
		}
		return nil, s.Reorder(ls...)
	})
}
