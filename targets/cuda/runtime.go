package cuda

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/targets"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// The CUDA runtime runs a saved artifact: it loads the PTX, gives every
// buffer of an entry's plan device memory (constants uploaded once, when
// the entry is made), and per call copies the inputs to the device,
// launches the kernels in the plan's order on the default stream and
// copies the outputs back. The driver is an interface: the CUDA driver
// API through purego (driver.go), or in tests the tensor IR interpreter,
// which checks everything but the driver binding without a GPU.

// saved is what Artifact.Save writes (gob).
type saved struct {
	MCPU    string
	PTX     []byte
	Kernels map[string]launch
	// KernelTIR is the printed tensor IR of the kernels, which an
	// interpreting driver runs.
	KernelTIR string
	Plans     map[string]*targets.HostPlan
}

// launch is a kernel's launch configuration.
type launch struct {
	Grid, Block [3]int64
	SharedBytes int64
}

// driver is the part of the CUDA driver API the runtime uses. Device
// pointers are uint64 (CUdeviceptr); module and function handles are
// opaque.
type driver interface {
	// LoadModule loads a PTX module (cuModuleLoadDataEx); the error
	// carries the JIT log.
	LoadModule(ptx []byte) (uintptr, error)
	// Function is a kernel of a loaded module (cuModuleGetFunction).
	Function(module uintptr, name string) (uintptr, error)
	Alloc(bytes int64) (uint64, error)
	Free(p uint64) error
	CopyHtoD(dst uint64, src []byte) error
	CopyDtoH(dst []byte, src uint64) error
	// Launch launches fn on the default stream with the device pointers
	// args as its parameters (cuLaunchKernel).
	Launch(fn uintptr, l launch, args []uint64) error
	// Elapsed runs work between two events on the default stream and
	// returns the seconds between them (cuEventElapsedTime).
	Elapsed(work func() error) (float64, error)
	Close() error
}

// module is a loaded CUDA artifact.
type module struct {
	s   *saved
	d   driver
	mod uintptr
	fns map[string]uintptr
}

// loadWith opens the artifact at path with driver d.
func loadWith(path string, d driver) (targets.Module, error) {
	_, data, err := rt.ReadSignedFile(path)
	if err != nil {
		return nil, fmt.Errorf("cuda: %s: %v", path, err)
	}
	s, err := decodeSaved(path, data)
	if err != nil {
		return nil, err
	}
	mod, err := d.LoadModule(s.PTX)
	if err != nil {
		return nil, fmt.Errorf("cuda: loading the PTX: %v", err)
	}
	m := &module{s: s, d: d, mod: mod, fns: map[string]uintptr{}}
	for name := range s.Kernels {
		fn, err := d.Function(mod, name)
		if err != nil {
			return nil, fmt.Errorf("cuda: kernel %s: %v", name, err)
		}
		m.fns[name] = fn
	}
	return m, nil
}

// decodeSaved decodes a saved artifact read from path.
func decodeSaved(path string, data []byte) (*saved, error) {
	var s saved
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&s); err != nil {
		return nil, fmt.Errorf("cuda: %s is not a CUDA artifact: %v", path, err)
	}
	return &s, nil
}

// Close releases the driver (and with it the module and device memory).
func (m *module) Close() error { return m.d.Close() }

// Entry returns exported function symbol as a callable entry; its
// constants are uploaded now.
func (m *module) Entry(symbol string, inputs, outputs []rt.TensorSpec) (targets.Entry, error) {
	plan := m.s.Plans[symbol]
	if plan == nil {
		return nil, fmt.Errorf("cuda: no entry point %s (the artifact has %s)", symbol, strings.Join(slices.Sorted(maps.Keys(m.s.Plans)), ", "))
	}
	for _, c := range plan.Calls {
		if _, ok := m.fns[c.Kernel]; !ok {
			return nil, fmt.Errorf("cuda: the plan of %s calls @%s, which the module does not hold", symbol, c.Kernel)
		}
	}
	e := &entry{m: m, plan: plan, ptrs: make([]uint64, len(plan.Bufs))}
	for i, b := range plan.Bufs {
		n, err := bufBytes(b)
		if err != nil {
			return nil, err
		}
		if e.ptrs[i], err = m.d.Alloc(max(n, 1)); err != nil {
			return nil, fmt.Errorf("cuda: allocating %%%s (%d bytes): %v", b.Name, n, err)
		}
		if b.Const != nil {
			if err := m.d.CopyHtoD(e.ptrs[i], b.Const); err != nil {
				return nil, fmt.Errorf("cuda: uploading constant %%%s: %v", b.Name, err)
			}
		}
	}
	return e, nil
}

// bufBytes is the size of a plan buffer in bytes.
func bufBytes(b targets.PlanBuf) (int64, error) {
	dt, err := rt.ParseDType(b.DType)
	if err != nil {
		return 0, fmt.Errorf("cuda: buffer %%%s: %v", b.Name, err)
	}
	n := int64(dt.Size())
	for _, d := range b.Shape {
		n *= d
	}
	return n, nil
}

// entry runs a plan on the device.
type entry struct {
	m    *module
	plan *targets.HostPlan
	ptrs []uint64 // device memory of every plan buffer
}

