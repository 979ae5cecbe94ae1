// Package isa defines the Tessera NPU's instruction set (targets/npu/ISA.md):
// its configuration, the instructions and micro-ops, their fixed-width
// binary encoding (128-bit instructions, 64-bit micro-ops) and the text
// assembly form. The design follows VTA (apache/tvm-vta: decoupled load,
// compute and store modules synchronized by dependency tokens; 2-D
// strided DMA with on-the-fly padding; GEMM and ALU as micro-op loop
// nests) with a bf16 datapath beside the int8 one (as the TPU's MXU).
package isa

import "fmt"

// Opcode is an instruction's kind.
type Opcode uint8

// The opcodes (3 bits).
const (
	OpLoad Opcode = iota
	OpStore
	OpGEMM
	OpALU
	OpFinish
	numOpcodes
)

var opcodeNames = [...]string{"load", "store", "gemm", "alu", "finish"}

func (o Opcode) String() string {
	if o < numOpcodes {
		return opcodeNames[o]
	}
	return fmt.Sprintf("opcode(%d)", o)
}

// Memory is a scratchpad: the target of a LOAD, the source of a STORE.
type Memory uint8

// The scratchpads (2 bits).
const (
	MemUop Memory = iota
	MemInp
	MemWgt
	MemAcc
	numMemories
)

var memoryNames = [...]string{"uop", "inp", "wgt", "acc"}

func (m Memory) String() string {
	if m < numMemories {
		return memoryNames[m]
	}
	return fmt.Sprintf("memory(%d)", m)
}

// maxDepth is the most entries a scratchpad may have: what its address
// fields reach (uop_begin is 13 bits; sram_base 16 bits).
func (m Memory) maxDepth() int {
	if m == MemUop {
		return 1 << 13
	}
	return 1 << 16
}

// valueBytes is the size of one value of scratchpad m in datapath dp.
func (m Memory) valueBytes(dp Datapath) int {
	switch m {
	case MemUop:
		return UopBytes
	case MemAcc:
		return 4
	}
	if dp == DPBF16 {
		return 2
	}
	return 1
}

// DType is the element type of a DMA's DRAM side.
type DType uint8

// The DRAM element types (3 bits).
const (
	DTInt8 DType = iota
	DTBF16
	DTF32
	DTInt32
	// DTUInt8 is an unsigned byte, zero-extended where loaded (int8
	// datapath: inp, wgt, acc) and saturated to [0, 255] where stored.
	DTUInt8
	numDTypes
)

var dtypeNames = [...]string{"i8", "bf16", "f32", "i32", "u8"}

func (d DType) String() string {
	if d < numDTypes {
		return dtypeNames[d]
	}
	return fmt.Sprintf("dtype(%d)", d)
}

// Bytes is the size of one element.
func (d DType) Bytes() int { return [...]int{1, 2, 4, 4, 1}[d] }

// Datapath is the matrix unit's arithmetic, chosen per program:
// int8×int8→int32 or bf16×bf16→f32.
type Datapath uint8

// The datapaths.
const (
	DPInt8 Datapath = iota
	DPBF16
	numDatapaths
)

func (d Datapath) String() string {
	switch d {
	case DPInt8:
		return "int8"
	case DPBF16:
		return "bf16"
	}
	return fmt.Sprintf("datapath(%d)", d)
}

// ALUOp is the vector ALU's operation (4 bits).
type ALUOp uint8

// The ALU operations (ISA.md, "ALU"): dst = op(dst, src) elementwise on
// accumulator entries, src an accumulator entry or the immediate.
const (
	ALUMin ALUOp = iota
	ALUMax
	ALUAdd
	ALUSub
	ALUMul
	ALUShr
	ALUClip
	ALUMov
	ALUMulHi
	// ALUMulQ is floor(d·v / 2^31) on the exact 64-bit product: with shr
	// by s ≥ 1 after it, single-rounding requantization (ISA.md, "ALU").
	ALUMulQ
	numALUOps
)

var aluNames = [...]string{"min", "max", "add", "sub", "mul", "shr", "clip", "mov", "mulhi", "mulq"}

func (a ALUOp) String() string {
	if a < numALUOps {
		return aluNames[a]
	}
	return fmt.Sprintf("aluop(%d)", a)
}

// Module is one of the NPU's three in-order instruction modules.
type Module uint8

// The modules.
const (
	ModLoad Module = iota
	ModCompute
	ModStore
	NumModules
)

var moduleNames = [...]string{"load", "compute", "store"}

