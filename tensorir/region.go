package tensorir

// Symbolic region analysis (TVM's arith::EvalSet over loop domains, as
// used by compute_at, cache_read/cache_write and CompactBufferAllocation):
// integer index expressions are evaluated to symbolic intervals in which
// the relaxed variables (loops below a point) range over their domains
// and every other variable (loops above the point) stays symbolic.

// SymRange is the inclusive symbolic interval [Lo, Hi].
type SymRange struct{ Lo, Hi Expr }

// RelaxEnv evaluates integer expressions to symbolic intervals: relaxed
// variables range over their interval, every other variable is a point.
type RelaxEnv struct {
	Fixed    BoundEnv          // constant bounds of the fixed variables
	Relaxed  map[*Var]SymRange // relaxed variables
	Opaque   map[*Var]bool     // variables that cannot be analysed (lets of loads)
	Bindings map[*Var]Expr     // block iteration variables → bindings
}

// NewRelaxEnv is an environment in which the variables of env are fixed
// with those constant bounds and no variable is relaxed yet.
func NewRelaxEnv(env BoundEnv) *RelaxEnv {
	return &RelaxEnv{Fixed: env, Relaxed: map[*Var]SymRange{}, Opaque: map[*Var]bool{}, Bindings: map[*Var]Expr{}}
}

func (r *RelaxEnv) simp(e Expr) Expr { return Simplify(e, r.Fixed) }

// ProveLE reports whether a <= b for every value of the fixed variables.
func ProveLE(a, b Expr, env BoundEnv) bool {
	d := Simplify(Sub(b, a), env)
	bd := Bound(d, env)
	return !bd.IsFull() && bd.Lo >= 0
}

// SymMin is min(a, b), resolved when one side provably bounds the other.
func SymMin(a, b Expr, env BoundEnv) Expr {
	switch {
	case Equal(a, b), ProveLE(a, b, env):
		return a
	case ProveLE(b, a, env):
		return b
	}
	return Simplify(Min(a, b), env)
}

// SymMax is max(a, b), resolved when one side provably bounds the other.
func SymMax(a, b Expr, env BoundEnv) Expr {
	switch {
	case Equal(a, b), ProveLE(b, a, env):
		return a
	case ProveLE(a, b, env):
		return b
	}
	return Simplify(Max(a, b), env)
}

// mentions reports whether e uses a relaxed (or unanalysable)
// variable, and whether it loads memory.
func (r *RelaxEnv) mentions(e Expr) (relaxed, bad bool) {
	VisitExpr(e, func(x Expr) bool {
		switch v := x.(type) {
		case *Var:
			if _, ok := r.Relaxed[v]; ok {
				relaxed = true
			}
			if r.Opaque[v] {
				bad = true
			}
		case *BufferLoad:
			bad = true
		}
		return true
	})
	return
}

