package tensorir

import "fmt"

// AttrAccumulate marks a reduce block without an init statement as
// intentionally accumulating into the prior contents of its outputs.
const AttrAccumulate = "tessera.accumulate"

// Verify checks every function of m (see VerifyFunc) and returns all
// problems as Diagnostics, or nil.
func Verify(m *Module) error {
	var ds Diagnostics
	names := map[string]bool{}
	for _, f := range m.Funcs {
		if names[f.Name] {
			ds = append(ds, Errorf(f.Loc, "redefinition of function @%s", f.Name))
		}
		names[f.Name] = true
		ds = append(ds, verifyFuncIn(m, f)...)
	}
	return ds.Err()
}

// VerifyFunc checks f:
//   - every variable is defined before use (parameters, loop variables,
//     block iteration variables, let variables) and defined once;
//   - every buffer used is a parameter or allocated in scope (Allocate or
//     a block's alloc), and is accessed with one index per dimension;
//   - dtypes agree: binary operands, stores (value dtype = buffer dtype),
//     select arms, loop bounds (= loop variable), bindings (= iteration
//     variable), let values; integer indices; i1 conditions; '/' only on
//     floats, floordiv/floormod only on integers; known intrinsics with
//     float arguments (abs also takes integers);
//   - loops: integer bounds, a positive extent when constant, a constant
//     extent for vectorized and unrolled loops, a valid thread tag
//     (blockIdx.x/y/z, threadIdx.x/y/z, vthread) for thread_binding;
//   - blocks: realized by a tir.block with one binding per iteration
//     variable; bindings are expressions of enclosing loop variables,
//     scalar parameters and enclosing blocks' iteration variables; a loop
//     variable does not feed both a spatial and a reduce iteration
//     variable; reduce variables do not index written regions; constant
//     binding bounds lie in the domain when there is no predicate; a block
//     with reduce variables has an init or the tessera.accumulate
//     annotation, and a block without them has no init; block names are
//     unique in the function.
//
// Diagnostics are located at the offending statement or parameter and
// name the loop, block or buffer.
//
// Host statements: a tir.call passes buffers in scope; with the module
// (Verify) its callee exists, is not the caller, has only buffer
// parameters, as many as arguments, each of the argument's dtype and
// constant shape, and a constant buffer is not passed as an out or inout
// parameter. tir.constant holds one value of its dtype per element of its
// constant shape and is never stored to; tir.arena buffers have constant
// shapes and lie inside the arena at offsets that are multiples of
// ArenaAlign.
func VerifyFunc(f *PrimFunc) error { return verifyFunc(f).Err() }

func verifyFunc(f *PrimFunc) Diagnostics { return verifyFuncIn(nil, f) }

type verifier struct {
	f      *PrimFunc
	mod    *Module          // resolves tir.call callees; nil in VerifyFunc
	consts map[*Buffer]bool // tir.constant buffers in scope
	ds     Diagnostics
	vars   map[*Var]varInfo // in scope
	seen   map[*Var]bool    // ever defined
	bufs   map[*Buffer]bool // in scope
	blocks map[string]bool
	env    BoundEnv // loop variable ranges, for binding checks
	where  Location
}

type varKind uint8

const (
	vkParam varKind = iota
	vkLoop
	vkIter
	vkLet
)

type varInfo struct {
	kind varKind
}

