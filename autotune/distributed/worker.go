package distributed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tessera-ml/tessera/autotune"
	"github.com/tessera-ml/tessera/schedule"
	"github.com/tessera-ml/tessera/targets"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// WorkerOptions configure a Worker.
type WorkerOptions struct {
	// Name identifies the worker in the registry and in results (default:
	// the host name and process id).
	Name string
	// Target is what the worker builds and measures for; it serves the
	// jobs whose target string is Target.Key().
	Target targets.Target
	// AckWait is how long the broker waits for an acknowledgement (or a
	// heartbeat) before redelivering a job to another worker (default
	// 30 s); the worker heartbeats every AckWait/3 while it measures.
	AckWait time.Duration
	// Hold delays each job this long after taking it, heartbeating, before
	// measuring it (tests kill a worker mid-measurement this way).
	Hold time.Duration
	// WorkerCommand starts the local builder and runner processes
	// (autotune.MeasureOptions.WorkerCommand; default this executable).
	WorkerCommand []string
	// Log receives one line per job and per rejected message.
	Log io.Writer
}

// Worker pulls the jobs of its target from the broker, builds and
// measures each with autotune's local builder and runner processes, and
// publishes the results.
type Worker struct {
	b     *Broker
	opts  WorkerOptions
	key   string // target string
	token string
	host  string // HostFingerprint
	meas  map[MeasureSpec]*autotune.Measurer
	// served counts the jobs answered with a measurement, terminated the
	// messages rejected as poison.
	served, terminated atomic.Int64
}

// Served is the number of jobs answered with a measurement so far.
func (w *Worker) Served() int { return int(w.served.Load()) }

// Terminated is the number of messages rejected as poison so far.
func (w *Worker) Terminated() int { return int(w.terminated.Load()) }

var nameRE = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// NewWorker makes a worker serving b. Errors: no target.
func NewWorker(b *Broker, opts WorkerOptions) (*Worker, error) {
	if opts.Target == nil {
		return nil, errors.New("worker: no target")
	}
	if opts.AckWait <= 0 {
		opts.AckWait = 30 * time.Second
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	opts.Name = nameRE.ReplaceAllString(opts.Name, "_")
	key := opts.Target.Key()
	return &Worker{b: b, opts: opts, key: key, token: TargetToken(key), host: HostFingerprint(key), meas: map[MeasureSpec]*autotune.Measurer{}}, nil
}

// Host is the worker's host fingerprint.
func (w *Worker) Host() string { return w.host }

// logf writes one log line.
func (w *Worker) logf(format string, args ...any) {
	fmt.Fprintf(w.opts.Log, "tessera worker %s: "+format+"\n", append([]any{w.opts.Name}, args...)...)
}

// workerInfo is a worker's entry in the registry.
type workerInfo struct {
	Name   string `json:"name"`
	Host   string `json:"host"`
	Target string `json:"target"`
	Served int    `json:"served"`
}

// Run serves jobs until ctx is cancelled, then finishes the job in hand
// (a job taken but not started is nak'ed: redelivered at once to another
// worker), leaves the registry and returns nil. Errors: the jobs
// consumer cannot be created.
func (w *Worker) Run(ctx context.Context) error {
	cons, err := w.consumer(ctx)
	if err != nil {
		return fmt.Errorf("worker: jobs consumer: %v", err)
	}
	if aw := cons.CachedInfo().Config.AckWait; aw > 0 && aw != w.opts.AckWait {
		w.logf("the jobs consumer's ack wait is %v (set by the first worker of this target), not %v", aw, w.opts.AckWait)
		w.opts.AckWait = aw // heartbeat within the consumer's ack wait
	}
	regKey := w.token + "." + w.opts.Name
	register := func() {
		info, _ := json.Marshal(workerInfo{Name: w.opts.Name, Host: w.host, Target: w.key, Served: w.Served()})
		pctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, _ = w.b.Workers.Put(pctx, regKey, info)
	}
	register()
	stopBeat := every(WorkerTTL/3, register)
	defer func() {
		stopBeat()
		if w.b.NC.IsConnected() {
			dctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = w.b.Workers.Delete(dctx, regKey)
		}
		for _, m := range w.meas {
			m.Close()
		}
	}()
	w.logf("serving %s jobs (%s) as host %s", w.key, jobsPrefix+w.token+".>", w.host)
	for ctx.Err() == nil {
		batch, err := cons.Fetch(1, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			if ctx.Err() == nil {
				w.logf("fetching a job: %v (retrying)", err)
				sleep(ctx, time.Second)
			}
			continue
		}
		for msg := range batch.Messages() {
			if ctx.Err() != nil {
				_ = msg.Nak()
				continue
			}
			w.handle(msg)
		}
	}
	return nil
}

// consumer is the target's shared durable jobs consumer, created with
// this worker's ack wait when it does not exist yet.
func (w *Worker) consumer(ctx context.Context) (jetstream.Consumer, error) {
	name := workerDurable + w.token
	c, err := w.b.JS.Consumer(ctx, JobsStream, name)
	if !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return c, err
	}
	c, err = w.b.JS.CreateConsumer(ctx, JobsStream, jetstream.ConsumerConfig{
		Durable:       name,
		Description:   "Tessera workers for " + w.key,
		FilterSubject: jobsPrefix + w.token + ".>",
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       w.opts.AckWait,
		MaxDeliver:    -1,
		MaxAckPending: 10000,
	})
	if errors.Is(err, jetstream.ErrConsumerExists) {
		return w.b.JS.Consumer(ctx, JobsStream, name)
	}
	return c, err
}

