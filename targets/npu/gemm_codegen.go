package npu

import (
	"fmt"

	"github.com/tessera-ml/tessera/targets/npu/isa"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// Tiling is a gemmKernel's schedule on the NPU, in scratchpad entries: Mt
// input-entry rows (of Batch rows each), Nt weight blocks (of BlockOut
// outputs) and Kt reduction blocks (of BlockIn) per tile. Inputs and
// weights are double-buffered per reduction step, accumulators per
// output tile (VTA's virtual threads).
type Tiling struct{ Mt, Nt, Kt int }

// gemmProgram is a gemmKernel compiled for one configuration: the program
// and where each operand lies in the kernel's DRAM image.
type gemmProgram struct {
	g          *gemmKernel
	cfg        isa.Config
	t          Tiling
	mb, nb, kb int
	eInp, eWgt int // DRAM bytes of an entry (bf16)
	eAcc       int // f32
	xOff, wOff int
	outOff     int
	stepOff    []int // per epilogue step with a DRAM operand (else -1)
	dramBytes  int
	prog       *isa.Program
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// accLayout is the accumulator buffer's plan for a tiling: two halves,
// each the output tile then the epilogue's operands; constants after.
type accLayout struct {
	half    int   // entries per half
	region  []int // per epilogue step, its offset in a half (-1: none)
	consts  []int // per step, the constant's entry (-1: immediate or none)
	entries int   // total
}

func planAcc(g *gemmKernel, t Tiling) accLayout {
	l := accLayout{half: t.Mt * t.Nt}
	next := 0
	for _, s := range g.Epilogue {
		l.region = append(l.region, -1)
		l.consts = append(l.consts, -1)
		switch {
		case s.Kind == opVector:
			l.region[len(l.region)-1] = l.half
			l.half += t.Nt
		case s.Kind == opTile:
			l.region[len(l.region)-1] = l.half
			l.half += t.Mt * t.Nt
		case isa.RoundBF16(s.Value) != s.Value:
			l.consts[len(l.consts)-1] = next
			next++
		}
	}
	for i := range l.consts {
		if l.consts[i] >= 0 {
			l.consts[i] += 2 * l.half
		}
	}
	l.entries = 2*l.half + next
	return l
}

// fits reports whether t fits cfg's scratchpads, double-buffered, and the
// instruction fields.
func fits(cfg isa.Config, g *gemmKernel, t Tiling) bool {
	dp := isa.DPBF16
	if t.Mt < 1 || t.Nt < 1 || t.Kt < 1 {
		return false
	}
	uops := 4*t.Kt + 2 + 2*len(g.Epilogue)
	return t.Mt*t.Kt <= cfg.Depth(isa.MemInp, dp)/2 && t.Nt*t.Kt <= cfg.Depth(isa.MemWgt, dp)/2 &&
		planAcc(g, t).entries <= cfg.Depth(isa.MemAcc, dp) && uops <= cfg.Depth(isa.MemUop, dp) &&
		t.Nt <= int(isa.FieldMax(isa.OpGEMM, "dst_factor_out")) && t.Kt <= int(isa.FieldMax(isa.OpGEMM, "src_factor_out")) &&
		t.Kt <= int(isa.FieldMax(isa.OpGEMM, "wgt_factor_in"))
}

// kRange is the reduction blocks [lo, hi) an N tile of nt blocks from
// block n0 visits: all of them, or for a grouped product those of the
// groups the tile's rows belong to.
func kRange(cfg isa.Config, g *gemmKernel, n0, nt int) (int, int) {
	kb := ceilDiv(g.K, cfg.BlockIn)
	if g.GroupN == 0 {
		return 0, kb
	}
	lo, hi := n0*cfg.BlockOut, min((n0+nt)*cfg.BlockOut, g.N)-1
	return (lo / g.GroupN) * g.GroupK / cfg.BlockIn, (hi/g.GroupN + 1) * g.GroupK / cfg.BlockIn
}

// estimate is the cycle model's closed form for a tiling (ISA.md, "Cycle
// model"): per reduction step the slower of the matrix unit and the load
// module's two DMAs, plus the epilogue per tile.
func estimate(cfg isa.Config, g *gemmKernel, t Tiling) float64 {
	mb, nb := ceilDiv(g.M, cfg.Batch), ceilDiv(g.N, cfg.BlockOut)
	eI, eW := cfg.EntryBytes(isa.MemInp, isa.DPBF16), cfg.EntryBytes(isa.MemWgt, isa.DPBF16)
	bw, lat := float64(cfg.DRAMBytesPerCycle), float64(cfg.DRAMLatencyCycles)
	comp := float64(t.Mt*t.Nt*t.Kt + cfg.GEMMLatencyCycles)
	dma := float64(t.Mt*t.Kt*eI+t.Nt*t.Kt*eW)/bw + 2*lat
	epi := float64(len(g.Epilogue)+1) * float64(t.Mt*t.Nt*cfg.ALUCyclesPerIter+cfg.ALULatencyCycles)
	total := 0.0
	for n0 := 0; n0 < nb; n0 += t.Nt {
		lo, hi := kRange(cfg, g, n0, min(t.Nt, nb-n0))
		total += float64(ceilDiv(hi-lo, t.Kt))*max(comp, dma) + epi
	}
	return float64(ceilDiv(mb, t.Mt)) * total
}

// defaultTiling picks the tiling with the lowest estimate among powers of
// two (and the full extents) that fit.
func defaultTiling(cfg isa.Config, g *gemmKernel) (Tiling, error) {
	mb, nb, kb := ceilDiv(g.M, cfg.Batch), ceilDiv(g.N, cfg.BlockOut), ceilDiv(g.K, cfg.BlockIn)
	best, bestCost := Tiling{}, 0.0
	for _, mt := range candidates(mb) {
		for _, nt := range candidates(nb) {
			for _, kt := range candidates(kb) {
				t := Tiling{mt, nt, kt}
				if !fits(cfg, g, t) {
					continue
				}
				if c := estimate(cfg, g, t); best.Mt == 0 || c < bestCost {
					best, bestCost = t, c
				}
			}
		}
	}
	if best.Mt == 0 {
		return best, refuse("no tiling of %d×%d×%d fits the scratchpads", g.M, g.N, g.K)
	}
	return best, nil
}

// candidates are the powers of two below n, and n.
func candidates(n int) []int {
	var c []int
	for p := 1; p < n; p *= 2 {
		c = append(c, p)
	}
	return append(c, n)
}

// compileGEMM generates g's program for cfg with tiling t.
func compileGEMM(cfg isa.Config, g *gemmKernel, t Tiling) (*gemmProgram, error) {
	if !fits(cfg, g, t) {
		return nil, fmt.Errorf("tiling %+v does not fit the NPU's scratchpads", t)
	}
	gp := &gemmProgram{g: g, cfg: cfg, t: t,
		mb: ceilDiv(g.M, cfg.Batch), nb: ceilDiv(g.N, cfg.BlockOut), kb: ceilDiv(g.K, cfg.BlockIn),
		eInp: cfg.EntryBytes(isa.MemInp, isa.DPBF16), eWgt: cfg.EntryBytes(isa.MemWgt, isa.DPBF16), eAcc: cfg.EntryBytes(isa.MemAcc, isa.DPBF16)}
	if gp.kb > int(isa.FieldMax(isa.OpLoad, "x_stride")) || gp.nb > int(isa.FieldMax(isa.OpLoad, "x_stride")) {
		return nil, refuse("%d×%d×%d has rows longer than a DMA stride reaches", g.M, g.N, g.K)
	}
	gp.layoutDRAM()
	if gp.dramBytes > 1<<32-1 {
		return nil, refuse("the kernel's DRAM image (%d bytes) exceeds 4 GiB", gp.dramBytes)
	}
	gp.emit()
	if err := gp.prog.Validate(cfg); err != nil {
		return nil, fmt.Errorf("npu codegen: %v", err)
	}
	return gp, nil
}

// layoutDRAM places X, W, the epilogue operands and the output (64-byte
// aligned) in the kernel's DRAM image.
func (gp *gemmProgram) layoutDRAM() {
	off := 0
	place := func(n int) int {
		at := off
		off = (off + n + 63) &^ 63
		return at
	}
	gp.xOff = place(gp.mb * gp.kb * gp.eInp)
	gp.wOff = place(gp.nb * gp.kb * gp.eWgt)
	for _, s := range gp.g.Epilogue {
		switch {
		case s.Kind == opVector:
			gp.stepOff = append(gp.stepOff, place(gp.nb*gp.eAcc))
		case s.Kind == opTile:
			gp.stepOff = append(gp.stepOff, place(gp.mb*gp.nb*gp.eAcc))
		case isa.RoundBF16(s.Value) != s.Value:
			gp.stepOff = append(gp.stepOff, place(gp.eAcc))
		default:
			gp.stepOff = append(gp.stepOff, -1)
		}
	}
	gp.outOff = place(gp.mb * gp.nb * gp.eAcc)
	gp.dramBytes = off
}

var aluOps = map[string]isa.ALUOp{"add": isa.ALUAdd, "sub": isa.ALUSub, "mul": isa.ALUMul, "max": isa.ALUMax, "min": isa.ALUMin}

// emit generates the program: for each output tile (row-major over M, N
// tiles), reset its accumulator half, stream the reduction steps through
// alternating input/weight halves, apply the epilogue, store. Tokens:
// load waits for compute before reusing a half (pop_next from step 2),
// compute waits for load (pop_prev) and, before reusing an accumulator
// half, for the store two tiles back (pop_next); store waits for compute.
func (gp *gemmProgram) emit() {
	cfg, g, t := gp.cfg, gp.g, gp.t
	dp := isa.DPBF16
	inpHalf, wgtHalf := cfg.Depth(isa.MemInp, dp)/2, cfg.Depth(isa.MemWgt, dp)/2
	acc := planAcc(g, t)
	p := &isa.Program{Datapath: dp}
	// micro-ops: GEMM runs (h, ah) at (2h+ah)·Kt; resets at 4Kt+ah; the
	// epilogue's ALU micro-ops (dst tile, src operand) at 4Kt+2+2i+ah.
	for h := 0; h < 2; h++ {
		for ah := 0; ah < 2; ah++ {
			for k := 0; k < t.Kt; k++ {
				p.Uops = append(p.Uops, isa.Uop{Acc: uint32(ah * acc.half), Inp: uint32(h*inpHalf + k), Wgt: uint32(h*wgtHalf + k)})
			}
		}
	}
	p.Uops = append(p.Uops, isa.Uop{}, isa.Uop{Acc: uint32(acc.half)})
	for i := range g.Epilogue {
		for ah := 0; ah < 2; ah++ {
			src := 0
			switch {
			case acc.region[i] >= 0:
				src = ah*acc.half + acc.region[i]
			case acc.consts[i] >= 0:
				src = acc.consts[i]
			}
			p.Uops = append(p.Uops, isa.Uop{Acc: uint32(ah * acc.half), Inp: uint32(src)})
		}
	}
	emit := func(in isa.Inst) int { p.Insts = append(p.Insts, in); return len(p.Insts) - 1 }
	emit(isa.Inst{Op: isa.OpLoad, Mem: isa.MemUop, DType: isa.DTInt8, YSize: 1, XSize: uint32(len(p.Uops)), XStride: uint32(len(p.Uops))})
	for i := range g.Epilogue {
		if acc.consts[i] >= 0 {
			emit(isa.Inst{Op: isa.OpLoad, Mem: isa.MemAcc, DType: isa.DTF32, SRAMBase: uint32(acc.consts[i]),
				DRAMBase: uint32(gp.stepOff[i]), YSize: 1, XSize: 1, XStride: 1})
		}
	}
	mTiles, nTiles := ceilDiv(gp.mb, t.Mt), ceilDiv(gp.nb, t.Nt)
	tiles, steps := mTiles*nTiles, 0
	for ni := 0; ni < nTiles; ni++ {
		lo, hi := kRange(cfg, g, ni*t.Nt, min(t.Nt, gp.nb-ni*t.Nt))
		steps += mTiles * ceilDiv(hi-lo, t.Kt)
	}
	tile, step := 0, 0
	for mi := 0; mi < mTiles; mi++ {
		m0, mt := mi*t.Mt, min(t.Mt, gp.mb-mi*t.Mt)
		for ni := 0; ni < nTiles; ni++ {
			n0, nt := ni*t.Nt, min(t.Nt, gp.nb-ni*t.Nt)
			ah := tile % 2
			emit(isa.Inst{Op: isa.OpGEMM, Reset: true, UopBegin: uint32(4*t.Kt + ah), UopEnd: uint32(4*t.Kt + ah + 1),
				IterOut: uint32(mt), IterIn: uint32(nt), DstFactor: [2]uint32{uint32(nt), 1}, Deps: isa.Deps{PopNext: tile >= 2}})
			last := 0
			kLo, kHi := kRange(cfg, g, n0, nt)
			for k0 := kLo; k0 < kHi; k0 += t.Kt {
				kt := min(t.Kt, kHi-k0)
				h := step % 2
				emit(isa.Inst{Op: isa.OpLoad, Mem: isa.MemInp, DType: isa.DTBF16, SRAMBase: uint32(h * inpHalf),
					DRAMBase: uint32(gp.xOff + (m0*gp.kb+k0)*gp.eInp), YSize: uint32(mt), XSize: uint32(kt), XStride: uint32(gp.kb),
					Deps: isa.Deps{PopNext: step >= 2}})
				emit(isa.Inst{Op: isa.OpLoad, Mem: isa.MemWgt, DType: isa.DTBF16, SRAMBase: uint32(h * wgtHalf),
					DRAMBase: uint32(gp.wOff + (n0*gp.kb+k0)*gp.eWgt), YSize: uint32(nt), XSize: uint32(kt), XStride: uint32(gp.kb),
					Deps: isa.Deps{PushNext: true}})
				run := uint32((2*h + ah) * t.Kt)
				last = emit(isa.Inst{Op: isa.OpGEMM, UopBegin: run, UopEnd: run + uint32(kt), IterOut: uint32(mt), IterIn: uint32(nt),
					DstFactor: [2]uint32{uint32(nt), 1}, SrcFactor: [2]uint32{uint32(kt), 0}, WgtFactor: [2]uint32{0, uint32(kt)},
					Deps: isa.Deps{PopPrev: true, PushPrev: step+2 < steps}})
				step++
			}
			last = gp.emitEpilogue(emit, acc, ah, m0, mt, n0, nt, last)
			p.Insts[last].PushNext = true
			emit(isa.Inst{Op: isa.OpStore, Mem: isa.MemAcc, DType: isa.DTF32, SRAMBase: uint32(ah * acc.half),
				DRAMBase: uint32(gp.outOff + (m0*gp.nb+n0)*gp.eAcc), YSize: uint32(mt), XSize: uint32(nt), XStride: uint32(gp.nb),
				Deps: isa.Deps{PopPrev: true, PushPrev: tile+2 < tiles}})
			tile++
		}
	}
	emit(isa.Inst{Op: isa.OpFinish})
	gp.prog = p
}

// emitEpilogue emits the tile's operand loads and ALU operations; it
// returns the index of the last compute instruction (last when none).
func (gp *gemmProgram) emitEpilogue(emit func(isa.Inst) int, acc accLayout, ah, m0, mt, n0, nt int, last int) int {
	t := gp.t
	for i, s := range gp.g.Epilogue {
		base := uint32(ah*acc.half + max(acc.region[i], 0))
		switch s.Kind {
		case opVector:
			emit(isa.Inst{Op: isa.OpLoad, Mem: isa.MemAcc, DType: isa.DTF32, SRAMBase: base,
				DRAMBase: uint32(gp.stepOff[i] + n0*gp.eAcc), YSize: 1, XSize: uint32(nt), XStride: uint32(nt)})
		case opTile:
			emit(isa.Inst{Op: isa.OpLoad, Mem: isa.MemAcc, DType: isa.DTF32, SRAMBase: base,
				DRAMBase: uint32(gp.stepOff[i] + (m0*gp.nb+n0)*gp.eAcc), YSize: uint32(mt), XSize: uint32(nt), XStride: uint32(gp.nb)})
		}
		in := isa.Inst{Op: isa.OpALU, ALU: aluOps[s.Op], UopBegin: uint32(4*t.Kt + 2 + 2*i + ah), UopEnd: uint32(4*t.Kt + 3 + 2*i + ah),
			IterOut: uint32(mt), IterIn: uint32(nt), DstFactor: [2]uint32{uint32(nt), 1}}
		switch {
		case s.Kind == opVector:
			in.SrcFactor = [2]uint32{0, 1}
		case s.Kind == opTile:
			in.SrcFactor = [2]uint32{uint32(nt), 1}
		case acc.consts[i] < 0:
			in.UseImm, in.Imm = true, tir.Float32ToBF16(s.Value)
		}
		last = emit(in)
	}
	return last
}
