package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tessera-ml/tessera/pipeline"
	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/targets"
	"github.com/tessera-ml/tessera/targets/npu/sim"
	"github.com/tessera-ml/tessera/tensorir"
)

// loaded is a compiled model loaded into this process.
type loaded struct {
	mod     targets.Module
	entry   targets.Entry
	inputs  []rt.TensorSpec
	outputs []rt.TensorSpec
	// dir is loadCompiled's temporary folder ("" for a loaded .so).
	dir string
}

func (l *loaded) Close() {
	if l.mod != nil {
		l.mod.Close()
	}
	if l.dir != "" {
		os.RemoveAll(l.dir)
	}
}

// loadCompiled compiles model for the target and loads it into this
// process: the artifact is saved in a fresh temporary directory (a unique
// path: dlopen caches by path) and opened by the target.
func loadCompiled(model string, o compileOptions, threads int) (*loaded, error) {
	if threads > 0 {
		if err := rt.SetNumThreads(threads); err != nil {
			return nil, err
		}
	}
	o.name = "model"
	o.threads = threads
	o.needSizes = true
	t, err := o.newTarget()
	if err != nil {
		return nil, err
	}
	if err := targets.CheckAvailable(t); err != nil {
		return nil, err
	}
	c, err := compileModel(model, o, t, pipeline.Artifact)
	if err != nil {
		return nil, err
	}
	defer c.release()
	l := &loaded{}
	if l.dir, err = os.MkdirTemp("", "tessera-run-"); err != nil {
		return nil, err
	}
	err = c.runner.Time("save", func() error { return l.open(c, filepath.Join(l.dir, "model"), o.name) })
	o.writeTiming(c.runner)
	if err != nil {
		l.Close()
		return nil, err
	}
	return l, nil
}

// open saves c's artifact at path, loads it and finds its entry point.
func (l *loaded) open(c *compiled, path, prefix string) error {
	if err := c.ir.Artifact.Save(path); err != nil {
		return err
	}
	for _, p := range c.entry.Params {
		spec, err := targets.SpecOf(p)
		if err != nil {
			return fmt.Errorf("entry %v", err)
		}
		if p.Role == tensorir.RoleIn {
			l.inputs = append(l.inputs, spec)
		} else {
			l.outputs = append(l.outputs, spec)
		}
	}
	var err error
	if l.mod, err = c.target.Load(path); err != nil {
		return err
	}
	l.entry, err = l.mod.Entry(rt.EntrySymbol(prefix, c.entry.Name), l.inputs, l.outputs)
	return err
}

// readInputs reads one .npy per entry input and checks it against the spec.
func (l *loaded) readInputs(paths []string) ([]*rt.Tensor, error) {
	if len(paths) != len(l.inputs) {
		return nil, fmt.Errorf("the model takes %d inputs (%s), got %d --input files", len(l.inputs), specList(l.inputs), len(paths))
	}
	ins := make([]*rt.Tensor, len(paths))
	for i, p := range paths {
		if l.inputs[i].DType == rt.BFloat16 {
			return nil, fmt.Errorf("input #%d of the model is %s, which a .npy file cannot hold (NumPy has no bfloat16): give the model an f32 input and graph.cast it to bf16", i, l.inputs[i])
		}
		t, err := rt.ReadNPY(p)
		if err != nil {
			return nil, err
		}
		if !sameSpec(t.Spec(), l.inputs[i]) {
			return nil, fmt.Errorf("%s holds %s, but input #%d of the model is %s", p, t, i, l.inputs[i])
		}
		ins[i] = t
	}
	return ins, nil
}

func (l *loaded) newOutputs() ([]*rt.Tensor, error) {
	outs := make([]*rt.Tensor, len(l.outputs))
	for i, s := range l.outputs {
		t, err := rt.NewTensor(s.DType, s.Shape)
		if err != nil {
			return nil, err
		}
		outs[i] = t
	}
	return outs, nil
}

func sameSpec(a, b rt.TensorSpec) bool {
	if a.DType != b.DType || len(a.Shape) != len(b.Shape) {
		return false
	}
	for i := range a.Shape {
		if a.Shape[i] != b.Shape[i] {
			return false
		}
	}
	return true
}

func specList(ss []rt.TensorSpec) string {
	s := ""
	for i, x := range ss {
		if i > 0 {
			s += ", "
		}
		s += x.String()
	}
	return s
}

type runFlags struct {
	inputs, outputs []string
	reference       string
	labels          string
	threads         int
	// npuReport is where --report writes the NPU figures (JSON).
	npuReport string
	// profile is where --profile writes the trace (Trace Event Format).
	profile string
}

