package tuneplot

import (
	"bytes"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"

	"github.com/tessera-ml/tessera/autotune"
)

var t0 = time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC)

// rec is a record of task on target "cpu" at t0 + sec seconds; ms ≤ 0
// makes a failed trial.
func rec(task string, ms float64, sec int) *autotune.Record {
	r := &autotune.Record{Version: 1, Workload: "w_" + task, Target: "cpu", Task: task, Time: t0.Add(time.Duration(sec) * time.Second).Format(time.RFC3339)}
	if ms > 0 {
		r.Seconds = []float64{ms / 1e3}
	} else {
		r.Error = autotune.ErrBuild
	}
	return r
}

func TestBestCurve(t *testing.T) {
	rs := []*autotune.Record{rec("a", 0, 0), rec("a", 5, 1), rec("a", 6, 2), rec("a", 2, 3), rec("a", 3, 4)}
	s := BestCurve(rs)
	assert.Equal(t, []float64{2, 4, 5}, s.X, "improvements and the last trial")
	assert.Equal(t, []float64{5, 2, 2}, s.Y)
	assert.Empty(t, BestCurve([]*autotune.Record{rec("a", 0, 0)}).X, "no success: no point")
}

func TestEstimateCurve(t *testing.T) {
	rs := []*autotune.Record{rec("a", 4, 0), rec("a", 3, 2), rec("b", 0, 3), rec("b", 1, 5), rec("a", 2, 5), rec("b", 2, 9), rec("c", 0, 10)}
	s := EstimateCurve(rs, nil, true, t0)
	// c never succeeds: left out; the curve starts when b has a success.
	assert.Equal(t, []float64{5, 5, 10}, s.X)
	assert.Equal(t, []float64{4, 3, 3}, s.Y)

	w := EstimateCurve(rs, map[string]int{"w_b": 3}, false, t0)
	assert.Equal(t, []float64{4, 5, 7}, w.X, "record numbers")
	assert.Equal(t, []float64{6, 5, 5}, w.Y, "b weighs 3")
}

func TestHasTimes(t *testing.T) {
	rs := []*autotune.Record{rec("a", 1, 0), rec("a", 1, 3)}
	assert.True(t, HasTimes(rs))
	assert.False(t, HasTimes([]*autotune.Record{rec("a", 1, 3), rec("a", 1, 3)}), "all equal")
	missing := rec("a", 1, 4)
	missing.Time = ""
	assert.False(t, HasTimes(append(rs, missing)), "one missing")
	assert.False(t, HasTimes(nil))
	// Out-of-order times never make the line go backwards.
	back := []*autotune.Record{rec("a", 3, 5), rec("a", 2, 1), rec("a", 1, 8)}
	assert.Equal(t, []float64{4, 4, 7}, EstimateCurve(back, nil, true, startTime(back)).X)
}

func TestDatabaseFigureManyTasks(t *testing.T) {
	var rs []*autotune.Record
	for i := 0; i < 15; i++ {
		for j := 0; j <= i; j++ {
			rs = append(rs, rec(fmt.Sprintf("k%02d", i), float64(i+1), i+j))
		}
	}
	fig, err := DatabaseFigure(rs, Options{Title: "x.jsonl"})
	require.NoError(t, err)
	require.Len(t, fig.Panels, 2)
	a := fig.Panels[0]
	assert.Contains(t, a.Title, "12 of 15 tasks shown")
	require.Len(t, a.Series, MaxTasks)
	assert.Equal(t, "k14", a.Series[0].Name, "the most trials, slowest first")
	assert.Equal(t, "k03", a.Series[11].Name)
	assert.Equal(t, labelSum, fig.Panels[1].YLabel)
	assert.Equal(t, labelWall, fig.Panels[1].XLabel)
	assert.Contains(t, fig.Title, "x.jsonl: 15 tasks, 120 trials (0 failed) on cpu")

	_, err = DatabaseFigure(nil, Options{})
	assert.EqualError(t, err, "no records to plot")
}

