package sim

import (
	"fmt"
	"math"
	"sort"

	"github.com/tessera-ml/tessera/internal/traceevent"
	"github.com/tessera-ml/tessera/targets/npu/isa"
)

// Trace event names of a timeline (AppendTrace).
const (
	// InstCategory is the category of the instruction slices.
	InstCategory = "npu.inst"
	// TokenCategory is the category of the dependency-token flows, named
	// TokenFlow.
	TokenCategory = "npu.token"
	TokenFlow     = "token"
	// DRAMCounter is the counter of the DRAM channel's bytes per cycle.
	DRAMCounter = "dram bytes/cycle"
)

// Tracks say where AppendTrace puts a timeline: process Pid, the load,
// compute and store modules on threads Tids (indexed by isa.Module), cycle
// 0 at Start µs; flow ids are FlowPrefix followed by the waiting
// instruction's index and the token's position, so timelines appended to
// one trace need distinct prefixes.
type Tracks struct {
	Pid        int
	Tids       [isa.NumModules]int
	Start      float64
	FlowPrefix string
}

// DefaultTracks are process 1 with the modules on threads 1, 2 and 3, at
// time 0.
func DefaultTracks() Tracks {
	return Tracks{Pid: 1, Tids: [isa.NumModules]int{1, 2, 3}}
}

// Name appends the metadata naming the module threads "load", "compute"
// and "store".
func (k Tracks) Name(t *traceevent.Trace) {
	for m := isa.Module(0); m < isa.NumModules; m++ {
		t.NameThread(k.Pid, k.Tids[m], m.String())
	}
}

// Trace is the timeline alone: process 1 named "npu" with the module
// tracks of DefaultTracks and the timeline appended (AppendTrace).
func (tl *Timeline) Trace() *traceevent.Trace {
	t := &traceevent.Trace{DisplayTimeUnit: "ns"}
	k := DefaultTracks()
	t.NameProcess(k.Pid, "npu")
	k.Name(t)
	tl.AppendTrace(t, k)
	return t
}

// AppendTrace appends the timeline's events to t at tracks k, times in µs
// (cycles / ClockMHz after k.Start):
//   - per instruction a complete slice (cat InstCategory) on its module's
//     thread from Begin to End, named by its mnemonic, with args "index",
//     "inst" (its assembly text), "cycles" (busy), "stall_token_cycles",
//     "stall_dram_cycles" and, for a LOAD or STORE, "dram_bytes"; on each
//     thread the slices follow one another without overlapping;
//   - per token that delayed an instruction (InstRecord.Delays) a flow
//     (TokenFlow) from half a cycle before the pushing instruction's end
//     to half a cycle after the waiting one's begin (inside both slices,
//     so viewers bind the arrow to them);
//   - the counter DRAMCounter (series "value") on process k.Pid: 0 at cycle
//     0, each transfer's bytes / transfer cycles while it holds the
//     channel, 0 when the channel is idle.
func (tl *Timeline) AppendTrace(t *traceevent.Trace, k Tracks) {
	pos := make([]int, len(tl.Program.Insts)) // program index → record
	for j := range tl.Insts {
		pos[tl.Insts[j].Index] = j
	}
	for j := range tl.Insts {
		tl.appendSlice(t, k, &tl.Insts[j])
	}
	for j := range tl.Insts {
		tl.appendFlows(t, k, &tl.Insts[j], pos)
	}
	tl.appendDRAMCounter(t, k)
}

// at is cycle c in µs on tracks k.
func (tl *Timeline) at(k Tracks, c int64) float64 { return k.Start + float64(c)/tl.ClockMHz }

// between is the duration from ts to end (µs), never so long that ts + it
// passes end in floating point (slices that meet must not overlap).
func between(ts, end float64) float64 {
	d := end - ts
	for d > 0 && ts+d > end {
		d = math.Nextafter(d, 0)
	}
	return max(d, 0)
}

func (tl *Timeline) appendSlice(t *traceevent.Trace, k Tracks, r *InstRecord) {
	args := map[string]any{
		"index":              r.Index,
		"inst":               tl.Program.Insts[r.Index].Text(tl.Program.Datapath),
		"cycles":             r.Busy(),
		"stall_token_cycles": r.StallToken(),
		"stall_dram_cycles":  r.StallDRAM(),
	}
	if op := tl.Program.Insts[r.Index].Op; op == isa.OpLoad || op == isa.OpStore {
		args["dram_bytes"] = r.DRAMBytes
	}
	ts := tl.at(k, r.Begin)
	t.Complete(r.Name, InstCategory, k.Pid, k.Tids[r.Module], ts, between(ts, tl.at(k, r.End)), args)
}

// appendFlows appends r's flows from the instructions whose tokens
// delayed it.
func (tl *Timeline) appendFlows(t *traceevent.Trace, k Tracks, r *InstRecord, pos []int) {
	half := 0.5 / tl.ClockMHz
	for n, w := range r.Tokens {
		if !r.Delays(w) {
			continue
		}
		p := &tl.Insts[pos[w.Producer]]
		p0, p1 := tl.at(k, p.Begin), tl.at(k, p.End)
		r0, r1 := tl.at(k, r.Begin), tl.at(k, r.End)
		id := fmt.Sprintf("%s%d.%d", k.FlowPrefix, r.Index, n)
		t.Flow(TokenFlow, TokenCategory, id, k.Pid, k.Tids[p.Module], max(p1-half, (p0+p1)/2), k.Tids[r.Module], min(r0+half, (r0+r1)/2))
	}
}

// appendDRAMCounter appends the channel's rate: a sample at each
// transfer's begin and a 0 at its end unless the next transfer begins
// then.
func (tl *Timeline) appendDRAMCounter(t *traceevent.Trace, k Tracks) {
	var xfers []*InstRecord
	for j := range tl.Insts {
		if r := &tl.Insts[j]; r.Transfer > 0 {
			xfers = append(xfers, r)
		}
	}
	sort.SliceStable(xfers, func(a, b int) bool { return xfers[a].Begin < xfers[b].Begin })
	last := -1 // index in t of the last sample
	sample := func(c int64, rate float64) {
		ts := tl.at(k, c)
		if last >= 0 && t.TraceEvents[last].Ts == ts {
			t.TraceEvents[last].Args = map[string]any{"value": rate}
			return
		}
		t.Counter(DRAMCounter, k.Pid, ts, map[string]any{"value": rate})
		last = len(t.TraceEvents) - 1
	}
	sample(0, 0)
	for _, r := range xfers {
		sample(r.Begin, float64(r.DRAMBytes)/float64(r.Transfer))
		sample(r.Begin+r.Transfer, 0)
	}
}
