// Package sim is the Tessera NPU's simulator (targets/npu/ISA.md,
// "Simulator"): functionally exact (int8/int32 bit-exact; bf16 products
// exact in f32, accumulated in f32 in a stated order) and cycle-level at
// instruction granularity, with closed-form costs per instruction. The
// load, compute and store modules run concurrently, each in program
// order, and wait on dependency tokens; DMAs share one DRAM channel. It
// also checks the program: a scratchpad entry read or overwritten by one
// module while another module's access to it is not ordered by tokens (a
// missing dependency), an address out of range, an uninitialized read and
// a deadlock are *Errors naming the instructions, never panics.
// RunTimeline also records the schedule, instruction by instruction
// (Timeline), and converts it to trace events (Timeline.AppendTrace).
package sim

import (
	"fmt"

	"github.com/tessera-ml/tessera/targets/npu/isa"
)

// ModuleStats are one module's cycles: Busy executing, stalled waiting
// for a dependency token (StallToken) or for the DRAM channel (StallDRAM);
// the rest of the run it is idle. Insts counts its instructions.
type ModuleStats struct {
	Busy       int64 `json:"busy"`
	StallToken int64 `json:"stall_token"`
	StallDRAM  int64 `json:"stall_dram"`
	Insts      int64 `json:"instructions"`
}

// Stats are the figures of one run.
type Stats struct {
	// Cycles is when the last module finished (cycles from the start).
	Cycles int64 `json:"cycles"`
	// Modules are indexed by isa.Module (load, compute, store).
	Modules [isa.NumModules]ModuleStats `json:"modules"`
	// MACs are the matrix unit's multiply-accumulates (GEMM iterations
	// without reset × Batch×BlockIn×BlockOut, padding included).
	MACs           int64 `json:"macs"`
	GEMMIterations int64 `json:"gemm_iterations"`
	ALUIterations  int64 `json:"alu_iterations"`
	// DRAMReadBytes and DRAMWriteBytes are the bytes the DMAs moved.
	DRAMReadBytes  int64 `json:"dram_read_bytes"`
	DRAMWriteBytes int64 `json:"dram_write_bytes"`
}

// Utilization is MACs / (Cycles × peak MACs per cycle) for cfg, in [0, 1].
func (s *Stats) Utilization(cfg isa.Config) float64 {
	if s.Cycles == 0 {
		return 0
	}
	return float64(s.MACs) / (float64(s.Cycles) * float64(cfg.PeakMACsPerCycle()))
}

// Add accumulates o into s (programs run one after another: cycles add).
func (s *Stats) Add(o *Stats) {
	s.Cycles += o.Cycles
	for m := range s.Modules {
		s.Modules[m].Busy += o.Modules[m].Busy
		s.Modules[m].StallToken += o.Modules[m].StallToken
		s.Modules[m].StallDRAM += o.Modules[m].StallDRAM
		s.Modules[m].Insts += o.Modules[m].Insts
	}
	s.MACs += o.MACs
	s.GEMMIterations += o.GEMMIterations
	s.ALUIterations += o.ALUIterations
	s.DRAMReadBytes += o.DRAMReadBytes
	s.DRAMWriteBytes += o.DRAMWriteBytes
}

// Error is a program the simulator refuses: the instruction (its index in
// the program and mnemonic), the other instruction involved when there is
// one (Other ≥ 0), and the reason.
type Error struct {
	Index     int
	Name      string
	Other     int
	OtherName string
	Reason    string
}

func (e *Error) Error() string {
	s := fmt.Sprintf("instruction %d (%s): %s", e.Index, e.Name, e.Reason)
	if e.Other >= 0 {
		s += fmt.Sprintf(" [instruction %d (%s)]", e.Other, e.OtherName)
	}
	return s
}

// Run executes program p on an NPU of configuration cfg, reading and
// writing dram (the device memory image: DMA addresses are byte offsets
// into it). Errors: the program's Validate error, or an *Error (an
// out-of-range address, an uninitialized or unordered scratchpad access,
// a deadlock); dram may then be partly written.
func Run(cfg isa.Config, p *isa.Program, dram []byte) (*Stats, error) {
	st, _, err := run(cfg, p, dram, false)
	return st, err
}

// RunTimeline is Run that also records the schedule: one InstRecord per
// executed instruction (timeline.go). Run records nothing and costs
// nothing more; the timeline costs about one record (~150 bytes) per
// instruction. Errors: Run's (no timeline is returned then).
func RunTimeline(cfg isa.Config, p *isa.Program, dram []byte) (*Stats, *Timeline, error) {
	return run(cfg, p, dram, true)
}

func run(cfg isa.Config, p *isa.Program, dram []byte, record bool) (*Stats, *Timeline, error) {
	if err := p.Validate(cfg); err != nil {
		return nil, nil, err
	}
	m := newMachine(cfg, p, dram)
	if record {
		m.tl = &Timeline{Program: p, ClockMHz: cfg.ClockMHz}
	}
	if err := m.run(); err != nil {
		return nil, nil, err
	}
	if m.tl != nil {
		m.tl.Cycles = m.stats.Cycles
	}
	return &m.stats, m.tl, nil
}

// token is one dependency token: when it becomes available, the vector
// clock of the instruction that pushed it and that instruction's index.
type token struct {
	time int64
	vc   vclock
	from int32
}

