package isa

import (
	"encoding/binary"
	"fmt"
)

// InstBytes is the size of one encoded instruction.
const InstBytes = 16

// field is one bit field of an instruction encoding, after the 7 common
// bits (opcode 3, pop_prev, pop_next, push_prev, push_next).
type field struct {
	name string
	bits uint
	ptr  func(*Inst) *uint32
}

func u32(f func(*Inst) *uint32) func(*Inst) *uint32 { return f }

// The field layouts per opcode, least significant bits first (ISA.md,
// "Encoding"). Flags and enumerations are stored through uint32 proxies
// by encodeFields/decodeFields.
var (
	dmaFields = []field{
		{"mem", 2, nil}, {"dtype", 3, nil},
		{"sram_base", 16, u32(func(i *Inst) *uint32 { return &i.SRAMBase })},
		{"dram_base", 32, u32(func(i *Inst) *uint32 { return &i.DRAMBase })},
		{"y_size", 16, u32(func(i *Inst) *uint32 { return &i.YSize })},
		{"x_size", 16, u32(func(i *Inst) *uint32 { return &i.XSize })},
		{"x_stride", 16, u32(func(i *Inst) *uint32 { return &i.XStride })},
		{"pad_top", 4, u32(func(i *Inst) *uint32 { return &i.PadTop })},
		{"pad_bottom", 4, u32(func(i *Inst) *uint32 { return &i.PadBottom })},
		{"pad_left", 4, u32(func(i *Inst) *uint32 { return &i.PadLeft })},
		{"pad_right", 4, u32(func(i *Inst) *uint32 { return &i.PadRight })},
	}
	loopFields = []field{
		{"uop_begin", 13, u32(func(i *Inst) *uint32 { return &i.UopBegin })},
		{"uop_end", 14, u32(func(i *Inst) *uint32 { return &i.UopEnd })},
		{"iter_out", 14, u32(func(i *Inst) *uint32 { return &i.IterOut })},
		{"iter_in", 14, u32(func(i *Inst) *uint32 { return &i.IterIn })},
		{"dst_factor_out", 11, u32(func(i *Inst) *uint32 { return &i.DstFactor[0] })},
		{"dst_factor_in", 11, u32(func(i *Inst) *uint32 { return &i.DstFactor[1] })},
		{"src_factor_out", 11, u32(func(i *Inst) *uint32 { return &i.SrcFactor[0] })},
		{"src_factor_in", 11, u32(func(i *Inst) *uint32 { return &i.SrcFactor[1] })},
	}
	gemmFields = append(append([]field{{"reset", 1, nil}}, loopFields...),
		field{"wgt_factor_out", 10, u32(func(i *Inst) *uint32 { return &i.WgtFactor[0] })},
		field{"wgt_factor_in", 10, u32(func(i *Inst) *uint32 { return &i.WgtFactor[1] })})
	aluFields = append(append([]field{{"alu_op", 4, nil}}, loopFields...),
		field{"use_imm", 1, nil}, field{"imm", 16, nil})
)

// fieldsOf returns the layout of opcode op (nil for FINISH).
func fieldsOf(op Opcode) []field {
	switch op {
	case OpLoad, OpStore:
		return dmaFields
	case OpGEMM:
		return gemmFields
	case OpALU:
		return aluFields
	}
	return nil
}

// FieldMax is the largest value the named field of opcode op holds
// (0 when op has no such field).
func FieldMax(op Opcode, name string) uint32 {
	for _, f := range fieldsOf(op) {
		if f.name == name {
			return uint32(1<<f.bits - 1)
		}
	}
	return 0
}

// proxy reads (set=false) or writes the enumeration and flag fields that
// are not uint32s in Inst.
func proxy(in *Inst, name string, v *uint32, set bool) {
	b := func(p *bool) {
		if set {
			*p = *v != 0
		} else if *p {
			*v = 1
		} else {
			*v = 0
		}
	}
	switch name {
	case "mem":
		if set {
			in.Mem = Memory(*v)
		} else {
			*v = uint32(in.Mem)
		}
	case "dtype":
		if set {
			in.DType = DType(*v)
		} else {
			*v = uint32(in.DType)
		}
	case "alu_op":
		if set {
			in.ALU = ALUOp(*v)
		} else {
			*v = uint32(in.ALU)
		}
	case "imm":
		if set {
			in.Imm = uint16(*v)
		} else {
			*v = uint32(in.Imm)
		}
	case "reset":
		b(&in.Reset)
	case "use_imm":
		b(&in.UseImm)
	}
}

// bits128 is a 128-bit little-endian bit buffer.
type bits128 [2]uint64

func (w *bits128) put(pos, n uint, v uint64) {
	for i := uint(0); i < n; i++ {
		if v>>i&1 != 0 {
			p := pos + i
			w[p/64] |= 1 << (p % 64)
		}
	}
}

