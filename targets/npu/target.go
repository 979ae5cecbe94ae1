// Package npu is the Tessera NPU target (--target npu): kernels the
// matrix unit can run (contractions with an elementwise epilogue) become
// NPU programs (isa) run on the simulator (sim) in the bf16 datapath (f32
// kernels) or the int8 one (8-bit operands, i32 accumulation, integer
// requantization);
// every other kernel runs on the host, compiled by the CPU target. The
// host function runs in the NPU runtime (Plan), which moves tensors
// between the host and the NPU's DRAM in the NPU's blocked layouts.
// ISA.md is the architecture reference.
package npu

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"

	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/schedule"
	"github.com/tessera-ml/tessera/targets"
	"github.com/tessera-ml/tessera/targets/npu/isa"
	tir "github.com/tessera-ml/tessera/tensorir"

	_ "github.com/tessera-ml/tessera/targets/cpu" // the host
)

func init() { targets.Register("npu", NewTarget) }

// Target is the NPU target for one configuration, with a CPU host.
type Target struct {
	opts targets.Options
	cfg  isa.Config
	host targets.Target
}

// NewTarget returns the NPU target: opts.Config names the NPU
// configuration JSON ("": DefaultConfig); MCPU, Threads and StrictFP
// configure the host CPU target; the configuration's GEMM tensor
// intrinsics are registered (RegisterGEMMIntrins). Errors: the
// configuration's.
func NewTarget(opts targets.Options) (targets.Target, error) {
	cfg := isa.DefaultConfig()
	if opts.Config != "" {
		var err error
		if cfg, err = isa.LoadConfig(opts.Config); err != nil {
			return nil, err
		}
		if err := RegisterGEMMIntrins(cfg); err != nil { // schedules of this configuration tensorize onto its matrix unit
			return nil, err
		}
	}
	host, err := targets.New("cpu", targets.Options{MCPU: opts.MCPU, Threads: opts.Threads, StrictFP: opts.StrictFP})
	if err != nil {
		return nil, err
	}
	opts.Threads = host.Options().Threads
	return &Target{opts: opts, cfg: cfg, host: host}, nil
}

// Config is the NPU configuration.
func (t *Target) Config() isa.Config { return t.cfg }

// Name is "npu".
func (t *Target) Name() string { return "npu" }

// Options are the instance's options.
func (t *Target) Options() targets.Options { return t.opts }

// Key is "npu -config=<name> -hash=<first 8 hex digits of the
// configuration's SHA-256> -datapath=int8,bf16 -host=<the CPU key>".
func (t *Target) Key() string {
	data, _ := json.Marshal(t.cfg)
	sum := sha256.Sum256(data)
	return fmt.Sprintf("npu -config=%s -hash=%x -datapath=int8,bf16 -host=(%s)", t.cfg.Name, sum[:4], t.host.Key())
}

// Rules are the NPU rules (Rules) with the host's for host kernels.
func (t *Target) Rules() schedule.Rules { return NewRules(t.cfg, t.host.Rules()) }

// StepOptions fuses an integer contraction with integer ops only
// (fuse{integer-epilogues=true}): the int8 datapath has no float ALU, so
// a dequantizing epilogue in the contraction's kernel would keep the
// whole kernel on the host; apart, the contraction (with its
// requantization and any integer residual add) runs on the NPU and the
// float ops on the host. It legalizes
// graph.requantize with its terms derived from one multiplier and shift
// (legalize-to-hlo{requantize-terms=derived}), the form the ALU's mulq
// and shr take (requant.go).
func (t *Target) StepOptions(name string) map[string]string {
	switch name {
	case "fuse":
		return map[string]string{"integer-epilogues": "true"}
	case "legalize-to-hlo":
		return map[string]string{"requantize-terms": "derived"}
	}
	return nil
}

