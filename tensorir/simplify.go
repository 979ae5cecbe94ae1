package tensorir

import (
	"math"
	"sort"
)

// Simplify rewrites e into a simpler expression with exactly the same
// value (and dtype) at every point, given that the variables in env lie in
// their intervals (TVM's arith::Analyzer::Simplify plays the same role).
//
// Rules: constant folding with execution semantics (integers wrap, f32
// rounds after each op); identities (x+0, x*1, x*0 and x-x for integers;
// x*1.0, x/1.0, x-0.0 and x+(-0.0) for floats, which are exact); min, max
// and comparisons decided by bounds; integer +, -, * put in canonical
// linear form (coefficients collected, terms ordered by decreasing
// coefficient magnitude then printed text, the constant last:
// (i*4 + j) - i*4 → j, (i*8 + j*2)*2 → i*16 + j*4, and
// floordiv(x, c)*c + floormod(x, c) → x);
// floordiv/floormod by a positive constant c split the dividend into
// c*q + r and drop r from the quotient (or q from the remainder) when r
// is proven in [0, c): floordiv(i*8 + j, 8) → i and floormod(i*8 + j, 8)
// → j when 0 ≤ j < 8. Rewrites that reassociate division are applied
// only when the bound analysis proves no intermediate value wraps.
func Simplify(e Expr, env BoundEnv) Expr {
	s := &simplifier{env: env}
	return s.expr(e)
}

type simplifier struct {
	env BoundEnv
}

func (s *simplifier) exprs(es []Expr) []Expr {
	out := make([]Expr, len(es))
	for i, e := range es {
		out[i] = s.expr(e)
	}
	return out
}

func (s *simplifier) expr(e Expr) Expr {
	switch x := e.(type) {
	case *Binary:
		return s.binary(x.Op, s.expr(x.A), s.expr(x.B))
	case *Not:
		a := s.expr(x.X)
		if c, ok := a.(*IntImm); ok {
			return IntOf(c.Type, b2i(c.Value == 0))
		}
		if n, ok := a.(*Not); ok {
			return n.X
		}
		return &Not{X: a}
	case *Select:
		c, a, b := s.expr(x.Cond), s.expr(x.T), s.expr(x.F)
		if k, ok := c.(*IntImm); ok {
			if k.Value != 0 {
				return a
			}
			return b
		}
		if Equal(a, b) {
			return a
		}
		return &Select{Cond: c, T: a, F: b}
	case *Cast:
		a := s.expr(x.X)
		if a.DType() == x.Type {
			return a
		}
		if x.Type.IsScalar() && a.DType().IsScalar() {
			switch k := a.(type) {
			case *IntImm:
				if x.Type.IsInt() {
					return IntOf(x.Type, k.Value)
				}
				if x.Type.IsFloat() {
					return &FloatImm{Type: x.Type, Value: castIntToFloat(k.Type, x.Type, k.Value)}
				}
			case *FloatImm:
				if x.Type.IsInt() {
					return &IntImm{Type: x.Type, Value: castFloatToInt(x.Type, k.Value)}
				}
				if x.Type.IsFloat() {
					return &FloatImm{Type: x.Type, Value: RoundFloat(x.Type, k.Value)}
				}
			}
		}
		return &Cast{Type: x.Type, X: a}
	case *Call:
		args := s.exprs(x.Args)
		return s.call(x.Name, args)
	case *BufferLoad:
		return &BufferLoad{Buffer: x.Buffer, Indices: s.exprs(x.Indices)}
	}
	return e
}

func (s *simplifier) call(name string, args []Expr) Expr {
	in, ok := Intrinsics[name]
	c := &Call{Name: name, Args: args}
	if !ok || len(args) != in.Arity {
		return c
	}
	t := c.DType()
	if !t.IsScalar() {
		return c
	}
	if t.IsFloat() {
		vals := make([]float64, len(args))
		for i, a := range args {
			k, ok := a.(*FloatImm)
			if !ok || k.Type != t {
				return c
			}
			vals[i] = k.Value
		}
		return &FloatImm{Type: t, Value: RoundFloat(t, in.Compute(vals))}
	}
	if name == "abs" && t.IsUnsigned() {
		return args[0]
	}
	if name == "abs" && t.IsInt() && !t.IsBool() {
		if k, ok := args[0].(*IntImm); ok {
			v := k.Value
			if v < 0 {
				v = -v
			}
			return IntOf(t, v)
		}
	}
	return c
}

