// Package cuda is the CUDA target (--target cuda, TVM's target name):
// tensor IR kernels whose loops are bound to blockIdx/threadIdx become
// NVPTX LLVM IR (targets/llvm's NVPTX code generation) and PTX through
// llc-16 -march=nvptx64 -mcpu=sm_XX. It registers itself with the
// targets package.
//
// Scheduling is schedule.GPURules (multi-level tiling with shared-memory
// staging, auto-bind), checked by schedule.VerifyGPU; thread-sync places
// the barriers. Artifact.Save writes the PTX with the kernels' launch
// configurations and the host function's plan; Load runs it through the
// CUDA driver API (driver.go, purego; runtime.go). Without a driver,
// run/bench/tune stop with one line (Available).
package cuda

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/ebitengine/purego"

	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/schedule"
	"github.com/tessera-ml/tessera/targets"
	"github.com/tessera-ml/tessera/targets/llvm"
	tir "github.com/tessera-ml/tessera/tensorir"
)

func init() { targets.Register("cuda", NewTarget) }

// Processors are the --mcpu values the target accepts: NVIDIA compute
// capabilities LLVM 16's NVPTX backend knows, Volta (sm_70) and later.
var Processors = []string{"sm_70", "sm_72", "sm_75", "sm_80", "sm_86", "sm_87", "sm_89", "sm_90"}

// DefaultProcessor is the --mcpu of the CUDA target when none is given.
const DefaultProcessor = "sm_80"

// Target is the CUDA target instance.
type Target struct{ opts targets.Options }

// NewTarget returns the CUDA target for opts.MCPU ("" or "native": sm_80).
// Errors: a processor not in Processors.
func NewTarget(opts targets.Options) (targets.Target, error) {
	if opts.MCPU == "" || opts.MCPU == "native" {
		opts.MCPU = DefaultProcessor
	}
	if !slices.Contains(Processors, opts.MCPU) {
		return nil, fmt.Errorf("cuda: unknown processor %q (known: %s)", opts.MCPU, strings.Join(Processors, ", "))
	}
	return &Target{opts: opts}, nil
}

// Name is "cuda".
func (t *Target) Name() string { return "cuda" }

// Options are the instance's options.
func (t *Target) Options() targets.Options { return t.opts }

// Key is "cuda -mcpu=sm_80".
func (t *Target) Key() string { return "cuda -mcpu=" + t.opts.MCPU }

// Rules are schedule.GPURules with the default limits.
func (t *Target) Rules() schedule.Rules { return schedule.GPURules{} }

// SkipsStep leaves out conv-kernel-layout: its HWIO kernels (output
// channels innermost) suit the CPU's vectorized convolutions, while an
// auto-bound GPU convolution's thread reads one output channel's weights
// over (input channel, kh, kw), contiguous in OIHW and 256 KiB apart per
// input channel in HWIO (a 3×3 256→256 convolution at 14×14 on an H200:
// 0.082 ms OIHW, 0.172 ms HWIO).
// It also leaves out explicit-conv-padding: the GPU rules stage a
// convolution's input in shared memory, where the bound test is paid
// once per element staged, and the GPU code was measured without the pad
// kernels (not measured with them: no GPU on the build machines).
// And conv-layout: the GPU rules bind NCHW convolutions' output pixels
// to threads (channels-last GPU schedules are not written).
// (The names are hlo.ConvKernelLayoutPassName,
// hlo.ExplicitConvPaddingPassName and hlo.ConvLayoutPassName; targets do
// not import the dialects.)
func (t *Target) SkipsStep(name string) bool {
	return name == "conv-kernel-layout" || name == "explicit-conv-padding" || name == "conv-layout"
}

// PostSchedule is compact-buffer-allocation (a shared tile is allocated
// per block, a local one per thread, at the size of its tile),
// prefetch-shared (the next reduction step's tiles loaded into registers
// during the compute, where the schedule asks for it), then thread-sync
// (barriers between shared-memory accesses of different threads).
func (t *Target) PostSchedule() []string {
	return []string{"compact-buffer-allocation", "prefetch-shared", "thread-sync"}
}

// Codegen compiles the module's kernels (the functions with
// tensorir.AttrKernel) to one NVPTX module; the host functions stay tensor
// IR in the artifact. Errors: VerifyGPU's refusals, the NVPTX code
// generation's, a module without kernels.
func (t *Target) Codegen(m *tir.Module, prefix string) (targets.Artifact, error) {
	kernels := &tir.Module{}
	var host []*tir.PrimFunc
	for _, f := range m.Funcs {
		if _, ok := f.Attrs[tir.AttrKernel]; !ok {
			host = append(host, f)
			continue
		}
		if err := schedule.VerifyGPU(f, schedule.DefaultGPULimits); err != nil {
			return nil, tir.Errorf(f.Loc, "%v", err)
		}
		kernels.Funcs = append(kernels.Funcs, f)
	}
	if len(kernels.Funcs) == 0 {
		return nil, fmt.Errorf("cuda: the module has no kernel (no function with the %s attribute)", tir.AttrKernel)
	}
	res, err := llvm.CompileNVPTX(kernels, llvm.Options{MCPU: t.opts.MCPU, StrictFP: t.opts.StrictFP})
	if err != nil {
		return nil, err
	}
	plans, sig, err := t.exported(m, prefix)
	if err != nil {
		return nil, err
	}
	return &Artifact{Device: res, Host: host, Prefix: prefix, MCPU: t.opts.MCPU, Plans: plans, Signature: sig, kernels: kernels}, nil
}

