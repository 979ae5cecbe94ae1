package isa

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/internal/syntax"
)

// exampleText is the format's example: every line kind, comments, blank
// lines, keys and flags in non-canonical order.
const exampleText = `; Tessera NPU program
.datapath bf16            ; or int8; required, first directive

.uops                     ; optional section: one micro-op per line
  acc=0 inp=0 wgt=0       ; 0     <- printer adds the index as a comment
  wgt=1 acc=1 inp=0       ; 1
.text                     ; instructions, one per line
  load.uop sram=0 dram=0 y=1 x=2 stride=2 dtype=i8
	load.inp dram=4096 sram=0 y=16 x=4 stride=32 dtype=bf16 pad=1,1,1,1 push_next
  load.wgt sram=0 dram=0 y=1 x=16 stride=16 dtype=bf16 push_next pop_next
  gemm uops=0:16 iter=4,8 dst=16,1 src=2,0 wgt=0,1 reset pop_prev push_prev push_next
  alu.max uops=0:1 iter=1,16 dst=1,0 src=0,0 imm=0 push_next
  alu.add uops=0:1 iter=1,16 dst=1,0 src=1,0
  store.acc sram=0 dram=8192 y=16 x=1 stride=1 dtype=f32 pop_prev push_prev
  finish
`

// exampleCanonical is exampleText as String prints it.
const exampleCanonical = `; Tessera NPU program
.datapath bf16
.uops
  acc=0 inp=0 wgt=0 ; 0
  acc=1 inp=0 wgt=1 ; 1
.text
  load.uop sram=0 dram=0 y=1 x=2 stride=2 dtype=i8
  load.inp sram=0 dram=4096 y=16 x=4 stride=32 dtype=bf16 pad=1,1,1,1 push_next
  load.wgt sram=0 dram=0 y=1 x=16 stride=16 dtype=bf16 pop_next push_next
  gemm uops=0:16 iter=4,8 dst=16,1 src=2,0 wgt=0,1 reset pop_prev push_prev push_next
  alu.max uops=0:1 iter=1,16 dst=1,0 src=0,0 imm=0 push_next
  alu.add uops=0:1 iter=1,16 dst=1,0 src=1,0
  store.acc sram=0 dram=8192 y=16 x=1 stride=1 dtype=f32 pop_prev push_prev
  finish
`

func exampleProgram() *Program {
	return &Program{
		Datapath: DPBF16,
		Uops:     []Uop{{0, 0, 0}, {1, 0, 1}},
		Insts: []Inst{
			{Op: OpLoad, Mem: MemUop, YSize: 1, XSize: 2, XStride: 2, DType: DTInt8},
			{Op: OpLoad, Mem: MemInp, DRAMBase: 4096, YSize: 16, XSize: 4, XStride: 32, DType: DTBF16,
				PadTop: 1, PadBottom: 1, PadLeft: 1, PadRight: 1, Deps: Deps{PushNext: true}},
			{Op: OpLoad, Mem: MemWgt, YSize: 1, XSize: 16, XStride: 16, DType: DTBF16, Deps: Deps{PopNext: true, PushNext: true}},
			{Op: OpGEMM, UopEnd: 16, IterOut: 4, IterIn: 8, DstFactor: [2]uint32{16, 1}, SrcFactor: [2]uint32{2, 0},
				WgtFactor: [2]uint32{0, 1}, Reset: true, Deps: Deps{PopPrev: true, PushPrev: true, PushNext: true}},
			{Op: OpALU, ALU: ALUMax, UopEnd: 1, IterOut: 1, IterIn: 16, DstFactor: [2]uint32{1, 0}, UseImm: true, Deps: Deps{PushNext: true}},
			{Op: OpALU, ALU: ALUAdd, UopEnd: 1, IterOut: 1, IterIn: 16, DstFactor: [2]uint32{1, 0}, SrcFactor: [2]uint32{1, 0}},
			{Op: OpStore, Mem: MemAcc, DRAMBase: 8192, YSize: 16, XSize: 1, XStride: 1, DType: DTF32, Deps: Deps{PopPrev: true, PushPrev: true}},
			{Op: OpFinish},
		},
	}
}

