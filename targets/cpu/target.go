// Package cpu is the CPU target (--target cpu): x86-64 code through LLVM
// 16 (package targets/llvm) for the processor --mcpu names, scheduled by
// schedule.CPURules at its vector width. It registers itself with the
// targets package.
package cpu

import (
	"fmt"
	goruntime "runtime"
	"strconv"
	"strings"

	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/schedule"
	"github.com/tessera-ml/tessera/targets"
	"github.com/tessera-ml/tessera/targets/llvm"
	tir "github.com/tessera-ml/tessera/tensorir"
)

func init() { targets.Register("cpu", NewTarget) }

// Target is the CPU target instance for a set of options.
type Target struct {
	opts targets.Options
	bits int
}

// NewTarget returns the CPU target for opts: "native" or "" MCPU is this
// machine; Threads ≤ 0 is runtime.NumThreads(). The vector width is the
// processor's (VectorBits).
func NewTarget(opts targets.Options) (targets.Target, error) {
	if opts.MCPU == "native" {
		opts.MCPU = ""
	}
	if opts.Threads <= 0 {
		opts.Threads = rt.NumThreads()
	}
	return &Target{opts: opts, bits: VectorBits(opts.MCPU)}, nil
}

// VectorBits is the SIMD register width in bits of processor mcpu: this
// machine's for "" (llvm.HostVectorBits); 512 for the x86-64-v4 level and
// the AVX-512 processors (skylake-avx512, cascadelake, cooperlake,
// icelake, tigerlake, sapphirerapids, znver4, ...); 256 for x86-64-v3 and
// the AVX2 ones (haswell, broadwell, skylake, znver1 to 3, ...); 128
// otherwise (x86-64's SSE2).
func VectorBits(mcpu string) int {
	switch {
	case mcpu == "":
		return llvm.HostVectorBits()
	case mcpu == "x86-64-v4" || hasPrefix(mcpu, avx512CPUs):
		return 512
	case mcpu == "x86-64-v3" || hasPrefix(mcpu, avx2CPUs):
		return 256
	}
	return 128
}

// Dot8 is the instruction set processor mcpu runs the int8 rule's 8-bit
// dot products with (llvm.Dot8ISA): this machine's best for "" and
// "native" (llvm.HostDot8); by name (LLVM 16's processor definitions)
// AVX-512 VNNI for cascadelake, cooperlake, the icelake, tigerlake and
// rocketlake parts, sapphirerapids, graniterapids and znver4; AVX-512BW's
// emulation for the other AVX-512 processors and x86-64-v4 (which lacks
// VNNI) except Knights Landing and Mill (knl, knm); AVX-VNNI for
// alderlake, raptorlake, meteorlake, sierraforest and grandridge; AVX2's
// emulation for the other AVX2 processors and x86-64-v3; none otherwise.
func Dot8(mcpu string) llvm.Dot8ISA {
	switch {
	case mcpu == "" || mcpu == "native":
		return llvm.HostDot8()
	case hasPrefix(mcpu, vnniCPUs):
		return llvm.Dot8AVX512VNNI
	case mcpu == "x86-64-v4" || hasPrefix(mcpu, avx512CPUs) && !hasPrefix(mcpu, []string{"knl", "knm"}):
		return llvm.Dot8AVX512BW
	case hasPrefix(mcpu, avxVNNICPUs):
		return llvm.Dot8AVXVNNI
	case mcpu == "x86-64-v3" || hasPrefix(mcpu, avx2CPUs) || hasPrefix(mcpu, []string{"knl", "knm"}):
		return llvm.Dot8AVX2
	}
	return llvm.Dot8None
}

// Processor name prefixes by widest vector extension (LLVM 16's names).
var (
	avx512CPUs  = []string{"skylake-avx512", "skx", "cascadelake", "cooperlake", "cannonlake", "icelake", "tigerlake", "rocketlake", "sapphirerapids", "graniterapids", "knl", "knm", "znver4"}
	avxVNNICPUs = []string{"alderlake", "raptorlake", "meteorlake", "sierraforest", "grandridge"}
	vnniCPUs    = []string{"cascadelake", "cooperlake", "icelake", "tigerlake", "rocketlake", "sapphirerapids", "graniterapids", "znver4"}
	avx2CPUs    = []string{"haswell", "broadwell", "skylake", "alderlake", "raptorlake", "meteorlake", "znver1", "znver2", "znver3", "core-avx2"}
)

