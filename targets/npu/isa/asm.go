package isa

// The text assembly form of a Program: Program.String prints it,
// Assemble parses it. Grammar (line based; ";" starts a comment that runs
// to the end of the line; blank lines are ignored; tokens are separated
// by spaces and tabs):
//
//	program   = ".datapath" ("int8" | "bf16")  ; the first directive
//	            { ".uops" { uop } | ".text" { inst } }
//	uop       = "acc=" N "inp=" N "wgt=" N     ; keys in any order
//	inst      = mnemonic { key "=" value | flag }
//	mnemonic  = ("load" | "store") "." ("uop" | "inp" | "wgt" | "acc")
//	          | "gemm" | "alu." aluop | "finish"
//	DMA keys  = sram=N dram=N y=N x=N stride=N dtype=(i8|bf16|f32|i32|u8)
//	            [pad=TOP,BOTTOM,LEFT,RIGHT]
//	gemm keys = uops=BEGIN:END iter=OUT,IN dst=OUT,IN src=OUT,IN
//	            wgt=OUT,IN [reset]
//	alu keys  = uops=BEGIN:END iter=OUT,IN dst=OUT,IN src=OUT,IN [imm=V]
//	flag      = "pop_prev" | "pop_next" | "push_prev" | "push_next"
//	N         = decimal | "0x" hex                  ; fits its field
//	V         = "0x" hex                            ; the raw 16 bits
//	          | int16 decimal                       ; int8 datapath
//	          | float (strconv.ParseFloat)          ; bf16 datapath
//
// A bf16 immediate is rounded to nearest even, a NaN becoming 0x7fc0; the
// printer writes the shortest decimal that reads back to the same bits
// (+Inf, -0, 9.1835e-41), and a NaN as its 0x bits. The sections may
// repeat, their lines appending in order. The printer writes keys in the
// order above (pad only when non-zero, imm only with use_imm), the flags
// last in the order pop_prev pop_next push_prev push_next; the parser
// accepts keys and flags in any order.

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tessera-ml/tessera/internal/syntax"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// asmKey is one key=value of an instruction's text form.
type asmKey struct {
	name string
	// fields are the encoding fields (encode.go's tables) the value's
	// components set, in order; nil for the enumerations (dtype) and imm,
	// which are handled by name.
	fields []string
	// sep separates the components ("," or ":").
	sep string
	// form shows the value's shape in messages.
	form string
	// optional keys may be absent (then zero) and are printed only when
	// non-zero.
	optional bool
}

var (
	dmaKeys = []asmKey{
		{name: "sram", fields: []string{"sram_base"}, form: "N"},
		{name: "dram", fields: []string{"dram_base"}, form: "N"},
		{name: "y", fields: []string{"y_size"}, form: "N"},
		{name: "x", fields: []string{"x_size"}, form: "N"},
		{name: "stride", fields: []string{"x_stride"}, form: "N"},
		{name: "dtype", form: strings.Join(dtypeNames[:], "|")},
		{name: "pad", fields: []string{"pad_top", "pad_bottom", "pad_left", "pad_right"}, sep: ",", form: "TOP,BOTTOM,LEFT,RIGHT", optional: true},
	}
	loopKeys = []asmKey{
		{name: "uops", fields: []string{"uop_begin", "uop_end"}, sep: ":", form: "BEGIN:END"},
		{name: "iter", fields: []string{"iter_out", "iter_in"}, sep: ",", form: "OUT,IN"},
		{name: "dst", fields: []string{"dst_factor_out", "dst_factor_in"}, sep: ",", form: "OUT,IN"},
		{name: "src", fields: []string{"src_factor_out", "src_factor_in"}, sep: ",", form: "OUT,IN"},
	}
	gemmKeys = append(loopKeys[:len(loopKeys):len(loopKeys)],
		asmKey{name: "wgt", fields: []string{"wgt_factor_out", "wgt_factor_in"}, sep: ",", form: "OUT,IN"})
	aluKeys = append(loopKeys[:len(loopKeys):len(loopKeys)],
		asmKey{name: "imm", form: "V", optional: true})
)