func verifyFuncIn(m *Module, f *PrimFunc) Diagnostics {
	v := &verifier{f: f, mod: m, consts: map[*Buffer]bool{}, vars: map[*Var]varInfo{}, seen: map[*Var]bool{}, bufs: map[*Buffer]bool{},
		blocks: map[string]bool{}, env: BoundEnv{}, where: f.Loc}
	names := map[string]bool{}
	for _, p := range f.Params {
		v.where = p.Loc
		if n := p.Name(); names[n] {
			v.errorf("duplicate parameter %%%s", n)
		} else {
			names[n] = true
		}
		if p.Role > RoleInOut {
			v.errorf("parameter %%%s has an unknown role %d", p.Name(), p.Role)
		}
		switch {
		case p.Buffer != nil && p.Var != nil, p.Buffer == nil && p.Var == nil:
			v.errorf("parameter %%%s must be exactly one of a buffer and a scalar", p.Name())
		case p.Buffer != nil:
			v.bufferDecl(p.Buffer)
			v.bufs[p.Buffer] = true
		default:
			if !p.Var.Type.Valid() || !p.Var.Type.IsScalar() {
				v.errorf("scalar parameter %%%s has invalid dtype %s", p.Var.Name, p.Var.Type)
			}
			if p.Role != RoleIn {
				v.errorf("scalar parameter %%%s must have role in", p.Var.Name)
			}
			v.define(p.Var, vkParam)
		}
	}
	v.where = f.Loc
	if a, ok := f.Attrs[AttrGlobalSymbol]; ok {
		if _, isStr := a.(StringAttr); !isStr {
			v.errorf("function @%s: attribute %s must be a string", f.Name, AttrGlobalSymbol)
		}
	}
	if a, ok := f.Attrs[AttrKernel]; ok {
		if _, isUnit := a.(UnitAttr); !isUnit {
			v.errorf("function @%s: attribute %s takes no value", f.Name, AttrKernel)
		}
	}
	if f.Body == nil {
		v.errorf("function @%s has no body", f.Name)
	} else {
		v.stmt(f.Body, nil)
	}
	return v.ds
}

func (v *verifier) errorf(format string, args ...any) {
	if len(v.ds) < 100 {
		v.ds = append(v.ds, Errorf(v.where, format, args...))
	}
}

func (v *verifier) define(x *Var, k varKind) {
	if v.seen[x] {
		v.errorf("variable %%%s is defined more than once", x.Name)
	}
	v.seen[x] = true
	v.vars[x] = varInfo{kind: k}
}

func (v *verifier) bufferDecl(b *Buffer) {
	if !b.DType.Valid() || !b.DType.IsScalar() {
		v.errorf("buffer %%%s: element dtype must be a scalar, not %s", b.Name, b.DType)
	}
	if b.Scope != "" && !KnownScope(b.Scope) {
		v.errorf("buffer %%%s: unknown scope %q (want %s)", b.Name, b.Scope, ScopeList())
	}
	for i, d := range b.Shape {
		v.intExpr(d, fmt.Sprintf("buffer %%%s: dimension %d", b.Name, i))
		if c, ok := d.(*IntImm); ok && c.Value < 0 {
			v.errorf("buffer %%%s: dimension %d is negative (%d)", b.Name, i, c.Value)
		}
	}
	if b.Strides != nil && len(b.Strides) != len(b.Shape) {
		v.errorf("buffer %%%s: %d strides for %d dimensions", b.Name, len(b.Strides), len(b.Shape))
	}
	for i, s := range b.Strides {
		v.intExpr(s, fmt.Sprintf("buffer %%%s: stride %d", b.Name, i))
	}
	if b.ElemOffset != nil {
		v.intExpr(b.ElemOffset, fmt.Sprintf("buffer %%%s: offset", b.Name))
	}
	if b.Align < 0 || b.Align&(b.Align-1) != 0 {
		v.errorf("buffer %%%s: alignment %d is not a power of two", b.Name, b.Align)
	}
}

// intExpr checks e and that it is a scalar integer.
func (v *verifier) intExpr(e Expr, what string) {
	if e == nil {
		v.errorf("%s is missing", what)
		return
	}
	v.expr(e)
	if t := e.DType(); !t.IsInt() || t.IsBool() || !t.IsScalar() {
		v.errorf("%s must be an integer, got %s", what, t)
	}
}

func (v *verifier) boolExpr(e Expr, what string) {
	if e == nil {
		v.errorf("%s is missing", what)
		return
	}
	v.expr(e)
	if t := e.DType(); t != DBool {
		v.errorf("%s must be i1, got %s", what, t)
	}
}

