package cpu

import (
	"encoding/json"
	"fmt"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/tessera-ml/tessera/internal/traceevent"
	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/targets/llvm"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// profileSection holds an instrumented module's probe sites: a JSON
// array of profileSite, one per llvm.Result.ProfileSites entry, in the
// data symbol <prefix>_tessera_profile.
const (
	profileSection = ".tessera.profile"
	profileSuffix  = "_tessera_profile"
)

// profileSite is what the profile says about one probed kernel call.
type profileSite struct {
	Kernel   string  `json:"kernel"`
	FLOPs    float64 `json:"flops"`
	Schedule string  `json:"schedule"`
}

func exportPrefix(prefix string) string {
	if prefix == "" {
		return "tessera"
	}
	return prefix
}

// embedProfileSites stores the probe sites of an instrumented module
// (nothing for a module compiled without probes).
func embedProfileSites(res *llvm.Result, m *tir.Module, prefix string) error {
	if len(res.ProfileSites) == 0 {
		return nil
	}
	byName := map[string]*tir.PrimFunc{}
	for _, f := range m.Funcs {
		byName[f.Name] = f
	}
	sites := make([]profileSite, len(res.ProfileSites))
	for i, k := range res.ProfileSites {
		sites[i] = profileSite{Kernel: k}
		if f := byName[k]; f != nil {
			sites[i].FLOPs = tir.EstimateFLOPs(f)
			if s, ok := f.Attrs[tir.AttrSchedule].(tir.StringAttr); ok {
				sites[i].Schedule = string(s)
			}
		}
	}
	data, err := json.Marshal(sites)
	if err != nil {
		return err
	}
	return res.EmbedData(exportPrefix(prefix)+profileSuffix, profileSection, data)
}

// probes are a loaded instrumented module's probe data.
type probes struct {
	count  *int64
	events *[llvm.ProfileCapacity][3]int64
	sites  []profileSite
}

// openProbes finds the probe symbols of the shared object at path (nil
// when it was compiled without them). Errors: a malformed site table.
func openProbes(lib *rt.Library, path string) (*probes, error) {
	sig, err := rt.ReadSignature(path)
	if err != nil {
		return nil, nil // not a Tessera module with a signature: no probes
	}
	cn, en := llvm.ProfileSymbols(sig.Prefix)
	c, err1 := lib.Symbol(cn)
	e, err2 := lib.Symbol(en)
	t, err3 := lib.Symbol(exportPrefix(sig.Prefix) + profileSuffix)
	if err1 != nil || err2 != nil || err3 != nil {
		return nil, nil
	}
	p := &probes{count: (*int64)(cMemory(c)), events: (*[llvm.ProfileCapacity][3]int64)(cMemory(e))}
	if err := json.Unmarshal(cString(t), &p.sites); err != nil {
		return nil, fmt.Errorf("cpu: %s: profile sites: %v", path, err)
	}
	return p, nil
}

// cMemory is the address of a shared object's data symbol (memory the
// dynamic loader owns, never Go's heap) as a pointer.
func cMemory(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// cString is the NUL-terminated bytes at p (at most 64 MiB).
func cString(p uintptr) []byte {
	b := unsafe.Slice((*byte)(cMemory(p)), 64<<20)
	if i := slices.Index(b, 0); i >= 0 {
		return b[:i]
	}
	return nil
}

// profiledEntry is an entry of an instrumented module.
type profiledEntry struct {
	*rt.Entry
	probes *probes
}

// monotonic is CLOCK_MONOTONIC in ns, the clock the probes read.
func monotonic() int64 {
	var ts unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}

// Profile calls the entry runs times (targets.Profiler). Every call is a
// "run" slice and every probed kernel call a "kernel" slice inside it, on
// the calling thread's track; times are µs from the first call's start.
// OtherData holds "probe_overhead_us", the median gap between back-to-back
// kernel calls — what the probes between them cost (a clock read and the
// event's stores; each call pays one more clock read inside its own
// slice) — and "lost_events" when a run made more kernel calls than the
// probe array holds. Errors: the calls'.
func (e *profiledEntry) Profile(inputs, outputs []*rt.Tensor, runs int) (*traceevent.Trace, error) {
	tr := &traceevent.Trace{DisplayTimeUnit: "ms", OtherData: map[string]any{"target": "cpu", "clock": "CLOCK_MONOTONIC"}}
	tr.NameProcess(1, "tessera "+e.Symbol())
	tr.NameThread(1, 1, "calling thread")
	us := func(ns int64) float64 { return float64(ns) / 1e3 }
	origin := int64(-1)
	var gaps []float64
	lost := int64(0)
	for r := 0; r < runs; r++ {
		*e.probes.count = 0
		t0 := monotonic()
		err := e.Call(inputs, outputs)
		t1 := monotonic()
		if err != nil {
			return nil, err
		}
		if origin < 0 {
			origin = t0
		}
		tr.Complete("run", "run", 1, 1, us(t0-origin), us(t1-t0), map[string]any{"run": r})
		n := *e.probes.count
		lost += max(0, n-llvm.ProfileCapacity)
		prevEnd := int64(-1)
		for i := int64(0); i < min(n, llvm.ProfileCapacity); i++ {
			ev := e.probes.events[i]
			site, start, end := ev[0], ev[1], ev[2]
			if site < 0 || site >= int64(len(e.probes.sites)) {
				return nil, fmt.Errorf("cpu: profile: event %d has site %d of %d", i, site, len(e.probes.sites))
			}
			s := e.probes.sites[site]
			tr.Complete(s.Kernel, "kernel", 1, 1, us(start-origin), us(end-start), map[string]any{"flops": s.FLOPs, "schedule": s.Schedule, "site": site})
			if prevEnd >= 0 {
				gaps = append(gaps, us(start-prevEnd))
			}
			prevEnd = end
		}
	}
	if len(gaps) > 0 {
		tr.OtherData["probe_overhead_us"] = rt.Median(gaps)
	}
	if lost > 0 {
		tr.OtherData["lost_events"] = lost
	}
	return tr, nil
}