func TestAssembleExample(t *testing.T) {
	p, err := Assemble("example.s", []byte(exampleText))
	require.NoError(t, err)
	require.Equal(t, exampleProgram(), p)
	assert.Equal(t, exampleCanonical, p.String())
	assert.Equal(t, exampleCanonical, p.String())
	require.NoError(t, p.Validate(DefaultConfig()))
}

// TestInstText: each instruction's Text is its line of the program's text.
func TestInstText(t *testing.T) {
	p := exampleProgram()
	text := p.String()
	for i := range p.Insts {
		assert.Contains(t, text, "\n  "+p.Insts[i].Text(p.Datapath)+"\n")
	}
	assert.Equal(t, "store.acc sram=0 dram=8192 y=16 x=1 stride=1 dtype=f32 pop_prev push_prev", p.Insts[len(p.Insts)-2].Text(p.Datapath))
}

// TestAsmKeysMatchFields: every key of the text form names fields of the
// encoding tables, and together the keys and flags cover every field.
func TestAsmKeysMatchFields(t *testing.T) {
	special := map[string]string{"mem": "mnemonic", "alu_op": "mnemonic", "dtype": "dtype", "imm": "imm", "use_imm": "imm", "reset": "reset"}
	for _, op := range []Opcode{OpLoad, OpStore, OpGEMM, OpALU} {
		covered := map[string]bool{}
		for _, k := range keysOf(op) {
			for _, name := range k.fields {
				f, ok := fieldOf(op, name)
				require.True(t, ok, "%s: key %s names unknown field %s", op, k.name, name)
				require.NotNil(t, f.ptr, "%s: field %s", op, name)
				covered[name] = true
			}
			if k.fields == nil {
				covered[k.name] = true
			}
		}
		for _, f := range flagsOf(op) {
			covered[f.name] = true
		}
		for _, f := range fieldsOf(op) {
			if s, ok := special[f.name]; ok {
				f.name = s
			}
			assert.True(t, covered[f.name] || f.name == "mnemonic", "%s: field %s has no key", op, f.name)
		}
	}
}

// normalized returns p with empty lists as nil (UnmarshalBinary makes
// them empty, Assemble leaves them nil).
func normalized(p *Program) *Program {
	q := *p
	if len(q.Insts) == 0 {
		q.Insts = nil
	}
	if len(q.Uops) == 0 {
		q.Uops = nil
	}
	return &q
}

// requireRoundTrip checks p through text and binary: text → Program
// equals p, text → Program → binary → Program → text is the same text,
// and binary → Program equals p.
func requireRoundTrip(t testing.TB, p *Program) {
	t.Helper()
	bin, err := p.MarshalBinary()
	require.NoError(t, err)
	text := p.String()
	q, err := Assemble("rt.s", []byte(text))
	require.NoError(t, err, "%s", text)
	require.Equal(t, normalized(p), q, "%s", text)
	bin2, err := q.MarshalBinary()
	require.NoError(t, err)
	require.Equal(t, bin, bin2)
	var r Program
	require.NoError(t, r.UnmarshalBinary(bin2))
	require.Equal(t, normalized(p), normalized(&r))
	require.Equal(t, text, r.String())
}

