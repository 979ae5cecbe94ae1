package autotune

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/targets"
)

// In-model re-ranking. A trial times one kernel alone: its inputs warm in
// the caches its own previous call left them in, its weights warm or
// flushed (MeasureOptions.CacheFlush). Inside the model a kernel reads
// activations the previous kernel has just written, in that kernel's
// partition across the threads, and shares the caches with its
// neighbours; a schedule that wins alone can lose there (ResNet-18 tuned
// for 2,000 trials on a 2-core Zen 3: every layer-1 convolution 1.35 ms
// alone against the default rules' 1.64, but 2.1 ms against 1.7 in the
// model). RerankInModel measures each task's best few candidates where
// they run: it compiles the model several times, variant v scheduling
// every task by its v-th candidate, times the variants' kernels in
// alternating rounds (per-kernel probes: targets.Profiler) and records
// each candidate's time in the model. Database.Ranked puts those records
// first, so the compiler applies the candidate that was fastest in the
// model. Choosing per kernel assumes a kernel's time depends on its own
// schedule far more than on its neighbours' (the rounds mix them).

// ModelVariant is the model compiled with one schedule per task.
type ModelVariant interface {
	// Profile runs the model (untimed warm-up, then timed runs) and
	// returns each kernel's per-call times in seconds, by kernel name.
	Profile() (map[string][]float64, error)
	Close()
}

// ModelBuilder compiles the model with the records given (one per
// workload; the kernels of workloads without one by the default rules)
// and loads it with per-kernel probes.
type ModelBuilder func(records []*Record) (ModelVariant, error)

// InModelOptions configure RerankInModel.
type InModelOptions struct {
	// Target is the tuning job's target (its Key is the records').
	Target targets.Target
	// Candidates per task: the default rules' schedule (when measured)
	// and the fastest others alone, up to this many (default 4).
	Candidates int
	// Rounds of timing every variant once, the variants' order rotating
	// each round (default 5).
	Rounds int
	// Progress, when set, is told what is being done, one line each.
	Progress func(string)
}

// InModelTask is one task's outcome: its candidates' records alone and
// their median time in the model (the task's kernels' per-call medians
// summed, per round; medians over the rounds), fastest first.
type InModelTask struct {
	Task *Task
	// Alone are the candidates' trial records (the default rules' first
	// when there is one: Default is then 0, else -1).
	Alone   []*Record
	InModel []float64 // seconds, per candidate
	Default int
	Best    int // index of the fastest in the model
}

// InModelResult sums the tasks: the model's kernel time in the model
// with the chosen, the default rules' and the fastest-alone candidates
// (seconds; tasks without a default record count their fastest alone).
type InModelResult struct {
	Tasks                          []*InModelTask
	Chosen, Defaults, FastestAlone float64
	Variants, Rounds               int
}

// ErrNothingToRerank: no task is static and has a successful trial (the
// kernels over symbolic dimensions are not re-ranked).
var ErrNothingToRerank = errors.New("in-model rerank: no task over static shapes has a successful trial (kernels over symbolic dimensions are not re-ranked)")

// RerankInModel re-measures, inside the model, each task's best
// candidates of db (static tasks with at least one successful trial) and
// appends one record per candidate with InModel set to this job's ID and
// Seconds its per-round time in the model. Errors: ErrNothingToRerank,
// the builder's or a profile's error (nothing is appended then), a
// failed append.
func RerankInModel(tasks []*Task, db *Database, opts InModelOptions, build ModelBuilder) (*InModelResult, error) {
	opts = opts.withDefaults()
	key := opts.Target.Key()
	var its []*InModelTask
	for _, t := range tasks {
		if it := inModelCandidates(t, db, key, opts); it != nil {
			its = append(its, it)
		}
	}
	if len(its) == 0 {
		return nil, ErrNothingToRerank
	}
	nv := 0
	for _, it := range its {
		nv = max(nv, len(it.Alone))
	}
	samples, err := profileVariants(its, nv, opts, build)
	if err != nil {
		return nil, err
	}
	res := &InModelResult{Tasks: its, Variants: nv, Rounds: opts.Rounds}
	job := time.Now().UTC().Format(time.RFC3339Nano)
	for i, it := range its {
		if err := it.record(db, key, job, samples[i]); err != nil {
			return nil, err
		}
		res.add(it)
	}
	return res, nil
}

func (o InModelOptions) withDefaults() InModelOptions {
	if o.Candidates <= 0 {
		o.Candidates = 4
	}
	if o.Rounds <= 0 {
		o.Rounds = 5
	}
	if o.Progress == nil {
		o.Progress = func(string) {}
	}
	return o
}

