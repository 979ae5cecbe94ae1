package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	_ "github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
)

// tinyWorkloads are the smoke-test shapes: small enough to compile and run
// in well under a second each.
func tinyWorkloads() []Workload {
	return []Workload{
		GEMMWorkload("gemm", 64, 64, 64),
		GEMMWorkload("mlp", 3, 20, 5),
		ConvWorkload(8, 8, 8),
	}
}

func TestSelectWorkloads(t *testing.T) {
	ws, err := SelectWorkloads([]string{"gemm", "mlp", "conv"}, false)
	require.NoError(t, err)
	var names []string
	for _, w := range ws {
		names = append(names, w.Name)
	}
	assert.Equal(t, []string{"gemm 256³", "gemm 512³", "gemm 1024³", "gemm 2048³",
		"mlp 1x784x200", "mlp 64x784x200",
		"conv 64ch@56²", "conv 128ch@28²", "conv 256ch@14²", "conv 512ch@7²"}, names)

	quick, err := SelectWorkloads([]string{"conv"}, true)
	require.NoError(t, err)
	require.Len(t, quick, 2)
	assert.Equal(t, "conv 256ch@14²", quick[0].Name)

	_, err = SelectWorkloads([]string{"gemm", "lenet"}, false)
	assert.ErrorContains(t, err, `unknown workload group "lenet"`)
	_, err = SelectWorkloads([]string{""}, false)
	assert.ErrorContains(t, err, "no workload group selected")
}

func TestFLOPs(t *testing.T) {
	assert.Equal(t, 2.0*1024*1024*1024, GEMMWorkload("gemm", 1024, 1024, 1024).FLOPs())
	assert.Equal(t, 2.0*64*784*200, GEMMWorkload("mlp", 64, 784, 200).FLOPs())
	// 2 · Cout · H · W · Cin · 9
	assert.Equal(t, 2.0*64*56*56*64*9, ConvWorkload(64, 56, 56).FLOPs())
}

func TestGraphTextParses(t *testing.T) {
	for _, w := range tinyWorkloads() {
		src := w.GraphText()
		m, err := graphir.Parse(w.Name+".mlir", []byte(src))
		require.NoError(t, err, src)
		require.NoError(t, graphir.Verify(m), src)
		f := m.Lookup("main")
		require.NotNil(t, f, src)
		assert.NotContains(t, src, "graph.constant", "weights are arguments")
	}
	assert.Contains(t, GEMMWorkload("mlp", 3, 20, 5).GraphText(),
		"graph.matmul %x, %w : (tensor<3x20xf32>, tensor<20x5xf32>) -> tensor<3x5xf32>")
	assert.Contains(t, ConvWorkload(8, 8, 8).GraphText(),
		"graph.conv2d %x, %w {pads = [1, 1, 1, 1], strides = [1, 1]} : (tensor<1x8x8x8xf32>, tensor<8x8x3x3xf32>) -> tensor<1x8x8x8xf32>")
}

// TestCheckRejectsWrongResults: the correctness check fails on a wrong
// output, on both the full and the sampled path.
func TestCheckRejectsWrongResults(t *testing.T) {
	small := GEMMWorkload("gemm", 8, 8, 8)
	in := small.RandomInputs()
	got := make([]float32, 64)
	for i := range got {
		got[i] = float32(small.refElement(in, i))
	}
	rel, err := small.Check(in, got)
	require.NoError(t, err)
	assert.Less(t, rel, CheckTolerance)
	got[17] += 0.5
	_, err = small.Check(in, got)
	assert.ErrorContains(t, err, "relative error")
	_, err = small.Check(in, got[:10])
	assert.ErrorContains(t, err, "has 10 elements, want 64")

	big := GEMMWorkload("gemm", 1024, 1024, 1024) // above fullCheckFLOPs: sampled
	require.Greater(t, big.FLOPs(), float64(fullCheckFLOPs))
	_, err = big.Check(big.RandomInputs(), make([]float32, 1024*1024))
	assert.ErrorContains(t, err, "relative error")
}

func TestTesseraSmoke(t *testing.T) {
	for _, w := range tinyWorkloads() {
		t.Run(w.Name, func(t *testing.T) {
			k, err := CompileTessera(w, "")
			require.NoError(t, err)
			defer k.Close()
			rel, err := k.Check()
			require.NoError(t, err)
			assert.Less(t, rel, CheckTolerance)
			tm, err := k.Bench(0, 1, 0)
			require.NoError(t, err)
			require.NotEmpty(t, tm.Seconds)
			assert.Greater(t, tm.Median, 0.0)
			assert.Greater(t, gflops(w.FLOPs(), tm.Median), 0.0)
		})
	}
}

