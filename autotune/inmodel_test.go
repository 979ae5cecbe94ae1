package autotune

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// fakeModel is a ModelBuilder whose variants' kernels take, in the
// model, the time inModel gives their task's candidate (every call of
// every kernel of the task), and which counts its builds and profiles.
type fakeModel struct {
	tasks          []*Task
	inModel        map[string]float64 // candidate key → seconds per kernel call
	builds, calls  int
	failAfterCalls int // >0: Profile fails from this call on
}

type fakeVariant struct {
	m     *fakeModel
	times map[string][]float64
}

func (m *fakeModel) build(recs []*Record) (ModelVariant, error) {
	m.builds++
	byWorkload := map[string]*Record{}
	for _, r := range recs {
		byWorkload[r.Workload] = r
	}
	v := &fakeVariant{m: m, times: map[string][]float64{}}
	for _, t := range m.tasks {
		r := byWorkload[t.Key]
		if r == nil {
			return nil, errors.New("no record for a task")
		}
		for _, k := range t.Kernels {
			v.times[k] = []float64{m.inModel[r.Candidate], 2 * m.inModel[r.Candidate], m.inModel[r.Candidate]}
		}
	}
	return v, nil
}

func (v *fakeVariant) Profile() (map[string][]float64, error) {
	v.m.calls++
	if v.m.failAfterCalls > 0 && v.m.calls >= v.m.failAfterCalls {
		return nil, errors.New("profile failed")
	}
	return v.times, nil
}

func (v *fakeVariant) Close() {}

