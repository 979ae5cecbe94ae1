package main

import (
	"fmt"
	"os"
	"strings"

	_ "github.com/tessera-ml/tessera/dialects/graph" // registers graph ops and passes
	_ "github.com/tessera-ml/tessera/dialects/hlo"   // registers hlo ops and the fuse pass
	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/lowering"
	"github.com/tessera-ml/tessera/schedule"
	"github.com/tessera-ml/tessera/targets/cpu"
	"github.com/tessera-ml/tessera/tensorir"
)

// graphPipeline is the graph- and hlo-level pipeline of `tessera compile`:
// graph clean-ups, batch-norm folding, legalization to hlo and fusion.
const graphPipeline = "canonicalize,fold-batch-norm,constant-fold,cse,dce,legalize-to-hlo,canonicalize,cse,fuse"

// compileOptions are the flags shared by compile, run and bench.
type compileOptions struct {
	target string
	mcpu   string
	name   string
	// traces are schedule traces (JSON files) replayed on the kernels they
	// name instead of the default schedule.
	traces []string
}

// compiled holds every level a compilation produced.
type compiled struct {
	graph *graphir.Module // after the hlo pipeline (fused hlo)
	tir   *tensorir.Module
	plan  lowering.PlanStats
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
	pm := graphir.NewPassManager()
	if err := pm.AddPipeline(graphPipeline); err != nil {
		return nil, err
	}
	if err := pm.Run(m); err != nil {
		return nil, err
	}
	c := &compiled{graph: m}
	if stop == stageHLO {
		return c, nil
	}
	tm, plan, err := lowering.LowerToTIRWithStats(m)
	if err != nil {
		return nil, err
	}
	c.tir, c.plan = tm, plan
	if err := scheduleKernels(tm, opts.traces); err != nil {
		return nil, err
	}
	c.entry = tm.Func("main")
	if c.entry == nil {
		return nil, fmt.Errorf("lowering produced no host function @main")
	}
	// Export @main; with Options.Prefix the C symbol is <name>_main.
	c.entry.Attrs[tensorir.AttrGlobalSymbol] = tensorir.StringAttr("main")
	if stop == stageTIR {
		return c, nil
	}
	res, err := cpu.Compile(tm, cpu.Options{MCPU: opts.mcpu, Prefix: opts.name})
	if err != nil {
		return nil, err
	}
	c.cpu = res
	return c, nil
}

// scheduleKernels inlines elementwise producers in every kernel, replays
// each --trace on the kernel it names, and gives every other kernel the
// CPU default schedule (vectorize the innermost spatial loop, parallelize
// the outermost), until tuned schedules exist.
func scheduleKernels(tm *tensorir.Module, traces []string) error {
	for _, f := range tm.Funcs {
		if _, host := f.Attrs[lowering.AttrHost]; host {
			continue
		}
		if err := schedule.InlineElementwise(f); err != nil {
			return err
		}
	}
	traced := map[string]bool{}
	for _, path := range traces {
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		tr, err := schedule.ParseTrace(data)
		if err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		name, err := schedule.ApplyToModule(tm, tr)
		if err != nil {
			return fmt.Errorf("--trace %s: %v", path, err)
		}
		traced[name] = true
	}
	bits := cpu.HostVectorBits()
	for i, f := range tm.Funcs {
		if !traced[f.Name] {
			tm.Funcs[i] = cpu.DefaultSchedule(f, bits)
		}
	}
	return nil
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
