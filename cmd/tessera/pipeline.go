package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tessera-ml/tessera/autotune"
	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/lowering"
	"github.com/tessera-ml/tessera/pipeline"
	"github.com/tessera-ml/tessera/schedule"
	"github.com/tessera-ml/tessera/targets/cpu"
	"github.com/tessera-ml/tessera/tensorir"
)

// compileOptions are the flags shared by compile, run and bench.
type compileOptions struct {
	target string
	mcpu   string
	name   string
	// traces are schedule traces (JSON files) replayed on the kernels they
	// name instead of the default schedule.
	traces []string
	// tuningDB is a tuning database whose best records schedule the
	// kernels they match (for the target with threads worker threads).
	tuningDB string
	threads  int
	// strictFP turns off FMA contraction (cpu.Options.StrictFP).
	strictFP bool
	// keepLayouts skips the rewrite-layout pass (ScheduleOptions.KeepLayouts).
	keepLayouts bool
	// log receives the one-line tuning summary.
	log io.Writer
}

// compiled holds every level a compilation produced.
type compiled struct {
	graph *graphir.Module // after the hlo pipeline (fused hlo)
	tir   *tensorir.Module
	plan  lowering.PlanStats
	sched pipeline.ScheduleStats
	cpu   *cpu.Result
	entry *tensorir.PrimFunc
}

// stage names a point where `--emit` stops.
type stage int

const (
	stageHLO stage = iota
	stageTIR
	stageLLVM
)

// loadModel reads, parses and verifies a graph-dialect file.
func loadModel(path string) (*graphir.Module, error) {
	src, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := graphir.Parse(path, src)
	if err != nil {
		return nil, err
	}
	if err := graphir.Verify(m); err != nil {
		return nil, err
	}
	if m.Lookup("main") == nil {
		return nil, graphir.Errorf(graphir.Location{File: path}, "the model has no function @main (the entry point)")
	}
	return m, nil
}

// compileModel runs the pipeline up to stop: graph passes, fusion,
// lowering to tensor IR with the default schedule, and CPU code generation.
func compileModel(path string, opts compileOptions, stop stage) (*compiled, error) {
	if opts.target != "" && opts.target != "cpu" {
		return nil, fmt.Errorf("target %q is not supported (available: cpu)", opts.target)
	}
	m, err := loadModel(path)
	if err != nil {
		return nil, err
	}
	if err := pipeline.ToFusedHLO(m); err != nil {
		return nil, err
	}
	c := &compiled{graph: m}
	if stop == stageHLO {
		return c, nil
	}
	traces, err := readTraces(opts.traces)
	if err != nil {
		return nil, err
	}
	so := pipeline.ScheduleOptions{Traces: traces, Target: pipeline.HostTarget(opts.threads, mcpuFlag(opts.mcpu)), KeepLayouts: opts.keepLayouts}
	if opts.tuningDB != "" {
		db, err := openTuningDB(opts.tuningDB, opts.log)
		if err != nil {
			return nil, err
		}
		defer db.Close()
		so.DB = db
	}
	tm, plan, st, err := pipeline.ToTensorIR(m, so)
	if err != nil {
		return nil, err
	}
	if so.DB != nil && opts.log != nil {
		fmt.Fprintf(opts.log, "tessera: tuning db %s: %d of %d kernels use tuned schedules", opts.tuningDB, st.Tuned, st.Kernels)
		if st.Untuned > 0 {
			fmt.Fprintf(opts.log, "; %d without a record for %q use the default rules", st.Untuned, so.Target.String())
		}
		fmt.Fprintln(opts.log)
	}
	c.tir, c.plan, c.sched = tm, plan, st
	if c.entry, err = pipeline.ExportMain(tm); err != nil {
		return nil, err
	}
	if stop == stageTIR {
		return c, nil
	}
	res, err := cpu.Compile(tm, cpu.Options{MCPU: opts.mcpu, Prefix: opts.name, StrictFP: opts.strictFP})
	if err != nil {
		return nil, err
	}
	c.cpu = res
	return c, nil
}

// mcpuFlag maps --mcpu to the tuning target's spelling ("" = native).
func mcpuFlag(mcpu string) string {
	if mcpu == "native" {
		return ""
	}
	return mcpu
}

// openTuningDB opens an existing tuning database read for records,
// printing its load warnings (a torn last line) to log.
func openTuningDB(path string, log io.Writer) (*autotune.Database, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("--tuning-db: %v", err)
	}
	db, warns, err := autotune.OpenDatabase(path)
	if err != nil {
		return nil, err
	}
	for _, w := range warns {
		if log != nil {
			fmt.Fprintln(log, w)
		}
	}
	return db, nil
}

// readTraces reads --trace files.
func readTraces(paths []string) ([]*schedule.Trace, error) {
	var out []*schedule.Trace
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		tr, err := schedule.ParseTrace(data)
		if err != nil {
			return nil, fmt.Errorf("--trace %s: %v", p, err)
		}
		out = append(out, tr)
	}
	return out, nil
}

// prefixFor derives the ABI prefix from the output path (lenet5.o →
// lenet5), as DESIGN.md's object code ABI says, unless --name is given.
func prefixFor(name, output string) string {
	if name != "" {
		return name
	}
	base := output
	if i := strings.LastIndexByte(base, '/'); i >= 0 {
		base = base[i+1:]
	}
	if i := strings.IndexByte(base, '.'); i > 0 {
		base = base[:i]
	}
	if base == "" {
		return "model"
	}
	return cpu.CIdentifier(base)
}
