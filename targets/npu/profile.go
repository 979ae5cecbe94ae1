package npu

import (
	"fmt"
	"math"

	"github.com/tessera-ml/tessera/internal/traceevent"
	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/targets/npu/isa"
	"github.com/tessera-ml/tessera/targets/npu/sim"
)

// maxProfileEvents bounds a profile's events: an NPU kernel call whose
// instruction events would pass it, and every call after it, keeps its
// kernel slice but has no instruction tracks.
const maxProfileEvents = 2_000_000

// A profile's tracks: one process "npu" with the thread "kernels" (run and
// kernel slices) and the load, compute and store modules' threads.
const (
	profilePid = 1
	kernelsTid = 1
)

var moduleTracks = sim.Tracks{Pid: profilePid, Tids: [isa.NumModules]int{2, 3, 4}}

// Profile implements targets.Profiler: it runs the model runs times (at
// least once) and returns the timeline, in µs. Calls follow one another
// in plan order: an NPU kernel call lasts its simulated cycles at the
// configured clock, a host kernel call its measured wall time, so a run
// lasts what BenchEach reports. Process 1, "npu", has
//   - the thread "kernels": per run a slice cat "run" named by the entry
//     point (args "run": its number from 0), and within it per kernel call
//     a slice cat "kernel" named by the kernel, with args "flops" (NPU
//     kernels: 2 × the kernel's MACs; host kernels: tensorir's
//     EstimateFLOPs), "schedule" ("npu"; for host
//     kernels their tessera.schedule attribute, "unscheduled" without
//     one), "device" ("npu" or "host") and, for NPU kernels, "cycles";
//   - the threads "load", "compute" and "store": every NPU kernel call's
//     sim.Timeline at the call's start (sim.Timeline.AppendTrace:
//     instruction slices, token flows, the "dram bytes/cycle" counter).
//
// OtherData holds "npu_config" and "clock_mhz"; once the events would
// pass maxProfileEvents (2 million) the remaining calls get no
// instruction events, and "instructions_truncated" is true with a
// "instructions_note" saying from which kernel call on. The outputs hold
// the last run's results and Report describes it. Errors: the calls'.
func (e *Entry) Profile(inputs, outputs []*rt.Tensor, runs int) (*traceevent.Trace, error) {
	limit := e.maxEvents
	if limit <= 0 {
		limit = maxProfileEvents
	}
	p := newProfile(e.m.s.Config, limit)
	for r := 0; r < max(runs, 1); r++ {
		at := p.beginRun(e.symbol, r)
		if _, err := e.run(inputs, outputs, p); err != nil {
			return nil, err
		}
		p.endRun(at)
	}
	return p.t, nil
}

// profile records the calls of Profile's runs.
type profile struct {
	cfg   isa.Config
	t     *traceevent.Trace
	now   float64 // µs: where the next call starts
	calls int     // kernel calls so far
	limit int
	// truncated is set once a call's instruction events were left out.
	truncated bool
}

func newProfile(cfg isa.Config, limit int) *profile {
	t := &traceevent.Trace{DisplayTimeUnit: "ns", OtherData: map[string]any{"npu_config": cfg.Name, "clock_mhz": cfg.ClockMHz}}
	t.NameProcess(profilePid, "npu")
	t.NameThread(profilePid, kernelsTid, "kernels")
	moduleTracks.Name(t)
	return &profile{cfg: cfg, t: t, limit: limit}
}

// wantsTimeline reports whether the next NPU kernel call should record
// its timeline (a profile that has not been truncated).
func (p *profile) wantsTimeline() bool { return p != nil && !p.truncated }

// beginRun appends run r's slice, its duration set by endRun, and
// returns its index.
func (p *profile) beginRun(name string, r int) int {
	p.t.Complete(name, "run", profilePid, kernelsTid, p.now, 0, map[string]any{"run": r})
	return len(p.t.TraceEvents) - 1
}

func (p *profile) endRun(at int) {
	ev := &p.t.TraceEvents[at]
	d := between(ev.Ts, p.now)
	ev.Dur = &d
}

// npuCall records an NPU kernel call of st.Cycles and, when tl is not
// nil, its instructions.
func (p *profile) npuCall(kernel string, info kernelInfo, st *sim.Stats, tl *sim.Timeline) {
	if p == nil {
		return
	}
	start := p.now
	p.kernel(kernel, float64(st.Cycles)/p.cfg.ClockMHz, map[string]any{
		"flops": float64(2 * info.MACs), "schedule": "npu", "device": "npu", "cycles": st.Cycles})
	if tl != nil {
		p.instructions(tl, start)
	}
}

// hostCall records a host kernel call of seconds.
func (p *profile) hostCall(kernel string, info kernelInfo, seconds float64) {
	if p == nil {
		return
	}
	sched := info.Schedule
	if sched == "" {
		sched = "unscheduled"
	}
	p.kernel(kernel, seconds*1e6, map[string]any{"flops": info.FLOPs, "schedule": sched, "device": "host"})
}

// kernel appends a kernel slice of dur µs at the current time and moves
// the time past it.
func (p *profile) kernel(name string, dur float64, args map[string]any) {
	end := p.now + dur
	p.t.Complete(name, "kernel", profilePid, kernelsTid, p.now, between(p.now, end), args)
	p.now = end
	p.calls++
}

// instructions appends tl at start µs, unless that would pass the bound:
// then it leaves them out (and every later call's) and says so in
// OtherData.
func (p *profile) instructions(tl *sim.Timeline, start float64) {
	n0 := len(p.t.TraceEvents)
	if n0+len(tl.Insts) <= p.limit {
		k := moduleTracks
		k.Start, k.FlowPrefix = start, fmt.Sprintf("c%d.", p.calls-1)
		tl.AppendTrace(p.t, k)
		if len(p.t.TraceEvents) <= p.limit {
			return
		}
		p.t.TraceEvents = p.t.TraceEvents[:n0]
	}
	p.truncated = true
	p.t.OtherData["instructions_truncated"] = true
	p.t.OtherData["instructions_note"] = fmt.Sprintf("kernel calls from number %d on (counting from 0 over all runs) have no instruction events: the profile reached its bound of %d events", p.calls-1, p.limit)
}

// between is the duration from ts to end (µs), never so long that ts + it
// passes end in floating point (slices that meet must not overlap).
func between(ts, end float64) float64 {
	d := end - ts
	for d > 0 && ts+d > end {
		d = math.Nextafter(d, 0)
	}
	return max(d, 0)
}
