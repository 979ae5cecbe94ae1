package cuda

import (
	"github.com/tessera-ml/tessera/internal/traceevent"
	rt "github.com/tessera-ml/tessera/runtime"
)

// Profile runs the plan runs times, timing every kernel launch on its own
// with CUDA events (targets.Profiler; inputs stay resident after one
// untimed run). Each run is a "run" slice and each launch a "kernel"
// slice inside it, laid end to end on one device track: the run lasts
// the sum of its kernels' device times, since the events synchronize
// around each launch (the launches of a plain run overlap their launch
// latency). The saved artifact does not carry the kernels' FLOPs or how
// they were scheduled, so those args are 0 and "". The outputs hold the
// last run's results. Errors: the driver's.
func (e *entry) Profile(inputs, outputs []*rt.Tensor, runs int) (*traceevent.Trace, error) {
	all, err := e.warm(inputs, outputs)
	if err != nil {
		return nil, err
	}
	tr := &traceevent.Trace{DisplayTimeUnit: "ms", OtherData: map[string]any{"target": "cuda", "timing": "CUDA events around each launch"}}
	tr.NameProcess(1, "tessera cuda")
	tr.NameThread(1, 1, "device (launches timed one by one)")
	now := 0.0 // µs
	for r := range max(runs, 1) {
		durs := make([]float64, len(e.plan.Calls))
		total := 0.0
		for i := range e.plan.Calls {
			s, err := e.m.d.Elapsed(func() error { return e.launch(i) })
			if err != nil {
				return nil, err
			}
			durs[i] = s * 1e6
			total += durs[i]
		}
		tr.Complete("run", "run", 1, 1, now, total, map[string]any{"run": r})
		for i, c := range e.plan.Calls {
			tr.Complete(c.Kernel, "kernel", 1, 1, now, durs[i], map[string]any{"flops": 0.0, "schedule": ""})
			now += durs[i]
		}
	}
	return tr, e.download(all)
}
