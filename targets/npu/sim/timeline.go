package sim

import "github.com/tessera-ml/tessera/targets/npu/isa"

// Timeline is the schedule of one run (RunTimeline): every executed
// instruction with its cycles, in execution order (by ready cycle; each
// module's instructions in program order). All times are cycles from
// the start of the run.
type Timeline struct {
	// Program is the program that ran; ClockMHz the configured clock
	// (cycles / ClockMHz = µs).
	Program  *isa.Program
	ClockMHz float64
	// Cycles is the run's length, Stats.Cycles.
	Cycles int64
	Insts  []InstRecord
}

// InstRecord is one executed instruction. Its module was free from Free,
// its tokens were available at Ready (ISA.md's start: Ready − Free cycles
// stalled on tokens), it began executing at Begin (Ready, or for a LOAD
// or STORE when the DRAM channel was granted: Begin − Ready cycles
// stalled on DRAM) and completed at End (End − Begin busy cycles).
type InstRecord struct {
	// Index is the instruction's position in the program; Name its
	// mnemonic (isa.Inst.Name: "load.inp", "gemm", "alu.max").
	Index  int
	Module isa.Module
	Name   string
	Free   int64
	Ready  int64
	Begin  int64
	End    int64
	// Transfer is the cycles a LOAD or STORE held the DRAM channel, from
	// Begin (End adds the DRAM latency); DRAMBytes the bytes it moved.
	// Both are 0 for other instructions.
	Transfer  int64
	DRAMBytes int64
	// Tokens are the dependency tokens the instruction popped.
	Tokens []TokenWait
}

// TokenWait is one popped dependency token: the index of the instruction
// that pushed it and the cycle it was pushed (that instruction's End).
type TokenWait struct {
	Producer int
	Pushed   int64
}

// Busy, StallToken and StallDRAM are the record's busy cycles and its
// cycles stalled on tokens and on the DRAM channel (ModuleStats' terms).
func (r *InstRecord) Busy() int64       { return r.End - r.Begin }
func (r *InstRecord) StallToken() int64 { return r.Ready - r.Free }
func (r *InstRecord) StallDRAM() int64  { return r.Begin - r.Ready }

// Delays reports whether token w delayed the instruction: its module was
// free before Ready and w arrived at Ready (when both popped tokens
// arrived at Ready, both did).
func (r *InstRecord) Delays(w TokenWait) bool {
	return r.Ready > r.Free && w.Pushed == r.Ready
}

// add records instruction i, run at sp after its module was free from
// free and its tokens (popped) were available at ready.
func (tl *Timeline) add(i int, in *isa.Inst, free, ready int64, sp span, popped []token) {
	r := InstRecord{Index: i, Module: in.Module(), Name: in.Name(), Free: free, Ready: ready,
		Begin: sp.begin, End: sp.end, Transfer: sp.transfer, DRAMBytes: sp.bytes}
	for _, t := range popped {
		r.Tokens = append(r.Tokens, TokenWait{Producer: int(t.from), Pushed: t.time})
	}
	tl.Insts = append(tl.Insts, r)
}

// Totals sums the records into the Stats they account for: Cycles, each
// module's busy, stall and instruction counts, and the DRAM bytes (read
// by LOADs, written by STOREs). The other fields (MACs, iterations) are
// zero. For a timeline of a run, every field it fills equals the run's
// Stats.
func (tl *Timeline) Totals() Stats {
	s := Stats{Cycles: tl.Cycles}
	for i := range tl.Insts {
		r := &tl.Insts[i]
		ms := &s.Modules[r.Module]
		ms.Busy += r.Busy()
		ms.StallToken += r.StallToken()
		ms.StallDRAM += r.StallDRAM()
		ms.Insts++
		if tl.Program.Insts[r.Index].Op == isa.OpStore {
			s.DRAMWriteBytes += r.DRAMBytes
		} else {
			s.DRAMReadBytes += r.DRAMBytes
		}
	}
	return s
}
