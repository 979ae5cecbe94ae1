package graphir

import (
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/tessera-ml/tessera/internal/syntax"
)

// PrintOptions control the textual form.
type PrintOptions struct {
	// Generic prints every op, func.func and the module in MLIR's generic form.
	Generic bool
	// DebugInfo prints each op's location as a trailing loc("file":line:col).
	DebugInfo bool
	// ElideLargerThan elides dense constants with more elements than this
	// as dense_resource<__elided__>; 0 prints everything.
	ElideLargerThan int64
	// HexLargerThan prints dense constants with more elements than this
	// in MLIR's hexadecimal form dense<"0x..."> (little-endian element
	// bytes; exact and much faster to print and parse than decimals, as
	// mlir-opt's --mlir-print-elementsattrs-with-hex-if-larger); 0 never.
	// f16, bf16 and i1 constants always print in decimal.
	HexLargerThan int64
}

type printOptions = PrintOptions

// DefaultElideThreshold is the element count above which tools elide constants.
const DefaultElideThreshold = 256

// Print renders m in Tessera's canonical text form (pretty forms where ops
// declare one, no locations, all constants in full).
func Print(m *Module) string { return PrintWith(m, PrintOptions{}) }

// PrintWith renders m with the given options.
func PrintWith(m *Module, opts PrintOptions) string {
	p := &printer{opts: opts}
	p.module(m)
	return p.b.String()
}

// PrintOp renders a single op (and its regions) with fresh value names; for
// diagnostics and debugging.
func PrintOp(op *Op, opts PrintOptions) string {
	p := &printer{opts: opts, names: map[*Value]string{}}
	p.op(op, 0)
	return strings.TrimSuffix(p.b.String(), "\n")
}

type printer struct {
	b       strings.Builder
	opts    PrintOptions
	names   map[*Value]string
	nextID  int
	nextArg int
}

func (p *printer) indent(n int) {
	for i := 0; i < n; i++ {
		p.b.WriteString("  ")
	}
}

func (p *printer) module(m *Module) {
	if p.opts.Generic {
		p.b.WriteString("\"builtin.module\"() ({\n")
	} else {
		p.b.WriteString("module")
		if m.Name != "" {
			p.b.WriteString(" @" + symbolName(m.Name))
		}
		if len(m.Attrs) > 0 {
			p.b.WriteString(" attributes ")
			writeDict(&p.b, m.Attrs, p.opts)
		}
		p.b.WriteString(" {\n")
	}
	for i, f := range m.Funcs {
		if i > 0 {
			p.b.WriteByte('\n')
		}
		p.fn(f)
	}
	if p.opts.Generic {
		p.b.WriteString("}) ")
		attrs := m.Attrs
		if m.Name != "" {
			attrs = append(DictAttr(nil), attrs...).Set("sym_name", StringAttr(m.Name))
		}
		if len(attrs) > 0 {
			writeDict(&p.b, attrs, p.opts)
			p.b.WriteByte(' ')
		}
		p.b.WriteString(": () -> ()")
		p.loc(m.Loc)
		p.b.WriteString("\n")
		return
	}
	p.b.WriteString("}")
	p.loc(m.Loc)
	p.b.WriteString("\n")
}

func (p *printer) fn(f *Func) {
	p.names = make(map[*Value]string)
	p.nextID, p.nextArg = 0, 0
	args := f.Args()
	for _, a := range args {
		p.names[a] = "%arg" + strconv.Itoa(p.nextArg)
		p.nextArg++
	}
	if p.opts.Generic {
		p.genericFn(f)
		return
	}
	p.indent(1)
	p.b.WriteString("func.func ")
	if f.Private {
		p.b.WriteString("private ")
	}
	p.b.WriteString("@" + symbolName(f.Name) + "(")
	for i, a := range args {
		if i > 0 {
			p.b.WriteString(", ")
		}
		p.b.WriteString(p.names[a] + ": " + a.Type.String())
	}
	p.b.WriteString(")")
	if len(f.Type.Results) > 0 {
		p.b.WriteString(" -> ")
		if len(f.Type.Results) == 1 {
			if _, isFn := f.Type.Results[0].(*FunctionType); !isFn {
				p.b.WriteString(f.Type.Results[0].String())
			}
		}
		if len(f.Type.Results) != 1 {
			p.b.WriteByte('(')
			writeTypeList(&p.b, f.Type.Results)
			p.b.WriteByte(')')
		}
	}
	if len(f.Attrs) > 0 {
		p.b.WriteString(" attributes ")
		writeDict(&p.b, f.Attrs, p.opts)
	}
	p.b.WriteString(" {\n")
	for op := f.Entry().First(); op != nil; op = op.Next() {
		p.op(op, 2)
	}
	p.indent(1)
	p.b.WriteString("}")
	p.loc(f.Loc)
	p.b.WriteString("\n")
}

