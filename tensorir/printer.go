package tensorir

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tessera-ml/tessera/internal/syntax"
)

// Print renders m in the canonical text form documented in README.md.
// Parse(Print(m)) prints back to the same text for every verified module.
func Print(m *Module) string { return PrintWith(m, PrintOptions{}) }

// PrintWith renders m with the given options.
func PrintWith(m *Module, opts PrintOptions) string {
	var b strings.Builder
	for i, f := range m.Funcs {
		if i > 0 {
			b.WriteString("\n")
		}
		b.WriteString(PrintFunc(f, opts))
	}
	return b.String()
}

// PrintFunc renders one function.
func PrintFunc(f *PrimFunc, opts PrintOptions) string {
	p := newPrinter(opts)
	p.fn(f)
	return p.b.String()
}

// PrintStmt renders a statement (names of variables not defined in it are
// printed as they are); for debugging and diagnostics.
func PrintStmt(s Stmt) string {
	p := newPrinter(PrintOptions{})
	p.stmt(s, 0)
	return strings.TrimSuffix(p.b.String(), "\n")
}

// ExprString renders an expression as it appears in the text form.
func ExprString(e Expr) string {
	p := newPrinter(PrintOptions{})
	p.expr(e, precLowest)
	return p.b.String()
}

// PrintOptions control the text form.
type PrintOptions struct {
	// DebugInfo prints statement, parameter and function locations as a
	// trailing loc("file":line:col).
	DebugInfo bool
	// ElideConstantsLargerThan prints the data of tir.constant buffers
	// with more elements than this as dense_resource<__elided__>
	// (0: never elide).
	ElideConstantsLargerThan int64
}

type printer struct {
	b       strings.Builder
	opts    PrintOptions
	names   map[any]string
	live    map[string]int // names of definitions in scope
	pending map[*Var]string
}

func newPrinter(opts PrintOptions) *printer {
	return &printer{opts: opts, names: map[any]string{}, live: map[string]int{}, pending: map[*Var]string{}}
}

// define names a variable or buffer, renaming it when its name is not a
// valid identifier or is already taken by a definition in scope. The
// caller undefines it when the scope ends.
func (p *printer) define(obj any, name string) string {
	name = sanitizeName(name)
	cand := name
	for i := 1; p.live[cand] > 0; i++ {
		cand = name + "_" + strconv.Itoa(i)
	}
	p.live[cand]++
	p.names[obj] = cand
	return cand
}

func (p *printer) undefine(obj any) {
	if n, ok := p.names[obj]; ok {
		p.live[n]--
		delete(p.names, obj)
	}
}

func (p *printer) name(obj any, fallback string) string {
	if n, ok := p.names[obj]; ok {
		return n
	}
	return sanitizeName(fallback)
}

// vname and bname are the names of possibly nil variables and buffers
// (nil only in IR built incorrectly through the API).
func vname(v *Var) string {
	if v == nil {
		return "<nil>"
	}
	return v.Name
}

func bname(b *Buffer) string {
	if b == nil {
		return "<nil>"
	}
	return b.Name
}

func sanitizeName(s string) string {
	if s == "" {
		return "v"
	}
	var b []byte
	for i := 0; i < len(s); i++ {
		if c := s[i]; syntax.IsSuffixChar(c) {
			b = append(b, c)
		} else {
			b = append(b, '_')
		}
	}
	return string(b)
}

func (p *printer) indent(n int) {
	for i := 0; i < n; i++ {
		p.b.WriteString("  ")
	}
}

func (p *printer) loc(l Location) { syntax.WriteLoc(&p.b, l, p.opts.DebugInfo) }

