package tensorir

import (
	"math"
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"

	"github.com/tessera-ml/tessera/internal/syntax"
)

// Parse reads a module in the tensor IR text form (README.md). The
// module is not verified; call Verify.
//
// Errors are Diagnostics located at filename:line:col: syntax errors,
// undefined or redefined names, a buffer used as a scalar or the reverse,
// unknown dtypes and functions, literals out of range for their dtype,
// malformed buffer types, ranges and locations.
func Parse(filename string, src []byte) (*Module, error) {
	tree, err := syntax.Parse(textParser, filename, src, grammarNames)
	if err != nil {
		return nil, err
	}
	b := &builder{Source: syntax.Source{File: filename}}
	m := &Module{}
	for _, pf := range tree.Funcs {
		f, err := b.fn(pf)
		if err != nil {
			return nil, err
		}
		if m.Func(f.Name) != nil {
			return nil, b.Errorf(pf.Pos, "redefinition of function @%s", f.Name)
		}
		m.Funcs = append(m.Funcs, f)
	}
	return m, nil
}

// ParseString is Parse for a string.
func ParseString(filename, src string) (*Module, error) { return Parse(filename, []byte(src)) }

// grammarNames rewrites participle's names for grammar rules in syntax
// error messages into the text they stand for.
var grammarNames = strings.NewReplacer(
	"<EOF>", "end of file",
	"PBody", `"{"`, "PDict", `"{"`, "PLoc?", `loc(...)`, "PLoc", "loc(...)",
	"PStmt", "statement", "PExpr", "expression", "PBufType", "buffer<...>",
	"PFunc", "tir.func", "PParam", "parameter", "PIterVar", "iteration variable",
	"PRegion", "buffer region", "PBufDecl", "buffer declaration", "PAttr", "attribute value",
	"PNamedAttr", "attribute", "PRange", "range", "PDim", "dimension", "PBufOpt", "buffer option",
	"PPrimary", "expression", "PUnary", "expression", "PTerm", "expression", "PSum", "expression",
	"PCmp", "expression", "PAnd", "expression", "POpTerm", "operator", "POpUnary", "operator",
	"PConstElem", "number", "PArenaBuf", "arena buffer", "PCallK", "tir.call",
	"PNumber", "number", "PCast", "cast", "PCall", "call", "PRef", "value",
)

// builder converts the parse tree to IR; its Source locates positions
// and errors.
type builder struct {
	syntax.Source
	scopes []map[string]any // name → *Var or *Buffer
}

func (b *builder) push() { b.scopes = append(b.scopes, map[string]any{}) }
func (b *builder) pop()  { b.scopes = b.scopes[:len(b.scopes)-1] }

func (b *builder) lookup(name string) any {
	for i := len(b.scopes) - 1; i >= 0; i-- {
		if v, ok := b.scopes[i][name]; ok {
			return v
		}
	}
	return nil
}

// define binds a %name (given with its '%') in the innermost scope; a
// name may not shadow one in scope.
func (b *builder) define(name string, obj any, p lexer.Position) error {
	n := name[1:]
	if b.lookup(n) != nil {
		return b.Errorf(p, "redefinition of %s", name)
	}
	b.scopes[len(b.scopes)-1][n] = obj
	return nil
}

func (b *builder) stmtLoc(l *pLoc, p lexer.Position) Location {
	return b.LocOr((*syntax.Loc)(l), p)
}

