package npu

import (
	"archive/tar"
	"bytes"
	"encoding/gob"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/tessera-ml/tessera/targets"
	"github.com/tessera-ml/tessera/targets/npu/isa"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// Artifact is a model compiled for the NPU: the plan of the host function,
// the NPU kernels' programs and the host kernels' compiled code.
type Artifact struct {
	cfg     isa.Config
	host    targets.Target
	prefix  string
	plans   map[string]*Plan // by exported symbol
	npu     map[string]*gemmProgram
	funcs   map[string]*tir.PrimFunc // the NPU kernels' tensor IR
	kernels map[string]kernelInfo
	hostArt targets.Artifact // nil when every kernel runs on the NPU
}

// Emit writes kind (Target.Emits) to path; text kinds are returned when
// path is "". Errors: an unknown kind, "so" without host kernels.
func (a *Artifact) Emit(kind, path string) ([]byte, error) {
	var data []byte
	switch kind {
	case "npu-asm":
		data = []byte(a.asm())
	case "partition":
		data = []byte(a.Partition())
	case "npu-tir":
		data = []byte(a.tensorIR())
	case "npu-bin":
		var err error
		if data, err = a.binaries(); err != nil {
			return nil, err
		}
	case "so":
		if a.hostArt == nil {
			return nil, fmt.Errorf("npu: every kernel runs on the NPU; there is no host code")
		}
		return a.hostArt.Emit("so", path)
	default:
		return nil, fmt.Errorf("npu: unknown --emit kind %q (known: %s)", kind, strings.Join((&Target{}).Emits(), ", "))
	}
	if path == "" && kind != "npu-bin" {
		return data, nil
	}
	return nil, os.WriteFile(path, data, 0o644)
}

// npuNames are the NPU kernels, sorted.
func (a *Artifact) npuNames() []string {
	var names []string
	for n := range a.npu {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (a *Artifact) asm() string {
	var b strings.Builder
	for _, n := range a.npuNames() {
		gp := a.npu[n]
		fmt.Fprintf(&b, "; kernel @%s: %d×%d×%d (M×N×K), tiling %v entries\n", n, gp.g.M, gp.g.N, gp.g.K, gp.t)
		b.WriteString(gp.prog.String())
		b.WriteString("\n")
	}
	return b.String()
}

// tensorIR is every NPU kernel scheduled in tensor IR for its tiling
// (scheduleTIR), followed by the schedule's trace as comments, or why
// tensor IR does not express it yet.
func (a *Artifact) tensorIR() string {
	var b strings.Builder
	for _, n := range a.npuNames() {
		gp := a.npu[n]
		fmt.Fprintf(&b, "// kernel @%s: %d×%d×%d (M×N×K), tiling %v\n", n, gp.g.M, gp.g.N, gp.g.K, gp.t)
		s, err := scheduleTIR(a.cfg, a.funcs[n], gp.g, gp.t)
		if err != nil {
			fmt.Fprintf(&b, "// not expressed in tensor IR yet: %v\n\n", err)
			continue
		}
		b.WriteString(tir.PrintFunc(s.Func(), tir.PrintOptions{}))
		b.WriteString("\n// trace:\n")
		for _, line := range strings.Split(strings.TrimRight(s.Trace().String(), "\n"), "\n") {
			b.WriteString("//   " + line + "\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (a *Artifact) binaries() ([]byte, error) {
	var buf bytes.Buffer
	w := tar.NewWriter(&buf)
	for _, n := range a.npuNames() {
		bin, err := a.npu[n].prog.MarshalBinary()
		if err != nil {
			return nil, err
		}
		if err := w.WriteHeader(&tar.Header{Name: n + ".bin", Mode: 0o644, Size: int64(len(bin))}); err != nil {
			return nil, err
		}
		if _, err := w.Write(bin); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), w.Close()
}

// Partition says, per kernel in call order (of each exported function),
// where it runs: on the NPU with its shape and tiling, or on the host
// with the reason; then the share of the model's MACs on the NPU.
func (a *Artifact) Partition() string {
	var b strings.Builder
	var npuMACs, all int64
	seen := map[string]bool{}
	var calls []PlanCall
	for _, sym := range slices.Sorted(maps.Keys(a.plans)) {
		calls = append(calls, a.plans[sym].Calls...)
	}
	for _, c := range calls {
		info := a.kernels[c.Kernel]
		if seen[c.Kernel] {
			continue
		}
		seen[c.Kernel] = true
		all += info.MACs
		if info.NPU {
			gp := a.npu[c.Kernel]
			npuMACs += info.MACs
			fmt.Fprintf(&b, "@%s: npu (%d×%d×%d, tiling %v%s)\n", c.Kernel, gp.g.M, gp.g.N, gp.g.K, gp.t, gp.g.storeNote())
		} else {
			fmt.Fprintf(&b, "@%s: host (%s)\n", c.Kernel, info.Reason)
		}
	}
	frac := 1.0
	if all > 0 {
		frac = float64(npuMACs) / float64(all)
	}
	fmt.Fprintf(&b, "npu MAC fraction: %.4f (%d of %d MACs)\n", frac, npuMACs, all)
	return b.String()
}

// saved is the artifact file's content (gob): the configuration, the
// plan, the kernels (the NPU ones with their analysis and tiling; the
// programs are regenerated at load, deterministically) and the host's
// shared object.
type saved struct {
	Config  isa.Config
	Prefix  string
	Plans   map[string]*Plan
	Kernels map[string]kernelInfo
	GEMMs   map[string]*gemmKernel
	HostSO  []byte
}

// Save writes the artifact to path (Target.Load opens it).
func (a *Artifact) Save(path string) error {
	s := saved{Config: a.cfg, Prefix: a.prefix, Plans: a.plans, Kernels: a.kernels, GEMMs: map[string]*gemmKernel{}}
	for n, gp := range a.npu {
		s.GEMMs[n] = gp.g
	}
	if a.hostArt != nil {
		so := path + ".host.so"
		if err := a.hostArt.Save(so); err != nil {
			return err
		}
		data, err := os.ReadFile(so)
		os.Remove(so)
		if err != nil {
			return err
		}
		s.HostSO = data
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(&s); err != nil {
		return fmt.Errorf("npu: save %s: %v", path, err)
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
