package schedule

import (
	"math"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// Reduction primitives (TVM's src/tir/schedule/primitive/reduction.cc):
// decompose_reduction and rfactor.

// loopPath returns the loops on path strictly inside the innermost block
// above its last element (the realize), outermost first.
func loopPath(path []tir.Stmt) []*tir.For {
	var loops []*tir.For
	for _, st := range path[:len(path)-1] {
		switch x := st.(type) {
		case *tir.For:
			loops = append(loops, x)
		case *tir.Block:
			loops = nil
		}
	}
	return loops
}

// reduceLoops are the loop variables the reduce (spatial when !reduce)
// iteration variables of r are bound to.
func boundLoopVars(r *tir.BlockRealize, kind tir.IterKind) map[*tir.Var]bool {
	out := map[*tir.Var]bool{}
	for i, iv := range r.Block.IterVars {
		if iv.Kind != kind {
			continue
		}
		tir.VisitExpr(r.Values[i], func(e tir.Expr) bool {
			if v, ok := e.(*tir.Var); ok {
				out[v] = true
			}
			return true
		})
	}
	return out
}

// initPredicate is the predicate of decompose_reduction's init block:
// pred without its reduction tail guards, the conjuncts a < b where a
// uses only loops below the decomposition (the reduce loops the init does
// not iterate) and is 0 at their first iteration, and b uses none of them
// (a symbolic reduce extent split with an inferred outer factor). Such a
// guard holds at the first reduce iteration whenever the reduction runs
// at all, so the block's own init would run at every point the remaining
// conjuncts allow; over an empty reduction the decomposed init still
// runs. ok is false when another conjunct uses those loops.
func initPredicate(pred tir.Expr, below, zero map[*tir.Var]bool) (tir.Expr, bool) {
	var out tir.Expr
	for _, c := range conjuncts(pred) {
		if !predicateUses(c, below) {
			out = and(out, c)
			continue
		}
		if !reduceTailGuard(c, below, zero) {
			return nil, false
		}
	}
	return out, true
}

// reduceTailGuard reports whether c is a < b with a a sum of loops below
// that start at 0 (zero) times positive constants (0 at their first
// iteration and never less) and b using none of the loops below.
func reduceTailGuard(c tir.Expr, below, zero map[*tir.Var]bool) bool {
	lt, ok := c.(*tir.Binary)
	return ok && lt.Op == tir.OpLT && !predicateUses(lt.B, below) && positiveSum(lt.A, zero)
}

// fromZero is the loops among fs whose variables are in vars and that
// start at 0.
func fromZero(fs []*tir.For, vars map[*tir.Var]bool) map[*tir.Var]bool {
	out := map[*tir.Var]bool{}
	for _, f := range fs {
		if isZero(f.Min) && vars[f.Var] {
			out[f.Var] = true
		}
	}
	return out
}

// positiveSum reports whether e is a sum of variables of vars times
// positive constants.
func positiveSum(e tir.Expr, vars map[*tir.Var]bool) bool {
	switch x := e.(type) {
	case *tir.Var:
		return vars[x]
	case *tir.Binary:
		switch x.Op {
		case tir.OpAdd:
			return positiveSum(x.A, vars) && positiveSum(x.B, vars)
		case tir.OpMul:
			if k, ok := x.B.(*tir.IntImm); ok && k.Value > 0 {
				return positiveSum(x.A, vars)
			}
			if k, ok := x.A.(*tir.IntImm); ok && k.Value > 0 {
				return positiveSum(x.B, vars)
			}
		}
	}
	return false
}

func predicateUses(pred tir.Expr, vars map[*tir.Var]bool) bool {
	found := false
	tir.VisitExpr(pred, func(e tir.Expr) bool {
		if v, ok := e.(*tir.Var); ok && vars[v] {
			found = true
		}
		return true
	})
	return found
}

// copyLoops copies loops (outermost first) keeping those for which keep
// holds, with new variables of the same names; m maps old loop variables
// to the new ones. The copies are returned outermost first.
func copyLoops(loops []*tir.For, keep func(*tir.For) bool, m map[*tir.Var]tir.Expr) []*tir.For {
	var out []*tir.For
	for _, l := range loops {
		if !keep(l) {
			continue
		}
		nv := tir.NewVar(l.Var.Name, l.Var.Type)
		c := &tir.For{Var: nv, Min: tir.Substitute(l.Min, m), Extent: tir.Substitute(l.Extent, m), Kind: l.Kind, Thread: l.Thread, Annotations: copyAttrs(l.Annotations), Loc: l.Loc}
		m[l.Var] = nv
		out = append(out, c)
	}
	return out
}

// nestAround wraps body in loops (outermost first).
func nestAround(loops []*tir.For, body tir.Stmt) tir.Stmt {
	for i := len(loops) - 1; i >= 0; i-- {
		c := *loops[i]
		c.Body = body
		body = &c
	}
	return body
}

// DecomposeReduction splits the init of reduction block b into a block
// "<b>_init" placed right before loop l (an ancestor of b), under copies
// of the loops between l and b that its spatial iteration variables are
// bound to (TVM's decompose_reduction). b keeps its name, loses its init
// and gets the tessera.accumulate annotation. Refused when b has no init
// or no reduce variable, when l is not an ancestor of b in b's scope, when
// a loop above l feeds a reduce variable (the init would rerun inside the
// reduction), or when another statement under l accesses b's outputs.
func (s *Schedule) DecomposeReduction(b BlockRV, l LoopRV) (BlockRV, error) {
	const prim = "decompose_reduction"
	r := findBlock(s.f.Body, b.Name)
	if r == nil {
		return BlockRV{}, s.Errorf(prim, &b, nil, "no such block in @%s", s.f.Name)
	}
	loop := findLoop(s.f.Body, l.Var)
	if loop == nil {
		return BlockRV{}, s.Errorf(prim, &b, &l, "no such loop in @%s", s.f.Name)
	}
	blk := r.Block
	if blk.Init == nil {
		return BlockRV{}, s.Errorf(prim, &b, &l, "the block has no init to decompose")
	}
	loops := loopPath(PathTo(s.f.Body, r))
	at := -1
	for i, f := range loops {
		if f == loop {
			at = i
		}
	}
	if at < 0 {
		return BlockRV{}, s.Errorf(prim, &b, &l, "the loop is not an ancestor of the block in its scope")
	}
	red := boundLoopVars(r, tir.Reduce)
	spat := boundLoopVars(r, tir.Spatial)
	for _, f := range loops[:at] {
		if red[f.Var] {
			return BlockRV{}, s.Errorf(prim, &b, &l, "loop %%%s above the loop feeds a reduce variable; the init would run inside the reduction", f.Var.Name)
		}
	}
	_, writes := blockBuffers(blk)
	p := positions(s.f.Body)
	for i := p.pre[loop]; i <= p.end[loop]; i++ {
		st := p.order[i]
		if p.inside(st, r) {
			continue
		}
		touches := writes[nodeStore(st)]
		for _, x := range nodeLoads(st) {
			touches = touches || writes[x]
		}
		if touches {
			return BlockRV{}, s.ErrorAt(prim, &b, &l, p.realizeAt(st), "%s under the loop also accesses the block's output", describeAt(p, st))
		}
	}
	m := map[*tir.Var]tir.Expr{}
	copies := copyLoops(loops[at:], func(f *tir.For) bool { return spat[f.Var] }, m)
	below := map[*tir.Var]bool{}
	for _, f := range loops[at:] {
		if _, copied := m[f.Var]; !copied {
			below[f.Var] = true
		}
	}
	initPred, ok := initPredicate(r.Predicate, below, fromZero(loops[at:], below))
	if !ok {
		return BlockRV{}, s.Errorf(prim, &b, &l, "the block's predicate %s depends on loops the init does not iterate", tir.ExprString(r.Predicate))
	}
	ib := &tir.Block{Name: freshName(blk.Name+"_init", allBlockNames(s.f)), Loc: blk.Loc}
	var values []tir.Expr
	ivm := map[*tir.Var]tir.Expr{}
	for i, iv := range blk.IterVars {
		if iv.Kind != tir.Spatial {
			continue
		}
		nv := tir.NewVar(iv.Var.Name, iv.Var.Type)
		ivm[iv.Var] = nv
		ib.IterVars = append(ib.IterVars, &tir.IterVar{Var: nv, Dom: iv.Dom, Kind: tir.Spatial})
		values = append(values, tir.Substitute(r.Values[i], m))
	}
	ib.Body = substStmt(blk.Init, ivm, tir.BoundEnv{})
	for _, w := range blk.Writes {
		ib.Writes = append(ib.Writes, substRegion(w, ivm))
	}
	var pred tir.Expr
	if initPred != nil {
		pred = tir.Substitute(initPred, m)
	}
	init := nestAround(copies, &tir.BlockRealize{Values: values, Predicate: pred, Block: ib, Loc: r.Loc})
	ub := *blk
	ub.Init = nil
	ub.Annotations = tir.Attrs{}
	for k, v := range blk.Annotations {
		ub.Annotations[k] = v
	}
	ub.Annotations[tir.AttrAccumulate] = tir.UnitAttr{}
	ur := *r
	ur.Block = &ub
	body := tir.Mutate(s.f.Body, func(st tir.Stmt) (tir.Stmt, bool) {
		if st == tir.Stmt(loop) {
			nl := tir.Mutate(loop, func(y tir.Stmt) (tir.Stmt, bool) {
				if y == tir.Stmt(r) {
					return &ur, true
				}
				return nil, false
			})
			return tir.Seq(init, nl), true
		}
		return nil, false
	})
	if err := s.install(prim, &b, &l, body, l); err != nil {
		return BlockRV{}, err
	}
	out := BlockRV{Name: ib.Name}
	s.Record(prim, []any{b, l}, nil, nil, []any{out})
	return out, nil
}

// reducer matches block body X[idx] = X[idx] op rhs (or rhs op X[idx])
// with init X[idx] = identity of op.
type reducer struct {
	buf   *tir.Buffer
	idx   []tir.Expr
	op    tir.BinOp
	rhs   tir.Expr
	ident tir.Expr
}

func isIdentity(op tir.BinOp, e tir.Expr) bool {
	switch c := e.(type) {
	case *tir.FloatImm:
		v := c.Value
		switch op {
		case tir.OpAdd:
			return v == 0
		case tir.OpMul:
			return v == 1
		case tir.OpMax:
			return math.IsInf(v, -1)
		case tir.OpMin:
			return math.IsInf(v, 1)
		}
	case *tir.IntImm:
		lo, hi := tir.WrapInt(c.Type, math.MinInt64), tir.WrapInt(c.Type, math.MaxInt64)
		if bits := c.Type.Bits(); bits < 64 {
			lo, hi = -(int64(1) << (bits - 1)), int64(1)<<(bits-1)-1
		}
		switch op {
		case tir.OpAdd:
			return c.Value == 0
		case tir.OpMul:
			return c.Value == 1
		case tir.OpMax:
			return c.Value == lo
		case tir.OpMin:
			return c.Value == hi
		}
	}
	return false
}

func matchReducer(blk *tir.Block) (*reducer, string) {
	st, ok := blk.Body.(*tir.BufferStore)
	if !ok {
		return nil, "the block's body is not a single store"
	}
	in, ok := blk.Init.(*tir.BufferStore)
	if !ok || in.Buffer != st.Buffer || !equalExprs(in.Indices, st.Indices) {
		return nil, "the block's init is not a single store of the element it reduces into"
	}
	bin, ok := st.Value.(*tir.Binary)
	if !ok || (bin.Op != tir.OpAdd && bin.Op != tir.OpMul && bin.Op != tir.OpMin && bin.Op != tir.OpMax) {
		return nil, "the block's update is not X = X + e, X * e, min(X, e) or max(X, e)"
	}
	self := &tir.BufferLoad{Buffer: st.Buffer, Indices: st.Indices}
	var rhs tir.Expr
	switch {
	case tir.Equal(bin.A, self):
		rhs = bin.B
	case tir.Equal(bin.B, self):
		rhs = bin.A
	default:
		return nil, "the block's update is not X = X + e, X * e, min(X, e) or max(X, e)"
	}
	reads := false
	tir.VisitExpr(rhs, func(e tir.Expr) bool {
		if l, ok := e.(*tir.BufferLoad); ok && l.Buffer == st.Buffer {
			reads = true
		}
		return true
	})
	if reads {
		return nil, "the reduced value reads the reduction's buffer"
	}
	if !isIdentity(bin.Op, in.Value) {
		return nil, "the init value " + tir.ExprString(in.Value) + " is not the identity of " + bin.Op.String()
	}
	return &reducer{buf: st.Buffer, idx: st.Indices, op: bin.Op, rhs: rhs, ident: in.Value}, ""
}

func equalExprs(a, b []tir.Expr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !tir.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// RFactor factors the reduction over loop l (TVM's rfactor): a new block
// "<b>_rf" in b's loops computes partial results into a new buffer
// "<X>_rf" with l's iteration as an extra spatial dimension at
// factorAxis (negative counts from the end, as in TVM), and block b, under
// copies of its spatial loops and of l, reduces the partial results into
// X. Returns the rf block. b must be the only block under l, reduce with
// X = X op e (op +, *, min, max; init the identity of op), and l must feed
// a reduce variable of b and lie in b's own loop nest (the loops holding
// only b); the loops above that nest must not feed reduce variables.
func (s *Schedule) RFactor(l LoopRV, factorAxis int) (BlockRV, error) {
	const prim = "rfactor"
	loop := findLoop(s.f.Body, l.Var)
	if loop == nil {
		return BlockRV{}, s.Errorf(prim, nil, &l, "no such loop in @%s", s.f.Name)
	}
	blocks := BlocksUnder(loop)
	if len(blocks) != 1 {
		return BlockRV{}, s.Errorf(prim, nil, &l, "the loop holds %d blocks, want exactly one", len(blocks))
	}
	r := blocks[0]
	blk := r.Block
	b := BlockRV{Name: blk.Name}
	red := boundLoopVars(r, tir.Reduce)
	if !red[loop.Var] {
		return BlockRV{}, s.Errorf(prim, &b, &l, "the loop does not feed a reduce variable of the block")
	}
	if blk.Init == nil {
		return BlockRV{}, s.Errorf(prim, &b, &l, "the block has no init (an accumulating block cannot be factored)")
	}
	rd, why := matchReducer(blk)
	if why != "" {
		return BlockRV{}, s.Errorf(prim, &b, &l, "%s", why)
	}
	path := PathTo(s.f.Body, r)
	loops := loopPath(path)
	// The block's own nest: the loops whose body is exactly the next one.
	top := len(loops)
	child := tir.Stmt(r)
	for i := len(loops) - 1; i >= 0 && loops[i].Body == child; i-- {
		top, child = i, loops[i]
	}
	in := -1
	for i := top; i < len(loops); i++ {
		if loops[i] == loop {
			in = i
		}
	}
	if in < 0 {
		return BlockRV{}, s.Errorf(prim, &b, &l, "the loop is not in the block's own loop nest (it holds other statements)")
	}
	for _, f := range loops[:top] {
		if red[f.Var] {
			return BlockRV{}, s.Errorf(prim, &b, &l, "loop %%%s, which holds other statements, feeds a reduce variable", f.Var.Name)
		}
	}
	for _, f := range loops[top:] {
		if red[f.Var] {
			if _, ok := constInt(f.Min); !ok {
				return BlockRV{}, s.Errorf(prim, &b, &l, "reduction loop %%%s has a bound that is not a constant", f.Var.Name)
			}
			if _, ok := constInt(f.Extent); !ok {
				return BlockRV{}, s.Errorf(prim, &b, &l, "reduction loop %%%s has a bound that is not a constant", f.Var.Name)
			}
		}
	}
	nd := len(rd.buf.Shape)
	axis := factorAxis
	if axis < 0 {
		axis += nd + 1
	}
	if axis < 0 || axis > nd {
		return BlockRV{}, s.Errorf(prim, &b, &l, "factor axis %d is out of range for %%%s of rank %d", factorAxis, rd.buf.Name, nd)
	}
	// The rf buffer.
	rf := &tir.Buffer{Name: freshName(rd.buf.Name+"_rf", allBufferNames(s.f)), DType: rd.buf.DType, Scope: rd.buf.Scope, Loc: rd.buf.Loc}
	rf.Shape = append(append(append([]tir.Expr(nil), rd.buf.Shape[:axis]...), loop.Extent), rd.buf.Shape[axis:]...)
	names := allBlockNames(s.f)
	// The rf block: new spatial variables, one variable per reduction loop.
	rb := &tir.Block{Name: freshName(blk.Name+"_rf", names), Loc: blk.Loc, Annotations: copyAttrs(blk.Annotations)}
	ivm := map[*tir.Var]tir.Expr{}
	var values []tir.Expr
	for i, iv := range blk.IterVars {
		if iv.Kind != tir.Spatial {
			continue
		}
		nv := tir.NewVar(iv.Var.Name, iv.Var.Type)
		ivm[iv.Var] = nv
		rb.IterVars = append(rb.IterVars, &tir.IterVar{Var: nv, Dom: iv.Dom, Kind: tir.Spatial})
		values = append(values, r.Values[i])
	}
	loopIV := map[*tir.Var]tir.Expr{}
	var rfVar *tir.Var
	for _, f := range loops[top:] {
		if !red[f.Var] {
			continue
		}
		kind := tir.Reduce
		if f == loop {
			kind = tir.Spatial
		}
		nv := tir.NewVar("v"+f.Var.Name, f.Var.Type)
		if f == loop {
			rfVar = nv
		}
		loopIV[f.Var] = nv
		rb.IterVars = append(rb.IterVars, &tir.IterVar{Var: nv, Dom: tir.Range{Min: f.Min, Extent: f.Extent}, Kind: kind})
		values = append(values, f.Var)
	}
	for i, iv := range blk.IterVars {
		if iv.Kind == tir.Reduce {
			ivm[iv.Var] = tir.Substitute(r.Values[i], loopIV)
		}
	}
	env := tir.BoundEnv{}
	for _, iv := range rb.IterVars {
		lo, ok1 := constInt(iv.Dom.Min)
		ext, ok2 := constInt(iv.Dom.Extent)
		if ok1 && ok2 && ext > 0 {
			env[iv.Var] = tir.Interval{Lo: lo, Hi: lo + ext - 1}
		}
	}
	rfIdx := func(idx []tir.Expr, m map[*tir.Var]tir.Expr, v *tir.Var) []tir.Expr {
		out := make([]tir.Expr, 0, len(idx)+1)
		for _, e := range idx[:axis] {
			out = append(out, tir.Substitute(e, m))
		}
		out = append(out, tir.Simplify(tir.Sub(v, loop.Min), env))
		for _, e := range idx[axis:] {
			out = append(out, tir.Substitute(e, m))
		}
		return out
	}
	ridx := rfIdx(rd.idx, ivm, rfVar)
	self := &tir.BufferLoad{Buffer: rf, Indices: ridx}
	hasReduce := false
	for _, iv := range rb.IterVars {
		hasReduce = hasReduce || iv.Kind == tir.Reduce
	}
	if hasReduce {
		rb.Init = &tir.BufferStore{Buffer: rf, Value: rd.ident, Indices: ridx, Loc: blk.Init.Location()}
		rb.Body = &tir.BufferStore{Buffer: rf, Value: tir.Bin(rd.op, self, substExpr(rd.rhs, ivm, env)), Indices: ridx, Loc: blk.Body.Location()}
	} else {
		// The factored loop was the only reduction: each partial result is
		// one value (identity op e = e).
		rb.Body = &tir.BufferStore{Buffer: rf, Value: substExpr(rd.rhs, ivm, env), Indices: ridx, Loc: blk.Body.Location()}
	}
	point := func(idx []tir.Expr) []tir.Range {
		out := make([]tir.Range, len(idx))
		for i, e := range idx {
			out[i] = tir.Range{Min: e, Extent: tir.IntOf(e.DType(), 1)}
		}
		return out
	}
	for _, rg := range blk.Reads {
		if rg.Buffer == rd.buf {
			continue
		}
		nr := substRegion(rg, ivm)
		for i := range nr.Region {
			nr.Region[i] = tir.Range{Min: tir.Simplify(nr.Region[i].Min, env), Extent: nr.Region[i].Extent}
		}
		rb.Reads = append(rb.Reads, nr)
	}
	rb.Writes = []tir.BufferRegion{{Buffer: rf, Region: point(ridx)}}
	rfr := &tir.BlockRealize{Values: values, Predicate: r.Predicate, Block: rb, Loc: r.Loc}
	// The write-back block: b under copies of its spatial loops and l.
	spat := boundLoopVars(r, tir.Spatial)
	m := map[*tir.Var]tir.Expr{}
	copies := copyLoops(loops[top:], func(f *tir.For) bool { return spat[f.Var] || f == loop }, m)
	for _, c := range copies {
		if m[loop.Var] == tir.Expr(c.Var) {
			// The factored loop is a reduction again: serial.
			c.Kind, c.Thread, c.Annotations = tir.Serial, "", nil
		}
	}
	uncopied := map[*tir.Var]bool{}
	for _, f := range loops[top:] {
		if _, ok := m[f.Var]; !ok {
			uncopied[f.Var] = true
		}
	}
	if r.Predicate != nil && predicateUses(r.Predicate, uncopied) {
		return BlockRV{}, s.Errorf(prim, &b, &l, "the block's predicate %s depends on reduction loops other than the loop", tir.ExprString(r.Predicate))
	}
	wb := *blk
	wb.Annotations = copyAttrs(blk.Annotations)
	wv := tir.NewVar("v"+loop.Var.Name, loop.Var.Type)
	wb.IterVars = nil
	var wvals []tir.Expr
	for i, iv := range blk.IterVars {
		if iv.Kind == tir.Spatial {
			wb.IterVars = append(wb.IterVars, iv)
			wvals = append(wvals, tir.Substitute(r.Values[i], m))
		}
	}
	wb.IterVars = append(wb.IterVars, &tir.IterVar{Var: wv, Dom: tir.Range{Min: loop.Min, Extent: loop.Extent}, Kind: tir.Reduce})
	wvals = append(wvals, m[loop.Var])
	widx := rfIdx(rd.idx, nil, wv)
	wself := &tir.BufferLoad{Buffer: rd.buf, Indices: rd.idx}
	wb.Body = &tir.BufferStore{Buffer: rd.buf, Value: tir.Bin(rd.op, wself, &tir.BufferLoad{Buffer: rf, Indices: widx}), Indices: rd.idx, Loc: blk.Body.Location()}
	wb.Reads = []tir.BufferRegion{{Buffer: rf, Region: point(widx)}}
	var wpred tir.Expr
	if r.Predicate != nil {
		wpred = tir.Substitute(r.Predicate, m)
	}
	wbr := &tir.BlockRealize{Values: wvals, Predicate: wpred, Block: &wb, Loc: r.Loc}
	wnest := nestAround(copies, wbr)
	topStmt := tir.Stmt(r)
	if top < len(loops) {
		topStmt = loops[top]
	}
	body := tir.Mutate(s.f.Body, func(st tir.Stmt) (tir.Stmt, bool) {
		if st == topStmt {
			rnest := tir.Mutate(st, func(y tir.Stmt) (tir.Stmt, bool) {
				if y == tir.Stmt(r) {
					return rfr, true
				}
				return nil, false
			})
			return tir.Seq(rnest, wnest), true
		}
		return nil, false
	})
	body = allocateFor(body, PathTo(body, rfr), rf)
	if err := s.install(prim, &b, &l, body, l); err != nil {
		return BlockRV{}, err
	}
	out := BlockRV{Name: rb.Name}
	s.Record(prim, []any{l}, map[string]any{"factor_axis": int64(factorAxis)}, nil, []any{out})
	return out, nil
}

func substExpr(e tir.Expr, m map[*tir.Var]tir.Expr, env tir.BoundEnv) tir.Expr {
	n := tir.Substitute(e, m)
	if n == e {
		return e
	}
	return simplifyIndices(n, env)
}

// simplifyIndices simplifies the index expressions of the loads in e
// (not the value arithmetic, which keeps its exact form).
func simplifyIndices(e tir.Expr, env tir.BoundEnv) tir.Expr {
	switch x := e.(type) {
	case *tir.BufferLoad:
		idx := make([]tir.Expr, len(x.Indices))
		for i, a := range x.Indices {
			idx[i] = tir.Simplify(a, env)
		}
		return &tir.BufferLoad{Buffer: x.Buffer, Indices: idx}
	case *tir.Binary:
		return &tir.Binary{Op: x.Op, A: simplifyIndices(x.A, env), B: simplifyIndices(x.B, env)}
	case *tir.Not:
		return &tir.Not{X: simplifyIndices(x.X, env)}
	case *tir.Select:
		return &tir.Select{Cond: simplifyIndices(x.Cond, env), T: simplifyIndices(x.T, env), F: simplifyIndices(x.F, env)}
	case *tir.Cast:
		return &tir.Cast{Type: x.Type, X: simplifyIndices(x.X, env)}
	case *tir.Call:
		args := make([]tir.Expr, len(x.Args))
		for i, a := range x.Args {
			args[i] = simplifyIndices(a, env)
		}
		return &tir.Call{Name: x.Name, Args: args}
	}
	return e
}

func init() {
	RegisterInstruction("decompose_reduction", func(s *Schedule, in []any, _ map[string]any, _ any) ([]any, error) {
		b, err := BlockInput(in, 0)
		if err != nil {
			return nil, err
		}
		l, err := LoopInput(in, 1)
		if err != nil {
			return nil, err
		}
		out, err := s.DecomposeReduction(b, l)
		if err != nil {
			return nil, err
		}
		return []any{out}, nil
	})
	RegisterInstruction("rfactor", func(s *Schedule, in []any, attrs map[string]any, _ any) ([]any, error) {
		l, err := LoopInput(in, 0)
		if err != nil {
			return nil, err
		}
		axis, err := AttrInt(attrs, "factor_axis")
		if err != nil {
			return nil, err
		}
		out, err := s.RFactor(l, int(axis))
		if err != nil {
			return nil, err
		}
		return []any{out}, nil
	})
}
