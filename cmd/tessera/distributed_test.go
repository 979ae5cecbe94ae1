package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/autotune"
	"github.com/tessera-ml/tessera/autotune/distributed"
	"github.com/tessera-ml/tessera/pipeline"
	"github.com/tessera-ml/tessera/targets"
)

// distModel has two NPU kernels (a padded 3×3 and a 1×1 convolution),
// whose measurements are deterministic simulated cycles.
const distModel = `module {
  func.func @main(%x: tensor<1x32x14x14xf32>, %w: tensor<32x32x3x3xf32>, %b: tensor<32xf32>, %w2: tensor<16x32x1x1xf32>, %b2: tensor<16xf32>) -> tensor<1x16x14x14xf32> {
    %0 = graph.conv2d %x, %w, %b {pads = [1, 1, 1, 1]} : (tensor<1x32x14x14xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>) -> tensor<1x32x14x14xf32>
    %1 = graph.relu %0 : tensor<1x32x14x14xf32>
    %2 = graph.conv2d %1, %w2, %b2 : (tensor<1x32x14x14xf32>, tensor<16x32x1x1xf32>, tensor<16xf32>) -> tensor<1x16x14x14xf32>
    func.return %2 : tensor<1x16x14x14xf32>
  }
}
`

// cliCmd is `tessera ARGS` run by the test binary.
func cliCmd(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), cliEnv+"=1", "TESSERA_NUM_THREADS=2")
	return cmd
}

// lineLog collects a process's output and signals the first line
// containing a word.
type lineLog struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	word  string
	found chan struct{}
	once  sync.Once
}

func newLineLog(word string) *lineLog { return &lineLog{word: word, found: make(chan struct{})} }

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	if l.word != "" && strings.Contains(l.buf.String(), l.word) {
		l.once.Do(func() { close(l.found) })
	}
	return len(p), nil
}

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// waitFound waits (at most 30 s) until l has seen its word.
func waitFound(t *testing.T, l *lineLog) {
	t.Helper()
	select {
	case <-l.found:
	case <-time.After(30 * time.Second):
		t.Fatalf("no %q in: %s", l.word, l.String())
	}
}

// waitFor waits (at most 30 s) until l holds text.
func waitFor(t *testing.T, l *lineLog, text string) {
	t.Helper()
	require.Eventually(t, func() bool { return strings.Contains(l.String(), text) }, 30*time.Second, 10*time.Millisecond, "no %q", text)
}

// startCLIWorker starts `tessera worker` on the broker; it is stopped
// with SIGTERM (and must exit 0) when the test ends unless killed.
func startCLIWorker(t *testing.T, url, name string, log io.Writer, extra ...string) *exec.Cmd {
	t.Helper()
	cmd := cliCmd(t, append([]string{"worker", "--broker", url, "--target", "npu", "--name", name, "--ack-wait", "2s"}, extra...)...)
	cmd.Stdout, cmd.Stderr = log, log
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if cmd.ProcessState != nil {
			return
		}
		_ = cmd.Process.Signal(syscall.SIGTERM)
		err := cmd.Wait()
		if ee, ok := err.(*exec.ExitError); ok && ee.Sys().(syscall.WaitStatus).Signaled() {
			return // SIGKILLed by the test
		}
		assert.NoError(t, err, "worker %s did not exit cleanly on SIGTERM", name)
	})
	return cmd
}

// distRecord is what the test reads of a record.
type distRecord struct {
	Workload, Candidate, Host, Error string
	Seconds                          []float64
}

func readDistRecords(t *testing.T, path string) []distRecord {
	t.Helper()
	var out []distRecord
	for _, l := range dbLines(t, path) {
		var r distRecord
		require.NoError(t, json.Unmarshal([]byte(l), &r))
		out = append(out, r)
	}
	return out
}

// distSummary checks the records of a finished job — n records, no
// candidate twice, every one measured on a worker — and returns the
// candidates in record order and the best latency per workload.
func distSummary(t *testing.T, path string, n int) ([]string, map[string]float64) {
	t.Helper()
	recs := readDistRecords(t, path)
	require.Len(t, recs, n)
	seen := map[string]bool{}
	var cands []string
	best := map[string]float64{}
	for _, r := range recs {
		require.False(t, seen[r.Candidate], "candidate %s recorded twice", r.Candidate)
		seen[r.Candidate] = true
		require.Empty(t, r.Error)
		require.Contains(t, r.Host, `target="npu `)
		cands = append(cands, r.Candidate)
		if b, ok := best[r.Workload]; !ok || r.Seconds[0] < b {
			best[r.Workload] = r.Seconds[0]
		}
	}
	return cands, best
}