func (p *printer) fn(f *PrimFunc) {
	p.b.WriteString("tir.func @")
	p.b.WriteString(symbolText(f.Name))
	p.b.WriteString("(")
	for i, a := range f.Params {
		if i > 0 {
			p.b.WriteString(", ")
		}
		if a.Role != RoleIn {
			p.b.WriteString(a.Role.String())
			p.b.WriteString(" ")
		}
		if a.Buffer != nil {
			p.b.WriteString("%" + p.define(a.Buffer, a.Buffer.Name) + ": ")
			p.bufType(a.Buffer)
		} else if a.Var != nil {
			p.b.WriteString("%" + p.define(a.Var, a.Var.Name) + ": " + a.Var.Type.String())
		}
		p.loc(a.Loc)
	}
	p.b.WriteString(")")
	if len(f.Attrs) > 0 {
		p.b.WriteString(" attributes ")
		p.dict(f.Attrs)
	}
	p.b.WriteString(" ")
	p.body(f.Body, 0)
	p.loc(f.Loc)
	p.b.WriteString("\n")
}

func symbolText(s string) string {
	if syntax.IsBareID(s) {
		return s
	}
	return strconv.Quote(s)
}

// dim prints a buffer dimension, an arena size or offset: a non-negative
// index constant as an integer, anything else in parentheses.
func (p *printer) dim(d Expr) {
	if c, ok := d.(*IntImm); ok && c.Type == DIndex && c.Value >= 0 {
		p.b.WriteString(strconv.FormatInt(c.Value, 10))
		return
	}
	p.b.WriteString("(")
	p.expr(d, precLowest)
	p.b.WriteString(")")
}

// bufType prints buffer<128x64xf32, "shared", strides = [64, 1], offset = 0, align = 64>.
func (p *printer) bufType(b *Buffer) {
	if b == nil {
		p.b.WriteString("<nil>")
		return
	}
	p.b.WriteString("buffer<")
	for _, d := range b.Shape {
		p.dim(d)
		p.b.WriteString("x")
	}
	p.b.WriteString(b.DType.String())
	if b.Scope != "" && b.Scope != ScopeGlobal {
		p.b.WriteString(", " + strconv.Quote(b.Scope))
	}
	if b.Strides != nil {
		p.b.WriteString(", strides = [")
		p.exprList(b.Strides)
		p.b.WriteString("]")
	}
	if b.ElemOffset != nil {
		p.b.WriteString(", offset = ")
		p.expr(b.ElemOffset, precPrimary)
	}
	if b.Align != 0 {
		p.b.WriteString(", align = " + strconv.FormatInt(b.Align, 10))
	}
	p.b.WriteString(">")
}

func (p *printer) dict(a Attrs) {
	p.b.WriteString("{")
	for i, k := range a.Keys() {
		if i > 0 {
			p.b.WriteString(", ")
		}
		p.b.WriteString(keyText(k))
		if _, unit := a[k].(UnitAttr); !unit {
			p.b.WriteString(" = ")
			p.attr(a[k])
		}
	}
	p.b.WriteString("}")
}

func keyText(k string) string {
	if syntax.IsBareID(k) && !reservedAttrWord[k] {
		return k
	}
	return strconv.Quote(k)
}

var reservedAttrWord = map[string]bool{"true": true, "false": true, "loc": true}

func (p *printer) attr(a Attr) {
	switch v := a.(type) {
	case UnitAttr:
		p.b.WriteString("unit")
	case BoolAttr:
		p.b.WriteString(strconv.FormatBool(bool(v)))
	case IntAttr:
		p.b.WriteString(strconv.FormatInt(int64(v), 10))
	case FloatAttr:
		f := float64(v)
		switch {
		case math.IsNaN(f):
			p.b.WriteString("nan")
		case math.IsInf(f, 1):
			p.b.WriteString("inf")
		case math.IsInf(f, -1):
			p.b.WriteString("-inf")
		default:
			p.b.WriteString(syntax.FormatFloat(f, 64))
		}
	case StringAttr:
		p.b.WriteString(strconv.Quote(string(v)))
	case ArrayAttr:
		p.b.WriteString("[")
		for i, e := range v {
			if i > 0 {
				p.b.WriteString(", ")
			}
			p.attr(e)
		}
		p.b.WriteString("]")
	default:
		p.b.WriteString("unit")
	}
}

