package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/graphir"
	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/targets"
)

// The GPU check runs in two places. TestGPUCheckPrepare (here, with LLVM
// 16; -gpu-prepare DIR) compiles every case for the CUDA target with the
// default GPU rules into DIR: each ONNX node test the importer takes (with
// its test data), the example and coverage models (with their inputs and
// PyTorch's outputs), the seed models, and the GEMMs. TestGPUCheck
// (-gpu-check DIR, on a machine with an NVIDIA GPU, where LLVM need not
// exist) loads each compiled model as tessera run does, checks it against
// its reference and times the models and GEMMs with CUDA events.
// bench/gpu_check.sh runs both halves and PyTorch's anchors.
var (
	gpuPrepare = flag.String("gpu-prepare", "", "TestGPUCheckPrepare: compile the GPU check's cases for the CUDA target into this folder (needs LLVM 16)")
	gpuCheck   = flag.String("gpu-check", "", "TestGPUCheck: run the cases compiled into this folder on the GPU")
	gpuReport  = flag.String("gpu-report", "", "TestGPUCheck: also write the results as JSON to this file")
	gpuOnly    = flag.String("gpu-only", "", "TestGPUCheckPrepare: only the cases whose name contains this")
	gpuMCPU    = flag.String("gpu-mcpu", "sm_80", "TestGPUCheckPrepare: the --mcpu of the CUDA target")
)

// gpuCase is one entry of the GPU check's manifest.
type gpuCase struct {
	Kind string `json:"kind"` // node, model, gemm
	Name string `json:"name"`
	// Model is the CUDA model file, relative to the folder; "" when the
	// case did not compile for the CUDA target (Refused says why).
	Model   string `json:"model,omitempty"`
	Refused string `json:"refused,omitempty"`
	// Node tests: the copied test folder and the bound input positions.
	Data  string `json:"data,omitempty"`
	Bound []int  `json:"bound,omitempty"`
	// Models: .npy inputs and reference outputs, relative to the folder.
	Inputs  []string `json:"inputs,omitempty"`
	Outputs []string `json:"outputs,omitempty"`
	Tol     float64  `json:"tol,omitempty"`
	// Bench: time it; GFLOP for the rate (GEMMs).
	Bench bool    `json:"bench,omitempty"`
	GFLOP float64 `json:"gflop,omitempty"`
}

// gpuResult is one case's outcome on the GPU.
type gpuResult struct {
	Name     string    `json:"name"`
	Kind     string    `json:"kind"`
	Status   string    `json:"status"` // passed, failed, refused
	Detail   string    `json:"detail,omitempty"`
	RelErr   float64   `json:"rel_err,omitempty"`
	MedianMs float64   `json:"median_ms,omitempty"`
	Seconds  []float64 `json:"seconds,omitempty"`
	GFLOPS   float64   `json:"gflops,omitempty"`
	// Kernels: the time of each kernel (summed over its calls), largest
	// first, where the runtime times kernels one by one.
	Kernels []kernelShare `json:"kernels,omitempty"`
}

type kernelShare struct {
	Kernel string  `json:"kernel"`
	Calls  int     `json:"calls"`
	Ms     float64 `json:"ms"`
}

// gpuGEMMSizes are the square f32 GEMMs timed against cuBLAS.
var gpuGEMMSizes = []int{1024, 4096}

// gpuTuneSize is the GEMM bench/gpu_check.sh tune tunes.
const gpuTuneSize = 1024

// gpuModelNames are the example models (examples/onnx) checked and timed.
var gpuBenchModels = map[string]bool{"resnet18": true, "mobilenet_v2": true}

