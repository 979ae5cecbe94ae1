package distributed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/autotune"
	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/pipeline"
	"github.com/tessera-ml/tessera/targets"
)

// twoTaskModel has two NPU kernels (a padded 3×3 and a 1×1
// convolution), measured in deterministic simulated cycles.
const twoTaskModel = `module {
  func.func @main(%x: tensor<1x32x14x14xf32>, %w: tensor<32x32x3x3xf32>, %b: tensor<32xf32>, %w2: tensor<16x32x1x1xf32>, %b2: tensor<16xf32>) -> tensor<1x16x14x14xf32> {
    %0 = graph.conv2d %x, %w, %b {pads = [1, 1, 1, 1]} : (tensor<1x32x14x14xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>) -> tensor<1x32x14x14xf32>
    %1 = graph.relu %0 : tensor<1x32x14x14xf32>
    %2 = graph.conv2d %1, %w2, %b2 : (tensor<1x32x14x14xf32>, tensor<16x32x1x1xf32>, tensor<16xf32>) -> tensor<1x16x14x14xf32>
    func.return %2 : tensor<1x16x14x14xf32>
  }
}
`

// npuTasks are the two tasks of twoTaskModel on the default NPU.
func npuTasks(t *testing.T) ([]*autotune.Task, targets.Target) {
	t.Helper()
	target, err := targets.New("npu", targets.Options{Threads: 2})
	require.NoError(t, err)
	m, err := graphir.ParseString("two.mlir", twoTaskModel)
	require.NoError(t, err)
	tasks, err := pipeline.Tasks(m, target, nil)
	require.NoError(t, err)
	require.Len(t, tasks, 2)
	return tasks, target
}

// startBroker starts an embedded JetStream server for the test and
// returns its URL.
func startBroker(t *testing.T) string {
	t.Helper()
	e, err := StartEmbedded("127.0.0.1", 0, t.TempDir())
	require.NoError(t, err)
	t.Cleanup(e.Shutdown)
	return e.URL()
}

func connect(t *testing.T, url, name string) *Broker {
	t.Helper()
	b, err := Connect(context.Background(), url, "", name)
	require.NoError(t, err)
	t.Cleanup(b.Close)
	return b
}

// syncBuffer is a log shared by goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// startWorker runs a worker in this process on its own connection until
// the test ends (or the returned stop is called).
func startWorker(t *testing.T, url string, opts WorkerOptions) (*Worker, func()) {
	t.Helper()
	b := connect(t, url, opts.Name)
	w, err := NewWorker(b, opts)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			require.NoError(t, <-done)
		})
	}
	t.Cleanup(stop)
	return w, stop
}

// tune runs an 8-trial job (batches of 4, seed 1, the given lookahead)
// on the tasks with the given measurer factory (nil: local) and returns
// the database's candidates in record order and the best latency per
// task.
func tune(t *testing.T, tasks []*autotune.Task, target targets.Target, lookahead int, measurer func(autotune.MeasureOptions) (autotune.BatchMeasurer, error)) ([]string, []float64, *autotune.Status) {
	t.Helper()
	db, _, err := autotune.OpenDatabase(filepath.Join(t.TempDir(), "t.jsonl"))
	require.NoError(t, err)
	defer db.Close()
	st, err := autotune.Tune(tasks, db, autotune.Options{Target: target, Trials: 8, BatchSize: 4, Seed: 1, SeedDefault: true, Lookahead: lookahead, Measurer: measurer, Measure: autotune.MeasureOptions{Builders: 1}})
	require.NoError(t, err)
	var cands []string
	for _, task := range tasks {
		for _, r := range db.Records(task.Key, target.Key()) {
			require.True(t, r.OK(), "%s: %s", r.Error, r.ErrorMsg)
			cands = append(cands, r.Candidate)
		}
	}
	var best []float64
	for _, ts := range st.Tasks {
		best = append(best, ts.Best)
	}
	return cands, best, st
}