// exported is the runtime plan of every exported function (global_symbol):
// a host function's calls, or one call of an exported kernel (what the
// tuner builds), keyed by the exported symbol; and the model's signature
// (the entries the runtime can call).
func (t *Target) exported(m *tir.Module, prefix string) (map[string]*targets.HostPlan, rt.Signature, error) {
	plans := map[string]*targets.HostPlan{}
	sig := rt.Signature{Target: t.Name(), MCPU: t.opts.MCPU, StrictFP: t.opts.StrictFP, Prefix: prefix}
	for _, f := range m.Funcs {
		sym, ok := f.Attrs[tir.AttrGlobalSymbol].(tir.StringAttr)
		if !ok {
			continue
		}
		name := string(sym)
		if prefix != "" {
			name = rt.EntrySymbol(prefix, f.Name)
		}
		var p *targets.HostPlan
		var err error
		if _, isHost := f.Attrs[tir.AttrHost]; isHost {
			p, err = targets.PlanOf(f)
		} else {
			p, err = targets.KernelPlan(f)
		}
		if err != nil {
			return nil, sig, fmt.Errorf("cuda: %v", err)
		}
		plans[name] = p
		if es, ok := targets.EntrySignatureOf(f, name); ok {
			sig.Entries = append(sig.Entries, es)
		}
	}
	return plans, sig, nil
}

// Available is nil where the CUDA driver loads, else the one line "no
// CUDA driver: libcuda.so.1 not found".
func (t *Target) Available() error {
	if !DriverPresent() {
		return fmt.Errorf("no CUDA driver: libcuda.so.1 not found")
	}
	return nil
}

// Load opens an artifact written by Artifact.Save on device 0 through the
// CUDA driver (driver.go). Errors: no driver, a file that is not a CUDA
// artifact, the driver's (the PTX JIT's with its log).
func (t *Target) Load(path string) (targets.Module, error) {
	d, err := newCUDADriver()
	if err != nil {
		return nil, err
	}
	m, err := loadWith(path, d)
	if err != nil {
		d.Close()
		return nil, err
	}
	return m, nil
}

// DriverPresent reports whether the CUDA driver library loads.
func DriverPresent() bool {
	h, err := purego.Dlopen("libcuda.so.1", purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return false
	}
	purego.Dlclose(h)
	return true
}

// Emits are ptx, llvm (the NVPTX LLVM IR), cuda (the CUDA model file
// that tessera run and bench load, Artifact.Save; chosen by -o X.cuda)
// and obj: an x86-64 object with the C entry points <prefix>_main and
// <prefix>_main_device and a header beside it (cobject.go; link with
// -lcuda).
func (t *Target) Emits() []string { return []string{"ptx", "llvm", "cuda", "obj"} }

// TextEmits are ptx and llvm.
func (t *Target) TextEmits() []string { return []string{"ptx", "llvm"} }

// Tolerance is 1e-3 (contraction into fma, as on the CPU).
func (t *Target) Tolerance() float64 { return 1e-3 }

// Artifact is a compiled CUDA module: the kernels' NVPTX module, the host
// functions that launch them (tensor IR) and the runtime's plan of every
// exported function.
type Artifact struct {
	Device *llvm.DeviceResult
	Host   []*tir.PrimFunc
	Prefix string
	MCPU   string
	Plans  map[string]*targets.HostPlan
	// Signature lists the entries tessera run and bench can call.
	Signature rt.Signature
	kernels   *tir.Module
}

// Emit writes ptx or llvm to path, or returns it when path is ""; cuda
// (the model file) and obj (the C-ABI object and its header) need a path.
// Errors: another kind, the toolchain's.
func (a *Artifact) Emit(kind, path string) ([]byte, error) {
	var text []byte
	switch kind {
	case "ptx":
		ptx, err := a.Device.PTX()
		if err != nil {
			return nil, err
		}
		text = ptx
	case "llvm":
		text = []byte(a.Device.LLVM())
	case "cuda", "obj":
		if path == "" {
			return nil, fmt.Errorf("--emit %s needs -o FILE", kind)
		}
		if kind == "obj" {
			return nil, a.writeObject(path)
		}
		return nil, a.Save(path)
	default:
		return nil, fmt.Errorf("the cuda target cannot emit %q (it emits ptx, llvm, cuda and obj)", kind)
	}
	if path == "" {
		return text, nil
	}
	return nil, os.WriteFile(path, text, 0o644)
}

// launches are the kernels' launch configurations, by name.
func (a *Artifact) launches() map[string]launch {
	out := map[string]launch{}
	for _, k := range a.Device.Kernels {
		out[k.Name] = launch{Grid: k.Grid, Block: k.Block, SharedBytes: k.SharedBytes}
	}
	return out
}

// Save writes what Target.Load opens, a CUDA model file: the signature
// (runtime.WriteSignedFile's header), then the PTX, each kernel's launch
// configuration and tensor IR, and the plans (gob).
func (a *Artifact) Save(path string) error {
	ptx, err := a.Device.PTX()
	if err != nil {
		return err
	}
	s := saved{MCPU: a.MCPU, PTX: ptx, Kernels: a.launches(), Plans: a.Plans,
		KernelTIR: tir.Print(a.kernels)}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&s); err != nil {
		return err
	}
	return rt.WriteSignedFile(path, a.Signature, buf.Bytes())
}