// SkipsStep leaves out explicit-conv-padding (the name is
// hlo.ExplicitConvPaddingPassName): the NPU's LOADs pad on the fly
// (ISA.md), while a padded copy of a convolution's input would be a host
// kernel and more DRAM traffic. It also leaves out conv-layout
// (hlo.ConvLayoutPassName): the NPU's convolution tensorization reads
// NCHW activations.
func (t *Target) SkipsStep(name string) bool {
	return name == "explicit-conv-padding" || name == "conv-layout"
}

// PostSchedule is empty: Codegen runs the host's post-schedule passes on
// the host kernels only.
func (t *Target) PostSchedule() []string { return nil }

// Emits are "npu-asm" (every NPU program's text, each headed by its
// kernel), "npu-bin" (a tar archive of <kernel>.bin program files),
// "partition" (which kernel runs where, and why), "npu-tir" (every NPU
// kernel scheduled in tensor IR for its tiling, with the trace, or why
// tensor IR does not express it yet) and "so" (the host kernels' shared
// object).
func (t *Target) Emits() []string {
	return []string{"npu-asm", "npu-bin", "partition", "npu-tir", "so"}
}

// Tolerance is 2e-2: the NPU multiplies bf16-rounded inputs (8-bit
// significands) and accumulates in f32.
func (t *Target) Tolerance() float64 { return 2e-2 }

// TextEmits are npu-asm, partition and npu-tir.
func (t *Target) TextEmits() []string { return []string{"npu-asm", "partition", "npu-tir"} }

// Codegen partitions m's kernels between the NPU and the host, generates
// the NPU programs, compiles the host kernels with the CPU target and
// makes a Plan for every exported function (global_symbol): a host
// function's calls, or one call of an exported kernel (what the tuner
// builds). Errors: nothing exported, a host function the runtime cannot
// run, the host compilation's.
func (t *Target) Codegen(m *tir.Module, prefix string) (targets.Artifact, error) {
	a := &Artifact{cfg: t.cfg, host: t.host, prefix: prefix, plans: map[string]*Plan{}, npu: map[string]*gemmProgram{}, kernels: map[string]kernelInfo{},
		funcs: map[string]*tir.PrimFunc{}}
	hostMod := &tir.Module{}
	for _, f := range m.Funcs {
		if _, isKernel := f.Attrs[tir.AttrKernel]; isKernel {
			if err := a.compileKernel(f, hostMod); err != nil {
				return nil, err
			}
		}
	}
	for _, f := range m.Funcs {
		sym, ok := f.Attrs[tir.AttrGlobalSymbol].(tir.StringAttr)
		if !ok {
			continue
		}
		name := string(sym)
		if prefix != "" {
			name = rt.EntrySymbol(prefix, f.Name)
		}
		var p *Plan
		var err error
		if _, isHost := f.Attrs[tir.AttrHost]; isHost {
			p, err = planOf(f)
		} else {
			p, err = kernelPlan(f)
		}
		if err != nil {
			return nil, err
		}
		a.plans[name] = p
	}
	if len(a.plans) == 0 {
		return nil, fmt.Errorf("npu: the module exports no function (global_symbol) to run")
	}
	if err := a.narrowOutputs(); err != nil {
		return nil, err
	}
	if len(hostMod.Funcs) > 0 {
		art, err := targets.Build(t.host, hostMod, hostPrefix(prefix))
		if err != nil {
			return nil, err
		}
		a.hostArt = art
	}
	return a, nil
}

// kernelPlan is targets.KernelPlan with the NPU's error prefix.
func kernelPlan(f *tir.PrimFunc) (*Plan, error) {
	p, err := targets.KernelPlan(f)
	if err != nil {
		return nil, fmt.Errorf("npu: %v", err)
	}
	return p, nil
}

// hostPrefix is the prefix of the host kernels' symbols.
func hostPrefix(prefix string) string { return prefix + "_host" }