func TestGPUCheckPrepare(t *testing.T) {
	if *gpuPrepare == "" {
		t.Skip("the GPU check's models are compiled only with -gpu-prepare DIR")
	}
	dir, err := filepath.Abs(*gpuPrepare)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "node"), 0o755))
	var cases []gpuCase
	add := func(c gpuCase) {
		if *gpuOnly == "" || strings.Contains(c.Name, *gpuOnly) {
			t.Logf("%s %s: %s", c.Kind, c.Name, firstNonEmpty(c.Refused, "compiled"))
			cases = append(cases, c)
		}
	}
	for _, size := range gpuGEMMSizes {
		if *gpuOnly == "" || strings.Contains(fmt.Sprintf("gemm%d", size), *gpuOnly) {
			add(prepareGEMM(t, dir, size))
		}
	}
	if *gpuOnly == "" || *gpuOnly == "tuneref" {
		prepareTuneReference(t, dir, gpuTuneSize)
	}
	for _, c := range prepareModels(t, dir) {
		add(c)
	}
	if *gpuOnly == "" || *gpuOnly == "cabi" {
		prepareCABI(t, dir)
	}
	names, err := os.ReadDir(onnxNodeTests)
	require.NoError(t, err, "the ONNX node tests come from Debian's libonnx-testdata")
	for _, e := range names {
		if *gpuOnly != "" && !strings.Contains(e.Name(), *gpuOnly) {
			continue
		}
		if c, ok := prepareNodeTest(t, dir, e.Name()); ok {
			add(c)
		}
	}
	data, err := json.MarshalIndent(cases, "", " ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "manifest.json"), data, 0o644))
}

// compileCUDA compiles model (.mlir or .onnx) to out with the CUDA
// target's default rules; the error's first line says why not.
func compileCUDA(model, out string) string {
	err := compileTo(model, compileOptions{target: "cuda", mcpu: *gpuMCPU}, "cuda", out, false, io.Discard, io.Discard)
	if err != nil {
		return firstLine(err.Error())
	}
	return ""
}

// prepareGEMM writes an n×n×n f32 matmul model and compiles it.
func prepareGEMM(t *testing.T, dir string, n int) gpuCase {
	name := fmt.Sprintf("gemm%d", n)
	// The model stays beside its .cuda file: bench/gpu_check.sh tune
	// tunes it.
	mlir := filepath.Join(dir, name+".mlir")
	require.NoError(t, os.WriteFile(mlir, []byte(gemmModel(n)), 0o644))
	c := gpuCase{Kind: "gemm", Name: name, Bench: true, GFLOP: 2 * math.Pow(float64(n), 3) / 1e9, Tol: 1e-4}
	if c.Refused = compileCUDA(mlir, filepath.Join(dir, name+".cuda")); c.Refused == "" {
		c.Model = name + ".cuda"
	}
	return c
}

// prepareModels compiles the example models, the seed models and the
// coverage models and copies their inputs and reference outputs.
func prepareModels(t *testing.T, dir string) []gpuCase {
	var cases []gpuCase
	copyIn := func(src string) string {
		data, err := os.ReadFile(src)
		require.NoError(t, err)
		name := filepath.Base(src)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
		return name
	}
	model := func(name, path string, ins, outs []string, tol float64) {
		if *gpuOnly != "" && !strings.Contains(name, *gpuOnly) {
			return
		}
		if _, err := os.Stat(path); err != nil {
			t.Logf("%s is absent: skipped", path)
			return
		}
		c := gpuCase{Kind: "model", Name: name, Tol: tol, Bench: gpuBenchModels[name]}
		for _, f := range ins {
			c.Inputs = append(c.Inputs, copyIn(f))
		}
		for _, f := range outs {
			c.Outputs = append(c.Outputs, copyIn(f))
		}
		if c.Refused = compileCUDA(path, filepath.Join(dir, name+".cuda")); c.Refused == "" {
			c.Model = name + ".cuda"
		}
		cases = append(cases, c)
	}
	for _, name := range onnxModels {
		p := filepath.Join(onnxExamples, name)
		model(name, p+".onnx", []string{p + "_input.npy"}, []string{p + "_output.npy"}, modelTolerance)
	}
	model("lenet5", "../../examples/lenet5.mlir", []string{"../../examples/digits_x.npy"}, []string{"../../examples/lenet5_logits.npy"}, modelTolerance)
	model("mlp", "../../examples/mlp.mlir", []string{"../../examples/digits28_x.npy"}, []string{"../../examples/mlp_logits.npy"}, modelTolerance)
	man, names := readCoverageManifest(t)
	for _, n := range names {
		m := man.Models[n]
		var ins, outs []string
		for _, f := range m.Inputs {
			ins = append(ins, filepath.Join(coverageDir, f.File))
		}
		for _, f := range m.Outputs {
			outs = append(outs, filepath.Join(coverageDir, f.File))
		}
		model(n, filepath.Join(coverageDir, m.File), ins, outs, coverageTolerance)
	}
	return cases
}

