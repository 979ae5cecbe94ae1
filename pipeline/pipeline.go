// Package pipeline is Tessera's CPU compilation pipeline as a library, the
// one `tessera compile/run/bench` and the bench/ harness share: graph and
// hlo passes, lowering to tensor IR, kernel scheduling, code generation.
package pipeline

import (
	"fmt"
	goruntime "runtime"

	_ "github.com/tessera-ml/tessera/dialects/graph" // registers graph ops and passes
	_ "github.com/tessera-ml/tessera/dialects/hlo"   // registers hlo ops and the fuse pass
	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/lowering"
	"github.com/tessera-ml/tessera/schedule"
	"github.com/tessera-ml/tessera/targets/cpu"
	"github.com/tessera-ml/tessera/tensorir"
)

// GraphPipeline is the graph- and hlo-level pass pipeline: graph clean-ups,
// batch-norm folding, legalization to hlo and fusion.
const GraphPipeline = "canonicalize,fold-batch-norm,constant-fold,cse,dce,legalize-to-hlo,canonicalize,cse,fuse"

// ToFusedHLO runs GraphPipeline on m in place. Errors are the passes'
// located diagnostics.
func ToFusedHLO(m *graphir.Module) error {
	pm := graphir.NewPassManager()
	if err := pm.AddPipeline(GraphPipeline); err != nil {
		return err
	}
	return pm.Run(m)
}

// ToTensorIR lowers a fused hlo module to tensor IR (a kernel per fusion,
// a host function per function) and schedules the kernels with
// ScheduleKernels; it returns the memory plan statistics too.
func ToTensorIR(m *graphir.Module, traces []*schedule.Trace) (*tensorir.Module, lowering.PlanStats, error) {
	tm, plan, err := lowering.LowerToTIRWithStats(m)
	if err != nil {
		return nil, plan, err
	}
	return tm, plan, ScheduleKernels(tm, traces)
}

// ScheduleKernels schedules every kernel of tm in place: elementwise
// producers are inlined (compute_inline), each trace is replayed on the
// kernel it names, and every other kernel gets the default CPU rules
// (schedule.ApplyDefaultRules: multi-level tiling of reductions, vectorize,
// parallel) at this host's vector width, or — when the rules refuse a
// kernel — the simple default schedule of targets/cpu. Host functions get
// the simple schedule (their calls are never parallelized).
// Errors: an inlining failure or a trace that does not replay.
func ScheduleKernels(tm *tensorir.Module, traces []*schedule.Trace) error {
	for _, f := range tm.Funcs {
		if _, host := f.Attrs[lowering.AttrHost]; host {
			continue
		}
		if err := schedule.InlineElementwise(f); err != nil {
			return err
		}
	}
	traced := map[string]bool{}
	for _, tr := range traces {
		name, err := schedule.ApplyToModule(tm, tr)
		if err != nil {
			return err
		}
		traced[name] = true
	}
	bits := cpu.HostVectorBits()
	target := schedule.Target{VectorBits: bits, Cores: goruntime.NumCPU(), MaxLanes: cpu.MaxVectorLanes, CanVectorize: cpu.CheckVectorizable}
	for i, f := range tm.Funcs {
		if traced[f.Name] {
			continue
		}
		if _, host := f.Attrs[lowering.AttrHost]; !host {
			if s, err := schedule.ApplyDefaultRules(f, target); err == nil {
				tm.Funcs[i] = s.Func()
				continue
			}
		}
		tm.Funcs[i] = cpu.DefaultSchedule(f, bits)
	}
	return nil
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
