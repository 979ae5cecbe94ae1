package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/internal/traceevent"
)

// TestProfileCPU profiles LeNet-5 with bench --profile: the trace passes
// the format check, holds one "run" slice per profiled run and one
// "kernel" slice per kernel call of each run — as many as the host
// function's tir.call statements — each inside its run, with the
// kernel's schedule and FLOPs; the table names every kernel and compares
// the kernels' sum with the end-to-end time.
func TestProfileCPU(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "p.json")
	model := "../../examples/lenet5.mlir"
	_, errs, code := tessera("bench", model, "--profile", path, "--repeats", "3", "--warmup", "1", "--min-time", "1ms")
	require.Equal(t, 0, code, errs)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	tr, err := traceevent.Validate(data)
	require.NoError(t, err)
	tirText, _, code := tessera("compile", model, "--emit", "tir")
	require.Equal(t, 0, code)
	calls := strings.Count(tirText, "tir.call @")
	require.Positive(t, calls)

	var runs []traceevent.Event
	perRun := map[int]int{}
	flops := 0.0
	for _, ev := range tr.TraceEvents {
		switch ev.Cat {
		case "run":
			runs = append(runs, ev)
		case "kernel":
			require.NotEmpty(t, runs, "a kernel slice before any run")
			run := runs[len(runs)-1]
			assert.GreaterOrEqual(t, ev.Ts, run.Ts, ev.Name)
			assert.LessOrEqual(t, ev.Ts+*ev.Dur, run.Ts+*run.Dur+1e-3, ev.Name)
			assert.Equal(t, "default", ev.Args["schedule"], ev.Name)
			assert.Contains(t, errs, ev.Name)
			flops += ev.Args["flops"].(float64)
			perRun[len(runs)-1]++
		}
	}
	require.Len(t, runs, 3)
	for r := range runs {
		assert.Equal(t, calls, perRun[r], "kernel slices of run %d", r)
	}
	assert.Greater(t, flops, 1e6, "LeNet-5's convolutions and dense layers")
	assert.Regexp(t, `kernels: [0-9.]+ ms of [0-9.]+ ms end to end over 3 runs`, errs)
	assert.Regexp(t, `probe overhead: [0-9.]+ µs per kernel call`, errs)
	_, ok := tr.OtherData["probe_overhead_us"]
	assert.True(t, ok)
}

// TestProfileRunAndRefusals: run --profile gives the results a plain run
// gives; a run that fails writes no trace; a .so compiled without probes
// is refused with the way out.
func TestProfileRunAndRefusals(t *testing.T) {
	dir := t.TempDir()
	model := "../../examples/mlp.mlir"
	in := "../../examples/digits28_x.npy"
	plain, prof, trace := filepath.Join(dir, "a.npy"), filepath.Join(dir, "b.npy"), filepath.Join(dir, "p.json")
	_, errs, code := tessera("run", model, "--input", in, "--output", plain)
	require.Equal(t, 0, code, errs)
	out, errs, code := tessera("run", model, "--input", in, "--output", prof, "--profile", trace)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "kernels: ")
	assert.Equal(t, readF32(t, plain), readF32(t, prof))
	data, err := os.ReadFile(trace)
	require.NoError(t, err)
	_, err = traceevent.Validate(data)
	require.NoError(t, err)

	bad := filepath.Join(dir, "bad.json")
	_, errs, code = tessera("run", model, "--input", "../../examples/digits_x.npy", "--profile", bad)
	assert.Equal(t, 1, code)
	assert.NotEmpty(t, errs)
	assert.NoFileExists(t, bad)

	so := filepath.Join(dir, "m.so")
	_, errs, code = tessera("compile", model, "-o", so)
	require.Equal(t, 0, code, errs)
	_, errs, code = tessera("bench", so, "--profile", bad)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "was compiled without probes; profile the .mlir or .onnx model")
	assert.NoFileExists(t, bad)
}

// TestProfileNPU profiles a convolution on the NPU simulator: the trace
// passes the format check and has the load, compute and store tracks with
// the program's instructions, a kernel slice per call inside each run,
// and the DRAM counter.
func TestProfileNPU(t *testing.T) {
	path := filepath.Join(t.TempDir(), "npu.json")
	_, errs, code := tessera("bench", "testdata/npu_conv.mlir", "--target", "npu", "--repeats", "2", "--profile", path)
	require.Equal(t, 0, code, errs)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	tr, err := traceevent.Validate(data)
	require.NoError(t, err)
	threads := map[int]string{}
	count := map[string]int{}
	insts := map[int]int{}
	for _, ev := range tr.TraceEvents {
		if ev.Ph == "M" && ev.Name == "thread_name" {
			threads[ev.Tid] = ev.Args["name"].(string)
		}
		count[ev.Ph+" "+ev.Cat]++
		if ev.Cat == "npu.inst" {
			insts[ev.Tid]++
		}
	}
	names := map[string]int{}
	for tid, n := range threads {
		names[n] = insts[tid]
	}
	for _, m := range []string{"load", "compute", "store"} {
		assert.Positive(t, names[m], "instructions on the %s track", m)
	}
	assert.Equal(t, 2, count["X run"])
	assert.Equal(t, 2, count["X kernel"], "one NPU kernel per run")
	assert.Positive(t, count["C "], "the DRAM bandwidth counter")
	assert.Contains(t, errs, "fused_0")
}