// TestRerankInModel: each task's default-rules record and its fastest
// trials alone are re-measured in the model; the candidate fastest there
// ranks first (Database.Ranked, also after reopening the file) even where
// it was slowest alone, trials are counted without the in-model records,
// a later rerank supersedes an earlier one, and a failed profile appends
// nothing.
func TestRerankInModel(t *testing.T) {
	target := testTarget()
	key := target.Key()
	a := parseTask(t, featGemmSrc(24, 40, 32))
	b := parseTask(t, featGemmSrc(16, 24, 8))
	a.Kernels, a.Weight = []string{"fused_0", "fused_2"}, 2
	b.Name, b.Kernels = "fused_1", []string{"fused_1"}
	path := filepath.Join(t.TempDir(), "tune.jsonl")
	db, _, err := OpenDatabase(path)
	require.NoError(t, err)
	model := &fakeModel{tasks: []*Task{a, b}, inModel: map[string]float64{}}
	trial := func(task *Task, c *Candidate, alone float64) {
		require.NoError(t, db.Append(&Record{Workload: task.Key, Target: key, Task: task.Name, Candidate: c.Key, Trace: c.Trace, Seconds: []float64{alone}}))
	}
	// Task a: the default rules (3 ms alone), then samples 1, 2, 2.5 and
	// 2.8 ms alone; in the model the default and the slowest-alone sample
	// win.
	def, err := target.Rules().Default(a.Func)
	require.NoError(t, err)
	ad := newCandidate(a, def)
	trial(a, ad, 3e-3)
	model.inModel[ad.Key] = 1.5e-3
	var as []*Candidate
	for _, c := range sampleN(t, a, 6) {
		if c.Key != ad.Key && len(as) < 4 {
			as = append(as, c)
		}
	}
	for i, alone := range []float64{1e-3, 2e-3, 2.5e-3, 2.8e-3} {
		trial(a, as[i], alone)
		model.inModel[as[i].Key] = []float64{2e-3, 1.8e-3, 1.2e-3, 1e-3}[i]
	}
	// Task b: one trial only, and a failed one.
	bs := sampleN(t, b, 2)
	trial(b, bs[0], 5e-4)
	model.inModel[bs[0].Key] = 6e-4
	require.NoError(t, db.Append(&Record{Workload: b.Key, Target: key, Task: b.Name, Candidate: bs[1].Key, Trace: bs[1].Trace, Error: ErrRun, ErrorMsg: "crash"}))

	res, err := RerankInModel([]*Task{a, b}, db, InModelOptions{Target: target, Candidates: 4, Rounds: 3}, model.build)
	require.NoError(t, err)
	require.Equal(t, 4, res.Variants)
	require.Equal(t, 4, model.builds)
	require.Equal(t, 12, model.calls)
	ta := res.Tasks[0]
	require.Equal(t, []string{ad.Key, as[0].Key, as[1].Key, as[2].Key}, candidateKeys(ta.Alone), "the default first, then the fastest alone")
	require.Equal(t, 0, ta.Default)
	require.Equal(t, 1, ta.FastestAlone())
	require.Equal(t, 3, ta.Best, "the slowest alone is the fastest in the model")
	require.InDelta(t, 2*1.2e-3, ta.InModel[3], 1e-12, "per round, the task's two kernels' medians")
	require.InDelta(t, 2*1.2e-3+6e-4, res.Chosen, 1e-12)
	require.InDelta(t, 2*1.5e-3+6e-4, res.Defaults, 1e-12)
	require.InDelta(t, 2*2e-3+6e-4, res.FastestAlone, 1e-12)

	check := func(db *Database) {
		best, ok := db.Best(a.Key, key)
		require.True(t, ok)
		require.Equal(t, as[2].Key, best.Candidate)
		require.NotEmpty(t, best.InModel)
		ranked := db.Ranked(a.Key, key)
		require.Equal(t, []string{as[2].Key, ad.Key, as[1].Key, as[0].Key, as[3].Key}, candidateKeys(ranked), "in-model first, then the trials not re-measured")
		require.Equal(t, 5, db.Count(a.Key, key), "in-model records are not trials")
		require.Len(t, db.Records(b.Key, key), 2)
	}
	check(db)
	require.NoError(t, db.Close())
	db, _, err = OpenDatabase(path)
	require.NoError(t, err)
	check(db)

	// A second rerank, the model's times changed: its records count.
	model.inModel[ad.Key] = 0.5e-3
	_, err = RerankInModel([]*Task{a, b}, db, InModelOptions{Target: target, Candidates: 2, Rounds: 1}, model.build)
	require.NoError(t, err)
	best, _ := db.Best(a.Key, key)
	require.Equal(t, ad.Key, best.Candidate)
	require.Equal(t, []string{ad.Key, as[0].Key, as[1].Key, as[2].Key, as[3].Key}, candidateKeys(db.Ranked(a.Key, key)))

	// A profile that fails appends nothing.
	n := len(db.Ranked(a.Key, key))
	model.failAfterCalls = model.calls + 1
	_, err = RerankInModel([]*Task{a, b}, db, InModelOptions{Target: target}, model.build)
	require.ErrorContains(t, err, "profile failed")
	require.Len(t, db.Ranked(a.Key, key), n)
	best2, _ := db.Best(a.Key, key)
	require.Equal(t, best, best2)
	require.NoError(t, db.Close())
}

// A task without a successful trial, or over symbolic dimensions, is not
// re-ranked; with none left the rerank is an error.
func TestRerankInModelNothingToRank(t *testing.T) {
	db, _, err := OpenDatabase(filepath.Join(t.TempDir(), "tune.jsonl"))
	require.NoError(t, err)
	defer db.Close()
	a := parseTask(t, featGemmSrc(8, 8, 8))
	model := &fakeModel{tasks: []*Task{a}}
	_, err = RerankInModel([]*Task{a}, db, InModelOptions{Target: testTarget()}, model.build)
	require.ErrorIs(t, err, ErrNothingToRerank)
	c := sampleN(t, a, 1)[0]
	require.NoError(t, db.Append(&Record{Workload: a.Key, Target: testTarget().Key(), Task: a.Name, Candidate: c.Key, Trace: c.Trace, Seconds: []float64{1e-3}}))
	a.Bindings = map[string]int64{"batch": 8} // as a task over a symbolic dimension
	_, err = RerankInModel([]*Task{a}, db, InModelOptions{Target: testTarget()}, model.build)
	require.ErrorIs(t, err, ErrNothingToRerank)
	require.Zero(t, model.builds)
}

func candidateKeys(rs []*Record) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Candidate)
	}
	return out
}