// blockCtx is the innermost enclosing block.
type blockCtx struct {
	block  *Block
	reduce map[*Var]bool // its reduce iteration variables
}

func (v *verifier) stmt(s Stmt, blk *blockCtx) {
	if s == nil {
		return
	}
	saved := v.where
	if l := s.Location(); l.Known() || l.File != "" {
		v.where = l
	}
	defer func() { v.where = saved }()
	switch x := s.(type) {
	case *SeqStmt:
		for _, c := range x.Stmts {
			v.stmt(c, blk)
		}
	case *For:
		v.forStmt(x, blk)
	case *BlockRealize:
		v.realize(x, blk)
	case *Block:
		v.errorf("block '%s' is not realized: give each iteration variable a binding", x.Name)
	case *BufferStore:
		v.access(x.Buffer, x.Indices, "store to")
		if x.Buffer == nil {
			return
		}
		if v.consts[x.Buffer] {
			v.errorf("store to constant buffer %%%s", x.Buffer.Name)
		}
		if blk != nil {
			for _, e := range x.Indices {
				VisitExpr(e, func(e Expr) bool {
					if u, ok := e.(*Var); ok && blk.reduce[u] {
						v.errorf("block '%s': reduce variable %%%s indexes the store to buffer %%%s", blk.block.Name, u.Name, x.Buffer.Name)
					}
					return true
				})
			}
		}
		if x.Value == nil {
			v.errorf("store to buffer %%%s has no value", x.Buffer.Name)
			return
		}
		v.expr(x.Value)
		if t := x.Value.DType(); t != x.Buffer.DType {
			v.errorf("store to buffer %%%s of %s: value has dtype %s", x.Buffer.Name, x.Buffer.DType, t)
		}
	case *Allocate:
		v.bufferDecl(x.Buffer)
		if v.bufs[x.Buffer] {
			v.errorf("buffer %%%s is allocated twice", x.Buffer.Name)
		}
		v.bufs[x.Buffer] = true
		v.stmt(x.Body, blk)
		delete(v.bufs, x.Buffer)
	case *IfThenElse:
		v.boolExpr(x.Cond, "if condition")
		v.stmt(x.Then, blk)
		v.stmt(x.Else, blk)
	case *LetStmt:
		if x.Var == nil {
			v.errorf("let without a variable")
			return
		}
		v.expr(x.Value)
		if x.Value != nil && x.Var.Type != x.Value.DType() {
			v.errorf("let %%%s of dtype %s bound to a value of dtype %s", x.Var.Name, x.Var.Type, x.Value.DType())
		}
		v.define(x.Var, vkLet)
		v.stmt(x.Body, blk)
		delete(v.vars, x.Var)
	case *Evaluate:
		v.expr(x.Value)
	case *Barrier:
	case *CallKernel, *AllocateConst, *ArenaAlloc:
		v.hostStmt(s, blk)
	default:
		v.errorf("unknown statement %T", s)
	}
}

