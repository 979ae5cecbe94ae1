package autotune

import (
	"fmt"
	"math"
	"math/rand"
	"time"

	"github.com/tessera-ml/tessera/targets"
)

// Options configure a tuning job.
type Options struct {
	// Target is what the tasks are tuned for: its rules span the design
	// space, its code generation builds candidates and its key goes into
	// the records.
	Target targets.Target
	// Trials is the job's total budget: trials already recorded in the
	// database for these tasks and target count against it, so rerunning
	// an interrupted job runs only the remaining trials.
	Trials int
	// BatchSize is the number of candidates per round (default 16).
	BatchSize int
	// Strategy is StrategyEvolutionary (default) or StrategyRandom;
	// Scheduler is SchedulerGradient (default) or SchedulerRoundRobin.
	Strategy, Scheduler string
	Seed                int64
	// SeedDefault makes each task's first candidate the schedule the
	// compiler gives it without a record (the target's default rules), so
	// a tuned kernel is never slower than an untuned one as measured
	// (AutoTVM's fallback configuration as a starting point). Off, the
	// search sees only its own samples (what the search-curve bench
	// compares).
	SeedDefault bool
	Search      SearchOptions
	Measure     MeasureOptions
	// Measurer, when set, makes the job's measurer from Measure (its
	// Target set) instead of NewMeasurer's local builder and runner
	// processes: autotune/distributed's broker-backed fleet. A
	// FleetMeasurer's batches are sized to its live workers.
	Measurer func(MeasureOptions) (BatchMeasurer, error)
	// Lookahead is the number of rounds proposed ahead of the round being
	// measured (default 0). With 1, round k+1's candidates are chosen
	// from the results of rounds up to k−1 (with L, round k+L's) and, on
	// a Submitter (remote workers), queued before round k is awaited, so
	// a worker that finishes its share of round k early goes on to round
	// k+1 instead of idling until the round's slowest trial ends (the
	// asynchronous search of distributed tuners). The candidates depend
	// on the seed and the measured results only, never on timing, so a
	// job repeats with the same seed, locally or on any number of
	// workers.
	Lookahead int
	// Progress, when set, is told about the job's progress.
	Progress Progress
	// Stop is checked before each trial; true ends the job after the
	// trial in flight (Ctrl-C).
	Stop func() bool
}

// Progress observes a job: Begin once, Trial after each recorded trial,
// End once.
type Progress interface {
	Begin(s *Status)
	Trial(s *Status, task int, r *Record)
	End(s *Status)
}

// TaskStatus is a task's state in a job.
type TaskStatus struct {
	Task   *Task
	Trials int     // recorded trials, failed ones included
	Errors int     // failed trials
	Best   float64 // best median latency in seconds (+Inf: none)
	// Fresh counts the trials this run made.
	Fresh int
}

// GFLOPS is the task's best throughput (0 without a measurement).
func (t *TaskStatus) GFLOPS() float64 {
	if math.IsInf(t.Best, 1) || t.Best <= 0 {
		return 0
	}
	return t.Task.FLOPs / t.Best / 1e9
}

// Status is a job's state.
type Status struct {
	Tasks       []*TaskStatus
	Done, Total int // trials recorded for the tasks, and the budget
	Start       time.Time
	StartDone   int  // trials recorded when this run began
	Interrupted bool // Stop ended the job before the budget was spent
	Exhausted   bool // every task's design space was measured
	// Fleet is the remote workers' state when the job measures on a
	// FleetMeasurer (nil: local measurement), as of the last trial.
	Fleet *Fleet
}

// ModelLatency estimates the model's kernel time in seconds: Σ weight ×
// best latency over the tasks; known is false while some task has no
// measurement.
func (s *Status) ModelLatency() (seconds float64, known bool) {
	known = true
	for _, t := range s.Tasks {
		if math.IsInf(t.Best, 1) {
			known = false
			continue
		}
		seconds += float64(t.Task.Weight) * t.Best
	}
	return seconds, known
}

// ETA estimates the time left from this run's pace (0 before the first
// trial).
func (s *Status) ETA() time.Duration {
	n := s.Done - s.StartDone
	if n <= 0 || s.Done >= s.Total {
		return 0
	}
	per := time.Since(s.Start) / time.Duration(n)
	return per * time.Duration(s.Total-s.Done)
}

// sample is one training pair of the cost model.
type sample struct {
	task    int
	feats   []float64
	seconds float64 // +Inf for a failed trial
}

// job is the state of Tune.
type job struct {
	opts     Options
	db       *Database
	target   string
	status   *Status
	search   []*searcher
	progress []*taskProgress
	data     []sample
	model    CostModel
	rng      *rand.Rand
}

