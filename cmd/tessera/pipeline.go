package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/tessera-ml/tessera/dialects/graph/onnx"
	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/internal/gcpace"
	"github.com/tessera-ml/tessera/pipeline"
	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/targets"
	"github.com/tessera-ml/tessera/targets/llvm"
	"github.com/tessera-ml/tessera/tensorir"
)

// compileOptions are the flags shared by compile, run and bench.
type compileOptions struct {
	target string
	mcpu   string
	name   string
	// npuConfig is the NPU configuration JSON (targets.Options.Config).
	npuConfig string
	// traces are schedule traces (JSON files) replayed on the kernels they
	// name instead of the default schedule.
	traces []string
	// tuningDB is a tuning database whose best records schedule the
	// kernels they match (for the target with threads worker threads).
	tuningDB string
	threads  int
	// strictFP turns off FMA contraction (targets.Options.StrictFP).
	strictFP bool
	// keepLayouts skips the rewrite-layout step.
	keepLayouts bool
	// foldQDQ runs the fold-qdq step (integer kernels for QDQ models).
	foldQDQ bool
	// profile asks for an instrumented build (targets.Options.Profile;
	// run and bench set it for --profile).
	profile bool
	// printIRAfter, printIRAfterAll and timing observe the pipeline's
	// steps (pipeline.Runner).
	printIRAfter    []string
	printIRAfterAll bool
	timing          bool
	// fixDims pins an ONNX model's symbolic dimensions (NAME=N);
	// inputFiles are the .npy files run and bench will feed it, whose
	// shapes pin the symbols fixDims leaves free.
	fixDims    []string
	inputFiles []string
	// needSizes refuses symbols that neither fixDims nor inputFiles size
	// (run and bench, whose random inputs need sizes).
	needSizes bool
	// bindDims are the representative sizes (NAME=N) the default rules
	// tile symbolic dimensions left free for (--bind-dim).
	bindDims []string
	// log receives remarks (the tuning summary), dumps and timing.
	log io.Writer
}

// addCompileFlags adds the flags of compile, run and bench.
func addCompileFlags(cmd *cobra.Command, o *compileOptions, stderr io.Writer) {
	o.log = stderr
	f := cmd.Flags()
	f.StringVar(&o.tuningDB, "tuning-db", "", "tuning database (JSON lines, written by 'tessera tune'): kernels with a record use its best schedule, the others the default rules")
	f.StringVar(&o.target, "target", "cpu", "code generation target ("+strings.Join(targets.Names(), ", ")+")")
	f.StringVar(&o.mcpu, "mcpu", "native", "processor to generate code for (cpu: llc-16 -mcpu: native, x86-64-v4, znver4, ...; npu: the host's)")
	f.StringVar(&o.npuConfig, "npu-config", "", "NPU configuration JSON (targets/npu/ISA.md; default: the built-in default NPU)")
	f.BoolVar(&o.strictFP, "strict-fp", false, "no fused multiply-add contraction: f32 results bit-identical to the interpreter's (default: llc-16 -fp-contract=fast)")
	f.BoolVar(&o.keepLayouts, "keep-layouts", false, "keep constant kernel operands (weights) row-major instead of storing each in the order its schedule reads it (the rewrite-layout step)")
	f.BoolVar(&o.foldQDQ, "fold-qdq", false, "run a quantized (QDQ) model's convolutions and matrix products as integer kernels: i32 accumulation and fixed-point requantization (the fold-qdq pass), instead of dequantized float")
	f.StringArrayVar(&o.traces, "trace", nil, "schedule trace (JSON, schedule/README.md) to replay on the kernel it names instead of the default schedule (repeatable)")
	f.StringArrayVar(&o.printIRAfter, "print-ir-after", nil, "print the IR to stderr after the pipeline step `NAME` (repeatable; tessera compile --print-pipeline lists the steps)")
	f.BoolVar(&o.printIRAfterAll, "print-ir-after-all", false, "print the IR to stderr after every pipeline step")
	f.BoolVar(&o.timing, "timing", false, "print the wall-clock time of every pipeline step to stderr")
	f.StringArrayVar(&o.fixDims, "fix-dim", nil, fixDimUsage)
	f.StringArrayVar(&o.bindDims, "bind-dim", nil, "NAME=N: tile a symbolic dimension left free (compiled once for every size) for the size N (default 8), the code staying correct for every size; a target that compiles static shapes only (npu, cuda) specializes at N instead (repeatable)")
}

// compiled is a finished (or stopped) compilation.
type compiled struct {
	ir     *pipeline.IR
	runner *pipeline.Runner
	target targets.Target
	// entry is @main's host function (the exported entry point).
	entry *tensorir.PrimFunc
	// release ends the collector's pacing on the model's weights
	// (gcpace.HoldLive); call it when the artifact is written or loaded.
	release func()
}

// fixDimUsage documents --fix-dim on every command that takes a model.
const fixDimUsage = "NAME=N: an ONNX model's symbolic input dimension NAME (its dim_param) takes the size N (repeatable)"

