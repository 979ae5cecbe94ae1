package isa

// ElideLoads removes every LOAD into a scratchpad only LOADs write (inp,
// wgt, uop) that would copy exactly what its entries already hold: the
// same DMA (DRAM address, element type, shape, stride, padding) into the
// same entries as an earlier LOAD, with no LOAD overwriting any of those
// entries and no STORE writing any of the DRAM bytes it reads in between
// (in program order; micro-ops come from the program's table, which no
// STORE writes). It is redundant-load elimination on the instruction
// stream: a tile order whose consecutive tiles share an operand (the
// weights of one N tile, the inputs of one M tile) reuses it from the
// scratchpad part where a tile a virtual-thread cycle earlier left it.
// The accumulator is written by GEMM and ALU too, so its LOADs are kept.
//
// Removing instructions invalidates tokens, so ElideLoads clears every
// dependency flag; run InsertDeps after it. The program computes the
// same; it reads fewer DRAM bytes. It returns how many LOADs it removed.
// Errors: an *Error for a program Validate refuses (after the flags are
// cleared).
func ElideLoads(cfg Config, p *Program) (int, error) {
	for i := range p.Insts {
		p.Insts[i].Deps = Deps{}
	}
	if err := p.Validate(cfg); err != nil {
		return 0, err
	}
	var live [numMemories][]Inst // the LOADs whose entries still hold what they copied
	kept := p.Insts[:0]
	removed := 0
	for i := range p.Insts {
		in := p.Insts[i]
		switch {
		case in.Op == OpLoad && in.Mem != MemAcc:
			if holds(live[in.Mem], &in) {
				removed++
				continue
			}
			live[in.Mem] = append(dropOverlapping(live[in.Mem], func(r *Inst) bool { return overlaps(sramSpan(r), sramSpan(&in)) }), in)
		case in.Op == OpStore:
			for _, m := range [...]Memory{MemInp, MemWgt} {
				live[m] = dropOverlapping(live[m], func(r *Inst) bool { return overlaps(dramSpan(cfg, r), dramSpan(cfg, &in)) })
			}
		}
		kept = append(kept, in)
	}
	p.Insts = kept
	return removed, nil
}

// holds reports whether one of the live LOADs is the same DMA as in.
func holds(live []Inst, in *Inst) bool {
	for _, r := range live {
		if r == *in {
			return true
		}
	}
	return false
}

// dropOverlapping removes the LOADs for which gone holds, in place.
func dropOverlapping(live []Inst, gone func(*Inst) bool) []Inst {
	out := live[:0]
	for i := range live {
		if r := live[i]; !gone(&r) {
			out = append(out, r)
		}
	}
	return out
}

// span is a half-open interval [lo, hi).
type span struct{ lo, hi int64 }

func overlaps(a, b span) bool { return a.lo < b.hi && b.lo < a.hi }

// sramSpan is the scratchpad entries a DMA touches, its padding included.
func sramSpan(in *Inst) span {
	return span{int64(in.SRAMBase), int64(in.SRAMBase) + in.Entries()}
}

// dramSpan is the DRAM bytes a DMA's rows lie within; micro-op LOADs
// index the program's table instead and get an empty span.
func dramSpan(cfg Config, in *Inst) span {
	if in.Mem == MemUop {
		return span{}
	}
	return span{int64(in.DRAMBase), in.DRAMEnd(cfg)}
}