// prepareNodeTest imports an ONNX node test (binding inputs as the
// conformance test does), compiles it and copies its test data; false
// when the importer does not take it (TestONNXConformance reports those).
func prepareNodeTest(t *testing.T, dir, name string) (gpuCase, bool) {
	src := filepath.Join(onnxNodeTests, name)
	data, err := os.ReadFile(filepath.Join(src, "model.onnx"))
	if err != nil {
		return gpuCase{}, false
	}
	if _, excluded := conformanceExclusions[name]; excluded {
		return gpuCase{}, false
	}
	m, bound, err := importBinding(name, data, src)
	if err != nil {
		return gpuCase{}, false
	}
	c := gpuCase{Kind: "node", Name: name, Data: filepath.Join("node", name)}
	for i := range bound {
		c.Bound = append(c.Bound, i)
	}
	sort.Ints(c.Bound)
	mlir := filepath.Join(t.TempDir(), name+".mlir")
	require.NoError(t, os.WriteFile(mlir, []byte(graphir.Print(m)), 0o644))
	if c.Refused = compileCUDA(mlir, filepath.Join(dir, "node", name+".cuda")); c.Refused != "" {
		return c, true
	}
	c.Model = filepath.Join("node", name+".cuda")
	sets, _ := filepath.Glob(filepath.Join(src, "test_data_set_*"))
	for _, set := range sets {
		files, _ := filepath.Glob(filepath.Join(set, "*.pb"))
		to := filepath.Join(dir, c.Data, filepath.Base(set))
		require.NoError(t, os.MkdirAll(to, 0o755))
		for _, f := range files {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(to, filepath.Base(f)), b, 0o644))
		}
	}
	return c, true
}

// TestGPUCheck runs the prepared cases on the GPU (-gpu-check DIR): node
// tests against ONNX's outputs (the conformance tolerances), models
// against PyTorch's (their tests' tolerances), GEMMs against float64 dot
// products at 4096 random positions; then times the cases marked Bench
// with CUDA events (10 warm-up runs, at least 30 timed, at least 1 s).
func TestGPUCheck(t *testing.T) {
	if *gpuCheck == "" {
		t.Skip("runs only with -gpu-check DIR (bench/gpu_check.sh)")
	}
	cudaTarget, err := targets.New("cuda", targets.Options{})
	require.NoError(t, err)
	if err := targets.CheckAvailable(cudaTarget); err != nil {
		t.Skip(err.Error())
	}
	dir := *gpuCheck
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	require.NoError(t, err)
	var cases []gpuCase
	require.NoError(t, json.Unmarshal(data, &cases))
	var results []gpuResult
	counts := map[string]map[string]int{}
	for _, c := range cases {
		r := runGPUCase(dir, c)
		results = append(results, r)
		if counts[c.Kind] == nil {
			counts[c.Kind] = map[string]int{}
		}
		counts[c.Kind][r.Status]++
		switch {
		case r.Status == "failed":
			t.Errorf("%s %s: %s", c.Kind, c.Name, r.Detail)
		case r.Status == "refused":
			t.Logf("%s %s: refused by the CUDA target: %s", c.Kind, c.Name, r.Detail)
		case r.MedianMs > 0:
			t.Logf("%s %s: rel err %.2g, median %.4f ms%s", c.Kind, c.Name, r.RelErr, r.MedianMs, gflopsNote(r.GFLOPS))
			logKernels(t, r)
		}
	}
	for _, kind := range []string{"node", "model", "gemm"} {
		t.Logf("%s: %d passed, %d failed, %d refused by the CUDA target", kind, counts[kind]["passed"], counts[kind]["failed"], counts[kind]["refused"])
	}
	if *gpuReport != "" {
		out, err := json.MarshalIndent(results, "", " ")
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(*gpuReport, out, 0o644))
	}
}