func (s *simplifier) bound(e Expr) Interval { return Bound(e, s.env) }

func isIntArith(t DType) bool { return t.IsInt() && !t.IsBool() && t.IsScalar() }

func (s *simplifier) binary(op BinOp, a, b Expr) Expr {
	t := a.DType()
	if t != b.DType() || !t.IsScalar() {
		return Bin(op, a, b)
	}
	ka, aConst := a.(*IntImm)
	kb, bConst := b.(*IntImm)
	if aConst && bConst && t.IsInt() && op != OpDiv {
		if v, err := evalIntBinary(op, t, ka.Value, kb.Value); err == nil {
			if op.IsCompare() || op.IsLogic() {
				return BoolImm(v != 0)
			}
			return IntOf(t, v)
		}
		return Bin(op, a, b)
	}
	fa, faConst := a.(*FloatImm)
	fb, fbConst := b.(*FloatImm)
	if faConst && fbConst && t.IsFloat() {
		if op.IsCompare() {
			return BoolImm(evalFloatCompare(op, fa.Value, fb.Value) != 0)
		}
		if !op.IsLogic() && op != OpFloorDiv && op != OpFloorMod {
			return &FloatImm{Type: t, Value: evalFloatBinary(op, t, fa.Value, fb.Value)}
		}
	}
	switch {
	case op.IsLogic() && t.IsBool():
		return s.logic(op, a, b)
	case op.IsCompare() && isIntArith(t):
		return s.compare(op, a, b)
	case (op == OpAdd || op == OpSub || op == OpMul) && isIntArith(t):
		return s.mergeDivMod(s.linear(Bin(op, a, b))).expr()
	case (op == OpFloorDiv || op == OpFloorMod) && isIntArith(t) && !t.IsUnsigned():
		return s.divmod(op, a, b)
	case (op == OpMin || op == OpMax) && isIntArith(t):
		if Equal(a, b) {
			return a
		}
		ba, bb := s.bound(a), s.bound(b)
		if !ba.IsFull() && !bb.IsFull() {
			aSmaller := ba.Hi <= bb.Lo
			bSmaller := bb.Hi <= ba.Lo
			if aSmaller || bSmaller {
				if (op == OpMin) == aSmaller {
					return a
				}
				return b
			}
		}
	case t.IsFloat():
		return s.floatIdentity(op, a, b)
	}
	return Bin(op, a, b)
}

func isFloatConst(e Expr, v float64) bool {
	k, ok := e.(*FloatImm)
	return ok && math.Float64bits(k.Value) == math.Float64bits(v)
}

// floatIdentity applies the float identities that are exact for every
// input, including NaN, infinities and signed zeros.
func (s *simplifier) floatIdentity(op BinOp, a, b Expr) Expr {
	switch op {
	case OpAdd:
		if isFloatConst(b, math.Copysign(0, -1)) {
			return a
		}
		if isFloatConst(a, math.Copysign(0, -1)) {
			return b
		}
	case OpSub:
		if isFloatConst(b, 0) {
			return a
		}
	case OpMul:
		if isFloatConst(b, 1) {
			return a
		}
		if isFloatConst(a, 1) {
			return b
		}
	case OpDiv:
		if isFloatConst(b, 1) {
			return a
		}
	}
	return Bin(op, a, b)
}

func (s *simplifier) logic(op BinOp, a, b Expr) Expr {
	for _, pair := range [][2]Expr{{a, b}, {b, a}} {
		if k, ok := pair[0].(*IntImm); ok {
			if op == OpAnd {
				if k.Value == 0 {
					return BoolImm(false)
				}
				return pair[1]
			}
			if k.Value != 0 {
				return BoolImm(true)
			}
			return pair[1]
		}
	}
	return Bin(op, a, b)
}