func (b *builder) fn(pf *pFunc) (*PrimFunc, error) {
	name := pf.Name[1:]
	if strings.HasPrefix(name, `"`) {
		s, err := strconv.Unquote(name)
		if err != nil {
			return nil, b.Errorf(pf.Pos, "malformed function name %s", pf.Name)
		}
		name = s
	}
	f := &PrimFunc{Name: name, Loc: b.stmtLoc(pf.Loc, pf.Pos)}
	b.scopes = nil
	b.push()
	defer b.pop()
	for _, pp := range pf.Params {
		p := &Param{Loc: b.stmtLoc(pp.Loc, pp.Pos)}
		if pp.Role != nil {
			p.Role = map[string]Role{"in": RoleIn, "out": RoleOut, "inout": RoleInOut}[*pp.Role]
		}
		if pp.Buffer != nil {
			buf, err := b.bufType(pp.Name[1:], pp.Buffer)
			if err != nil {
				return nil, err
			}
			buf.Loc = p.Loc
			p.Buffer = buf
			if err := b.define(pp.Name, buf, pp.Pos); err != nil {
				return nil, err
			}
		} else {
			t, ok := ParseDType(*pp.Scalar)
			if !ok {
				return nil, b.Errorf(pp.Pos, "unknown dtype '%s' of parameter %s", *pp.Scalar, pp.Name)
			}
			if p.Role != RoleIn {
				return nil, b.Errorf(pp.Pos, "scalar parameter %s cannot have role '%s'", pp.Name, p.Role)
			}
			p.Var = NewVar(pp.Name[1:], t)
			if err := b.define(pp.Name, p.Var, pp.Pos); err != nil {
				return nil, err
			}
		}
		f.Params = append(f.Params, p)
	}
	if pf.Attrs != nil {
		a, err := b.dict(pf.Attrs)
		if err != nil {
			return nil, err
		}
		f.Attrs = a
	}
	body, err := b.body(pf.Body)
	if err != nil {
		return nil, err
	}
	f.Body = body
	return f, nil
}

func (b *builder) bufType(name string, pt *pBufType) (*Buffer, error) {
	t, ok := ParseDType(pt.DType)
	if !ok {
		return nil, b.Errorf(pt.Pos, "unknown dtype '%s' in buffer type", pt.DType)
	}
	buf := &Buffer{Name: name, DType: t, Scope: ScopeGlobal, Shape: []Expr{}}
	for _, d := range pt.Dims {
		e, err := b.dim(d, "buffer dimension")
		if err != nil {
			return nil, err
		}
		buf.Shape = append(buf.Shape, e)
	}
	seen := map[string]bool{}
	for _, o := range pt.Opts {
		var key string
		switch {
		case o.Scope != nil:
			key = "scope"
			s, err := strconv.Unquote(*o.Scope)
			if err != nil || s == "" {
				return nil, b.Errorf(o.Pos, "malformed buffer scope %s", *o.Scope)
			}
			buf.Scope = s
		case o.Strides != nil:
			key = "strides"
			strides, err := b.exprs(o.Strides.Elems)
			if err != nil {
				return nil, err
			}
			buf.Strides = strides
		case o.Offset != nil:
			key = "offset"
			e, err := b.primary(o.Offset)
			if err != nil {
				return nil, err
			}
			buf.ElemOffset = e
		case o.Align != nil:
			key = "align"
			v, err := strconv.ParseInt(*o.Align, 10, 64)
			if err != nil || v <= 0 {
				return nil, b.Errorf(o.Pos, "buffer alignment must be a positive integer, got %s", *o.Align)
			}
			buf.Align = v
		}
		if seen[key] {
			return nil, b.Errorf(o.Pos, "buffer type gives its %s twice", key)
		}
		seen[key] = true
	}
	return buf, nil
}

func (b *builder) dict(d *pDict) (Attrs, error) {
	out := Attrs{}
	for _, e := range d.Entries {
		k := e.Name
		if strings.HasPrefix(k, `"`) {
			s, err := strconv.Unquote(k)
			if err != nil {
				return nil, b.Errorf(e.Pos, "malformed attribute name %s", k)
			}
			k = s
		}
		if _, dup := out[k]; dup {
			return nil, b.Errorf(e.Pos, "duplicate attribute '%s'", k)
		}
		if e.Value == nil {
			out[k] = UnitAttr{}
			continue
		}
		a, err := b.attr(e.Value)
		if err != nil {
			return nil, err
		}
		out[k] = a
	}
	return out, nil
}

func (b *builder) attr(a *pAttr) (Attr, error) {
	switch {
	case a.Array != nil:
		elems, err := syntax.ConvertAll(a.Array.Elems, b.attr)
		return ArrayAttr(elems), err
	case a.Str != nil:
		s, err := strconv.Unquote(*a.Str)
		if err != nil {
			return nil, b.Errorf(a.Pos, "malformed string %s", *a.Str)
		}
		return StringAttr(s), nil
	case a.Word != nil:
		switch *a.Word {
		case "true":
			return BoolAttr(true), nil
		case "false":
			return BoolAttr(false), nil
		case "nan":
			return FloatAttr(math.NaN()), nil
		}
		return UnitAttr{}, nil
	}
	text := *a.Num
	if text == "inf" {
		if a.Neg {
			return FloatAttr(math.Inf(-1)), nil
		}
		return FloatAttr(math.Inf(1)), nil
	}
	if a.Neg {
		text = "-" + text
	}
	if strings.ContainsAny(text, ".") {
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, b.Errorf(a.Pos, "float attribute %s is out of range", text)
		}
		return FloatAttr(v), nil
	}
	v, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return nil, b.Errorf(a.Pos, "integer attribute %s is out of range", text)
	}
	return IntAttr(v), nil
}