func newRunCmd(stdout, stderr io.Writer) *cobra.Command {
	var o compileOptions
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run MODEL.mlir|MODEL.onnx|MODEL.so|MODEL.cuda --input X.npy [--input ...] [--output Y.npy ...]",
		Short: "compile a model (or load a compiled .so or .cuda) and run it on .npy inputs (--target npu: on the NPU simulator)",
		Long: `run compiles MODEL.mlir to a shared object, loads it and runs @main on the
given inputs (one --input per function argument, in order), writing each
result to an --output file.

  tessera run examples/lenet5.mlir --input examples/digits_x.npy --output y.npy \
      --reference examples/lenet5_logits.npy --labels examples/digits_y.npy

A shared object written by 'tessera compile MODEL.mlir -o MODEL.so' runs
without compiling again: its signature (the tensors of @main, the target
and its options), stored inside the file, says how to call it.

  tessera compile examples/lenet5.mlir -o lenet5.so
  tessera run lenet5.so --input examples/digits_x.npy --output y.npy

A CUDA model file ('tessera compile --target cuda -o MODEL.cuda': the PTX,
the kernels' launch configurations and the host function's plan) runs the
same way on a machine with an NVIDIA GPU and its driver, and without
LLVM.

The flags that choose how to compile (--target, --mcpu, --tuning-db,
--trace, --strict-fp, --print-ir-after, ...) are refused with a compiled model;
--threads still applies (the code reads TESSERA_NUM_THREADS when it runs).

--reference prints the largest absolute difference of the first output from
a reference .npy; --labels prints the accuracy of the first output's argmax
over its last dimension against integer labels.

With --target npu the model runs on the Tessera NPU's simulator (the kernels
the NPU cannot run on this CPU); the cycles, utilization and DRAM traffic
are printed, per kernel, and --report writes them as JSON
(targets/npu/README.md).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkThreads(cmd, f.threads); err != nil {
				return fail(stderr, err)
			}
			if err := runModel(cmd, args[0], o, f, stdout); err != nil {
				return fail(stderr, err)
			}
			return nil
		},
	}
	addCompileFlags(cmd, &o, stderr)
	cmd.Flags().StringArrayVar(&f.inputs, "input", nil, "input .npy file (repeat for each argument of @main)")
	cmd.Flags().StringArrayVar(&f.outputs, "output", nil, "output .npy file (repeat for each result of @main)")
	cmd.Flags().StringVar(&f.reference, "reference", "", "reference .npy for the first output: print max |Δ|")
	cmd.Flags().StringVar(&f.labels, "labels", "", "integer labels .npy: print the accuracy of the first output's argmax")
	cmd.Flags().IntVar(&f.threads, "threads", 0, "threads for parallel loops (default: TESSERA_NUM_THREADS, OMP_NUM_THREADS or all cores)")
	cmd.Flags().StringVar(&f.profile, "profile", "", "write a timeline of the run (every kernel call; Trace Event Format JSON for Perfetto or chrome://tracing) here, and print a per-kernel table (cpu: an instrumented build; npu: the simulator's instructions too)")
	cmd.Flags().StringVar(&f.npuReport, "report", "", "--target npu: write the simulator's figures (cycles, utilization, DRAM traffic, per kernel) as JSON here")
	return cmd
}

// npuReporter is an entry that simulates (--target npu).
type npuReporter interface{ Report() *sim.Report }

// checkReport refuses --report, before anything runs, for a target that
// does not simulate.
func checkReport(e any, path string) error {
	if _, ok := e.(npuReporter); !ok && path != "" {
		return fmt.Errorf("--report: only --target npu reports simulator figures")
	}
	return nil
}

// printNPUReport prints the NPU figures of the last call and writes them
// to path (when not "").
func printNPUReport(e any, path string, stdout io.Writer) error {
	r, ok := e.(npuReporter)
	if !ok {
		return nil
	}
	rep := r.Report()
	rep.Summary(stdout)
	rep.KernelTable(stdout)
	fmt.Fprintf(stdout, "npu MAC fraction: %.4f; host kernels: %d (%.3f ms measured)\n", rep.NPUMACFraction, len(rep.HostOps), rep.HostSeconds*1e3)
	return writeReport(path, rep)
}

func runModel(cmd *cobra.Command, model string, o compileOptions, f runFlags, stdout io.Writer) error {
	o.profile = f.profile != ""
	o.inputFiles = f.inputs
	l, err := openModel(cmd, model, o, f.threads)
	if err != nil {
		return err
	}
	defer l.Close()
	if err := checkProfile(l.entry, model, f.profile); err != nil {
		return err
	}
	if n := len(f.outputs); n != 0 && n != len(l.outputs) {
		var missing []string
		for _, s := range l.outputs[min(n, len(l.outputs)):] {
			missing = append(missing, s.String())
		}
		if n > len(l.outputs) {
			return fmt.Errorf("the model has %d results, got %d --output files", len(l.outputs), n)
		}
		return fmt.Errorf("the model has %d results, got %d --output files: give one per result (missing: %s), or none to print a summary of each", len(l.outputs), n, strings.Join(missing, ", "))
	}
	ins, err := l.readInputs(f.inputs)
	if err != nil {
		return err
	}
	outs, err := l.newOutputs()
	if err != nil {
		return err
	}
	if err := checkReport(l.entry, f.npuReport); err != nil {
		return err
	}
	start := time.Now()
	if f.profile != "" {
		err = profileModel(l.entry, ins, outs, 1, f.profile, stdout)
	} else {
		err = l.entry.Call(ins, outs)
	}
	if err != nil {
		return err
	}
	if _, ok := l.entry.(npuReporter); ok {
		fmt.Fprintf(stdout, "simulated in %.2f s\n", time.Since(start).Seconds())
	}
	if err := printNPUReport(l.entry, f.npuReport, stdout); err != nil {
		return err
	}
	for i, p := range f.outputs {
		if err := rt.WriteNPY(p, outs[i]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s (%s)\n", p, outs[i])
	}
	if len(f.outputs) == 0 {
		for i, t := range outs {
			if err := summarizeResult(stdout, i, t); err != nil {
				return err
			}
		}
	}
	return report(outs[0], f, stdout)
}

// report prints the comparison with --reference and the accuracy against --labels.
func report(out *rt.Tensor, f runFlags, stdout io.Writer) error {
	if f.reference == "" && f.labels == "" {
		return nil
	}
	got, err := asFloat64(out)
	if err != nil {
		return err
	}
	if f.reference != "" {
		ref, err := rt.ReadNPY(f.reference)
		if err != nil {
			return err
		}
		if !sameSpec(ref.Spec(), out.Spec()) {
			return fmt.Errorf("reference %s holds %s, but the output is %s", f.reference, ref, out)
		}
		want, err := asFloat64(ref)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "max |Δ| vs %s: %.3g\n", f.reference, maxAbsDiff(got, want))
	}
	if f.labels != "" {
		lt, err := rt.ReadNPY(f.labels)
		if err != nil {
			return err
		}
		labels, err := asFloat64(lt)
		if err != nil {
			return err
		}
		acc, err := accuracy(got, out.Shape(), labels)
		if err != nil {
			return fmt.Errorf("%s: %v", f.labels, err)
		}
		fmt.Fprintf(stdout, "accuracy: %s (%d images)\n", strconv.FormatFloat(acc, 'f', 4, 64), len(labels))
	}
	return nil
}

// asFloat64 is t's elements as float64 (every dtype: f16 and bf16 widen
// exactly, integers are exact below 2^53, i1 is 0 or 1).
func asFloat64(t *rt.Tensor) ([]float64, error) {
	if !t.DType().Valid() {
		return nil, fmt.Errorf("cannot compare tensors of %s", t.DType())
	}
	return t.Float64Values(), nil
}

func maxAbsDiff(a, b []float64) float64 {
	m := 0.0
	for i := range a {
		d := math.Abs(a[i] - b[i])
		if d > m || math.IsNaN(d) {
			m = d
		}
	}
	return m
}

// accuracy is the fraction of rows whose argmax over the last dimension
// equals the label.
func accuracy(logits []float64, shape []int64, labels []float64) (float64, error) {
	if len(shape) == 0 {
		return 0, fmt.Errorf("the output is a scalar")
	}
	classes := int(shape[len(shape)-1])
	if classes == 0 || len(logits)/classes != len(labels) {
		return 0, fmt.Errorf("%d labels for %d rows of the output", len(labels), len(logits)/max(classes, 1))
	}
	right := 0
	for r := range labels {
		row := logits[r*classes : (r+1)*classes]
		best := 0
		for j, v := range row {
			if v > row[best] {
				best = j
			}
		}
		if float64(best) == labels[r] {
			right++
		}
	}
	return float64(right) / float64(len(labels)), nil
}

// summarizeResult prints result i: its type, min, max and mean, and its first
// values (what a user sees of a result not written with --output).
func summarizeResult(w io.Writer, i int, t *rt.Tensor) error {
	v, err := asFloat64(t)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "result #%d: %s", i, t)
	if len(v) == 0 {
		fmt.Fprintln(w, " (empty)")
		return nil
	}
	lo, hi, sum := v[0], v[0], 0.0
	for _, x := range v {
		lo, hi, sum = min(lo, x), max(hi, x), sum+x
	}
	head := make([]string, 0, 6)
	for _, x := range v[:min(6, len(v))] {
		head = append(head, strconv.FormatFloat(x, 'g', 6, 64))
	}
	more := ""
	if len(v) > 6 {
		more = ", ..."
	}
	fmt.Fprintf(w, " min %.6g max %.6g mean %.6g: [%s%s]\n", lo, hi, sum/float64(len(v)), strings.Join(head, ", "), more)
	return nil
}
