package distributed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tessera-ml/tessera/autotune"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// MeasurerOptions configure the tuner's side of a distributed job.
type MeasurerOptions struct {
	// Measure are the job's measurement options (Target set): the target
	// string routes the jobs, the rest travels with them.
	Measure autotune.MeasureOptions
	// Host pins the host fingerprint whose results are accepted (the one
	// of the database's earlier distributed records); "" pins the host of
	// the first result.
	Host string
	// Log receives warnings: refused results, malformed messages, no live
	// worker.
	Log io.Writer
	// NoWorkerWarning is how long the tuner waits for a result with no
	// live worker before it says so (default 10 s; repeated every 30 s).
	NoWorkerWarning time.Duration
}

// Measurer measures candidates on the workers behind a broker: it
// implements autotune.FleetMeasurer for autotune.Options.Measurer.
type Measurer struct {
	b     *Broker
	opts  MeasurerOptions
	key   string
	token string
	spec  MeasureSpec
	// specHash distinguishes the jobs of different measurement options
	// in the broker's duplicate window.
	specHash string
	cc       jetstream.ConsumeContext

	mu      sync.Mutex
	host    string                // pinned host fingerprint
	pending map[string]bool       // job ids awaited by Measure
	arrived map[string]*JobResult // results of pending jobs, by id
	notify  chan struct{}
	fleet   autotune.Fleet
	counted time.Time // when fleet.Workers was counted
	kernels map[string]string
}

// NewMeasurer subscribes to the results of opts.Measure.Target's jobs.
// Errors: no target, the results consumer cannot be created.
func NewMeasurer(ctx context.Context, b *Broker, opts MeasurerOptions) (*Measurer, error) {
	if opts.Measure.Target == nil {
		return nil, errors.New("distributed measurer: no target")
	}
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.NoWorkerWarning <= 0 {
		opts.NoWorkerWarning = 10 * time.Second
	}
	key := opts.Measure.Target.Key()
	spec := specOf(opts.Measure)
	m := &Measurer{b: b, opts: opts, key: key, token: TargetToken(key), spec: spec, specHash: TargetToken(fmt.Sprintf("%+v", spec)), host: opts.Host,
		pending: map[string]bool{}, arrived: map[string]*JobResult{}, notify: make(chan struct{}, 1), kernels: map[string]string{}}
	cons, err := b.JS.OrderedConsumer(ctx, ResultsStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{resultsPrefix + m.token + ".>"}, DeliverPolicy: jetstream.DeliverNewPolicy})
	if err != nil {
		return nil, fmt.Errorf("distributed measurer: results consumer: %v", err)
	}
	if m.cc, err = cons.Consume(m.receive); err != nil {
		return nil, fmt.Errorf("distributed measurer: results consumer: %v", err)
	}
	return m, nil
}

// Close stops the results subscription; jobs still queued stay queued
// (a later job's Measure uses their results).
func (m *Measurer) Close() { m.cc.Stop() }

// receive keeps a result that a Measure awaits; a malformed one is
// logged and dropped.
func (m *Measurer) receive(msg jetstream.Msg) {
	r, err := DecodeResult(msg.Data())
	if err != nil {
		m.logf("dropping a result message on %s: %v", msg.Subject(), err)
		return
	}
	m.mu.Lock()
	if m.pending[r.ID] {
		m.arrived[r.ID] = r
	}
	m.mu.Unlock()
	select {
	case m.notify <- struct{}{}:
	default:
	}
}

func (m *Measurer) logf(format string, args ...any) {
	fmt.Fprintf(m.opts.Log, "tessera tune: "+format+"\n", args...)
}

// Fleet counts the live workers of the target (at most once a second)
// and reports the trials in flight and the redeliveries.
func (m *Measurer) Fleet() autotune.Fleet {
	m.mu.Lock()
	stale := time.Since(m.counted) > time.Second
	m.mu.Unlock()
	if stale {
		n := m.countWorkers()
		m.mu.Lock()
		m.fleet.Workers, m.counted = n, time.Now()
		m.mu.Unlock()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.fleet
}

// countWorkers counts the registry's entries for the target (0 when the
// registry cannot be read).
func (m *Measurer) countWorkers() int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	kl, err := m.b.Workers.ListKeysFiltered(ctx, m.token+".*")
	if err != nil {
		return 0
	}
	n := 0
	for range kl.Keys() {
		n++
	}
	return n
}

