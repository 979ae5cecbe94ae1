package npu

import (
	"slices"

	"github.com/tessera-ml/tessera/targets/npu/isa"
)

// The DMA granularity of the shared operand (Tiling.Resident). In the
// M-outer order the N tiles of one M tile read the same input blocks; in
// the N-outer order the M tiles of one N tile read the same weight
// blocks. Step by step (Resident false), every reduction step LOADs both
// operands' blocks for that step, and a tile reuses the shared one only
// when the step a thread cycle earlier loaded it (isa.ElideLoads). With
// the shared operand resident, a tile's whole reduction of it is one
// LOAD (on the window layout one per channel block) into one of two
// resident regions that split its scratchpad, issued only when a tile
// needs other blocks than the tile before it, so a run of tiles loads it
// once however many steps they take; the other operand streams through
// the thread parts of its scratchpad as before, and each step's GEMM
// reads its slice of the resident region through its own micro-op run.
// The second region lets the next run's LOAD overlap the current run's
// GEMMs: it is issued after the current run's Threads-th step's LOADs
// (those wait for the previous run's last GEMM, which frees the region),
// so the load module fetches it while the matrix unit works through the
// rest of the run; the token pass (isa.InsertDeps) orders both.

// residentMem is the scratchpad of the operand a resident tiling keeps
// resident: the input buffer in the M-outer order, the weight buffer in
// the N-outer order.
func (t Tiling) residentMem() isa.Memory {
	if t.NOuter {
		return isa.MemWgt
	}
	return isa.MemInp
}

// residentRow is the reduction blocks (channel blocks on the window
// layout) a resident region holds per row: the most any tile visits.
func (g *gemmKernel) residentRow(cfg isa.Config, t Tiling) int {
	if t.Window {
		return g.Win.CB(cfg)
	}
	nb, most := ceilDiv(g.N, cfg.BlockOut), 0
	for n0 := 0; n0 < nb; n0 += t.Nt {
		lo, hi := kRange(cfg, g, n0, min(t.Nt, nb-n0))
		most = max(most, hi-lo)
	}
	return most
}

// stepsPerTile is the most reduction steps a tile takes.
func (g *gemmKernel) stepsPerTile(cfg isa.Config, t Tiling) int {
	most := 0
	for _, s := range g.columnSteps(cfg, t) {
		most = max(most, s)
	}
	return most
}

// partEntries is the entries of one part of the input (x) and weight (w)
// buffers: a step's blocks, or the resident operand's whole reduction.
func (g *gemmKernel) partEntries(cfg isa.Config, t Tiling) (x, w int) {
	kx, kw := t.Kt, t.Kt
	if t.Resident && t.NOuter {
		kw = g.residentRow(cfg, t)
	} else if t.Resident {
		kx = g.residentRow(cfg, t)
	}
	if t.Window {
		win := g.Win
		return kx * win.inRows(t.Mt) * win.inCols(), t.Nt * kw * win.KH * win.KW
	}
	if g.RowW {
		return t.Mt * kx, t.Mt * t.Nt * kw
	}
	return t.Mt * kx, t.Nt * kw
}

// parts is the number of parts scratchpad mem (input or weight) is cut
// into: the resident regions of the resident operand's (one when a
// single LOAD fills it for the whole program), a part per virtual thread
// otherwise.
func (g *gemmKernel) parts(cfg isa.Config, t Tiling, mem isa.Memory) int {
	if !t.Resident || mem != t.residentMem() {
		return t.Threads
	}
	runs, mult := g.residentRuns(cfg, t)
	return min(2, len(runs)*mult)
}

// resRun is a run of consecutive tiles that read the same blocks of the
// resident operand: its reduction blocks and the steps its tiles take.
type resRun struct{ blocks, steps int }

// residentRuns lists the runs of the resident operand's LOADs, mult times
// over: for the inputs (M-outer), those of one M tile's N tiles (a
// grouped product's N tiles visit other reduction blocks), mult the M
// tiles; for the weights (N-outer), one per N tile.
func (g *gemmKernel) residentRuns(cfg isa.Config, t Tiling) (runs []resRun, mult int) {
	nb, mT := ceilDiv(g.N, cfg.BlockOut), g.mTiles(cfg, t)
	lastLo, lastHi := -1, -1
	for n0 := 0; n0 < nb; n0 += t.Nt {
		lo, hi := g.stepRange(cfg, t, n0, min(t.Nt, nb-n0))
		steps := ceilDiv(hi-lo, t.Kt)
		switch {
		case t.NOuter:
			runs = append(runs, resRun{hi - lo, mT * steps})
		case lo == lastLo && hi == lastHi:
			runs[len(runs)-1].steps += steps
		default:
			runs = append(runs, resRun{hi - lo, steps})
		}
		lastLo, lastHi = lo, hi
	}
	if t.NOuter {
		return runs, 1
	}
	return runs, mT
}