// keysOf returns the keys of opcode op's text form, in printing order.
func keysOf(op Opcode) []asmKey {
	switch op {
	case OpLoad, OpStore:
		return dmaKeys
	case OpGEMM:
		return gemmKeys
	case OpALU:
		return aluKeys
	}
	return nil
}

// asmFlag is a bare word that sets a boolean of an instruction.
type asmFlag struct {
	name string
	ptr  func(*Inst) *bool
}

// depFlags are the dependency flags, in printing order.
var depFlags = []asmFlag{
	{"pop_prev", func(in *Inst) *bool { return &in.PopPrev }},
	{"pop_next", func(in *Inst) *bool { return &in.PopNext }},
	{"push_prev", func(in *Inst) *bool { return &in.PushPrev }},
	{"push_next", func(in *Inst) *bool { return &in.PushNext }},
}

var resetFlag = asmFlag{"reset", func(in *Inst) *bool { return &in.Reset }}

// flagsOf returns the flags opcode op accepts, in printing order.
func flagsOf(op Opcode) []asmFlag {
	if op == OpGEMM {
		return append([]asmFlag{resetFlag}, depFlags...)
	}
	return depFlags
}

// fieldOf returns the encoding field name of opcode op.
func fieldOf(op Opcode, name string) (field, bool) {
	for _, f := range fieldsOf(op) {
		if f.name == name {
			return f, true
		}
	}
	return field{}, false
}

// mnemonics maps every mnemonic to the instruction it starts (Op, and Mem
// or ALU); mnemonicList lists them in opcode order, for messages.
var mnemonics, mnemonicList = func() (map[string]Inst, []string) {
	m := map[string]Inst{}
	var list []string
	add := func(in Inst) {
		m[in.Name()] = in
		list = append(list, in.Name())
	}
	for _, op := range []Opcode{OpLoad, OpStore} {
		for mem := Memory(0); mem < numMemories; mem++ {
			add(Inst{Op: op, Mem: mem})
		}
	}
	add(Inst{Op: OpGEMM})
	for a := ALUOp(0); a < numALUOps; a++ {
		add(Inst{Op: OpALU, ALU: a})
	}
	add(Inst{Op: OpFinish})
	return m, list
}()

// String returns p's text assembly form, which Assemble parses back to p:
// Assemble(f, []byte(p.String())) equals p for every p that MarshalBinary
// accepts (an empty instruction or micro-op list comes back nil). The
// micro-ops are listed under .uops, each with its index as a comment;
// the instructions under .text. For a program MarshalBinary refuses, the
// text is best effort: it may not assemble, or may drop fields that the
// opcode does not encode.
func (p *Program) String() string {
	var b strings.Builder
	b.WriteString("; Tessera NPU program\n")
	fmt.Fprintf(&b, ".datapath %s\n", p.Datapath)
	if len(p.Uops) > 0 {
		b.WriteString(".uops\n")
		lines := make([]string, len(p.Uops))
		width := 0
		for i, u := range p.Uops {
			lines[i] = fmt.Sprintf("acc=%d inp=%d wgt=%d", u.Acc, u.Inp, u.Wgt)
			width = max(width, len(lines[i]))
		}
		for i, l := range lines {
			fmt.Fprintf(&b, "  %-*s ; %d\n", width, l, i)
		}
	}
	b.WriteString(".text\n")
	for i := range p.Insts {
		b.WriteString("  ")
		writeInst(&b, p.Datapath, &p.Insts[i])
		b.WriteByte('\n')
	}
	return b.String()
}

