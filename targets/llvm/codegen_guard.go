package llvm

import (
	tir "github.com/tessera-ml/tessera/tensorir"
)

// Loop partitioning of padding guards. A padded convolution's or
// pooling's input access lowers to select(in bounds, X[clamp(e)], pad):
// every element pays for the bound test and the clamped index, and inside
// a vectorized loop the select becomes a masked load whose mask is built
// from per-lane compares of 64-bit indices. Away from the image's border
// the test always passes and the clamp never acts. As TVM's LoopPartition
// pass does, a serial loop x is split into three ranges: the iterations
// before and after [L, U) run the code as it is, and those in [L, U) a
// copy where the select is its loaded branch and the clamp its argument
// (plain, or strided, vector loads).
//
// The facts are comparisons d ≥ 0: each conjunct of a select condition
// whose true branch loads and whose false branch does not (the padding),
// each min(e, K) / max(e, K) of an integer constant in a load index
// (a clamp: e ≤ K / e ≥ K), and each conjunct of a block's predicate (a
// split's guarded tail, dropped like a whole select). With block iteration variables replaced by
// their bindings, d must be affine in the variables of the loops inside
// the partitioned loop x (constant extents, minima bound outside x) and
// in x's, and depend otherwise only on values bound outside x.
//
// A fact belongs to the innermost serial loop around it (of more than one
// iteration) whose variable it uses and that is spatial (a store's index
// uses it: its iterations write different elements): that loop is split.
// Splitting a reduction loop would cut the register tile's accumulation
// into three loops (LLVM then keeps the accumulators in memory), so a
// fact that uses no spatial serial loop belongs to the innermost spatial
// serial loop around it, for whose iterations it holds for all or none,
// or without one to the outermost serial loop around it; a loop with only
// such facts is versioned (the copy runs when they hold on all its
// iterations) rather than split. Code grows threefold per split, so
// partitions do not nest: facts that belong to a loop inside a
// partitioned one keep their guards.
//
// For d = a·x + b(inner, outer), the tightest value over the loops inside
// x is at a corner of their box (each variable at the end its
// coefficient's sign selects); so the fact holds for every inner
// iteration exactly when x ≥ ⌈−b*/a⌉ (a > 0), x ≤ ⌊b*/−a⌋ (a < 0) or
// b* ≥ 0 (a = 0, or x versioned: x is then one more inner loop), b* the
// corner's b, computed at run time before x.

// guardFact is one comparison that must hold for node to be dropped:
// node is a conjunct of a padding select's condition or a clamp's min or
// max; d ≥ 0 is the comparison with the enclosing blocks' iteration
// variables substituted.
type guardFact struct {
	node *tir.Binary
	d    tir.Expr
	// split: the loop is split at the fact's bounds; otherwise versioned.
	split bool
	// lanes: d varies with a vectorized loop's lanes (a masked load's
	// guard, the costly kind).
	lanes bool
}

// loopDom is the range of a loop inside the partitioned one.
type loopDom struct {
	min tir.Expr
	ext int64
}

// partition is what serial loop x is partitioned on: the facts it owns
// and the ranges of the loops inside it that they may use.
type partition struct {
	x     *tir.For
	facts []guardFact
	dom   map[*tir.Var]loopDom
}

