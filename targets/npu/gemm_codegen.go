package npu

import (
	"fmt"
	"math"

	"github.com/tessera-ml/tessera/targets/npu/isa"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// Tiling is a gemmKernel's schedule on the NPU, in scratchpad entries.
// On the gather layout (Window false): Mt input-entry rows (of Batch rows
// each), Nt weight blocks (of BlockOut outputs) and Kt reduction blocks
// (of BlockIn) per tile. On the window layout (a convolution whose image
// the LOADs fetch with its halo, Window): Mt output rows (full width),
// Nt weight blocks and Kt channel blocks per reduction step (Kt divides
// the channel blocks; each step covers the whole KH × KW kernel).
//
// Threads is the number of virtual threads (VTA's): each scratchpad is
// cut into that many equal parts, reduction step s reads input and
// weight part s mod Threads and output tile i accumulates in accumulator
// part i mod Threads, so the load module fills later parts while the
// matrix unit reads one, and the compute module fills an accumulator
// part while the store module drains another. 2 is double buffering; 1
// runs the modules one after another with the whole scratchpads for the
// tile; 3 and 4 let the loads run further ahead. The dependency tokens
// follow from the parts (isa.InsertDeps).
//
// NOuter is the loop order of the output tiles: false runs the N tiles
// of one M tile in turn (consecutive tiles share their inputs), true the
// M tiles of one N tile (they share their weights: weight-stationary).
// A tile finds the shared operand still in its scratchpad part when the
// tile a thread cycle earlier (Threads / steps-per-tile tiles back, when
// the steps divide the threads) loaded it, and isa.ElideLoads drops the
// repeated LOAD.
//
// Resident is the DMA granularity of the operand consecutive tiles share
// (the inputs in the M-outer order, the weights in the N-outer one):
// false LOADs it step by step with the other operand; true LOADs the
// tile's whole reduction of it at once into one of two resident regions
// of its scratchpad, once per run of tiles that read the same blocks,
// and the steps stream only the other operand through the thread parts
// (resident.go).
type Tiling struct {
	Mt, Nt, Kt int
	Window     bool
	Threads    int
	NOuter     bool
	Resident   bool
}

// maxThreads is the most virtual threads a tiling may have.
const maxThreads = 4

// String is the tiling as --emit partition and npu-asm print it; the
// thread count when it is not 2.
func (t Tiling) String() string {
	s := fmt.Sprintf("%d,%d,%d", t.Mt, t.Nt, t.Kt)
	if t.Window {
		s = "window " + s
	}
	if t.Threads != 2 {
		s += fmt.Sprintf(", %d threads", t.Threads)
	}
	if t.NOuter {
		s += ", n outer"
	}
	if t.Resident {
		s += ", " + map[bool]string{false: "inputs", true: "weights"}[t.NOuter] + " resident"
	}
	return s
}

// mEntries is the accumulator entries (M rows of Batch) of a full tile.
func (g *gemmKernel) mEntries(t Tiling) int {
	if t.Window {
		return t.Mt * g.Win.OW
	}
	return t.Mt
}

// uopRun is the micro-ops of one reduction step's GEMM: a block per
// reduction block, or on the window layout per (N block, channel block,
// kernel row, kernel column).
func (g *gemmKernel) uopRun(t Tiling) int {
	if t.Window {
		return t.Nt * t.Kt * g.Win.KH * g.Win.KW
	}
	return t.Kt
}

// gemmProgram is a gemmKernel compiled for one configuration: the program
// and where each operand lies in the kernel's DRAM image.
type gemmProgram struct {
	g          *gemmKernel
	cfg        isa.Config
	t          Tiling
	mb, nb, kb int
	eInp, eWgt int // DRAM bytes of an entry (bf16; int8: i8 or u8)
	eAcc       int // f32 or i32: the epilogue's constants
	eOut       int // an output entry (the STORE's type)
	xOff, wOff int
	outOff     int
	stepOff    []int // per epilogue step with a DRAM operand (else -1)
	uops       uopPlan
	scaleOff   []int // per epilogue step, its Scale's constant (else -1)
	dramBytes  int
	prog       *isa.Program
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// accLayout is the accumulator buffer's plan for a tiling: a part per
// virtual thread, each the output tile then the epilogue's operands;
// constants after.
type accLayout struct {
	part    int   // entries per part
	region  []int // per epilogue step, its offset in a part (-1: none)
	consts  []int // per step, the constant's entry (-1: immediate or none)
	scales  []int // per step, its Scale's constant entry (-1: immediate or none)
	entries int   // total
}

func planAcc(g *gemmKernel, t Tiling) accLayout {
	l := accLayout{part: g.mEntries(t) * t.Nt}
	next := 0
	for _, s := range g.Epilogue {
		l.region = append(l.region, -1)
		l.consts = append(l.consts, -1)
		l.scales = append(l.scales, -1)
		if s.Scale != 0 && !g.immediate(s.Scale) {
			l.scales[len(l.scales)-1] = next
			next++
		}
		switch {
		case s.Kind == opVector:
			l.region[len(l.region)-1] = l.part
			l.part += t.Nt
		case s.Kind == opTile:
			l.region[len(l.region)-1] = l.part
			l.part += g.mEntries(t) * t.Nt
		case s.Kind == opRow:
			l.region[len(l.region)-1] = l.part
			l.part += g.mEntries(t)
		case !g.immediate(s.Value):
			l.consts[len(l.consts)-1] = next
			next++
		}
	}
	for i := range l.consts {
		if l.consts[i] >= 0 {
			l.consts[i] += t.Threads * l.part
		}
		if l.scales[i] >= 0 {
			l.scales[i] += t.Threads * l.part
		}
	}
	l.entries = t.Threads*l.part + next
	return l
}

// fits reports whether t fits cfg's scratchpads, a part per virtual
// thread (or per resident region: parts), and the instruction fields.
func fits(cfg isa.Config, g *gemmKernel, t Tiling) bool {
	dp, v := g.DP, t.Threads
	if t.Mt < 1 || t.Nt < 1 || t.Kt < 1 || v < 1 || v > maxThreads {
		return false
	}
	if t.Window {
		return fitsWindow(cfg, g, t)
	}
	if t.Resident && g.RowW {
		return false
	}
	uops := planUops(cfg, g, t).size()
	x, w := g.partEntries(cfg, t)
	if g.RowW {
		// the whole reduction per step; the weight entries of every row,
		// one LOAD row per tile row (x: Nt·Kt entries, stride Nb·Kt)
		if t.Kt != ceilDiv(g.K, cfg.BlockIn) || t.Nt*t.Kt > int(isa.FieldMax(isa.OpLoad, "x_size")) ||
			ceilDiv(g.N, cfg.BlockOut)*t.Kt > int(isa.FieldMax(isa.OpLoad, "x_stride")) ||
			t.Nt*t.Kt > int(isa.FieldMax(isa.OpGEMM, "wgt_factor_out")) {
			return false
		}
	}
	row := t.Kt // a part's row of reduction blocks: the GEMM's input and weight factors
	if t.Resident {
		row = max(row, g.residentRow(cfg, t))
	}
	return g.fitsParts(cfg, t, x, w) && planAcc(g, t).entries <= cfg.Depth(isa.MemAcc, dp) && uops <= cfg.Depth(isa.MemUop, dp) &&
		t.Nt <= int(isa.FieldMax(isa.OpGEMM, "dst_factor_out")) && row <= int(isa.FieldMax(isa.OpGEMM, "src_factor_out")) &&
		row <= int(isa.FieldMax(isa.OpGEMM, "wgt_factor_in"))
}

// fitsParts reports whether x input and w weight entries fit a part of
// their scratchpads.
func (g *gemmKernel) fitsParts(cfg isa.Config, t Tiling, x, w int) bool {
	return x <= cfg.Depth(isa.MemInp, g.DP)/g.parts(cfg, t, isa.MemInp) && w <= cfg.Depth(isa.MemWgt, g.DP)/g.parts(cfg, t, isa.MemWgt)
}

// fitsWindow is fits for the window layout: the halo tile of Kt channel
// blocks in a thread's part of the input buffer, Nt·Kt·KH·KW weight
// entries in a part of the weight buffer, the GEMM's strides in its
// fields, and LOADs that can fetch every tile (rowSpan).
func fitsWindow(cfg isa.Config, g *gemmKernel, t Tiling) bool {
	w, dp := g.Win, g.DP
	if w == nil || w.CB(cfg)%t.Kt != 0 || t.Mt > w.OH {
		return false
	}
	max := func(op isa.Opcode, f string) int { return int(isa.FieldMax(op, f)) }
	kk := w.KH * w.KW
	uops := planUops(cfg, g, t).size()
	x, wg := g.partEntries(cfg, t)
	return g.fitsParts(cfg, t, x, wg) &&
		planAcc(g, t).entries <= cfg.Depth(isa.MemAcc, dp) && uops <= cfg.Depth(isa.MemUop, dp) &&
		w.OW*t.Nt <= max(isa.OpGEMM, "dst_factor_out") && t.Nt <= max(isa.OpALU, "dst_factor_out") &&
		w.SH*w.inCols() <= max(isa.OpGEMM, "src_factor_out") && w.SW <= max(isa.OpGEMM, "src_factor_in") &&
		w.W <= max(isa.OpLoad, "x_stride") && w.CB(cfg)*kk <= max(isa.OpLoad, "x_stride") && w.loadable(t.Mt)
}

// uopPlan is the layout of a program's micro-op table (emit's order): a
// GEMM run of run micro-ops per resident region r, input/weight part h,
// accumulator part ah and step s of a tile (one region and one step
// unless the tiling keeps an operand resident: each step then reads its
// own slice of the region), a reset per accumulator part, per epilogue
// step one ALU micro-op per part, then per scaled step (an operand with
// a Scale) another.
type uopPlan struct {
	run, v, steps int
	regions, s    int   // resident regions, steps per tile with a run of their own
	scaled        []int // per epilogue step, its rank among the scaled ones (-1: none)
	nScaled       int
}

func planUops(cfg isa.Config, g *gemmKernel, t Tiling) uopPlan {
	u := uopPlan{run: g.uopRun(t), v: t.Threads, steps: len(g.Epilogue), regions: 1, s: 1}
	if t.Resident {
		u.regions, u.s = g.parts(cfg, t, t.residentMem()), g.stepsPerTile(cfg, t)
	}
	for _, s := range g.Epilogue {
		u.scaled = append(u.scaled, -1)
		if s.Scale != 0 {
			u.scaled[len(u.scaled)-1] = u.nScaled
			u.nScaled++
		}
	}
	return u
}

func (u uopPlan) gemm(r, h, ah, s int) int { return (((r*u.v+h)*u.v+ah)*u.s + s) * u.run }
func (u uopPlan) reset(ah int) int         { return u.gemm(u.regions, 0, 0, 0) + ah }
func (u uopPlan) step(i, ah int) int       { return u.reset(u.v) + u.v*i + ah }
func (u uopPlan) scale(i, ah int) int      { return u.step(u.steps, 0) + u.v*u.scaled[i] + ah }
func (u uopPlan) size() int                { return u.step(u.steps, 0) + u.v*u.nScaled }

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
// module's DMAs, plus the epilogue per tile; and the DRAM bytes the
// program moves. With reuse, the steps whose LOADs ElideLoads drops
// (elisions) move only the other operand; without, every step LOADs both.
// With a resident operand the steps LOAD only the other one, and each
// run's resident LOAD adds what the run's idle load cycles do not hide
// (residentCost).
func estimate(cfg isa.Config, g *gemmKernel, t Tiling, reuse bool) (cycles, bytes float64) {
	eA := cfg.EntryBytes(isa.MemAcc, g.DP)
	bw, lat := float64(cfg.DRAMBytesPerCycle), float64(cfg.DRAMLatencyCycles)
	mt := g.mEntries(t)
	x, w := g.stepLoads(cfg, t)
	comp := float64(t.Mt*t.Nt*t.Kt + cfg.GEMMLatencyCycles)
	if t.Window {
		comp = float64(t.Mt*g.Win.OW*g.uopRun(t) + cfg.GEMMLatencyCycles)
	}
	stepTime := func(l dmaCost) float64 {
		dma := l.bytes/bw + l.dmas*lat
		if t.Threads == 1 { // the loads wait for the matrix unit, the matrix unit for the loads
			return comp + dma
		}
		return max(comp, dma)
	}
	passes := len(g.Epilogue) + 1 + planUops(cfg, g, t).nScaled // the reset, the steps and their operands' scaling
	if g.initsAccumulator() {
		passes-- // the first step initializes instead of the reset
	}
	epi := float64(passes) * float64(mt*t.Nt*cfg.ALUCyclesPerIter+cfg.ALULatencyCycles)
	epiBytes := float64((1 + len(g.Epilogue)) * mt * t.Nt * eA)
	if t.Threads == 1 { // the next tile waits for the store
		epi += float64(mt*t.Nt*cfg.EntryValues(isa.MemAcc)*g.OutType.Bytes())/bw + lat
	}
	mTiles, cols := g.mTiles(cfg, t), g.columnSteps(cfg, t)
	steps := 0
	for _, s := range cols {
		steps += mTiles * s
	}
	tiles := float64(mTiles * len(cols))
	ex, ew := 0.0, 0.0
	if reuse {
		ex, ew = g.elisions(cfg, t)
	}
	resCycles, resBytes := 0.0, 0.0
	if t.Resident { // the steps LOAD only the other operand
		if t.NOuter {
			w = dmaCost{}
		} else {
			x = dmaCost{}
		}
		resCycles, resBytes = g.residentCost(cfg, t, comp, (x.bytes+w.bytes)/bw+(x.dmas+w.dmas)*lat)
	}
	both := dmaCost{x.bytes + w.bytes, x.dmas + w.dmas}
	cycles = (float64(steps)-ex-ew)*stepTime(both) + ex*stepTime(w) + ew*stepTime(x) + tiles*epi + resCycles
	bytes = (float64(steps)-ex)*x.bytes + (float64(steps)-ew)*w.bytes + tiles*epiBytes + resBytes
	return cycles, bytes
}

// elisions counts the reduction steps whose input (ex) and weight (ew)
// LOADs ElideLoads drops. Step q of the program loads into part q mod
// Threads, which the LOADs of step q − Threads filled last, so a step
// needs no LOAD of an operand when step q − Threads loaded the same
// blocks of it: with S steps per tile and S dividing Threads, the tile
// Threads/S back in the tile order at the same step. In the M-outer
// order that tile is in the same M row (same inputs) when the row has
// more tiles than that, or in the same N column (same weights) when a
// whole number of rows, of R steps each, make up Threads steps; the
// N-outer order likewise with the roles swapped.
func (g *gemmKernel) elisions(cfg isa.Config, t Tiling) (ex, ew float64) {
	v, mT, steps := t.Threads, g.mTiles(cfg, t), g.columnSteps(cfg, t)
	nT := len(steps)
	// every N tile reads the same input blocks (and has steps[0] steps),
	// every M tile the same weight blocks; a resident operand has no
	// per-step LOADs to elide
	sameX := (t.Window || g.GroupN == 0) && !(t.Resident && !t.NOuter)
	sameW := !g.RowW && !(t.Resident && t.NOuter)
	if t.NOuter {
		for _, s := range steps {
			if sameW && v%s == 0 {
				ew += float64(max(0, mT-v/s) * s)
			}
		}
		if c := mT * steps[0]; sameX && v%c == 0 {
			ex = float64(max(0, nT-v/c) * c)
		}
		return ex, ew
	}
	if s := steps[0]; sameX && v%s == 0 {
		ex = float64(mT * max(0, nT-v/s) * s)
	}
	r := 0
	for _, s := range steps {
		r += s
	}
	if sameW && v%r == 0 {
		ew = float64(max(0, mT-v/r) * r)
	}
	return ex, ew
}

// columnSteps is, per N tile, the reduction steps of each of its tiles.
func (g *gemmKernel) columnSteps(cfg isa.Config, t Tiling) []int {
	nb := ceilDiv(g.N, cfg.BlockOut)
	var steps []int
	for n0 := 0; n0 < nb; n0 += t.Nt {
		lo, hi := g.stepRange(cfg, t, n0, min(t.Nt, nb-n0))
		steps = append(steps, ceilDiv(hi-lo, t.Kt))
	}
	return steps
}

// dmaCost is the DRAM bytes and DMAs of an operand's LOADs for one
// reduction step.
type dmaCost struct{ bytes, dmas float64 }

// stepLoads is what a full reduction step's LOADs of the input (x) and
// weight (w) operands move (stepLoads of gemmProgram emits them).
func (g *gemmKernel) stepLoads(cfg isa.Config, t Tiling) (x, w dmaCost) {
	eI, eW := float64(cfg.EntryBytes(isa.MemInp, g.DP)), float64(cfg.EntryBytes(isa.MemWgt, g.DP))
	if t.Window {
		win := g.Win
		return dmaCost{float64(t.Kt*win.inRows(t.Mt)*win.inCols()) * eI, float64(t.Kt)}, dmaCost{float64(g.uopRun(t)) * eW, 1}
	}
	x = dmaCost{float64(t.Mt*t.Kt) * eI, 1}
	if g.RowW {
		return x, dmaCost{float64(t.Mt*t.Nt*t.Kt) * eW, 1}
	}
	return x, dmaCost{float64(t.Nt*t.Kt) * eW, 1}
}

// mTiles is the number of M tiles: of Mt input entries, or on the window
// layout of Mt output rows per image.
func (g *gemmKernel) mTiles(cfg isa.Config, t Tiling) int {
	if t.Window {
		return g.Win.Imgs * ceilDiv(g.Win.OH, t.Mt)
	}
	return ceilDiv(ceilDiv(g.M, cfg.Batch), t.Mt)
}

// stepRange is the reduction blocks [lo, hi) a tile visits: kRange's, or
// the channel blocks on the window layout.
func (g *gemmKernel) stepRange(cfg isa.Config, t Tiling, n0, nt int) (int, int) {
	if t.Window {
		return 0, g.Win.CB(cfg)
	}
	return kRange(cfg, g, n0, nt)
}

// tilings are the candidate tilings that fit: powers of two and the full
// extents of each tile dimension, on the gather layout and, for a
// convolution, the window layout (Kt among the divisors of the channel
// blocks), each with 1 to maxThreads virtual threads, in both tile
// orders when there is more than one M and one N tile, and each with the
// shared operand resident where that changes the program (residentPays).
func tilings(cfg isa.Config, g *gemmKernel) []Tiling {
	mb, nb, kb := ceilDiv(g.M, cfg.Batch), ceilDiv(g.N, cfg.BlockOut), ceilDiv(g.K, cfg.BlockIn)
	var out []Tiling
	add := func(ms, ks []int, window bool) {
		for _, mt := range ms {
			for _, nt := range candidates(nb) {
				for _, kt := range ks {
					for v := 1; v <= maxThreads; v++ {
						t := Tiling{Mt: mt, Nt: nt, Kt: kt, Window: window, Threads: v}
						orders := []bool{false}
						if g.mTiles(cfg, t) > 1 && nt < nb { // the order matters
							orders = append(orders, true)
						}
						for _, o := range orders {
							t.NOuter, t.Resident = o, false
							if fits(cfg, g, t) {
								out = append(out, t)
							}
							if t.Resident = true; g.residentPays(cfg, t) && fits(cfg, g, t) {
								out = append(out, t)
							}
						}
					}
				}
			}
		}
	}
	ks := candidates(kb)
	if g.RowW {
		ks = []int{kb}
	}
	add(candidates(mb), ks, false)
	if g.Win != nil {
		var divs []int
		for d := 1; d <= g.Win.CB(cfg); d++ {
			if g.Win.CB(cfg)%d == 0 {
				divs = append(divs, d)
			}
		}
		add(candidates(g.Win.OH), divs, true)
	}
	return out
}

// defaultTiling picks, among the tilings that stream both operands step
// by step (not Resident), those whose estimated cycles are within 2% of
// the lowest, the one that moves the fewest DRAM bytes, estimating
// without reuse. The closed form does not model the first-come DRAM
// channel: ranked with reuse, or with the resident tilings, the default
// rule chose tilings that move fewer bytes but take more simulated
// cycles (reuse: 1–6% on ResNet-18 and MobileNetV2; resident: +7% on
// ResNet-18 at the larger test configuration, whose 3×3 layers went to
// small weight-resident tiles whose bias LOADs wait behind the input
// stream), while the resident tilings' gains at the default
// configuration stayed under 0.1%; the tuner, measuring cycles, finds
// the orders and resident operands that pay. Of two tilings that differ
// only in order, the M-outer one comes first.
func defaultTiling(cfg isa.Config, g *gemmKernel) (Tiling, error) {
	var ts []Tiling
	for _, t := range tilings(cfg, g) {
		if !t.Resident {
			ts = append(ts, t)
		}
	}
	if len(ts) == 0 {
		return Tiling{}, refuse("no tiling of %d×%d×%d fits the scratchpads", g.M, g.N, g.K)
	}
	cycles, bytes := make([]float64, len(ts)), make([]float64, len(ts))
	lowest := 0
	for i, t := range ts {
		cycles[i], bytes[i] = estimate(cfg, g, t, false)
		if cycles[i] < cycles[lowest] {
			lowest = i
		}
	}
	best := -1
	for i := range ts {
		if cycles[i] <= 1.02*cycles[lowest] && (best < 0 || bytes[i] < bytes[best]) {
			best = i
		}
	}
	return ts[best], nil
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
		eInp: cfg.EntryBytes(isa.MemInp, g.DP), eWgt: cfg.EntryBytes(isa.MemWgt, g.DP), eAcc: cfg.EntryBytes(isa.MemAcc, g.DP),
		eOut: cfg.EntryValues(isa.MemAcc) * g.OutType.Bytes(), uops: planUops(cfg, g, t)}
	if gp.kb > int(isa.FieldMax(isa.OpLoad, "x_stride")) || gp.nb > int(isa.FieldMax(isa.OpLoad, "x_stride")) {
		return nil, refuse("%d×%d×%d has rows longer than a DMA stride reaches", g.M, g.N, g.K)
	}
	gp.layoutDRAM()
	if gp.dramBytes > 1<<32-1 {
		return nil, refuse("the kernel's DRAM image (%d bytes) exceeds 4 GiB", gp.dramBytes)
	}
	gp.emit()
	if _, err := isa.ElideLoads(cfg, gp.prog); err != nil {
		return nil, fmt.Errorf("npu codegen: %v", err)
	}
	if err := isa.InsertDeps(cfg, gp.prog); err != nil {
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
	if w := gp.g.Win; gp.t.Window {
		cb := w.CB(gp.cfg)
		gp.xOff = place(w.Imgs * cb * w.H * w.W * gp.eInp)
		gp.wOff = place(gp.nb * cb * w.KH * w.KW * gp.eWgt)
	} else {
		gp.xOff = place(gp.mb * gp.kb * gp.eInp)
		wBlocks := gp.nb
		if gp.g.RowW {
			wBlocks *= gp.mb
		}
		gp.wOff = place(wBlocks * gp.kb * gp.eWgt)
	}
	for _, s := range gp.g.Epilogue {
		gp.scaleOff = append(gp.scaleOff, -1)
		if s.Scale != 0 && !gp.g.immediate(s.Scale) {
			gp.scaleOff[len(gp.scaleOff)-1] = place(gp.eAcc)
		}
		switch e := gp.operandEntry(s); {
		case s.Kind == opVector:
			gp.stepOff = append(gp.stepOff, place(gp.nb*e))
		case s.Kind == opTile:
			gp.stepOff = append(gp.stepOff, place(gp.mb*gp.nb*e))
		case s.Kind == opRow:
			gp.stepOff = append(gp.stepOff, place(gp.mb*e))
		case !gp.g.immediate(s.Value):
			gp.stepOff = append(gp.stepOff, place(gp.eAcc))
		default:
			gp.stepOff = append(gp.stepOff, -1)
		}
	}
	gp.outOff = place(gp.mb * gp.nb * gp.eOut)
	gp.dramBytes = off
}

var aluOps = map[string]isa.ALUOp{"add": isa.ALUAdd, "sub": isa.ALUSub, "mul": isa.ALUMul, "max": isa.ALUMax, "min": isa.ALUMin,
	"mulq": isa.ALUMulQ, "shr": isa.ALUShr}

// immediate reports whether constant v fits the ALU's immediate field: a
// bf16 value in the bf16 datapath, a signed 16-bit integer in the int8
// one. Others are loaded into an accumulator entry.
func (g *gemmKernel) immediate(v float64) bool {
	if g.DP == isa.DPInt8 {
		return v >= math.MinInt16 && v <= math.MaxInt16
	}
	f := float32(v)
	return isa.RoundBF16(f) == f
}

// imm is the immediate field holding v.
func (g *gemmKernel) imm(v float64) uint16 {
	if g.DP == isa.DPInt8 {
		return uint16(int16(v))
	}
	return tir.Float32ToBF16(float32(v))
}

// operandEntry is the DRAM bytes of one accumulator entry of a loaded
// epilogue operand (its Elem).
func (gp *gemmProgram) operandEntry(s aluStep) int {
	return gp.cfg.EntryValues(isa.MemAcc) * s.Elem.Bytes()
}

// accType is the DRAM type of the epilogue constants' accumulator entries
// (and of loaded f32 or i32 operands).
func (g *gemmKernel) accType() isa.DType {
	if g.DP == isa.DPInt8 {
		return isa.DTInt32
	}
	return isa.DTF32
}

// outTile is an output tile: M entries [m0, m0+mt) and N blocks [n0,
// n0+nt); on the window layout also its image and output rows.
type outTile struct{ m0, mt, n0, nt, img, row0, rows int }

// tiles lists the output tiles in the tiling's order: the N tiles of
// each M tile (row-major), or with NOuter the M tiles of each N tile.
func (gp *gemmProgram) tiles() []outTile {
	t := gp.t
	var rows []outTile // the M tiles
	if w := gp.g.Win; t.Window {
		for img := 0; img < w.Imgs; img++ {
			for r0 := 0; r0 < w.OH; r0 += t.Mt {
				n := min(t.Mt, w.OH-r0)
				rows = append(rows, outTile{m0: (img*w.OH + r0) * w.OW, mt: n * w.OW, img: img, row0: r0, rows: n})
			}
		}
	} else {
		for m0 := 0; m0 < gp.mb; m0 += t.Mt {
			rows = append(rows, outTile{m0: m0, mt: min(t.Mt, gp.mb-m0)})
		}
	}
	var out []outTile
	add := func(r outTile, n0 int) {
		r.n0, r.nt = n0, min(t.Nt, gp.nb-n0)
		out = append(out, r)
	}
	if t.NOuter {
		for n0 := 0; n0 < gp.nb; n0 += t.Nt {
			for _, r := range rows {
				add(r, n0)
			}
		}
		return out
	}
	for _, r := range rows {
		for n0 := 0; n0 < gp.nb; n0 += t.Nt {
			add(r, n0)
		}
	}
	return out
}

// gemmUops appends the micro-ops of the GEMM run of step s that reads
// resident region r, input or weight part h and accumulator part ah: a
// resident operand's step reads its slice of the region (the step's
// first block s·Kt), the other operand its part.
func (gp *gemmProgram) gemmUops(p *isa.Program, r, h, ah, s, accPart int) {
	t := gp.t
	inp, wgt := gp.base(isa.MemInp, h, r), gp.base(isa.MemWgt, h, r)
	xk, wk, wRow := 0, 0, t.Kt // the step's first block in the input and weight parts; a weight row's blocks
	switch {
	case t.Resident && t.NOuter:
		wk, wRow = s*t.Kt, gp.g.residentRow(gp.cfg, t)
	case t.Resident:
		xk = s * t.Kt
	}
	if !t.Window {
		for k := 0; k < t.Kt; k++ {
			p.Uops = append(p.Uops, isa.Uop{Acc: uint32(ah * accPart), Inp: uint32(inp + xk + k), Wgt: uint32(wgt + wk + k)})
		}
		return
	}
	w := gp.g.Win
	cols, plane := w.inCols(), w.inRows(t.Mt)*w.inCols()
	for nb := 0; nb < t.Nt; nb++ {
		for cb := 0; cb < t.Kt; cb++ {
			for kh := 0; kh < w.KH; kh++ {
				for kw := 0; kw < w.KW; kw++ {
					p.Uops = append(p.Uops, isa.Uop{Acc: uint32(ah*accPart + nb),
						Inp: uint32(inp + (xk+cb)*plane + kh*w.DH*cols + kw*w.DW),
						Wgt: uint32(wgt + ((nb*wRow+wk+cb)*w.KH+kh)*w.KW + kw)})
				}
			}
		}
	}
}

// stepLoads emits a reduction step's LOADs (k0: first reduction or
// channel block, kt blocks) into input and weight part h: both operands,
// or the one a resident tiling streams.
func (gp *gemmProgram) stepLoads(emit func(isa.Inst), o outTile, k0, kt, h int) {
	if !gp.t.Resident || gp.t.NOuter {
		gp.loadX(emit, o, k0, kt, gp.base(isa.MemInp, h, 0))
	}
	if !gp.t.Resident || !gp.t.NOuter {
		gp.loadW(emit, o, k0, kt, gp.base(isa.MemWgt, h, 0))
	}
}

// loadX emits the LOADs of tile o's input blocks [k0, k0+kt) (reduction
// or channel blocks) into the input buffer from entry at.
func (gp *gemmProgram) loadX(emit func(isa.Inst), o outTile, k0, kt, at int) {
	xt := gp.g.XType
	if !gp.t.Window {
		emit(isa.Inst{Op: isa.OpLoad, Mem: isa.MemInp, DType: xt, SRAMBase: uint32(at),
			DRAMBase: uint32(gp.xOff + (o.m0*gp.kb+k0)*gp.eInp), YSize: uint32(o.mt), XSize: uint32(kt), XStride: uint32(gp.kb)})
		return
	}
	w := gp.g.Win
	cb := w.CB(gp.cfg)
	plane := w.inRows(gp.t.Mt) * w.inCols()
	pt, y0, ny, pb, _ := rowSpan(o.row0*w.SH+w.PH, w.inRows(o.rows), w.H)
	pl, x0, nx, pr, _ := rowSpan(w.PW, w.inCols(), w.W)
	for c := 0; c < kt; c++ {
		emit(isa.Inst{Op: isa.OpLoad, Mem: isa.MemInp, DType: xt, SRAMBase: uint32(at + c*plane),
			DRAMBase: uint32(gp.xOff + (((o.img*cb+k0+c)*w.H+y0)*w.W+x0)*gp.eInp), YSize: uint32(ny), XSize: uint32(nx), XStride: uint32(w.W),
			PadTop: uint32(pt), PadBottom: uint32(pb), PadLeft: uint32(pl), PadRight: uint32(pr)})
	}
}

// loadW emits the LOAD of tile o's weight blocks [k0, k0+kt) (reduction
// or channel blocks) into the weight buffer from entry at.
func (gp *gemmProgram) loadW(emit func(isa.Inst), o outTile, k0, kt, at int) {
	in := isa.Inst{Op: isa.OpLoad, Mem: isa.MemWgt, DType: gp.g.WType, SRAMBase: uint32(at),
		DRAMBase: uint32(gp.wOff + (o.n0*gp.kb+k0)*gp.eWgt), YSize: uint32(o.nt), XSize: uint32(kt), XStride: uint32(gp.kb)}
	switch w := gp.g.Win; {
	case gp.t.Window:
		cb, kk := w.CB(gp.cfg), w.KH*w.KW
		in.DRAMBase, in.XSize, in.XStride = uint32(gp.wOff+(o.n0*cb+k0)*kk*gp.eWgt), uint32(kt*kk), uint32(cb*kk)
	case gp.g.RowW: // per row m its N blocks × all K blocks: [M][Nb][Kb] entries
		in.DRAMBase = uint32(gp.wOff + (o.m0*gp.nb+o.n0)*gp.kb*gp.eWgt)
		in.YSize, in.XSize, in.XStride = uint32(o.mt), uint32(o.nt*gp.kb), uint32(gp.nb*gp.kb)
	}
	emit(in)
}

// stepGEMM is a reduction step's GEMM over the micro-op run at run; rows
// is the blocks per row of a resident operand's region (the tile's
// reduction blocks).
func (gp *gemmProgram) stepGEMM(o outTile, kt, rows int, run uint32) isa.Inst {
	if !gp.t.Window {
		src, wgt := uint32(kt), [2]uint32{0, uint32(kt)}
		switch {
		case gp.g.RowW:
			wgt[0] = uint32(o.nt * kt)
		case gp.t.Resident && gp.t.NOuter:
			wgt[1] = uint32(rows)
		case gp.t.Resident:
			src = uint32(rows)
		}
		return isa.Inst{Op: isa.OpGEMM, UopBegin: run, UopEnd: run + uint32(kt), IterOut: uint32(o.mt), IterIn: uint32(o.nt),
			DstFactor: [2]uint32{uint32(o.nt), 1}, SrcFactor: [2]uint32{src, 0}, WgtFactor: wgt}
	}
	w := gp.g.Win
	n := uint32(o.nt * kt * w.KH * w.KW)
	return isa.Inst{Op: isa.OpGEMM, UopBegin: run, UopEnd: run + n, IterOut: uint32(o.rows), IterIn: uint32(w.OW),
		DstFactor: [2]uint32{uint32(w.OW * o.nt), uint32(o.nt)}, SrcFactor: [2]uint32{uint32(w.SH * w.inCols()), uint32(w.SW)}}
}

// emit generates the program without dependency tokens (compileGEMM
// inserts them): for each output tile, reset its accumulator part,
// stream the reduction steps through the input/weight parts in turn,
// apply the epilogue, store. The parts are the tiling's virtual threads.
func (gp *gemmProgram) emit() {
	cfg, g, t := gp.cfg, gp.g, gp.t
	acc := planAcc(g, t)
	v := t.Threads
	p := &isa.Program{Datapath: g.DP}
	// micro-ops in gp.uops's order: GEMM runs, resets, the epilogue's ALU
	// micro-ops (dst tile, src operand), the scalings (dst the operand,
	// src the scale's constant)
	u := gp.uops
	for r := 0; r < u.regions; r++ {
		for h := 0; h < v; h++ {
			for ah := 0; ah < v; ah++ {
				for s := 0; s < u.s; s++ {
					gp.gemmUops(p, r, h, ah, s, acc.part)
				}
			}
		}
	}
	for ah := 0; ah < v; ah++ {
		p.Uops = append(p.Uops, isa.Uop{Acc: uint32(ah * acc.part)})
	}
	for i := range g.Epilogue {
		for ah := 0; ah < v; ah++ {
			src := 0
			switch {
			case acc.region[i] >= 0:
				src = ah*acc.part + acc.region[i]
			case acc.consts[i] >= 0:
				src = acc.consts[i]
			}
			p.Uops = append(p.Uops, isa.Uop{Acc: uint32(ah * acc.part), Inp: uint32(src)})
		}
	}
	for i, s := range g.Epilogue {
		for ah := 0; s.Scale != 0 && ah < v; ah++ {
			p.Uops = append(p.Uops, isa.Uop{Acc: uint32(ah*acc.part + acc.region[i]), Inp: uint32(max(acc.scales[i], 0))})
		}
	}
	emit := func(in isa.Inst) { p.Insts = append(p.Insts, in) }
	emit(isa.Inst{Op: isa.OpLoad, Mem: isa.MemUop, DType: isa.DTInt8, YSize: 1, XSize: uint32(len(p.Uops)), XStride: uint32(len(p.Uops))})
	for i := range g.Epilogue {
		if acc.consts[i] >= 0 {
			emit(isa.Inst{Op: isa.OpLoad, Mem: isa.MemAcc, DType: g.accType(), SRAMBase: uint32(acc.consts[i]),
				DRAMBase: uint32(gp.stepOff[i]), YSize: 1, XSize: 1, XStride: 1})
		}
		if acc.scales[i] >= 0 {
			emit(isa.Inst{Op: isa.OpLoad, Mem: isa.MemAcc, DType: g.accType(), SRAMBase: uint32(acc.scales[i]),
				DRAMBase: uint32(gp.scaleOff[i]), YSize: 1, XSize: 1, XStride: 1})
		}
	}
	tiles := gp.tiles()
	res := gp.planResident(tiles)
	step := 0
	for tile, o := range tiles {
		ah := tile % v
		res.begin(tile, emit)
		from := 0
		if g.initsAccumulator() {
			gp.emitStep(emit, acc, ah, o, 0, isa.ALUMov)
			from = 1
		} else {
			emit(isa.Inst{Op: isa.OpGEMM, Reset: true, UopBegin: uint32(gp.uops.reset(ah)), UopEnd: uint32(gp.uops.reset(ah) + 1),
				IterOut: uint32(o.mt), IterIn: uint32(o.nt), DstFactor: [2]uint32{uint32(o.nt), 1}})
		}
		kLo, kHi := g.stepRange(cfg, t, o.n0, o.nt)
		for k0 := kLo; k0 < kHi; k0 += t.Kt {
			kt := min(t.Kt, kHi-k0)
			h := step % v
			gp.stepLoads(emit, o, k0, kt, h)
			res.stepped(tile, emit)
			slice := 0 // the step's slice of a resident region
			if t.Resident {
				slice = (k0 - kLo) / t.Kt
			}
			emit(gp.stepGEMM(o, kt, kHi-kLo, uint32(u.gemm(res.region(tile), h, ah, slice))))
			step++
		}
		for i := from; i < len(g.Epilogue); i++ {
			gp.emitStep(emit, acc, ah, o, i, aluOps[g.Epilogue[i].Op])
		}
		emit(isa.Inst{Op: isa.OpStore, Mem: isa.MemAcc, DType: g.OutType, SRAMBase: uint32(ah * acc.part),
			DRAMBase: uint32(gp.outOff + (o.m0*gp.nb+o.n0)*gp.eOut), YSize: uint32(o.mt), XSize: uint32(o.nt), XStride: uint32(gp.nb)})
	}
	emit(isa.Inst{Op: isa.OpFinish})
	gp.prog = p
}

// initsAccumulator reports whether the epilogue's first step adds a
// loaded operand (a bias vector, row or tile): the tile's accumulator
// then starts as that operand (an ALU mov) instead of a GEMM reset and a
// later add — one pass over the tile fewer, the ALU-bound epilogues of
// short reductions (MobileNetV2's 1×1 layers) the most. In the bf16
// datapath the bias is then the first term of the f32 sum, not the last.
func (g *gemmKernel) initsAccumulator() bool {
	return len(g.Epilogue) > 0 && g.Epilogue[0].Op == "add" && g.Epilogue[0].Kind != opConst
}

// scaleInst multiplies step i's loaded operand (rows × cols entries in
// its region of accumulator part ah) by the step's Scale.
func (gp *gemmProgram) scaleInst(acc accLayout, ah, i int, rows, cols uint32) isa.Inst {
	g := gp.g
	ub := uint32(gp.uops.scale(i, ah))
	in := isa.Inst{Op: isa.OpALU, ALU: isa.ALUMul, UopBegin: ub, UopEnd: ub + 1,
		IterOut: rows, IterIn: cols, DstFactor: [2]uint32{cols, 1}}
	if acc.scales[i] < 0 {
		in.UseImm, in.Imm = true, g.imm(g.Epilogue[i].Scale)
	}
	return in
}

// emitStep emits epilogue step i's operand load (a vector, row or tile
// operand) and its ALU instruction with operation op.
func (gp *gemmProgram) emitStep(emit func(isa.Inst), acc accLayout, ah int, o outTile, i int, op isa.ALUOp) {
	s := gp.g.Epilogue[i]
	m0, mt, n0, nt := o.m0, o.mt, o.n0, o.nt
	base := uint32(ah*acc.part + max(acc.region[i], 0))
	load := isa.Inst{Op: isa.OpLoad, Mem: isa.MemAcc, DType: s.Elem, SRAMBase: base}
	e := gp.operandEntry(s)
	switch s.Kind {
	case opVector:
		load.DRAMBase, load.YSize, load.XSize, load.XStride = uint32(gp.stepOff[i]+n0*e), 1, uint32(nt), uint32(nt)
	case opTile:
		load.DRAMBase, load.YSize, load.XSize, load.XStride = uint32(gp.stepOff[i]+(m0*gp.nb+n0)*e), uint32(mt), uint32(nt), uint32(gp.nb)
	case opRow:
		load.DRAMBase, load.YSize, load.XSize, load.XStride = uint32(gp.stepOff[i]+m0*e), 1, uint32(mt), uint32(mt)
	}
	if load.YSize > 0 {
		emit(load)
	}
	if s.Scale != 0 {
		emit(gp.scaleInst(acc, ah, i, load.YSize, load.XSize))
	}
	ub := gp.uops.step(i, ah)
	in := isa.Inst{Op: isa.OpALU, ALU: op, UopBegin: uint32(ub), UopEnd: uint32(ub + 1),
		IterOut: uint32(mt), IterIn: uint32(nt), DstFactor: [2]uint32{uint32(nt), 1}}
	switch {
	case s.Kind == opVector:
		in.SrcFactor = [2]uint32{0, 1}
	case s.Kind == opTile:
		in.SrcFactor = [2]uint32{uint32(nt), 1}
	case s.Kind == opRow:
		in.SrcFactor = [2]uint32{1, 0}
	case acc.consts[i] < 0:
		in.UseImm, in.Imm = true, gp.g.imm(s.Value)
	}
	emit(in)
}