func hasPrefix(s string, ps []string) bool {
	for _, p := range ps {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// Name is "cpu".
func (t *Target) Name() string { return "cpu" }

// SymbolicShapes: the CPU target compiles symbolic dimensions once
// (targets.SymbolicShaper).
func (t *Target) SymbolicShapes() bool { return true }

// Options are the instance's options.
func (t *Target) Options() targets.Options { return t.opts }

// Key is "cpu -mcpu=native -vector-bits=512 -threads=2" (with
// " -min-parallel-work=N" when the option overrides the threshold).
func (t *Target) Key() string {
	mcpu := t.opts.MCPU
	if mcpu == "" {
		mcpu = "native"
	}
	key := fmt.Sprintf("cpu -mcpu=%s -vector-bits=%d -threads=%d", mcpu, t.bits, t.opts.Threads)
	if t.opts.MinParallelWork != nil {
		key += fmt.Sprintf(" -min-parallel-work=%g", *t.opts.MinParallelWork)
	}
	return key
}

// Rules are schedule.CPURules at the processor's vector width and this
// machine's cores, with the parallelism cost rule's threshold
// (MinParallelWork).
func (t *Target) Rules() schedule.Rules {
	return schedule.CPURules{VectorBits: t.bits, Cores: goruntime.NumCPU(), MaxLanes: llvm.MaxVectorLanes, CanVectorize: llvm.CheckVectorizable,
		MinParallelWork: t.minParallelWork(), Int8Dot: Dot8(t.opts.MCPU) != llvm.Dot8None}
}

// minParallelWork is the cost rule's threshold: the option's, else
// MinParallelWork.
func (t *Target) minParallelWork() float64 {
	if t.opts.MinParallelWork != nil {
		return *t.opts.MinParallelWork
	}
	return MinParallelWork
}

// MinParallelWork is the work (tensorir.EstimateWork, scalar operations)
// below which a kernel runs serially: a parallel region pays when the
// kernel's serial time T exceeds about twice the region's cost C (two
// threads: T/2 + C < T). Measured on this project's 2-core machine with
// `tessera bench --profile` on LeNet-5 at batch 1, at --threads 1 and 2,
// before this rule existed (every kernel parallel): the smallest kernels
// take 13 µs more at 2 threads (C ≈ 13 µs, the region's fork, wake-up
// and join), so T must exceed ≈ 26 µs; small kernels ran at 4 to 530
// work units per µs serially (memory-bound ones slowest), and the
// threshold takes ≈ 26 µs at 150 units per µs. Kernels within a factor
// of 4 of it are the tuner's choice (the sampled rules draw serial or
// parallel).
const MinParallelWork = 4e6

// StepOptions makes conv-layout leave NCHW the convolutions with fewer
// output channels than one vector has f32 lanes (conv-layout{min-channels}:
// their rows vectorize along the image width instead).
func (t *Target) StepOptions(name string) map[string]string {
	if name == "conv-layout" {
		return map[string]string{"min-channels": strconv.Itoa(t.bits / 32)}
	}
	return nil
}

// PostSchedule is pad-in-place (a padded tensor's producer writes into
// the padded buffer: tensorir/pad_in_place.go), then
// compact-buffer-allocation: each cache moves to where it
// is used and shrinks to the tile used there, so a cache tile under a
// parallel loop is a per-thread stack array instead of one full-size heap
// buffer.
func (t *Target) PostSchedule() []string {
	return []string{tir.PadInPlacePassName, "compact-buffer-allocation"}
}

// Codegen is llvm.Compile with the instance's processor and contraction;
// the module carries its signature (runtime.Signature: the target, its
// options and the entry points' tensors) as the exported data symbol
// <prefix>_tessera_signature in section runtime.SignatureSection, so a
// shared object written from it runs with nothing else (tessera run
// MODEL.so). Errors: llvm.Compile's.
func (t *Target) Codegen(m *tir.Module, prefix string) (targets.Artifact, error) {
	res, err := llvm.Compile(m, llvm.Options{MCPU: t.opts.MCPU, Prefix: prefix, StrictFP: t.opts.StrictFP, Profile: t.opts.Profile,
		Dot8: Dot8(t.opts.MCPU)})
	if err != nil {
		return nil, err
	}
	if err := embedProfileSites(res, m, prefix); err != nil {
		return nil, err
	}
	data, err := rt.EncodeSignature(t.signature(res, prefix))
	if err != nil {
		return nil, fmt.Errorf("cpu: signature: %v", err)
	}
	sym := "tessera" + rt.SignatureSymbolSuffix
	if prefix != "" {
		sym = prefix + rt.SignatureSymbolSuffix
	}
	if err := res.EmbedData(sym, rt.SignatureSection, data); err != nil {
		return nil, err
	}
	return res, nil
}

// signature describes res for runtime.ReadSignature. An entry point with a
// scalar or symbolic-shape parameter cannot be called through the runtime
// and is left out.
func (t *Target) signature(res *llvm.Result, prefix string) rt.Signature {
	mcpu := t.opts.MCPU
	if mcpu == "" {
		mcpu = "native"
	}
	sig := rt.Signature{Target: t.Name(), MCPU: mcpu, VectorBits: t.bits, Threads: t.opts.Threads, StrictFP: t.opts.StrictFP, Prefix: prefix}
	for _, e := range res.Entries {
		if es, ok := targets.EntrySignatureOf(e.Func, e.Symbol); ok {
			sig.Entries = append(sig.Entries, es)
		}
	}
	return sig
}

// Load opens a shared object written by Artifact.Save. Its entries
// implement targets.Profiler when it was compiled with Options.Profile.
func (t *Target) Load(path string) (targets.Module, error) {
	lib, err := rt.Open(path)
	if err != nil {
		return nil, err
	}
	probes, err := openProbes(lib, path)
	if err != nil {
		lib.Close()
		return nil, err
	}
	return library{lib, probes}, nil
}

// library adapts runtime.Library to targets.Module.
type library struct {
	*rt.Library
	probes *probes // nil: not instrumented
}

func (l library) Entry(symbol string, inputs, outputs []rt.TensorSpec) (targets.Entry, error) {
	e, err := l.Func(symbol, inputs, outputs)
	switch {
	case err != nil:
		return nil, err
	case l.probes == nil:
		return e, nil
	}
	return &profiledEntry{Entry: e, probes: l.probes}, nil
}

// Emits are the kinds llvm.Result.Emit writes: an ELF object and a shared
// object (each with a C header), LLVM IR and assembly text.
func (t *Target) Emits() []string { return []string{"obj", "so", "llvm", "asm"} }

// Tolerance is 1e-3: FMA contraction and vectorized reductions round
// differently from the interpreter.
func (t *Target) Tolerance() float64 { return 1e-3 }

// TextEmits are LLVM IR and assembly.
func (t *Target) TextEmits() []string { return []string{"llvm", "asm"} }