func (s *simplifier) compare(op BinOp, a, b Expr) Expr {
	if Equal(a, b) {
		return BoolImm(op == OpEQ || op == OpLE || op == OpGE)
	}
	ba, bb := s.bound(a), s.bound(b)
	if ba.IsFull() || bb.IsFull() {
		return Bin(op, a, b)
	}
	// The difference, when it cannot wrap, gives a tighter answer
	// (i*4 + j < i*4 + 8 with 0 ≤ j < 8).
	d := s.bound(s.linear(Sub(a, b)).expr())
	if d.IsFull() {
		d = hull(subOv(ba.Lo, bb.Hi), subOv(ba.Hi, bb.Lo))
	}
	if d.IsFull() {
		return Bin(op, a, b)
	}
	decide := func(always, never bool) Expr {
		if always {
			return BoolImm(true)
		}
		if never {
			return BoolImm(false)
		}
		return Bin(op, a, b)
	}
	switch op {
	case OpEQ:
		return decide(d.Lo == 0 && d.Hi == 0, d.Lo > 0 || d.Hi < 0)
	case OpNE:
		return decide(d.Lo > 0 || d.Hi < 0, d.Lo == 0 && d.Hi == 0)
	case OpLT:
		return decide(d.Hi < 0, d.Lo >= 0)
	case OpLE:
		return decide(d.Hi <= 0, d.Lo > 0)
	case OpGT:
		return decide(d.Lo > 0, d.Hi <= 0)
	}
	return decide(d.Lo >= 0, d.Hi < 0)
}

// linForm is Σ coeff·atom + c over integers of dtype t, with coefficients
// and c wrapped to t (all rewrites are identities of modular arithmetic).
type linForm struct {
	t     DType
	terms []linTerm
	c     int64
}

type linTerm struct {
	atom  Expr
	key   string
	coeff int64
}

func (s *simplifier) linear(e Expr) *linForm {
	t := e.DType()
	l := &linForm{t: t}
	switch x := e.(type) {
	case *IntImm:
		l.c = x.Value
		return l
	case *Binary:
		switch x.Op {
		case OpAdd, OpSub:
			l = s.linear(x.A)
			r := s.linear(x.B)
			sign := int64(1)
			if x.Op == OpSub {
				sign = -1
			}
			for _, tm := range r.terms {
				l.addTerm(tm.atom, tm.key, tm.coeff*sign)
			}
			l.c = WrapInt(t, l.c+sign*r.c)
			return l
		case OpMul:
			la, lb := s.linear(x.A), s.linear(x.B)
			if len(lb.terms) == 0 {
				return la.scale(lb.c)
			}
			if len(la.terms) == 0 {
				return lb.scale(la.c)
			}
		}
	}
	l.addTerm(e, ExprString(e), 1)
	return l
}

func (l *linForm) addTerm(atom Expr, key string, coeff int64) {
	for i := range l.terms {
		if l.terms[i].key == key && Equal(l.terms[i].atom, atom) {
			l.terms[i].coeff = WrapInt(l.t, l.terms[i].coeff+coeff)
			return
		}
	}
	l.terms = append(l.terms, linTerm{atom, key, WrapInt(l.t, coeff)})
}

func (l *linForm) scale(k int64) *linForm {
	out := &linForm{t: l.t, c: WrapInt(l.t, l.c*k)}
	for _, tm := range l.terms {
		out.addTerm(tm.atom, tm.key, tm.coeff*k)
	}
	return out
}

func absCoeff(c int64) uint64 {
	if c < 0 {
		return uint64(-c)
	}
	return uint64(c)
}

// expr rebuilds the canonical expression: positive terms, then negative
// terms subtracted, each group by decreasing coefficient magnitude then
// printed text, then the constant.
func (l *linForm) expr() Expr {
	var pos, neg []linTerm
	for _, tm := range l.terms {
		switch {
		case tm.coeff > 0:
			pos = append(pos, tm)
		case tm.coeff < 0:
			neg = append(neg, tm)
		}
	}
	byKey := func(ts []linTerm) {
		sort.SliceStable(ts, func(i, j int) bool {
			ci, cj := absCoeff(ts[i].coeff), absCoeff(ts[j].coeff)
			if ci != cj {
				return ci > cj
			}
			return ts[i].key < ts[j].key
		})
	}
	byKey(pos)
	byKey(neg)
	term := func(tm linTerm, coeff int64) Expr {
		if coeff == 1 {
			return tm.atom
		}
		return Mul(tm.atom, IntOf(l.t, coeff))
	}
	var acc Expr
	c := l.c
	for _, tm := range pos {
		if acc == nil {
			acc = term(tm, tm.coeff)
		} else {
			acc = Add(acc, term(tm, tm.coeff))
		}
	}
	for _, tm := range neg {
		switch {
		case acc != nil:
			acc = Sub(acc, term(tm, WrapInt(l.t, -tm.coeff)))
		case c != 0:
			acc = Sub(IntOf(l.t, c), term(tm, WrapInt(l.t, -tm.coeff)))
			c = 0
		default:
			acc = term(tm, tm.coeff)
		}
	}
	switch {
	case acc == nil:
		return IntOf(l.t, c)
	case c > 0:
		return Add(acc, IntOf(l.t, c))
	case c < 0:
		return Sub(acc, IntOf(l.t, -c))
	}
	return acc
}

