package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/autotune"
	"github.com/tessera-ml/tessera/targets"
)

// cliEnv makes the test binary act as the tessera CLI (TestMain), so
// tests can start, kill and restart real `tessera tune` processes.
const cliEnv = "TESSERA_TEST_AS_CLI"

func TestMain(m *testing.M) {
	autotune.MaybeRunWorker()
	if os.Getenv(cliEnv) == "1" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// tuneModel has two kernels (tasks): two distinct matmuls, the second
// with the add fused as its epilogue.
const tuneModel = `module {
  func.func @main(%a: tensor<48x64xf32>, %b: tensor<64x40xf32>, %c: tensor<40x24xf32>, %d: tensor<48x24xf32>) -> tensor<48x24xf32> {
    %0 = graph.matmul %a, %b : (tensor<48x64xf32>, tensor<64x40xf32>) -> tensor<48x40xf32>
    %1 = graph.relu %0 : tensor<48x40xf32>
    %2 = graph.matmul %1, %c : (tensor<48x40xf32>, tensor<40x24xf32>) -> tensor<48x24xf32>
    %3 = graph.add %2, %d : (tensor<48x24xf32>, tensor<48x24xf32>) -> tensor<48x24xf32>
    func.return %3 : tensor<48x24xf32>
  }
}
`

// tuneCmd is `tessera tune` run by the test binary.
func tuneCmd(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, append([]string{"tune"}, args...)...)
	cmd.Env = append(os.Environ(), cliEnv+"=1", "TESSERA_NUM_THREADS=2")
	return cmd
}

// dbLines reads the complete lines of a tuning database.
func dbLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	if len(data) > 0 && data[len(data)-1] != '\n' && len(out) > 0 {
		out = out[:len(out)-1] // a torn last line
	}
	return out
}

// waitLines waits until the database has at least n complete lines.
func waitLines(t *testing.T, path string, n int, limit time.Duration) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for len(dbLines(t, path)) < n {
		require.True(t, time.Now().Before(deadline), "the database did not reach %d records in %v", n, limit)
		time.Sleep(50 * time.Millisecond)
	}
}

// bestByWorkload is the best median latency per workload in a database
// (target: this host with 2 threads, as tuneCmd runs).
func bestByWorkload(t *testing.T, path string) map[string]float64 {
	t.Helper()
	db, _, err := autotune.OpenDatabase(path)
	require.NoError(t, err)
	defer db.Close()
	tg, err := targets.New("cpu", targets.Options{Threads: 2})
	require.NoError(t, err)
	target := tg.Key()
	out := map[string]float64{}
	for _, w := range db.Workloads() {
		if r, ok := db.Best(w, target); ok {
			out[w] = r.Median()
		}
	}
	require.NotEmpty(t, out)
	return out
}

// needLLVMTools skips a test when LLVM 16's tools are missing.
func needLLVMTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"llc-16", "opt-16", "ld.bfd", "as"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
}

// tuneFixture skips without LLVM, else writes tuneModel into a fresh
// folder: the folder, the model's path and a database path beside it.
func tuneFixture(t *testing.T) (dir, model, db string) {
	t.Helper()
	needLLVMTools(t)
	dir = t.TempDir()
	model = filepath.Join(dir, "m.mlir")
	require.NoError(t, os.WriteFile(model, []byte(tuneModel), 0o644))
	return dir, model, filepath.Join(dir, "tune.jsonl")
}