// guardFacts returns the partition of serial loop x on the facts that
// belong to it (see above) and are not yet handled by a loop around it,
// or nil when none pays for a copy.
func (g *fgen) guardFacts(x *tir.For) *partition {
	if g.vec != nil || g.m.device || g.partitioning > 0 {
		return nil
	}
	w := &factWalk{g: g, x: x, dom: map[*tir.Var]loopDom{}, bad: map[*tir.Var]bool{}, spatial: map[*tir.Var]bool{}, skip: map[*tir.Binary]bool{}}
	w.stmt(x.Body, []*tir.Var{x.Var}, map[*tir.Var]tir.Expr{})
	// A node shared by several places is dropped only if x owns each.
	var out, laneOrSplit []guardFact
	have := map[*tir.Binary]bool{}
	lanes := false
	for _, f := range w.out {
		if w.skip[f.node] {
			continue
		}
		out = append(out, f)
		have[f.node] = true
		if f.lanes || f.split {
			laneOrSplit = append(laneOrSplit, f)
		}
		lanes = lanes || f.lanes
	}
	// Lane-varying facts pay for a copy by themselves: the copy drops
	// them (unmasked vector loads) and the split facts, and keeps the
	// lane-invariant versioned ones guarded, which would only narrow its
	// range (a depthwise convolution's row guard is one scalar select per
	// row).
	if lanes {
		return &partition{x: x, facts: laneOrSplit, dom: w.dom}
	}
	// Otherwise the copy must drop a whole select; clamps alone do not
	// pay for it.
	for _, sel := range w.selects {
		whole := true
		for _, c := range sel {
			whole = whole && have[c]
		}
		if whole {
			return &partition{x: x, facts: out, dom: w.dom}
		}
	}
	return nil
}

// factWalk collects the facts of loop x's body.
type factWalk struct {
	g   *fgen
	x   *tir.For
	dom map[*tir.Var]loopDom // loops inside x with a usable range
	bad map[*tir.Var]bool    // variables bound inside x without one
	// spatial holds the loop variables that a store's index uses.
	spatial map[*tir.Var]bool
	out     []guardFact
	// skip holds the nodes with an occurrence that x does not own.
	skip map[*tir.Binary]bool
	// selects are the conjuncts of each padding select.
	selects [][]*tir.Binary
	// lane is the variable of the vectorized loop being walked (nil
	// outside one).
	lane *tir.Var
}

// stmt walks st; serial are x and the serial loops of more than one
// iteration between x and st, sub
// the enclosing blocks' iteration variables as loop-variable expressions.
func (w *factWalk) stmt(st tir.Stmt, serial []*tir.Var, sub map[*tir.Var]tir.Expr) {
	switch s := st.(type) {
	case *tir.SeqStmt:
		for _, c := range s.Stmts {
			w.stmt(c, serial, sub)
		}
	case *tir.For:
		ext, ok := s.Extent.(*tir.IntImm)
		if ok && ext.Value >= 1 && !w.usesInner(s.Min) && s.Kind != tir.Parallel && s.Kind != tir.ThreadBinding {
			w.dom[s.Var] = loopDom{min: s.Min, ext: ext.Value}
		} else {
			w.bad[s.Var] = true
		}
		if s.Kind == tir.Vectorized {
			saved := w.lane
			w.lane = s.Var
			defer func() { w.lane = saved }()
		}
		if s.Kind == tir.Serial && (!ok || ext.Value > 1) {
			serial = append(serial[:len(serial):len(serial)], s.Var)
		}
		w.stmt(s.Body, serial, sub)
	case *tir.LetStmt:
		w.bad[s.Var] = true
		w.stmt(s.Body, serial, sub)
	case *tir.IfThenElse:
		w.stmt(s.Then, serial, sub)
		w.stmt(s.Else, serial, sub)
	case *tir.Allocate:
		w.stmt(s.Body, serial, sub)
	case *tir.BlockRealize:
		w.block(s, serial, sub)
	case *tir.BufferStore:
		w.store(s, serial, sub)
	}
}

// block walks a block's init and body with its iteration variables
// substituted.
func (w *factWalk) block(s *tir.BlockRealize, serial []*tir.Var, sub map[*tir.Var]tir.Expr) {
	if s.Block == nil || len(s.Values) != len(s.Block.IterVars) {
		return
	}
	inner := make(map[*tir.Var]tir.Expr, len(sub)+len(s.Values))
	for v, e := range sub {
		inner[v] = e
	}
	for i, iv := range s.Block.IterVars {
		inner[iv.Var] = tir.Substitute(s.Values[i], sub)
	}
	if s.Block.Init != nil {
		w.stmt(s.Block.Init, serial, inner)
	}
	w.stmt(s.Block.Body, serial, inner)
	// After the body: its stores mark the loops they index as spatial,
	// which decides the predicate's owner.
	w.predicate(s.Predicate, serial, sub)
}