func (p *printer) genericFn(f *Func) {
	p.indent(1)
	p.b.WriteString("\"func.func\"() (")
	p.region(f.Body, 1, true)
	p.b.WriteString(") ")
	attrs := append(DictAttr(nil), f.Attrs...)
	attrs = attrs.Set("function_type", &TypeAttr{f.Type}).Set("sym_name", StringAttr(f.Name))
	if f.Private {
		attrs = attrs.Set("sym_visibility", StringAttr("private"))
	}
	writeDict(&p.b, attrs, p.opts)
	p.b.WriteString(" : () -> ()")
	p.loc(f.Loc)
	p.b.WriteString("\n")
}

func (p *printer) name(v *Value) string {
	if v == nil {
		return "%<null>"
	}
	if n, ok := p.names[v]; ok {
		return n
	}
	return "%<undefined>"
}

func (p *printer) op(op *Op, depth int) {
	p.indent(depth)
	if len(op.Results) > 0 {
		id := "%" + strconv.Itoa(p.nextID)
		p.nextID++
		if len(op.Results) == 1 {
			p.names[op.Results[0]] = id
			p.b.WriteString(id)
		} else {
			for i, r := range op.Results {
				p.names[r] = id + "#" + strconv.Itoa(i)
			}
			p.b.WriteString(id + ":" + strconv.Itoa(len(op.Results)))
		}
		p.b.WriteString(" = ")
	}
	if !p.opts.Generic && len(op.Regions) == 0 && op.Def != nil && (op.Def.Pretty || op.Name == ReturnOpName) {
		p.prettyOp(op)
	} else {
		p.genericOp(op, depth)
	}
	p.loc(op.Loc)
	p.b.WriteByte('\n')
}

func (p *printer) operandList(op *Op) {
	for i, v := range op.Operands() {
		if i > 0 {
			p.b.WriteString(", ")
		}
		p.b.WriteString(p.name(v))
	}
}

func (p *printer) prettyOp(op *Op) {
	p.b.WriteString(op.Name)
	if op.NumOperands() > 0 {
		p.b.WriteByte(' ')
		p.operandList(op)
	}
	if len(op.Attrs) > 0 {
		p.b.WriteByte(' ')
		writeDict(&p.b, op.Attrs, p.opts)
	}
	if isReturnLike(op.Def) {
		if op.NumOperands() > 0 {
			p.b.WriteString(" : ")
			writeTypeList(&p.b, valueTypes(op.Operands()))
		}
		return
	}
	p.b.WriteString(" : ")
	if t := uniformType(op); t != nil {
		p.b.WriteString(t.String())
		return
	}
	p.b.WriteString(opFunctionType(op).String())
}

// isReturnLike reports whether ops of def print their pretty form like
// func.return: `name %a, %b : T1, T2` (terminators without results).
func isReturnLike(def *OpDef) bool {
	return def.Traits&Terminator != 0 && def.Results.Max == 0
}

// uniformType returns the single type shared by all operands and results of
// an op with at least one result, or nil.
func uniformType(op *Op) Type {
	if len(op.Results) == 0 {
		return nil
	}
	t := op.Results[0].Type
	if _, isFn := t.(*FunctionType); isFn {
		return nil
	}
	for _, r := range op.Results[1:] {
		if !r.Type.Equal(t) {
			return nil
		}
	}
	for _, o := range op.Operands() {
		if o == nil || !o.Type.Equal(t) {
			return nil
		}
	}
	return t
}