func TestOpenBLASSmoke(t *testing.T) {
	b, err := LoadOpenBLAS()
	if err != nil {
		t.Skipf("OpenBLAS anchor not testable: %v", err)
	}
	b.SetThreads(1)
	assert.Equal(t, 1, b.Threads())
	assert.NotEmpty(t, b.CoreName)
	t.Logf("OpenBLAS %s, core %s", b.Config, b.CoreName)
	for _, w := range tinyWorkloads() {
		t.Run(w.Name, func(t *testing.T) {
			r := newBLASRun(b, w)
			rel, err := r.Check()
			require.NoError(t, err)
			assert.Less(t, rel, CheckTolerance)
			secs, med := r.Bench(0, 1, 0)
			require.Len(t, secs, 1)
			assert.Greater(t, med, 0.0)
		})
	}
}

// TestIm2colThreads: splitting the channels over goroutines gives the same
// columns as one thread.
func TestIm2colThreads(t *testing.T) {
	w := ConvWorkload(5, 4, 6)
	x := w.RandomInputs()[0]
	one := make([]float32, 5*9*4*6)
	three := make([]float32, len(one))
	im2col3x3(x, one, 5, 4, 6, 1)
	im2col3x3(x, three, 5, 4, 6, 3)
	assert.Equal(t, one, three)
	// column (ci=1, ky=0, kx=0) at output (0, 0) reads padding; at (1, 1) it reads x[1, 0, 0].
	assert.Equal(t, float32(0), one[(1*9)*24])
	assert.Equal(t, x[1*24], one[(1*9)*24+1*6+1])
}

func TestTorchAnchorSmoke(t *testing.T) {
	if err := TorchAvailable("/usr/bin/python3"); err != nil {
		t.Skipf("PyTorch anchor not testable: %v", err)
	}
	ws := tinyWorkloads()
	rep, err := RunTorch("/usr/bin/python3", ws, 1, 0, 1, 0)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Threads)
	require.Len(t, rep.Results, len(ws))
	for i, r := range rep.Results {
		assert.Equal(t, ws[i].Name, r.Name)
		assert.Greater(t, r.Median, 0.0, r.Name)
		assert.NotEmpty(t, r.Mode, r.Name)
		assert.Contains(t, r.Probe, r.Mode, r.Name)
	}
}

// TestRunThreadsTable runs the worker's measurement loop on the tiny
// shapes (Tessera and OpenBLAS, not PyTorch) and prints its table.
func TestRunThreadsTable(t *testing.T) {
	cfg := Config{Warmup: 0, Repeats: 1, NoTorch: true}
	var log bytes.Buffer
	tr := RunThreads(cfg, tinyWorkloads(), 1, &log)
	require.Len(t, tr.Rows, 3)
	for _, r := range tr.Rows {
		require.Empty(t, r.Tessera.Error, r.Workload.Name)
		assert.Greater(t, r.Tessera.GFLOPS, 0.0, r.Workload.Name)
		if r.OpenBLAS != nil {
			require.Empty(t, r.OpenBLAS.Error, r.Workload.Name)
			assert.Greater(t, r.BLASRatio, 0.0, r.Workload.Name)
		}
	}
	var out bytes.Buffer
	PrintTable(&out, tr)
	text := out.String()
	assert.Contains(t, text, "threads = 1")
	assert.Contains(t, text, "note: skipped (--no-torch)")
	for _, w := range tinyWorkloads() {
		assert.Contains(t, text, w.Name)
	}
	assert.NotContains(t, text, "FAILED")
}

func TestFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--threads", "0"},
		{"--threads", "1,x"},
		{"--workloads", "resnet"},
		{"--repeats", "0"},
		{"extra"},
	} {
		var stdout, stderr bytes.Buffer
		assert.Equal(t, 2, run(args, &stdout, &stderr), strings.Join(args, " "))
		assert.NotEmpty(t, stderr.String(), strings.Join(args, " "))
	}
}

func TestAnchorEnv(t *testing.T) {
	env := anchorEnv([]string{"PATH=/bin", "OPENBLAS_CORETYPE=Haswell", "OMP_NUM_THREADS=7"}, 2)
	assert.Contains(t, env, "PATH=/bin")
	assert.Contains(t, env, "OMP_NUM_THREADS=2")
	assert.Contains(t, env, "TESSERA_NUM_THREADS=2")
	assert.Contains(t, env, "OPENBLAS_NUM_THREADS=2")
	assert.NotContains(t, strings.Join(env, "\n"), "OPENBLAS_CORETYPE")
	assert.NotContains(t, env, "OMP_NUM_THREADS=7")
}