// store marks the loops that the index of store s uses as spatial, then
// collects the facts of its value and indices.
func (w *factWalk) store(s *tir.BufferStore, serial []*tir.Var, sub map[*tir.Var]tir.Expr) {
	for _, e := range s.Indices {
		tir.VisitExpr(tir.Substitute(e, sub), func(y tir.Expr) bool {
			if v, ok := y.(*tir.Var); ok {
				w.spatial[v] = true
			}
			return true
		})
	}
	w.expr(s.Value, serial, sub)
	for _, e := range s.Indices {
		w.expr(e, serial, sub)
	}
}

// predicate collects the comparisons of a block's predicate (a split's
// guarded tail: i·8 + lane < 226) as facts: in the copy where they hold
// the block runs unpredicated, its loads and stores unmasked. A serial
// loop over the tiles of a row, such as an elementwise pad's or the
// whole-row S2 loop of pooling and depthwise convolutions, is split at
// its tail tile this way; loop versioning (codegen_version.go) covers
// only predicates that use no loop inside the versioned one.
func (w *factWalk) predicate(c tir.Expr, serial []*tir.Var, sub map[*tir.Var]tir.Expr) {
	if c == nil {
		return
	}
	cs := conjuncts(c)
	for _, b := range cs {
		w.add(b, compareFact(b), serial, sub)
	}
	w.selects = append(w.selects, cs)
}

// predicateHolds reports whether block r runs unpredicated in the code
// being generated: it has no predicate, or the predicate holds there
// (loop versioning's copy, or every conjunct assumed by a partition).
func (g *fgen) predicateHolds(r *tir.BlockRealize) bool {
	return r.Predicate == nil || g.assumed[r] || (len(g.guardAssumed) > 0 && g.allAssumed(r.Predicate))
}

// expr collects the facts of e: padding selects' conjuncts and load
// indices' clamps.
func (w *factWalk) expr(e tir.Expr, serial []*tir.Var, sub map[*tir.Var]tir.Expr) {
	tir.VisitExpr(e, func(y tir.Expr) bool {
		switch z := y.(type) {
		case *tir.Select:
			if isPadding(z) {
				cs := conjuncts(z.Cond)
				for _, c := range cs {
					w.add(c, compareFact(c), serial, sub)
				}
				w.selects = append(w.selects, cs)
			}
		case *tir.BufferLoad:
			for _, ix := range z.Indices {
				tir.VisitExpr(ix, func(i tir.Expr) bool {
					if b, ok := i.(*tir.Binary); ok {
						w.add(b, clampFact(b), serial, sub)
					}
					return true
				})
			}
		}
		return true
	})
}

// add records fact d ≥ 0 of node when it belongs to x.
func (w *factWalk) add(node *tir.Binary, d tir.Expr, serial []*tir.Var, sub map[*tir.Var]tir.Expr) {
	if d == nil || w.g.guardDone[node] {
		return
	}
	d = tir.Substitute(d, sub)
	split, owned := w.owner(d, serial)
	ok := owned && d.DType() == w.x.Var.Type
	tir.VisitExpr(d, func(y tir.Expr) bool {
		v, isVar := y.(*tir.Var)
		switch {
		case !ok || !isVar:
		case w.bad[v]:
			ok = false
		case v == w.x.Var:
			_, constExt := w.x.Extent.(*tir.IntImm)
			ok = affineIn(d, v) && (split || constExt)
		case w.dom[v] != (loopDom{}):
			ok = affineIn(d, v)
		default:
			_, ok = w.g.vars[v]
		}
		return ok
	})
	if !ok || w.never(d, split) {
		w.skip[node] = true
		return
	}
	w.out = append(w.out, guardFact{node: node, d: d, split: split, lanes: w.lane != nil && tir.UsesVar(d, w.lane)})
}