// writeDistModel writes distModel into a fresh folder and returns its
// path and a database path beside it.
func writeDistModel(t *testing.T) (model, db string) {
	t.Helper()
	dir := t.TempDir()
	model = filepath.Join(dir, "m.mlir")
	require.NoError(t, os.WriteFile(model, []byte(distModel), 0o644))
	return model, filepath.Join(dir, "t.jsonl")
}

// startTune starts `tessera ARGS...` (a tune) with its standard output
// and error in the returned buffer.
func startTune(t *testing.T, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := cliCmd(t, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	return cmd, &out
}

// distTune runs `tessera tune --broker` on distModel: 16 trials in
// batches of 4, seed 1.
func distTune(t *testing.T, url, db string) string {
	t.Helper()
	model, _ := writeDistModel(t)
	cmd := cliCmd(t, "tune", model, "--target", "npu", "--trials", "16", "--batch", "4", "--seed", "1", "--db", db, "--broker", url)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	require.Contains(t, string(out), "16 of 16 trials recorded")
	return string(out)
}

// checkDistributed is the Must-show scenario on the brokers newBroker
// starts (one per job, so no job reuses another's results): two workers
// complete a 2-task job; then, with one worker SIGKILLed while it holds
// a job, that job is redelivered after the ack wait and measured once by
// the other worker, no record is lost or duplicated, and the job records
// the same candidates and the same best latencies as the job without the
// kill.
func checkDistributed(t *testing.T, newBroker func() string) {
	dir := t.TempDir()
	url := newBroker()
	var logs [2]*lineLog
	for i := range logs {
		logs[i] = newLineLog(": serving ")
		startCLIWorker(t, url, fmt.Sprintf("w%d", i), logs[i])
	}
	for _, l := range logs {
		waitFound(t, l)
	}
	clean := filepath.Join(dir, "clean.jsonl")
	distTune(t, url, clean)
	cands, best := distSummary(t, clean, 16)
	for i, l := range logs {
		assert.Contains(t, l.String(), "measuring task", "worker %d took no job", i)
	}

	url = newBroker()
	victimLog, survivorLog := newLineLog("measuring task"), newLineLog(": serving ")
	victim := startCLIWorker(t, url, "victim", victimLog, "--hold", "30s")
	waitFor(t, victimLog, ": serving ")
	startCLIWorker(t, url, "survivor", survivorLog)
	waitFound(t, survivorLog)
	killed := make(chan string, 1)
	go func() {
		<-victimLog.found
		_ = victim.Process.Signal(syscall.SIGKILL)
		_ = victim.Wait()
		killed <- victimLog.String()
	}()
	killedDB := filepath.Join(dir, "killed.jsonl")
	out := distTune(t, url, killedDB)
	var vlog string
	select {
	case vlog = <-killed:
	case <-time.After(10 * time.Second):
		t.Fatalf("the victim never took a job: %s", victimLog.String())
	}
	k := strings.Index(vlog, "candidate ")
	require.GreaterOrEqual(t, k, 0, vlog)
	lost := strings.Fields(vlog[k+len("candidate "):])[0]
	slog := survivorLog.String()
	assert.Equal(t, 1, strings.Count(slog, "candidate "+lost+" (delivery 2)"), "the killed worker's job is redelivered and measured once: %s", slog)
	assert.Equal(t, 1, strings.Count(slog, "candidate "+lost), slog)
	assert.Contains(t, out, "redelivered 1")
	kcands, kbest := distSummary(t, killedDB, 16)
	assert.Equal(t, cands, kcands, "the same trials as without the kill")
	assert.Equal(t, best, kbest, "the same best latencies as without the kill")
}

// The Must-show test on an embedded JetStream server (one per job).
func TestDistributedWorkersEmbedded(t *testing.T) {
	checkDistributed(t, func() string {
		e, err := distributed.StartEmbedded("127.0.0.1", 0, t.TempDir())
		require.NoError(t, err)
		t.Cleanup(e.Shutdown)
		return e.URL()
	})
}

// The Must-show test on Debian's nats-server -js, started by the test.
func TestDistributedWorkersNATSServer(t *testing.T) {
	bin := natsServerBinary()
	if bin == "" {
		t.Skip("nats-server not installed")
	}
	checkDistributed(t, func() string { return startNATSServer(t, bin) })
}

// natsServerBinary is the nats-server executable: on PATH, else Debian's
// /usr/sbin/nats-server (not on a normal user's PATH); "" when absent.
func natsServerBinary() string {
	for _, name := range []string{"nats-server", "/usr/sbin/nats-server"} {
		if bin, err := exec.LookPath(name); err == nil {
			return bin
		}
	}
	return ""
}

// startNATSServer starts `nats-server -js` on a free port with its store
// in a temporary folder, stopped when the test ends, and returns its URL.
func startNATSServer(t *testing.T, bin string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	cmd := exec.Command(bin, "-js", "-a", "127.0.0.1", "-p", fmt.Sprint(port), "-sd", t.TempDir())
	var log lineLog
	cmd.Stdout, cmd.Stderr = &log, &log
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err == nil
	}, 10*time.Second, 20*time.Millisecond, "nats-server did not listen: %s", log.String())
	return "nats://" + addr
}