// handPrograms cover every opcode, memory, dtype, ALU operation and flag,
// pads, reset, immediates in both datapaths and the widest field values.
func handPrograms() map[string]*Program {
	ps := map[string]*Program{
		"example":    exampleProgram(),
		"empty int8": {Datapath: DPInt8},
		"empty bf16": {Datapath: DPBF16},
		"uops only":  {Datapath: DPInt8, Uops: []Uop{{1<<21 - 1, 1<<21 - 1, 1<<22 - 1}, {1, 2, 3}}},
		"finish":     {Datapath: DPInt8, Insts: []Inst{{Op: OpFinish}}},
	}
	var dma, flags []Inst
	for _, op := range []Opcode{OpLoad, OpStore} {
		for m := Memory(0); m < numMemories; m++ {
			for d := DType(0); d < numDTypes; d++ {
				dma = append(dma, Inst{Op: op, Mem: m, DType: d, SRAMBase: uint32(m), DRAMBase: uint32(d) * 100, YSize: 1, XSize: 2, XStride: 3})
			}
		}
	}
	dma = append(dma, Inst{Op: OpLoad, Mem: MemInp, SRAMBase: 1<<16 - 1, DRAMBase: 1<<32 - 1, YSize: 1<<16 - 1, XSize: 1<<16 - 1,
		XStride: 1<<16 - 1, PadTop: 15, PadBottom: 15, PadLeft: 15, PadRight: 15, DType: DTInt32})
	for _, pad := range [][4]uint32{{1, 0, 0, 0}, {0, 2, 0, 0}, {0, 0, 3, 0}, {0, 0, 0, 4}} {
		dma = append(dma, Inst{Op: OpLoad, Mem: MemAcc, PadTop: pad[0], PadBottom: pad[1], PadLeft: pad[2], PadRight: pad[3]})
	}
	for i := 0; i < 16; i++ {
		d := Deps{PopPrev: i&1 != 0, PopNext: i&2 != 0, PushPrev: i&4 != 0, PushNext: i&8 != 0}
		flags = append(flags,
			Inst{Op: OpLoad, Mem: Memory(i % 4), Deps: d},
			Inst{Op: OpStore, Mem: MemAcc, Deps: d},
			Inst{Op: OpGEMM, Reset: i%3 == 0, Deps: d},
			Inst{Op: OpALU, ALU: ALUOp(i % int(numALUOps)), Deps: d},
			Inst{Op: OpFinish, Deps: d})
	}
	ps["dma"] = &Program{Datapath: DPInt8, Insts: dma}
	ps["flags"] = &Program{Datapath: DPBF16, Insts: flags}
	wide := Inst{Op: OpGEMM, Reset: true, UopBegin: 1<<13 - 1, UopEnd: 1<<14 - 1, IterOut: 1<<14 - 1, IterIn: 1<<14 - 1,
		DstFactor: [2]uint32{1<<11 - 1, 1<<11 - 1}, SrcFactor: [2]uint32{1<<11 - 1, 1<<11 - 1}, WgtFactor: [2]uint32{1<<10 - 1, 1<<10 - 1}}
	wideALU := Inst{Op: OpALU, ALU: ALUMulHi, UopBegin: 1<<13 - 1, UopEnd: 1<<14 - 1, IterOut: 1<<14 - 1, IterIn: 1<<14 - 1,
		DstFactor: [2]uint32{1<<11 - 1, 1<<11 - 1}, SrcFactor: [2]uint32{1<<11 - 1, 1<<11 - 1}, UseImm: true, Imm: 0xffff}
	ps["wide"] = &Program{Datapath: DPInt8, Insts: []Inst{wide, wideALU}}
	for _, dp := range []Datapath{DPInt8, DPBF16} {
		var alu []Inst
		for a := ALUOp(0); a < numALUOps; a++ {
			alu = append(alu, Inst{Op: OpALU, ALU: a, UopBegin: uint32(a), UopEnd: uint32(a) + 1, IterOut: 1, IterIn: 2, DstFactor: [2]uint32{1, 2}, SrcFactor: [2]uint32{3, 4}})
		}
		// Immediates: small, negative, extreme; in bf16 ±0, ±inf,
		// NaNs (quiet, signalling, negative), subnormals, the largest.
		for _, imm := range []uint16{0, 1, 2, 0x7fff, 0x8000, 0xffff, 0xfffe, 0x3f80, 0xbf80, 0x7f80, 0xff80, 0x7fc0, 0x7fc1, 0xffc0, 0x7f81, 0x0001, 0x8001, 0x7f7f, 0x3dcd} {
			alu = append(alu, Inst{Op: OpALU, ALU: ALUOp(imm % uint16(numALUOps)), UopEnd: 1, IterOut: 1, IterIn: 1, UseImm: true, Imm: imm})
		}
		alu = append(alu, Inst{Op: OpFinish})
		ps["alu "+dp.String()] = &Program{Datapath: dp, Insts: alu}
	}
	return ps
}

func TestRoundTripHandWritten(t *testing.T) {
	for name, p := range handPrograms() {
		t.Run(name, func(t *testing.T) { requireRoundTrip(t, p) })
	}
}