// Two workers measure a 2-task job; simulated cycles are deterministic
// and results are recorded in candidate order, so the job records the
// same candidates and finds the same best as a local job, with rounds
// awaited one at a time and with the next round queued ahead
// (Options.Lookahead, Measurer.Submit).
func TestDistributedTuneMatchesLocal(t *testing.T) {
	tasks, target := npuTasks(t)
	for _, lookahead := range []int{0, 1} {
		t.Run(fmt.Sprintf("lookahead%d", lookahead), func(t *testing.T) {
			url := startBroker(t) // a fresh one: no results of the other run
			localCands, localBest, _ := tune(t, tasks, target, lookahead, nil)
			var log syncBuffer
			w1, stop1 := startWorker(t, url, WorkerOptions{Name: "w1", Target: target, Log: &log})
			w2, stop2 := startWorker(t, url, WorkerOptions{Name: "w2", Target: target, Log: &log})
			defer stop1()
			defer stop2()
			b := connect(t, url, "tuner")
			var tunerLog syncBuffer
			cands, best, st := tune(t, tasks, target, lookahead, func(mo autotune.MeasureOptions) (autotune.BatchMeasurer, error) {
				return NewMeasurer(context.Background(), b, MeasurerOptions{Measure: mo, Log: &tunerLog})
			})
			assert.Equal(t, localCands, cands, "the same candidates in the same order")
			assert.Equal(t, localBest, best)
			require.NotNil(t, st.Fleet)
			assert.Equal(t, 0, st.Fleet.InFlight)
			assert.Equal(t, 8, w1.Served()+w2.Served(), "every trial measured once: %s", log.String())
			assert.Empty(t, tunerLog.String())
		})
	}
}

// A measurement longer than the ack wait is kept alive by in-progress
// acknowledgements: it is delivered once, and the idle second worker
// never gets it.
func TestHeartbeatKeepsLongJob(t *testing.T) {
	tasks, target := npuTasks(t)
	url := startBroker(t)
	var log syncBuffer
	w1, _ := startWorker(t, url, WorkerOptions{Name: "w1", Target: target, AckWait: time.Second, Hold: 2500 * time.Millisecond, Log: &log})
	w2, _ := startWorker(t, url, WorkerOptions{Name: "w2", Target: target, AckWait: time.Second, Hold: 2500 * time.Millisecond, Log: &log})
	b := connect(t, url, "tuner")
	m, err := NewMeasurer(context.Background(), b, MeasurerOptions{Measure: autotune.MeasureOptions{Target: target}})
	require.NoError(t, err)
	defer m.Close()
	c, err := autotune.SampleCandidate(tasks[1], target.Rules(), 1)
	require.NoError(t, err)
	var res []autotune.Result
	m.Measure(tasks[1], []*autotune.Candidate{c}, nil, func(_ int, r autotune.Result) { res = append(res, r) })
	require.Len(t, res, 1)
	assert.Empty(t, res[0].Error, res[0].Msg)
	assert.Equal(t, 1, w1.Served()+w2.Served(), log.String())
	assert.Equal(t, 0, m.Fleet().Redelivered)
	assert.Equal(t, 1, strings.Count(log.String(), "measuring task"), log.String())
}

// Poison messages — truncated JSON, a job for an unknown target, a trace
// that does not apply to its kernel — are terminated with a logged
// reason, the queue keeps flowing (a good job behind them is measured),
// and a job whose identity is readable is answered with a build error.
func TestPoisonMessages(t *testing.T) {
	tasks, target := npuTasks(t)
	url := startBroker(t)
	b := connect(t, url, "tuner")
	ctx := context.Background()
	key := target.Key()
	tok := TargetToken(key)
	job := func(task *autotune.Task, c *autotune.Candidate) *Job {
		tr, err := c.Trace.JSON()
		require.NoError(t, err)
		m := &Measurer{key: key, kernels: map[string]string{}}
		data, err := m.job(task, c, JobID(key, c.Key))
		require.NoError(t, err)
		var j Job
		require.NoError(t, json.Unmarshal(data, &j))
		j.Trace = tr
		return &j
	}
	publish := func(subject string, v any) {
		data, ok := v.([]byte)
		if !ok {
			var err error
			data, err = json.Marshal(v)
			require.NoError(t, err)
		}
		_, err := b.JS.Publish(ctx, subject, data)
		require.NoError(t, err)
	}
	c0, err := autotune.SampleCandidate(tasks[0], target.Rules(), 1)
	require.NoError(t, err)
	require.NotEqual(t, tasks[0].Key, tasks[1].Key)
	c1, err := autotune.SampleCandidate(tasks[1], target.Rules(), 1)
	require.NoError(t, err)

	good := job(tasks[1], c1)
	data, _ := json.Marshal(good)
	publish(jobsPrefix+tok+".truncated", data[:len(data)/2])
	unknown := job(tasks[1], c1)
	unknown.Target = "tpu -v=9"
	unknown.ID = JobID(unknown.Target, unknown.Candidate)
	publish(jobSubject(JobID(key, unknown.Candidate))+"x", unknown)
	misfit := job(tasks[1], c0) // a trace naming a block the kernel lacks
	misfit.Candidate, misfit.ID = c0.Key, JobID(key, c0.Key)
	misfit.Trace = json.RawMessage(`{"func":"fused_1","insts":[{"kind":"get_block","attrs":{"name":"no_such_block"},"outputs":["b0"]}]}`)
	publish(jobSubject(misfit.ID), misfit)
	publish(jobSubject(good.ID), good)

	var log syncBuffer
	w, _ := startWorker(t, url, WorkerOptions{Name: "w", Target: target, Log: &log})
	require.Eventually(t, func() bool {
		_, err := b.Results.GetLastMsgForSubject(ctx, resultSubject(good.ID))
		return err == nil
	}, 60*time.Second, 50*time.Millisecond, log.String())
	assert.Equal(t, 3, w.Terminated(), log.String())
	assert.Equal(t, 1, w.Served())
	out := log.String()
	assert.Contains(t, out, "malformed job: unexpected end of JSON input")
	assert.Contains(t, out, `job for target "tpu -v=9"`)
	assert.Contains(t, out, "the trace does not apply to the kernel")
	msg, err := b.Results.GetLastMsgForSubject(ctx, resultSubject(misfit.ID))
	require.NoError(t, err)
	r, err := DecodeResult(msg.Data)
	require.NoError(t, err)
	assert.Equal(t, autotune.ErrBuild, r.Error)
	assert.Contains(t, r.Msg, "rejected by worker: the trace does not apply")
	require.Eventually(t, func() bool {
		info, err := b.Jobs.Info(ctx)
		return err == nil && info.State.Msgs == 0
	}, 10*time.Second, 50*time.Millisecond, "terminated and answered jobs leave the work queue")
}

