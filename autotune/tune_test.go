package autotune

import (
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func fastMeasure() MeasureOptions {
	return MeasureOptions{Target: testTarget(), Builders: 2, Repeats: 3, MinRepeatSeconds: 0.002, RunTimeout: 10 * time.Second}
}

// A job tunes two tasks, stops at its budget, and a rerun with a larger
// budget resumes: it runs only the remaining trials and never measures a
// recorded candidate again.
func TestTuneResumes(t *testing.T) {
	needLLVM(t)
	g1 := parseTask(t, featGemmSrc(64, 48, 40))
	g2 := parseTask(t, featGemmSrc(32, 80, 24))
	path := filepath.Join(t.TempDir(), "tune.jsonl")
	db, warns, err := OpenDatabase(path)
	require.NoError(t, err)
	require.Empty(t, warns)
	opts := Options{Target: testTarget(), Trials: 12, BatchSize: 4, Seed: 3, Measure: fastMeasure()}
	st, err := Tune([]*Task{g1, g2}, db, opts)
	require.NoError(t, err)
	require.Equal(t, 12, st.Done)
	require.False(t, st.Interrupted)
	best1 := st.Tasks[0].Best
	require.False(t, math.IsInf(best1, 1))
	require.NoError(t, db.Close())

	db, _, err = OpenDatabase(path)
	require.NoError(t, err)
	defer db.Close()
	opts.Trials = 28
	st, err = Tune([]*Task{g1, g2}, db, opts)
	require.NoError(t, err)
	require.Equal(t, 28, st.Done)
	require.Equal(t, 12, st.StartDone)
	require.LessOrEqual(t, st.Tasks[0].Best, best1)
	seen := map[string]bool{}
	for _, task := range []*Task{g1, g2} {
		recs := db.Records(task.Key, testTarget().Key())
		require.NotEmpty(t, recs)
		for _, r := range recs {
			require.False(t, seen[r.Candidate], "candidate %s measured twice", r.Candidate)
			seen[r.Candidate] = true
			require.True(t, r.OK(), "%s: %s", r.Error, r.ErrorMsg)
		}
	}
	require.Len(t, seen, 28)
	// The budget is spent: a third run measures nothing.
	st, err = Tune([]*Task{g1, g2}, db, opts)
	require.NoError(t, err)
	require.Equal(t, 28, st.Done)
}

// With SeedDefault each task's first trial is its default-rules schedule
// (the compiler's choice without a record), so the best record is never
// slower than it as measured; a resumed job does not measure it again.
func TestTuneSeedsDefaultSchedule(t *testing.T) {
	needLLVM(t)
	g := parseTask(t, featGemmSrc(64, 48, 40))
	d, err := testTarget().Rules().Default(g.Func)
	require.NoError(t, err)
	want := newCandidate(g, d).Key
	path := filepath.Join(t.TempDir(), "tune.jsonl")
	db, _, err := OpenDatabase(path)
	require.NoError(t, err)
	defer db.Close()
	opts := Options{Target: testTarget(), Trials: 4, BatchSize: 4, Seed: 5, SeedDefault: true, Measure: fastMeasure()}
	st, err := Tune([]*Task{g}, db, opts)
	require.NoError(t, err)
	recs := db.Records(g.Key, testTarget().Key())
	require.Len(t, recs, 4)
	require.Equal(t, want, recs[0].Candidate)
	require.True(t, recs[0].OK(), "%s: %s", recs[0].Error, recs[0].ErrorMsg)
	require.LessOrEqual(t, st.Tasks[0].Best, recs[0].Median())
	opts.Trials = 8
	_, err = Tune([]*Task{g}, db, opts)
	require.NoError(t, err)
	n := 0
	for _, r := range db.Records(g.Key, testTarget().Key()) {
		if r.Candidate == want {
			n++
		}
	}
	require.Equal(t, 1, n)
}

// fakeFleet is a FleetMeasurer with a fixed number of workers that
// "measures" every candidate at 1 ms and remembers the batch sizes.
type fakeFleet struct {
	workers int
	batches []int
}

func (f *fakeFleet) Measure(t *Task, cands []*Candidate, stop func() bool, onResult func(int, Result)) {
	f.batches = append(f.batches, len(cands))
	for i := range cands {
		onResult(i, Result{Seconds: []float64{1e-3}, Host: "fake"})
	}
}

func (f *fakeFleet) Close()       {}
func (f *fakeFleet) Fleet() Fleet { return Fleet{Workers: f.workers} }

// A FleetMeasurer's batches are rounded up to a multiple of its live
// workers, the job's status shows the fleet, and records carry the
// measuring host.
func TestTuneFleetBatches(t *testing.T) {
	g := parseTask(t, featGemmSrc(64, 48, 40))
	db, _, err := OpenDatabase(filepath.Join(t.TempDir(), "tune.jsonl"))
	require.NoError(t, err)
	defer db.Close()
	f := &fakeFleet{workers: 3}
	st, err := Tune([]*Task{g}, db, Options{Target: testTarget(), Trials: 14, BatchSize: 4, Seed: 1, Strategy: StrategyRandom,
		Measurer: func(MeasureOptions) (BatchMeasurer, error) { return f, nil }})
	require.NoError(t, err)
	require.Equal(t, 14, st.Done)
	require.Equal(t, []int{6, 6, 2}, f.batches, "batches of 4 rounded up to 6 for 3 workers, the last one the budget's rest")
	require.Equal(t, &Fleet{Workers: 3}, st.Fleet)
	for _, r := range db.Records(g.Key, testTarget().Key()) {
		require.Equal(t, "fake", r.Host)
	}
	require.Equal(t, 4, fleetBatch(4, 0))
	require.Equal(t, 4, fleetBatch(4, 2))
	require.Equal(t, 5, fleetBatch(4, 5))
}

// fakeSubmitter is a Submitter whose "latency" of a candidate is a
// function of its key; it logs the rounds submitted and measured.
type fakeSubmitter struct {
	log       []string
	submitted map[string]bool
}

func fakeSeconds(key string) float64 { return 1e-3 * (1 + float64(key[0]%16)) }

func (f *fakeSubmitter) Submit(t *Task, cands []*Candidate) {
	f.log = append(f.log, "submit "+t.Name)
	for _, c := range cands {
		f.submitted[c.Key] = true
	}
}

func (f *fakeSubmitter) Measure(t *Task, cands []*Candidate, stop func() bool, onResult func(int, Result)) {
	f.log = append(f.log, "measure "+t.Name)
	for i, c := range cands {
		if !f.submitted[c.Key] {
			f.log = append(f.log, "unsubmitted "+c.Key)
		}
		onResult(i, Result{Seconds: []float64{fakeSeconds(c.Key)}})
	}
}

func (f *fakeSubmitter) Close() {}

// lookaheadJob tunes two tasks round-robin for 20 trials in batches of 4
// with the given lookahead on a fakeSubmitter, and returns the recorded
// candidates in order and the submitter's log.
func lookaheadJob(t *testing.T, lookahead int) ([]string, []string) {
	g1 := parseTask(t, featGemmSrc(64, 48, 40))
	g1.Name = "a"
	g2 := parseTask(t, featGemmSrc(32, 80, 24))
	g2.Name = "b"
	db, _, err := OpenDatabase(filepath.Join(t.TempDir(), "tune.jsonl"))
	require.NoError(t, err)
	defer db.Close()
	f := &fakeSubmitter{submitted: map[string]bool{}}
	st, err := Tune([]*Task{g1, g2}, db, Options{Target: testTarget(), Trials: 20, BatchSize: 4, Seed: 7, Scheduler: SchedulerRoundRobin, Lookahead: lookahead,
		Measurer: func(MeasureOptions) (BatchMeasurer, error) { return f, nil }})
	require.NoError(t, err)
	require.Equal(t, 20, st.Done)
	var cands []string
	seen := map[string]bool{}
	for _, task := range []*Task{g1, g2} {
		for _, r := range db.Records(task.Key, testTarget().Key()) {
			require.False(t, seen[r.Candidate], "candidate %s recorded twice", r.Candidate)
			seen[r.Candidate] = true
			cands = append(cands, r.Candidate)
		}
	}
	return cands, f.log
}

// With Lookahead 1 the next round is submitted before the current one is
// awaited, round-robin alternates the tasks over proposed rounds, the
// budget is kept exactly, and the job repeats for its seed.
func TestTuneLookahead(t *testing.T) {
	cands, log := lookaheadJob(t, 1)
	require.Equal(t, []string{"submit a", "submit b", "measure a", "submit a", "measure b", "submit b", "measure a", "submit a", "measure b", "measure a"}, log)
	again, _ := lookaheadJob(t, 1)
	require.Equal(t, cands, again, "the same candidates for the same seed")
	_, log = lookaheadJob(t, 0)
	var rounds []string
	for _, l := range log {
		require.False(t, strings.HasPrefix(l, "submit"), "no lookahead, nothing submitted: %v", log)
		if strings.HasPrefix(l, "measure") {
			rounds = append(rounds, l)
		}
	}
	require.Equal(t, []string{"measure a", "measure b", "measure a", "measure b", "measure a"}, rounds)
}
