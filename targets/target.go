// Package targets defines what a code generation target is to the rest
// of Tessera (TVM's Target): the compilation pipeline (package pipeline),
// the autotuner and the CLI use only this interface. Each target is a
// folder below targets/ that registers itself under its --target name
// (cpu; later cuda, npu) in an init function; New makes an instance for a
// set of Options.
package targets

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/tessera-ml/tessera/internal/registry"
	"github.com/tessera-ml/tessera/internal/traceevent"
	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/schedule"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// Options select what code a target instance makes. The zero value is
// this machine with its defaults.
type Options struct {
	// MCPU is the processor code is generated for ("" or "native": this
	// machine; the CPU target passes it to llc-16 -mcpu).
	MCPU string
	// Threads is the number of worker threads parallel code runs on
	// (≤ 0: runtime.NumThreads()); measured schedules depend on it.
	Threads int
	// StrictFP turns off floating-point contraction (a multiply feeding an
	// add stays two roundings): results are then bit-identical to the
	// tensor IR interpreter's.
	StrictFP bool
	// Profile asks for an instrumented build whose entries implement
	// Profiler (--profile): the CPU target puts timestamp probes around
	// every kernel call. Kernels are unchanged, so it is not part of Key.
	Profile bool
	// MinParallelWork overrides the CPU target's parallelism cost
	// threshold (schedule.CPURules.MinParallelWork; nil: the target's
	// default, 0: parallelize every kernel).
	MinParallelWork *float64
	// Config is a target configuration file ("": the target's default);
	// the NPU target reads its configuration JSON from it (--npu-config).
	Config string
}

// Target is one code generation target, configured by Options.
type Target interface {
	// Name is the --target spelling: "cpu".
	Name() string
	// Options are the options the instance was made with, defaults filled.
	Options() Options
	// Key is the target string of tuning records: everything that changes
	// the measured code, e.g. "cpu -mcpu=native -vector-bits=512
	// -threads=2". Records apply only to the key they were measured for.
	Key() string
	// Rules are the target's schedule rules: the default schedule of a
	// kernel and the design space the tuner samples.
	Rules() schedule.Rules
	// PostSchedule names the tensor IR passes (registered in tensorir's
	// pass registry) that run, in this order, between scheduling and
	// Codegen, in compilation and in the tuner's builder alike.
	PostSchedule() []string
	// Codegen compiles a scheduled module. Its entry points are the
	// functions with a tensorir.AttrGlobalSymbol, exported as
	// <prefix>_<function> (the global symbol itself when prefix is "").
	// Errors: constructs the target cannot compile, located diagnostics.
	Codegen(m *tir.Module, prefix string) (Artifact, error)
	// Load opens an artifact saved with Artifact.Save at path, for calls
	// from this process.
	Load(path string) (Module, error)
	// Emits lists the kinds Artifact.Emit writes (for `tessera compile
	// --emit`): the CPU target's "obj", "so", "llvm" and "asm".
	Emits() []string
	// TextEmits are those of Emits that are text (printed when no output
	// file is given).
	TextEmits() []string
	// Tolerance bounds the target's results against the tensor IR
	// interpreter's: max|got − ref| / max(1, max|ref|) on the tuner's
	// random inputs (cpu: 1e-3, for contraction and reassociation; npu:
	// 2e-2, for its bf16 inputs).
	Tolerance() float64
}

// StepSkipper is implemented by a target that leaves out some of the
// pipeline's target-independent graph steps, because their result suits
// the other targets' kernels and not its own (the CUDA target keeps
// convolution kernels OIHW: conv-kernel-layout).
type StepSkipper interface {
	// SkipsStep reports whether the step named name is left out.
	SkipsStep(name string) bool
}

// SymbolicShaper is implemented by a target whose code takes symbolic
// dimensions at run time (kernels and an entry point with the symbols'
// values as scalar arguments, issue 19): the CPU target. The pipeline
// refuses a model with symbolic dimensions for any other target, naming
// them with the --fix-dim hint.
type SymbolicShaper interface {
	SymbolicShapes() bool
}

// TakesSymbolicShapes reports whether t compiles symbolic dimensions.
func TakesSymbolicShapes(t Target) bool {
	s, ok := t.(SymbolicShaper)
	return ok && s.SymbolicShapes()
}

// StepOptioner is implemented by a target that runs some of the
// pipeline's graph steps with options of its own (the NPU fuses an
// integer contraction with integer ops only: fuse{integer-epilogues=true}).
type StepOptioner interface {
	// StepOptions are the options of the step named name (nil: none).
	StepOptions(name string) map[string]string
}

// Artifact is compiled code in memory.
type Artifact interface {
	// Emit writes kind (one of Target.Emits) to path. Text kinds written to "" are returned
	// instead (and nothing is written). Errors: an unknown kind, the
	// toolchain's.
	Emit(kind, path string) ([]byte, error)
	// Save writes the form Target.Load opens (the CPU target: a shared
	// object).
	Save(path string) error
}

// Module is an artifact loaded into this process.
type Module interface {
	// Entry returns the entry point symbol taking tensors of the given
	// specs (inputs, then outputs). Errors: a missing symbol.
	Entry(symbol string, inputs, outputs []rt.TensorSpec) (Entry, error)
	Close() error
}