// logKernels prints the ten slowest kernels of a timed case and the sum of
// all kernels against the end-to-end median (the gap is launch overhead).
func logKernels(t *testing.T, r gpuResult) {
	sum := 0.0
	for _, k := range r.Kernels {
		sum += k.Ms
	}
	for i, k := range r.Kernels {
		if i == 10 {
			break
		}
		t.Logf("  %-12s %3d calls %8.4f ms %5.1f%%", k.Kernel, k.Calls, k.Ms, 100*k.Ms/sum)
	}
	if len(r.Kernels) > 0 {
		t.Logf("  %d kernels: %.4f ms one by one, %.4f ms end to end", len(r.Kernels), sum, r.MedianMs)
	}
}

func gflopsNote(g float64) string {
	if g == 0 {
		return ""
	}
	return fmt.Sprintf(", %.0f GFLOP/s", g)
}

// runGPUCase loads one case's model and checks (and times) it.
func runGPUCase(dir string, c gpuCase) (r gpuResult) {
	r = gpuResult{Name: c.Name, Kind: c.Kind, Status: "passed"}
	defer func() {
		if p := recover(); p != nil {
			r.Status, r.Detail = "failed", fmt.Sprintf("panic: %v", p)
		}
	}()
	if c.Model == "" {
		r.Status, r.Detail = "refused", c.Refused
		return r
	}
	l, err := loadPrebuilt(filepath.Join(dir, c.Model), 0)
	if err != nil {
		r.Status, r.Detail = "failed", firstLine(err.Error())
		return r
	}
	defer l.Close()
	var ins []*rt.Tensor
	switch c.Kind {
	case "node":
		sets, _ := filepath.Glob(filepath.Join(dir, c.Data, "test_data_set_*"))
		sort.Strings(sets)
		bound := map[int]bool{}
		for _, i := range c.Bound {
			bound[i] = true
		}
		for _, set := range sets {
			if msg := runDataSet(l, set, bound); msg != "" {
				r.Status, r.Detail = "failed", filepath.Base(set)+": "+msg
				return r
			}
		}
		return r
	case "model":
		ins, r.RelErr, err = checkModel(l, dir, c)
	case "gemm":
		ins, r.RelErr, err = checkGEMM(l)
	}
	if err != nil {
		r.Status, r.Detail = "failed", err.Error()
		return r
	}
	if c.Bench {
		outs, err := l.newOutputs()
		if err != nil {
			r.Status, r.Detail = "failed", err.Error()
			return r
		}
		tm, err := l.entry.BenchEach(ins, outs, 10, 30, time.Second, nil)
		if err != nil {
			r.Status, r.Detail = "failed", "bench: "+err.Error()
			return r
		}
		r.Seconds, r.MedianMs = tm.Seconds, tm.Median*1e3
		if c.GFLOP > 0 {
			r.GFLOPS = c.GFLOP / tm.Median
		}
		if kt, ok := l.entry.(targets.KernelTimer); ok {
			times, err := kt.KernelTimes(ins, outs, 20)
			if err != nil {
				r.Status, r.Detail = "failed", "kernel times: "+err.Error()
				return r
			}
			r.Kernels = kernelShares(times)
		}
	}
	return r
}