// body prints { stmts } starting at the current position; the closing
// brace is indented to depth.
func (p *printer) body(s Stmt, depth int) {
	p.b.WriteString("{\n")
	p.stmts(s, depth+1)
	p.indent(depth)
	p.b.WriteString("}")
}

func (p *printer) stmts(s Stmt, depth int) {
	if q, ok := s.(*SeqStmt); ok {
		for _, x := range q.Stmts {
			p.stmts(x, depth)
		}
		return
	}
	if s != nil {
		p.stmt(s, depth)
	}
}

func (p *printer) stmt(s Stmt, depth int) {
	if q, ok := s.(*SeqStmt); ok {
		p.stmts(q, depth)
		return
	}
	p.indent(depth)
	switch x := s.(type) {
	case *For:
		p.b.WriteString("tir.for %" + p.define(x.Var, vname(x.Var)) + " = ")
		p.rangeText(x.Min, x.Extent, " to ")
		switch x.Kind {
		case Serial:
		case ThreadBinding:
			p.b.WriteString(" thread_binding(" + strconv.Quote(x.Thread) + ")")
		default:
			p.b.WriteString(" " + x.Kind.String())
		}
		if len(x.Annotations) > 0 {
			p.b.WriteString(" annotations ")
			p.dict(x.Annotations)
		}
		p.b.WriteString(" ")
		p.body(x.Body, depth)
		p.undefine(x.Var)
	case *BlockRealize:
		p.block(x.Block, x.Values, x.Predicate, depth)
	case *Block:
		p.block(x, nil, nil, depth)
	case *BufferStore:
		p.b.WriteString("%" + p.name(x.Buffer, bname(x.Buffer)) + "[")
		p.exprList(x.Indices)
		p.b.WriteString("] = ")
		p.expr(x.Value, precLowest)
	case *Allocate:
		p.b.WriteString("tir.allocate %" + p.define(x.Buffer, bname(x.Buffer)) + ": ")
		p.bufType(x.Buffer)
		p.b.WriteString(" ")
		p.body(x.Body, depth)
		p.undefine(x.Buffer)
	case *IfThenElse:
		p.b.WriteString("tir.if ")
		p.expr(x.Cond, precLowest)
		p.b.WriteString(" ")
		p.body(x.Then, depth)
		if x.Else != nil {
			p.b.WriteString(" else ")
			p.body(x.Else, depth)
		}
	case *LetStmt:
		p.b.WriteString("tir.let %" + p.define(x.Var, vname(x.Var)) + " = ")
		p.expr(x.Value, precLowest)
		p.b.WriteString(" ")
		p.body(x.Body, depth)
		p.undefine(x.Var)
	case *Barrier:
		p.b.WriteString("tir.barrier")
	case *Evaluate:
		p.b.WriteString("tir.evaluate ")
		p.expr(x.Value, precLowest)
	case *CallKernel:
		p.b.WriteString("tir.call @" + symbolText(x.Callee) + "(")
		for i, e := range x.Scalars {
			if i > 0 {
				p.b.WriteString(", ")
			}
			p.expr(e, precPrimary)
		}
		for i, a := range x.Args {
			if i > 0 || len(x.Scalars) > 0 {
				p.b.WriteString(", ")
			}
			p.b.WriteString("%" + p.name(a, bname(a)))
		}
		p.b.WriteString(")")
	case *AllocateConst:
		p.b.WriteString("tir.constant %" + p.define(x.Buffer, bname(x.Buffer)) + ": ")
		p.bufType(x.Buffer)
		p.b.WriteString(" = ")
		p.constData(x)
		p.b.WriteString(" ")
		p.body(x.Body, depth)
		p.undefine(x.Buffer)
	case *ArenaAlloc:
		p.b.WriteString("tir.arena ")
		p.dim(x.Size)
		p.b.WriteString(" (")
		for i, b := range x.Buffers {
			if i > 0 {
				p.b.WriteString(", ")
			}
			p.b.WriteString("%" + p.define(b, bname(b)) + ": ")
			p.bufType(b)
			if i < len(x.Offsets) {
				p.b.WriteString(" at ")
				p.dim(x.Offsets[i])
			}
		}
		p.b.WriteString(") ")
		p.body(x.Body, depth)
		for _, b := range x.Buffers {
			p.undefine(b)
		}
	default:
		p.b.WriteString(fmt.Sprintf("tir.evaluate 0 // unknown statement %T", s))
	}
	p.loc(s.Location())
	p.b.WriteString("\n")
}