// Set is the interval of e (block iteration variables already
// substituted); false when e cannot be bounded.
func (r *RelaxEnv) Set(e Expr) (SymRange, bool) {
	relaxed, bad := r.mentions(e)
	if bad {
		return SymRange{}, false
	}
	if !relaxed {
		p := r.simp(e)
		return SymRange{p, p}, true
	}
	switch x := e.(type) {
	case *Var:
		return r.Relaxed[x], true
	case *Binary:
		a, ok1 := r.Set(x.A)
		b, ok2 := r.Set(x.B)
		if !ok1 || !ok2 {
			return SymRange{}, false
		}
		switch x.Op {
		case OpAdd:
			return SymRange{r.simp(Add(a.Lo, b.Lo)), r.simp(Add(a.Hi, b.Hi))}, true
		case OpSub:
			return SymRange{r.simp(Sub(a.Lo, b.Hi)), r.simp(Sub(a.Hi, b.Lo))}, true
		case OpMul:
			if c, ok := constInt(b.Lo); ok && Equal(b.Lo, b.Hi) {
				if c >= 0 {
					return SymRange{r.simp(Mul(a.Lo, b.Lo)), r.simp(Mul(a.Hi, b.Lo))}, true
				}
				return SymRange{r.simp(Mul(a.Hi, b.Lo)), r.simp(Mul(a.Lo, b.Lo))}, true
			}
			if c, ok := constInt(a.Lo); ok && Equal(a.Lo, a.Hi) {
				if c >= 0 {
					return SymRange{r.simp(Mul(a.Lo, b.Lo)), r.simp(Mul(a.Lo, b.Hi))}, true
				}
				return SymRange{r.simp(Mul(a.Lo, b.Hi)), r.simp(Mul(a.Lo, b.Lo))}, true
			}
			if Equal(b.Lo, b.Hi) {
				return r.monotone(a, b.Lo, Mul), true
			}
			if Equal(a.Lo, a.Hi) {
				return r.monotone(b, a.Lo, func(x, p Expr) Expr { return Mul(p, x) }), true
			}
		case OpFloorDiv:
			if c, ok := constInt(b.Lo); ok && c > 0 && Equal(b.Lo, b.Hi) {
				return SymRange{r.simp(FloorDiv(a.Lo, b.Lo)), r.simp(FloorDiv(a.Hi, b.Lo))}, true
			}
			if _, ok := constInt(b.Lo); !ok && Equal(b.Lo, b.Hi) {
				return r.monotone(a, b.Lo, FloorDiv), true
			}
		case OpFloorMod:
			if c, ok := constInt(b.Lo); ok && c > 0 && Equal(b.Lo, b.Hi) {
				return SymRange{Int(0), Int(c - 1)}, true
			}
			if _, ok := constInt(b.Lo); !ok && Equal(b.Lo, b.Hi) {
				// floormod by a symbolic divisor p has p's sign: it lies
				// in [0, p-1] for p > 0 and in [p+1, 0] for p < 0.
				p, t := b.Lo, b.Lo.DType()
				return SymRange{SymMin(IntOf(t, 0), r.simp(Add(p, IntOf(t, 1))), r.Fixed), SymMax(IntOf(t, 0), r.simp(Sub(p, IntOf(t, 1))), r.Fixed)}, true
			}
		case OpMin:
			return SymRange{SymMin(a.Lo, b.Lo, r.Fixed), SymMin(a.Hi, b.Hi, r.Fixed)}, true
		case OpMax:
			return SymRange{SymMax(a.Lo, b.Lo, r.Fixed), SymMax(a.Hi, b.Hi, r.Fixed)}, true
		}
	case *Select:
		a, ok1 := r.Set(x.T)
		b, ok2 := r.Set(x.F)
		if ok1 && ok2 {
			return SymRange{SymMin(a.Lo, b.Lo, r.Fixed), SymMax(a.Hi, b.Hi, r.Fixed)}, true
		}
	}
	return SymRange{}, false
}

// monotone is the interval of op(x, p) for x in a and a fixed symbolic p
// (op is x*p or floordiv(x, p)), which is monotone in x for each p: its
// ends are op(a.Lo, p) and op(a.Hi, p), in an order that p's sign (when
// the fixed bounds prove it) decides, else their min and max.
func (r *RelaxEnv) monotone(a SymRange, p Expr, op func(x, p Expr) Expr) SymRange {
	lo, hi := r.simp(op(a.Lo, p)), r.simp(op(a.Hi, p))
	switch bp := Bound(p, r.Fixed); {
	case !bp.IsFull() && bp.Lo >= 0:
		return SymRange{lo, hi}
	case !bp.IsFull() && bp.Hi <= 0:
		return SymRange{hi, lo}
	}
	return SymRange{SymMin(lo, hi, r.Fixed), SymMax(lo, hi, r.Fixed)}
}

// UnionRange is the hull of a and b.
func UnionRange(a, b SymRange, env BoundEnv) SymRange {
	return SymRange{SymMin(a.Lo, b.Lo, env), SymMax(a.Hi, b.Hi, env)}
}

// AccessRegion is the union of the accesses of one buffer.
type AccessRegion struct {
	Dims []SymRange
	OK   bool // false: some access could not be bounded
	N    int  // number of accesses
}

// CollectAccesses walks st (everything below the fixed loops): loops are
// relaxed to their ranges, block iteration variables replaced by their
// bindings, and every load of a buffer in bufs (every store when stores
// is set) widens that buffer's region.
func CollectAccesses(st Stmt, bufs map[*Buffer]bool, stores bool, r *RelaxEnv) map[*Buffer]*AccessRegion {
	return CollectAccessesIn(st, nil, bufs, stores, r)
}

