package isa

// Iteration is one micro-op iteration of a GEMM or ALU instruction: its
// loop indices and the entries it names (ISA.md, "GEMM"): Dst in the
// accumulator, Src in the input buffer (GEMM) or the accumulator (ALU),
// Wgt in the weight buffer (GEMM).
type Iteration struct {
	I0, I1, Uop   int
	Dst, Src, Wgt int
}

// At is iteration (i0, i1) of micro-op u, whose value is op: the entries
// it names plus i0×Factor[0] + i1×Factor[1].
func (in *Inst) At(i0, i1, u int, op Uop) Iteration {
	return Iteration{I0: i0, I1: i1, Uop: u,
		Dst: int(op.Acc) + i0*int(in.DstFactor[0]) + i1*int(in.DstFactor[1]),
		Src: int(op.Inp) + i0*int(in.SrcFactor[0]) + i1*int(in.SrcFactor[1]),
		Wgt: int(op.Wgt) + i0*int(in.WgtFactor[0]) + i1*int(in.WgtFactor[1]),
	}
}

// ForEachIteration calls body for every micro-op iteration of in, a GEMM
// or ALU instruction, in the order the hardware runs them (i0 < IterOut,
// i1 < IterIn, u in [UopBegin, UopEnd)), reading micro-op u from uops
// (the uop buffer, indexed by entry; the caller checks that UopEnd is
// within it). It stops at body's first error and returns it.
func (in *Inst) ForEachIteration(uops []Uop, body func(Iteration) error) error {
	for i0 := 0; i0 < int(in.IterOut); i0++ {
		for i1 := 0; i1 < int(in.IterIn); i1++ {
			for u := int(in.UopBegin); u < int(in.UopEnd); u++ {
				if err := body(in.At(i0, i1, u, uops[u])); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