// The tuner refuses a result measured on another host than the one it
// accepts (logged: measurements from different machines are not
// comparable) and records the matching worker's; a worker leaves a job
// that asks for another host to others.
func TestHostFingerprintRefused(t *testing.T) {
	tasks, target := npuTasks(t)
	url := startBroker(t)
	b := connect(t, url, "tuner")
	ctx := context.Background()
	var tunerLog syncBuffer
	host := HostFingerprint(target.Key())
	m, err := NewMeasurer(ctx, b, MeasurerOptions{Measure: autotune.MeasureOptions{Target: target}, Host: host, Log: &tunerLog})
	require.NoError(t, err)
	defer m.Close()
	c, err := autotune.SampleCandidate(tasks[1], target.Rules(), 1)
	require.NoError(t, err)
	id := JobID(target.Key(), c.Key)
	var res []autotune.Result
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Measure(tasks[1], []*autotune.Candidate{c}, nil, func(_ int, r autotune.Result) { res = append(res, r) })
	}()
	// an impostor answers while no worker runs
	require.Eventually(t, func() bool {
		_, err := b.Jobs.GetLastMsgForSubject(ctx, jobSubject(id))
		return err == nil
	}, 10*time.Second, 20*time.Millisecond)
	data, _ := json.Marshal(JobResult{Version: MessageVersion, ID: id, Candidate: c.Key, Seconds: []float64{1e-9}, Worker: "impostor", Host: `cpu="Other CPU" cores=64 target="x"`})
	_, err = b.JS.Publish(ctx, resultSubject(id), data)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return strings.Contains(tunerLog.String(), "refusing") }, 10*time.Second, 20*time.Millisecond)
	var log syncBuffer
	_, stop := startWorker(t, url, WorkerOptions{Name: "w", Target: target, Log: &log})
	<-done
	require.Len(t, res, 1)
	assert.Equal(t, host, res[0].Host)
	assert.NotEqual(t, 1e-9, res[0].Seconds[0])
	assert.Contains(t, tunerLog.String(), `refusing the result of candidate `+c.Key[:12]+` from worker impostor: its host cpu="Other CPU" cores=64`)
	assert.Contains(t, tunerLog.String(), "measurements from different machines are not comparable")
	stop()

	// a worker on this host leaves a job pinned to another host
	other := &Job{}
	m2 := &Measurer{key: target.Key(), kernels: map[string]string{}, host: `cpu="Other CPU" cores=64 target="x"`}
	c2, err := autotune.SampleCandidate(tasks[1], target.Rules(), 2)
	require.NoError(t, err)
	data, err = m2.job(tasks[1], c2, JobID(target.Key(), c2.Key))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, other))
	_, err = b.JS.Publish(ctx, jobSubject(other.ID), data)
	require.NoError(t, err)
	startWorker(t, url, WorkerOptions{Name: "w2", Target: target, Log: &log})
	require.Eventually(t, func() bool { return strings.Contains(log.String(), "leaving job "+c2.Key[:12]) }, 20*time.Second, 50*time.Millisecond)
	_, err = b.Jobs.GetLastMsgForSubject(ctx, jobSubject(other.ID))
	assert.NoError(t, err, "the job stays queued for a matching host")
}