// CollectAccessesIn is CollectAccesses counting only the accesses inside
// within (nil: everywhere).
func CollectAccessesIn(st, within Stmt, bufs map[*Buffer]bool, stores bool, r *RelaxEnv) map[*Buffer]*AccessRegion {
	out := map[*Buffer]*AccessRegion{}
	in := within == nil
	add := func(b *Buffer, idx []Expr) {
		if !bufs[b] || !in {
			return
		}
		a := out[b]
		if a == nil {
			a = &AccessRegion{OK: true}
			out[b] = a
		}
		a.N++
		if !a.OK {
			return
		}
		dims := make([]SymRange, len(idx))
		for i, e := range idx {
			d, ok := r.Set(Substitute(e, r.Bindings))
			if !ok {
				a.OK = false
				return
			}
			dims[i] = d
		}
		if a.Dims == nil {
			a.Dims = dims
			return
		}
		for i := range dims {
			a.Dims[i] = UnionRange(a.Dims[i], dims[i], r.Fixed)
		}
	}
	loads := func(es ...Expr) {
		if stores {
			return
		}
		for _, e := range es {
			VisitExpr(e, func(x Expr) bool {
				if l, ok := x.(*BufferLoad); ok {
					add(l.Buffer, l.Indices)
				}
				return true
			})
		}
	}
	var walk func(s Stmt)
	walk = func(s Stmt) {
		if s != nil && s == within {
			in = true
			defer func() { in = false }()
		}
		switch x := s.(type) {
		case nil:
			return
		case *For:
			loads(x.Min, x.Extent)
			lo, ok1 := r.Set(Substitute(x.Min, r.Bindings))
			hi, ok2 := r.Set(Substitute(Sub(Add(x.Min, x.Extent), Int(1)), r.Bindings))
			if ok1 && ok2 {
				r.Relaxed[x.Var] = SymRange{lo.Lo, hi.Hi}
			} else {
				r.Opaque[x.Var] = true
			}
			walk(x.Body)
			delete(r.Relaxed, x.Var)
			delete(r.Opaque, x.Var)
			return
		case *BlockRealize:
			loads(x.Values...)
			loads(x.Predicate)
			if x.Block != nil {
				for i, iv := range x.Block.IterVars {
					r.Bindings[iv.Var] = Substitute(x.Values[i], r.Bindings)
				}
				walk(x.Block.Init)
				walk(x.Block.Body)
				for _, iv := range x.Block.IterVars {
					delete(r.Bindings, iv.Var)
				}
			}
			return
		case *BufferStore:
			loads(x.Value)
			loads(x.Indices...)
			if stores {
				add(x.Buffer, x.Indices)
			}
		case *IfThenElse:
			loads(x.Cond)
		case *LetStmt:
			loads(x.Value)
			if _, bad := r.mentions(x.Value); bad || !x.Value.DType().IsInt() {
				r.Opaque[x.Var] = true
			} else {
				r.Bindings[x.Var] = Substitute(x.Value, r.Bindings)
			}
		case *Evaluate:
			loads(x.Value)
		}
		for _, c := range SubStmts(s) {
			walk(c)
		}
	}
	walk(st)
	return out
}

// SubStmts are the statements directly below st (a realize's block, a
// block's init and body).
func SubStmts(st Stmt) []Stmt {
	var out []Stmt
	add := func(c Stmt) {
		if c != nil {
			out = append(out, c)
		}
	}
	switch x := st.(type) {
	case *SeqStmt:
		out = append(out, x.Stmts...)
	case *For:
		add(x.Body)
	case *BlockRealize:
		if x.Block != nil {
			add(x.Block)
		}
	case *Block:
		add(x.Init)
		add(x.Body)
	case *Allocate:
		add(x.Body)
	case *IfThenElse:
		add(x.Then)
		add(x.Else)
	case *LetStmt:
		add(x.Body)
	case *AllocateConst:
		add(x.Body)
	case *ArenaAlloc:
		add(x.Body)
	}
	return out
}

// constInt returns e's value when it is an integer constant.
func constInt(e Expr) (int64, bool) {
	if c, ok := e.(*IntImm); ok {
		return c.Value, true
	}
	return 0, false
}