// Call copies the inputs in, runs the kernels and copies the outputs out.
func (e *entry) Call(inputs, outputs []*rt.Tensor) error {
	all, err := e.bind(inputs, outputs)
	if err != nil {
		return err
	}
	if err := e.upload(all); err != nil {
		return err
	}
	if err := e.launchAll(); err != nil {
		return err
	}
	return e.download(all)
}

// BenchEach times the kernel launches of the plan with CUDA events
// (inputs resident on the device, copies untimed), after warmup untimed
// runs; before runs ahead of each, outside the timed interval. The
// outputs hold the last run's results.
func (e *entry) BenchEach(inputs, outputs []*rt.Tensor, warmup, minRepeats int, minTime time.Duration, before func()) (rt.Timings, error) {
	all, err := e.bind(inputs, outputs)
	if err != nil {
		return rt.Timings{}, err
	}
	if err := e.upload(all); err != nil {
		return rt.Timings{}, err
	}
	for range warmup {
		if before != nil {
			before()
		}
		if err := e.launchAll(); err != nil {
			return rt.Timings{}, err
		}
	}
	var secs []float64
	var total float64
	for len(secs) == 0 || len(secs) < minRepeats || total < minTime.Seconds() {
		if before != nil {
			before()
		}
		s, err := e.m.d.Elapsed(e.launchAll)
		if err != nil {
			return rt.Timings{}, err
		}
		secs = append(secs, s)
		total += s
	}
	return rt.Timings{Seconds: secs, Median: rt.Median(secs)}, e.download(all)
}

// KernelTimes times each kernel launch of the plan with CUDA events
// (inputs resident on the device): one untimed run, then repeats runs,
// returning each call's median in plan order (targets.KernelTimer).
func (e *entry) KernelTimes(inputs, outputs []*rt.Tensor, repeats int) ([]targets.KernelTime, error) {
	all, err := e.warm(inputs, outputs)
	if err != nil {
		return nil, err
	}
	secs := make([][]float64, len(e.plan.Calls))
	for range max(repeats, 1) {
		for i := range e.plan.Calls {
			s, err := e.m.d.Elapsed(func() error { return e.launch(i) })
			if err != nil {
				return nil, err
			}
			secs[i] = append(secs[i], s)
		}
	}
	out := make([]targets.KernelTime, len(secs))
	for i, c := range e.plan.Calls {
		out[i] = targets.KernelTime{Kernel: c.Kernel, Seconds: rt.Median(secs[i])}
	}
	return out, e.download(all)
}

// warm binds and uploads the tensors and makes one untimed run, for the
// per-launch timings (KernelTimes, Profile); it returns the bound tensors.
func (e *entry) warm(inputs, outputs []*rt.Tensor) ([]*rt.Tensor, error) {
	all, err := e.bind(inputs, outputs)
	if err != nil {
		return nil, err
	}
	if err := e.upload(all); err != nil {
		return nil, err
	}
	return all, e.launchAll()
}

// bind checks this call's tensors against the entry's parameters (inputs
// then outputs, the parameters' order) and returns them in that order.
func (e *entry) bind(inputs, outputs []*rt.Tensor) ([]*rt.Tensor, error) {
	all := append(append([]*rt.Tensor(nil), inputs...), outputs...)
	p := e.plan
	if len(all) != len(p.Params) {
		return nil, fmt.Errorf("cuda: the entry takes %d tensors, got %d", len(p.Params), len(all))
	}
	for i, id := range p.Params {
		t, b := all[i], p.Bufs[id]
		if t.DType().String() != b.DType || !slices.Equal(t.Shape(), b.Shape) {
			return nil, fmt.Errorf("cuda: tensor %s does not match parameter %%%s (%s %v)", t, b.Name, b.DType, b.Shape)
		}
	}
	return all, nil
}

// upload copies the parameters the kernels read (inputs and in-out) to
// the device.
func (e *entry) upload(all []*rt.Tensor) error {
	for i, id := range e.plan.Params {
		if e.plan.Bufs[id].Role == tir.RoleOut {
			continue
		}
		if err := e.m.d.CopyHtoD(e.ptrs[id], all[i].Bytes()); err != nil {
			return fmt.Errorf("cuda: copying %%%s to the device: %v", e.plan.Bufs[id].Name, err)
		}
	}
	return nil
}

// download copies the written parameters (outputs and in-out) back.
func (e *entry) download(all []*rt.Tensor) error {
	for i, id := range e.plan.Params {
		if e.plan.Bufs[id].Role == tir.RoleIn {
			continue
		}
		if err := e.m.d.CopyDtoH(all[i].Bytes(), e.ptrs[id]); err != nil {
			return fmt.Errorf("cuda: copying %%%s from the device: %v", e.plan.Bufs[id].Name, err)
		}
	}
	return nil
}

// launchAll launches the plan's calls in order.
func (e *entry) launchAll() error {
	for i := range e.plan.Calls {
		if err := e.launch(i); err != nil {
			return err
		}
	}
	return nil
}

// launch launches the plan's i-th call.
func (e *entry) launch(i int) error {
	c := e.plan.Calls[i]
	args := make([]uint64, len(c.Args))
	for j, id := range c.Args {
		args[j] = e.ptrs[id]
	}
	if err := e.m.d.Launch(e.m.fns[c.Kernel], e.m.s.Kernels[c.Kernel], args); err != nil {
		return fmt.Errorf("cuda: kernel @%s: %v", c.Kernel, err)
	}
	return nil
}
