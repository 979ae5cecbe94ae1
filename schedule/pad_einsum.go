package schedule

import (
	"strconv"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// pad_einsum (TVM's src/tir/schedule/primitive/pad_einsum.cc).
//
// pad_einsum(b, padding) pads the iteration space of an einsum-like block
// b to multiples of padding (one factor per iteration variable, 1 = keep):
// each iteration variable's domain and the loop bound to it grow to
// ceil(extent / factor) * factor. b must be a sum reduction
// O[...] = O[...] + e (with an init) or a spatial store O[...] = e, whose
// loops are exactly its iteration variables (a perfect nest, each bound
// to its own loop from 0, no predicate), and every buffer access indexes
// each dimension with one iteration variable. Each buffer whose dimension
// grows is replaced for b by a padded buffer "<X>_pad" (allocated for the
// function): inputs are copied in by a block "<X>_pad" right before b's
// nest, with zeros in the padding; the output is b's padded buffer,
// copied back (the valid part) by a block "<O>_unpad" right after it.
// Padded reduction iterations must contribute nothing: e must be a
// product of (casts of) loads, one of which is indexed by each padded
// reduce variable (it reads a zero there).
//
// Differences from TVM: inputs produced in the function are copied like
// parameters (TVM pads their producer blocks in place).

// PadEinsum pads block b's iteration space to multiples of padding (TVM's
// pad_einsum).
func (s *Schedule) PadEinsum(b BlockRV, padding []int64) error {
	const prim = "pad_einsum"
	r := findBlock(s.f.Body, b.Name)
	if r == nil {
		return s.Errorf(prim, &b, nil, "no such block in @%s", s.f.Name)
	}
	blk := r.Block
	if len(padding) != len(blk.IterVars) {
		return s.Errorf(prim, &b, nil, "%d padding factors for %d iteration variables", len(padding), len(blk.IterVars))
	}
	for _, p := range padding {
		if p <= 0 {
			return s.Errorf(prim, &b, nil, "padding factors %v: each must be positive", padding)
		}
	}
	if r.Predicate != nil {
		return s.Errorf(prim, &b, nil, "the block has a predicate %s", tir.ExprString(r.Predicate))
	}
	fors, err := s.LoopsOf(b)
	if err != nil {
		return err
	}
	// The nest: the loops directly around b, one per iteration variable.
	if len(fors) < len(blk.IterVars) {
		return s.Errorf(prim, &b, nil, "the block has %d iteration variables but %d loops", len(blk.IterVars), len(fors))
	}
	nest := fors[len(fors)-len(blk.IterVars):]
	loopOf := map[*tir.Var]int{}
	for i, g := range nest {
		loopOf[g.Var] = i
		if i+1 < len(nest) && g.Body != tir.Stmt(nest[i+1]) || i+1 == len(nest) && g.Body != tir.Stmt(r) {
			l := LoopRV{Var: g.Var}
			return s.Errorf(prim, &b, &l, "loop %%%s holds more than the block's nest (not a perfect nest)", g.Var.Name)
		}
	}
	ivOf := map[*tir.Var]int{}
	ext := make([]int64, len(blk.IterVars))
	padded := make([]int64, len(blk.IterVars))
	grows := false
	loopIV := make([]int, len(nest))
	for k, iv := range blk.IterVars {
		v, ok := r.Values[k].(*tir.Var)
		i, isLoop := loopOf[v]
		if !ok || !isLoop {
			return s.Errorf(prim, &b, nil, "%%%s is bound to %s, not to a loop of its own", iv.Var.Name, tir.ExprString(r.Values[k]))
		}
		g := nest[i]
		lo, ok1 := constInt(g.Min)
		e, ok2 := constInt(g.Extent)
		dlo, ok3 := constInt(iv.Dom.Min)
		de, ok4 := constInt(iv.Dom.Extent)
		if !ok1 || !ok2 || !ok3 || !ok4 || lo != 0 || dlo != 0 || e != de {
			l := LoopRV{Var: g.Var}
			return s.Errorf(prim, &b, &l, "loop %%%s and %%%s do not both run over a constant [0, n)", g.Var.Name, iv.Var.Name)
		}
		ivOf[iv.Var] = k
		loopIV[i] = k
		ext[k] = e
		padded[k] = (e + padding[k] - 1) / padding[k] * padding[k]
		grows = grows || padded[k] != e
	}
	if !grows {
		return s.Errorf(prim, &b, nil, "the extents %v are already multiples of %v: nothing to pad", ext, padding)
	}
	// The body: O[idx] = O[idx] + e (reduction with init) or O[idx] = e.
	st, ok := blk.Body.(*tir.BufferStore)
	if !ok {
		return s.Errorf(prim, &b, nil, "the body is not a single store")
	}
	out := st.Buffer
	value := st.Value
	hasReduce := false
	for _, iv := range blk.IterVars {
		hasReduce = hasReduce || iv.Kind == tir.Reduce
	}
	if hasReduce {
		add, ok := st.Value.(*tir.Binary)
		var self *tir.BufferLoad
		if ok && add.Op == tir.OpAdd {
			self, _ = add.A.(*tir.BufferLoad)
		}
		if self == nil || self.Buffer != out || !sameIndices(self.Indices, st.Indices) || blk.Init == nil {
			return s.Errorf(prim, &b, nil, "the block is not a sum reduction %%%s[...] = %%%s[...] + e with an init", out.Name, out.Name)
		}
		value = add.B
	}
	readsOut := false
	tir.VisitExpr(value, func(y tir.Expr) bool {
		if l, ok := y.(*tir.BufferLoad); ok && l.Buffer == out {
			readsOut = true
		}
		return true
	})
	if readsOut {
		return s.Errorf(prim, &b, nil, "the block reads its output %%%s in %s (the padded output does not hold its prior contents)", out.Name, tir.ExprString(value))
	}
	// Every access indexes each dimension with one iteration variable.
	dims := map[*tir.Buffer][]int{} // buffer -> iteration variable per dimension
	var order []*tir.Buffer
	check := func(x *tir.Buffer, idx []tir.Expr) string {
		ks := make([]int, len(idx))
		for d, e := range idx {
			v, ok := e.(*tir.Var)
			k, isIV := ivOf[v]
			if !ok || !isIV {
				return "%" + x.Name + " is indexed by " + tir.ExprString(e) + ", not by an iteration variable"
			}
			ks[d] = k
		}
		if prev, ok := dims[x]; ok {
			for d := range ks {
				if prev[d] != ks[d] {
					return "%" + x.Name + " is accessed at two different index patterns"
				}
			}
		} else {
			dims[x] = ks
			order = append(order, x)
		}
		return ""
	}
	why := check(out, st.Indices)
	visitLoads := func(e tir.Expr) {
		tir.VisitExpr(e, func(y tir.Expr) bool {
			if l, ok := y.(*tir.BufferLoad); ok && why == "" {
				why = check(l.Buffer, l.Indices)
			}
			return true
		})
	}
	visitLoads(st.Value)
	if blk.Init != nil {
		is, ok := blk.Init.(*tir.BufferStore)
		if !ok || is.Buffer != out {
			return s.Errorf(prim, &b, nil, "the init is not a single store to %%%s", out.Name)
		}
		if why == "" {
			why = check(out, is.Indices)
		}
		visitLoads(is.Value)
	}
	if why != "" {
		return s.Errorf(prim, &b, nil, "%s", why)
	}
	for _, x := range order {
		if x != out && isWrittenBy(blk, x) {
			return s.Errorf(prim, &b, nil, "the block writes %%%s besides %%%s", x.Name, out.Name)
		}
	}
	// Padded reduce variables must index a factor of the product.
	leaves, isProduct := productLeaves(value)
	for k, iv := range blk.IterVars {
		if iv.Kind != tir.Reduce || padded[k] == ext[k] {
			continue
		}
		found := false
		for _, l := range leaves {
			for _, dk := range dims[l.Buffer] {
				found = found || dk == k
			}
		}
		if !isProduct || !found {
			return s.Errorf(prim, &b, nil, "padding the reduction %%%s needs the summand %s to be a product with a factor indexed by it (the padding reads zero)", iv.Var.Name, tir.ExprString(value))
		}
	}
	// New buffers.
	used := allBufferNames(s.f)
	blocks := allBlockNames(s.f)
	repl := map[*tir.Buffer]*tir.Buffer{}
	for _, x := range order {
		ks := dims[x]
		shape, ok := x.ConstShape()
		if !ok {
			return s.Errorf(prim, &b, nil, "%%%s has a non-constant shape", x.Name)
		}
		need := false
		for d, k := range ks {
			if shape[d] != ext[k] {
				return s.Errorf(prim, &b, nil, "dimension %d of %%%s (%d) is not the extent %d of %%%s", d, x.Name, shape[d], ext[k], blk.IterVars[k].Var.Name)
			}
			need = need || padded[k] != ext[k]
		}
		if !need {
			continue
		}
		nb := &tir.Buffer{Name: freshName(x.Name+"_pad", used), DType: x.DType, Scope: x.Scope, Loc: x.Loc}
		if nb.Scope == "" {
			nb.Scope = tir.ScopeGlobal
		}
		used[nb.Name] = true
		for _, k := range ks {
			nb.Shape = append(nb.Shape, tir.Int(padded[k]))
		}
		repl[x] = nb
	}
	// The padded einsum: new extents, padded buffers.
	nblk := tir.ReplaceBuffers(blk, repl, nil).(*tir.Block)
	nblk.IterVars = make([]*tir.IterVar, len(blk.IterVars))
	for k, iv := range blk.IterVars {
		nblk.IterVars[k] = &tir.IterVar{Var: iv.Var, Kind: iv.Kind, Dom: tir.Range{Min: iv.Dom.Min, Extent: tir.IntOf(iv.Dom.Extent.DType(), padded[k])}}
	}
	nr := *r
	nr.Block = nblk
	var nestStmt tir.Stmt = &nr
	for i := len(nest) - 1; i >= 0; i-- {
		c := *nest[i]
		c.Extent = tir.IntOf(nest[i].Extent.DType(), padded[loopIV[i]])
		c.Body = nestStmt
		nestStmt = &c
	}
	var before, after []tir.Stmt
	var allocs []*tir.Buffer
	for _, x := range order {
		nb, ok := repl[x]
		if !ok {
			continue
		}
		allocs = append(allocs, nb)
		if x == out {
			name := freshName(x.Name+"_unpad", blocks)
			blocks[name] = true
			// With an init (or a spatial store) the padded output is
			// written before it is read: no copy in.
			after = append(after, padCopy(name, nb, x, false, r.Loc))
			continue
		}
		name := freshName(x.Name+"_pad", blocks)
		blocks[name] = true
		before = append(before, padCopy(name, x, nb, true, r.Loc))
	}
	top := nest[0]
	body := tir.Mutate(s.f.Body, func(x tir.Stmt) (tir.Stmt, bool) {
		if x == tir.Stmt(top) {
			return tir.Seq(append(append(before, nestStmt), after...)...), true
		}
		return nil, false
	})
	for _, a := range allocs {
		body = allocateFor(body, PathTo(body, findBlock(body, b.Name)), a)
	}
	if err := s.install(prim, &b, nil, body); err != nil {
		return err
	}
	s.Record(prim, []any{b}, map[string]any{"padding": padding}, nil, nil)
	return nil
}

func sameIndices(a, b []tir.Expr) bool {
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

func isWrittenBy(blk *tir.Block, x *tir.Buffer) bool {
	for _, w := range blk.Writes {
		if w.Buffer == x {
			return true
		}
	}
	return false
}

// productLeaves returns the loads of a product of (casts of) loads, and
// whether e is one.
func productLeaves(e tir.Expr) ([]*tir.BufferLoad, bool) {
	switch x := e.(type) {
	case *tir.BufferLoad:
		return []*tir.BufferLoad{x}, true
	case *tir.Cast:
		return productLeaves(x.X)
	case *tir.Binary:
		if x.Op != tir.OpMul {
			return nil, false
		}
		a, ok1 := productLeaves(x.A)
		b, ok2 := productLeaves(x.B)
		return append(a, b...), ok1 && ok2
	}
	return nil, false
}

// padCopy is a loop nest over dst's shape with a block copying src into
// dst: with pad, zeros beyond src's shape (src's indices clamped so that
// no load is out of bounds); without, dst is the smaller buffer.
func padCopy(name string, src, dst *tir.Buffer, pad bool, loc tir.Location) tir.Stmt {
	blk := &tir.Block{Name: name, Loc: loc}
	shape, _ := dst.ConstShape()
	srcShape, _ := src.ConstShape()
	idx := make([]tir.Expr, len(shape))
	sidx := make([]tir.Expr, len(shape))
	dreg := make([]tir.Range, len(shape))
	sreg := make([]tir.Range, len(shape))
	loops := make([]*tir.Var, len(shape))
	var cond tir.Expr
	for d, n := range shape {
		v := tir.NewVar("v"+strconv.Itoa(d), tir.DIndex)
		loops[d] = tir.NewVar("ax"+strconv.Itoa(d), tir.DIndex)
		blk.IterVars = append(blk.IterVars, &tir.IterVar{Var: v, Dom: tir.RangeOf(0, n), Kind: tir.Spatial})
		idx[d] = v
		sidx[d] = v
		if pad && srcShape[d] < n {
			sidx[d] = tir.Min(v, tir.Int(srcShape[d]-1))
			cond = and(cond, tir.LT(v, tir.Int(srcShape[d])))
		}
		dreg[d] = tir.Range{Min: v, Extent: tir.Int(1)}
		sreg[d] = tir.Range{Min: sidx[d], Extent: tir.Int(1)}
	}
	var val tir.Expr = &tir.BufferLoad{Buffer: src, Indices: sidx}
	if cond != nil {
		var zero tir.Expr = tir.IntOf(src.DType, 0)
		if src.DType.IsFloat() {
			zero = tir.Float(src.DType, 0)
		}
		val = &tir.Select{Cond: cond, T: val, F: zero}
	}
	blk.Reads = []tir.BufferRegion{{Buffer: src, Region: sreg}}
	blk.Writes = []tir.BufferRegion{{Buffer: dst, Region: dreg}}
	blk.Body = &tir.BufferStore{Buffer: dst, Value: val, Indices: idx, Loc: loc}
	values := make([]tir.Expr, len(loops))
	for d, l := range loops {
		values[d] = l
	}
	var st tir.Stmt = &tir.BlockRealize{Values: values, Block: blk, Loc: loc}
	for d := len(shape) - 1; d >= 0; d-- {
		st = &tir.For{Var: loops[d], Min: tir.Int(0), Extent: tir.Int(shape[d]), Body: st, Loc: loc}
	}
	return st
}

func init() {
	RegisterInstruction("pad_einsum", func(s *Schedule, in []any, attrs map[string]any, _ any) ([]any, error) {
		b, err := BlockInput(in, 0)
		if err != nil {
			return nil, err
		}
		p, err := AttrInts(attrs, "padding")
		if err != nil {
			return nil, err
		}
		return nil, s.PadEinsum(b, p)
	})
}