func (p *printer) block(b *Block, values []Expr, pred Expr, depth int) {
	if b == nil {
		p.b.WriteString("tir.block <nil>")
		return
	}
	p.b.WriteString("tir.block " + strconv.Quote(b.Name) + "(")
	for i, iv := range b.IterVars {
		if i > 0 {
			p.b.WriteString(", ")
		}
		if iv == nil {
			p.b.WriteString("<nil>")
			continue
		}
		// Iteration domains and bindings are outside the block's scope.
		p.b.WriteString("%" + p.predefine(iv.Var) + " = " + iv.Kind.String() + "(")
		p.rangeText(iv.Dom.Min, iv.Dom.Extent, ":")
		if i < len(values) {
			p.b.WriteString(", ")
			p.expr(values[i], precLowest)
		}
		p.b.WriteString(")")
	}
	p.b.WriteString(")")
	for _, iv := range b.IterVars {
		if iv != nil {
			p.activate(iv.Var)
		}
	}
	if pred != nil {
		p.b.WriteString(" where(")
		p.expr(pred, precLowest)
		p.b.WriteString(")")
	}
	for _, a := range b.Allocs {
		p.define(a, a.Name)
	}
	p.regions(" reads", b.Reads)
	p.regions(" writes", b.Writes)
	if len(b.Allocs) > 0 {
		p.b.WriteString(" alloc(")
		for i, a := range b.Allocs {
			if i > 0 {
				p.b.WriteString(", ")
			}
			p.b.WriteString("%" + p.name(a, a.Name) + ": ")
			p.bufType(a)
		}
		p.b.WriteString(")")
	}
	if len(b.Annotations) > 0 {
		p.b.WriteString(" annotations ")
		p.dict(b.Annotations)
	}
	p.b.WriteString(" {\n")
	if b.Init != nil {
		p.indent(depth + 1)
		p.b.WriteString("tir.init ")
		p.body(b.Init, depth+1)
		p.b.WriteString("\n")
	}
	p.stmts(b.Body, depth+1)
	p.indent(depth)
	p.b.WriteString("}")
	for _, a := range b.Allocs {
		p.undefine(a)
	}
	for _, iv := range b.IterVars {
		if iv != nil {
			p.undefine(iv.Var)
		}
	}
}

// predefine chooses v's name (unique among the names in scope, which it
// reserves) without making v resolvable; activate does that.
func (p *printer) predefine(v *Var) string {
	n := p.define(v, vname(v))
	delete(p.names, v)
	p.pending[v] = n
	return n
}

func (p *printer) activate(v *Var) {
	if n, ok := p.pending[v]; ok {
		p.names[v] = n
		delete(p.pending, v)
	}
}