// Tune runs a tuning job over tasks, appending every trial to db, and
// returns the final status. It resumes from db: recorded candidates are
// never measured again and recorded trials count against the budget.
// Errors: the measurer cannot start, or the database cannot be written.
func Tune(tasks []*Task, db *Database, opts Options) (*Status, error) {
	if opts.BatchSize <= 0 {
		opts.BatchSize = 16
	}
	if opts.Strategy == "" {
		opts.Strategy = StrategyEvolutionary
	}
	if opts.Scheduler == "" {
		opts.Scheduler = SchedulerGradient
	}
	if opts.Strategy != StrategyEvolutionary && opts.Strategy != StrategyRandom {
		return nil, fmt.Errorf("autotune: unknown search strategy %q (want %s or %s)", opts.Strategy, StrategyEvolutionary, StrategyRandom)
	}
	if opts.Scheduler != SchedulerGradient && opts.Scheduler != SchedulerRoundRobin {
		return nil, fmt.Errorf("autotune: unknown task scheduler %q (want %s or %s)", opts.Scheduler, SchedulerGradient, SchedulerRoundRobin)
	}
	opts.Search = opts.Search.withDefaults()
	opts.Measure.Target = opts.Target
	j := &job{opts: opts, db: db, target: opts.Target.Key(), rng: rand.New(rand.NewSource(opts.Seed)), status: &Status{Total: opts.Trials, Start: time.Now()}}
	j.resume(tasks)
	j.status.StartDone = j.status.Done
	if opts.Progress != nil {
		opts.Progress.Begin(j.status)
	}
	err := j.run()
	if opts.Progress != nil {
		opts.Progress.End(j.status)
	}
	return j.status, err
}

// resume loads the tasks' records: budget spent, measured candidates,
// the best latencies and the cost model's training data.
func (j *job) resume(tasks []*Task) {
	for i, t := range tasks {
		ts := &TaskStatus{Task: t, Best: math.Inf(1)}
		s := &searcher{task: t, rules: j.opts.Target.Rules(), rng: rand.New(rand.NewSource(j.opts.Seed + int64(i)*1000003)), opts: j.opts.Search, measured: map[string]bool{}}
		if j.opts.SeedDefault {
			if d, err := s.rules.Default(t.Func); err == nil {
				if c := newCandidate(t, d); t.Generalizes(c, s.rules) == nil {
					s.seeds = append(s.seeds, c)
				}
			}
		}
		for _, r := range j.db.Records(t.Key, j.target) {
			if !r.SameBindings(t.Bindings) {
				continue // a symbolic workload tuned at other sizes
			}
			ts.Trials++
			s.measured[r.Candidate] = true
			if !r.OK() {
				ts.Errors++
			}
			c, err := ReplayCandidate(t, r.Trace)
			if err != nil {
				continue
			}
			sec := r.Median()
			ts.Best = math.Min(ts.Best, sec)
			s.addMeasured(c, sec)
			j.data = append(j.data, sample{task: i, feats: ExtractFeatures(c.Func), seconds: sec})
		}
		j.status.Done += ts.Trials
		j.status.Tasks = append(j.status.Tasks, ts)
		j.search = append(j.search, s)
		p := &taskProgress{weight: float64(t.Weight), trials: ts.Trials}
		if ts.Trials > 0 {
			p.history = []float64{ts.Best}
			p.rounds = 1
		}
		j.progress = append(j.progress, p)
	}
	j.retrain()
}

// retrain fits a new cost model on every sample, scoring each as its
// task's best latency over its own (0 for failures).
func (j *job) retrain() {
	if j.opts.Strategy != StrategyEvolutionary {
		return
	}
	m := NewGBDT(j.opts.Seed)
	if len(j.data) > 0 {
		feats := make([][]float64, len(j.data))
		scores := make([]float64, len(j.data))
		for i, d := range j.data {
			feats[i] = d.feats
			if best := j.status.Tasks[d.task].Best; !math.IsInf(d.seconds, 1) && d.seconds > 0 {
				scores[i] = best / d.seconds
			}
		}
		m.Update(feats, scores)
	}
	j.model = m
	for _, s := range j.search {
		s.model = m
	}
}

func (j *job) stopped() bool {
	return j.opts.Stop != nil && j.opts.Stop()
}

// round is one batch of candidates of one task.
type round struct {
	task  int
	cands []*Candidate
}