// Entry is a callable entry point of a loaded module.
type Entry interface {
	// Call runs the entry once on tensors matching its specs.
	Call(inputs, outputs []*rt.Tensor) error
	// BenchEach makes warmup untimed calls, then at least minRepeats
	// timed calls lasting minTime in all, calling before (when not nil)
	// before every call, outside the timed interval. A simulated target
	// whose time cannot vary between calls may report one repeat.
	BenchEach(inputs, outputs []*rt.Tensor, warmup, minRepeats int, minTime time.Duration, before func()) (rt.Timings, error)
}

// ErrDeviceLost is wrapped by a runtime's errors after a fault that leaves
// the device unusable by this process (a CUDA kernel's illegal address or
// launch failure: the context is broken until the process exits). A
// caller that goes on, such as the tuner's runner, must start a new
// process.
var ErrDeviceLost = errors.New("the device is unusable by this process after a fault (restart it)")

// KernelTimer is implemented by entries that can time each kernel call
// of their plan on its own (the CUDA runtime, with CUDA events).
type KernelTimer interface {
	// KernelTimes runs the entry repeats times (after one untimed run),
	// timing every kernel call, and returns each call's median, in plan
	// order. The outputs hold the last run's results.
	KernelTimes(inputs, outputs []*rt.Tensor, repeats int) ([]KernelTime, error)
}

// Profiler is implemented by entries that record a timeline of their
// calls (`tessera run|bench --profile`). Profile calls the entry runs
// times and returns the timeline in the Trace Event Format. Its slices
// follow one convention, which the CLI's per-kernel table reads:
//   - cat "run": one slice per call of the entry, end to end;
//   - cat "kernel": one slice per kernel call, named by the kernel, with
//     args "flops" (the kernel's floating-point operations, a number)
//     and "schedule" (how it was scheduled: "default", "tuned", "traced");
//   - other categories (a simulator's instructions) are the target's own.
//
// OtherData may hold "probe_overhead_us", the measured cost of the
// instrumentation per kernel call. The outputs hold the last call's
// results. Errors: the calls'.
type Profiler interface {
	Profile(inputs, outputs []*rt.Tensor, runs int) (*traceevent.Trace, error)
}

// KernelTime is the median time of one kernel call of a plan, in seconds.
type KernelTime struct {
	Kernel  string
	Seconds float64
}

// Availability is implemented by targets whose code needs hardware or a
// driver this machine may lack (the CUDA target); Available returns, in
// one line, why code cannot run here, or nil.
type Availability interface {
	Available() error
}

// CheckAvailable is t's Available, or nil for a target that runs
// anywhere. run, bench and tune call it before compiling, so a missing
// GPU is one line, not a failure after compilation.
func CheckAvailable(t Target) error {
	if a, ok := t.(Availability); ok {
		return a.Available()
	}
	return nil
}

// Factory makes a target instance for options. Errors: options the
// target cannot honour (an unknown processor).
type Factory func(opts Options) (Target, error)

var factories = registry.New[Factory]("target")

// Register makes the target name available to New; targets call it in
// an init function. A duplicate name panics at start-up.
func Register(name string, f Factory) { factories.Add(name, f) }

// Names lists the registered targets, sorted.
func Names() []string { return factories.Names() }

// New returns an instance of target name. Errors: an unknown target
// (naming the known ones), or the target's own.
func New(name string, opts Options) (Target, error) {
	f, ok := factories.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("unknown target %q (known targets: %s)", name, strings.Join(Names(), ", "))
	}
	return f(opts)
}

// Build runs t's post-schedule passes on a scheduled module m (in place),
// then its code generation: what every scheduled module goes through, in
// a compilation (the last rows of the pipeline table are these steps) and
// in the tuner's builder. Errors: a pass or code generation failing.
func Build(t Target, m *tir.Module, prefix string) (Artifact, error) {
	if err := RunPostSchedule(t, m); err != nil {
		return nil, err
	}
	return t.Codegen(m, prefix)
}

// RunPostSchedule runs t's post-schedule passes on m in place.
func RunPostSchedule(t Target, m *tir.Module) error {
	for _, name := range t.PostSchedule() {
		info := tir.LookupPass(name)
		if info == nil {
			return fmt.Errorf("target %s: post-schedule pass %q is not registered", t.Name(), name)
		}
		p, err := info.New(nil)
		if err != nil {
			return err
		}
		if err := p.Run(m); err != nil {
			return err
		}
	}
	return nil
}

// SpecOf is a buffer parameter's runtime tensor spec: its name, dtype and
// constant shape. Errors: a scalar parameter, a symbolic shape, a dtype
// the runtime does not have.
func SpecOf(p *tir.Param) (rt.TensorSpec, error) {
	if p.Buffer == nil {
		return rt.TensorSpec{}, fmt.Errorf("parameter %%%s is a scalar; only tensor parameters are supported", p.Name())
	}
	shape, ok := p.Buffer.ConstShape()
	if !ok {
		return rt.TensorSpec{}, fmt.Errorf("parameter %%%s has a symbolic shape", p.Name())
	}
	dt, err := rt.ParseDType(p.Buffer.DType.String())
	if err != nil {
		return rt.TensorSpec{}, fmt.Errorf("parameter %%%s: %v", p.Name(), err)
	}
	return rt.TensorSpec{Name: p.Name(), DType: dt, Shape: shape}, nil
}
