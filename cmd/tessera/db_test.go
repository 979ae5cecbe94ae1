package main

import (
	"bytes"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/autotune"
)

// writePlotDB writes a small tuning database with autotune's writer: two
// tasks on one target, ten trials each (one failed), a second apart.
func writePlotDB(t *testing.T, path string) {
	t.Helper()
	db, warns, err := autotune.OpenDatabase(path)
	require.NoError(t, err)
	require.Empty(t, warns)
	defer db.Close()
	start := time.Date(2026, 11, 27, 1, 0, 0, 0, time.UTC)
	for i := 0; i < 20; i++ {
		task, base := "fused_conv", 2e-3
		if i%2 == 1 {
			task, base = "fused_dense", 1e-4
		}
		r := &autotune.Record{
			Workload: "w_" + task, Target: "cpu -threads=2", Task: task,
			Candidate: fmt.Sprintf("c%d", i),
			Seconds:   []float64{base * (1 + 1/float64(i+1))},
			Time:      start.Add(time.Duration(i) * time.Second).Format(time.RFC3339),
		}
		if i == 4 {
			r.Seconds, r.Error, r.ErrorMsg = nil, autotune.ErrRun, "signal: segmentation fault"
		}
		require.NoError(t, db.Append(r))
	}
}

// dirEntries lists a folder's file names (to check that nothing partial,
// not even a temporary file, was left behind).
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestDBPlotPNGAndSVG(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "tune.jsonl")
	writePlotDB(t, db)
	before, err := os.ReadFile(db)
	require.NoError(t, err)

	pngPath := filepath.Join(dir, "curves.png")
	out, stderr, code := tessera("db", "plot", db, "-o", pngPath)
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, "wrote "+pngPath+"\n", out)
	f, err := os.Open(pngPath)
	require.NoError(t, err)
	img, err := png.Decode(f)
	f.Close()
	require.NoError(t, err)
	b := img.Bounds()
	assert.GreaterOrEqual(t, b.Dx(), 1000, "width in pixels")
	assert.GreaterOrEqual(t, b.Dy(), 400, "height in pixels")
	assert.Greater(t, b.Dx(), b.Dy(), "two panels side by side")

	svgPath := filepath.Join(dir, "curves.SVG")
	_, stderr, code = tessera("db", "plot", db, "--output", svgPath)
	require.Equal(t, 0, code, stderr)
	data, err := os.ReadFile(svgPath)
	require.NoError(t, err)
	svg := string(data)
	assert.True(t, strings.HasPrefix(svg, "<?xml"), svg[:min(len(svg), 100)])
	for _, want := range []string{
		"best latency so far (ms)", "trials of the task (failed ones included)",
		"wall time since the first record (s)", "sum of best kernel latencies (ms)",
		"fused_conv", "fused_dense", "tune.jsonl: 2 tasks, 20 trials (1 failed) on cpu -threads=2",
	} {
		assert.Contains(t, svg, want)
	}
	after, err := os.ReadFile(db)
	require.NoError(t, err)
	assert.Equal(t, before, after, "plot only reads the database")
	assert.ElementsMatch(t, []string{"tune.jsonl", "curves.png", "curves.SVG"}, dirEntries(t, dir))
}

func TestDBPlotBadInput(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	writePlotDB(t, good)
	lines := strings.SplitAfter(string(must(os.ReadFile(good))), "\n")
	bad := filepath.Join(dir, "bad.jsonl")
	require.NoError(t, os.WriteFile(bad, []byte(lines[0]+`{"version":1,"workload":`+"\n"+lines[1]), 0o644))
	empty := filepath.Join(dir, "empty.jsonl")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	_, _, tunerErr := autotune.OpenDatabase(bad) // what `tessera tune --db bad.jsonl` reports
	require.Error(t, tunerErr)
	out := filepath.Join(dir, "out.png")

	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"missing file", []string{filepath.Join(dir, "none.jsonl"), "-o", out}, "tuning database: open " + filepath.Join(dir, "none.jsonl") + ": no such file or directory"},
		{"malformed line", []string{bad, "-o", out}, tunerErr.Error()},
		{"unknown extension", []string{good, "-o", filepath.Join(dir, "out.pdf")}, `out.pdf: unsupported picture format ".pdf" (use .png or .svg)`},
		{"no extension", []string{good, "-o", filepath.Join(dir, "out")}, "no file extension"},
		{"no -o", []string{good}, "-o is required"},
		{"empty database", []string{empty, "-o", out}, empty + ": no records to plot"},
		{"no such folder", []string{good, "-o", filepath.Join(dir, "nodir", "x.png")}, "nodir"},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := tessera(append([]string{"db", "plot"}, c.args...)...)
			assert.Equal(t, 1, code)
			assert.Empty(t, stdout)
			assert.Contains(t, stderr, c.want)
			assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
			assert.ElementsMatch(t, []string{"good.jsonl", "bad.jsonl", "empty.jsonl"}, dirEntries(t, dir), "nothing written")
		})
	}
	assert.Contains(t, tunerErr.Error(), bad+":2: malformed record")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// `tessera tune --plot` draws the job's picture from its database, and
// refuses an unsupported picture format before tuning.
func TestTunePlot(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.mlir")
	require.NoError(t, os.WriteFile(model, []byte(tuneModel), 0o644))
	db := filepath.Join(dir, "tune.jsonl")

	_, stderr, code := tessera("tune", model, "--trials", "4", "--db", db, "--plot", filepath.Join(dir, "c.gif"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, `--plot: `+filepath.Join(dir, "c.gif")+`: unsupported picture format ".gif"`)
	assert.NoFileExists(t, db, "refused before tuning")

	needLLVMTools(t)
	svg := filepath.Join(dir, "c.svg")
	out, stderr, code := tessera("tune", model, "--trials", "4", "--batch", "2", "--repeats", "2", "--min-repeat-time", "2ms", "--threads", "2", "--db", db, "--plot", svg)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "wrote "+svg)
	data, err := os.ReadFile(svg)
	require.NoError(t, err)
	assert.Contains(t, string(data), "Σ calls × best kernel latency (ms)", "the job knows each task's number of kernels")
	assert.Contains(t, string(data), "2 tasks, 4 trials")
	assert.True(t, bytes.Contains(data, []byte("fused_0")) || bytes.Contains(data, []byte("fused_1")), "task names")
}
