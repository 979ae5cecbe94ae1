package autotune

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/targets"
	_ "github.com/tessera-ml/tessera/targets/cpu" // the cpu target
	tir "github.com/tessera-ml/tessera/tensorir"
)

// needLLVM skips a test when LLVM 16's tools are missing.
func needLLVM(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"llc-16", "opt-16", "ld.bfd", "as"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
}

// testTarget is this machine's CPU target with 2 threads.
func testTarget() targets.Target {
	t, err := targets.New("cpu", targets.Options{Threads: 2})
	if err != nil {
		panic(err)
	}
	return t
}

// parseTask parses one kernel and makes it a task.
func parseTask(t *testing.T, src string) *Task {
	t.Helper()
	m, err := tir.Parse("k.tir", []byte(src))
	require.NoError(t, err)
	tasks := ExtractTasks(m.Funcs, testTarget().Key(), nil)
	require.Len(t, tasks, 1)
	return tasks[0]
}

func sampleN(t *testing.T, task *Task, n int) []*Candidate {
	t.Helper()
	seen := map[string]bool{}
	var out []*Candidate
	for seed := int64(1); len(out) < n && seed < 200; seed++ {
		c, err := SampleCandidate(task, testTarget().Rules(), seed)
		require.NoError(t, err)
		if !seen[c.Key] {
			seen[c.Key] = true
			out = append(out, c)
		}
	}
	require.Len(t, out, n)
	return out
}

// Faulty candidates (a segfault, an endless loop, a wrong result, a
// build error) are recorded as such and the measurer goes on: the
// healthy candidates after each fault still measure.
func TestMeasureFaultyCandidates(t *testing.T) {
	needLLVM(t)
	task := parseTask(t, featGemmSrc(48, 40, 36))
	cands := sampleN(t, task, 8)
	faults := map[int]string{1: FaultSegfault, 3: FaultHang, 5: FaultWrong, 6: FaultBuild}
	m, err := NewMeasurer(MeasureOptions{Target: testTarget(),
		Builders: 2, RunTimeout: 3 * time.Second, Repeats: 2, MinRepeatSeconds: 0.001,
		InjectFault: func(n int) string { return faults[n] },
	})
	require.NoError(t, err)
	defer m.Close()
	got := map[int]Result{}
	m.Measure(task, cands, nil, func(i int, r Result) { got[i] = r })
	require.Len(t, got, len(cands))
	want := map[int]string{1: ErrRun, 3: ErrTimeout, 5: ErrWrong, 6: ErrBuild}
	for i := range cands {
		r := got[i]
		if kind, bad := want[i]; bad {
			require.Equal(t, kind, r.Error, "candidate %d: %s", i, r.Msg)
			require.NotEmpty(t, r.Msg)
			continue
		}
		require.Empty(t, r.Error, "candidate %d: %s", i, r.Msg)
		require.GreaterOrEqual(t, len(r.Seconds), 2)
		for _, s := range r.Seconds {
			require.Greater(t, s, 0.0)
		}
	}
	require.Contains(t, got[1].Msg, "segmentation fault")
}

// With CacheFlush the runner flushes the arguments after the first
// before each call; candidates still pass the correctness check and are
// timed the requested number of times.
func TestMeasureCacheFlush(t *testing.T) {
	needLLVM(t)
	task := parseTask(t, featGemmSrc(32, 24, 16))
	cands := sampleN(t, task, 2)
	m, err := NewMeasurer(MeasureOptions{Target: testTarget(), Builders: 1, Repeats: 3, MinRepeatSeconds: 0.001, CacheFlush: true})
	require.NoError(t, err)
	defer m.Close()
	n := 0
	m.Measure(task, cands, nil, func(i int, r Result) {
		n++
		require.Empty(t, r.Error, "candidate %d: %s", i, r.Msg)
		require.GreaterOrEqual(t, len(r.Seconds), 3)
	})
	require.Equal(t, len(cands), n)
}