func (p *printer) regions(kw string, rs []BufferRegion) {
	if len(rs) == 0 {
		return
	}
	p.b.WriteString(kw + "(")
	for i, r := range rs {
		if i > 0 {
			p.b.WriteString(", ")
		}
		p.b.WriteString("%" + p.name(r.Buffer, bname(r.Buffer)) + "[")
		for j, rg := range r.Region {
			if j > 0 {
				p.b.WriteString(", ")
			}
			if c, ok := rg.Extent.(*IntImm); ok && c.Value == 1 && rg.Min != nil && c.Type == rg.Min.DType() {
				p.expr(rg.Min, precLowest)
			} else {
				p.rangeText(rg.Min, rg.Extent, ":")
			}
		}
		p.b.WriteString("]")
	}
	p.b.WriteString(")")
}

// rangeText prints [lo, lo+extent) as "lo SEP end". The parser recovers
// the extent exactly (see rangeExtent): constants fold, a zero minimum
// makes end the extent, otherwise end is printed as lo + extent.
//
// After ":" an end that starts with a call (floormod(...) + 2) is printed
// in parentheses: a number literal ending lo would otherwise read the
// call's name as its dtype suffix (-1:floormod is the literal -1 of dtype
// "floormod" to the parser).
func (p *printer) rangeText(lo, extent Expr, sep string) {
	p.expr(lo, precLowest)
	p.b.WriteString(sep)
	l, ok1 := lo.(*IntImm)
	e, ok2 := extent.(*IntImm)
	var end Expr
	switch {
	case ok1 && ok2 && l.Type == e.Type && l.Type.IsInt() && !l.Type.IsBool() && addExact(l.Type, l.Value, e.Value):
		end = IntOf(l.Type, l.Value+e.Value)
	case ok1 && l.Value == 0:
		end = extent
	default:
		end = Add(lo, extent)
	}
	if sep != ":" {
		p.expr(end, precLowest)
		return
	}
	q := &printer{opts: p.opts, names: p.names, live: p.live, pending: p.pending}
	q.expr(end, precLowest)
	text := q.b.String()
	if text != "" && (text[0] >= 'a' && text[0] <= 'z' || text[0] >= 'A' && text[0] <= 'Z') {
		text = "(" + text + ")"
	}
	p.b.WriteString(text)
}

func (p *printer) exprList(es []Expr) {
	for i, e := range es {
		if i > 0 {
			p.b.WriteString(", ")
		}
		p.expr(e, precLowest)
	}
}

// Operator precedences, lowest first.
const (
	precLowest = iota
	precOr
	precAnd
	precCmp
	precAdd
	precMul
	precUnary
	precPrimary
)

var infix = map[BinOp]struct {
	text string
	prec int
}{
	OpOr: {"||", precOr}, OpAnd: {"&&", precAnd},
	OpEQ: {"==", precCmp}, OpNE: {"!=", precCmp}, OpLT: {"<", precCmp}, OpLE: {"<=", precCmp},
	OpGT: {">", precCmp}, OpGE: {">=", precCmp},
	OpAdd: {"+", precAdd}, OpSub: {"-", precAdd}, OpMul: {"*", precMul}, OpDiv: {"/", precMul},
}

// expr prints e, parenthesized when its precedence is below min.
func (p *printer) expr(e Expr, min int) {
	switch x := e.(type) {
	case *Binary:
		op, ok := infix[x.Op]
		if !ok {
			p.call(x.Op.String(), x.A, x.B)
			return
		}
		if op.prec < min {
			p.b.WriteString("(")
		}
		right := op.prec + 1
		left := op.prec
		if op.prec == precCmp {
			left = op.prec + 1
		}
		p.expr(x.A, left)
		p.b.WriteString(" " + op.text + " ")
		p.expr(x.B, right)
		if op.prec < min {
			p.b.WriteString(")")
		}
	case *Not:
		if precUnary < min {
			p.b.WriteString("(")
		}
		p.b.WriteString("!")
		p.expr(x.X, precUnary)
		if precUnary < min {
			p.b.WriteString(")")
		}
	case *IntImm:
		p.b.WriteString(intText(x))
	case *FloatImm:
		p.b.WriteString(floatText(x))
	case *Var:
		p.b.WriteString("%" + p.name(x, vname(x)))
	case *BufferLoad:
		p.b.WriteString("%" + p.name(x.Buffer, bname(x.Buffer)) + "[")
		p.exprList(x.Indices)
		p.b.WriteString("]")
	case *Select:
		p.call("select", x.Cond, x.T, x.F)
	case *Cast:
		p.b.WriteString("cast<" + x.Type.String() + ">(")
		p.expr(x.X, precLowest)
		p.b.WriteString(")")
	case *Call:
		p.call(x.Name, x.Args...)
	case nil:
		p.b.WriteString("<nil>")
	default:
		p.b.WriteString(fmt.Sprintf("<%T>", e))
	}
}