// Text is in's line of the text assembly form, without indentation, in
// a program of datapath dp (which spells ALU immediates): "load.inp
// sram=0 dram=4096 y=16 x=4 stride=32 dtype=bf16 push_next".
func (in *Inst) Text(dp Datapath) string {
	var b strings.Builder
	writeInst(&b, dp, in)
	return b.String()
}

// writeInst appends the text of in (a program of datapath dp) to b.
func writeInst(b *strings.Builder, dp Datapath, in *Inst) {
	b.WriteString(in.Name())
	for _, k := range keysOf(in.Op) {
		switch k.name {
		case "dtype":
			fmt.Fprintf(b, " dtype=%s", in.DType)
			continue
		case "imm":
			if in.UseImm {
				fmt.Fprintf(b, " imm=%s", formatImm(dp, in.Imm))
			}
			continue
		}
		vals := make([]string, len(k.fields))
		nonzero := false
		for i, name := range k.fields {
			f, _ := fieldOf(in.Op, name)
			v := *f.ptr(in)
			nonzero = nonzero || v != 0
			vals[i] = strconv.FormatUint(uint64(v), 10)
		}
		if k.optional && !nonzero {
			continue
		}
		fmt.Fprintf(b, " %s=%s", k.name, strings.Join(vals, k.sep))
	}
	for _, f := range flagsOf(in.Op) {
		if *f.ptr(in) {
			b.WriteByte(' ')
			b.WriteString(f.name)
		}
	}
}

// formatImm spells an ALU immediate: a signed 16-bit decimal in the int8
// datapath; in the bf16 datapath the shortest decimal that parses back to
// the same bf16 value, or the raw bits (0x7fc1) for a NaN.
func formatImm(dp Datapath, v uint16) string {
	if dp != DPBF16 {
		return strconv.Itoa(int(int16(v)))
	}
	f := tir.BF16ToFloat32(v)
	if f != f {
		return fmt.Sprintf("0x%04x", v)
	}
	return strconv.FormatFloat(float64(f), 'g', -1, 32)
}

// bf16FromFloat32 rounds an assembly immediate to bf16 bits, to nearest
// even (BF16FromFloat32), except that every NaN becomes the quiet NaN
// 0x7fc0 (a NaN's payload and sign are written as 0x hex bits).
// Infinities stay infinite, and finite values beyond the largest bf16
// round to infinity.
func bf16FromFloat32(f float32) uint16 {
	if f != f {
		return 0x7fc0
	}
	return tir.Float32ToBF16(f)
}

// asmToken is a word of a line and its 1-based byte column.
type asmToken struct {
	text string
	col  int
}

// splitLine returns the tokens of line, without its comment.
func splitLine(line []byte) []asmToken {
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	var toks []asmToken
	for i := 0; i < len(line); {
		if isAsmSpace(line[i]) {
			i++
			continue
		}
		j := i
		for j < len(line) && !isAsmSpace(line[j]) {
			j++
		}
		toks = append(toks, asmToken{string(line[i:j]), i + 1})
		i = j
	}
	return toks
}

func isAsmSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' }

// asmSection is the directive the lines are under.
type asmSection uint8

const (
	secNone asmSection = iota
	secUops
	secText
)

// assembler is Assemble's state.
type assembler struct {
	file   string
	line   int
	prog   Program
	dpLine int // the line of .datapath; 0 before it
	sec    asmSection
}

func (a *assembler) errorf(col int, format string, args ...any) *syntax.Diagnostic {
	return syntax.Errorf(syntax.Location{File: a.file, Line: a.line, Col: col}, format, args...)
}

