package isa

import "fmt"

// Error is an invalid program: the instruction's index (-1 for the
// program as a whole) and what is wrong.
type Error struct {
	Index  int
	Name   string
	Reason string
}

func (e *Error) Error() string {
	if e.Index < 0 {
		return "npu program: " + e.Reason
	}
	return fmt.Sprintf("instruction %d (%s): %s", e.Index, e.Name, e.Reason)
}

// Validate checks what does not depend on execution (ISA.md, "Static
// rules"): dependency flags toward modules that exist, DMA element types
// that the datapath and scratchpad allow, non-empty DMAs and loops, ALU
// operations the datapath has, one FINISH at the end, and micro-ops and
// DMA extents within cfg's scratchpads. Errors: the first violation, an
// *Error naming the instruction.
func (p *Program) Validate(cfg Config) error {
	if p.Datapath >= numDatapaths {
		return &Error{Index: -1, Reason: fmt.Sprintf("unknown datapath %d", p.Datapath)}
	}
	if n := len(p.Insts); n == 0 || p.Insts[n-1].Op != OpFinish {
		return &Error{Index: -1, Reason: "the last instruction must be finish"}
	}
	for i, u := range p.Uops {
		if _, err := u.Encode(); err != nil {
			return &Error{Index: -1, Reason: fmt.Sprintf("micro-op %d: %v", i, err)}
		}
	}
	for i := range p.Insts {
		in := &p.Insts[i]
		if _, err := in.Encode(); err != nil {
			return &Error{Index: i, Name: in.Name(), Reason: err.Error()}
		}
		if err := p.checkInst(cfg, in, i == len(p.Insts)-1); err != "" {
			return &Error{Index: i, Name: in.Name(), Reason: err}
		}
	}
	return nil
}

// checkInst returns why in is invalid, or "".
func (p *Program) checkInst(cfg Config, in *Inst, last bool) string {
	if r := checkDeps(in); r != "" {
		return r
	}
	switch in.Op {
	case OpFinish:
		if !last {
			return "finish must be the last instruction"
		}
	case OpLoad, OpStore:
		return p.checkDMA(cfg, in)
	case OpGEMM, OpALU:
		return p.checkLoop(in)
	}
	return ""
}

// checkDeps refuses tokens toward a module that does not exist: the load
// module has no previous module, the store module no next one.
func checkDeps(in *Inst) string {
	switch in.Module() {
	case ModLoad:
		if in.PopPrev || in.PushPrev {
			return "the load module has no previous module (pop_prev/push_prev)"
		}
	case ModStore:
		if in.PopNext || in.PushNext {
			return "the store module has no next module (pop_next/push_next)"
		}
	}
	return ""
}

// allowedDTypes are the DRAM element types of a DMA to or from mem in
// datapath dp (ISA.md, "Element types allowed"): the int8 datapath takes
// i8 and u8 everywhere (and i32 for the accumulator), the bf16 datapath
// never u8.
func allowedDTypes(op Opcode, mem Memory, dp Datapath) []DType {
	switch {
	case op == OpStore && mem != MemAcc:
		return nil
	case mem == MemUop:
		return []DType{DTInt8}
	case mem == MemAcc && dp == DPInt8:
		return []DType{DTInt8, DTUInt8, DTInt32}
	case mem == MemAcc || dp == DPBF16:
		return []DType{DTBF16, DTF32}
	}
	return []DType{DTInt8, DTUInt8}
}

func (p *Program) checkDMA(cfg Config, in *Inst) string {
	ok := allowedDTypes(in.Op, in.Mem, p.Datapath)
	if in.Op == OpStore && in.Mem != MemAcc {
		return "only the accumulator buffer is stored"
	}
	found := false
	for _, d := range ok {
		found = found || d == in.DType
	}
	if !found {
		return fmt.Sprintf("dtype %s is not one of %v for %s in the %s datapath", in.DType, ok, in.Mem, p.Datapath)
	}
	pads := in.PadTop + in.PadBottom + in.PadLeft + in.PadRight
	switch {
	case in.YSize == 0 || in.XSize == 0:
		return "an empty transfer (y_size and x_size must be at least 1)"
	case in.Op == OpStore && pads != 0:
		return "store has no padding"
	case in.Mem == MemUop && (pads != 0 || in.YSize != 1):
		return "a micro-op load is one row (y_size 1) without padding"
	}
	if end, depth := int64(in.SRAMBase)+in.Entries(), int64(cfg.Depth(in.Mem, p.Datapath)); end > depth {
		return fmt.Sprintf("writes %s entries [%d, %d), beyond the buffer's %d", in.Mem, in.SRAMBase, end, depth)
	}
	if in.Mem == MemUop && int64(in.DRAMBase)+int64(in.XSize) > int64(len(p.Uops)) {
		return fmt.Sprintf("copies micro-ops [%d, %d), the program has %d", in.DRAMBase, int64(in.DRAMBase)+int64(in.XSize), len(p.Uops))
	}
	return ""
}

func (p *Program) checkLoop(in *Inst) string {
	switch {
	case in.UopEnd <= in.UopBegin:
		return fmt.Sprintf("an empty micro-op range [%d, %d)", in.UopBegin, in.UopEnd)
	case in.IterOut == 0 || in.IterIn == 0:
		return "an empty loop (iter_out and iter_in must be at least 1)"
	case in.Op == OpALU && (in.ALU == ALUMulHi || in.ALU == ALUMulQ || in.ALU == ALUShr) && p.Datapath != DPInt8:
		return in.ALU.String() + " is an int8-datapath (int32 accumulator) operation"
	}
	return ""
}