func (p *printer) call(name string, args ...Expr) {
	p.b.WriteString(name + "(")
	p.exprList(args)
	p.b.WriteString(")")
}

// intText prints an integer constant: true/false for i1, otherwise the
// decimal value with a ": dtype" suffix unless the dtype is index.
func intText(x *IntImm) string {
	if x.Type == DBool {
		if x.Value != 0 {
			return "true"
		}
		return "false"
	}
	s := intString(x.Type, x.Value)
	if x.Type != DIndex {
		s += " : " + x.Type.String()
	}
	return s
}

// intString is integer v of dtype t in decimal (ui64 bit patterns as
// unsigned).
func intString(t DType, v int64) string {
	if t.Kind == UI64 {
		return strconv.FormatUint(uint64(v), 10)
	}
	return strconv.FormatInt(v, 10)
}

// floatText prints a float constant as the shortest decimal that reads
// back exactly, with a ": dtype" suffix unless the dtype is f32;
// non-finite values print as their bit pattern in hex (0x7F800000 : f32).
func floatText(x *FloatImm) string {
	if math.IsInf(x.Value, 0) || math.IsNaN(x.Value) || !x.Type.IsFloat() {
		digits := x.Type.Bits() / 4
		if digits == 0 {
			digits = 16
		}
		return fmt.Sprintf("0x%0*X : %s", digits, floatToBits(x.Type, x.Value), x.Type)
	}
	bits := 32
	if x.Type.Kind == F64 {
		bits = 64
	}
	s := syntax.FormatFloat(x.Value, bits)
	if x.Type != DF32 {
		s += " : " + x.Type.String()
	}
	return s
}

// addExact reports whether a+b fits dtype t without wrapping.
func addExact(t DType, a, b int64) bool {
	s := a + b
	if (b >= 0) != (s >= a) {
		return false
	}
	return WrapInt(t, s) == s
}

// constData prints the data of a tir.constant: dense<[v, ...]> row-major
// (floats as the shortest decimal of their dtype, non-finite values as
// their bit pattern in hex), or dense_resource<__elided__>.
func (p *printer) constData(x *AllocateConst) {
	n := x.Len()
	if x.Elided || p.opts.ElideConstantsLargerThan > 0 && int64(n) > p.opts.ElideConstantsLargerThan {
		p.b.WriteString("dense_resource<__elided__>")
		return
	}
	t := DF32
	if x.Buffer != nil {
		t = x.Buffer.DType
	}
	p.b.WriteString("dense<[")
	for i, v := range x.FloatValues() {
		if i > 0 {
			p.b.WriteString(", ")
		}
		p.b.WriteString(constFloatText(t, v))
	}
	for i, v := range x.Ints {
		if i > 0 {
			p.b.WriteString(", ")
		}
		p.b.WriteString(intString(t, v))
	}
	p.b.WriteString("]>")
}

func constFloatText(t DType, v float64) string {
	if !t.IsFloat() {
		t = DF64
	}
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return fmt.Sprintf("0x%0*X", t.Bits()/4, floatToBits(t, v))
	}
	bits := 32
	if t.Kind == F64 {
		bits = 64
	}
	return syntax.FormatFloat(v, bits)
}