// Assemble parses the text assembly form (Program.String's; the grammar
// is at the top of asm.go) read from filename. It checks the syntax and
// that every value fits its encoding field, so that the program
// MarshalBinary-encodes, but not the semantic rules: callers run
// Program.Validate for those.
//
// Errors are *syntax.Diagnostic, rendered "file:line:col: error: message"
// with the column (1-based, in bytes) at the offending token: an unknown
// directive, mnemonic, key, flag, datapath or dtype; a duplicate key or
// flag; a missing required key; a malformed value or one out of its
// field's range; an instruction outside .text or a micro-op outside
// .uops; a missing, misplaced or repeated .datapath. Only the first error
// is reported.
func Assemble(filename string, src []byte) (*Program, error) {
	a := &assembler{file: filename}
	for rest := src; len(rest) > 0 || a.line == 0; {
		a.line++
		var line []byte
		if i := bytes.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			line, rest = rest, nil
		}
		if d := a.parseLine(splitLine(line)); d != nil {
			return nil, d
		}
	}
	if a.dpLine == 0 {
		a.line = 1
		return nil, a.errorf(1, "missing .datapath directive (.datapath int8 or .datapath bf16)")
	}
	p := a.prog
	return &p, nil
}

// parseLine parses one line's tokens.
func (a *assembler) parseLine(toks []asmToken) *syntax.Diagnostic {
	if len(toks) == 0 {
		return nil
	}
	first := toks[0]
	if strings.HasPrefix(first.text, ".") {
		return a.parseDirective(toks)
	}
	if a.dpLine == 0 {
		return a.errorf(first.col, "missing .datapath directive before %q (.datapath must come first)", first.text)
	}
	if strings.Contains(first.text, "=") {
		if a.sec != secUops {
			return a.errorf(first.col, "micro-op outside .uops")
		}
		u, d := a.parseUop(toks)
		if d != nil {
			return d
		}
		a.prog.Uops = append(a.prog.Uops, u)
		return nil
	}
	if _, known := mnemonics[first.text]; a.sec != secText {
		switch {
		case known:
			return a.errorf(first.col, "instruction %s outside .text", first.text)
		case a.sec == secUops:
			return a.errorf(first.col, "expected a micro-op (acc=N inp=N wgt=N), got %q", first.text)
		}
	}
	in, d := a.parseInst(toks)
	if d != nil {
		return d
	}
	a.prog.Insts = append(a.prog.Insts, in)
	return nil
}

var directives = []string{".datapath", ".uops", ".text"}

func (a *assembler) parseDirective(toks []asmToken) *syntax.Diagnostic {
	first := toks[0]
	switch first.text {
	case ".datapath":
		if a.dpLine != 0 {
			return a.errorf(first.col, "repeated .datapath directive (the first is at line %d)", a.dpLine)
		}
		if len(toks) < 2 {
			return a.errorf(first.col, ".datapath needs a datapath: int8 or bf16")
		}
		switch toks[1].text {
		case DPInt8.String():
			a.prog.Datapath = DPInt8
		case DPBF16.String():
			a.prog.Datapath = DPBF16
		default:
			return a.errorf(toks[1].col, "unknown datapath %q (want int8 or bf16)", toks[1].text)
		}
		if len(toks) > 2 {
			return a.errorf(toks[2].col, "unexpected %q after .datapath %s", toks[2].text, toks[1].text)
		}
		a.dpLine = a.line
	case ".uops", ".text":
		if a.dpLine == 0 {
			return a.errorf(first.col, "missing .datapath directive before %s (.datapath must come first)", first.text)
		}
		if len(toks) > 1 {
			return a.errorf(toks[1].col, "unexpected %q after %s", toks[1].text, first.text)
		}
		a.sec = secUops
		if first.text == ".text" {
			a.sec = secText
		}
	default:
		return a.errorf(first.col, "unknown directive %q (known: %s)", first.text, strings.Join(directives, ", "))
	}
	return nil
}

// uopKeys are the keys of a micro-op line, in printing order, and the
// widths of their fields.
var uopKeys = []struct {
	name string
	bits uint
	ptr  func(*Uop) *uint32
}{
	{"acc", uopAccBits, func(u *Uop) *uint32 { return &u.Acc }},
	{"inp", uopInpBits, func(u *Uop) *uint32 { return &u.Inp }},
	{"wgt", uopWgtBits, func(u *Uop) *uint32 { return &u.Wgt }},
}