// never reports whether the fact can never hold for all the iterations
// inside x, whatever the values bound outside it: d at the corner of the
// inner loops' box where it is tightest (x's too unless split) is
// negative over the ranges of the loops around x (and of x when split).
// A 7-wide row's tile always reaches the padding, and its copy would
// never run.
func (w *factWalk) never(d tir.Expr, split bool) bool {
	ext, constExt := w.x.Extent.(*tir.IntImm)
	corner := tightest(d, w.dom)
	if !split && constExt {
		tightestAt(d, w.x.Var, loopDom{min: w.x.Min, ext: ext.Value}, corner)
	}
	b := tir.Substitute(d, corner) // uses x only when split
	defer w.g.enterRange(w.x)()
	bd := tir.Bound(b, w.g.ranges)
	return !bd.IsFull() && bd.Hi < 0
}

// tightest maps each variable of doms that d uses to the end of its range
// where d is smallest (d affine in each).
func tightest(d tir.Expr, doms map[*tir.Var]loopDom) map[*tir.Var]tir.Expr {
	corner := map[*tir.Var]tir.Expr{}
	for v, dom := range doms {
		tightestAt(d, v, dom, corner)
	}
	return corner
}

// tightestAt sets corner[v] to the end of v's range dom where d is
// smallest (nothing when d does not use v).
func tightestAt(d tir.Expr, v *tir.Var, dom loopDom, corner map[*tir.Var]tir.Expr) {
	c, _ := tir.LinearCoeff(d, v)
	switch {
	case c > 0:
		corner[v] = dom.min
	case c < 0:
		corner[v] = &tir.Binary{Op: tir.OpAdd, A: dom.min, B: tir.IntOf(v.Type, dom.ext-1)}
	}
}

// loopRange is loop x's range when it is constant and not empty.
func loopRange(x *tir.For) (tir.Interval, bool) {
	lo, ok1 := x.Min.(*tir.IntImm)
	ext, ok2 := x.Extent.(*tir.IntImm)
	if !ok1 || !ok2 || ext.Value < 1 {
		return tir.Interval{}, false
	}
	return tir.Interval{Lo: lo.Value, Hi: lo.Value + ext.Value - 1}, true
}

// enterRange adds loop x's constant range to g.ranges for the code
// generated inside it; the returned function restores g.ranges.
func (g *fgen) enterRange(x *tir.For) func() {
	iv, ok := loopRange(x)
	if !ok {
		return func() {}
	}
	if g.ranges == nil {
		g.ranges = tir.BoundEnv{}
	}
	old, had := g.ranges[x.Var]
	g.ranges[x.Var] = iv
	return func() {
		if had {
			g.ranges[x.Var] = old
		} else {
			delete(g.ranges, x.Var)
		}
	}
}

// owner reports whether x owns fact d ≥ 0 inside serial (x and the serial
// loops inside it around the fact; see above), and if so whether x is
// split on it (else the fact holds for all of x's iterations or none).
func (w *factWalk) owner(d tir.Expr, serial []*tir.Var) (split, owned bool) {
	for i := len(serial) - 1; i >= 0; i-- {
		if w.spatial[serial[i]] && tir.UsesVar(d, serial[i]) {
			return true, i == 0
		}
	}
	for i := len(serial) - 1; i >= 0; i-- {
		if w.spatial[serial[i]] {
			return false, i == 0
		}
	}
	return false, true
}

// usesInner reports whether e uses a variable bound inside x.
func (w *factWalk) usesInner(e tir.Expr) bool {
	inner := false
	tir.VisitExpr(e, func(y tir.Expr) bool {
		if v, ok := y.(*tir.Var); ok && (v == w.x.Var || w.bad[v] || w.dom[v] != (loopDom{})) {
			inner = true
		}
		return !inner
	})
	return inner
}

// isPadding reports whether select s reads memory in its true branch and
// not in its condition or false branch (a guarded load).
func isPadding(s *tir.Select) bool {
	return hasLoad(s.T) && !hasLoad(s.F) && !hasLoad(s.Cond)
}

func hasLoad(e tir.Expr) bool {
	found := false
	tir.VisitExpr(e, func(y tir.Expr) bool {
		_, found = y.(*tir.BufferLoad)
		return !found
	})
	return found
}