// TestPrintImm pins the immediate's spelling in both datapaths.
func TestPrintImm(t *testing.T) {
	cases := []struct {
		dp   Datapath
		bits uint16
		text string
	}{
		{DPInt8, 0, "0"}, {DPInt8, 5, "5"}, {DPInt8, 0xffff, "-1"}, {DPInt8, 0x8000, "-32768"}, {DPInt8, 0x7fff, "32767"},
		{DPBF16, 0, "0"}, {DPBF16, 0x8000, "-0"}, {DPBF16, 0x3f80, "1"}, {DPBF16, 0xc000, "-2"},
		{DPBF16, 0x3dcd, "0.100097656"}, {DPBF16, 0x7f80, "+Inf"}, {DPBF16, 0xff80, "-Inf"},
		{DPBF16, 0x7fc0, "0x7fc0"}, {DPBF16, 0x7fc1, "0x7fc1"}, {DPBF16, 0xffc0, "0xffc0"}, {DPBF16, 0x7f81, "0x7f81"},
		{DPBF16, 0x0001, "9.1835e-41"}, {DPBF16, 0x7f7f, "3.3895314e+38"},
	}
	for _, c := range cases {
		assert.Equal(t, c.text, formatImm(c.dp, c.bits), "%s %#04x", c.dp, c.bits)
		p := &Program{Datapath: c.dp, Insts: []Inst{{Op: OpALU, UseImm: true, Imm: c.bits}}}
		assert.Contains(t, p.String(), " imm="+c.text+"\n")
	}
}

// TestParseImm: what the assembler accepts besides the printed forms.
func TestParseImm(t *testing.T) {
	cases := []struct {
		dp   Datapath
		text string
		bits uint16
	}{
		{DPInt8, "-1", 0xffff}, {DPInt8, "+7", 7}, {DPInt8, "-32768", 0x8000}, {DPInt8, "0x8000", 0x8000}, {DPInt8, "0XFFFF", 0xffff},
		{DPBF16, "0x3f80", 0x3f80}, {DPBF16, "1.0", 0x3f80}, {DPBF16, "0.1", 0x3dcd}, {DPBF16, "1e0", 0x3f80},
		{DPBF16, "nan", 0x7fc0}, {DPBF16, "NaN", 0x7fc0}, {DPBF16, "inf", 0x7f80}, {DPBF16, "-Inf", 0xff80},
		{DPBF16, "-0.0", 0x8000}, {DPBF16, "3.4e38", 0x7f80}, {DPBF16, "1e-50", 0}, {DPBF16, "65536", 0x4780},
		{DPBF16, "1.00390625", 0x3f80}, {DPBF16, "1.01171875", 0x3f82}, // ties to even
	}
	for _, c := range cases {
		a := &assembler{file: "imm.s", line: 1, prog: Program{Datapath: c.dp}}
		v, d := a.parseImm(c.text, 1)
		if assert.Nil(t, d, "%s %q", c.dp, c.text) {
			assert.Equal(t, c.bits, v, "%s %q: got %#04x", c.dp, c.text, v)
		}
	}
}

// TestImmExhaustive: every 16-bit immediate prints and parses back in
// both datapaths.
func TestImmExhaustive(t *testing.T) {
	for _, dp := range []Datapath{DPInt8, DPBF16} {
		a := &assembler{file: "imm.s", line: 1, prog: Program{Datapath: dp}}
		for b := 0; b <= math.MaxUint16; b++ {
			s := formatImm(dp, uint16(b))
			v, d := a.parseImm(s, 1)
			require.Nil(t, d, "%s %#04x %q", dp, b, s)
			require.Equal(t, uint16(b), v, "%s %#04x %q", dp, b, s)
		}
	}
}

func TestBF16FromFloat32(t *testing.T) {
	cases := []struct {
		f32  uint32
		bf16 uint16
	}{
		{0x3f800000, 0x3f80}, {0x3f808000, 0x3f80}, {0x3f818000, 0x3f82}, {0x3f808001, 0x3f81}, {0x3f807fff, 0x3f80},
		{0x7f7fffff, 0x7f80}, {0xff7fffff, 0xff80}, {0x7f800000, 0x7f80}, {0xff800000, 0xff80},
		{0x7fc00000, 0x7fc0}, {0xffc00001, 0x7fc0}, {0x7f800001, 0x7fc0}, {0x80000000, 0x8000}, {0x00008000, 0}, {0x00018000, 0x0002},
	}
	for _, c := range cases {
		assert.Equal(t, c.bf16, bf16FromFloat32(math.Float32frombits(c.f32)), "%#08x", c.f32)
	}
}

