package schedule

import (
	"fmt"
	"maps"
	"sort"
	"sync"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// Blockize and tensorize (TVM's src/tir/schedule/primitive/
// blockize_tensorize.cc).
//
// blockize(l) wraps the loop nest rooted at l, which must hold exactly one
// block and nothing but loops above it (a perfect nest), in a new outer
// block "<b>_o". Each binding of the inner block is divided into an outer
// and an inner part (TVM's subspace division): a binding of the loops
// above l only becomes an outer iteration variable; one of the loops at
// or below l only stays; a sum outer + inner, where inner ranges over
// [0, E) and E divides outer (a split's i_0*E + i_1), gives an outer
// iteration variable vo = outer floordiv E (same kind, domain
// ceil(extent / E)) and the inner binding vo*E + inner. The outer block
// reads and writes the inner block's regions relaxed over the loops below
// l. The inner block keeps its init (it runs at the first iteration of
// the whole reduction); an outer block with reduce variables is marked
// tessera.accumulate (its own body does not reset its output).
//
// tensorize(l, intrin) blockizes l and replaces the computation under the
// new block by the registered intrinsic's implementation, after checking
// that the loops and the block under l match the intrinsic's description
// structurally (see Tensorize).

// TensorIntrin is a registered tensor intrinsic: a description of the
// computation it performs and an implementation, two PrimFuncs with the
// same buffer parameters (names, dtypes, shapes, roles).
type TensorIntrin struct {
	Name       string
	Desc, Impl *tir.PrimFunc
}

var (
	intrinMu sync.RWMutex
	intrins  = map[string]*TensorIntrin{}
)

// RegisterTensorIntrin registers an intrinsic (TVM's
// TensorIntrin.register). desc must be a perfect loop nest around one
// block; impl computes the same thing. It panics when the name is taken
// or the functions do not fit together.
func RegisterTensorIntrin(name string, desc, impl *tir.PrimFunc) {
	if err := checkIntrin(desc, impl); err != nil {
		panic(fmt.Sprintf("RegisterTensorIntrin(%q): %v", name, err))
	}
	intrinMu.Lock()
	defer intrinMu.Unlock()
	if intrins[name] != nil {
		panic(fmt.Sprintf("RegisterTensorIntrin(%q): already registered", name))
	}
	intrins[name] = &TensorIntrin{Name: name, Desc: desc, Impl: impl}
}

// LookupTensorIntrin returns the intrinsic registered as name, or nil.
func LookupTensorIntrin(name string) *TensorIntrin {
	intrinMu.RLock()
	defer intrinMu.RUnlock()
	return intrins[name]
}

// TensorIntrinNames lists the registered intrinsics, sorted.
func TensorIntrinNames() []string {
	intrinMu.RLock()
	defer intrinMu.RUnlock()
	var out []string
	for n := range intrins {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func checkIntrin(desc, impl *tir.PrimFunc) error {
	if desc == nil || impl == nil {
		return fmt.Errorf("nil function")
	}
	for _, f := range []*tir.PrimFunc{desc, impl} {
		if err := tir.VerifyFunc(f); err != nil {
			return err
		}
	}
	if len(desc.Params) != len(impl.Params) {
		return fmt.Errorf("@%s has %d parameters, @%s %d", desc.Name, len(desc.Params), impl.Name, len(impl.Params))
	}
	for i, p := range desc.Params {
		q := impl.Params[i]
		if p.Buffer == nil || q.Buffer == nil {
			return fmt.Errorf("parameter %d is not a buffer", i)
		}
		ps, ok1 := p.Buffer.ConstShape()
		qs, ok2 := q.Buffer.ConstShape()
		if !ok1 || !ok2 || fmt.Sprint(ps) != fmt.Sprint(qs) || p.Buffer.DType != q.Buffer.DType || p.Role != q.Role {
			return fmt.Errorf("parameter %d: %%%s and %%%s differ in shape, dtype or role", i, p.Name(), q.Name())
		}
	}
	if _, _, why := perfectNest(desc.Body); why != "" {
		return fmt.Errorf("description @%s: %s", desc.Name, why)
	}
	return nil
}

// perfectNest returns the loops of st (outermost first) and the one block
// realization under them, or why st is not such a nest.
func perfectNest(st tir.Stmt) ([]*tir.For, *tir.BlockRealize, string) {
	var loops []*tir.For
	for {
		switch x := st.(type) {
		case *tir.For:
			loops = append(loops, x)
			st = x.Body
			continue
		case *tir.BlockRealize:
			return loops, x, ""
		case *tir.SeqStmt:
			return nil, nil, fmt.Sprintf("the nest holds a sequence of %d statements, not one block", len(x.Stmts))
		case nil:
			return nil, nil, "the nest holds no block"
		default:
			return nil, nil, fmt.Sprintf("the nest holds a %T, not only loops around one block", st)
		}
	}
}

// blockizeResult is a blockized nest, before installation.
type blockizeResult struct {
	outer *tir.BlockRealize // realizes "<b>_o", whose body is the rebuilt loop l
	inner *tir.BlockRealize // the inner block's realization inside it
	loops []*tir.For        // the loops of the nest, l first, as rebuilt
}

// blockize builds the outer block for loop l (nothing installed).
func (s *Schedule) blockize(prim string, l LoopRV) (*tir.For, *blockizeResult, error) {
	f, err := s.FindLoop(l)
	if err != nil {
		return nil, nil, s.Errorf(prim, nil, &l, "no such loop in @%s", s.f.Name)
	}
	loops, r, why := perfectNest(f)
	if why != "" {
		return nil, nil, s.loopErr(prim, l, "%s", why)
	}
	b := BlockRV{Name: r.Block.Name}
	innerLoops := map[*tir.Var]bool{}
	innerEnv := tir.BoundEnv{}
	for _, g := range loops {
		lo, ok1 := constInt(g.Min)
		ext, ok2 := constInt(g.Extent)
		if !ok1 || !ok2 {
			return nil, nil, s.Errorf(prim, &b, &LoopRV{Var: g.Var}, "loop %%%s has non-constant bounds", g.Var.Name)
		}
		innerLoops[g.Var] = true
		innerEnv[g.Var] = tir.Interval{Lo: lo, Hi: lo + ext - 1}
	}
	env := s.loopEnv()
	zeroInner := map[*tir.Var]tir.Expr{}
	for v := range innerLoops {
		zeroInner[v] = tir.IntOf(v.Type, 0)
	}
	blk := r.Block
	var outerIVs []*tir.IterVar
	var outerVals []tir.Expr
	innerVals := make([]tir.Expr, len(r.Values))
	hasReduce := false
	for i, iv := range blk.IterVars {
		e := r.Values[i]
		usesInner, usesOuter := false, false
		tir.VisitExpr(e, func(x tir.Expr) bool {
			if v, ok := x.(*tir.Var); ok {
				if innerLoops[v] {
					usesInner = true
				} else {
					usesOuter = true
				}
			}
			return true
		})
		switch {
		case !usesInner && !usesOuter:
			innerVals[i] = e
		case !usesInner:
			vo := tir.NewVar(iv.Var.Name+"_o", iv.Var.Type)
			outerIVs = append(outerIVs, &tir.IterVar{Var: vo, Dom: iv.Dom, Kind: iv.Kind})
			outerVals = append(outerVals, e)
			innerVals[i] = vo
			hasReduce = hasReduce || iv.Kind == tir.Reduce
		case !usesOuter:
			innerVals[i] = e
		default:
			zeroOuter := map[*tir.Var]tir.Expr{}
			tir.VisitExpr(e, func(x tir.Expr) bool {
				if v, ok := x.(*tir.Var); ok && !innerLoops[v] {
					zeroOuter[v] = tir.IntOf(v.Type, 0)
				}
				return true
			})
			inner := tir.Simplify(tir.Substitute(e, zeroOuter), innerEnv)
			outer := tir.Simplify(tir.Substitute(e, zeroInner), env)
			diff := tir.Simplify(tir.Sub(e, tir.Add(outer, inner)), env)
			bd := tir.Bound(inner, innerEnv)
			if c, ok := diff.(*tir.IntImm); !ok || c.Value != 0 || bd.Lo != 0 || bd.IsFull() {
				return nil, nil, s.Errorf(prim, &b, &l, "the binding %s of %%%s is not divisible into an outer part and an inner part over [0, E) (outer loops + loops at or below %%%s)", tir.ExprString(e), iv.Var.Name, l.Name())
			}
			ext := bd.Hi + 1
			E := tir.IntOf(e.DType(), ext)
			if c, ok := tir.Simplify(tir.FloorMod(outer, E), env).(*tir.IntImm); !ok || c.Value != 0 {
				return nil, nil, s.Errorf(prim, &b, &l, "the binding %s of %%%s: its outer part %s is not a multiple of the inner extent %d", tir.ExprString(e), iv.Var.Name, tir.ExprString(outer), ext)
			}
			dmin, ok1 := constInt(iv.Dom.Min)
			dext, ok2 := constInt(iv.Dom.Extent)
			if !ok1 || !ok2 || dmin != 0 {
				return nil, nil, s.Errorf(prim, &b, &l, "%%%s has a domain that does not start at 0 or is not constant", iv.Var.Name)
			}
			vo := tir.NewVar(iv.Var.Name+"_o", iv.Var.Type)
			outerIVs = append(outerIVs, &tir.IterVar{Var: vo, Dom: tir.Range{Min: tir.IntOf(iv.Var.Type, 0), Extent: tir.IntOf(iv.Var.Type, (dext+ext-1)/ext)}, Kind: iv.Kind})
			outerVals = append(outerVals, tir.Simplify(tir.FloorDiv(outer, E), env))
			innerVals[i] = tir.Add(tir.Mul(vo, E), inner)
			hasReduce = hasReduce || iv.Kind == tir.Reduce
		}
	}
	// The predicate's conjuncts of the outer loops only go to the outer
	// realization, and so does a tile guard the inner loops cannot change
	// (liftGuard); the others stay.
	var outerPred, innerPred tir.Expr
	for _, c := range conjuncts(r.Predicate) {
		if g, ok := liftGuard(c, innerLoops, innerEnv, zeroInner, env); ok {
			c = g
		}
		inner := false
		tir.VisitExpr(c, func(x tir.Expr) bool {
			if v, ok := x.(*tir.Var); ok && innerLoops[v] {
				inner = true
			}
			return true
		})
		if inner {
			innerPred = and(innerPred, c)
		} else {
			outerPred = and(outerPred, c)
		}
	}
	// The inner realization with the new bindings; the nest rebuilt
	// around it keeps the loops' variables.
	nr := *r
	nr.Values = innerVals
	nr.Predicate = innerPred
	var rebuilt []*tir.For
	var body tir.Stmt = &nr
	for i := len(loops) - 1; i >= 0; i-- {
		c := *loops[i]
		c.Body = body
		body = &c
		rebuilt = append([]*tir.For{&c}, rebuilt...)
	}
	// Outer regions: the inner regions with the inner iteration variables
	// substituted by their bindings, relaxed over the loops at or below l.
	sub := map[*tir.Var]tir.Expr{}
	for i, iv := range blk.IterVars {
		sub[iv.Var] = innerVals[i]
	}
	relax := func(rs []tir.BufferRegion) []tir.BufferRegion {
		out := make([]tir.BufferRegion, len(rs))
		for i, rg := range rs {
			out[i] = tir.BufferRegion{Buffer: rg.Buffer, Region: make([]tir.Range, len(rg.Region))}
			for d, x := range rg.Region {
				out[i].Region[d] = relaxRange(x, sub, loops, rg.Buffer.Shape[d], env)
			}
		}
		return out
	}
	name := freshName(blk.Name+"_o", allBlockNames(s.f))
	ob := &tir.Block{Name: name, IterVars: outerIVs, Reads: relax(blk.Reads), Writes: relax(blk.Writes), Body: body, Loc: blk.Loc}
	if hasReduce {
		ob.Annotations = tir.Attrs{tir.AttrAccumulate: tir.UnitAttr{}}
	}
	out := &tir.BlockRealize{Values: outerVals, Predicate: outerPred, Block: ob, Loc: r.Loc}
	return f, &blockizeResult{outer: out, inner: &nr, loops: rebuilt}, nil
}

// conjuncts splits e at its top-level &&s (nil: none).
// liftGuard rewrites a split tail's guard `outer + inner < c` as
// `outer < c` when the inner loops cannot change it: inner (the part of
// the left side that only the inner loops move) lies in [0, E), and the
// outer part and c are multiples of E, so the whole inner tile is in or
// out together (TVM's blockize likewise moves such a predicate to the
// outer block). ok is false for any other conjunct.
func liftGuard(c tir.Expr, innerLoops map[*tir.Var]bool, innerEnv tir.BoundEnv, zeroInner map[*tir.Var]tir.Expr, env tir.BoundEnv) (tir.Expr, bool) {
	b, isBin := c.(*tir.Binary)
	if !isBin || b.Op != tir.OpLT {
		return nil, false
	}
	limit, isConst := constInt(b.B)
	if !isConst {
		return nil, false
	}
	zeroOuter := map[*tir.Var]tir.Expr{}
	tir.VisitExpr(b.A, func(x tir.Expr) bool {
		if v, ok := x.(*tir.Var); ok && !innerLoops[v] {
			zeroOuter[v] = tir.IntOf(v.Type, 0)
		}
		return true
	})
	inner := tir.Simplify(tir.Substitute(b.A, zeroOuter), innerEnv)
	outer := tir.Simplify(tir.Substitute(b.A, zeroInner), env)
	if d, ok := tir.Simplify(tir.Sub(b.A, tir.Add(outer, inner)), env).(*tir.IntImm); !ok || d.Value != 0 {
		return nil, false
	}
	bd := tir.Bound(inner, innerEnv)
	if bd.IsFull() || bd.Lo != 0 {
		return nil, false
	}
	e := bd.Hi + 1
	if m, ok := tir.Simplify(tir.FloorMod(outer, tir.IntOf(outer.DType(), e)), env).(*tir.IntImm); !ok || m.Value != 0 || limit%e != 0 {
		return nil, false
	}
	return tir.LT(outer, b.B), true
}

func conjuncts(e tir.Expr) []tir.Expr {
	if e == nil {
		return nil
	}
	if b, ok := e.(*tir.Binary); ok && b.Op == tir.OpAnd {
		return append(conjuncts(b.A), conjuncts(b.B)...)
	}
	return []tir.Expr{e}
}

func and(a, b tir.Expr) tir.Expr {
	if a == nil {
		return b
	}
	return tir.Bin(tir.OpAnd, a, b)
}

// relaxRange is rg with sub applied, relaxed over loops: [e(loops=min),
// e(loops=max) + extent) when each loop's coefficient is a non-negative
// constant, else the buffer's whole dimension.
func relaxRange(rg tir.Range, sub map[*tir.Var]tir.Expr, loops []*tir.For, dim tir.Expr, env tir.BoundEnv) tir.Range {
	m := tir.Simplify(tir.Substitute(rg.Min, sub), env)
	lo, hi := map[*tir.Var]tir.Expr{}, map[*tir.Var]tir.Expr{}
	for _, g := range loops {
		step := map[*tir.Var]tir.Expr{g.Var: tir.Add(g.Var, tir.IntOf(g.Var.Type, 1))}
		d, ok := tir.Simplify(tir.Sub(tir.Substitute(m, step), m), env).(*tir.IntImm)
		if !ok || d.Value < 0 {
			return tir.Range{Min: tir.IntOf(dim.DType(), 0), Extent: dim}
		}
		lo[g.Var] = g.Min
		hi[g.Var] = tir.Simplify(tir.Sub(tir.Add(g.Min, g.Extent), tir.IntOf(g.Var.Type, 1)), env)
	}
	mlo := tir.Simplify(tir.Substitute(m, lo), env)
	mhi := tir.Simplify(tir.Substitute(m, hi), env)
	ext := tir.Simplify(tir.Add(tir.Sub(mhi, mlo), tir.Substitute(rg.Extent, sub)), env)
	for _, g := range loops {
		if tir.UsesVar(ext, g.Var) {
			return tir.Range{Min: tir.IntOf(dim.DType(), 0), Extent: dim}
		}
	}
	return tir.Range{Min: mlo, Extent: ext}
}

// Blockize wraps the nest rooted at loop l (loops around exactly one
// block) in a new block "<b>_o" (TVM's blockize) and returns it.
func (s *Schedule) Blockize(l LoopRV) (BlockRV, error) {
	const prim = "blockize"
	f, res, err := s.blockize(prim, l)
	if err != nil {
		return BlockRV{}, err
	}
	b := BlockRV{Name: res.inner.Block.Name}
	body := tir.Mutate(s.f.Body, func(st tir.Stmt) (tir.Stmt, bool) {
		if st == tir.Stmt(f) {
			return res.outer, true
		}
		return nil, false
	})
	if err := s.install(prim, &b, &l, body); err != nil {
		return BlockRV{}, err
	}
	out := BlockRV{Name: res.outer.Block.Name}
	s.Record(prim, []any{l}, nil, nil, []any{out})
	return out, nil
}

// Tensorize blockizes loop l and replaces the computation under the new
// block "<b>_o" by the implementation of the registered intrinsic (TVM's
// tensorize on a loop). The nest at l must match the intrinsic's
// description: the same number of loops with the same extents (from 0),
// the same iteration variable kinds, bindings equal up to the outer part
// blockize divides off, the same init (none, when the description
// accumulates: decompose_reduction first), no predicate, and block
// bodies equal operator by operator with each description buffer bound to
// one buffer of the function (in the description buffer's storage scope,
// unless that is global), every access of it at the same constant-free
// offset (an expression of the outer block's variables) plus the
// description's index. The implementation's loops and blocks are copied
// under "<b>_o" with its buffers bound to those regions; its blocks are
// named "<b>" (the first) and "<b>_<its name>" (fresh). The outer block is
// annotated tessera.tensorized = the intrinsic's name.
func (s *Schedule) Tensorize(l LoopRV, intrin string) (BlockRV, error) {
	const prim = "tensorize"
	in := LookupTensorIntrin(intrin)
	if in == nil {
		return BlockRV{}, s.loopErr(prim, l, "no tensor intrinsic %q is registered (registered: %v)", intrin, TensorIntrinNames())
	}
	f, res, err := s.blockize(prim, l)
	if err != nil {
		return BlockRV{}, err
	}
	b := BlockRV{Name: res.inner.Block.Name}
	m := &intrinMatch{s: s, prim: prim, b: b, l: l, intrin: intrin, env: s.loopEnv(), bufs: map[*tir.Buffer]*tir.Buffer{}, offsets: map[*tir.Buffer][]tir.Expr{}, ivs: map[*tir.Var]*tir.Var{}}
	if err := m.match(res, in.Desc); err != nil {
		return BlockRV{}, err
	}
	// Copy the implementation with its buffers bound.
	implBufs := map[*tir.Buffer]*tir.Buffer{}
	implOff := map[*tir.Buffer][]tir.Expr{}
	for i, p := range in.Impl.Params {
		d := in.Desc.Params[i].Buffer
		x, ok := m.bufs[d]
		if !ok {
			return BlockRV{}, s.Errorf(prim, &b, &l, "the block does not access the description's buffer %%%s", d.Name)
		}
		implBufs[p.Buffer] = x
		implOff[p.Buffer] = m.offsets[d]
	}
	used := allBlockNames(s.f)
	first := true
	rename := func(n string) string {
		if first {
			first = false
			return b.Name
		}
		nn := freshName(b.Name+"_"+n, used)
		used[nn] = true
		return nn
	}
	body := cloneImpl(in.Impl.Body, implBufs, implOff, rename, m.env)
	ob := *res.outer.Block
	ob.Body = body
	ob.Annotations = tir.Attrs{}
	for k, v := range res.outer.Block.Annotations {
		ob.Annotations[k] = v
	}
	ob.Annotations[AttrTensorized] = tir.StringAttr(intrin)
	outer := *res.outer
	outer.Block = &ob
	nbody := tir.Mutate(s.f.Body, func(st tir.Stmt) (tir.Stmt, bool) {
		if st == tir.Stmt(f) {
			return &outer, true
		}
		return nil, false
	})
	if err := s.install(prim, &b, &l, nbody, l); err != nil {
		return BlockRV{}, err
	}
	out := BlockRV{Name: ob.Name}
	s.Record(prim, []any{l}, map[string]any{"intrin": intrin}, nil, []any{out})
	return out, nil
}

// AttrTensorized is the annotation tensorize puts on the block it
// replaced: the intrinsic's name.
const AttrTensorized = "tessera.tensorized"

type intrinMatch struct {
	s       *Schedule
	prim    string
	b       BlockRV
	l       LoopRV
	intrin  string
	env     tir.BoundEnv
	bufs    map[*tir.Buffer]*tir.Buffer // description buffer -> function buffer
	offsets map[*tir.Buffer][]tir.Expr  // description buffer -> offset per dimension
	ivs     map[*tir.Var]*tir.Var       // our inner iteration variable -> description's
	base    map[*tir.Var]tir.Expr       // our inner iteration variable -> its outer part
	local   map[*tir.Var]tir.Expr       // description iteration variable -> our local part
}

func (m *intrinMatch) fail(format string, args ...any) error {
	return m.s.Errorf(m.prim, &m.b, &m.l, "does not match intrinsic %q: %s", m.intrin, fmt.Sprintf(format, args...))
}

func (m *intrinMatch) match(res *blockizeResult, desc *tir.PrimFunc) error {
	dloops, dr, _ := perfectNest(desc.Body)
	if len(dloops) != len(res.loops) {
		return m.fail("the nest has %d loops, the description %d", len(res.loops), len(dloops))
	}
	rename := map[*tir.Var]tir.Expr{}
	for i, g := range res.loops {
		d := dloops[i]
		ge, _ := constInt(g.Extent)
		de, _ := constInt(d.Extent)
		gm, _ := constInt(g.Min)
		dm, _ := constInt(d.Min)
		if ge != de || gm != 0 || dm != 0 {
			return m.fail("loop %%%s runs over [%s, %s + %s), the description's loop %%%s over [%d, %d)", g.Var.Name, tir.ExprString(g.Min), tir.ExprString(g.Min), tir.ExprString(g.Extent), d.Var.Name, dm, dm+de)
		}
		rename[d.Var] = g.Var
	}
	r, db := res.inner, dr.Block
	blk := r.Block
	if r.Predicate != nil {
		return m.fail("the block has a predicate %s (a guarded tail); the intrinsic computes whole tiles", tir.ExprString(r.Predicate))
	}
	if len(blk.IterVars) != len(db.IterVars) {
		return m.fail("the block has %d iteration variables, the description's %d", len(blk.IterVars), len(db.IterVars))
	}
	outerZero := map[*tir.Var]tir.Expr{}
	for _, iv := range res.outer.Block.IterVars {
		outerZero[iv.Var] = tir.IntOf(iv.Var.Type, 0)
	}
	loopZero := map[*tir.Var]tir.Expr{}
	for _, g := range res.loops {
		loopZero[g.Var] = tir.IntOf(g.Var.Type, 0)
	}
	m.base, m.local = map[*tir.Var]tir.Expr{}, map[*tir.Var]tir.Expr{}
	for i, iv := range blk.IterVars {
		div := db.IterVars[i]
		if iv.Kind != div.Kind || iv.Var.Type != div.Var.Type {
			return m.fail("iteration variable %%%s is %s, the description's %%%s %s", iv.Var.Name, iv.Kind, div.Var.Name, div.Kind)
		}
		local := tir.Simplify(tir.Substitute(r.Values[i], outerZero), m.env)
		want := tir.Substitute(dr.Values[i], rename)
		if c, ok := tir.Simplify(tir.Sub(local, want), m.env).(*tir.IntImm); !ok || c.Value != 0 {
			return m.fail("%%%s is bound to %s, the description's %%%s to %s", iv.Var.Name, tir.ExprString(local), div.Var.Name, tir.ExprString(want))
		}
		m.ivs[iv.Var] = div.Var
		m.base[iv.Var] = tir.Simplify(tir.Substitute(r.Values[i], loopZero), m.env)
	}
	if (blk.Init == nil) != (db.Init == nil) {
		if blk.Init != nil {
			return m.fail("the block has an init, the description accumulates (decompose_reduction first)")
		}
		return m.fail("the block accumulates, the description has an init")
	}
	if err := m.stmt(blk.Init, db.Init); err != nil {
		return err
	}
	return m.stmt(blk.Body, db.Body)
}

func (m *intrinMatch) stmt(a, d tir.Stmt) error {
	switch x := a.(type) {
	case nil:
		if d != nil {
			return m.fail("the block has no statement where the description has %s", firstLine(d))
		}
		return nil
	case *tir.SeqStmt:
		y, ok := d.(*tir.SeqStmt)
		if !ok || len(x.Stmts) != len(y.Stmts) {
			return m.fail("%s differs from the description's %s", firstLine(a), firstLine(d))
		}
		for i := range x.Stmts {
			if err := m.stmt(x.Stmts[i], y.Stmts[i]); err != nil {
				return err
			}
		}
		return nil
	case *tir.BufferStore:
		y, ok := d.(*tir.BufferStore)
		if !ok {
			return m.fail("%s differs from the description's %s", firstLine(a), firstLine(d))
		}
		if err := m.access(x.Buffer, x.Indices, y.Buffer, y.Indices); err != nil {
			return err
		}
		if !m.expr(x.Value, y.Value) {
			return m.fail("the stored value %s differs from the description's %s", tir.ExprString(x.Value), tir.ExprString(y.Value))
		}
		return nil
	}
	return m.fail("%s is not a store or a sequence of stores", firstLine(a))
}

func firstLine(st tir.Stmt) string {
	if st == nil {
		return "nothing"
	}
	p := tir.PrintStmt(st)
	for i, c := range p {
		if c == '\n' {
			return p[:i]
		}
	}
	return p
}

// storageScope is b's storage scope, global when unset.
func storageScope(b *tir.Buffer) string {
	if b.Scope == "" {
		return tir.ScopeGlobal
	}
	return b.Scope
}

// access matches our access X[idx] with the description's P[pidx]: P
// binds to X at one offset for all its accesses, and X lies in P's
// storage scope unless that is global (TVM's tensorize checks the
// description buffers' scopes the same way).
func (m *intrinMatch) access(x *tir.Buffer, idx []tir.Expr, p *tir.Buffer, pidx []tir.Expr) error {
	if x.DType != p.DType || len(idx) != len(pidx) {
		return m.fail("%%%s (%s, rank %d) cannot bind the description's %%%s (%s, rank %d)", x.Name, x.DType, len(idx), p.Name, p.DType, len(pidx))
	}
	if ps := storageScope(p); ps != tir.ScopeGlobal && ps != storageScope(x) {
		return m.fail("%%%s is in scope %s, the description's %%%s in %s (cache_read or cache_write it there)", x.Name, storageScope(x), p.Name, ps)
	}
	if old, ok := m.bufs[p]; ok && old != x {
		return m.fail("the description's %%%s binds both %%%s and %%%s", p.Name, old.Name, x.Name)
	}
	for q, y := range m.bufs {
		if y == x && q != p {
			return m.fail("%%%s binds both the description's %%%s and %%%s", x.Name, q.Name, p.Name)
		}
	}
	sub := map[*tir.Var]tir.Expr{}
	for v, w := range m.ivs {
		sub[v] = tir.Add(m.base[v], w)
	}
	off := make([]tir.Expr, len(idx))
	for d := range idx {
		diff := tir.Simplify(tir.Sub(tir.Substitute(idx[d], sub), pidx[d]), m.env)
		for _, w := range m.ivs {
			if tir.UsesVar(diff, w) {
				return m.fail("%%%s index %s does not follow the description's %%%s index %s", x.Name, tir.ExprString(idx[d]), p.Name, tir.ExprString(pidx[d]))
			}
		}
		off[d] = diff
	}
	if prev, ok := m.offsets[p]; ok {
		for d := range off {
			if c, ok := tir.Simplify(tir.Sub(off[d], prev[d]), m.env).(*tir.IntImm); !ok || c.Value != 0 {
				return m.fail("%%%s is accessed at two different offsets of the description's %%%s", x.Name, p.Name)
			}
		}
	}
	m.bufs[p], m.offsets[p] = x, off
	return nil
}

// commutative are the operators whose operands match the description's
// in either order (exact in IEEE arithmetic too: a·b = b·a, a+b = b+a).
var commutative = map[tir.BinOp]bool{tir.OpAdd: true, tir.OpMul: true, tir.OpMin: true, tir.OpMax: true}

// expr compares our expression with the description's operator by
// operator (buffer loads by access; a commutative operator's operands in
// either order).
func (m *intrinMatch) expr(a, d tir.Expr) bool {
	switch x := a.(type) {
	case *tir.IntImm:
		y, ok := d.(*tir.IntImm)
		return ok && x.Type == y.Type && x.Value == y.Value
	case *tir.FloatImm:
		y, ok := d.(*tir.FloatImm)
		return ok && x.Type == y.Type && x.Value == y.Value
	case *tir.Var:
		y, ok := d.(*tir.Var)
		return ok && m.ivs[x] == y
	case *tir.Binary:
		y, ok := d.(*tir.Binary)
		if !ok || x.Op != y.Op {
			return false
		}
		bufs, offsets := maps.Clone(m.bufs), maps.Clone(m.offsets)
		if m.expr(x.A, y.A) && m.expr(x.B, y.B) {
			return true
		}
		m.bufs, m.offsets = bufs, offsets // undo the first order's bindings
		return commutative[x.Op] && m.expr(x.B, y.A) && m.expr(x.A, y.B)
	case *tir.Not:
		y, ok := d.(*tir.Not)
		return ok && m.expr(x.X, y.X)
	case *tir.Select:
		y, ok := d.(*tir.Select)
		return ok && m.expr(x.Cond, y.Cond) && m.expr(x.T, y.T) && m.expr(x.F, y.F)
	case *tir.Cast:
		y, ok := d.(*tir.Cast)
		return ok && x.Type == y.Type && m.expr(x.X, y.X)
	case *tir.Call:
		y, ok := d.(*tir.Call)
		if !ok || x.Name != y.Name || len(x.Args) != len(y.Args) {
			return false
		}
		for i := range x.Args {
			if !m.expr(x.Args[i], y.Args[i]) {
				return false
			}
		}
		return true
	case *tir.BufferLoad:
		y, ok := d.(*tir.BufferLoad)
		return ok && m.access(x.Buffer, x.Indices, y.Buffer, y.Indices) == nil
	}
	return false
}

// cloneImpl copies the implementation body with fresh loop and iteration
// variables, its buffers replaced by bufs at offsets, blocks renamed.
func cloneImpl(st tir.Stmt, bufs map[*tir.Buffer]*tir.Buffer, offsets map[*tir.Buffer][]tir.Expr, rename func(string) string, env tir.BoundEnv) tir.Stmt {
	vars := map[*tir.Var]tir.Expr{}
	fresh := func(v *tir.Var) *tir.Var {
		n := tir.NewVar(v.Name, v.Type)
		vars[v] = n
		return n
	}
	shift := func(b *tir.Buffer, idx []tir.Expr) []tir.Expr {
		off := offsets[b]
		out := make([]tir.Expr, len(idx))
		for i, e := range idx {
			out[i] = tir.Simplify(tir.Add(off[i], e), env)
		}
		return out
	}
	ex := func(e tir.Expr) tir.Expr {
		return tir.MapExpr(e, func(v *tir.Var) tir.Expr {
			if n, ok := vars[v]; ok {
				return n
			}
			return v
		}, func(b *tir.Buffer, idx []tir.Expr) tir.Expr {
			if nb, ok := bufs[b]; ok {
				return &tir.BufferLoad{Buffer: nb, Indices: shift(b, idx)}
			}
			return &tir.BufferLoad{Buffer: b, Indices: idx}
		})
	}
	exs := func(es []tir.Expr) []tir.Expr {
		out := make([]tir.Expr, len(es))
		for i, e := range es {
			out[i] = ex(e)
		}
		return out
	}
	regions := func(rs []tir.BufferRegion) []tir.BufferRegion {
		out := make([]tir.BufferRegion, len(rs))
		for i, r := range rs {
			out[i] = tir.BufferRegion{Buffer: r.Buffer, Region: make([]tir.Range, len(r.Region))}
			for d, g := range r.Region {
				out[i].Region[d] = tir.Range{Min: ex(g.Min), Extent: ex(g.Extent)}
			}
			if nb, ok := bufs[r.Buffer]; ok {
				out[i].Buffer = nb
				for d := range out[i].Region {
					out[i].Region[d].Min = tir.Simplify(tir.Add(offsets[r.Buffer][d], out[i].Region[d].Min), env)
				}
			}
		}
		return out
	}
	var rec func(s tir.Stmt) tir.Stmt
	rec = func(s tir.Stmt) tir.Stmt {
		switch x := s.(type) {
		case nil:
			return nil
		case *tir.SeqStmt:
			out := &tir.SeqStmt{Loc: x.Loc}
			for _, c := range x.Stmts {
				out.Stmts = append(out.Stmts, rec(c))
			}
			return out
		case *tir.For:
			c := *x
			c.Min, c.Extent = ex(x.Min), ex(x.Extent)
			c.Var = fresh(x.Var)
			c.Body = rec(x.Body)
			return &c
		case *tir.BlockRealize:
			c := *x
			c.Values, c.Predicate = exs(x.Values), ex(x.Predicate)
			b := *x.Block
			b.Name = rename(x.Block.Name)
			b.IterVars = make([]*tir.IterVar, len(x.Block.IterVars))
			for i, iv := range x.Block.IterVars {
				b.IterVars[i] = &tir.IterVar{Var: fresh(iv.Var), Dom: tir.Range{Min: ex(iv.Dom.Min), Extent: ex(iv.Dom.Extent)}, Kind: iv.Kind}
			}
			b.Reads, b.Writes = regions(x.Block.Reads), regions(x.Block.Writes)
			b.Init, b.Body = rec(x.Block.Init), rec(x.Block.Body)
			c.Block = &b
			return &c
		case *tir.BufferStore:
			c := *x
			c.Value, c.Indices = ex(x.Value), exs(x.Indices)
			if nb, ok := bufs[x.Buffer]; ok {
				c.Buffer, c.Indices = nb, shift(x.Buffer, c.Indices)
			}
			return &c
		case *tir.IfThenElse:
			c := *x
			c.Cond, c.Then, c.Else = ex(x.Cond), rec(x.Then), rec(x.Else)
			return &c
		case *tir.LetStmt:
			c := *x
			c.Value = ex(x.Value)
			c.Var = fresh(x.Var)
			c.Body = rec(x.Body)
			return &c
		case *tir.Evaluate:
			c := *x
			c.Value = ex(x.Value)
			return &c
		}
		return s
	}
	return rec(st)
}

// IntrinDot4x4x4F32 is the name of the registered CPU intrinsic: a 4×4×4
// f32 multiply-accumulate C[i, j] += A[i, k] * B[k, j] on 4×4 tiles; its
// implementation runs k and i unrolled around a vectorized j (one 4-lane
// FMA row per step).
const IntrinDot4x4x4F32 = "dot_4x4x4_f32"

const dot4x4x4Desc = `tir.func @dot_4x4x4_f32_desc(%A: buffer<4x4xf32>, %B: buffer<4x4xf32>, inout %C: buffer<4x4xf32>) {
  tir.for %i = 0 to 4 {
    tir.for %j = 0 to 4 {
      tir.for %k = 0 to 4 {
        tir.block "update"(%vi = spatial(0:4, %i), %vj = spatial(0:4, %j), %vk = reduce(0:4, %k)) reads(%C[%vi, %vj], %A[%vi, %vk], %B[%vk, %vj]) writes(%C[%vi, %vj]) annotations {tessera.accumulate} {
          %C[%vi, %vj] = %C[%vi, %vj] + %A[%vi, %vk] * %B[%vk, %vj]
        }
      }
    }
  }
}
`

const dot4x4x4Impl = `tir.func @dot_4x4x4_f32_impl(%A: buffer<4x4xf32>, %B: buffer<4x4xf32>, inout %C: buffer<4x4xf32>) {
  tir.for %k = 0 to 4 unrolled {
    tir.for %i = 0 to 4 unrolled {
      tir.for %j = 0 to 4 vectorized {
        tir.block "update"(%vi = spatial(0:4, %i), %vj = spatial(0:4, %j), %vk = reduce(0:4, %k)) reads(%C[%vi, %vj], %A[%vi, %vk], %B[%vk, %vj]) writes(%C[%vi, %vj]) annotations {tessera.accumulate} {
          %C[%vi, %vj] = %C[%vi, %vj] + %A[%vi, %vk] * %B[%vk, %vj]
        }
      }
    }
  }
}
`

func mustParseFunc(src string) *tir.PrimFunc {
	m, err := tir.ParseString("intrin.tir", src)
	if err != nil {
		panic(err)
	}
	return m.Funcs[0]
}

func init() {
	RegisterTensorIntrin(IntrinDot4x4x4F32, mustParseFunc(dot4x4x4Desc), mustParseFunc(dot4x4x4Impl))
	RegisterInstruction("tensorize", func(s *Schedule, in []any, attrs map[string]any, _ any) ([]any, error) {
		l, err := LoopInput(in, 0)
		if err != nil {
			return nil, err
		}
		name, err := AttrString(attrs, "intrin")
		if err != nil {
			return nil, err
		}
		b, err := s.Tensorize(l, name)
		if err != nil {
			return nil, err
		}
		return []any{b}, nil
	})
	RegisterInstruction("blockize", func(s *Schedule, in []any, _ map[string]any, _ any) ([]any, error) {
		l, err := LoopInput(in, 0)
		if err != nil {
			return nil, err
		}
		b, err := s.Blockize(l)
		if err != nil {
			return nil, err
		}
		return []any{b}, nil
	})
}