func (v *verifier) forStmt(x *For, blk *blockCtx) {
	if x.Var == nil {
		v.errorf("loop without a loop variable")
		return
	}
	name := "%" + x.Var.Name
	v.intExpr(x.Min, "loop "+name+": minimum")
	v.intExpr(x.Extent, "loop "+name+": extent")
	if x.Min != nil && x.Min.DType() != x.Var.Type {
		v.errorf("loop %s of dtype %s has a minimum of dtype %s", name, x.Var.Type, x.Min.DType())
	}
	if x.Extent != nil && x.Extent.DType() != x.Var.Type {
		v.errorf("loop %s of dtype %s has an extent of dtype %s", name, x.Var.Type, x.Extent.DType())
	}
	ext, constExt := x.Extent.(*IntImm)
	if constExt && ext.Value <= 0 {
		v.errorf("loop %s: extent must be positive, got %d", name, ext.Value)
	}
	switch x.Kind {
	case Vectorized, Unrolled:
		if !constExt {
			v.errorf("%s loop %s must have a constant extent", x.Kind, name)
		}
	case ThreadBinding:
		if !ThreadTags[x.Thread] {
			v.errorf("loop %s: invalid thread tag %q (want blockIdx.x/y/z, threadIdx.x/y/z or vthread)", name, x.Thread)
		}
	}
	if x.Kind != ThreadBinding && x.Thread != "" {
		v.errorf("%s loop %s has a thread tag", x.Kind, name)
	}
	if x.Kind > ThreadBinding {
		v.errorf("loop %s has an unknown kind %d", name, x.Kind)
	}
	v.define(x.Var, vkLoop)
	if x.Min != nil && x.Extent != nil {
		lo, e := Bound(x.Min, v.env), Bound(x.Extent, v.env)
		if !lo.IsFull() && !e.IsFull() && e.Lo >= 1 {
			if hi := addOv(lo.Hi, e.Hi-1); hi.ok {
				v.env[x.Var] = Interval{lo.Lo, hi.v}
			}
		}
	}
	v.stmt(x.Body, blk)
	delete(v.vars, x.Var)
	delete(v.env, x.Var)
}

func (v *verifier) realize(r *BlockRealize, outer *blockCtx) {
	b := r.Block
	if b == nil {
		v.errorf("block realize without a block")
		return
	}
	name := "block '" + b.Name + "'"
	if v.blocks[b.Name] {
		v.errorf("%s: duplicate block name in function @%s", name, v.f.Name)
	}
	v.blocks[b.Name] = true
	if len(r.Values) != len(b.IterVars) {
		v.errorf("%s has %d iteration variables but %d bindings", name, len(b.IterVars), len(r.Values))
	}
	// Bindings and domains are evaluated outside the block.
	spatialLoops := map[*Var]string{}
	reduceLoops := map[*Var]string{}
	hasReduce := false
	for i, iv := range b.IterVars {
		if iv == nil || iv.Var == nil {
			v.errorf("%s has an iteration variable without a variable", name)
			return
		}
		vn := "%" + iv.Var.Name
		v.intExpr(iv.Dom.Min, name+": domain minimum of "+vn)
		v.intExpr(iv.Dom.Extent, name+": domain extent of "+vn)
		if iv.Dom.Min != nil && iv.Dom.Min.DType() != iv.Var.Type {
			v.errorf("%s: iteration variable %s of dtype %s has a domain of dtype %s", name, vn, iv.Var.Type, iv.Dom.Min.DType())
		}
		if c, ok := iv.Dom.Extent.(*IntImm); ok && c.Value <= 0 {
			v.errorf("%s: iteration variable %s has an empty domain (extent %d)", name, vn, c.Value)
		}
		switch iv.Kind {
		case Reduce:
			hasReduce = true
		case Spatial:
		default:
			v.errorf("%s: iteration variable %s has an unknown kind %d", name, vn, iv.Kind)
		}
		if i >= len(r.Values) {
			continue
		}
		val := r.Values[i]
		if val == nil {
			v.errorf("%s: iteration variable %s has no binding", name, vn)
			continue
		}
		v.expr(val)
		if val.DType() != iv.Var.Type {
			v.errorf("%s: iteration variable %s of dtype %s is bound to a value of dtype %s", name, vn, iv.Var.Type, val.DType())
		}
		VisitExpr(val, func(e Expr) bool {
			x, ok := e.(*Var)
			if !ok {
				if _, load := e.(*BufferLoad); load {
					v.errorf("%s: binding of %s reads a buffer; bindings are expressions of loop variables", name, vn)
					return false
				}
				return true
			}
			info, def := v.vars[x]
			if def && info.kind == vkLet {
				v.errorf("%s: binding of %s uses let variable %%%s; bindings are expressions of loop variables", name, vn, x.Name)
			}
			if def && info.kind == vkLoop {
				if iv.Kind == Spatial {
					spatialLoops[x] = vn
				} else {
					reduceLoops[x] = vn
				}
			}
			return true
		})
		if r.Predicate == nil {
			bd := Bound(Simplify(val, v.env), v.env)
			lo, e := Bound(iv.Dom.Min, v.env), Bound(iv.Dom.Extent, v.env)
			if !bd.IsFull() && lo.IsPoint() && e.IsPoint() && (bd.Lo < lo.Lo || bd.Hi > lo.Lo+e.Lo-1) {
				v.errorf("%s: binding of %s ranges over [%d, %d], outside its domain [%d, %d)", name, vn, bd.Lo, bd.Hi, lo.Lo, lo.Lo+e.Lo)
			}
		}
	}
	for x, rv := range reduceLoops {
		if sv, ok := spatialLoops[x]; ok {
			v.errorf("%s: loop %%%s feeds both spatial %s and reduce %s", name, x.Name, sv, rv)
		}
	}
	if hasReduce && b.Init == nil {
		if _, ok := b.Annotations[AttrAccumulate]; !ok {
			v.errorf("%s has reduce iteration variables but no init; add tir.init or the %s annotation", name, AttrAccumulate)
		}
	}
	if !hasReduce && b.Init != nil {
		v.errorf("%s has an init but no reduce iteration variables", name)
	}
	for _, iv := range b.IterVars {
		v.define(iv.Var, vkIter)
	}
	if r.Predicate != nil {
		v.boolExpr(r.Predicate, name+": predicate")
	}
	for _, a := range b.Allocs {
		v.bufferDecl(a)
		if v.bufs[a] {
			v.errorf("%s: buffer %%%s is allocated twice", name, a.Name)
		}
		v.bufs[a] = true
	}
	v.regions(name, "read", b.Reads, nil)
	reduceVars := map[*Var]bool{}
	for _, iv := range b.IterVars {
		if iv.Kind == Reduce {
			reduceVars[iv.Var] = true
		}
	}
	v.regions(name, "written", b.Writes, reduceVars)
	ctx := &blockCtx{block: b, reduce: reduceVars}
	if b.Init != nil {
		v.stmt(b.Init, ctx)
	}
	v.stmt(b.Body, ctx)
	for _, a := range b.Allocs {
		delete(v.bufs, a)
	}
	for _, iv := range b.IterVars {
		delete(v.vars, iv.Var)
	}
}