// body converts { stmts } in a new scope.
func (b *builder) body(pb *pBody) (Stmt, error) {
	b.push()
	defer b.pop()
	return b.stmtList(pb.Stmts)
}

func (b *builder) stmtList(ps []*pStmt) (Stmt, error) {
	out := []Stmt{}
	for _, p := range ps {
		s, err := b.stmt(p)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if len(out) == 1 {
		return out[0], nil
	}
	return &SeqStmt{Stmts: out}, nil
}

func (b *builder) stmt(ps *pStmt) (Stmt, error) {
	loc := b.stmtLoc(ps.Loc, ps.Pos)
	switch {
	case ps.For != nil:
		return b.forStmt(ps.For, loc)
	case ps.Block != nil:
		return b.block(ps.Block, loc)
	case ps.If != nil:
		cond, err := b.expr(ps.If.Cond)
		if err != nil {
			return nil, err
		}
		s := &IfThenElse{Cond: cond, Loc: loc}
		if s.Then, err = b.body(ps.If.Then); err != nil {
			return nil, err
		}
		if ps.If.Else != nil {
			if s.Else, err = b.body(ps.If.Else); err != nil {
				return nil, err
			}
		}
		return s, nil
	case ps.Let != nil:
		val, err := b.expr(ps.Let.Value)
		if err != nil {
			return nil, err
		}
		v := NewVar(ps.Let.Var[1:], val.DType())
		b.push()
		defer b.pop()
		if err := b.define(ps.Let.Var, v, ps.Let.Pos); err != nil {
			return nil, err
		}
		body, err := b.body(ps.Let.Body)
		if err != nil {
			return nil, err
		}
		return &LetStmt{Var: v, Value: val, Body: body, Loc: loc}, nil
	case ps.Allocate != nil:
		buf, err := b.bufType(ps.Allocate.Name[1:], ps.Allocate.Type)
		if err != nil {
			return nil, err
		}
		buf.Loc = loc
		b.push()
		defer b.pop()
		if err := b.define(ps.Allocate.Name, buf, ps.Allocate.Pos); err != nil {
			return nil, err
		}
		body, err := b.body(ps.Allocate.Body)
		if err != nil {
			return nil, err
		}
		return &Allocate{Buffer: buf, Body: body, Loc: loc}, nil
	case ps.Const != nil:
		return b.constStmt(ps.Const, loc)
	case ps.Arena != nil:
		return b.arenaStmt(ps.Arena, loc)
	case ps.Call != nil:
		return b.callKernel(ps.Call, loc)
	case ps.Barrier:
		return &Barrier{Loc: loc}, nil
	case ps.Evaluate != nil:
		e, err := b.expr(ps.Evaluate)
		if err != nil {
			return nil, err
		}
		return &Evaluate{Value: e, Loc: loc}, nil
	}
	st := ps.Store
	buf, err := b.bufferRef(st.Buffer, st.Pos)
	if err != nil {
		return nil, err
	}
	idx, err := b.exprs(st.Indices)
	if err != nil {
		return nil, err
	}
	val, err := b.expr(st.Value)
	if err != nil {
		return nil, err
	}
	return &BufferStore{Buffer: buf, Value: val, Indices: idx, Loc: loc}, nil
}

func (b *builder) bufferRef(name string, p lexer.Position) (*Buffer, error) {
	switch x := b.lookup(name[1:]).(type) {
	case *Buffer:
		return x, nil
	case *Var:
		return nil, b.Errorf(p, "%s is a scalar, not a buffer", name)
	}
	return nil, b.Errorf(p, "use of undefined buffer %s", name)
}

func (b *builder) forStmt(pf *pFor, loc Location) (Stmt, error) {
	lo, err := b.expr(pf.Lo)
	if err != nil {
		return nil, err
	}
	hi, err := b.expr(pf.Hi)
	if err != nil {
		return nil, err
	}
	s := &For{Var: NewVar(pf.Var[1:], lo.DType()), Min: lo, Extent: rangeExtent(lo, hi), Loc: loc}
	switch {
	case pf.Thread != nil:
		s.Kind = ThreadBinding
		tag, err := strconv.Unquote(*pf.Thread)
		if err != nil {
			return nil, b.Errorf(pf.Pos, "malformed thread tag %s", *pf.Thread)
		}
		s.Thread = tag
	case pf.Kind != nil:
		s.Kind = map[string]ForKind{"serial": Serial, "parallel": Parallel, "vectorized": Vectorized, "unrolled": Unrolled}[*pf.Kind]
	}
	if pf.Annots != nil {
		if s.Annotations, err = b.dict(pf.Annots); err != nil {
			return nil, err
		}
	}
	b.push()
	defer b.pop()
	if err := b.define(pf.Var, s.Var, pf.Pos); err != nil {
		return nil, err
	}
	if s.Body, err = b.body(pf.Body); err != nil {
		return nil, err
	}
	return s, nil
}

// rangeExtent inverts the printer's rangeText: the extent of [lo, hi).
// Constants fold; a zero minimum makes hi the extent; hi written as
// lo + e gives e; otherwise the extent is hi - lo.
func rangeExtent(lo, hi Expr) Expr {
	l, ok1 := lo.(*IntImm)
	h, ok2 := hi.(*IntImm)
	if ok1 && ok2 && l.Type == h.Type && l.Type.IsInt() && !l.Type.IsBool() {
		return IntOf(l.Type, h.Value-l.Value)
	}
	if ok1 && l.Value == 0 {
		return hi
	}
	if a, ok := hi.(*Binary); ok && a.Op == OpAdd && Equal(a.A, lo) {
		return a.B
	}
	return Sub(hi, lo)
}

func (b *builder) block(pb *pBlock, loc Location) (Stmt, error) {
	blk := &Block{Name: pb.Name, Loc: loc}
	if s, err := strconv.Unquote(pb.Name); err == nil {
		blk.Name = s
	} else {
		return nil, b.Errorf(pb.Pos, "malformed block name %s", pb.Name)
	}
	var values []Expr
	bound := 0
	for _, it := range pb.Iters {
		lo, err := b.expr(it.Lo)
		if err != nil {
			return nil, err
		}
		hi, err := b.expr(it.Hi)
		if err != nil {
			return nil, err
		}
		iv := &IterVar{Var: NewVar(it.Name[1:], lo.DType()), Dom: Range{lo, rangeExtent(lo, hi)}}
		if it.Kind == "reduce" {
			iv.Kind = Reduce
		}
		if it.Value != nil {
			v, err := b.expr(it.Value)
			if err != nil {
				return nil, err
			}
			values = append(values, v)
			bound++
		}
		blk.IterVars = append(blk.IterVars, iv)
	}
	bare := len(blk.IterVars) > 0 && bound == 0 && pb.Where == nil
	if !bare && bound != len(blk.IterVars) {
		return nil, b.Errorf(pb.Pos, "block '%s': every iteration variable needs a binding (kind(min:end, value))", blk.Name)
	}
	b.push()
	defer b.pop()
	for i, iv := range blk.IterVars {
		if err := b.define(pb.Iters[i].Name, iv.Var, pb.Iters[i].Pos); err != nil {
			return nil, err
		}
	}
	var pred Expr
	if pb.Where != nil {
		var err error
		if pred, err = b.expr(pb.Where); err != nil {
			return nil, err
		}
	}
	for _, a := range pb.Allocs {
		buf, err := b.bufType(a.Name[1:], a.Type)
		if err != nil {
			return nil, err
		}
		buf.Loc = b.At(a.Pos)
		if err := b.define(a.Name, buf, a.Pos); err != nil {
			return nil, err
		}
		blk.Allocs = append(blk.Allocs, buf)
	}
	var err error
	if blk.Reads, err = b.regions(pb.Reads); err != nil {
		return nil, err
	}
	if blk.Writes, err = b.regions(pb.Writes); err != nil {
		return nil, err
	}
	if pb.Annots != nil {
		if blk.Annotations, err = b.dict(pb.Annots); err != nil {
			return nil, err
		}
	}
	if pb.Init != nil {
		if blk.Init, err = b.body(pb.Init); err != nil {
			return nil, err
		}
	}
	if blk.Body, err = b.stmtList(pb.Stmts); err != nil {
		return nil, err
	}
	if bare {
		return blk, nil
	}
	return &BlockRealize{Values: values, Predicate: pred, Block: blk, Loc: loc}, nil
}

func (b *builder) regions(ps []*pRegion) ([]BufferRegion, error) {
	var out []BufferRegion
	for _, r := range ps {
		buf, err := b.bufferRef(r.Buffer, r.Pos)
		if err != nil {
			return nil, err
		}
		br := BufferRegion{Buffer: buf, Region: []Range{}}
		for _, d := range r.Dims {
			lo, err := b.expr(d.Lo)
			if err != nil {
				return nil, err
			}
			if d.Hi == nil {
				br.Region = append(br.Region, Range{lo, IntOf(lo.DType(), 1)})
				continue
			}
			hi, err := b.expr(d.Hi)
			if err != nil {
				return nil, err
			}
			br.Region = append(br.Region, Range{lo, rangeExtent(lo, hi)})
		}
		out = append(out, br)
	}
	return out, nil
}

func (b *builder) exprs(ps []*pExpr) ([]Expr, error) { return syntax.ConvertAll(ps, b.expr) }

var binOps = map[string]struct {
	op   BinOp
	prec int
}{
	"||": {OpOr, precOr}, "&&": {OpAnd, precAnd},
	"==": {OpEQ, precCmp}, "!=": {OpNE, precCmp}, "<": {OpLT, precCmp}, "<=": {OpLE, precCmp},
	">": {OpGT, precCmp}, ">=": {OpGE, precCmp},
	"+": {OpAdd, precAdd}, "-": {OpSub, precAdd}, "*": {OpMul, precMul}, "/": {OpDiv, precMul},
}

// expr applies operator precedence to the flat operand/operator list by
// precedence climbing.
func (b *builder) expr(p *pExpr) (Expr, error) {
	left, err := b.unary(p.Left)
	if err != nil {
		return nil, err
	}
	pos := 0
	return b.climb(left, p.Rest, &pos, precOr)
}

// climb folds operators of precedence ≥ min starting at rest[*pos] onto
// left.
func (b *builder) climb(left Expr, rest []*pOpUnary, pos *int, min int) (Expr, error) {
	lastCmp := -1
	for *pos < len(rest) {
		r := rest[*pos]
		op := binOps[r.Op]
		if op.prec < min {
			break
		}
		if op.prec == precCmp {
			if lastCmp >= 0 {
				return nil, b.Errorf(r.Pos, "comparisons do not chain; add parentheses")
			}
			lastCmp = *pos
		}
		*pos++
		right, err := b.unary(r.Right)
		if err != nil {
			return nil, err
		}
		for *pos < len(rest) && binOps[rest[*pos].Op].prec > op.prec {
			if right, err = b.climb(right, rest, pos, op.prec+1); err != nil {
				return nil, err
			}
		}
		left = Bin(op.op, left, right)
	}
	return left, nil
}

func (b *builder) unary(p *pUnary) (Expr, error) {
	if p.Not != nil {
		x, err := b.unary(p.Not)
		if err != nil {
			return nil, err
		}
		return &Not{X: x}, nil
	}
	return b.primary(p.Prim)
}

func (b *builder) primary(p *pPrimary) (Expr, error) {
	switch {
	case p.Num != nil:
		return b.number(p.Num)
	case p.Bool != nil:
		return BoolImm(*p.Bool == "true"), nil
	case p.Cast != nil:
		t, ok := ParseDType(p.Cast.DType)
		if !ok {
			return nil, b.Errorf(p.Cast.Pos, "unknown dtype '%s' in cast", p.Cast.DType)
		}
		x, err := b.expr(p.Cast.X)
		if err != nil {
			return nil, err
		}
		return &Cast{Type: t, X: x}, nil
	case p.Call != nil:
		return b.call(p.Call)
	case p.Ref != nil:
		r := p.Ref
		if r.Load {
			buf, err := b.bufferRef(r.Name, r.Pos)
			if err != nil {
				return nil, err
			}
			idx, err := b.exprs(r.Indices)
			if err != nil {
				return nil, err
			}
			return &BufferLoad{Buffer: buf, Indices: idx}, nil
		}
		switch x := b.lookup(r.Name[1:]).(type) {
		case *Var:
			return x, nil
		case *Buffer:
			return nil, b.Errorf(r.Pos, "buffer %s used as a scalar; load an element with %s[...]", r.Name, r.Name)
		}
		return nil, b.Errorf(r.Pos, "use of undefined value %s", r.Name)
	}
	return b.expr(p.Paren)
}

var callOps = map[string]BinOp{"min": OpMin, "max": OpMax, "floordiv": OpFloorDiv, "floormod": OpFloorMod, "shl": OpShl, "shr": OpShr}

func (b *builder) call(c *pCall) (Expr, error) {
	args, err := b.exprs(c.Args)
	if err != nil {
		return nil, err
	}
	arity := func(n int) error {
		if len(args) != n {
			return b.Errorf(c.Pos, "'%s' expects %d arguments, got %d", c.Name, n, len(args))
		}
		return nil
	}
	if op, ok := callOps[c.Name]; ok {
		if err := arity(2); err != nil {
			return nil, err
		}
		return Bin(op, args[0], args[1]), nil
	}
	if c.Name == "select" {
		if err := arity(3); err != nil {
			return nil, err
		}
		return &Select{Cond: args[0], T: args[1], F: args[2]}, nil
	}
	in, ok := Intrinsics[c.Name]
	if !ok {
		return nil, b.Errorf(c.Pos, "unknown function '%s'", c.Name)
	}
	if err := arity(in.Arity); err != nil {
		return nil, err
	}
	return &Call{Name: c.Name, Args: args}, nil
}

func (b *builder) number(n *pNumber) (Expr, error) {
	var t DType
	if n.DType != nil {
		var ok bool
		if t, ok = ParseDType(*n.DType); !ok {
			return nil, b.Errorf(n.Pos, "unknown dtype '%s'", *n.DType)
		}
		if !t.IsScalar() {
			return nil, b.Errorf(n.Pos, "a literal must have a scalar dtype, not %s", t)
		}
	}
	text := n.Text
	switch {
	case strings.HasPrefix(text, "0x"):
		if n.DType == nil || !t.IsFloat() {
			return nil, b.Errorf(n.Pos, "hexadecimal literal %s needs a float dtype (%s : f32)", text, text)
		}
		if n.Neg {
			return nil, b.Errorf(n.Pos, "hexadecimal literal cannot be negated; give the sign bit")
		}
		if len(text)-2 > t.Bits()/4 {
			return nil, b.Errorf(n.Pos, "hexadecimal literal %s is wider than %s", text, t)
		}
		bits, err := strconv.ParseUint(text[2:], 16, 64)
		if err != nil {
			return nil, b.Errorf(n.Pos, "malformed hexadecimal literal %s", text)
		}
		return &FloatImm{Type: t, Value: floatFromBits(t, bits)}, nil
	case strings.ContainsAny(text, "."):
		if n.DType == nil {
			t = DF32
		} else if !t.IsFloat() {
			return nil, b.Errorf(n.Pos, "float literal %s cannot have dtype %s", text, t)
		}
		bits := 32
		if t.Kind == F64 {
			bits = 64
		}
		v, err := strconv.ParseFloat(text, bits)
		if err != nil {
			return nil, b.Errorf(n.Pos, "float literal %s is out of range for %s", text, t)
		}
		if n.Neg {
			v = -v
		}
		f := Float(t, v)
		if math.IsInf(f.Value, 0) {
			return nil, b.Errorf(n.Pos, "float literal %s is out of range for %s", text, t)
		}
		return f, nil
	}
	if n.DType == nil {
		t = DIndex
	} else if !t.IsInt() {
		return nil, b.Errorf(n.Pos, "integer literal %s cannot have dtype %s; write %s.0", text, t, text)
	}
	if n.Neg {
		text = "-" + text
	}
	v, ok := parseIntText(text, t)
	if !ok {
		return nil, b.Errorf(n.Pos, "integer literal %s is out of range for %s", text, t)
	}
	return &IntImm{Type: t, Value: v}, nil
}

// parseIntText parses a decimal integer of dtype t: ok is false when the
// text is malformed or the value is outside t's range. A ui64 value is
// returned as its bit pattern.
func parseIntText(text string, t DType) (int64, bool) {
	if t.Kind == UI64 {
		u, err := strconv.ParseUint(text, 10, 64)
		return int64(u), err == nil
	}
	v, err := strconv.ParseInt(text, 10, 64)
	return v, err == nil && WrapInt(t, v) == v
}

func (b *builder) constStmt(pc *pConst, loc Location) (Stmt, error) {
	buf, err := b.bufType(pc.Name[1:], pc.Type)
	if err != nil {
		return nil, err
	}
	buf.Loc = loc
	s := &AllocateConst{Buffer: buf, Elided: pc.Elided, Loc: loc}
	if !pc.Elided {
		t := buf.DType
		if t.IsFloat() {
			s.Floats = make([]float64, 0, len(pc.Elems))
		} else {
			s.Ints = make([]int64, 0, len(pc.Elems))
		}
		for _, e := range pc.Elems {
			text := e.Text
			switch {
			case t.IsFloat() && strings.HasPrefix(text, "0x"):
				if e.Neg || len(text)-2 > t.Bits()/4 {
					return nil, b.Errorf(e.Pos, "malformed %s bit pattern %s", t, text)
				}
				bits, err := strconv.ParseUint(text[2:], 16, 64)
				if err != nil {
					return nil, b.Errorf(e.Pos, "malformed %s bit pattern %s", t, text)
				}
				s.Floats = append(s.Floats, floatFromBits(t, bits))
			case t.IsFloat():
				if e.Neg {
					text = "-" + text
				}
				bits := 32
				if t.Kind == F64 {
					bits = 64
				}
				v, err := strconv.ParseFloat(text, bits)
				if err != nil || RoundFloat(t, v) != v {
					return nil, b.Errorf(e.Pos, "constant element %s is not a value of %s", text, t)
				}
				s.Floats = append(s.Floats, v)
			default:
				if e.Neg {
					text = "-" + text
				}
				v, ok := parseIntText(text, t)
				if !ok {
					return nil, b.Errorf(e.Pos, "constant element %s is not a value of %s", text, t)
				}
				s.Ints = append(s.Ints, v)
			}
		}
	}
	b.push()
	defer b.pop()
	if err := b.define(pc.Name, buf, pc.Pos); err != nil {
		return nil, err
	}
	if s.Body, err = b.body(pc.Body); err != nil {
		return nil, err
	}
	return s, nil
}

func (b *builder) arenaStmt(pa *pArena, loc Location) (Stmt, error) {
	size, err := b.dim(pa.Size, "arena size")
	if err != nil {
		return nil, err
	}
	s := &ArenaAlloc{Size: size, Loc: loc}
	b.push()
	defer b.pop()
	for _, pb := range pa.Bufs {
		buf, err := b.bufType(pb.Name[1:], pb.Type)
		if err != nil {
			return nil, err
		}
		buf.Loc = b.At(pb.Pos)
		off, err := b.dim(pb.Offset, "arena offset")
		if err != nil {
			return nil, err
		}
		if err := b.define(pb.Name, buf, pb.Pos); err != nil {
			return nil, err
		}
		s.Buffers = append(s.Buffers, buf)
		s.Offsets = append(s.Offsets, off)
	}
	if s.Body, err = b.body(pa.Body); err != nil {
		return nil, err
	}
	return s, nil
}

// dim is an integer literal or a parenthesized expression (a buffer
// dimension, an arena size or offset); what names it in errors.
func (b *builder) dim(d *pDim, what string) (Expr, error) {
	if d.Int == nil {
		return b.expr(d.Expr)
	}
	v, err := strconv.ParseInt(*d.Int, 10, 64)
	if err != nil {
		return nil, b.Errorf(d.Pos, "%s %s is out of range", what, *d.Int)
	}
	return Int(v), nil
}

func (b *builder) callKernel(pc *pCallK, loc Location) (Stmt, error) {
	name := pc.Callee[1:]
	if strings.HasPrefix(name, `"`) {
		u, err := strconv.Unquote(name)
		if err != nil {
			return nil, b.Errorf(pc.Pos, "malformed function name %s", pc.Callee)
		}
		name = u
	}
	s := &CallKernel{Callee: name, Args: []*Buffer{}, Loc: loc}
	for _, a := range pc.Args {
		if v, ok := b.lookup(a[1:]).(*Var); ok {
			if len(s.Args) > 0 {
				return nil, b.Errorf(pc.Pos, "tir.call %s: scalar argument %s after a buffer argument (scalars come first)", pc.Callee, a)
			}
			s.Scalars = append(s.Scalars, v)
			continue
		}
		buf, err := b.bufferRef(a, pc.Pos)
		if err != nil {
			return nil, err
		}
		s.Args = append(s.Args, buf)
	}
	return s, nil
}
