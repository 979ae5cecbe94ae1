package schedule

import (
	"fmt"
	"strings"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// Inlining primitives (TVM's src/tir/schedule/primitive/compute_inline.cc):
// compute_inline substitutes a producer into its consumers (the algorithm
// and its legality checks are ComputeInline in compute_inline.go);
// reverse_compute_inline substitutes a consumer into its producer.

// ComputeInline inlines block b into its consumers (see the function
// ComputeInline for the algorithm and legality).
func (s *Schedule) ComputeInline(b BlockRV) error {
	const prim = "compute_inline"
	if findBlock(s.f.Body, b.Name) == nil {
		return s.Errorf(prim, &b, nil, "no such block in @%s", s.f.Name)
	}
	f := *s.f
	if err := ComputeInline(&f, b.Name); err != nil {
		reason := strings.TrimPrefix(err.Error(), fmt.Sprintf("compute_inline: block '%s' ", b.Name))
		return s.Errorf(prim, &b, nil, "the block %s", reason)
	}
	if err := s.install(prim, &b, nil, f.Body); err != nil {
		return err
	}
	s.Record(prim, []any{b}, nil, nil, nil)
	return nil
}

// ReverseComputeInline inlines consumer block b into the block producing
// its input (TVM's reverse_compute_inline): the producer stores the
// consumer's value, with the load of the intermediate replaced by the
// producer's value, directly into the consumer's output; the consumer, its
// loops and the intermediate buffer's allocation are removed.
//
// Legality (as TVM's): b is a spatial block without predicate or init
// whose body is one store; it reads exactly one intermediate buffer
// (allocated in the function, not a parameter) that exactly one other
// block writes, the producer; it loads that buffer at one index made of
// distinct iteration variables covering every iteration variable of b and
// the whole buffer; the producer is a spatial block without predicate
// whose body is one store at exactly its iteration variables, or at an
// index that maps its constant domain one-to-one onto the buffer
// (reindex's write-back through a fused layout; checked by enumeration,
// storesOnce); no other
// statement reads the intermediate; nothing between the producer and b
// writes what b reads or touches b's output, and b's output is written by
// no other statement.
func (s *Schedule) ReverseComputeInline(b BlockRV) error {
	const prim = "reverse_compute_inline"
	r := findBlock(s.f.Body, b.Name)
	if r == nil {
		return s.Errorf(prim, &b, nil, "no such block in @%s", s.f.Name)
	}
	fail := func(format string, args ...any) error { return s.Errorf(prim, &b, nil, format, args...) }
	blk := r.Block
	for _, iv := range blk.IterVars {
		if iv.Kind == tir.Reduce {
			return fail("the block is a reduction (reduce iteration variable %%%s); only spatial consumers can be inlined", iv.Var.Name)
		}
	}
	if r.Predicate != nil || blk.Init != nil || len(blk.Allocs) > 0 {
		return fail("the block has a predicate, an init or allocations")
	}
	cst, ok := blk.Body.(*tir.BufferStore)
	if !ok {
		return fail("the block's body is not a single store")
	}
	p := positions(s.f.Body)
	// The intermediate: the buffers the block reads that are allocated in
	// the function.
	allocated := map[*tir.Buffer]bool{}
	tir.VisitStmt(s.f.Body, func(x tir.Stmt) bool {
		switch n := x.(type) {
		case *tir.Allocate:
			allocated[n.Buffer] = true
		case *tir.Block:
			for _, a := range n.Allocs {
				allocated[a] = true
			}
		}
		return true
	})
	reads, _ := blockBuffers(blk)
	var mid *tir.Buffer
	for _, x := range sortedBufs(reads) {
		if allocated[x] && !isParam(s.f, x) && x != cst.Buffer {
			if mid != nil {
				return fail("the block reads two intermediate buffers, %%%s and %%%s", mid.Name, x.Name)
			}
			mid = x
		}
	}
	if mid == nil {
		return fail("the block reads no intermediate buffer allocated in @%s", s.f.Name)
	}
	// The producer: the one block writing mid.
	var prod *tir.BlockRealize
	for _, st := range p.order {
		if x := nodeStore(st); x == mid {
			name := p.enclosingBlockName(p.pre[st])
			pr := findBlock(s.f.Body, name)
			if pr == nil || (prod != nil && prod != pr) {
				return s.ErrorAt(prim, &b, nil, p.realizeAt(st), "the intermediate %%%s has more than one producer", mid.Name)
			}
			prod = pr
		}
		if p.inside(st, r) {
			continue
		}
		for _, x := range nodeLoads(st) {
			if x == mid && (prod == nil || !p.inside(st, prod)) {
				return s.ErrorAt(prim, &b, nil, p.realizeAt(st), "%s also reads the intermediate %%%s", describeAt(p, st), mid.Name)
			}
		}
		if x := nodeStore(st); x == cst.Buffer {
			return s.ErrorAt(prim, &b, nil, p.realizeAt(st), "%s also writes the block's output %%%s", describeAt(p, st), x.Name)
		}
	}
	if prod == nil {
		return fail("no block produces the intermediate %%%s", mid.Name)
	}
	if p.pre[prod] > p.pre[r] {
		return fail("the producer %q of %%%s runs after the block", prod.Block.Name, mid.Name)
	}
	pb := prod.Block
	pst, ok := pb.Body.(*tir.BufferStore)
	if !ok || pb.Init != nil || !(s.generalize || onlyDomainGuards(prod)) || len(pb.Allocs) > 0 {
		return fail("the producer %q is not a single store without init, predicate (other than its tail guards) or allocations", pb.Name)
	}
	for _, iv := range pb.IterVars {
		if iv.Kind == tir.Reduce {
			return fail("the producer %q is a reduction", pb.Name)
		}
	}
	selfLoad := false
	tir.VisitExpr(pst.Value, func(e tir.Expr) bool {
		if l, ok := e.(*tir.BufferLoad); ok && l.Buffer == mid {
			selfLoad = true
		}
		return true
	})
	if selfLoad {
		return fail("the producer %q reads the intermediate %%%s it writes", pb.Name, mid.Name)
	}
	// The consumer's load: distinct iteration variables covering all of
	// them and the buffer.
	var load *tir.BufferLoad
	agree := true
	tir.VisitExpr(cst.Value, func(e tir.Expr) bool {
		if l, ok := e.(*tir.BufferLoad); ok && l.Buffer == mid {
			if load != nil && !tir.Equal(load, l) {
				agree = false
			}
			load = l
		}
		return true
	})
	for _, e := range cst.Indices {
		tir.VisitExpr(e, func(x tir.Expr) bool {
			if l, ok := x.(*tir.BufferLoad); ok && l.Buffer == mid {
				agree = false
			}
			return true
		})
	}
	if load == nil || !agree {
		return fail("the block does not load %%%s at one index", mid.Name)
	}
	if len(load.Indices) != len(blk.IterVars) {
		return fail("the block loads %%%s at an index that is not exactly its iteration variables", mid.Name)
	}
	dimOf := map[*tir.Var]int{}
	for d, e := range load.Indices {
		v, ok := e.(*tir.Var)
		_, seen := dimOf[v]
		if !ok || seen {
			return fail("the block loads %%%s at an index that is not exactly its iteration variables", mid.Name)
		}
		dimOf[v] = d
	}
	for _, iv := range blk.IterVars {
		d, ok := dimOf[iv.Var]
		if !ok {
			return fail("the block loads %%%s at an index that is not exactly its iteration variables", mid.Name)
		}
		if !coversDim(iv.Dom, mid.Shape[d]) {
			return fail("the block does not cover %%%s (the domain of %%%s is not the dimension's extent)", mid.Name, iv.Var.Name)
		}
	}
	if why := storesOnce(pb, pst, mid); why != "" {
		return fail("the producer %q %s", pb.Name, why)
	}
	// Dependences between the producer and the block.
	cReads, cWrites := blockBuffers(blk)
	moved := map[*tir.Buffer]bool{}
	for x := range cReads {
		if x != mid {
			moved[x] = true
		}
	}
	for x := range cWrites {
		moved[x] = true
	}
	if x := allocatedOutside(s.f.Body, moved, prod); x != nil {
		return fail("the block accesses %%%s, whose allocation does not enclose the producer %q", x.Name, pb.Name)
	}
	for i := p.end[prod] + 1; i < p.pre[r]; i++ {
		st := p.order[i]
		if x := nodeStore(st); x != nil && (cReads[x] || x == cst.Buffer) {
			return s.ErrorAt(prim, &b, nil, p.realizeAt(st), "%s writes %%%s between the producer and the block", describeAt(p, st), x.Name)
		}
		for _, x := range nodeLoads(st) {
			if x == cst.Buffer {
				return s.ErrorAt(prim, &b, nil, p.realizeAt(st), "%s reads the block's output %%%s between the producer and the block", describeAt(p, st), x.Name)
			}
		}
	}
	// Rewrite: the consumer's iteration variables become the producer's
	// store indices.
	m := map[*tir.Var]tir.Expr{}
	for v, d := range dimOf {
		m[v] = pst.Indices[d]
	}
	value := replaceLoad(cst.Value, mid, pst.Value)
	value = tir.Substitute(value, m)
	idx := make([]tir.Expr, len(cst.Indices))
	for i, e := range cst.Indices {
		idx[i] = tir.Substitute(e, m)
	}
	nb := *pb
	nb.Body = &tir.BufferStore{Buffer: cst.Buffer, Value: value, Indices: idx, Loc: pst.Loc}
	nb.Writes = nil
	for _, w := range blk.Writes {
		nb.Writes = append(nb.Writes, substRegion(w, m))
	}
	nb.Reads = append([]tir.BufferRegion(nil), pb.Reads...)
	have := map[*tir.Buffer]bool{}
	for _, rd := range pb.Reads {
		have[rd.Buffer] = true
	}
	for _, rd := range blk.Reads {
		if rd.Buffer != mid && !have[rd.Buffer] {
			have[rd.Buffer] = true
			nb.Reads = append(nb.Reads, substRegion(rd, m))
		}
	}
	np := *prod
	np.Block = &nb
	body := removeBlock(s.f.Body, r)
	body = tir.Mutate(body, func(x tir.Stmt) (tir.Stmt, bool) {
		switch n := x.(type) {
		case *tir.BlockRealize:
			if n == prod {
				return &np, true
			}
		case *tir.Allocate:
			if n.Buffer == mid {
				return tir.Mutate(n.Body, func(y tir.Stmt) (tir.Stmt, bool) {
					if y == tir.Stmt(prod) {
						return &np, true
					}
					return nil, false
				}), true
			}
		case *tir.Block:
			keep := n.Allocs[:0:0]
			for _, a := range n.Allocs {
				if a != mid {
					keep = append(keep, a)
				}
			}
			if len(keep) != len(n.Allocs) {
				c := *n
				c.Allocs = keep
				c.Init = tir.Mutate(n.Init, func(y tir.Stmt) (tir.Stmt, bool) {
					if y == tir.Stmt(prod) {
						return &np, true
					}
					return nil, false
				})
				c.Body = tir.Mutate(n.Body, func(y tir.Stmt) (tir.Stmt, bool) {
					if y == tir.Stmt(prod) {
						return &np, true
					}
					return nil, false
				})
				return &c, true
			}
		}
		return nil, false
	})
	if err := s.install(prim, &b, nil, body); err != nil {
		return err
	}
	s.Record(prim, []any{b}, nil, nil, nil)
	return nil
}

// replaceLoad replaces every load of buf in e by value.
func replaceLoad(e tir.Expr, buf *tir.Buffer, value tir.Expr) tir.Expr {
	return rewriteExpr(e, func(x tir.Expr) (tir.Expr, bool) {
		if l, ok := x.(*tir.BufferLoad); ok && l.Buffer == buf {
			return value, true
		}
		return nil, false
	})
}

func substRegion(r tir.BufferRegion, m map[*tir.Var]tir.Expr) tir.BufferRegion {
	out := tir.BufferRegion{Buffer: r.Buffer, Region: make([]tir.Range, len(r.Region))}
	for i, rg := range r.Region {
		out.Region[i] = tir.Range{Min: tir.Substitute(rg.Min, m), Extent: tir.Substitute(rg.Extent, m)}
	}
	return out
}

func init() {
	RegisterInstruction("compute_inline", func(s *Schedule, in []any, _ map[string]any, _ any) ([]any, error) {
		b, err := BlockInput(in, 0)
		if err != nil {
			return nil, err
		}
		return nil, s.ComputeInline(b)
	})
	RegisterInstruction("reverse_compute_inline", func(s *Schedule, in []any, _ map[string]any, _ any) ([]any, error) {
		b, err := BlockInput(in, 0)
		if err != nil {
			return nil, err
		}
		return nil, s.ReverseComputeInline(b)
	})
}

// A producer's predicate is accepted (the inlined store runs under it)
// when it only keeps the producer inside its domain (onlyDomainGuards),
// and in any form while ReplayGeneralized replays a trace that inlined
// the unguarded producer at the representative size: there the
// predicate is the generalization's tail and region guards, and the
// producer still writes every element the block read.
//
// onlyDomainGuards reports whether r's predicate (none included) is made
// of tail guards only: conjuncts binding < extent for an iteration
// variable whose domain starts at 0 (a split of a loop its factors do not
// divide, the generalized replay's inferred outer tile), which exclude
// exactly the iterations outside the block's domain. A producer with such
// a predicate still writes every element of its domain.
func onlyDomainGuards(r *tir.BlockRealize) bool {
	for _, c := range conjuncts(r.Predicate) {
		lt, ok := c.(*tir.Binary)
		if !ok || lt.Op != tir.OpLT {
			return false
		}
		guard := false
		for k, iv := range r.Block.IterVars {
			if isZero(iv.Dom.Min) && tir.Equal(tir.Simplify(lt.A, nil), tir.Simplify(r.Values[k], nil)) && tir.Equal(lt.B, iv.Dom.Extent) {
				guard = true
				break
			}
		}
		if !guard {
			return false
		}
	}
	return true
}

// isZero reports whether e is the constant 0.
func isZero(e tir.Expr) bool {
	k, ok := e.(*tir.IntImm)
	return ok && k.Value == 0
}

// storesOnce is why producer block pb's store pst does not write every
// element of mid exactly once over its iteration domain ("" when it
// does): its index is exactly its iteration variables covering mid, or
// (reindex's write-back, a fused layout) a map of its constant domain
// that enumeration (at most maxLayoutElems elements) finds one-to-one
// onto mid.
func storesOnce(pb *tir.Block, pst *tir.BufferStore, mid *tir.Buffer) string {
	trivial := len(pst.Indices) == len(pb.IterVars)
	for i := 0; trivial && i < len(pst.Indices); i++ {
		v, ok := pst.Indices[i].(*tir.Var)
		trivial = ok && v == pb.IterVars[i].Var && coversDim(pb.IterVars[i].Dom, mid.Shape[i])
	}
	if trivial {
		return ""
	}
	const why = "stores %%%s at an index that neither is exactly its iteration variables nor maps its domain one-to-one onto the buffer"
	shape, ok := mid.ConstShape()
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	exts := make([]int64, len(pb.IterVars))
	total := int64(1)
	for i, iv := range pb.IterVars {
		lo, ok1 := constInt(iv.Dom.Min)
		e, ok2 := constInt(iv.Dom.Extent)
		if !ok1 || !ok2 || lo != 0 {
			ok = false
		}
		exts[i], total = e, total*e
	}
	if !ok || total != n || n > maxLayoutElems || len(pst.Indices) != len(shape) {
		return fmt.Sprintf(why, mid.Name)
	}
	seen := make([]bool, n)
	env := map[*tir.Var]int64{}
	for p := int64(0); p < total; p++ {
		r := p
		for i := len(exts) - 1; i >= 0; i-- {
			env[pb.IterVars[i].Var], r = r%exts[i], r/exts[i]
		}
		var off int64
		for d, e := range pst.Indices {
			v, ok := evalIndex(e, env)
			if !ok || v < 0 || v >= shape[d] {
				return fmt.Sprintf(why, mid.Name)
			}
			off = off*shape[d] + v
		}
		if seen[off] {
			return fmt.Sprintf(why, mid.Name)
		}
		seen[off] = true
	}
	return ""
}