// loadModel reads, parses and verifies a graph-dialect file, or imports an
// ONNX model (a path ending in .onnx) as `tessera import` does, with its
// symbolic dimensions pinned by fixDims (--fix-dim); the others stay
// symbolic. Errors: loadModelFor's.
func loadModel(path string, fixDims []string) (*graphir.Module, error) {
	return loadModelFor(path, fixDims, nil, false)
}

// loadModelFor is loadModel for running on the .npy files inputs (run,
// bench): an ONNX model's symbolic dimensions that --fix-dim leaves free
// take their sizes from those files' shapes (onnx.Options.InputShapes),
// and two files that disagree on a symbol are an error naming it and
// both. keepQDQ keeps an ONNX model's dequantized constants as ops
// (onnx.Options.KeepQDQ, for --fold-qdq). Errors: loadModel's, an
// unreadable input file.
func loadModelFor(path string, fixDims, inputs []string, keepQDQ bool) (*graphir.Module, error) {
	if isCompiledModel(path) {
		return nil, fmt.Errorf("%s: error: an already compiled model; tessera run and bench take it, compile and tune need the .mlir or .onnx", path)
	}
	var m *graphir.Module
	if strings.EqualFold(filepath.Ext(path), ".onnx") {
		fix, err := parseFixDims(fixDims)
		if err != nil {
			return nil, err
		}
		shapes, err := npyShapes(inputs)
		if err != nil {
			return nil, err
		}
		if m, err = onnx.ImportWith(path, onnx.Options{FixDims: fix, InputShapes: shapes, InputNames: inputs, KeepQDQ: keepQDQ}); err != nil {
			return nil, err
		}
		fixDims, inputs = nil, nil // the importer pinned and sized what they name
	} else {
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if m, err = graphir.Parse(path, src); err != nil {
			return nil, err
		}
	}
	if err := graphir.Verify(m); err != nil {
		return nil, err
	}
	main := m.Lookup("main")
	if main == nil {
		return nil, graphir.Errorf(graphir.Location{File: path}, "the model has no function @main (the entry point)")
	}
	if err := bindSymbols(path, m, main, fixDims, inputs); err != nil {
		return nil, err
	}
	return m, nil
}

// bindSymbols specializes a graph-dialect model whose @main has symbolic
// dimensions: --fix-dim pins symbols by name, and the --input files' shapes
// size the others (graphir.BindingOf). Symbols left free stay symbolic:
// the CPU target compiles them once for every size (requireBound refuses
// them where a command needs sizes). An ONNX model arrives here with its
// symbols already pinned or sized by the importer, or free. Errors: a
// --fix-dim naming no symbol of @main, inconsistent input files, shapes
// that disagree under the binding (BindFunc's verification).
func bindSymbols(path string, m *graphir.Module, main *graphir.Func, fixDims, inputs []string) error {
	bind, err := symbolBinding(path, main, fixDims, inputs)
	if err != nil || bind == nil {
		return err
	}
	for _, f := range m.Funcs {
		if err := graphir.BindFunc(f, bind); err != nil {
			return err
		}
	}
	return nil
}

// symbolBinding is bindSymbols' binding of main's symbols (nil when main
// has none).
func symbolBinding(path string, main *graphir.Func, fixDims, inputs []string) (map[string]int64, error) {
	syms := graphir.FuncSymbols(main)
	bind, err := parseFixDims(fixDims)
	if err != nil {
		return nil, err
	}
	for name := range bind {
		if !slices.Contains(syms, name) {
			have := strings.Join(syms, ", ")
			if have == "" {
				have = "none"
			}
			return nil, graphir.Errorf(graphir.Location{File: path}, "cannot fix dimension '%s': no input dimension of @main is named so (its symbolic dimensions: %s)", name, have)
		}
	}
	if len(syms) == 0 {
		return nil, nil
	}
	if len(inputs) == len(main.Type.Inputs) {
		shapes, err := npyShapes(inputs)
		if err != nil {
			return nil, err
		}
		from, err := graphir.BindingOf(main, shapes, inputs)
		if err != nil {
			return nil, graphir.Errorf(graphir.Location{File: path}, "%v", err)
		}
		for k, v := range from {
			if _, pinned := bind[k]; !pinned {
				bind[k] = v
			}
		}
	}
	return bind, nil
}

// requireBound refuses a model whose @main still has symbolic dimensions,
// for a command that needs their sizes (what), with the --fix-dim hint.
func requireBound(m *graphir.Module, what string) error {
	main := m.Lookup("main")
	if main == nil {
		return nil
	}
	if free := graphir.FuncSymbols(main); len(free) > 0 {
		return graphir.Errorf(main.Loc, "@main has symbolic dimensions (%s) and %s needs their sizes: pin them with %s", strings.Join(free, ", "), what, graphir.FixDimHint(free))
	}
	return nil
}

// newTarget makes the target instance the flags select. Errors: an
// unknown target, naming the known ones.
func (o compileOptions) newTarget() (targets.Target, error) {
	t, err := targets.New(o.target, targets.Options{MCPU: o.mcpu, Threads: o.threads, StrictFP: o.strictFP, Config: o.npuConfig, Profile: o.profile})
	if err != nil {
		return nil, fmt.Errorf("--target: %v", err)
	}
	return t, nil
}