func (w *bits128) get(pos, n uint) uint64 {
	var v uint64
	for i := uint(0); i < n; i++ {
		p := pos + i
		v |= (w[p/64] >> (p % 64) & 1) << i
	}
	return v
}

// Encode returns the 16-byte encoding of in. Errors: an unknown opcode, a
// field value wider than its field, a field the opcode does not have set
// to non-zero, an enumeration (dtype, ALU operation) out of its list, an
// ALU immediate set without UseImm.
func (in *Inst) Encode() ([InstBytes]byte, error) {
	var out [InstBytes]byte
	if in.Op >= numOpcodes {
		return out, fmt.Errorf("unknown opcode %d", in.Op)
	}
	if err := in.checkUnused(); err != nil {
		return out, err
	}
	if err := in.checkEnums(); err != nil {
		return out, err
	}
	var w bits128
	w.put(0, 3, uint64(in.Op))
	for i, f := range []bool{in.PopPrev, in.PopNext, in.PushPrev, in.PushNext} {
		if f {
			w.put(3+uint(i), 1, 1)
		}
	}
	pos := uint(7)
	for _, f := range fieldsOf(in.Op) {
		var v uint32
		if f.ptr != nil {
			v = *f.ptr(in)
		} else {
			proxy(in, f.name, &v, false)
		}
		if uint64(v) >= 1<<f.bits {
			return out, fmt.Errorf("%s: %s = %d does not fit its %d bits (at most %d)", in.Name(), f.name, v, f.bits, 1<<f.bits-1)
		}
		w.put(pos, f.bits, uint64(v))
		pos += f.bits
	}
	binary.LittleEndian.PutUint64(out[:8], w[0])
	binary.LittleEndian.PutUint64(out[8:], w[1])
	return out, nil
}

// checkUnused refuses non-zero fields that in's opcode does not encode
// (they would be lost by a round trip).
func (in *Inst) checkUnused() error {
	z := Inst{Op: in.Op, Deps: in.Deps}
	for _, f := range fieldsOf(in.Op) {
		var v uint32
		if f.ptr != nil {
			v = *f.ptr(in)
			*f.ptr(&z) = v
		} else {
			proxy(in, f.name, &v, false)
			proxy(&z, f.name, &v, true)
		}
	}
	if z != *in {
		return fmt.Errorf("%s: sets fields a %s instruction does not have", in.Name(), in.Op)
	}
	return nil
}

// checkEnums refuses enumeration values beyond their lists that still
// fit their fields (dtype 5..7, alu_op 10..15: DecodeInst refuses them), and
// an immediate without use_imm (its bits would mean nothing, and the text
// form could not keep them).
func (in *Inst) checkEnums() error {
	switch {
	case (in.Op == OpLoad || in.Op == OpStore) && in.DType >= numDTypes:
		return fmt.Errorf("%s: unknown dtype %d", in.Name(), in.DType)
	case in.Op == OpALU && in.ALU >= numALUOps:
		return fmt.Errorf("unknown ALU operation %d", in.ALU)
	case in.Op == OpALU && !in.UseImm && in.Imm != 0:
		return fmt.Errorf("%s: imm = %d without use_imm", in.Name(), in.Imm)
	}
	return nil
}

// DecodeInst decodes one 16-byte instruction. Errors: an unknown opcode,
// an enumeration value out of range, an immediate without use_imm,
// non-zero bits beyond the opcode's fields.
func DecodeInst(b []byte) (Inst, error) {
	var in Inst
	if len(b) != InstBytes {
		return in, fmt.Errorf("an instruction is %d bytes, got %d", InstBytes, len(b))
	}
	w := bits128{binary.LittleEndian.Uint64(b[:8]), binary.LittleEndian.Uint64(b[8:])}
	in.Op = Opcode(w.get(0, 3))
	if in.Op >= numOpcodes {
		return in, fmt.Errorf("unknown opcode %d", in.Op)
	}
	in.PopPrev, in.PopNext = w.get(3, 1) == 1, w.get(4, 1) == 1
	in.PushPrev, in.PushNext = w.get(5, 1) == 1, w.get(6, 1) == 1
	pos := uint(7)
	for _, f := range fieldsOf(in.Op) {
		v := uint32(w.get(pos, f.bits))
		if f.ptr != nil {
			*f.ptr(&in) = v
		} else {
			proxy(&in, f.name, &v, true)
		}
		pos += f.bits
	}
	for p := pos; p < 128; p++ {
		if w.get(p, 1) != 0 {
			return in, fmt.Errorf("%s: reserved bit %d is set", in.Name(), p)
		}
	}
	if in.Mem >= numMemories {
		return in, fmt.Errorf("unknown memory %d", in.Mem)
	}
	if err := in.checkEnums(); err != nil {
		return in, err
	}
	return in, nil
}