// mergeDivMod rewrites k*c*floordiv(x, c) + k*floormod(x, c) into k*x,
// an identity of modular arithmetic for every constant c ≠ 0.
func (s *simplifier) mergeDivMod(l *linForm) *linForm {
	for i := 0; i < len(l.terms); i++ {
		m, ok := l.terms[i].atom.(*Binary)
		if !ok || m.Op != OpFloorMod {
			continue
		}
		c, ok := m.B.(*IntImm)
		if !ok || c.Value == 0 {
			continue
		}
		k := l.terms[i].coeff
		for j := range l.terms {
			d, ok := l.terms[j].atom.(*Binary)
			if !ok || d.Op != OpFloorDiv || !Equal(d.A, m.A) || !Equal(d.B, m.B) || l.terms[j].coeff != WrapInt(l.t, k*c.Value) {
				continue
			}
			out := &linForm{t: l.t, c: l.c}
			for n, tm := range l.terms {
				if n != i && n != j {
					out.addTerm(tm.atom, tm.key, tm.coeff)
				}
			}
			x := s.linear(m.A).scale(k)
			for _, tm := range x.terms {
				out.addTerm(tm.atom, tm.key, tm.coeff)
			}
			out.c = WrapInt(l.t, out.c+x.c)
			return s.mergeDivMod(out)
		}
	}
	return l
}

func (s *simplifier) divmod(op BinOp, a, b Expr) Expr {
	kb, ok := b.(*IntImm)
	if !ok || kb.Value <= 0 {
		return Bin(op, a, b)
	}
	c := kb.Value
	if c == 1 {
		if op == OpFloorDiv {
			return a
		}
		return IntOf(a.DType(), 0)
	}
	// Nested division by positive constants.
	if in, ok := a.(*Binary); ok && (in.Op == OpFloorDiv || in.Op == OpFloorMod) {
		if k, ok := in.B.(*IntImm); ok && k.Value > 0 {
			if in.Op == OpFloorDiv && op == OpFloorDiv {
				if p := mulOv(k.Value, c); p.ok && WrapInt(a.DType(), p.v) == p.v {
					return s.divmod(op, in.A, IntOf(a.DType(), p.v))
				}
			}
			if in.Op == OpFloorMod && op == OpFloorMod && k.Value%c == 0 {
				return s.divmod(op, in.A, b)
			}
		}
	}
	if s.bound(a).IsFull() {
		return Bin(op, a, b)
	}
	// a = c*q + r with every part computable without wrapping.
	t := a.DType()
	l := s.linear(a)
	q := &linForm{t: t, c: floorDiv(l.c, c)}
	r := &linForm{t: t, c: floorMod(l.c, c)}
	for _, tm := range l.terms {
		if tm.coeff%c == 0 {
			q.addTerm(tm.atom, tm.key, tm.coeff/c)
		} else {
			r.addTerm(tm.atom, tm.key, tm.coeff)
		}
	}
	qe, re := q.expr(), r.expr()
	cq := Mul(qe, IntOf(t, c))
	if s.bound(qe).IsFull() || s.bound(re).IsFull() || s.bound(cq).IsFull() || s.bound(Add(cq, re)).IsFull() {
		return Bin(op, a, b)
	}
	if s.bound(re).Within(0, c-1) {
		if op == OpFloorDiv {
			return qe
		}
		return re
	}
	if len(q.terms) == 0 && q.c == 0 {
		return Bin(op, a, b)
	}
	if op == OpFloorDiv {
		return s.linear(Add(qe, Bin(OpFloorDiv, re, b))).expr()
	}
	return Bin(OpFloorMod, re, b)
}

// SimplifyFunc returns f with every expression simplified, knowing the
// range of each loop variable ([min, min+extent-1] when bounded), each
// block iteration variable (its domain) and each integer let variable;
// conditions of IfThenElse that fold to a constant select their branch.
// Buffers and variables are shared with f, which is not modified.
func SimplifyFunc(f *PrimFunc) *PrimFunc {
	env := BoundEnv{}
	out := *f
	out.Body = simplifyStmt(f.Body, env)
	return &out
}

