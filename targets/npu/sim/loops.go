package sim

import (
	"math"

	"github.com/tessera-ml/tessera/targets/npu/isa"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// forEachIteration runs body for every iteration of in's micro-op loop
// nest (isa.Inst.At, in isa.Inst.ForEachIteration's order), checking that each micro-op was
// loaded and each index is within its buffer.
func (m *machine) forEachIteration(in *isa.Inst, srcMem isa.Memory, body func(isa.Iteration) error) error {
	ut := m.mem.trk[isa.MemUop]
	depth := func(mem isa.Memory) int { return len(m.mem.trk[mem].writer) }
	for u := int(in.UopBegin); u < int(in.UopEnd); u++ {
		if u >= depth(isa.MemUop) {
			return m.fail(-1, "micro-op %d is beyond the uop buffer's %d entries", u, depth(isa.MemUop))
		}
		if err := m.read(ut, u); err != nil {
			return err
		}
	}
	// the simulator's hot loop: isa.Inst.ForEachIteration's nest, without
	// a second call per iteration
	for i0 := 0; i0 < int(in.IterOut); i0++ {
		for i1 := 0; i1 < int(in.IterIn); i1++ {
			for u := int(in.UopBegin); u < int(in.UopEnd); u++ {
				ix := in.At(i0, i1, u, m.mem.uop[u])
				if ix.Dst >= depth(isa.MemAcc) || ix.Src >= depth(srcMem) || (in.Op == isa.OpGEMM && ix.Wgt >= depth(isa.MemWgt)) {
					return m.fail(-1, "iteration (i0 %d, i1 %d, micro-op %d) addresses acc %d, %s %d, wgt %d: beyond the buffers (acc %d, %s %d, wgt %d entries)",
						i0, i1, u, ix.Dst, srcMem, ix.Src, ix.Wgt, depth(isa.MemAcc), srcMem, depth(srcMem), depth(isa.MemWgt))
				}
				if err := body(ix); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// gemm performs a GEMM instruction: for each iteration, acc[dst] (Batch ×
// BlockOut) = 0 when Reset, else acc[dst][b][o] += Σ_k inp[src][b][k] ×
// wgt[wgt][o][k], k ascending (int32 wrapping, the 9-bit signed i8/u8
// values multiplied exactly; or f32, each addition rounded: bf16 products
// are exact in f32).
func (m *machine) gemm(in *isa.Inst) error {
	mm := &m.mem
	acc, inp, wgt := mm.trk[isa.MemAcc], mm.trk[isa.MemInp], mm.trk[isa.MemWgt]
	return m.forEachIteration(in, isa.MemInp, func(ix isa.Iteration) error {
		m.stats.GEMMIterations++
		if in.Reset {
			m.zeroEntry(isa.MemAcc, ix.Dst)
			return m.write(acc, ix.Dst)
		}
		if err := m.read(inp, ix.Src); err != nil {
			return err
		}
		if err := m.read(wgt, ix.Wgt); err != nil {
			return err
		}
		if err := m.read(acc, ix.Dst); err != nil {
			return err
		}
		if err := m.write(acc, ix.Dst); err != nil {
			return err
		}
		m.stats.MACs += int64(m.cfg.PeakMACsPerCycle())
		if mm.dp == isa.DPInt8 {
			mm.gemmInt8(ix)
		} else {
			mm.gemmBF16(ix)
		}
		return nil
	})
}

// gemmInt8 is one int8-datapath GEMM iteration. The inputs and weights
// are 9-bit signed values (i8 sign-extended, u8 zero-extended, so u8×i8,
// i8×u8, u8×u8 and i8×i8 all multiply exactly): each product is at most
// 255·255 in magnitude and the sum wraps in int32.
func (mm *memories) gemmInt8(ix isa.Iteration) {
	bi, bo := mm.blockIn, mm.blockOut
	a := mm.accI[ix.Dst*mm.vals[isa.MemAcc]:]
	x := mm.inpI[ix.Src*mm.vals[isa.MemInp]:]
	w := mm.wgtI[ix.Wgt*mm.vals[isa.MemWgt]:]
	for b := 0; b < mm.batch; b++ {
		xr := x[b*bi : (b+1)*bi]
		for o := 0; o < bo; o++ {
			wr := w[o*bi : (o+1)*bi]
			wr = wr[:len(xr)] // no bounds check in the loop
			s := a[b*bo+o]
			for k, v := range xr {
				s += int32(v) * int32(wr[k])
			}
			a[b*bo+o] = s
		}
	}
}

func (mm *memories) gemmBF16(ix isa.Iteration) {
	bi, bo := mm.blockIn, mm.blockOut
	a := mm.accF[ix.Dst*mm.vals[isa.MemAcc]:]
	x := mm.inpF[ix.Src*mm.vals[isa.MemInp]:]
	w := mm.wgtF[ix.Wgt*mm.vals[isa.MemWgt]:]
	for b := 0; b < mm.batch; b++ {
		xr := x[b*bi : (b+1)*bi]
		for o := 0; o < bo; o++ {
			wr := w[o*bi : (o+1)*bi]
			wr = wr[:len(xr)] // no bounds check in the loop
			s := a[b*bo+o]
			for k, v := range xr {
				s += v * wr[k]
			}
			a[b*bo+o] = s
		}
	}
}

// alu performs an ALU instruction: for each iteration, acc[dst] =
// op(acc[dst], acc[src] or the immediate), elementwise.
func (m *machine) alu(in *isa.Inst) error {
	mm := &m.mem
	acc := mm.trk[isa.MemAcc]
	n := mm.vals[isa.MemAcc]
	return m.forEachIteration(in, isa.MemAcc, func(ix isa.Iteration) error {
		m.stats.ALUIterations++
		if in.ALU != isa.ALUMov {
			if err := m.read(acc, ix.Dst); err != nil {
				return err
			}
		}
		if !in.UseImm {
			if err := m.read(acc, ix.Src); err != nil {
				return err
			}
		}
		if err := m.write(acc, ix.Dst); err != nil {
			return err
		}
		if mm.dp == isa.DPInt8 {
			d, s := mm.accI[ix.Dst*n:(ix.Dst+1)*n], mm.accI[ix.Src*n:(ix.Src+1)*n]
			imm := int32(int16(in.Imm))
			for k := range d {
				v := imm
				if !in.UseImm {
					v = s[k]
				}
				d[k] = aluInt(in.ALU, d[k], v)
			}
			return nil
		}
		d, s := mm.accF[ix.Dst*n:(ix.Dst+1)*n], mm.accF[ix.Src*n:(ix.Src+1)*n]
		imm := tir.BF16ToFloat32(in.Imm)
		for k := range d {
			v := imm
			if !in.UseImm {
				v = s[k]
			}
			d[k] = aluFloat(in.ALU, d[k], v)
		}
		return nil
	})
}

// aluInt is one int32 ALU operation (ISA.md, "ALU"): add, sub and mul
// wrap; shr shifts right by v with rounding half up (left by −v), the
// amount clamped to 31; clip clamps to [−|v|, |v|]; mulhi is gemmlowp's
// SaturatingRoundingDoublingHighMul; mulq is floor(d·v / 2^31) on the
// exact 64-bit product (an arithmetic shift right by 31): |d·v| ≤ 2^62,
// so it fits int32 except for d = v = −2^31 (2^62 / 2^31 = 2^31), which
// saturates to 2^31 − 1 as mulhi does.
func aluInt(op isa.ALUOp, d, v int32) int32 {
	switch op {
	case isa.ALUMin:
		return min(d, v)
	case isa.ALUMax:
		return max(d, v)
	case isa.ALUAdd:
		return d + v
	case isa.ALUSub:
		return d - v
	case isa.ALUMul:
		return d * v
	case isa.ALUShr:
		s := min(max(v, -31), 31)
		if s <= 0 {
			return d << uint(-s)
		}
		return int32((int64(d) + 1<<(s-1)) >> s)
	case isa.ALUClip:
		a := int64(v)
		if a < 0 {
			a = -a
		}
		return int32(min(max(int64(d), -a), a))
	case isa.ALUMulHi:
		if d == math.MinInt32 && v == math.MinInt32 {
			return math.MaxInt32
		}
		ab := int64(d) * int64(v)
		nudge := int64(1 << 30)
		if ab < 0 {
			nudge = 1 - 1<<30
		}
		return int32((ab + nudge) / (1 << 31))
	case isa.ALUMulQ:
		if d == math.MinInt32 && v == math.MinInt32 {
			return math.MaxInt32
		}
		return int32((int64(d) * int64(v)) >> 31)
	}
	return v // mov
}

// aluFloat is one f32 ALU operation: min and max propagate NaN (as Go's
// and IEEE 754-2019's minimum/maximum); add, sub and mul round to f32;
// clip clamps to [−|v|, |v|].
func aluFloat(op isa.ALUOp, d, v float32) float32 {
	switch op {
	case isa.ALUMin:
		return min(d, v)
	case isa.ALUMax:
		return max(d, v)
	case isa.ALUAdd:
		return d + v
	case isa.ALUSub:
		return d - v
	case isa.ALUMul:
		return d * v
	case isa.ALUClip:
		a := float32(math.Abs(float64(v)))
		return min(max(d, -a), a)
	}
	return v // mov
}

// span is where an instruction ran: busy from begin (its start, or for a
// LOAD or STORE the cycle the DRAM channel was granted) to end; a LOAD or
// STORE moved bytes, holding the channel for transfer cycles from begin.
type span struct{ begin, transfer, end, bytes int64 }

// cost returns the cycles instruction in (of module mod) runs when it
// starts at start, and accounts its busy and DRAM-stall cycles (ISA.md,
// "Cycle model").
func (m *machine) cost(mod isa.Module, in *isa.Inst, start int64) span {
	ms := &m.stats.Modules[mod]
	c := &m.cfg
	switch in.Op {
	case isa.OpLoad, isa.OpStore:
		bytes := int64(in.YSize) * int64(in.XSize) * int64(m.dramBytes(in))
		if in.Mem == isa.MemUop {
			bytes = int64(in.XSize) * isa.UopBytes
		}
		transfer := (bytes + int64(c.DRAMBytesPerCycle) - 1) / int64(c.DRAMBytesPerCycle)
		begin := max(start, m.channelFree)
		m.channelFree = begin + transfer
		end := begin + transfer + int64(c.DRAMLatencyCycles)
		ms.StallDRAM += begin - start
		ms.Busy += end - begin
		return span{begin, transfer, end, bytes}
	}
	var d int64
	switch in.Op {
	case isa.OpGEMM:
		d = in.Iterations() + int64(c.GEMMLatencyCycles)
	case isa.OpALU:
		d = in.Iterations()*int64(c.ALUCyclesPerIter) + int64(c.ALULatencyCycles)
	}
	ms.Busy += d
	return span{begin: start, end: start + d}
}