func TestDatabaseFigureNames(t *testing.T) {
	a1, a2, a3 := rec("a", 1, 0), rec("a", 1, 1), rec("a", 1, 2)
	a2.Workload = "w_other"
	a3.Target = "cuda"
	fig, err := DatabaseFigure([]*autotune.Record{a1, a2, a3}, Options{Weights: map[string]int{}})
	require.NoError(t, err)
	var names []string
	for _, s := range fig.Panels[0].Series {
		names = append(names, s.Name)
	}
	assert.ElementsMatch(t, []string{"a #w_a", "a #w_other", "a [cuda]"}, names)
	b := fig.Panels[1]
	assert.Equal(t, labelWeighted, b.YLabel)
	require.Len(t, b.Series, 2, "one estimate per target")
	assert.Equal(t, "cpu", b.Series[0].Name)
}

func TestLogTicks(t *testing.T) {
	label := func(ts []plot.Tick) string {
		var out []string
		for _, tk := range ts {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return strings.Join(out, " ")
	}
	assert.Equal(t, "0.05 0.1 0.2 0.5 1 2", label(logTicks{}.Ticks(0.04, 3)))
	assert.Equal(t, "0.001 0.01 0.1 1 10", label(logTicks{}.Ticks(0.001, 30)))
	assert.Empty(t, logTicks{}.Ticks(0, 1))
}

func TestLinearTicks(t *testing.T) {
	label := func(ts []plot.Tick) string {
		var out []string
		for _, tk := range ts {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return strings.Join(out, " ")
	}
	assert.Equal(t, "2.50 2.55 2.60", label(linearTicks{}.Ticks(2.47, 2.63)))
	assert.Equal(t, "0 10 20 30", label(linearTicks{}.Ticks(0, 32)))
	assert.Equal(t, "-1.0 -0.5 0 0.5", label(linearTicks{}.Ticks(-1, 0.7)))
	assert.Equal(t, "0 20 40 60 80", label(linearTicks{}.Ticks(0, 96)))
	assert.Empty(t, linearTicks{}.Ticks(1, 1))
}

func TestRound125(t *testing.T) {
	assert.InDelta(t, 0.02, round125(0.021, false), 1e-15)
	assert.InDelta(t, 2.0, round125(1.2, true), 1e-15)
	assert.InDelta(t, 5.0, round125(7, false), 1e-15)
	assert.InDelta(t, 10.0, round125(7, true), 1e-15)
	assert.InDelta(t, 0.1, round125(0.1, true), 1e-15)
}

func TestFormat(t *testing.T) {
	f, err := Format("a/b.PNG")
	require.NoError(t, err)
	assert.Equal(t, "png", f)
	_, err = Format("b.pdf")
	assert.EqualError(t, err, `b.pdf: unsupported picture format ".pdf" (use .png or .svg)`)
	_, err = Format("b")
	assert.ErrorContains(t, err, "no file extension")
}

func TestWrite(t *testing.T) {
	rs := []*autotune.Record{rec("a", 30, 0), rec("b", 0.2, 1), rec("a", 20, 2), rec("b", 0.1, 4)}
	fig, err := DatabaseFigure(rs, Options{Title: "t"})
	require.NoError(t, err)
	dir := t.TempDir()
	p := filepath.Join(dir, "f.png")
	require.NoError(t, Write(p, fig))
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	img, err := png.Decode(bytes.NewReader(data))
	require.NoError(t, err)
	assert.Greater(t, img.Bounds().Dx(), img.Bounds().Dy())
	s := filepath.Join(dir, "f.svg")
	require.NoError(t, Write(s, fig))
	svg, err := os.ReadFile(s)
	require.NoError(t, err)
	assert.Contains(t, string(svg), labelBest)

	// A figure whose panels have no finite point still draws (empty frames).
	empty := Figure{Panels: []Panel{{Title: "e", Series: []Series{{Name: "x", X: []float64{1}, Y: []float64{math.Inf(1)}}}}}}
	require.NoError(t, Write(filepath.Join(dir, "e.png"), empty))

	err = Write(filepath.Join(dir, "none", "f.png"), fig)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), ".tmp", "the temporary file's name is not the user's business")
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, es, 3, "no temporary file left")
}
