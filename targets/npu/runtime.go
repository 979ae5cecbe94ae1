package npu

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/targets"
	"github.com/tessera-ml/tessera/targets/npu/sim"
)

// Load opens an artifact written by Artifact.Save: it regenerates the NPU
// programs and opens the host kernels' shared object. Errors: a file that
// is not an NPU artifact, the host library's.
func (t *Target) Load(path string) (targets.Module, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var s saved
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&s); err != nil {
		return nil, fmt.Errorf("npu: %s is not an NPU artifact: %v", path, err)
	}
	m := &module{s: &s, gemms: map[string]*gemmProgram{}, hostEntries: map[string]*rt.Entry{}}
	for name, g := range s.GEMMs {
		gp, err := compileGEMM(s.Config, g, s.Kernels[name].Tiling)
		if err != nil {
			return nil, fmt.Errorf("npu: kernel @%s: %v", name, err)
		}
		m.gemms[name] = gp
	}
	if s.HostSO != nil {
		f, err := os.CreateTemp("", "tessera-npu-host-*.so")
		if err != nil {
			return nil, err
		}
		defer os.Remove(f.Name())
		if _, err := f.Write(s.HostSO); err != nil {
			f.Close()
			return nil, err
		}
		f.Close()
		if m.lib, err = rt.OpenCopy(f.Name()); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// module is a loaded NPU artifact.
type module struct {
	s           *saved
	gemms       map[string]*gemmProgram
	lib         *rt.Library
	hostEntries map[string]*rt.Entry
}

// Close releases the host kernels' shared object.
func (m *module) Close() error {
	if m.lib == nil {
		return nil
	}
	return m.lib.Close()
}

// Entry returns the host function as a callable entry (symbol must be the
// artifact's entry point) with the given input and output specs.
func (m *module) Entry(symbol string, inputs, outputs []rt.TensorSpec) (targets.Entry, error) {
	plan := m.s.Plans[symbol]
	if plan == nil {
		return nil, fmt.Errorf("npu: no entry point %s (the artifact has %s)", symbol, strings.Join(slices.Sorted(maps.Keys(m.s.Plans)), ", "))
	}
	e := &Entry{m: m, symbol: symbol, plan: plan, inputs: inputs, outputs: outputs}
	for _, c := range plan.Calls {
		info := m.s.Kernels[c.Kernel]
		if info.NPU || m.hostEntries[c.Kernel] != nil {
			continue
		}
		var ins, outs []rt.TensorSpec
		for i, s := range info.Specs {
			if info.Params[i] == 0 {
				ins = append(ins, s)
			} else {
				outs = append(outs, s)
			}
		}
		he, err := m.lib.Func(rt.EntrySymbol(hostPrefix(m.s.Prefix), c.Kernel), ins, outs)
		if err != nil {
			return nil, err
		}
		m.hostEntries[c.Kernel] = he
	}
	return e, nil
}

// Entry runs the plan: NPU kernels on the simulator, host kernels through
// the host's compiled code, intermediates in host memory between them.
type Entry struct {
	m               *module
	symbol          string
	plan            *Plan
	inputs, outputs []rt.TensorSpec
	bufs            []*rt.Tensor
	last            *sim.Report
	// maxEvents bounds Profile's events (0: maxProfileEvents).
	maxEvents int
}

// Call runs the model once on tensors matching the entry's specs; Report
// then describes the run.
func (e *Entry) Call(inputs, outputs []*rt.Tensor) error {
	_, err := e.run(inputs, outputs, nil)
	return err
}

// BenchEach "times" the model: each repeat's time is the simulated time
// of the NPU kernels (cycles at the configured clock; deterministic)
// plus the measured time of the host kernels. Warmup calls and minTime
// are not needed by a simulation and are ignored. A plan without host
// kernels takes the same simulated time on every run (the cycle model
// does not depend on the data, ISA.md): BenchEach then reports one
// repeat, that of the last Call or of one run when nothing has run yet.
// Otherwise at least one call runs.
func (e *Entry) BenchEach(inputs, outputs []*rt.Tensor, warmup, minRepeats int, minTime time.Duration, before func()) (rt.Timings, error) {
	var t rt.Timings
	if !e.hasHost() {
		if e.last == nil {
			if _, err := e.run(inputs, outputs, nil); err != nil {
				return t, err
			}
		}
		t.Seconds = []float64{e.last.Seconds}
		t.Median = e.last.Seconds
		return t, nil
	}
	for i := 0; i < max(minRepeats, 1); i++ {
		if before != nil {
			before()
		}
		s, err := e.run(inputs, outputs, nil)
		if err != nil {
			return t, err
		}
		t.Seconds = append(t.Seconds, s)
	}
	t.Median = rt.Median(t.Seconds)
	return t, nil
}

// hasHost reports whether the plan calls a host kernel (whose time is
// measured, not simulated).
func (e *Entry) hasHost() bool {
	for _, c := range e.plan.Calls {
		if e.m.gemms[c.Kernel] == nil {
			return true
		}
	}
	return false
}

// Report is the last call's figures (nil before the first call).
func (e *Entry) Report() *sim.Report { return e.last }

// run executes the plan and returns the NPU's simulated seconds plus the
// host kernels' measured seconds. A profile (nil: none) records the calls.
func (e *Entry) run(inputs, outputs []*rt.Tensor, prof *profile) (float64, error) {
	p := e.plan
	if err := e.bind(inputs, outputs); err != nil {
		return 0, err
	}
	rep := newRunReport(e.m.s, p)
	var hostSeconds float64
	for _, c := range p.Calls {
		args := make([]*rt.Tensor, len(c.Args))
		for i, id := range c.Args {
			args[i] = e.bufs[id]
		}
		if gp := e.m.gemms[c.Kernel]; gp != nil {
			st, tl, err := gp.run(argsOf(args), prof.wantsTimeline())
			if err != nil {
				return 0, fmt.Errorf("npu: kernel @%s: %v", c.Kernel, err)
			}
			rep.add(c.Kernel, st)
			prof.npuCall(c.Kernel, e.m.s.Kernels[c.Kernel], st, tl)
			continue
		}
		start := time.Now()
		if err := e.callHost(c.Kernel, args); err != nil {
			return 0, err
		}
		s := time.Since(start).Seconds()
		hostSeconds += s
		prof.hostCall(c.Kernel, e.m.s.Kernels[c.Kernel], s)
	}
	e.last = rep.finish(hostSeconds)
	return e.last.Seconds + hostSeconds, nil
}

// bind allocates the constants and intermediates once and points the
// parameters at this call's tensors.
func (e *Entry) bind(inputs, outputs []*rt.Tensor) error {
	p := e.plan
	if e.bufs == nil {
		e.bufs = make([]*rt.Tensor, len(p.Bufs))
		for i, b := range p.Bufs {
			if b.Param {
				continue
			}
			dt, _ := rt.ParseDType(b.DType)
			var err error
			if b.Const != nil {
				e.bufs[i], err = rt.FromBytes(dt, b.Shape, b.Const)
			} else {
				e.bufs[i], err = rt.NewTensor(dt, b.Shape)
			}
			if err != nil {
				return err
			}
		}
	}
	// The ABI's order: one tensor per entry parameter, inputs first, then
	// outputs (the parameters' order); the tuner passes them all as inputs.
	all := append(append([]*rt.Tensor(nil), inputs...), outputs...)
	if len(all) != len(p.Params) {
		return fmt.Errorf("npu: the entry takes %d tensors, got %d", len(p.Params), len(all))
	}
	for i, id := range p.Params {
		t := all[i]
		if t.DType().String() != p.Bufs[id].DType || !slices.Equal(t.Shape(), p.Bufs[id].Shape) {
			return fmt.Errorf("npu: tensor %s does not match parameter %%%s (%s %v)", t, p.Bufs[id].Name, p.Bufs[id].DType, p.Bufs[id].Shape)
		}
		e.bufs[id] = t
	}
	return nil
}

func (e *Entry) callHost(kernel string, args []*rt.Tensor) error {
	info := e.m.s.Kernels[kernel]
	var ins, outs []*rt.Tensor
	for i, a := range args {
		if info.Params[i] == 0 {
			ins = append(ins, a)
		} else {
			outs = append(outs, a)
		}
	}
	return e.m.hostEntries[kernel].Call(ins, outs)
}