func TestAcceptance(t *testing.T) {
	runs := []ThreadRun{
		{Threads: 1, Rows: []Row{{Workload: GEMMWorkload("gemm", 1024, 1024, 1024), BLASRatio: 0.9}}},
		{Threads: 2, Rows: []Row{
			{Workload: GEMMWorkload("gemm", 1024, 1024, 1024), BLASRatio: 0.55},
			{Workload: ConvWorkload(64, 56, 56), TorchRatio: 0.25},
		}},
	}
	assert.Equal(t, []string{
		"goal: gemm 1024³ on 2 threads ≥ 50% of OpenBLAS: 55% — met",
		"goal: conv 64ch@56² on 2 threads ≥ 50% of PyTorch: 25% — NOT met",
	}, Acceptance(runs))
	assert.Empty(t, Acceptance(runs[:1]))
}

// TestCommandEndToEnd builds the command and runs it as a user would: the
// parent re-executes itself as a worker per thread count and merges their
// JSON into the table and --json file.
func TestCommandEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool in PATH")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bench")
	out, err := exec.Command(goTool, "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, string(out))
	jsonPath := filepath.Join(dir, "out.json")
	cmd := exec.Command(bin, "--quick", "--threads", "1,2", "--workloads", "mlp", "--repeats", "1",
		"--warmup", "0", "--min-time", "0s", "--no-torch", "--json", jsonPath)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), stderr.String())
	text := stdout.String()
	assert.Contains(t, text, "threads = 1")
	assert.Contains(t, text, "threads = 2")
	assert.Contains(t, text, "mlp 64x784x200")
	assert.NotContains(t, text, "FAILED")

	data, err := os.ReadFile(jsonPath)
	require.NoError(t, err)
	var rep Report
	require.NoError(t, json.Unmarshal(data, &rep))
	require.Len(t, rep.Runs, 2)
	for i, tr := range rep.Runs {
		assert.Equal(t, []int{1, 2}[i], tr.Threads)
		require.Len(t, tr.Rows, 2)
		for _, r := range tr.Rows {
			assert.Greater(t, r.Tessera.MedianS, 0.0)
			assert.Empty(t, r.Tessera.Error)
		}
	}
}

func TestOtherCores(t *testing.T) {
	t0 := time.Unix(100, 0)
	a := cpuSample{at: t0, busy: 10, own: 1}
	// 2 s of wall time: the machine was busy 3 s, this process 1 s of it.
	b := cpuSample{at: t0.Add(2 * time.Second), busy: 13, own: 2}
	assert.InDelta(t, 1.0, otherCores(a, b), 1e-9)
	b.busyMissing = true
	assert.Equal(t, -1.0, otherCores(a, b))

	busy, err := machineBusy()
	require.NoError(t, err)
	assert.Greater(t, busy, 0.0)
	s0 := sampleCPU()
	for x := 0.0; time.Since(s0.at) < 50*time.Millisecond; x += 1 {
		_ = x
	}
	s1 := sampleCPU()
	assert.Greater(t, s1.own, s0.own, "own CPU time counts the spin")
	assert.GreaterOrEqual(t, otherCores(s0, s1), 0.0)

	assert.InDelta(t, 0.2, disturbedLimit(2, 2), 1e-9)
	assert.InDelta(t, 0.7, disturbedLimit(1, 2), 1e-9)
	assert.InDelta(t, 0.2, disturbedLimit(4, 2), 1e-9)
}

func TestDisturbedRunIsFlagged(t *testing.T) {
	tr := ThreadRun{Threads: 2, OtherCores: 0.9, Disturbed: true, Rows: []Row{{
		Workload: ConvWorkload(64, 56, 56), FLOPs: 1e9,
		Tessera:    &Measurement{MedianS: 0.01, GFLOPS: 100},
		PyTorch:    &Measurement{MedianS: 0.02, GFLOPS: 50, Mode: "eager"},
		TorchRatio: 2,
	}}}
	var out bytes.Buffer
	PrintTable(&out, tr)
	assert.Contains(t, out.String(), "WARNING: other processes kept 0.90 cores busy")
	assert.Equal(t, []string{"goal: conv 64ch@56² on 2 threads ≥ 50% of PyTorch: 200% — met (disturbed run: not conclusive)"},
		Acceptance([]ThreadRun{tr}))
}