func (a *assembler) parseUop(toks []asmToken) (Uop, *syntax.Diagnostic) {
	var u Uop
	var seen [3]int
	for _, t := range toks {
		name, val, ok := strings.Cut(t.text, "=")
		if !ok {
			return u, a.errorf(t.col, "unexpected %q in a micro-op (want acc=N inp=N wgt=N)", t.text)
		}
		k := -1
		for i, uk := range uopKeys {
			if uk.name == name {
				k = i
			}
		}
		if k < 0 {
			return u, a.errorf(t.col, "unknown micro-op key %q (known: acc, inp, wgt)", name)
		}
		if seen[k] != 0 {
			return u, a.duplicate(t, name, seen[k])
		}
		seen[k] = t.col
		v, d := a.parseUint(val, t.col+len(name)+1, "micro-op "+name, uint32(1<<uopKeys[k].bits-1))
		if d != nil {
			return u, d
		}
		*uopKeys[k].ptr(&u) = v
	}
	for i, uk := range uopKeys {
		if seen[i] == 0 {
			return u, a.errorf(toks[0].col, "micro-op is missing key %s=", uk.name)
		}
	}
	return u, nil
}

func (a *assembler) duplicate(t asmToken, name string, firstCol int) *syntax.Diagnostic {
	d := a.errorf(t.col, "duplicate %s", name)
	return d.AddNote(syntax.Location{File: a.file, Line: a.line, Col: firstCol}, "first %s is here", name)
}

func (a *assembler) parseInst(toks []asmToken) (Inst, *syntax.Diagnostic) {
	mn := toks[0]
	in, ok := mnemonics[mn.text]
	if !ok {
		return in, a.errorf(mn.col, "unknown mnemonic %q (known: %s)", mn.text, strings.Join(mnemonicList, ", "))
	}
	keys, flags := keysOf(in.Op), flagsOf(in.Op)
	keySeen := make([]int, len(keys))
	flagSeen := make([]int, len(flags))
	for _, t := range toks[1:] {
		name, val, hasValue := strings.Cut(t.text, "=")
		k, f := -1, -1
		for i := range keys {
			if keys[i].name == name {
				k = i
			}
		}
		for i := range flags {
			if flags[i].name == name {
				f = i
			}
		}
		switch {
		case !hasValue && f >= 0:
			if flagSeen[f] != 0 {
				return in, a.duplicate(t, name, flagSeen[f])
			}
			flagSeen[f] = t.col
			*flags[f].ptr(&in) = true
		case !hasValue && k >= 0:
			return in, a.errorf(t.col, "key %s of %s needs a value (%s=%s)", name, mn.text, name, keys[k].form)
		case !hasValue:
			return in, a.errorf(t.col, "unknown flag %q for %s (known: %s)", name, mn.text, flagNames(flags))
		case f >= 0:
			return in, a.errorf(t.col, "flag %s takes no value", name)
		case k < 0 && len(keys) == 0:
			return in, a.errorf(t.col, "unknown key %q for %s (it takes only flags)", name, mn.text)
		case k < 0:
			return in, a.errorf(t.col, "unknown key %q for %s (known: %s)", name, mn.text, keyNames(keys))
		default:
			if keySeen[k] != 0 {
				return in, a.duplicate(t, name, keySeen[k])
			}
			keySeen[k] = t.col
			if d := a.setKey(&in, keys[k], val, t.col+len(name)+1); d != nil {
				return in, d
			}
		}
	}
	for i, k := range keys {
		if keySeen[i] == 0 && !k.optional {
			return in, a.errorf(mn.col, "%s is missing key %s=%s", mn.text, k.name, k.form)
		}
	}
	return in, nil
}

func keyNames(keys []asmKey) string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.name
	}
	return strings.Join(names, ", ")
}