// conjuncts splits c at its && operators.
func conjuncts(c tir.Expr) []*tir.Binary {
	b, ok := c.(*tir.Binary)
	if !ok {
		return []*tir.Binary{nil}
	}
	if b.Op == tir.OpAnd && b.A.DType().IsBool() {
		return append(conjuncts(b.A), conjuncts(b.B)...)
	}
	return []*tir.Binary{b}
}

// compareFact is integer comparison c as d ≥ 0 (nil for anything else).
func compareFact(c *tir.Binary) tir.Expr {
	if c == nil || !c.A.DType().IsInt() || c.A.DType().Lanes > 1 {
		return nil
	}
	one := tir.IntOf(c.A.DType(), 1)
	sub := func(a, b tir.Expr) tir.Expr { return &tir.Binary{Op: tir.OpSub, A: a, B: b} }
	switch c.Op {
	case tir.OpGE:
		return sub(c.A, c.B)
	case tir.OpGT:
		return sub(sub(c.A, c.B), one)
	case tir.OpLE:
		return sub(c.B, c.A)
	case tir.OpLT:
		return sub(sub(c.B, c.A), one)
	}
	return nil
}

// clampFact is clamp side b, max(e, K) or min(e, K) of an integer
// constant K, as e − K ≥ 0 or K − e ≥ 0, e with nested clamps dropped
// (nil when b is not one).
func clampFact(b *tir.Binary) tir.Expr {
	if b.Op != tir.OpMax && b.Op != tir.OpMin {
		return nil
	}
	k, ok := b.B.(*tir.IntImm)
	if !ok || !k.Type.IsInt() || k.Type.Lanes > 1 {
		return nil
	}
	e := tir.Unclamped(b.A)
	if b.Op == tir.OpMax {
		return &tir.Binary{Op: tir.OpSub, A: e, B: k}
	}
	return &tir.Binary{Op: tir.OpSub, A: k, B: e}
}

// affineIn reports whether e is c·v + (terms without v) for a constant c.
func affineIn(e tir.Expr, v *tir.Var) bool {
	_, ok := tir.LinearCoeff(e, v)
	return ok
}

// bounds returns [L, U) as expressions over values bound outside x: the
// iterations of x for which every fact holds for all iterations of the
// loops inside x, clamped to x's range.
func (p *partition) bounds() (tir.Expr, tir.Expr) {
	x := p.x
	t := x.Var.Type
	k := func(v int64) tir.Expr { return tir.IntOf(t, v) }
	bin := func(op tir.BinOp, a, b tir.Expr) tir.Expr { return &tir.Binary{Op: op, A: a, B: b} }
	lo := x.Min
	end := bin(tir.OpAdd, x.Min, x.Extent)
	L, U := lo, end
	ext, constExt := x.Extent.(*tir.IntImm)
	for _, f := range p.facts {
		corner := tightest(f.d, p.dom)
		switch {
		case f.split:
			corner[x.Var] = k(0)
		case constExt:
			tightestAt(f.d, x.Var, loopDom{min: x.Min, ext: ext.Value}, corner)
		}
		b := tir.Substitute(f.d, corner)
		a := int64(0) // versioned: x is at its corner in b
		if f.split {
			a, _ = tir.LinearCoeff(f.d, x.Var)
		}
		switch {
		case a > 0: // x ≥ ⌈−b/a⌉
			L = bin(tir.OpMax, L, bin(tir.OpFloorDiv, bin(tir.OpSub, k(a-1), b), k(a)))
		case a < 0: // x ≤ ⌊b/−a⌋
			U = bin(tir.OpMin, U, bin(tir.OpAdd, bin(tir.OpFloorDiv, b, k(-a)), k(1)))
		default: // all or none
			U = &tir.Select{Cond: bin(tir.OpGE, b, k(0)), T: U, F: lo}
		}
	}
	L = bin(tir.OpMin, L, end)
	U = bin(tir.OpMax, U, L)
	return L, U
}