// handle serves one job message: a poison message is terminated with a
// logged reason, a job for another host is left to other workers, any
// other is measured and answered.
func (w *Worker) handle(msg jetstream.Msg) {
	deliveries := uint64(1)
	if md, err := msg.Metadata(); err == nil {
		deliveries = md.NumDelivered
	}
	job, err := DecodeJob(msg.Data())
	if err == nil && job.Target != w.key {
		err = fmt.Errorf("job for target %q, this worker measures %q (unknown target)", job.Target, w.key)
	}
	if err != nil {
		w.term(msg, job, err)
		return
	}
	if job.Host != "" && job.Host != w.host {
		w.logf("leaving job %s to another worker: the tuner accepts only host %s, this is %s (measurements from different machines are not comparable)", short(job.Candidate), job.Host, w.host)
		_ = msg.NakWithDelay(5 * time.Second)
		return
	}
	task, cand, err := prepare(job, w.key)
	if err != nil {
		w.term(msg, job, err)
		return
	}
	stop := every(w.opts.AckWait/3, func() { _ = msg.InProgress() })
	w.logf("measuring task %s candidate %s (delivery %d)", job.Task, short(job.Candidate), deliveries)
	time.Sleep(w.opts.Hold)
	res := w.measure(task, cand, job.Measure)
	stop()
	r := &JobResult{Version: MessageVersion, ID: job.ID, Workload: job.Workload, Candidate: job.Candidate, Seconds: res.Seconds, Error: res.Error, Msg: res.Msg, Worker: w.opts.Name, Host: w.host, Deliveries: deliveries, Measure: job.Measure}
	w.served.Add(1) // before the tuner can see the result
	if err := w.publish(r); err != nil {
		w.served.Add(-1)
		w.logf("publishing the result of %s: %v (nak'ed: it will be measured again)", short(job.Candidate), err)
		_ = msg.Nak()
		return
	}
	actx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := msg.DoubleAck(actx); err != nil {
		w.logf("acknowledging %s: %v (the result is published; a redelivery is answered again)", short(job.Candidate), err)
	}
}

// term terminates a poison message (it is never redelivered) with a
// logged reason; a job whose identity is readable also gets a build
// error result, so the tuner waiting for it records the failed trial.
func (w *Worker) term(msg jetstream.Msg, job *Job, reason error) {
	seq := uint64(0)
	if md, err := msg.Metadata(); err == nil {
		seq = md.Sequence.Stream
	}
	w.logf("terminating job message %d on %s: %v", seq, msg.Subject(), reason)
	_ = msg.TermWithReason(reason.Error())
	w.terminated.Add(1)
	if job == nil || job.ID != JobID(job.Target, job.Candidate) || !hexKey.MatchString(job.Candidate) {
		return
	}
	r := &JobResult{Version: MessageVersion, ID: job.ID, Workload: job.Workload, Candidate: job.Candidate, Error: autotune.ErrBuild, Msg: "rejected by worker: " + reason.Error(), Worker: w.opts.Name, Host: w.host, Measure: job.Measure}
	if err := w.publish(r); err != nil {
		w.logf("publishing the rejection of %s: %v", short(job.Candidate), err)
	}
}