func valueTypes(vs []*Value) []Type {
	ts := make([]Type, len(vs))
	for i, v := range vs {
		if v != nil {
			ts[i] = v.Type
		} else {
			ts[i] = &ScalarType{}
		}
	}
	return ts
}

func opFunctionType(op *Op) *FunctionType {
	return &FunctionType{Inputs: valueTypes(op.Operands()), Results: valueTypes(op.Results)}
}

func (p *printer) genericOp(op *Op, depth int) {
	p.b.WriteString(syntax.Quote(op.Name))
	p.b.WriteByte('(')
	p.operandList(op)
	p.b.WriteByte(')')
	if len(op.Regions) > 0 {
		p.b.WriteString(" (")
		for i, r := range op.Regions {
			if i > 0 {
				p.b.WriteString(", ")
			}
			p.region(r, depth, false)
		}
		p.b.WriteByte(')')
	}
	if len(op.Attrs) > 0 {
		p.b.WriteByte(' ')
		writeDict(&p.b, op.Attrs, p.opts)
	}
	p.b.WriteString(" : ")
	p.b.WriteString(opFunctionType(op).String())
}

// region prints {...}; block labels are printed for blocks with arguments
// and for every block after the first.
func (p *printer) region(r *Region, depth int, funcBody bool) {
	p.b.WriteString("{\n")
	for bi, b := range r.Blocks {
		if !funcBody || bi > 0 {
			for _, a := range b.Args {
				p.names[a] = "%arg" + strconv.Itoa(p.nextArg)
				p.nextArg++
			}
		}
		if len(b.Args) > 0 || bi > 0 {
			p.indent(depth)
			p.b.WriteString("^bb" + strconv.Itoa(bi))
			if len(b.Args) > 0 {
				p.b.WriteByte('(')
				for i, a := range b.Args {
					if i > 0 {
						p.b.WriteString(", ")
					}
					p.b.WriteString(p.names[a] + ": " + a.Type.String())
				}
				p.b.WriteByte(')')
			}
			p.b.WriteString(":\n")
		}
		for op := b.First(); op != nil; op = op.Next() {
			p.op(op, depth+1)
		}
	}
	p.indent(depth)
	p.b.WriteString("}")
}

func (p *printer) loc(l Location) { syntax.WriteLoc(&p.b, l, p.opts.DebugInfo) }

// FormatLoc renders a location in MLIR syntax: loc("file":line:col),
// loc("file") or loc(unknown), as the tensor IR does.
func FormatLoc(l Location) string { return syntax.FormatLoc(l) }

func symbolName(s string) string {
	if syntax.IsBareID(s) {
		return s
	}
	return syntax.Quote(s)
}

func writeDict(b *strings.Builder, d DictAttr, opts PrintOptions) {
	b.WriteByte('{')
	for i, na := range d {
		if i > 0 {
			b.WriteString(", ")
		}
		if syntax.IsBareID(na.Name) {
			b.WriteString(na.Name)
		} else {
			b.WriteString(syntax.Quote(na.Name))
		}
		if _, unit := na.Value.(UnitAttr); unit {
			continue
		}
		b.WriteString(" = ")
		writeAttr(b, na.Value, opts)
	}
	b.WriteByte('}')
}

func writeAttr(b *strings.Builder, a Attribute, opts PrintOptions) {
	switch x := a.(type) {
	case *IntegerAttr:
		if st, ok := x.Type.(*ScalarType); ok && st.DType == UI64 {
			b.WriteString(strconv.FormatUint(uint64(x.Value), 10))
		} else {
			b.WriteString(strconv.FormatInt(x.Value, 10))
		}
		if !x.Type.Equal(I64Type) {
			b.WriteString(" : " + x.Type.String())
		}
	case *FloatAttr:
		dt := F64
		if st, ok := x.Type.(*ScalarType); ok {
			dt = st.DType
		}
		b.WriteString(formatFloat(x.Value, dt) + " : " + x.Type.String())
	case StringAttr:
		b.WriteString(syntax.Quote(string(x)))
	case BoolAttr:
		b.WriteString(strconv.FormatBool(bool(x)))
	case UnitAttr:
		b.WriteString("unit")
	case *TypeAttr:
		b.WriteString(x.Type.String())
	case ArrayAttr:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeAttr(b, e, opts)
		}
		b.WriteByte(']')
	case DictAttr:
		writeDict(b, x, opts)
	case *DenseElementsAttr:
		writeDense(b, x, opts)
	default:
		b.WriteString("<<unknown attribute>>")
	}
}