// TestAssembleErrors pins every diagnostic: its message and the column of
// the offending token.
func TestAssembleErrors(t *testing.T) {
	const h = ".datapath int8\n.text\n" // line 3 is the first after h
	const dma = "load.inp sram=0 dram=0 y=1 x=1 stride=1 dtype=i8"
	const gemm = "gemm uops=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0"
	const alu = "alu.add uops=0:1 iter=1,1 dst=0,0 src=0,0"
	cases := []struct{ src, err string }{
		{"", "e.s:1:1: error: missing .datapath directive (.datapath int8 or .datapath bf16)"},
		{"; only a comment\n\n", "e.s:1:1: error: missing .datapath directive (.datapath int8 or .datapath bf16)"},
		{"  .text\n", "e.s:1:3: error: missing .datapath directive before .text (.datapath must come first)"},
		{"finish\n", `e.s:1:1: error: missing .datapath directive before "finish" (.datapath must come first)`},
		{".datapath int8\n.datapath bf16\n", "e.s:2:1: error: repeated .datapath directive (the first is at line 1)"},
		{".datapath int8\n.text\n.datapath int8\n", "e.s:3:1: error: repeated .datapath directive (the first is at line 1)"},
		{".datapath\n", "e.s:1:1: error: .datapath needs a datapath: int8 or bf16"},
		{".datapath fp32\n", `e.s:1:11: error: unknown datapath "fp32" (want int8 or bf16)`},
		{".datapath int8 bf16\n", `e.s:1:16: error: unexpected "bf16" after .datapath int8`},
		{".datapath int8\n.text x\n", `e.s:2:7: error: unexpected "x" after .text`},
		{".datapath int8\n.data\n", `e.s:2:1: error: unknown directive ".data" (known: .datapath, .uops, .text)`},
		{".datapath int8\nfinish\n", "e.s:2:1: error: instruction finish outside .text"},
		{".datapath int8\n.uops\n  gemm\n", "e.s:3:3: error: instruction gemm outside .text"},
		{".datapath int8\n.uops\n  acc=0 inp=0 wgt=0\n  nop\n", `e.s:4:3: error: expected a micro-op (acc=N inp=N wgt=N), got "nop"`},
		{".datapath int8\nacc=0 inp=0 wgt=0\n", "e.s:2:1: error: micro-op outside .uops"},
		{h + "  acc=0 inp=0 wgt=0\n", "e.s:3:3: error: micro-op outside .uops"},
		{".datapath int8\n.uops\nacc=0 inp=0 wgt=0 x\n", `e.s:3:19: error: unexpected "x" in a micro-op (want acc=N inp=N wgt=N)`},
		{".datapath int8\n.uops\nacc=0 inp=0 dst=0\n", `e.s:3:13: error: unknown micro-op key "dst" (known: acc, inp, wgt)`},
		{".datapath int8\n.uops\nacc=0 inp=0 acc=1\n", "e.s:3:13: error: duplicate acc\ne.s:3:1: note: first acc is here"},
		{".datapath int8\n.uops\n inp=0 wgt=0\n", "e.s:3:2: error: micro-op is missing key acc="},
		{".datapath int8\n.uops\nacc=2097152 inp=0 wgt=0\n", "e.s:3:5: error: 2097152 is out of range for micro-op acc (at most 2097151)"},
		{".datapath int8\n.uops\nacc=0 inp=0 wgt=4194304\n", "e.s:3:17: error: 4194304 is out of range for micro-op wgt (at most 4194303)"},
		{".datapath int8\n.uops\nacc=-1 inp=0 wgt=0\n", `e.s:3:5: error: malformed number "-1" for micro-op acc (want a decimal or 0x hex number)`},
		{h + "nop\n", `e.s:3:1: error: unknown mnemonic "nop" (known: load.uop, load.inp, load.wgt, load.acc, store.uop, store.inp, store.wgt, store.acc, gemm, alu.min, alu.max, alu.add, alu.sub, alu.mul, alu.shr, alu.clip, alu.mov, alu.mulhi, alu.mulq, finish)`},
		{h + "alu.div\n", `e.s:3:1: error: unknown mnemonic "alu.div" (known: load.uop, load.inp, load.wgt, load.acc, store.uop, store.inp, store.wgt, store.acc, gemm, alu.min, alu.max, alu.add, alu.sub, alu.mul, alu.shr, alu.clip, alu.mov, alu.mulhi, alu.mulq, finish)`},
		{h + dma + " foo=1\n", `e.s:3:50: error: unknown key "foo" for load.inp (known: sram, dram, y, x, stride, dtype, pad)`},
		{h + gemm + " imm=1\n", `e.s:3:48: error: unknown key "imm" for gemm (known: uops, iter, dst, src, wgt)`},
		{h + alu + " wgt=0,0\n", `e.s:3:43: error: unknown key "wgt" for alu.add (known: uops, iter, dst, src, imm)`},
		{h + "finish sram=0\n", `e.s:3:8: error: unknown key "sram" for finish (it takes only flags)`},
		{h + alu + " reset\n", `e.s:3:43: error: unknown flag "reset" for alu.add (known: pop_prev, pop_next, push_prev, push_next)`},
		{h + dma + " push\n", `e.s:3:50: error: unknown flag "push" for load.inp (known: pop_prev, pop_next, push_prev, push_next)`},
		{h + gemm + " reset=1\n", "e.s:3:48: error: flag reset takes no value"},
		{h + dma + " pad\n", "e.s:3:50: error: key pad of load.inp needs a value (pad=TOP,BOTTOM,LEFT,RIGHT)"},
		{h + dma + " sram=1\n", "e.s:3:50: error: duplicate sram\ne.s:3:10: note: first sram is here"},
		{h + "finish push_next push_next\n", "e.s:3:18: error: duplicate push_next\ne.s:3:8: note: first push_next is here"},
		{h + "load.inp sram=0 y=1 x=1 stride=1 dtype=i8\n", "e.s:3:1: error: load.inp is missing key dram=N"},
		{h + "  store.acc sram=0 dram=0 y=1 x=1 stride=1\n", "e.s:3:3: error: store.acc is missing key dtype=i8|bf16|f32|i32|u8"},
		{h + "gemm uops=0:1 iter=1,1 dst=0,0 src=0,0\n", "e.s:3:1: error: gemm is missing key wgt=OUT,IN"},
		{h + "alu.min iter=1,1 dst=0,0 src=0,0\n", "e.s:3:1: error: alu.min is missing key uops=BEGIN:END"},
		{h + "load.inp sram=0 dram=0 y=1 x=1 stride=1 dtype=i4\n", `e.s:3:47: error: unknown dtype "i4" (want i8, bf16, f32, i32, u8)`},
		{h + "load.inp sram=65536 dram=0 y=1 x=1 stride=1 dtype=i8\n", "e.s:3:15: error: 65536 is out of range for sram_base (at most 65535)"},
		{h + "load.inp sram=0 dram=0x100000000 y=1 x=1 stride=1 dtype=i8\n", "e.s:3:22: error: 0x100000000 is out of range for dram_base (at most 4294967295)"},
		{h + "load.inp sram=0 dram=99999999999999999999 y=1 x=1 stride=1 dtype=i8\n", "e.s:3:22: error: 99999999999999999999 is out of range for dram_base (at most 4294967295)"},
		{h + "load.inp sram= dram=0 y=1 x=1 stride=1 dtype=i8\n", `e.s:3:15: error: malformed number "" for sram_base (want a decimal or 0x hex number)`},
		{h + "load.inp sram=1_0 dram=0 y=1 x=1 stride=1 dtype=i8\n", `e.s:3:15: error: malformed number "1_0" for sram_base (want a decimal or 0x hex number)`},
		{h + "load.inp sram=0x dram=0 y=1 x=1 stride=1 dtype=i8\n", `e.s:3:15: error: malformed number "0x" for sram_base (want a decimal or 0x hex number)`},
		{h + dma + " pad=1,2,16,0\n", "e.s:3:58: error: 16 is out of range for pad_left (at most 15)"},
		{h + dma + " pad=1,2,3\n", `e.s:3:54: error: malformed value "1,2,3" for pad (want pad=TOP,BOTTOM,LEFT,RIGHT)`},
		{h + "gemm uops=0,1 iter=1,1 dst=0,0 src=0,0 wgt=0,0\n", `e.s:3:11: error: malformed value "0,1" for uops (want uops=BEGIN:END)`},
		{h + "gemm uops=0:16384 iter=1,1 dst=0,0 src=0,0 wgt=0,0\n", "e.s:3:13: error: 16384 is out of range for uop_end (at most 16383)"},
		{h + "gemm uops=8192:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0\n", "e.s:3:11: error: 8192 is out of range for uop_begin (at most 8191)"},
		{h + "gemm uops=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,1024\n", "e.s:3:46: error: 1024 is out of range for wgt_factor_in (at most 1023)"},
		{h + "alu.add uops=0:1 iter=1,1 dst=2048,0 src=0,0\n", "e.s:3:31: error: 2048 is out of range for dst_factor_out (at most 2047)"},
		{h + alu + " imm=32768\n", "e.s:3:47: error: imm 32768 is out of range for the int8 datapath (-32768 to 32767)"},
		{h + alu + " imm=1.5\n", `e.s:3:47: error: malformed imm "1.5" (want a decimal integer or 0x hex bits)`},
		{h + alu + " imm=0x10000\n", "e.s:3:47: error: imm 0x10000 is out of range (at most 0xffff)"},
		{h + alu + " imm=0xg\n", `e.s:3:47: error: malformed imm "0xg" (want 0x and up to 4 hex digits)`},
		{".datapath bf16\n.text\n" + alu + " imm=1e39\n", "e.s:3:47: error: imm 1e39 is out of range for bf16"},
		{".datapath bf16\n.text\n" + alu + " imm=one\n", `e.s:3:47: error: malformed imm "one" (want a number or 0x hex bits)`},
		{".datapath bf16\n.text\n" + alu + " imm=\n", `e.s:3:47: error: malformed imm "" (want a number or 0x hex bits)`},
		{".datapath bf16\n.text\n" + alu + " imm=1 imm=2\n", "e.s:3:49: error: duplicate imm\ne.s:3:43: note: first imm is here"},
		{h + "\tfinish\t=1\n", `e.s:3:9: error: unknown key "" for finish (it takes only flags)`},
	}
	for _, c := range cases {
		p, err := Assemble("e.s", []byte(c.src))
		if assert.Error(t, err, "%q", c.src) {
			assert.Nil(t, p)
			assert.Equal(t, c.err, err.Error(), "%q", c.src)
			var d *syntax.Diagnostic
			assert.ErrorAs(t, err, &d)
		}
	}
}