func (v *verifier) regions(block, what string, rs []BufferRegion, reduceVars map[*Var]bool) {
	for _, r := range rs {
		if r.Buffer == nil {
			v.errorf("%s: %s region without a buffer", block, what)
			continue
		}
		if !v.bufs[r.Buffer] {
			v.errorf("%s: %s region of buffer %%%s, which is not a parameter or allocated in scope", block, what, r.Buffer.Name)
		}
		if len(r.Region) != len(r.Buffer.Shape) {
			v.errorf("%s: %s region of buffer %%%s has %d ranges for %d dimensions", block, what, r.Buffer.Name, len(r.Region), len(r.Buffer.Shape))
		}
		for _, rg := range r.Region {
			v.intExpr(rg.Min, block+": region minimum of %"+r.Buffer.Name)
			v.intExpr(rg.Extent, block+": region extent of %"+r.Buffer.Name)
			for _, e := range []Expr{rg.Min, rg.Extent} {
				VisitExpr(e, func(e Expr) bool {
					if x, ok := e.(*Var); ok && reduceVars[x] {
						v.errorf("%s: reduce variable %%%s indexes the written region of buffer %%%s", block, x.Name, r.Buffer.Name)
					}
					return true
				})
			}
		}
	}
}

func (v *verifier) access(b *Buffer, idx []Expr, what string) {
	if b == nil {
		v.errorf("%s a missing buffer", what)
		return
	}
	if !v.bufs[b] {
		v.errorf("%s buffer %%%s, which is not a parameter or allocated in scope", what, b.Name)
	}
	if len(idx) != len(b.Shape) {
		v.errorf("%s buffer %%%s with %d indices; it has %d dimensions", what, b.Name, len(idx), len(b.Shape))
	}
	for i, e := range idx {
		v.intExpr(e, fmt.Sprintf("index %d of buffer %%%s", i, b.Name))
	}
}

