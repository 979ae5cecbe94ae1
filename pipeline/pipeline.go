// Package pipeline is Tessera's CPU compilation pipeline as a library, the
// one `tessera compile/run/bench` and the bench/ harness share: graph and
// hlo passes, lowering to tensor IR, kernel scheduling, code generation.
package pipeline

import (
	"fmt"
	goruntime "runtime"

	"github.com/tessera-ml/tessera/autotune"
	_ "github.com/tessera-ml/tessera/dialects/graph" // registers graph ops and passes
	_ "github.com/tessera-ml/tessera/dialects/hlo"   // registers hlo ops and the fuse pass
	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/lowering"
	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/schedule"
	"github.com/tessera-ml/tessera/targets/cpu"
	"github.com/tessera-ml/tessera/tensorir"
)

// GraphPipeline is the graph- and hlo-level pass pipeline: graph clean-ups,
// batch-norm folding, legalization to hlo, constant convolution kernels to
// HWIO (conv-kernel-layout) and fusion.
const GraphPipeline = "canonicalize,fold-batch-norm,constant-fold,cse,dce,legalize-to-hlo,canonicalize,cse,conv-kernel-layout,fuse"

// ToFusedHLO runs GraphPipeline on m in place. Errors are the passes'
// located diagnostics.
func ToFusedHLO(m *graphir.Module) error {
	pm := graphir.NewPassManager()
	if err := pm.AddPipeline(GraphPipeline); err != nil {
		return err
	}
	return pm.Run(m)
}

// ScheduleOptions say how ScheduleKernels schedules the kernels: a
// kernel named by one of Traces replays it; else, with DB, a kernel whose
// workload (autotune.WorkloadKey for Target) has a successful record
// replays the best one; every other kernel gets the default rules.
type ScheduleOptions struct {
	Traces []*schedule.Trace
	DB     *autotune.Database
	// Target is what tuning records must have been measured for (the
	// zero value means HostTarget(0, "")).
	Target autotune.Target
	// KeepLayouts skips tensorir.RewriteLayoutModule after scheduling
	// (constant kernel operands keep their row-major layout).
	KeepLayouts bool
}

// ScheduleStats count how the kernels were scheduled.
type ScheduleStats struct {
	Kernels  int // kernels (host functions excluded)
	Traced   int // scheduled by a --trace
	Tuned    int // scheduled by the best tuning record of their workload
	Untuned  int // with a DB: kernels without a usable record (default rules)
	Fallback int // kernels the default rules refused (simple schedule)
	// Layout counts the kernel parameters and host constants given the
	// layout their loop nest reads (tensorir.RewriteLayoutModule).
	Layout tensorir.LayoutRewriteStats
}

// HostTarget is the tuning target of this machine: its vector width and
// cores, llc -mcpu mcpu ("" = native) and threads worker threads (≤ 0:
// runtime.NumThreads(), TESSERA_NUM_THREADS or the CPU count).
func HostTarget(threads int, mcpu string) autotune.Target {
	if threads <= 0 {
		threads = rt.NumThreads()
	}
	return autotune.Target{
		Schedule: schedule.Target{VectorBits: cpu.HostVectorBits(), Cores: goruntime.NumCPU(), MaxLanes: cpu.MaxVectorLanes, CanVectorize: cpu.CheckVectorizable},
		MCPU:     mcpu,
		Threads:  threads,
	}
}

// ToTensorIR lowers a fused hlo module to tensor IR (a kernel per fusion,
// a host function per function), schedules the kernels with
// ScheduleKernels and, unless opts.KeepLayouts, stores each constant
// kernel operand in the order its schedule reads it
// (tensorir.RewriteLayoutModule); it returns the memory plan statistics
// too.
func ToTensorIR(m *graphir.Module, opts ScheduleOptions) (*tensorir.Module, lowering.PlanStats, ScheduleStats, error) {
	tm, plan, err := lowering.LowerToTIRWithStats(m)
	if err != nil {
		return nil, plan, ScheduleStats{}, err
	}
	st, err := ScheduleKernels(tm, opts)
	if err == nil && !opts.KeepLayouts {
		st.Layout = tensorir.RewriteLayoutModule(tm)
	}
	return tm, plan, st, err
}