// TestAssembleAccepts: spellings the parser takes beyond the printer's.
func TestAssembleAccepts(t *testing.T) {
	src := ".datapath int8 ; c\r\n.text\r\n\tload.acc  x=0x10\tdtype=i32 stride=0X1 y=010 dram=0 sram=0 pad=0,0,0,0 push_next pop_next\r\n" +
		".uops\nacc=0x1 inp=2 wgt=3;c\n.text\nfinish;end"
	p, err := Assemble("a.s", []byte(src))
	require.NoError(t, err)
	require.Equal(t, &Program{Datapath: DPInt8,
		Insts: []Inst{
			{Op: OpLoad, Mem: MemAcc, XSize: 16, DType: DTInt32, XStride: 1, YSize: 10, Deps: Deps{PopNext: true, PushNext: true}},
			{Op: OpFinish},
		},
		Uops: []Uop{{1, 2, 3}},
	}, p)
}

// TestEncodeRefusesHiddenState: enumeration values past their lists and
// an immediate without use_imm neither encode nor decode (they have no
// text form).
func TestEncodeRefusesHiddenState(t *testing.T) {
	bad := []Inst{
		{Op: OpLoad, DType: numDTypes},
		{Op: OpStore, DType: 7},
		{Op: OpALU, ALU: numALUOps},
		{Op: OpALU, ALU: 15},
		{Op: OpALU, Imm: 1},
	}
	for _, in := range bad {
		_, err := in.Encode()
		assert.Error(t, err, "%+v", in)
		// The same bits, forced, do not decode.
		var w bits128
		w.put(0, 3, uint64(in.Op))
		pos := uint(7)
		for _, f := range fieldsOf(in.Op) {
			var v uint32
			if f.ptr != nil {
				v = *f.ptr(&in)
			} else {
				proxy(&in, f.name, &v, false)
			}
			w.put(pos, f.bits, uint64(v))
			pos += f.bits
		}
		var b [InstBytes]byte
		for i := 0; i < 128; i++ {
			if w.get(uint(i), 1) != 0 {
				b[i/8] |= 1 << (i % 8)
			}
		}
		_, err = DecodeInst(b[:])
		assert.Error(t, err, "%+v", in)
	}
	ok := Inst{Op: OpALU, UseImm: true}
	_, err := ok.Encode()
	assert.NoError(t, err)
}