// vclock counts, per module, the instructions of that module that happen
// before (or are) an instruction under the token order.
type vclock [isa.NumModules]int32

// queue is a token FIFO between two modules.
type queue struct {
	toks []token
	head int
}

func (q *queue) ready() bool { return q.head < len(q.toks) }
func (q *queue) pop() token  { t := q.toks[q.head]; q.head++; return t }
func (q *queue) push(t token) {
	q.toks = append(q.toks, t)
}

// module is one in-order module's state.
type module struct {
	insts []int // program indices, in order
	pos   int
	free  int64 // cycle when the module can start its next instruction
	vc    vclock
}

// machine is the simulated NPU.
type machine struct {
	cfg  isa.Config
	p    *isa.Program
	dram []byte
	mods [isa.NumModules]module
	// prev[m] is the queue m pops with pop_prev, next[m] with pop_next.
	prev, next  [isa.NumModules]*queue
	channelFree int64
	stats       Stats
	mem         memories
	hb          happensBefore
	tl          *Timeline // nil unless recording
}

func newMachine(cfg isa.Config, p *isa.Program, dram []byte) *machine {
	m := &machine{cfg: cfg, p: p, dram: dram}
	l2c, c2l, c2s, s2c := &queue{}, &queue{}, &queue{}, &queue{}
	m.next[isa.ModLoad] = c2l
	m.prev[isa.ModCompute], m.next[isa.ModCompute] = l2c, s2c
	m.prev[isa.ModStore] = c2s
	for i := range p.Insts {
		mod := p.Insts[i].Module()
		m.mods[mod].insts = append(m.mods[mod].insts, i)
	}
	m.mem = newMemories(cfg, p.Datapath)
	m.hb = newHappensBefore(len(p.Insts))
	return m
}

// pushTarget is the queue a push toward the previous (next) module of
// mod feeds.
func (m *machine) pushTarget(mod isa.Module, towardNext bool) *queue {
	if towardNext {
		return m.prev[mod+1]
	}
	return m.next[mod-1]
}

// run executes instructions in order of their start cycles: at each step
// the module whose next instruction can start earliest (its tokens
// present) runs it; ties go to load, then compute, then store.
func (m *machine) run() error {
	for {
		best, bestStart := -1, int64(0)
		for mod := range m.mods {
			start, ok := m.startOf(isa.Module(mod))
			if ok && (best < 0 || start < bestStart) {
				best, bestStart = mod, start
			}
		}
		if best < 0 {
			return m.finished()
		}
		if err := m.step(isa.Module(best), bestStart); err != nil {
			return err
		}
	}
}

// startOf is when mod's next instruction can start, and whether it can
// (there is one and the tokens it pops have been pushed).
func (m *machine) startOf(mod isa.Module) (int64, bool) {
	md := &m.mods[mod]
	if md.pos >= len(md.insts) {
		return 0, false
	}
	in := &m.p.Insts[md.insts[md.pos]]
	start := md.free
	if in.PopPrev {
		q := m.prev[mod]
		if !q.ready() {
			return 0, false
		}
		start = max(start, q.toks[q.head].time)
	}
	if in.PopNext {
		q := m.next[mod]
		if !q.ready() {
			return 0, false
		}
		start = max(start, q.toks[q.head].time)
	}
	return start, true
}

// finished reports a deadlock when some module still has instructions.
func (m *machine) finished() error {
	for mod := range m.mods {
		md := &m.mods[mod]
		if md.pos < len(md.insts) {
			i := md.insts[md.pos]
			in := &m.p.Insts[i]
			from := "previous"
			if !in.PopPrev || m.prev[mod].ready() {
				from = "next"
			}
			return &Error{Index: i, Name: in.Name(), Other: -1,
				Reason: fmt.Sprintf("deadlock: the %s module waits for a token from the %s module that no instruction pushes", isa.Module(mod), from)}
		}
	}
	for mod := range m.mods {
		m.stats.Cycles = max(m.stats.Cycles, m.mods[mod].free)
	}
	return nil
}

// step runs mod's next instruction starting at cycle start.
func (m *machine) step(mod isa.Module, start int64) error {
	md := &m.mods[mod]
	i := md.insts[md.pos]
	in := &m.p.Insts[i]
	var popped [2]token
	n := 0
	if in.PopPrev {
		popped[n] = m.prev[mod].pop()
		md.vc.join(popped[n].vc)
		n++
	}
	if in.PopNext {
		popped[n] = m.next[mod].pop()
		md.vc.join(popped[n].vc)
		n++
	}
	md.vc[mod]++
	m.hb.record(i, mod, md.vc)
	if err := m.exec(i, in); err != nil {
		return err
	}
	sp := m.cost(mod, in, start)
	if m.tl != nil {
		m.tl.add(i, in, md.free, start, sp, popped[:n])
	}
	ms := &m.stats.Modules[mod]
	ms.StallToken += start - md.free
	ms.Insts++
	md.free = sp.end
	md.pos++
	if in.PushPrev {
		m.pushTarget(mod, false).push(token{sp.end, md.vc, int32(i)})
	}
	if in.PushNext {
		m.pushTarget(mod, true).push(token{sp.end, md.vc, int32(i)})
	}
	return nil
}

func (v *vclock) join(o vclock) {
	for i := range v {
		v[i] = max(v[i], o[i])
	}
}