// A tuner pointed at no broker fails with one line naming it; a worker
// without --broker says it is required.
func TestDistributedBadBroker(t *testing.T) {
	model, db := writeDistModel(t)
	var out, errs bytes.Buffer
	code := run([]string{"tune", model, "--target", "npu", "--trials", "4", "--batch", "2", "--db", db, "--broker", "nats://127.0.0.1:1"}, &out, &errs)
	assert.Equal(t, 1, code)
	assert.Regexp(t, `^--broker: broker nats://127.0.0.1:1: .*\n$`, errs.String())
	errs.Reset()
	code = run([]string{"worker", "--target", "npu"}, &out, &errs)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs.String(), "--broker is required")
	errs.Reset()
	code = run([]string{"tune", model, "--trials", "4", "--db", db, "--broker", "embedded:x"}, &out, &errs)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs.String(), "not a number")
}

// A tuner SIGKILLed mid-job and restarted on the same database and
// broker continues: no candidate is measured twice by the workers (the
// restarted tuner uses the results of the killed run's jobs, or waits for
// those still queued, instead of publishing them again), and none is
// recorded twice.
func TestDistributedTunerRestart(t *testing.T) {
	e, err := distributed.StartEmbedded("127.0.0.1", 0, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(e.Shutdown)
	url := e.URL()
	log := newLineLog("")
	startCLIWorker(t, url, "w", log, "--hold", "300ms")
	model, db := writeDistModel(t)
	args := []string{"tune", model, "--target", "npu", "--trials", "16", "--batch", "4", "--seed", "1", "--strategy", "random", "--db", db, "--broker", url}
	first, _ := startTune(t, args...)
	waitLines(t, db, 5, time.Minute)
	require.NoError(t, first.Process.Signal(syscall.SIGKILL))
	_ = first.Wait()
	before := dbLines(t, db)
	require.Less(t, len(before), 16, "the job finished before the kill")

	out2, err := cliCmd(t, args...).CombinedOutput()
	require.NoError(t, err, "%s", out2)
	after := dbLines(t, db)
	if !strings.Contains(string(out2), "16 of 16 trials recorded") {
		// the random search ran out of fresh samples of the small spaces
		require.Contains(t, string(out2), fmt.Sprintf("every task's design space is measured (%d trials)", len(after)))
	}
	require.Equal(t, before, after[:len(before)], "a finished record changed or was lost")
	cands, _ := distSummary(t, db, len(after))
	measured := map[string]int{}
	for _, l := range strings.Split(log.String(), "\n") {
		if i := strings.Index(l, "measuring task"); i >= 0 {
			f := strings.Fields(l[i:])
			measured[f[4]]++
		}
	}
	for c, n := range measured {
		assert.Equal(t, 1, n, "candidate %s measured %d times: %s", c, n, log.String())
	}
	for _, c := range cands {
		assert.Contains(t, measured, c[:12], "recorded but never measured")
	}
	t.Logf("%d records before the kill, %d candidates measured by the worker for %d records", len(before), len(measured), len(after))
}

// SIGTERM while a worker holds a job: it finishes that job (the tuner
// records it with no redelivery) and exits 0; a second worker finishes
// the job.
func TestDistributedWorkerSIGTERM(t *testing.T) {
	e, err := distributed.StartEmbedded("127.0.0.1", 0, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(e.Shutdown)
	url := e.URL()
	log := newLineLog("measuring task")
	w := startCLIWorker(t, url, "w", log, "--hold", "1s")
	go func() {
		<-log.found
		_ = w.Process.Signal(syscall.SIGTERM)
	}()
	model, db := writeDistModel(t)
	tune, out := startTune(t, "tune", model, "--target", "npu", "--trials", "4", "--batch", "4", "--seed", "1", "--db", db, "--broker", url)
	require.NoError(t, w.Wait(), "the worker exits 0 on SIGTERM: %s", log.String())
	assert.Contains(t, log.String(), "stopping after the job in hand")
	assert.Contains(t, log.String(), "stopped after 1 jobs")
	startCLIWorker(t, url, "w2", newLineLog(""))
	require.NoError(t, tune.Wait(), out.String())
	distSummary(t, db, 4)
	assert.Contains(t, out.String(), "redelivered 0 | ETA 0s\n", "the job in hand was finished, not redelivered")
}

// --broker embedded runs the broker in the tuner and prints how to start
// a worker on it.
func TestDistributedEmbeddedBroker(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	model, db := writeDistModel(t)
	tune := cliCmd(t, "tune", model, "--target", "npu", "--trials", "4", "--batch", "2", "--seed", "1", "--db", db, "--broker", fmt.Sprintf("embedded:%d", port))
	out := newLineLog("--target npu\n")
	tune.Stdout, tune.Stderr = out, out
	require.NoError(t, tune.Start())
	select {
	case <-out.found:
	case <-time.After(30 * time.Second):
		t.Fatalf("no worker hint: %s", out.String())
	}
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	assert.Contains(t, out.String(), "tessera worker --broker "+url+" --target npu\n")
	startCLIWorker(t, url, "w", newLineLog(""))
	require.NoError(t, tune.Wait(), out.String())
	distSummary(t, db, 4)
	assert.DirExists(t, db+".jetstream")
}

// A broker restarted mid-job (same port, same JetStream store): tuner and
// worker reconnect, the job completes, and no trial is lost or recorded
// twice.
func TestDistributedBrokerRestart(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	store := t.TempDir()
	e, err := distributed.StartEmbedded("127.0.0.1", port, store)
	require.NoError(t, err)
	url := e.URL()
	log := newLineLog("")
	startCLIWorker(t, url, "w", log, "--hold", "100ms")
	model, db := writeDistModel(t)
	tune, out := startTune(t, "tune", model, "--target", "npu", "--trials", "16", "--batch", "4", "--seed", "1", "--db", db, "--broker", url)
	waitLines(t, db, 5, time.Minute)
	e.Shutdown()
	time.Sleep(300 * time.Millisecond)
	e, err = distributed.StartEmbedded("127.0.0.1", port, store)
	require.NoError(t, err)
	t.Cleanup(e.Shutdown)
	require.NoError(t, tune.Wait(), out.String())
	distSummary(t, db, 16)
	assert.Contains(t, out.String(), "16 of 16 trials recorded")
	t.Logf("%d measurements for 16 records", strings.Count(log.String(), "measuring task"))
}

// A resumed distributed job accepts the host of the database's earlier
// distributed records.
func TestRecordedHost(t *testing.T) {
	model, dbPath := writeDistModel(t)
	m, err := loadModel(model, nil)
	require.NoError(t, err)
	target, err := targets.New("npu", targets.Options{Threads: 2})
	require.NoError(t, err)
	tasks, err := pipeline.Tasks(m, target, nil)
	require.NoError(t, err)
	db, _, err := autotune.OpenDatabase(dbPath)
	require.NoError(t, err)
	defer db.Close()
	assert.Equal(t, "", recordedHost(tasks, db, target.Key()))
	c, err := autotune.SampleCandidate(tasks[1], target.Rules(), 1)
	require.NoError(t, err)
	require.NoError(t, db.Append(&autotune.Record{Workload: tasks[1].Key, Target: target.Key(), Candidate: c.Key, Trace: c.Trace, Seconds: []float64{1e-6}}))
	assert.Equal(t, "", recordedHost(tasks, db, target.Key()), "a local record pins nothing")
	c2, err := autotune.SampleCandidate(tasks[1], target.Rules(), 2)
	require.NoError(t, err)
	require.NoError(t, db.Append(&autotune.Record{Workload: tasks[1].Key, Target: target.Key(), Candidate: c2.Key, Trace: c2.Trace, Seconds: []float64{1e-6}, Host: "h1"}))
	assert.Equal(t, "h1", recordedHost(tasks, db, target.Key()))
}
