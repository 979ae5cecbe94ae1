package npu

import (
	"sort"

	"github.com/tessera-ml/tessera/targets/npu/sim"
)

// runReport accumulates one model run's figures per NPU kernel.
type runReport struct {
	s       *saved
	plan    *Plan
	total   sim.Stats
	kernels map[string]*sim.Stats
	calls   map[string]int
	useful  map[string]int64
	order   []string
}

func newRunReport(s *saved, p *Plan) *runReport {
	return &runReport{s: s, plan: p, kernels: map[string]*sim.Stats{}, calls: map[string]int{}, useful: map[string]int64{}}
}

func (r *runReport) add(kernel string, st *sim.Stats) {
	if r.kernels[kernel] == nil {
		r.kernels[kernel] = &sim.Stats{}
		r.order = append(r.order, kernel)
	}
	r.kernels[kernel].Add(st)
	r.calls[kernel]++
	r.useful[kernel] += r.s.Kernels[kernel].MACs
	r.total.Add(st)
}

// finish makes the report: NPU kernels run one after another, so the
// cycles add; the MAC fraction counts every call of every kernel; host
// ops are the host kernels with the reason each is not on the NPU.
func (r *runReport) finish(hostSeconds float64) *sim.Report {
	cfg := r.s.Config
	rep := &sim.Report{Config: cfg.Name, Figures: sim.FiguresOf(cfg, &r.total), HostOps: []string{}, HostSeconds: hostSeconds}
	var npuMACs, all int64
	hostSeen := map[string]bool{}
	for _, c := range r.plan.Calls {
		info := r.s.Kernels[c.Kernel]
		all += info.MACs
		if info.NPU {
			npuMACs += info.MACs
		} else if !hostSeen[c.Kernel] {
			hostSeen[c.Kernel] = true
			rep.HostOps = append(rep.HostOps, "@"+c.Kernel+": "+info.Reason)
		}
	}
	rep.NPUMACFraction = 1
	if all > 0 {
		rep.NPUMACFraction = float64(npuMACs) / float64(all)
	}
	rep.SetUseful(cfg, npuMACs)
	names := append([]string(nil), r.order...)
	sort.SliceStable(names, func(i, j int) bool { return r.kernels[names[i]].Cycles > r.kernels[names[j]].Cycles })
	for _, n := range names {
		k := sim.KernelFigures{Name: n, Calls: r.calls[n], Figures: sim.FiguresOf(cfg, r.kernels[n])}
		k.SetUseful(cfg, r.useful[n])
		rep.Kernels = append(rep.Kernels, k)
	}
	return rep
}