// partitionedLoop generates serial loop x as the three ranges [min, L),
// [L, U) with the facts assumed, and [U, end).
func (g *fgen) partitionedLoop(p *partition) error {
	x, facts := p.x, p.facts
	L, U := p.bounds()
	if g.guardDone == nil {
		g.guardDone, g.guardAssumed = map[*tir.Binary]bool{}, map[*tir.Binary]bool{}
	}
	for _, f := range facts {
		g.guardDone[f.node] = true
	}
	g.partitioning++
	defer func() {
		g.partitioning--
		for _, f := range facts {
			delete(g.guardDone, f.node)
		}
	}()
	assuming := func(body func() error) error {
		for _, f := range facts {
			g.guardAssumed[f.node] = true
		}
		defer func() {
			for _, f := range facts {
				delete(g.guardAssumed, f.node)
			}
		}()
		return body()
	}
	split := false
	for _, f := range facts {
		split = split || f.split
	}
	if !split { // all or none: x once with the facts, or once without
		ok, err := g.cond(&tir.Binary{Op: tir.OpLT, A: L, B: U})
		if err != nil {
			return err
		}
		return g.ifThen(ok, func() error { return assuming(func() error { return g.serialLoop2(x) }) },
			func() error { return g.serialLoop2(x) })
	}
	lv, err := g.cond(L)
	if err != nil {
		return err
	}
	uv, err := g.cond(U)
	if err != nil {
		return err
	}
	lVar, uVar := tir.NewVar(x.Var.Name+"_lo", x.Var.Type), tir.NewVar(x.Var.Name+"_hi", x.Var.Type)
	sub := func(min, end tir.Expr) *tir.For {
		c := *x
		c.Min, c.Extent = min, &tir.Binary{Op: tir.OpSub, A: end, B: min}
		return &c
	}
	end := &tir.Binary{Op: tir.OpAdd, A: x.Min, B: x.Extent}
	return g.bind(lVar, nil, lv, func() error {
		return g.bind(uVar, nil, uv, func() error {
			if err := g.serialLoop2(sub(x.Min, lVar)); err != nil {
				return err
			}
			if err := assuming(func() error { return g.serialLoop2(sub(lVar, uVar)) }); err != nil {
				return err
			}
			return g.serialLoop2(sub(uVar, end))
		})
	})
}

// assumedSelect reports whether every conjunct of s's condition holds in
// the code being generated.
func (g *fgen) assumedSelect(s *tir.Select) bool {
	return len(g.guardAssumed) > 0 && g.allAssumed(s.Cond)
}

// allAssumed reports whether every conjunct of c holds in the code being
// generated.
func (g *fgen) allAssumed(c tir.Expr) bool {
	for _, b := range conjuncts(c) {
		if b == nil || !g.guardAssumed[b] {
			return false
		}
	}
	return true
}

// declamped returns load x with its assumed clamps replaced by their
// arguments (x itself when there are none).
func (g *fgen) declamped(x *tir.BufferLoad) *tir.BufferLoad {
	if len(g.guardAssumed) == 0 {
		return x
	}
	var idx []tir.Expr
	for i, e := range x.Indices {
		n := g.dropAssumedClamps(e)
		if n != e && idx == nil {
			idx = append([]tir.Expr(nil), x.Indices...)
		}
		if idx != nil {
			idx[i] = n
		}
	}
	if idx == nil {
		return x
	}
	return &tir.BufferLoad{Buffer: x.Buffer, Indices: idx}
}

// dropAssumedClamps rebuilds e without its assumed clamp nodes.
func (g *fgen) dropAssumedClamps(e tir.Expr) tir.Expr {
	switch b := e.(type) {
	case *tir.Binary:
		if g.guardAssumed[b] {
			return g.dropAssumedClamps(b.A)
		}
		a, c := g.dropAssumedClamps(b.A), g.dropAssumedClamps(b.B)
		if a != b.A || c != b.B {
			return &tir.Binary{Op: b.Op, A: a, B: c}
		}
	case *tir.Cast:
		if a := g.dropAssumedClamps(b.X); a != b.X {
			return &tir.Cast{Type: b.Type, X: a}
		}
	}
	return e
}