// With no live worker for its target, the tuner says so, naming the
// workers of other target strings, and stop ends the wait.
func TestNoWorkerWarning(t *testing.T) {
	tasks, target := npuTasks(t)
	url := startBroker(t)
	other, err := targets.New("npu", targets.Options{Threads: 1})
	require.NoError(t, err)
	require.NotEqual(t, target.Key(), other.Key())
	var wlog syncBuffer
	startWorker(t, url, WorkerOptions{Name: "elsewhere", Target: other, Log: &wlog})
	b := connect(t, url, "tuner")
	var log syncBuffer
	m, err := NewMeasurer(context.Background(), b, MeasurerOptions{Measure: autotune.MeasureOptions{Target: target}, Log: &log, NoWorkerWarning: 200 * time.Millisecond})
	require.NoError(t, err)
	defer m.Close()
	c, err := autotune.SampleCandidate(tasks[1], target.Rules(), 1)
	require.NoError(t, err)
	start := time.Now()
	n := 0
	m.Measure(tasks[1], []*autotune.Candidate{c}, func() bool { return time.Since(start) > 1500*time.Millisecond }, func(int, autotune.Result) { n++ })
	assert.Equal(t, 0, n)
	assert.Equal(t, autotune.Fleet{}, m.Fleet(), "no worker, nothing in flight after the stop")
	assert.Contains(t, log.String(), `no live worker for target "`+target.Key()+`"`)
	assert.Contains(t, log.String(), "live workers of other targets (a worker serves only its exact target string): elsewhere ("+other.Key()+")")
	_, err = b.Jobs.GetLastMsgForSubject(context.Background(), jobSubject(JobID(target.Key(), c.Key)))
	assert.NoError(t, err, "the job stays queued")
}

// Results published twice (a redelivered job measured again, a
// duplicate) and out of order reach the job once each, in candidate
// order.
func TestDuplicateResultsOnce(t *testing.T) {
	tasks, target := npuTasks(t)
	url := startBroker(t)
	b := connect(t, url, "tuner")
	ctx := context.Background()
	m, err := NewMeasurer(ctx, b, MeasurerOptions{Measure: autotune.MeasureOptions{Target: target}})
	require.NoError(t, err)
	defer m.Close()
	var cands []*autotune.Candidate
	for seed := int64(1); len(cands) < 2; seed++ {
		c, err := autotune.SampleCandidate(tasks[0], target.Rules(), seed)
		require.NoError(t, err)
		if len(cands) == 0 || cands[0].Key != c.Key {
			cands = append(cands, c)
		}
	}
	go func() {
		for _, k := range []int{1, 1, 0, 0} {
			id := JobID(target.Key(), cands[k].Key)
			for {
				if _, err := b.Jobs.GetLastMsgForSubject(ctx, jobSubject(id)); err == nil {
					break
				}
				time.Sleep(10 * time.Millisecond)
			}
			data, _ := json.Marshal(JobResult{Version: MessageVersion, ID: id, Candidate: cands[k].Key, Seconds: []float64{float64(k+1) * 1e-6}, Worker: "w", Host: "h"})
			_, _ = b.JS.Publish(ctx, resultSubject(id), data) // no message id: not deduplicated by the broker
			time.Sleep(50 * time.Millisecond)
		}
	}()
	var got []int
	m.Measure(tasks[0], cands, nil, func(i int, r autotune.Result) {
		got = append(got, i)
		assert.Equal(t, float64(i+1)*1e-6, r.Seconds[0])
	})
	time.Sleep(200 * time.Millisecond) // the late duplicate of candidate 0
	assert.Equal(t, []int{0, 1}, got)
	assert.Equal(t, 0, m.Fleet().InFlight)
}

// TestEnsureStreamConcurrently: clients creating the same stream on a
// fresh broker at the same moment all get it, whichever of them creates
// it (a creation racing another is answered "stream name already in use"
// or "subjects overlap with an existing stream").
func TestEnsureStreamConcurrently(t *testing.T) {
	for round := range 5 {
		url := startBroker(t)
		const n = 8
		js := make([]jetstream.JetStream, n)
		for i := range n {
			nc, err := nats.Connect(url)
			require.NoError(t, err)
			t.Cleanup(nc.Close)
			js[i], err = jetstream.New(nc)
			require.NoError(t, err)
		}
		cfg := jetstream.StreamConfig{Name: "RACE", Subjects: []string{"race.>"}, Storage: jetstream.FileStorage}
		errs := make([]error, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, errs[i] = ensureStream(context.Background(), js[i], cfg)
			}()
		}
		close(start)
		wg.Wait()
		for i, err := range errs {
			assert.NoError(t, err, "round %d, client %d", round, i)
		}
	}
}