// prepare rebuilds the job's task from its kernel (checking its
// workload key against the target string key) and replays its trace,
// checking the candidate key. Errors say which check failed.
func prepare(job *Job, key string) (task *autotune.Task, cand *autotune.Candidate, err error) {
	defer func() {
		// a job that crashed the worker would be redelivered forever
		if r := recover(); r != nil {
			task, cand, err = nil, nil, fmt.Errorf("internal error while preparing the job (a bug in Tessera): %v", r)
		}
	}()
	m, err := tir.Parse("job.tir", []byte(job.Kernel))
	if err != nil {
		return nil, nil, fmt.Errorf("the job's kernel does not parse: %v", err)
	}
	f := m.Func(job.Func)
	if f == nil {
		return nil, nil, fmt.Errorf("the job's kernel has no @%s", job.Func)
	}
	if wk := autotune.WorkloadKey(f, key); wk != job.Workload {
		return nil, nil, fmt.Errorf("the job's kernel has workload key %s, not the job's %s", short(wk), short(job.Workload))
	}
	task = &autotune.Task{Name: job.Task, Kernels: []string{job.Task}, Func: f, Key: job.Workload, Weight: 1, Constants: job.Constants}
	tr, err := schedule.ParseTrace(job.Trace)
	if err != nil {
		return nil, nil, fmt.Errorf("the job's trace: %v", err)
	}
	c, err := autotune.ReplayCandidate(task, tr)
	if err != nil {
		return nil, nil, fmt.Errorf("the trace does not apply to the kernel: %v", err)
	}
	if c.Key != job.Candidate {
		return nil, nil, fmt.Errorf("the trace gives candidate %s, not the job's %s", short(c.Key), short(job.Candidate))
	}
	return task, c, nil
}

// measure builds and measures one candidate with the local measurer for
// the job's options (made on first use, kept for later jobs).
func (w *Worker) measure(task *autotune.Task, c *autotune.Candidate, spec MeasureSpec) (res autotune.Result) {
	defer func() {
		// the interpreter's reference run is in this process: a job that
		// crashed it would be redelivered forever
		if r := recover(); r != nil {
			res = autotune.Result{Error: autotune.ErrRun, Msg: fmt.Sprintf("internal error while measuring (a bug in Tessera): %v", r)}
		}
	}()
	m := w.meas[spec]
	if m == nil {
		o := spec.options()
		o.Target, o.WorkerCommand = w.opts.Target, w.opts.WorkerCommand
		var err error
		if m, err = autotune.NewMeasurer(o); err != nil {
			return autotune.Result{Error: autotune.ErrBuild, Msg: err.Error()}
		}
		w.meas[spec] = m
	}
	res = autotune.Result{Error: autotune.ErrRun, Msg: "no result from the measurer"}
	m.Measure(task, []*autotune.Candidate{c}, nil, func(_ int, r autotune.Result) { res = r })
	return res
}

// publish sends a result to the results stream (deduplicated by job id),
// retrying for up to 30 s while the broker is unreachable.
func (w *Worker) publish(r *JobResult) error {
	data, err := json.Marshal(r)
	if err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err = w.b.JS.Publish(ctx, resultSubject(r.ID), data, jetstream.WithMsgID(r.ID+"/"+r.Host))
		cancel()
		if err == nil || time.Now().After(deadline) {
			return err
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// every runs f every d in a goroutine until the returned stop is called
// (stop waits for a running f).
func every(d time.Duration, f func()) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				f()
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// sleep waits d or until ctx is done.
func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

// short is the first 12 characters of a key, for messages.
func short(key string) string {
	if len(key) > 12 {
		return key[:12]
	}
	return key
}