// config is the pipeline configuration of the flags for target t.
// Errors: a malformed --bind-dim.
func (o compileOptions) config(t targets.Target) (pipeline.Config, error) {
	bind, err := parseDimFlags("bind-dim", o.bindDims)
	return pipeline.Config{Target: t, Traces: o.traces, TuningDB: o.tuningDB, KeepLayouts: o.keepLayouts, Prefix: o.name, FoldQDQ: o.foldQDQ, BindDims: bind}, err
}

// runner observes the steps as the flags ask.
func (o compileOptions) runner() (*pipeline.Runner, error) {
	r := pipeline.NewRunner()
	r.Dump, r.Log, r.PrintAfterAll, r.Timing = o.log, o.log, o.printIRAfterAll, o.timing
	r.GraphPrint = graphir.PrintOptions{ElideLargerThan: graphir.DefaultElideThreshold}
	r.TIRPrint = tensorir.PrintOptions{ElideConstantsLargerThan: graphir.DefaultElideThreshold}
	for _, n := range o.printIRAfter {
		if pipeline.Lookup(n) == nil {
			return nil, fmt.Errorf("--print-ir-after: unknown step '%s' (tessera compile --print-pipeline lists them)", n)
		}
		r.PrintAfter[n] = true
	}
	return r, nil
}

// staticBindDims returns the --fix-dim flags fixDims, with the --bind-dim
// flags bindDims appended when t compiles static shapes only: such a
// target specializes at the sizes --bind-dim gives, and says so on log
// (when not nil).
func staticBindDims(t targets.Target, fixDims, bindDims []string, log io.Writer) []string {
	if len(bindDims) == 0 || targets.TakesSymbolicShapes(t) {
		return fixDims
	}
	if log != nil {
		fmt.Fprintf(log, "note: target %s compiles static shapes: specialized at %s (--bind-dim)\n", t.Name(), strings.Join(bindDims, ", "))
	}
	return append(append([]string(nil), fixDims...), bindDims...)
}

// compileModel runs the pipeline for target t on the model at path
// through the steps that end at level stop.
func compileModel(path string, o compileOptions, t targets.Target, stop pipeline.Level) (*compiled, error) {
	cfg, err := o.config(t)
	if err != nil {
		return nil, err
	}
	o.fixDims = staticBindDims(t, o.fixDims, o.bindDims, o.log)
	r, err := o.runner()
	if err != nil {
		return nil, err
	}
	var m *graphir.Module
	phase := "parse"
	if strings.EqualFold(filepath.Ext(path), ".onnx") {
		phase = "import"
	}
	if err := r.Time(phase, func() (err error) {
		if m, err = loadModelFor(path, o.fixDims, o.inputFiles, o.foldQDQ); err == nil && o.needSizes {
			err = requireBound(m, "a run on random inputs (no --input files)")
		}
		return err
	}); err != nil {
		o.writeTiming(r)
		return nil, err
	}
	release := gcpace.HoldLive()
	ir, err := pipeline.Compile(m, cfg, r, stop)
	if err != nil {
		release()
		o.writeTiming(r)
		return nil, err
	}
	c := &compiled{ir: ir, runner: r, target: cfg.Target, release: release}
	if ir.TIR != nil {
		c.entry = ir.TIR.Func("main")
	}
	return c, nil
}

// writeTiming prints the timing report (--timing): the parse, every
// step and what the caller timed after them (writing the artifact).
func (o compileOptions) writeTiming(r *pipeline.Runner) {
	if o.timing && o.log != nil {
		r.WriteTiming(o.log)
		writePeakMemory(o.log)
	}
}

// writePeakMemory prints the peak resident set size of this process
// (getrusage's ru_maxrss, in MB of 2^20 bytes). The tool processes it
// runs (opt, llc, the linker) are not counted: Linux charges a child
// started with vfork the parent's pages until it execs, so their figure
// says nothing of their own.
func writePeakMemory(w io.Writer) {
	var self syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) == nil {
		fmt.Fprintf(w, "  peak memory: %.1f MB\n", float64(self.Maxrss)/1024)
	}
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
	return llvm.CIdentifier(base)
}

// checkThreads refuses a --threads given explicitly below 1 (unset: the
// default, TESSERA_NUM_THREADS, OMP_NUM_THREADS or all cores).
func checkThreads(cmd *cobra.Command, n int) error {
	if cmd.Flags().Changed("threads") && n < 1 {
		return fmt.Errorf("--threads must be at least 1, got %d (leave it out for the default)", n)
	}
	return nil
}

// npyShapes reads the shape of each .npy file (nil for none).
func npyShapes(paths []string) ([][]int64, error) {
	var shapes [][]int64
	for _, p := range paths {
		t, err := rt.ReadNPY(p)
		if err != nil {
			return nil, err
		}
		shapes = append(shapes, t.Shape())
	}
	return shapes, nil
}