// expr checks an expression tree.
func (v *verifier) expr(e Expr) {
	switch x := e.(type) {
	case nil:
		v.errorf("missing expression")
	case *IntImm:
		if !x.Type.IsInt() || !x.Type.IsScalar() {
			v.errorf("integer constant %d has non-integer dtype %s", x.Value, x.Type)
		}
	case *FloatImm:
		if !x.Type.IsFloat() || !x.Type.IsScalar() {
			v.errorf("float constant has non-float dtype %s", x.Type)
		}
	case *Var:
		if x == nil {
			v.errorf("missing variable")
			return
		}
		if _, ok := v.vars[x]; !ok {
			v.errorf("use of undefined variable %%%s", x.Name)
		}
		if !x.Type.Valid() {
			v.errorf("variable %%%s has an invalid dtype", x.Name)
		}
	case *Binary:
		v.expr(x.A)
		v.expr(x.B)
		if x.A == nil || x.B == nil {
			return
		}
		ta, tb := x.A.DType(), x.B.DType()
		if ta != tb {
			v.errorf("'%s' operands have different dtypes %s and %s", x.Op, ta, tb)
			return
		}
		switch {
		case x.Op == OpDiv && !ta.IsFloat():
			v.errorf("'/' divides floats; use floordiv or floormod for %s", ta)
		case (x.Op == OpFloorDiv || x.Op == OpFloorMod || x.Op == OpShl || x.Op == OpShr) && (!ta.IsInt() || ta.IsBool()):
			v.errorf("'%s' takes integers, not %s", x.Op, ta)
		case x.Op.IsLogic() && !ta.IsBool():
			v.errorf("'%s' takes i1, not %s", x.Op, ta)
		case !x.Op.IsLogic() && !x.Op.IsCompare() && ta.IsBool():
			v.errorf("arithmetic '%s' on i1", x.Op)
		}
	case *Not:
		v.boolExpr(x.X, "operand of '!'")
	case *Select:
		v.boolExpr(x.Cond, "select condition")
		v.expr(x.T)
		v.expr(x.F)
		if x.T != nil && x.F != nil && x.T.DType() != x.F.DType() {
			v.errorf("select arms have different dtypes %s and %s", x.T.DType(), x.F.DType())
		}
	case *Cast:
		v.expr(x.X)
		if !x.Type.Valid() {
			v.errorf("cast to an invalid dtype")
		} else if x.X != nil && x.X.DType().Lanes != x.Type.Lanes {
			v.errorf("cast from %s to %s changes the number of lanes", x.X.DType(), x.Type)
		}
	case *Call:
		in, ok := Intrinsics[x.Name]
		if !ok {
			v.errorf("unknown intrinsic '%s'", x.Name)
			return
		}
		if len(x.Args) != in.Arity {
			v.errorf("'%s' expects %d arguments, got %d", x.Name, in.Arity, len(x.Args))
			return
		}
		for _, a := range x.Args {
			v.expr(a)
		}
		t := x.Args[0].DType()
		for _, a := range x.Args[1:] {
			if a.DType() != t {
				v.errorf("'%s' arguments have different dtypes %s and %s", x.Name, t, a.DType())
			}
		}
		if !t.IsFloat() && !(in.IntOK && t.IsInt() && !t.IsBool()) {
			v.errorf("'%s' takes float arguments, not %s", x.Name, t)
		}
	case *BufferLoad:
		v.access(x.Buffer, x.Indices, "load from")
	default:
		v.errorf("unknown expression %T", e)
	}
}