// The interpreter's reference outputs are cached by kernel text and
// seed: a second measurer reuses the file, and a damaged file is
// recomputed, not trusted.
func TestMeasureReferenceCache(t *testing.T) {
	needLLVM(t)
	task := parseTask(t, featGemmSrc(24, 20, 16))
	cands := sampleN(t, task, 1)
	cache := t.TempDir()
	measure := func() Result {
		m, err := NewMeasurer(MeasureOptions{Target: testTarget(), Builders: 1, Repeats: 1, MinRepeatSeconds: 0.001, RefCache: cache})
		require.NoError(t, err)
		defer m.Close()
		var got Result
		m.Measure(task, cands, nil, func(_ int, r Result) { got = r })
		require.Empty(t, got.Error, got.Msg)
		return got
	}
	measure()
	files, err := filepath.Glob(filepath.Join(cache, "*.npy"))
	require.NoError(t, err)
	require.Len(t, files, 1, "one output, one cached reference")
	st, err := os.Stat(files[0])
	require.NoError(t, err)
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(files[0], old, old))

	measure()
	st2, err := os.Stat(files[0])
	require.NoError(t, err)
	require.Equal(t, old.Unix(), st2.ModTime().Unix(), "a valid cached reference is not rewritten")
	require.Equal(t, st.Size(), st2.Size())

	require.NoError(t, os.WriteFile(files[0], []byte("not npy"), 0o644))
	measure()
	st3, err := os.Stat(files[0])
	require.NoError(t, err)
	require.Equal(t, st.Size(), st3.Size(), "a damaged reference is recomputed")
}

// Task extraction records which parameters receive model constants at
// every call; --cache-flush evicts those (the weights) and the outputs,
// or every parameter but the first for a kernel tuned without its model.
func TestTaskConstantsAreFlushed(t *testing.T) {
	src, err := os.ReadFile("../lit/tir/rewrite-layout.tir")
	require.NoError(t, err)
	m, err := tir.Parse("rewrite-layout.tir", src)
	require.NoError(t, err)
	got, consts := map[string][]int{}, map[string][]int{}
	for _, task := range ExtractTasks(m.Funcs, testTarget().Key(), nil) {
		got[task.Name], consts[task.Name] = flushParams(task), task.Constants
	}
	require.Equal(t, map[string][]int{"matmul": {1}, "bias": {1, 2}, "transposed": {0}, "scale": {0}}, consts)
	require.Equal(t, map[string][]int{"matmul": {1, 2}, "bias": {1, 2, 3}, "transposed": {0, 1}, "scale": {0, 1}}, got)
	// Without a host function nothing is known to be constant.
	gemm := parseTask(t, featGemmSrc(32, 24, 16))
	require.Empty(t, gemm.Constants)
	require.Equal(t, []int{1, 2}, flushParams(gemm))
}

// A task's constant parameters (a model's weights) are measured in the
// layout the compiled model's rewrite-layout step stores them in: the
// builder rewrites the candidate and answers the layouts, the runner
// transposes its inputs, and the candidates still equal the interpreter
// (a wrong transposition fails the check). With KeepLayouts nothing is
// rewritten.
func TestMeasureRewritesLayouts(t *testing.T) {
	needLLVM(t)
	task := parseTask(t, featGemmSrc(20, 72, 40))
	task.Constants = []int{1} // %B, as a model's weight
	cands := sampleN(t, task, 4)
	for _, keep := range []bool{false, true} {
		m, err := NewMeasurer(MeasureOptions{Target: testTarget(), Builders: 2, Repeats: 1, MinRepeatSeconds: 0.001, KeepLayouts: keep})
		require.NoError(t, err)
		rewritten := 0
		m.Measure(task, cands, nil, func(i int, r Result) {
			require.Empty(t, r.Error, "candidate %d: %s", i, r.Msg)
			for _, l := range r.layouts {
				require.Equal(t, 1, l.Param)
				require.Equal(t, []int64{40, 72}, l.Shape)
				rewritten++
			}
		})
		m.Close()
		if keep {
			require.Zero(t, rewritten)
		} else {
			require.Positive(t, rewritten, "no sampled tiling moved the weight")
		}
	}
}
