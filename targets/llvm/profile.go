package llvm

import (
	"github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"
)

// Profiling probes (Options.Profile; `tessera run|bench --profile`).
// Around every tir.call of a host function the instrumented module reads
// CLOCK_MONOTONIC (clock_gettime) before and after the call and appends
// an event {site, start ns, end ns} to an exported array; site numbers
// the tir.call statements in code generation order (Result.ProfileSites
// names their callees). The caller resets the count, calls the entry and
// reads the events: nothing else is recorded, and a module compiled
// without Options.Profile has none of this.

// ProfileCapacity is the number of events the array holds; a call
// recorded past it overwrites the last slot (the count keeps counting,
// so a reader sees how many were lost).
const ProfileCapacity = 1 << 16

// ProfileSymbols are an instrumented module's data symbols for export
// prefix p ("tessera" when p is ""): the event count (int64) and the
// event array ([ProfileCapacity][3]int64: site, start and end in ns of
// CLOCK_MONOTONIC).
func ProfileSymbols(p string) (count, events string) {
	if p == "" {
		p = "tessera"
	}
	return p + "_profile_count", p + "_profile_events"
}

// profiler is a module's probe state.
type profiler struct {
	count, events *ir.Global
	sites         []string
}

var (
	timespecType = types.NewStruct(types.I64, types.I64)
	eventsType   = types.NewArray(ProfileCapacity, types.NewArray(3, types.I64))
)

// newProfiler defines the exported count and event array.
func newProfiler(m *ir.Module, prefix string) *profiler {
	cn, en := ProfileSymbols(prefix)
	count := m.NewGlobalDef(cn, constant.NewInt(types.I64, 0))
	count.Align = 8
	events := m.NewGlobalDef(en, constant.NewZeroInitializer(eventsType))
	events.Align = 64
	return &profiler{count: count, events: events}
}

// now reads CLOCK_MONOTONIC in nanoseconds (an i64).
func (g *fgen) now() value.Value {
	if g.profTS == nil {
		g.profTS = g.alloca(timespecType, 1)
	}
	clock := g.m.declare("clock_gettime", types.I32, types.I32, types.NewPointer(timespecType))
	g.cur.NewCall(clock, constant.NewInt(types.I32, 1), g.profTS) // CLOCK_MONOTONIC
	zero := constant.NewInt(types.I32, 0)
	sec := g.cur.NewLoad(types.I64, g.cur.NewGetElementPtr(timespecType, g.profTS, zero, zero))
	nsec := g.cur.NewLoad(types.I64, g.cur.NewGetElementPtr(timespecType, g.profTS, zero, constant.NewInt(types.I32, 1)))
	return g.cur.NewAdd(g.cur.NewMul(sec, iconst(1_000_000_000)), nsec)
}

// profiledCall wraps emit (a kernel call) in probes recording site callee.
func (g *fgen) profiledCall(callee string, emit func()) {
	p := g.m.prof
	if p == nil {
		emit()
		return
	}
	site := int64(len(p.sites))
	p.sites = append(p.sites, callee)
	t0 := g.now()
	emit()
	t1 := g.now()
	n := g.cur.NewLoad(types.I64, p.count)
	g.cur.NewStore(g.cur.NewAdd(n, iconst(1)), p.count)
	slot := g.cur.NewSelect(g.cur.NewICmp(enum.IPredULT, n, iconst(ProfileCapacity)), n, iconst(ProfileCapacity-1))
	for i, v := range []value.Value{iconst(site), t0, t1} {
		at := g.cur.NewGetElementPtr(eventsType, p.events, iconst(0), slot, iconst(int64(i)))
		g.cur.NewStore(v, at)
	}
}

// profileSites are the callees of the probed tir.call statements, by site.
func (m *mgen) profileSites() []string {
	if m.prof == nil {
		return nil
	}
	return m.prof.sites
}