// Tasks lowers a fused hlo module to tensor IR, inlines elementwise
// producers (the state tuning traces replay on) and returns the tuning
// tasks of its kernels for target.
func Tasks(m *graphir.Module, target autotune.Target) ([]*autotune.Task, error) {
	tm, err := lowering.LowerToTIR(m)
	if err != nil {
		return nil, err
	}
	if err := inlineKernels(tm); err != nil {
		return nil, err
	}
	return autotune.ExtractTasks(tm.Funcs, target), nil
}

// inlineKernels compute_inlines the elementwise producers of every kernel.
func inlineKernels(tm *tensorir.Module) error {
	for _, f := range tm.Funcs {
		if autotune.IsKernel(f) {
			if err := schedule.InlineElementwise(f); err != nil {
				return err
			}
		}
	}
	return nil
}

// ScheduleKernels schedules every kernel of tm in place: elementwise
// producers are inlined (compute_inline), each trace is replayed on the
// kernel it names, kernels with a tuning record replay the best one, and
// every other kernel gets the default CPU rules
// (schedule.ApplyDefaultRules: multi-level tiling of reductions, vectorize,
// parallel) at this host's vector width, or — when the rules refuse a
// kernel — the simple default schedule of targets/cpu. Host functions get
// the simple schedule (their calls are never parallelized).
// Errors: an inlining failure or a trace that does not replay (a tuning
// record that does not replay is skipped: the kernel counts as Untuned).
func ScheduleKernels(tm *tensorir.Module, opts ScheduleOptions) (ScheduleStats, error) {
	var st ScheduleStats
	if err := inlineKernels(tm); err != nil {
		return st, err
	}
	traced := map[string]bool{}
	for _, tr := range opts.Traces {
		name, err := schedule.ApplyToModule(tm, tr)
		if err != nil {
			return st, err
		}
		traced[name] = true
	}
	target := opts.Target
	if target.Schedule.VectorBits == 0 {
		target = HostTarget(0, "")
	}
	ts := target.String()
	for i, f := range tm.Funcs {
		if !autotune.IsKernel(f) {
			tm.Funcs[i] = cpu.DefaultSchedule(f, target.Schedule.VectorBits)
			continue
		}
		st.Kernels++
		if traced[f.Name] {
			st.Traced++
			continue
		}
		if opts.DB != nil {
			if s := bestRecord(opts.DB, f, ts); s != nil {
				tm.Funcs[i] = s.Func()
				st.Tuned++
				continue
			}
			st.Untuned++
		}
		if s, err := schedule.ApplyDefaultRules(f, target.Schedule); err == nil {
			tm.Funcs[i] = s.Func()
			continue
		}
		st.Fallback++
		tm.Funcs[i] = cpu.DefaultSchedule(f, target.Schedule.VectorBits)
	}
	return st, nil
}

// bestRecord replays the best record of f's workload (nil when there is
// none or it does not replay).
func bestRecord(db *autotune.Database, f *tensorir.PrimFunc, target string) *schedule.Schedule {
	r, ok := db.Best(autotune.WorkloadKey(f, target), target)
	if !ok || r.Trace == nil {
		return nil
	}
	s, err := schedule.Replay(f, r.Trace)
	if err != nil {
		return nil
	}
	return s
}

// ExportMain marks @main of tm as the exported entry point (with
// cpu.Options.Prefix P the C symbol is P_main) and returns it.
func ExportMain(tm *tensorir.Module) (*tensorir.PrimFunc, error) {
	entry := tm.Func("main")
	if entry == nil {
		return nil, fmt.Errorf("lowering produced no host function @main")
	}
	entry.Attrs[tensorir.AttrGlobalSymbol] = tensorir.StringAttr("main")
	return entry, nil
}