func (m Module) String() string { return moduleNames[m] }

// Deps are an instruction's dependency-token flags (VTA's): pop waits for
// and consumes a token from the previous (next) module's queue toward this
// one before the instruction starts; push sends one to the previous (next)
// module when it completes. The module order is load → compute → store.
type Deps struct {
	PopPrev, PopNext, PushPrev, PushNext bool
}

// Inst is one 128-bit instruction. Which fields mean something depends on
// Op (ISA.md lists them per opcode); the others must be zero.
type Inst struct {
	Op Opcode
	Deps
	// LOAD and STORE: a 2-D strided DMA between DRAM and scratchpad Mem.
	// YSize rows of XSize entries are read at DRAMBase (bytes; micro-op
	// index for Mem uop) with rows XStride entries apart, and written to
	// consecutive entries from SRAMBase, surrounded by zero padding of
	// PadTop/PadBottom rows and PadLeft/PadRight entries per row (LOAD
	// only). DType is the DRAM element type.
	Mem                                  Memory
	DType                                DType
	SRAMBase, DRAMBase                   uint32
	YSize, XSize, XStride                uint32
	PadTop, PadBottom, PadLeft, PadRight uint32
	// GEMM and ALU: for i0 < IterOut, i1 < IterIn, each micro-op in
	// [UopBegin, UopEnd): the entries it names plus i0×Factor[0] +
	// i1×Factor[1]. Dst is the accumulator, Src the input (GEMM) or a
	// second accumulator entry (ALU), Wgt the weight (GEMM).
	Reset                           bool
	UopBegin, UopEnd                uint32
	IterOut, IterIn                 uint32
	DstFactor, SrcFactor, WgtFactor [2]uint32
	// ALU only.
	ALU    ALUOp
	UseImm bool
	Imm    uint16
}

// Module is the module that executes the instruction: LOAD inp/wgt the
// load module; LOAD uop/acc, GEMM, ALU and FINISH the compute module;
// STORE the store module (as VTA).
func (in *Inst) Module() Module {
	switch {
	case in.Op == OpLoad && (in.Mem == MemInp || in.Mem == MemWgt):
		return ModLoad
	case in.Op == OpStore:
		return ModStore
	}
	return ModCompute
}

// Name is the assembly mnemonic: load.inp, store.acc, gemm, alu.max, finish.
func (in *Inst) Name() string {
	switch in.Op {
	case OpLoad, OpStore:
		return in.Op.String() + "." + in.Mem.String()
	case OpALU:
		return "alu." + in.ALU.String()
	}
	return in.Op.String()
}

// Entries is the number of scratchpad entries a LOAD or STORE touches
// from SRAMBase: its rows with their padding.
func (in *Inst) Entries() int64 {
	return (int64(in.PadTop) + int64(in.YSize) + int64(in.PadBottom)) * (int64(in.PadLeft) + int64(in.XSize) + int64(in.PadRight))
}

// DRAMEnd is one past the last DRAM byte a LOAD or STORE of the input,
// weight or accumulator buffer addresses on configuration cfg: from
// DRAMBase to the end of its last row, the gaps between strided rows
// included (micro-op LOADs index the program's table instead).
func (in *Inst) DRAMEnd(cfg Config) int64 {
	eb := int64(cfg.EntryValues(in.Mem) * in.DType.Bytes())
	return int64(in.DRAMBase) + ((int64(in.YSize)-1)*int64(in.XStride)+int64(in.XSize))*eb
}

// Iterations is the number of micro-op iterations of a GEMM or ALU
// instruction: IterOut × IterIn × (UopEnd − UopBegin).
func (in *Inst) Iterations() int64 {
	if in.UopEnd <= in.UopBegin {
		return 0
	}
	return int64(in.IterOut) * int64(in.IterIn) * int64(in.UopEnd-in.UopBegin)
}

// UopBytes is the size of one micro-op in DRAM and in the uop buffer.
const UopBytes = 8

// Uop is a micro-op (64 bits): accumulator, input and weight entry
// indices (21, 21 and 22 bits). ALU micro-ops use Acc as the destination
// and Inp as the source accumulator entry.
type Uop struct {
	Acc, Inp, Wgt uint32
}

// Program is what runs on the NPU: the datapath, the instructions (ending
// with FINISH) and the micro-op table that LOAD uop instructions copy into
// the uop buffer (their DRAMBase indexes this table).
type Program struct {
	Datapath Datapath
	Insts    []Inst
	Uops     []Uop
}
