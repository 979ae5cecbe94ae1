package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/pipeline"
	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/targets"
	"github.com/tessera-ml/tessera/tensorir"
)

// abiPrefix is the C symbol prefix of the compiled entry point.
const abiPrefix = "bench"

// Kernel is a workload compiled by Tessera and loaded into this process.
type Kernel struct {
	W       Workload
	Compile time.Duration // graph text → shared object
	lib     targets.Module
	entry   targets.Entry
	ins     []*rt.Tensor
	outs    []*rt.Tensor
	data    [][]float32 // the inputs, as Go slices (for the reference)
	dir     string
}

// CompileTessera compiles w's graph text through the pipeline of `tessera
// run` (pipeline.Table for the cpu target: graph passes and fusion,
// lowering to tensor IR, elementwise inlining, the default CPU schedule
// rules, LLVM code generation), writes a shared object into a fresh
// temporary directory and loads its @main.
//
// With tuningDB, kernels with a record for this host (the cpu target with
// the thread count of TESSERA_NUM_THREADS) use their best schedule.
func CompileTessera(w Workload, tuningDB string) (*Kernel, error) {
	start := time.Now()
	src := w.GraphText()
	file := fmt.Sprintf("%s.mlir", w.Name)
	m, err := graphir.Parse(file, []byte(src))
	if err != nil {
		return nil, err
	}
	if err := graphir.Verify(m); err != nil {
		return nil, err
	}
	target, err := targets.New("cpu", targets.Options{})
	if err != nil {
		return nil, err
	}
	ir, err := pipeline.Compile(m, pipeline.Config{Target: target, TuningDB: tuningDB, Prefix: abiPrefix}, pipeline.NewRunner(), pipeline.Artifact)
	if err != nil {
		return nil, err
	}
	entry := ir.TIR.Func("main")
	k := &Kernel{W: w}
	if k.dir, err = os.MkdirTemp("", "tessera-bench-"); err != nil {
		return nil, err
	}
	so := filepath.Join(k.dir, "kernel.so")
	if err := ir.Artifact.Save(so); err != nil {
		k.Close()
		return nil, err
	}
	var inSpecs, outSpecs []rt.TensorSpec
	for _, p := range entry.Params {
		if p.Buffer == nil {
			k.Close()
			return nil, fmt.Errorf("%s: entry parameter %%%s is a scalar", w.Name, p.Name())
		}
		shape, ok := p.Buffer.ConstShape()
		if !ok {
			k.Close()
			return nil, fmt.Errorf("%s: entry parameter %%%s has a symbolic shape", w.Name, p.Name())
		}
		spec := rt.TensorSpec{Name: p.Name(), DType: rt.Float32, Shape: shape}
		if p.Role == tensorir.RoleIn {
			inSpecs = append(inSpecs, spec)
		} else {
			outSpecs = append(outSpecs, spec)
		}
	}
	if len(inSpecs) != 2 || len(outSpecs) != 1 {
		k.Close()
		return nil, fmt.Errorf("%s: @main has %d inputs and %d outputs, want 2 and 1", w.Name, len(inSpecs), len(outSpecs))
	}
	if k.lib, err = target.Load(so); err != nil {
		k.Close()
		return nil, err
	}
	if k.entry, err = k.lib.Entry(rt.EntrySymbol(abiPrefix, entry.Name), inSpecs, outSpecs); err != nil {
		k.Close()
		return nil, err
	}
	// Inputs live in the runtime's aligned tensors; data views them.
	rnd := w.RandomInputs()
	for i, s := range inSpecs {
		t, err := rt.NewTensor(rt.Float32, s.Shape)
		if err != nil {
			k.Close()
			return nil, err
		}
		v, _ := t.Float32s()
		copy(v, rnd[i])
		k.ins = append(k.ins, t)
		k.data = append(k.data, v)
	}
	out, err := rt.NewTensor(rt.Float32, outSpecs[0].Shape)
	if err != nil {
		k.Close()
		return nil, err
	}
	k.outs = []*rt.Tensor{out}
	k.Compile = time.Since(start)
	return k, nil
}

// Check runs the kernel once and compares its output with the naive
// reference (Workload.Check); it returns the relative error.
func (k *Kernel) Check() (float64, error) {
	if err := k.entry.Call(k.ins, k.outs); err != nil {
		return 0, err
	}
	got, err := k.outs[0].Float32s()
	if err != nil {
		return 0, err
	}
	return k.W.Check(k.data, got)
}

// Bench times the kernel with the target entry's BenchEach: warmup untimed calls,
// then at least repeats timed calls lasting at least minTime in all.
func (k *Kernel) Bench(warmup, repeats int, minTime time.Duration) (rt.Timings, error) {
	return k.entry.BenchEach(k.ins, k.outs, warmup, repeats, minTime, nil)
}

// Close unloads the library and removes its directory.
func (k *Kernel) Close() {
	if k.lib != nil {
		k.lib.Close()
		k.lib = nil
	}
	if k.dir != "" {
		os.RemoveAll(k.dir)
		k.dir = ""
	}
}