// randomProgram returns a program with random instructions and micro-ops
// whose fields take random values within their widths (often 0 or the
// largest), so that MarshalBinary accepts it but Validate usually does
// not.
func randomProgram(r *rand.Rand) *Program {
	val := func(bits uint) uint32 {
		switch r.Intn(4) {
		case 0:
			return 0
		case 1:
			return uint32(1<<bits - 1)
		}
		return uint32(r.Uint64() & (1<<bits - 1))
	}
	p := &Program{Datapath: Datapath(r.Intn(int(numDatapaths)))}
	for n := r.Intn(12); len(p.Insts) < n; {
		in := Inst{Op: Opcode(r.Intn(int(numOpcodes)))}
		in.Deps = Deps{PopPrev: r.Intn(2) == 0, PopNext: r.Intn(2) == 0, PushPrev: r.Intn(2) == 0, PushNext: r.Intn(2) == 0}
		for _, f := range fieldsOf(in.Op) {
			if f.ptr != nil {
				*f.ptr(&in) = val(f.bits)
				continue
			}
			var v uint32
			switch f.name {
			case "mem":
				v = uint32(r.Intn(int(numMemories)))
			case "dtype":
				v = uint32(r.Intn(int(numDTypes)))
			case "alu_op":
				v = uint32(r.Intn(int(numALUOps)))
			case "imm":
				if !in.UseImm { // use_imm comes first
					continue
				}
				v = val(f.bits)
			default:
				v = uint32(r.Intn(2))
			}
			proxy(&in, f.name, &v, true)
		}
		p.Insts = append(p.Insts, in)
	}
	for n := r.Intn(6); len(p.Uops) < n; {
		p.Uops = append(p.Uops, Uop{val(uopAccBits), val(uopInpBits), val(uopWgtBits)})
	}
	return p
}