func writeDense(b *strings.Builder, d *DenseElementsAttr, opts PrintOptions) {
	if !d.wellFormed() {
		b.WriteString("dense<\"<malformed: " + strconv.Itoa(d.Len()) + " elements>\">")
		if d.Type != nil {
			b.WriteString(" : " + d.Type.String())
		}
		return
	}
	n := d.Type.NumElements()
	if d.Elided || (opts.ElideLargerThan > 0 && n > opts.ElideLargerThan && !d.IsSplat()) {
		b.WriteString("dense_resource<__elided__> : " + d.Type.String())
		return
	}
	b.WriteString("dense<")
	if opts.HexLargerThan > 0 && n > opts.HexLargerThan && d.Len() > 1 && writeHexElems(b, d) {
		b.WriteString("> : " + d.Type.String())
		return
	}
	if d.Len() == 1 || n == 0 {
		if n > 0 {
			writeElem(b, d, 0)
		} else {
			b.WriteString(strings.Repeat("[", max(1, d.Type.Rank())) + strings.Repeat("]", max(1, d.Type.Rank())))
		}
	} else {
		idx := 0
		writeNested(b, d, 0, &idx)
	}
	b.WriteString("> : " + d.Type.String())
}

func writeNested(b *strings.Builder, d *DenseElementsAttr, dim int, idx *int) {
	if dim == d.Type.Rank() {
		writeElem(b, d, *idx)
		*idx++
		return
	}
	b.WriteByte('[')
	for i := int64(0); i < d.Type.Shape[dim]; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		writeNested(b, d, dim+1, idx)
	}
	b.WriteByte(']')
}

func writeElem(b *strings.Builder, d *DenseElementsAttr, i int) {
	switch {
	case d.Type.Elem.IsFloat():
		b.WriteString(formatFloat(d.At(i), d.Type.Elem))
	case d.Type.Elem == I1:
		b.WriteString(strconv.FormatBool(d.Ints[i] != 0))
	case d.Type.Elem == UI64:
		b.WriteString(strconv.FormatUint(uint64(d.Ints[i]), 10))
	default:
		b.WriteString(strconv.FormatInt(d.Ints[i], 10))
	}
}

// writeHexElems writes the elements as "0x..." little-endian bytes of the
// element type; it reports false (writing nothing) for f16/bf16 and for
// i1 (whose MLIR hex form is bit-packed; true/false is printed instead).
func writeHexElems(b *strings.Builder, d *DenseElementsAttr) bool {
	el := d.Type.Elem
	if el == F16 || el == BF16 || el == I1 {
		return false
	}
	raw := d.Raw
	if raw == nil {
		raw = elemBytes(d)
	}
	const digits = "0123456789ABCDEF"
	out := make([]byte, 0, len(raw)*2+4)
	out = append(out, '"', '0', 'x')
	for _, c := range raw {
		out = append(out, digits[c>>4], digits[c&15])
	}
	b.Write(append(out, '"'))
	return true
}

// elemBytes encodes d's Floats or Ints as little-endian bytes of its
// element type (not i1, f16 or bf16).
func elemBytes(d *DenseElementsAttr) []byte {
	el := d.Type.Elem
	if el.IsFloat() {
		return d.FloatBytes()
	}
	width := max(1, el.Bits()/8)
	raw := make([]byte, len(d.Ints)*width)
	for i, v := range d.Ints {
		p := raw[i*width:]
		switch width {
		case 1:
			p[0] = byte(v)
		case 2:
			binary.LittleEndian.PutUint16(p, uint16(v))
		case 4:
			binary.LittleEndian.PutUint32(p, uint32(v))
		case 8:
			binary.LittleEndian.PutUint64(p, uint64(v))
		}
	}
	return raw
}
