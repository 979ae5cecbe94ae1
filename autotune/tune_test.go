package autotune

import (
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func fastMeasure() MeasureOptions {
	return MeasureOptions{Builders: 2, Repeats: 3, MinRepeatSeconds: 0.002, RunTimeout: 10 * time.Second}
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
		recs := db.Records(task.Key, testTarget().String())
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