// A `tessera tune` killed with SIGKILL mid-run and restarted on the same
// database loses no finished record, measures no candidate twice, spends
// exactly the budget, and ends with a best latency per task equal to or
// better than before the kill.
func TestTuneSurvivesSIGKILL(t *testing.T) {
	_, model, db := tuneFixture(t)
	args := []string{model, "--trials", "36", "--db", db, "--batch", "4", "--repeats", "2", "--min-repeat-time", "2ms"}

	first := tuneCmd(t, args...)
	var out1 bytes.Buffer
	first.Stdout, first.Stderr = &out1, &out1
	require.NoError(t, first.Start())
	waitLines(t, db, 10, 3*time.Minute)
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_ = first.Wait()
	before := dbLines(t, db)
	require.GreaterOrEqual(t, len(before), 10)
	require.Less(t, len(before), 36, "the job finished before the kill; raise --trials")
	bestBefore := bestByWorkload(t, db)

	second := tuneCmd(t, args...)
	out2, err := second.CombinedOutput()
	require.NoError(t, err, "%s", out2)
	after := dbLines(t, db)
	require.Len(t, after, 36, "%s", out2)
	require.Equal(t, before, after[:len(before)], "a finished record changed or was lost")
	seen := map[string]bool{}
	for _, l := range after {
		i := strings.Index(l, `"candidate":"`)
		require.GreaterOrEqual(t, i, 0, l)
		key := l[i : i+13+32]
		require.False(t, seen[key], "candidate measured twice: %s", key)
		seen[key] = true
	}
	bestAfter := bestByWorkload(t, db)
	for w, b := range bestBefore {
		require.LessOrEqual(t, bestAfter[w], b, "workload %s got worse", w[:12])
	}
	require.Contains(t, string(out2), "36 of 36 trials recorded")
}

// Ctrl-C (SIGINT) finishes the trial in flight, keeps every record and
// exits 0 with a resume hint (and the --plot picture); `compile
// --tuning-db` then uses the records, with one summary line.
func TestTuneInterruptAndApply(t *testing.T) {
	dir, model, db := tuneFixture(t)
	picture := filepath.Join(dir, "curves.png")
	cmd := tuneCmd(t, model, "--trials", "400", "--db", db, "--batch", "4", "--repeats", "2", "--min-repeat-time", "2ms", "--plot", picture)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	waitLines(t, db, 6, 3*time.Minute)
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	require.NoError(t, cmd.Wait(), "%s", out.String())
	require.Contains(t, out.String(), "rerun the same command to resume")
	require.Contains(t, out.String(), "wrote "+picture, "--plot draws after an interrupted job too")
	require.FileExists(t, picture)
	lines := dbLines(t, db)
	require.Less(t, len(lines), 400)
	data, err := os.ReadFile(db)
	require.NoError(t, err)
	require.True(t, len(data) > 0 && data[len(data)-1] == '\n', "the database ends in a torn line")

	var stdout, stderr bytes.Buffer
	code := run([]string{"compile", model, "--emit", "tir", "--tuning-db", db, "--threads", "2"}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	require.Regexp(t, `tuning db .*: [12] of 2 kernels use tuned schedules`, stderr.String())
	require.Equal(t, 1, strings.Count(stderr.String(), "\n"), "one summary line: %s", stderr.String())
}

// --in-model re-measures each task's best schedules inside the compiled
// model after the search, appends those records (not counted as trials:
// a rerun spends no trial), and compile applies them.
func TestTuneInModel(t *testing.T) {
	_, model, db := tuneFixture(t)
	args := []string{model, "--trials", "10", "--db", db, "--batch", "4", "--repeats", "2", "--min-repeat-time", "2ms", "--in-model", "3", "--in-model-rounds", "2"}
	out, err := tuneCmd(t, args...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Regexp(t, `in-model rerank: 2 tasks, 3 variants × 2 rounds; kernel time in the model: .* with the chosen schedules`, string(out))
	lines := dbLines(t, db)
	inModel := 0
	for _, l := range lines {
		if strings.Contains(l, `"in_model":`) {
			inModel++
		}
	}
	require.Equal(t, 6, inModel, "3 candidates of each task")
	require.Len(t, lines, 16)

	out, err = tuneCmd(t, args...).CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "10 of 10 trials recorded (0 this run)")
	require.Len(t, dbLines(t, db), 22, "a second rerank, no trial")

	var stdout, stderr bytes.Buffer
	code := run([]string{"compile", model, "--emit", "tir", "--tuning-db", db, "--threads", "2"}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	require.Contains(t, stderr.String(), "2 of 2 kernels use tuned schedules")

	code = run([]string{"tune", model, "--trials", "10", "--db", db, "--in-model", "-1"}, &stdout, &stderr)
	require.Equal(t, 1, code)
	require.Contains(t, stderr.String(), "--in-model must be at least 0")
}