// inModelCandidates picks t's candidates: the default rules' record, then
// the fastest others alone (Database.rankedTrials), up to
// opts.Candidates; nil for a symbolic task or one without a successful
// trial.
func inModelCandidates(t *Task, db *Database, key string, opts InModelOptions) *InModelTask {
	if t.Bindings != nil {
		return nil
	}
	it := &InModelTask{Task: t, Default: -1}
	trials := db.rankedTrials(t.Key, key)
	if s, err := opts.Target.Rules().Default(t.Func); err == nil {
		def := newCandidate(t, s).Key
		if i := slices.IndexFunc(trials, func(r *Record) bool { return r.Candidate == def }); i >= 0 {
			it.Alone, it.Default = []*Record{trials[i]}, 0
			trials = slices.Delete(trials, i, i+1) // rankedTrials' own slice
		}
	}
	it.Alone = append(it.Alone, trials[:min(len(trials), max(opts.Candidates-len(it.Alone), 0))]...)
	if len(it.Alone) == 0 {
		return nil
	}
	return it
}

// profileVariants builds the nv variants (variant v schedules task i by
// its candidate v mod its count), then profiles them in opts.Rounds
// rotating rounds; samples[i][c] are task i's candidate c's per-profile
// times (seconds: the task's kernels' medians summed).
func profileVariants(its []*InModelTask, nv int, opts InModelOptions, build ModelBuilder) ([][][]float64, error) {
	variants := make([]ModelVariant, 0, nv)
	defer func() {
		for _, v := range variants {
			v.Close()
		}
	}()
	for v := range nv {
		opts.Progress(fmt.Sprintf("in-model rerank: compiling variant %d of %d", v+1, nv))
		var recs []*Record
		for _, it := range its {
			recs = append(recs, it.Alone[v%len(it.Alone)])
		}
		mv, err := build(recs)
		if err != nil {
			return nil, fmt.Errorf("in-model rerank: variant %d: %w", v+1, err)
		}
		variants = append(variants, mv)
	}
	samples := make([][][]float64, len(its))
	for i, it := range its {
		samples[i] = make([][]float64, len(it.Alone))
	}
	for r := range opts.Rounds {
		opts.Progress(fmt.Sprintf("in-model rerank: round %d of %d", r+1, opts.Rounds))
		for k := range nv {
			v := (k + r) % nv
			times, err := variants[v].Profile()
			if err != nil {
				return nil, fmt.Errorf("in-model rerank: variant %d: %w", v+1, err)
			}
			for i, it := range its {
				s, err := kernelTime(it.Task, times)
				if err != nil {
					return nil, fmt.Errorf("in-model rerank: variant %d: %w", v+1, err)
				}
				c := v % len(it.Alone)
				samples[i][c] = append(samples[i][c], s)
			}
		}
	}
	return samples, nil
}

// kernelTime is the sum over t's kernels of their median per-call time in
// times. Errors: a kernel the profile does not hold.
func kernelTime(t *Task, times map[string][]float64) (float64, error) {
	sum := 0.0
	for _, k := range t.Kernels {
		ts := times[k]
		if len(ts) == 0 {
			return 0, fmt.Errorf("the profile has no call of kernel %s (task %s)", k, t.Name)
		}
		sum += rt.Median(slices.Clone(ts))
	}
	return sum, nil
}

// record appends one in-model record per candidate (job: the rerank's
// ID) and sets the medians and the best.
func (it *InModelTask) record(db *Database, key, job string, samples [][]float64) error {
	it.InModel = make([]float64, len(it.Alone))
	for c, a := range it.Alone {
		r := &Record{Workload: it.Task.Key, Target: key, Task: it.Task.Name, Candidate: a.Candidate, Trace: a.Trace, Seconds: samples[c], InModel: job}
		if err := db.Append(r); err != nil {
			return err
		}
		it.InModel[c] = r.Median()
		if it.InModel[c] < it.InModel[it.Best] {
			it.Best = c
		}
	}
	return nil
}

// FastestAlone is the index of the candidate fastest alone.
func (it *InModelTask) FastestAlone() int {
	best := 0
	for c, a := range it.Alone {
		if a.Median() < it.Alone[best].Median() {
			best = c
		}
	}
	return best
}

// add sums it into the result's totals.
func (res *InModelResult) add(it *InModelTask) {
	res.Chosen += it.InModel[it.Best]
	res.FastestAlone += it.InModel[it.FastestAlone()]
	if it.Default >= 0 {
		res.Defaults += it.InModel[it.Default]
	} else {
		res.Defaults += it.InModel[0]
	}
}

// sortInModel orders in-model records fastest first (file order on ties).
func sortInModel(rs []*Record) {
	sort.SliceStable(rs, func(a, b int) bool { return rs[a].Median() < rs[b].Median() })
}