// Uop field widths.
const (
	uopAccBits = 21
	uopInpBits = 21
	uopWgtBits = 22
)

// Encode packs u into 64 bits. Errors: an index wider than its field.
func (u Uop) Encode() (uint64, error) {
	if u.Acc >= 1<<uopAccBits || u.Inp >= 1<<uopInpBits || u.Wgt >= 1<<uopWgtBits {
		return 0, fmt.Errorf("micro-op {acc %d, inp %d, wgt %d} does not fit its fields (21, 21, 22 bits)", u.Acc, u.Inp, u.Wgt)
	}
	return uint64(u.Acc) | uint64(u.Inp)<<uopAccBits | uint64(u.Wgt)<<(uopAccBits+uopInpBits), nil
}

// DecodeUop unpacks a 64-bit micro-op.
func DecodeUop(v uint64) Uop {
	return Uop{
		Acc: uint32(v & (1<<uopAccBits - 1)),
		Inp: uint32(v >> uopAccBits & (1<<uopInpBits - 1)),
		Wgt: uint32(v >> (uopAccBits + uopInpBits)),
	}
}

// Binary program format (ISA.md, "Program file"): a 16-byte header
// ("TNPU", version u16, datapath u8, reserved u8, instruction count u32,
// micro-op count u32), the instructions, then the micro-ops, little endian.
const (
	binaryMagic   = "TNPU"
	binaryVersion = 1
	headerBytes   = 16
)

// MarshalBinary encodes p (the `--emit npu-bin` form). Errors: an
// instruction or micro-op that does not encode, naming its index.
func (p *Program) MarshalBinary() ([]byte, error) {
	if p.Datapath >= numDatapaths {
		return nil, fmt.Errorf("unknown datapath %d", p.Datapath)
	}
	out := make([]byte, headerBytes, headerBytes+InstBytes*len(p.Insts)+UopBytes*len(p.Uops))
	copy(out, binaryMagic)
	binary.LittleEndian.PutUint16(out[4:], binaryVersion)
	out[6] = byte(p.Datapath)
	binary.LittleEndian.PutUint32(out[8:], uint32(len(p.Insts)))
	binary.LittleEndian.PutUint32(out[12:], uint32(len(p.Uops)))
	for i := range p.Insts {
		b, err := p.Insts[i].Encode()
		if err != nil {
			return nil, fmt.Errorf("instruction %d: %v", i, err)
		}
		out = append(out, b[:]...)
	}
	for i, u := range p.Uops {
		v, err := u.Encode()
		if err != nil {
			return nil, fmt.Errorf("micro-op %d: %v", i, err)
		}
		out = binary.LittleEndian.AppendUint64(out, v)
	}
	return out, nil
}

// UnmarshalBinary decodes a program file. Errors: a short or long file,
// a wrong magic or version, an unknown datapath, an instruction that does
// not decode (naming its index and byte offset).
func (p *Program) UnmarshalBinary(data []byte) error {
	if len(data) < headerBytes {
		return fmt.Errorf("npu program: %d bytes, shorter than the %d-byte header", len(data), headerBytes)
	}
	if string(data[:4]) != binaryMagic {
		return fmt.Errorf("npu program: bad magic %q (want %q)", data[:4], binaryMagic)
	}
	if v := binary.LittleEndian.Uint16(data[4:]); v != binaryVersion {
		return fmt.Errorf("npu program: version %d, this build reads version %d", v, binaryVersion)
	}
	dp := Datapath(data[6])
	if dp >= numDatapaths || data[7] != 0 {
		return fmt.Errorf("npu program: unknown datapath %d", data[6])
	}
	ni := uint64(binary.LittleEndian.Uint32(data[8:]))
	nu := uint64(binary.LittleEndian.Uint32(data[12:]))
	if want := headerBytes + ni*InstBytes + nu*UopBytes; uint64(len(data)) != want {
		return fmt.Errorf("npu program: %d instructions and %d micro-ops take %d bytes, the file has %d", ni, nu, want, len(data))
	}
	q := Program{Datapath: dp, Insts: make([]Inst, ni), Uops: make([]Uop, nu)}
	off := headerBytes
	for i := range q.Insts {
		in, err := DecodeInst(data[off : off+InstBytes])
		if err != nil {
			return fmt.Errorf("npu program: instruction %d (byte %d): %v", i, off, err)
		}
		q.Insts[i] = in
		off += InstBytes
	}
	for i := range q.Uops {
		q.Uops[i] = DecodeUop(binary.LittleEndian.Uint64(data[off:]))
		off += UopBytes
	}
	*p = q
	return nil
}