// Measure publishes a job per candidate whose result is neither in the
// results stream (measured for an earlier, interrupted tuner) nor queued
// (by Submit or an earlier tuner), and passes the results to onResult in
// candidate order as they arrive. stop ends the wait early: the jobs stay
// queued and their results are kept in the results stream for a later
// run.
func (m *Measurer) Measure(t *autotune.Task, cands []*autotune.Candidate, stop func() bool, onResult func(i int, r autotune.Result)) {
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = JobID(m.key, c.Key)
	}
	m.enqueue(t, cands, ids, stop)
	delivered := m.await(t, cands, ids, make([]*JobResult, len(cands)), stop, onResult)
	m.mu.Lock()
	for _, id := range ids {
		delete(m.pending, id)
		delete(m.arrived, id)
	}
	m.fleet.InFlight -= len(ids) - delivered
	m.mu.Unlock()
}

// Submit queues the candidates' jobs now (autotune.Submitter); a later
// Measure of them awaits their results.
func (m *Measurer) Submit(t *autotune.Task, cands []*autotune.Candidate) {
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = JobID(m.key, c.Key)
	}
	m.enqueue(t, cands, ids, nil)
}

// enqueue marks jobs ids (of cands) awaited, takes the results the
// results stream already holds and publishes the jobs that are not
// queued yet; a job already awaited (submitted earlier) is left as it is.
func (m *Measurer) enqueue(t *autotune.Task, cands []*autotune.Candidate, ids []string, stop func() bool) {
	for i, c := range cands {
		m.mu.Lock()
		awaited := m.pending[ids[i]]
		if !awaited {
			m.pending[ids[i]] = true
			m.fleet.InFlight++
		}
		m.mu.Unlock()
		if awaited {
			continue
		}
		if r := m.stored(ids[i]); r != nil {
			m.mu.Lock()
			m.arrived[ids[i]] = r
			m.mu.Unlock()
			continue
		}
		if !m.queued(ids[i]) {
			m.publish(t, c, ids[i], stop)
		}
	}
}

// await delivers the results in order as they arrive, until all are
// delivered or stop says so, and returns how many it delivered.
func (m *Measurer) await(t *autotune.Task, cands []*autotune.Candidate, ids []string, got []*JobResult, stop func() bool, onResult func(i int, r autotune.Result)) int {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	next, idle, warned := 0, time.Now(), time.Time{}
	for {
		m.mu.Lock()
		var refused []int
		for i := next; i < len(ids); i++ {
			if r := m.arrived[ids[i]]; got[i] == nil && r != nil {
				delete(m.arrived, ids[i])
				if m.acceptLocked(r) {
					got[i] = r
				} else {
					refused = append(refused, i)
				}
			}
		}
		m.mu.Unlock()
		for _, i := range refused {
			m.publish(t, cands[i], ids[i], stop)
		}
		for next < len(ids) && got[next] != nil {
			r := got[next]
			m.mu.Lock()
			m.fleet.InFlight--
			if r.Deliveries > 1 {
				m.fleet.Redelivered++
			}
			m.mu.Unlock()
			onResult(next, autotune.Result{Seconds: r.Seconds, Error: r.Error, Msg: r.Msg, Host: r.Host})
			next++
			idle = time.Now()
		}
		if next == len(ids) || (stop != nil && stop()) {
			return next
		}
		select {
		case <-m.notify:
		case <-tick.C:
		}
		if wait := time.Since(idle); wait > m.opts.NoWorkerWarning && time.Since(warned) > 30*time.Second {
			warned = m.warnWaiting(wait)
		}
	}
}

// warnWaiting says why no result came for wait, when it can tell: no
// live worker for the target, or (after 6 × NoWorkerWarning) live
// workers that may be on another host than the accepted one. It returns
// when it warned (the zero time when it did not).
func (m *Measurer) warnWaiting(wait time.Duration) time.Time {
	n := m.Fleet().Workers
	switch host := m.Host(); {
	case n == 0:
		name, _, _ := strings.Cut(m.key, " ")
		m.logf("waiting for results: no live worker for target %q (start one: tessera worker --broker URL --target %s)%s", m.key, name, m.otherWorkers())
	case host != "" && wait > 6*m.opts.NoWorkerWarning:
		m.logf("waiting for results: none for %v from the %d live workers; this job accepts measurements from host %s only (a worker on another host leaves the job's trials to others and says so in its log)", wait.Round(time.Second), n, host)
	default:
		return time.Time{}
	}
	return time.Now()
}