func TestRandomRoundTrip(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	n := 3000
	if testing.Short() {
		n = 300
	}
	for i := 0; i < n; i++ {
		p := randomProgram(r)
		requireRoundTrip(t, p)
	}
}

// TestAssembleNeverPanics feeds every prefix of the canonical texts and
// single-byte corruptions of them.
func TestAssembleNeverPanics(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for _, p := range handPrograms() {
		text := p.String()
		for i := 0; i <= len(text); i += 1 + i/64 {
			_, _ = Assemble("p.s", []byte(text[:i]))
		}
		junk := []byte("=:,;.\n\t x0-9")
		for k := 0; k < 200; k++ {
			b := []byte(text)
			b[r.Intn(len(b))] = junk[r.Intn(len(junk))]
			q, err := Assemble("p.s", b)
			if err == nil {
				requireRoundTrip(t, q)
			}
		}
	}
}

// TestStringOfInvalidProgram: the printer does not panic on programs
// MarshalBinary refuses.
func TestStringOfInvalidProgram(t *testing.T) {
	p := &Program{Datapath: 9, Insts: []Inst{{Op: 7}, {Op: OpLoad, Mem: 9, DType: 9}, {Op: OpALU, ALU: 99, Imm: 3}}}
	s := p.String()
	assert.Contains(t, s, ".datapath datapath(9)")
	assert.Contains(t, s, "opcode(7)")
	assert.Contains(t, s, "load.memory(9)")
	_, err := Assemble("x.s", []byte(s))
	assert.Error(t, err)
	assert.True(t, strings.HasPrefix(s, "; Tessera NPU program\n"))
}
