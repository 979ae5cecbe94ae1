package isa

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// uint8Text uses the unsigned byte type and mulq of the int8 datapath:
// u8 activations times i8 weights, requantized by mulq and shr, stored
// as u8.
const uint8Text = `.datapath int8
.uops
  acc=0 inp=0 wgt=0
.text
  load.uop sram=0 dram=0 y=1 x=1 stride=1 dtype=i8
  load.inp sram=0 dram=0 y=1 x=1 stride=1 dtype=u8
  load.wgt sram=0 dram=16 y=1 x=1 stride=1 dtype=i8 push_next
  load.acc sram=1 dram=272 y=1 x=1 stride=1 dtype=u8
  gemm uops=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0 reset
  gemm uops=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0 pop_prev
  alu.mulq uops=0:1 iter=1,1 dst=0,0 src=0,0 imm=16384
  alu.shr uops=0:1 iter=1,1 dst=0,0 src=0,0 imm=3 push_next
  store.acc sram=0 dram=512 y=1 x=1 stride=1 dtype=u8 pop_prev
  finish
`

func TestAssembleUInt8AndMulQ(t *testing.T) {
	p, err := Assemble("u8.s", []byte(uint8Text))
	require.NoError(t, err)
	require.NoError(t, p.Validate(DefaultConfig()))
	assert.Equal(t, Inst{Op: OpLoad, Mem: MemInp, DType: DTUInt8, YSize: 1, XSize: 1, XStride: 1}, p.Insts[1])
	assert.Equal(t, Inst{Op: OpLoad, Mem: MemAcc, DType: DTUInt8, SRAMBase: 1, DRAMBase: 272, YSize: 1, XSize: 1, XStride: 1}, p.Insts[3])
	assert.Equal(t, Inst{Op: OpALU, ALU: ALUMulQ, UopEnd: 1, IterOut: 1, IterIn: 1, UseImm: true, Imm: 16384}, p.Insts[6])
	assert.Equal(t, Inst{Op: OpStore, Mem: MemAcc, DType: DTUInt8, DRAMBase: 512, YSize: 1, XSize: 1, XStride: 1, Deps: Deps{PopPrev: true}}, p.Insts[8])
	text := p.String()
	assert.Contains(t, text, "\n  load.inp sram=0 dram=0 y=1 x=1 stride=1 dtype=u8\n")
	assert.Contains(t, text, "\n  load.acc sram=1 dram=272 y=1 x=1 stride=1 dtype=u8\n")
	assert.Contains(t, text, "\n  alu.mulq uops=0:1 iter=1,1 dst=0,0 src=0,0 imm=16384\n")
	assert.Contains(t, text, "\n  store.acc sram=0 dram=512 y=1 x=1 stride=1 dtype=u8 pop_prev\n")
	requireRoundTrip(t, p)

	// The encodings: dtype 4 in bits 9–11, alu_op 9 in bits 7–10.
	b, err := p.Insts[1].Encode()
	require.NoError(t, err)
	assert.Equal(t, byte(4<<1), b[1]&0x0e, "dtype bits of load.inp u8")
	b, err = p.Insts[6].Encode()
	require.NoError(t, err)
	assert.Equal(t, uint16(9), (uint16(b[0])|uint16(b[1])<<8)>>7&0xf, "alu_op bits of alu.mulq")
	assert.Equal(t, 1, DTUInt8.Bytes())
	assert.Equal(t, "u8", DTUInt8.String())
	assert.Equal(t, "mulq", ALUMulQ.String())
	assert.Equal(t, DType(4), DTUInt8)
	assert.Equal(t, ALUOp(9), ALUMulQ)
}

// TestValidateUInt8AndMulQ: the int8 datapath takes u8 for LOAD inp, wgt
// and acc and STORE acc and mulq; the bf16 datapath refuses them.
func TestValidateUInt8AndMulQ(t *testing.T) {
	cfg := DefaultConfig()
	dma := func(op Opcode, mem Memory) Inst {
		return Inst{Op: op, Mem: mem, DType: DTUInt8, YSize: 1, XSize: 1, XStride: 1}
	}
	mulq := Inst{Op: OpALU, ALU: ALUMulQ, UopEnd: 1, IterOut: 1, IterIn: 1, UseImm: true, Imm: 1}
	cases := []struct {
		in   Inst
		bf16 string
	}{
		{dma(OpLoad, MemInp), "instruction 0 (load.inp): dtype u8 is not one of [bf16 f32] for inp in the bf16 datapath"},
		{dma(OpLoad, MemWgt), "instruction 0 (load.wgt): dtype u8 is not one of [bf16 f32] for wgt in the bf16 datapath"},
		{dma(OpLoad, MemAcc), "instruction 0 (load.acc): dtype u8 is not one of [bf16 f32] for acc in the bf16 datapath"},
		{dma(OpStore, MemAcc), "instruction 0 (store.acc): dtype u8 is not one of [bf16 f32] for acc in the bf16 datapath"},
		{mulq, "instruction 0 (alu.mulq): mulq is an int8-datapath (int32 accumulator) operation"},
	}
	for _, c := range cases {
		p := &Program{Datapath: DPInt8, Insts: []Inst{c.in, {Op: OpFinish}}, Uops: []Uop{{}}}
		assert.NoError(t, p.Validate(cfg), "int8 %s", c.in.Name())
		p.Datapath = DPBF16
		assert.EqualError(t, p.Validate(cfg), c.bf16)
	}
	// u8 is never a micro-op type, and the int8 error lists it.
	p := &Program{Datapath: DPInt8, Insts: []Inst{dma(OpLoad, MemUop), {Op: OpFinish}}, Uops: []Uop{{}}}
	assert.EqualError(t, p.Validate(cfg), "instruction 0 (load.uop): dtype u8 is not one of [i8] for uop in the int8 datapath")
	p.Insts[0] = Inst{Op: OpLoad, Mem: MemInp, DType: DTInt32, YSize: 1, XSize: 1, XStride: 1}
	assert.EqualError(t, p.Validate(cfg), "instruction 0 (load.inp): dtype i32 is not one of [i8 u8] for inp in the int8 datapath")
	p.Insts[0] = Inst{Op: OpStore, Mem: MemAcc, DType: DTF32, YSize: 1, XSize: 1, XStride: 1}
	assert.EqualError(t, p.Validate(cfg), "instruction 0 (store.acc): dtype f32 is not one of [i8 u8 i32] for acc in the int8 datapath")
}