// otherWorkers describes the live workers of other target strings, whose
// jobs are not this job's (a worker started with other --threads, say):
// "; live workers of other targets: w1 (npu -config=…)"; "" when none.
func (m *Measurer) otherWorkers() string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	kl, err := m.b.Workers.ListKeys(ctx)
	if err != nil {
		return ""
	}
	var others []string
	for k := range kl.Keys() {
		if strings.HasPrefix(k, m.token+".") {
			continue
		}
		e, err := m.b.Workers.Get(ctx, k)
		var info workerInfo
		if err != nil || json.Unmarshal(e.Value(), &info) != nil {
			continue
		}
		others = append(others, fmt.Sprintf("%s (%s)", info.Name, info.Target))
	}
	if len(others) == 0 {
		return ""
	}
	return "; live workers of other targets (a worker serves only its exact target string): " + strings.Join(others, ", ")
}

// accept pins the host on the first result and refuses a result from
// another host with a logged reason.
func (m *Measurer) accept(r *JobResult) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.acceptLocked(r)
}

func (m *Measurer) acceptLocked(r *JobResult) bool {
	if r.Host == "" {
		return true // a job the tuner could not encode: its own failure
	}
	if r.Measure != m.spec {
		m.logf("not using the result of candidate %s from worker %s: it was measured with other options (%+v, this job's are %+v); the trial is measured again", short(r.Candidate), r.Worker, r.Measure, m.spec)
		return false
	}
	if m.host == "" {
		m.host = r.Host
	}
	if r.Host == m.host {
		return true
	}
	m.logf("refusing the result of candidate %s from worker %s: its host %s differs from this job's %s (measurements from different machines are not comparable); the trial is measured again", short(r.Candidate), r.Worker, r.Host, m.host)
	return false
}

// Host is the pinned host fingerprint ("" before the first result).
func (m *Measurer) Host() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.host
}

// stored is the result of job id kept in the results stream, nil when
// there is none (or it is malformed).
func (m *Measurer) stored(id string) *JobResult {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	msg, err := m.b.Results.GetLastMsgForSubject(ctx, resultSubject(id))
	if err != nil {
		return nil
	}
	r, err := DecodeResult(msg.Data)
	if err != nil || r.ID != id {
		return nil
	}
	return r
}

// queued reports whether job id is in the jobs stream (waiting or being
// measured), published by an earlier tuner.
func (m *Measurer) queued(id string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := m.b.Jobs.GetLastMsgForSubject(ctx, jobSubject(id))
	return err == nil
}

// publish sends candidate c's job, retrying every second while the
// broker is unreachable, until it is stored or stop says so.
func (m *Measurer) publish(t *autotune.Task, c *autotune.Candidate, id string, stop func() bool) {
	data, err := m.job(t, c, id)
	if err != nil {
		m.mu.Lock()
		m.arrived[id] = &JobResult{Version: MessageVersion, ID: id, Candidate: c.Key, Error: autotune.ErrBuild, Msg: err.Error(), Measure: m.spec}
		m.mu.Unlock()
		return
	}
	msgID := id + "@" + m.specHash
	if h := m.Host(); h != "" {
		msgID += "@" + TargetToken(h)
	}
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err := m.b.JS.Publish(ctx, jobSubject(id), data, jetstream.WithMsgID(msgID))
		cancel()
		if err == nil || (stop != nil && stop()) {
			return
		}
		m.logf("publishing job %s: %v (retrying)", short(c.Key), err)
		time.Sleep(time.Second)
	}
}

// job encodes candidate c's job.
func (m *Measurer) job(t *autotune.Task, c *autotune.Candidate, id string) ([]byte, error) {
	tr, err := c.Trace.JSON()
	if err != nil {
		return nil, err
	}
	kernel, ok := m.kernels[t.Key]
	if !ok {
		kernel = tir.PrintFunc(t.Func, tir.PrintOptions{})
		m.kernels[t.Key] = kernel
	}
	return json.Marshal(&Job{Version: MessageVersion, ID: id, Target: m.key, Workload: t.Key, Task: t.Name, Kernel: kernel, Func: t.Func.Name,
		Constants: t.Constants, Candidate: c.Key, Trace: tr, Measure: m.spec, Host: m.Host()})
}

var _ autotune.FleetMeasurer = (*Measurer)(nil)