func flagNames(flags []asmFlag) string {
	names := make([]string, len(flags))
	for i, f := range flags {
		names[i] = f.name
	}
	return strings.Join(names, ", ")
}

// setKey parses the value val of key k (at column col) into in.
func (a *assembler) setKey(in *Inst, k asmKey, val string, col int) *syntax.Diagnostic {
	switch k.name {
	case "dtype":
		for d := DType(0); d < numDTypes; d++ {
			if d.String() == val {
				in.DType = d
				return nil
			}
		}
		return a.errorf(col, "unknown dtype %q (want %s)", val, strings.Join(dtypeNames[:], ", "))
	case "imm":
		v, d := a.parseImm(val, col)
		if d != nil {
			return d
		}
		in.UseImm, in.Imm = true, v
		return nil
	}
	parts := []string{val}
	if len(k.fields) > 1 {
		parts = strings.Split(val, k.sep)
	}
	if len(parts) != len(k.fields) {
		return a.errorf(col, "malformed value %q for %s (want %s=%s)", val, k.name, k.name, k.form)
	}
	for i, part := range parts {
		f, _ := fieldOf(in.Op, k.fields[i])
		v, d := a.parseUint(part, col, f.name, FieldMax(in.Op, f.name))
		if d != nil {
			return d
		}
		*f.ptr(in) = v
		col += len(part) + len(k.sep)
	}
	return nil
}

// parseUint parses an unsigned field value: a decimal or 0x-prefixed hex
// number in [0, limit]. what names the field in messages.
func (a *assembler) parseUint(s string, col int, what string, limit uint32) (uint32, *syntax.Diagnostic) {
	v, err := parseUnsigned(s)
	switch {
	case errors.Is(err, strconv.ErrRange) || err == nil && v > uint64(limit):
		return 0, a.errorf(col, "%s is out of range for %s (at most %d)", s, what, limit)
	case err != nil:
		return 0, a.errorf(col, "malformed number %q for %s (want a decimal or 0x hex number)", s, what)
	}
	return uint32(v), nil
}

// parseUnsigned parses a decimal or 0x-prefixed hex number without sign,
// underscores or other bases.
func parseUnsigned(s string) (uint64, error) {
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		return strconv.ParseUint(s[2:], 16, 64)
	}
	return strconv.ParseUint(s, 10, 64)
}

// parseImm parses an ALU immediate: 0x-prefixed hex is the raw 16 bits;
// otherwise a signed 16-bit decimal in the int8 datapath, a number
// rounded to bf16 (to nearest even) in the bf16 datapath.
func (a *assembler) parseImm(s string, col int) (uint16, *syntax.Diagnostic) {
	if len(s) >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		v, err := parseUnsigned(s)
		switch {
		case errors.Is(err, strconv.ErrRange) || err == nil && v > math.MaxUint16:
			return 0, a.errorf(col, "imm %s is out of range (at most 0xffff)", s)
		case err != nil:
			return 0, a.errorf(col, "malformed imm %q (want 0x and up to 4 hex digits)", s)
		}
		return uint16(v), nil
	}
	if a.prog.Datapath == DPBF16 {
		f, err := strconv.ParseFloat(s, 32)
		switch {
		case errors.Is(err, strconv.ErrRange):
			return 0, a.errorf(col, "imm %s is out of range for bf16", s)
		case err != nil:
			return 0, a.errorf(col, "malformed imm %q (want a number or 0x hex bits)", s)
		}
		return bf16FromFloat32(float32(f)), nil
	}
	v, err := strconv.ParseInt(s, 10, 16)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return 0, a.errorf(col, "imm %s is out of range for the int8 datapath (-32768 to 32767)", s)
	case err != nil:
		return 0, a.errorf(col, "malformed imm %q (want a decimal integer or 0x hex bits)", s)
	}
	return uint16(v), nil
}