// kernelInfo is a kernel's partition: on the NPU (with its shape and
// tiling) or on the host (with the reason), and its MACs. Schedule is
// the kernel's tensorir.AttrSchedule ("default", "tuned", ...; "" when
// it has none).
type kernelInfo struct {
	NPU      bool
	Reason   string
	Tiling   Tiling
	MACs     int64
	Params   []tir.Role
	Specs    []rt.TensorSpec
	Schedule string
	// FLOPs are the kernel's floating-point operations per call
	// (tensorir.EstimateFLOPs), for the profile's GFLOP/s.
	FLOPs float64
}

// compileKernel compiles f for the NPU, or adds it to the host module.
func (a *Artifact) compileKernel(f *tir.PrimFunc, hostMod *tir.Module) error {
	info := kernelInfo{MACs: kernelMACs(f), FLOPs: tir.EstimateFLOPs(f)}
	if s, ok := f.Attrs[tir.AttrSchedule].(tir.StringAttr); ok {
		info.Schedule = string(s)
	}
	for _, p := range f.Params {
		info.Params = append(info.Params, p.Role)
		spec, err := targets.SpecOf(p)
		if err != nil {
			return fmt.Errorf("npu: kernel @%s: %v", f.Name, err)
		}
		info.Specs = append(info.Specs, spec)
	}
	g, err := analyzeGEMM(a.cfg, f)
	if err == nil {
		var tl Tiling
		var ok bool
		if tl, ok, err = tilingOf(f, g); err == nil && !ok {
			tl, err = defaultTiling(a.cfg, g)
		}
		if err == nil {
			var gp *gemmProgram
			if gp, err = compileGEMM(a.cfg, g, tl); err == nil {
				a.npu[f.Name], a.funcs[f.Name] = gp, f
				info.NPU, info.Tiling = true, tl
				a.kernels[f.Name] = info
				return nil
			}
		}
	}
	if _, isRefusal := err.(*notMappable); !isRefusal {
		return fmt.Errorf("npu: kernel @%s: %v", f.Name, err)
	}
	info.Reason = err.Error()
	if why := hostReasonOf(f); why != "" {
		info.Reason = why
	}
	a.kernels[f.Name] = info
	k := *f
	k.Attrs = tir.Attrs{}
	for key, v := range f.Attrs {
		k.Attrs[key] = v
	}
	k.Attrs[tir.AttrGlobalSymbol] = tir.StringAttr(f.Name) // exported as hostPrefix_<name>
	return hostMod.Add(&k)
}

// kernelMACs counts a kernel's multiply-accumulates: for every block
// whose body accumulates a product (C = C + a·b, the contractions of
// dense layers and convolutions), the product of its iteration extents.
func kernelMACs(f *tir.PrimFunc) int64 {
	var n int64
	tir.VisitStmt(f.Body, func(s tir.Stmt) bool {
		br, ok := s.(*tir.BlockRealize)
		if !ok {
			return true
		}
		st, ok := br.Block.Body.(*tir.BufferStore)
		if !ok {
			return true
		}
		add, ok := st.Value.(*tir.Binary)
		if !ok || add.Op != tir.OpAdd {
			return true
		}
		mul, ok := add.B.(*tir.Binary)
		if !ok || mul.Op != tir.OpMul || !isLoadOf(add.A, st) {
			return true
		}
		v := int64(1)
		for _, iv := range br.Block.IterVars {
			e, ok := iv.Dom.Extent.(*tir.IntImm)
			if !ok {
				return true
			}
			v *= e.Value
		}
		n += v
		return true
	})
	return n
}

// hostReasonOf is the npu.host annotation the rules left on one of f's
// blocks ("" when none).
func hostReasonOf(f *tir.PrimFunc) string {
	why := ""
	tir.VisitStmt(f.Body, func(st tir.Stmt) bool {
		if br, ok := st.(*tir.BlockRealize); ok {
			if a, ok := br.Block.Annotations[AttrHostReason].(tir.StringAttr); ok {
				why = string(a)
			}
		}
		return why == ""
	})
	return why
}