func (j *job) run() error {
	if j.status.Done >= j.status.Total {
		return nil
	}
	m, err := j.newMeasurer()
	if err != nil {
		return err
	}
	defer m.Close()
	sub, _ := m.(Submitter)
	var queue []*round // proposed, not measured yet; the head is measured next
	planned := j.status.Done
	for {
		if j.stopped() {
			j.status.Interrupted = true
			return nil
		}
		for len(queue) <= max(j.opts.Lookahead, 0) && planned < j.status.Total {
			r := j.propose(m, j.status.Total-planned)
			if r == nil {
				break
			}
			planned += len(r.cands)
			if sub != nil && j.opts.Lookahead > 0 {
				sub.Submit(j.status.Tasks[r.task].Task, r.cands)
			}
			queue = append(queue, r)
		}
		if len(queue) == 0 {
			j.status.Exhausted = j.status.Done < j.status.Total
			return nil
		}
		r := queue[0]
		queue = queue[1:]
		if err := j.measure(m, r.task, r.cands); err != nil {
			return err
		}
		j.progress[r.task].history = append(j.progress[r.task].history, j.status.Tasks[r.task].Best)
		j.retrain()
		if j.status.Interrupted {
			return nil
		}
	}
}

// propose picks a task and up to n of its unrecorded candidates for the
// next round, nil when every task is exhausted.
func (j *job) propose(m BatchMeasurer, n int) *round {
	for {
		i := pickTask(j.opts.Scheduler, j.progress, j.rng)
		if i < 0 {
			return nil
		}
		n := min(j.batchSize(m), n)
		var cands []*Candidate
		if j.opts.Strategy == StrategyRandom {
			cands = j.search[i].randomBatch(n)
		} else {
			cands = j.search[i].evolveBatch(n)
		}
		if cands = j.unrecorded(i, cands); len(cands) > 0 {
			j.progress[i].rounds++
			return &round{task: i, cands: cands}
		}
		j.progress[i].exhausted = true
	}
}

// newMeasurer makes the job's measurer: Options.Measurer's, else the
// local builder and runner processes.
func (j *job) newMeasurer() (BatchMeasurer, error) {
	if j.opts.Measurer != nil {
		return j.opts.Measurer(j.opts.Measure)
	}
	return NewMeasurer(j.opts.Measure)
}

// batchSize is the round's batch: BatchSize, sized to the live workers
// of a FleetMeasurer.
func (j *job) batchSize(m BatchMeasurer) int {
	if fl := j.updateFleet(m); fl != nil {
		return fleetBatch(j.opts.BatchSize, fl.Workers)
	}
	return j.opts.BatchSize
}

// updateFleet refreshes Status.Fleet from a FleetMeasurer and returns it
// (nil for another measurer).
func (j *job) updateFleet(m BatchMeasurer) *Fleet {
	f, ok := m.(FleetMeasurer)
	if !ok {
		return nil
	}
	fl := f.Fleet()
	j.status.Fleet = &fl
	return &fl
}

// unrecorded drops candidates the database already holds.
func (j *job) unrecorded(i int, cands []*Candidate) []*Candidate {
	var out []*Candidate
	for _, c := range cands {
		if !j.db.Has(j.status.Tasks[i].Task.Key, j.target, c.Key) {
			out = append(out, c)
		}
	}
	return out
}

// measure measures a batch of task i and records every trial.
func (j *job) measure(m BatchMeasurer, i int, cands []*Candidate) error {
	ts := j.status.Tasks[i]
	var werr error
	m.Measure(ts.Task, cands, func() bool { return werr != nil || j.stopped() }, func(k int, res Result) {
		c := cands[k]
		rec := &Record{Workload: ts.Task.Key, Target: j.target, Task: ts.Task.Name, Candidate: c.Key, Bindings: ts.Task.Bindings, Trace: c.Trace, Seconds: res.Seconds, Error: res.Error, ErrorMsg: res.Msg, CacheFlush: j.opts.Measure.CacheFlush, RewriteLayout: !j.opts.Measure.KeepLayouts && len(ts.Task.Constants) > 0, Host: res.Host}
		if err := j.db.Append(rec); err != nil {
			werr = err
			return
		}
		sec := rec.Median()
		ts.Trials++
		ts.Fresh++
		j.status.Done++
		j.progress[i].trials++
		if !rec.OK() {
			ts.Errors++
		}
		ts.Best = math.Min(ts.Best, sec)
		j.search[i].addMeasured(c, sec)
		j.data = append(j.data, sample{task: i, feats: ExtractFeatures(c.Func), seconds: sec})
		j.updateFleet(m)
		if j.opts.Progress != nil {
			j.opts.Progress.Trial(j.status, i, rec)
		}
	})
	if werr == nil && j.stopped() && j.status.Done < j.status.Total {
		j.status.Interrupted = true
	}
	return werr
}