func init() {
	RegisterModulePass("simplify", "simplify every expression, knowing the ranges of loop, block and let variables",
		func(m *Module) error {
			for i, f := range m.Funcs {
				m.Funcs[i] = SimplifyFunc(f)
			}
			return nil
		})
}

func simplifyStmt(st Stmt, env BoundEnv) Stmt {
	s := &simplifier{env: env}
	region := func(rs []BufferRegion) []BufferRegion {
		var out []BufferRegion
		for _, r := range rs {
			nr := BufferRegion{Buffer: r.Buffer, Region: make([]Range, len(r.Region))}
			for i, rg := range r.Region {
				nr.Region[i] = Range{s.expr(rg.Min), s.expr(rg.Extent)}
			}
			out = append(out, nr)
		}
		return out
	}
	switch x := st.(type) {
	case nil:
		return nil
	case *SeqStmt:
		out := &SeqStmt{Loc: x.Loc, Stmts: make([]Stmt, len(x.Stmts))}
		for i, c := range x.Stmts {
			out.Stmts[i] = simplifyStmt(c, env)
		}
		return out
	case *For:
		n := *x
		n.Min, n.Extent = s.expr(x.Min), s.expr(x.Extent)
		lo, ext := Bound(n.Min, env), Bound(n.Extent, env)
		if !lo.IsFull() && !ext.IsFull() {
			if hi := addOv(lo.Hi, ext.Hi-1); hi.ok && ext.Hi >= 1 {
				env[x.Var] = Interval{lo.Lo, hi.v}
			}
		}
		n.Body = simplifyStmt(x.Body, env)
		delete(env, x.Var)
		return &n
	case *BlockRealize:
		n := *x
		n.Values = s.exprs(x.Values)
		if x.Predicate != nil {
			n.Predicate = s.expr(x.Predicate)
		}
		b := *x.Block
		b.IterVars = make([]*IterVar, len(x.Block.IterVars))
		for i, iv := range x.Block.IterVars {
			niv := &IterVar{Var: iv.Var, Kind: iv.Kind, Dom: Range{s.expr(iv.Dom.Min), s.expr(iv.Dom.Extent)}}
			b.IterVars[i] = niv
			lo, ext := Bound(niv.Dom.Min, env), Bound(niv.Dom.Extent, env)
			if lo.IsPoint() && ext.IsPoint() && ext.Lo >= 1 {
				if hi := addOv(lo.Lo, ext.Lo-1); hi.ok {
					env[iv.Var] = Interval{lo.Lo, hi.v}
				}
			}
		}
		b.Reads, b.Writes = region(x.Block.Reads), region(x.Block.Writes)
		b.Init = simplifyStmt(x.Block.Init, env)
		b.Body = simplifyStmt(x.Block.Body, env)
		for _, iv := range x.Block.IterVars {
			delete(env, iv.Var)
		}
		n.Block = &b
		return &n
	case *Block:
		b := *x
		b.Reads, b.Writes = region(x.Reads), region(x.Writes)
		b.Init = simplifyStmt(x.Init, env)
		b.Body = simplifyStmt(x.Body, env)
		return &b
	case *BufferStore:
		return &BufferStore{Buffer: x.Buffer, Value: s.expr(x.Value), Indices: s.exprs(x.Indices), Loc: x.Loc}
	case *Allocate:
		return &Allocate{Buffer: x.Buffer, Body: simplifyStmt(x.Body, env), Loc: x.Loc}
	case *IfThenElse:
		c := s.expr(x.Cond)
		if k, ok := c.(*IntImm); ok {
			if k.Value != 0 {
				return simplifyStmt(x.Then, env)
			}
			if x.Else == nil {
				return &SeqStmt{Loc: x.Loc}
			}
			return simplifyStmt(x.Else, env)
		}
		return &IfThenElse{Cond: c, Then: simplifyStmt(x.Then, env), Else: simplifyStmt(x.Else, env), Loc: x.Loc}
	case *LetStmt:
		v := s.expr(x.Value)
		if iv := Bound(v, env); !iv.IsFull() {
			env[x.Var] = iv
		}
		n := &LetStmt{Var: x.Var, Value: v, Body: simplifyStmt(x.Body, env), Loc: x.Loc}
		delete(env, x.Var)
		return n
	case *Evaluate:
		return &Evaluate{Value: s.expr(x.Value), Loc: x.Loc}
	}
	return st
}