// residentLoad is what one resident LOAD of blocks reduction blocks moves.
func (g *gemmKernel) residentLoad(cfg isa.Config, t Tiling, blocks int) dmaCost {
	eI, eW := float64(cfg.EntryBytes(isa.MemInp, g.DP)), float64(cfg.EntryBytes(isa.MemWgt, g.DP))
	switch {
	case t.NOuter && t.Window:
		return dmaCost{float64(t.Nt*blocks*g.Win.KH*g.Win.KW) * eW, 1}
	case t.NOuter:
		return dmaCost{float64(t.Nt*blocks) * eW, 1}
	case t.Window:
		return dmaCost{float64(blocks*g.Win.inRows(t.Mt)*g.Win.inCols()) * eI, float64(blocks)}
	}
	return dmaCost{float64(t.Mt*blocks) * eI, 1}
}

// residentCost is the cycles and DRAM bytes the resident LOADs add to
// estimate's: each run's LOAD, less what the run's steps leave the load
// module idle while the matrix unit computes (with one thread nothing
// overlaps). comp is a step's GEMM cycles and stream the other operand's
// LOAD cycles per step.
func (g *gemmKernel) residentCost(cfg isa.Config, t Tiling, comp, stream float64) (cycles, bytes float64) {
	bw, lat := float64(cfg.DRAMBytesPerCycle), float64(cfg.DRAMLatencyCycles)
	runs, mult := g.residentRuns(cfg, t)
	for _, r := range runs {
		l := g.residentLoad(cfg, t, r.blocks)
		c := l.bytes/bw + l.dmas*lat
		if t.Threads > 1 {
			c = max(0, c-float64(r.steps)*max(0, comp-stream))
		}
		cycles += c * float64(mult)
		bytes += l.bytes * float64(mult)
	}
	return cycles, bytes
}

// residentPays reports whether t's resident variant differs from it: a
// run has more than one tile, or a tile more than one step.
func (g *gemmKernel) residentPays(cfg isa.Config, t Tiling) bool {
	if g.RowW {
		return false
	}
	runs, _ := g.residentRuns(cfg, t)
	for _, r := range runs {
		if r.steps > ceilDiv(r.blocks, t.Kt) || r.blocks > t.Kt {
			return true
		}
	}
	return false
}

// residentLoads is the resident operand's LOADs for tile o (its whole
// reduction) into resident region r.
func (gp *gemmProgram) residentLoads(o outTile, r int) []isa.Inst {
	var loads []isa.Inst
	emit := func(in isa.Inst) { loads = append(loads, in) }
	lo, hi := gp.g.stepRange(gp.cfg, gp.t, o.n0, o.nt)
	if gp.t.NOuter {
		gp.loadW(emit, o, lo, hi-lo, gp.base(isa.MemWgt, 0, r))
	} else {
		gp.loadX(emit, o, lo, hi-lo, gp.base(isa.MemInp, 0, r))
	}
	return loads
}

// base is the first entry of scratchpad mem's part for virtual thread h,
// or of resident region r when mem holds the resident operand. The
// program's micro-op plan has the part counts: no recount of the runs
// per instruction.
func (gp *gemmProgram) base(mem isa.Memory, h, r int) int {
	parts := gp.t.Threads
	if gp.t.Resident && mem == gp.t.residentMem() {
		h, parts = r, gp.uops.regions
	}
	return h * (gp.cfg.Depth(mem, gp.g.DP) / parts)
}

// residentPlan is a resident tiling's runs in program order: the run of
// each tile and each run's LOADs (into region run mod regions), and
// which runs' LOADs the emission has issued.
type residentPlan struct {
	on      bool
	threads int
	regions int
	run     []int
	loads   [][]isa.Inst
	issued  []bool
	steps   int // steps emitted in the current run
}

// planResident splits tiles into runs: a tile starts one when it needs
// other blocks of the resident operand than the tile before it.
func (gp *gemmProgram) planResident(tiles []outTile) *residentPlan {
	p := &residentPlan{on: gp.t.Resident, threads: gp.t.Threads, regions: gp.uops.regions}
	if !p.on {
		return p
	}
	var last []isa.Inst
	for _, o := range tiles {
		key := gp.residentLoads(o, 0)
		if !slices.Equal(key, last) {
			p.loads = append(p.loads, gp.residentLoads(o, len(p.loads)%p.regions))
			p.issued = append(p.issued, false)
		}
		p.run = append(p.run, len(p.loads)-1)
		last = key
	}
	return p
}

// region is the resident region tile reads (0 without one).
func (p *residentPlan) region(tile int) int {
	if !p.on {
		return 0
	}
	return p.run[tile] % p.regions
}

// begin emits the LOADs of the run tile starts, unless issued already.
func (p *residentPlan) begin(tile int, emit func(isa.Inst)) {
	if !p.on || (tile > 0 && p.run[tile] == p.run[tile-1]) {
		return
	}
	p.steps = 0
	p.issue(p.run[tile], emit)
}

// stepped counts a step of tile's run whose LOADs were emitted; after the
// Threads-th it emits the next run's LOADs.
func (p *residentPlan) stepped(tile int, emit func(isa.Inst)) {
	if !p.on {
		return
	}
	if p.steps++; p.steps == p.threads && p.run[tile]+1 < len(p.loads) {
		p.issue(p.run[tile]+1, emit)
	}
}

func (p *residentPlan) issue(run int, emit func(isa.Inst)) {
	if p.issued[run] {
		return
	}
	p.issued[run] = true
	for _, in := range p.loads[run] {
		emit(in)
	}
}