// kernelShares sums the calls of each kernel, largest first.
func kernelShares(times []targets.KernelTime) []kernelShare {
	idx := map[string]int{}
	var out []kernelShare
	for _, k := range times {
		i, ok := idx[k.Kernel]
		if !ok {
			i = len(out)
			idx[k.Kernel] = i
			out = append(out, kernelShare{Kernel: k.Kernel})
		}
		out[i].Calls++
		out[i].Ms += k.Seconds * 1e3
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Ms > out[b].Ms })
	return out
}

// checkModel runs a model on its inputs and compares every output with
// the reference: max|Δ|/max|ref| ≤ c.Tol for floats, exact otherwise.
func checkModel(l *loaded, dir string, c gpuCase) ([]*rt.Tensor, float64, error) {
	var ins []*rt.Tensor
	for _, f := range c.Inputs {
		x, err := rt.ReadNPY(filepath.Join(dir, f))
		if err != nil {
			return nil, 0, err
		}
		ins = append(ins, x)
	}
	outs, err := l.call(ins)
	if err != nil {
		return nil, 0, err
	}
	worst := 0.0
	for i, f := range c.Outputs {
		want, err := rt.ReadNPY(filepath.Join(dir, f))
		if err != nil {
			return nil, 0, err
		}
		g, w := outs[i].Float64Values(), want.Float64Values()
		if len(g) != len(w) {
			return nil, 0, fmt.Errorf("output %d has %d elements, the reference %d", i, len(g), len(w))
		}
		rel := relErr64(g, w)
		isFloat := want.DType() == rt.Float32 || want.DType() == rt.Float64 || want.DType() == rt.Float16 || want.DType() == rt.BFloat16
		if !isFloat && rel != 0 {
			return nil, 0, fmt.Errorf("output %d (%s) differs from the reference", i, want.DType())
		}
		if rel > c.Tol || math.IsNaN(rel) {
			return nil, 0, fmt.Errorf("output %d: max|Δ|/max|ref| = %.3g > %.g", i, rel, c.Tol)
		}
		worst = math.Max(worst, rel)
	}
	return ins, worst, nil
}

// checkGEMM runs C = A·B on uniform [-1, 1) inputs and checks 4096
// random elements against float64 dot products: max|Δ|/max|ref| ≤ 1e-4.
func checkGEMM(l *loaded) ([]*rt.Tensor, float64, error) {
	rng := rand.New(rand.NewPCG(5, 6))
	var ins []*rt.Tensor
	for _, s := range l.inputs {
		x, err := rt.NewTensor(s.DType, s.Shape)
		if err != nil {
			return nil, 0, err
		}
		vals := make([]float64, x.NumElements())
		for i := range vals {
			vals[i] = rng.Float64()*2 - 1
		}
		if err := x.SetFloat64Values(vals); err != nil {
			return nil, 0, err
		}
		ins = append(ins, x)
	}
	outs, err := l.call(ins)
	if err != nil {
		return nil, 0, err
	}
	a, _ := ins[0].Float32s()
	b, _ := ins[1].Float32s()
	c, _ := outs[0].Float32s()
	m, k, n := int(l.inputs[0].Shape[0]), int(l.inputs[0].Shape[1]), int(l.inputs[1].Shape[1])
	var got, want []float64
	for range 4096 {
		i, j := rng.IntN(m), rng.IntN(n)
		s := 0.0
		for p := range k {
			s += float64(a[i*k+p]) * float64(b[p*n+j])
		}
		got, want = append(got, float64(c[i*n+j])), append(want, s)
	}
	rel := relErr64(got, want)
	if rel > 1e-4 || math.IsNaN(rel) {
		return nil, 0, fmt.Errorf("max|Δ|/max|ref| = %.3g > 1e-4 at sampled elements", rel)
	}
	return ins, rel, nil
}

// call runs the model once on ins and returns its outputs.
func (l *loaded) call(ins []*rt.Tensor) ([]*rt.Tensor, error) {
	outs, err := l.newOutputs()
	if err != nil {
		return nil, err
	}
	return outs, l.entry.Call(ins, outs)
}
