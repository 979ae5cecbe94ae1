package autotune

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/schedule"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// dbGemm parses the GEMM kernel of the database tests.
func dbGemm(t *testing.T) *tir.PrimFunc {
	t.Helper()
	m, err := tir.ParseString("gemm.tir", featGemmSrc(16, 10, 12))
	require.NoError(t, err)
	require.NoError(t, tir.Verify(m))
	return m.Funcs[0]
}

// dbSchedule samples tilings of the GEMM's i and j loops (seeded), splits
// them by the sampled factors ("$v" references in the trace), parallelizes
// the outer i loop and vectorizes the inner j loop.
func dbSchedule(t *testing.T, seed int64) *schedule.Schedule {
	t.Helper()
	s := schedule.NewWithSeed(dbGemm(t), seed)
	b, err := s.GetBlock("C")
	require.NoError(t, err)
	ls, err := s.GetLoops(b)
	require.NoError(t, err)
	require.Len(t, ls, 3)
	fi, err := s.SamplePerfectTile(ls[0], 2, 8)
	require.NoError(t, err)
	is, err := s.Split(ls[0], fi)
	require.NoError(t, err)
	fj, err := s.SamplePerfectTile(ls[1], 3, 0)
	require.NoError(t, err)
	js, err := s.Split(ls[1], fj)
	require.NoError(t, err)
	require.NoError(t, s.Parallel(is[0]))
	require.NoError(t, s.Vectorize(js[2]))
	return s
}

// dbPath returns a fresh database path in a temporary directory.
func dbPath(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "tune.jsonl")
}

// dbOpen opens the database at path and expects no error and no warning.
func dbOpen(t *testing.T, path string) *Database {
	t.Helper()
	d, warns, err := OpenDatabase(path)
	require.NoError(t, err)
	require.Empty(t, warns)
	t.Cleanup(func() { d.Close() })
	return d
}

// dbRec builds a successful record (no seconds: a failed one).
func dbRec(workload, target, candidate string, seconds ...float64) *Record {
	return &Record{Workload: workload, Target: target, Task: "task_" + workload, Candidate: candidate, Seconds: seconds}
}

// dbLine encodes a record as one line with its newline, stamped like Append.
func dbLine(t *testing.T, r *Record) string {
	t.Helper()
	if r.Version == 0 {
		r.Version = RecordVersion
	}
	r.Tessera, r.Time = Version, "2026-01-02T03:04:05Z"
	line, err := encodeRecord(r)
	require.NoError(t, err)
	return string(line) + "\n"
}

func dbCandidates(rs []*Record) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Candidate)
	}
	return out
}

func dbFileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	return st.Size()
}

func TestDatabaseAppendReopen(t *testing.T) {
	path := dbPath(t)
	d, warns, err := OpenDatabase(path)
	require.NoError(t, err)
	require.Empty(t, warns)
	assert.Equal(t, path, d.Path())
	assert.Equal(t, int64(0), dbFileSize(t, path), "the database is created empty")
	assert.Empty(t, d.Workloads())
	assert.Empty(t, d.Records("w1", "cpu"))

	before := time.Now().UTC().Truncate(time.Second)
	r1 := dbRec("w1", "cpu -threads=2", "c1", 3e-3, 1e-3, 2e-3)
	r1.Trace = dbSchedule(t, 3).Trace()
	r2 := dbRec("w2", "cpu -threads=2", "c2")
	r2.Error, r2.ErrorMsg = ErrBuild, "llc: exit status 1\n\"quoted\" <&>"
	r3 := dbRec("w1", "cpu -vector-bits=512", "c3", 0.5)
	r4 := dbRec("w1", "cpu -threads=2", "c4", 2e-3)
	r4.Time = "2020-05-06T07:08:09Z"
	r4.Tessera = "0.1.0"
	for _, r := range []*Record{r1, r2, r3, r4} {
		require.NoError(t, d.Append(r))
	}
	after := time.Now().UTC()

	// Append stamps the empty fields of the caller's record, and only those.
	assert.Equal(t, RecordVersion, r1.Version)
	assert.Equal(t, Version, r1.Tessera)
	stamp, err := time.Parse(time.RFC3339, r1.Time)
	require.NoError(t, err, r1.Time)
	assert.True(t, strings.HasSuffix(r1.Time, "Z"), "UTC timestamp: %s", r1.Time)
	assert.False(t, stamp.Before(before) || stamp.After(after), "%s not in [%s, %s]", stamp, before, after)
	assert.Equal(t, "2020-05-06T07:08:09Z", r4.Time)
	assert.Equal(t, "0.1.0", r4.Tessera)

	check := func(d *Database) {
		t.Helper()
		assert.Equal(t, []string{"w1", "w2"}, d.Workloads())
		assert.Equal(t, []string{"c1", "c4"}, dbCandidates(d.Records("w1", "cpu -threads=2")))
		assert.Equal(t, []string{"c3"}, dbCandidates(d.Records("w1", "cpu -vector-bits=512")))
		assert.Equal(t, []string{"c2"}, dbCandidates(d.Records("w2", "cpu -threads=2")))
		assert.Empty(t, d.Records("w2", "cpu -vector-bits=512"))
		assert.Equal(t, 2, d.Count("w1", "cpu -threads=2"))
		assert.Equal(t, 1, d.Count("w2", "cpu -threads=2"))
		assert.Equal(t, 0, d.Count("w3", "cpu -threads=2"))
		got := d.Records("w2", "cpu -threads=2")[0]
		assert.Equal(t, ErrBuild, got.Error)
		assert.Equal(t, r2.ErrorMsg, got.ErrorMsg)
		assert.Nil(t, got.Trace)
	}
	check(d)
	inMemory := d.Records("w1", "cpu -threads=2")
	require.NoError(t, d.Close())
	require.NoError(t, d.Close(), "closing twice is not an error")
	assert.Error(t, d.Append(dbRec("w9", "cpu", "c9", 1)), "append after close")
	check(d) // the records stay queryable after Close

	// One record per line, each a JSON object, the trace last.
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.HasSuffix(data, []byte("\n")))
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	require.Len(t, lines, 4)
	for i, l := range lines {
		var obj map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &obj), "line %d", i+1)
		assert.Equal(t, float64(RecordVersion), obj["version"])
		assert.Contains(t, obj, "trace")
		assert.Contains(t, obj, "candidate")
	}
	assert.True(t, strings.HasPrefix(lines[0], fmt.Sprintf(`{"version":%d,"workload":"w1","target":"cpu -threads=2","task":"task_w1","candidate":"c1","seconds":[0.003,0.001,0.002],"tessera":%q,"time":%q,"trace":{"insts":[{"kind":"get_block",`, RecordVersion, Version, r1.Time)), lines[0])
	assert.True(t, strings.HasSuffix(lines[0], `]}}`), lines[0])
	assert.Equal(t, fmt.Sprintf(`{"version":%d,"workload":"w2","target":"cpu -threads=2","task":"task_w2","candidate":"c2","error":"build","error_msg":"llc: exit status 1\n\"quoted\" \u003c\u0026\u003e","tessera":%q,"time":%q,"trace":null}`, RecordVersion, Version, r2.Time), lines[1])

	d2 := dbOpen(t, path)
	check(d2)
	// What Append kept in memory is what a reload gives.
	assert.Equal(t, inMemory, d2.Records("w1", "cpu -threads=2"))
}

func TestDatabaseKeepsItsOwnCopy(t *testing.T) {
	d := dbOpen(t, dbPath(t))
	r := dbRec("w", "cpu", "c", 1, 2, 3)
	require.NoError(t, d.Append(r))
	r.Seconds[0] = 100
	r.Candidate = "changed"
	rs := d.Records("w", "cpu")
	require.Len(t, rs, 1)
	assert.Equal(t, []float64{1, 2, 3}, rs[0].Seconds)
	assert.Equal(t, "c", rs[0].Candidate)
	rs[0] = nil // the returned slice is the caller's
	assert.NotNil(t, d.Records("w", "cpu")[0])
	ws := d.Workloads()
	ws[0] = "x"
	assert.Equal(t, []string{"w"}, d.Workloads())
}

func TestDatabaseTraceRoundTrip(t *testing.T) {
	path := dbPath(t)
	d := dbOpen(t, path)
	s := dbSchedule(t, 11)
	s.Trace().Func = "gemm"
	text, err := s.Trace().JSON()
	require.NoError(t, err)
	require.Contains(t, string(text), `"$v`, "the trace references sampled values")
	require.Contains(t, string(text), `"sample_perfect_tile"`)
	want, err := schedule.ParseTrace(text)
	require.NoError(t, err)

	r := dbRec("w", "cpu", "c", 1e-3)
	r.Trace = s.Trace()
	require.NoError(t, d.Append(r))
	require.NoError(t, d.Close())

	d2 := dbOpen(t, path)
	rs := d2.Records("w", "cpu")
	require.Len(t, rs, 1)
	got := rs[0].Trace
	require.NotNil(t, got)
	assert.Equal(t, want, got)
	assert.Equal(t, "gemm", got.Func)
	gotText, err := got.JSON()
	require.NoError(t, err)
	assert.Equal(t, string(text), string(gotText))

	// The decisions come back as int64 values (not float64) and the
	// references as strings, so the trace replays to the same kernel.
	nSample := 0
	for _, in := range got.Insts {
		switch in.Kind {
		case "sample_perfect_tile":
			nSample++
			dec, ok := in.Decision.([]any)
			require.True(t, ok, "decision %T", in.Decision)
			for _, v := range dec {
				assert.IsType(t, int64(0), v)
			}
			assert.IsType(t, int64(0), in.Attrs["n"])
		case "split":
			fs, ok := in.Attrs["factors"].([]any)
			require.True(t, ok, "factors %T", in.Attrs["factors"])
			for _, v := range fs {
				ref, ok := v.(string)
				require.True(t, ok, "factor %T", v)
				assert.True(t, strings.HasPrefix(ref, "$v"), ref)
			}
		}
	}
	assert.Equal(t, 2, nSample)
	replayed, err := schedule.Replay(dbGemm(t), got)
	require.NoError(t, err)
	assert.Equal(t, tir.PrintFunc(s.Func(), tir.PrintOptions{}), tir.PrintFunc(replayed.Func(), tir.PrintOptions{}))
}

func TestDatabaseTornLastLine(t *testing.T) {
	path := dbPath(t)
	d := dbOpen(t, path)
	require.NoError(t, d.Append(dbRec("w", "cpu", "c1", 1)))
	require.NoError(t, d.Append(dbRec("w", "cpu", "c2", 2)))
	require.NoError(t, d.Close())
	complete := dbFileSize(t, path)

	// An append interrupted half-way through the line.
	full := dbLine(t, dbRec("w", "cpu", "c3", 3))
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.WriteString(full[:len(full)/2])
	require.NoError(t, err)
	require.NoError(t, f.Close())

	d2, warns, err := OpenDatabase(path)
	require.NoError(t, err)
	require.Len(t, warns, 1)
	assert.True(t, strings.HasPrefix(warns[0], path+":3: warning: "), warns[0])
	assert.Contains(t, warns[0], "torn")
	assert.Equal(t, []string{"c1", "c2"}, dbCandidates(d2.Records("w", "cpu")))
	assert.Equal(t, complete, dbFileSize(t, path), "truncated back to the last complete line")

	// The next append starts a clean line.
	require.NoError(t, d2.Append(dbRec("w", "cpu", "c4", 4)))
	require.NoError(t, d2.Close())
	d3 := dbOpen(t, path)
	assert.Equal(t, []string{"c1", "c2", "c4"}, dbCandidates(d3.Records("w", "cpu")))
	best, ok := d3.Best("w", "cpu")
	require.True(t, ok)
	assert.Equal(t, "c1", best.Candidate)
}

func TestDatabaseTornOnlyLine(t *testing.T) {
	path := dbPath(t)
	require.NoError(t, os.WriteFile(path, []byte(`{"version":1,"workl`), 0o644))
	d, warns, err := OpenDatabase(path)
	require.NoError(t, err)
	defer d.Close()
	require.Len(t, warns, 1)
	assert.True(t, strings.HasPrefix(warns[0], path+":1: warning: "), warns[0])
	assert.Empty(t, d.Workloads())
	assert.Equal(t, int64(0), dbFileSize(t, path))
	require.NoError(t, d.Append(dbRec("w", "cpu", "c", 1)))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(data), `{"version":1,`), string(data))
}

func TestDatabaseUnterminatedLastRecord(t *testing.T) {
	path := dbPath(t)
	l1 := dbLine(t, dbRec("w", "cpu", "c1", 1))
	l2 := dbLine(t, dbRec("w", "cpu", "c2", 2))
	require.NoError(t, os.WriteFile(path, []byte(l1+strings.TrimSuffix(l2, "\n")), 0o644))
	d := dbOpen(t, path)
	assert.Equal(t, []string{"c1", "c2"}, dbCandidates(d.Records("w", "cpu")))
	require.NoError(t, d.Append(dbRec("w", "cpu", "c3", 3)))
	require.NoError(t, d.Close())
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, 3, strings.Count(string(data), "\n"))
	assert.True(t, strings.HasPrefix(string(data), l1+l2), "the newline was added after the complete record")
	d2 := dbOpen(t, path)
	assert.Equal(t, []string{"c1", "c2", "c3"}, dbCandidates(d2.Records("w", "cpu")))
}

func TestDatabaseMalformedLine(t *testing.T) {
	good1 := dbLine(t, dbRec("w", "cpu", "c1", 1))
	good2 := dbLine(t, dbRec("w", "cpu", "c2", 2))
	for _, c := range []struct{ name, line, want string }{
		{"cut", `{"version":1,"workload":` + "\n", "malformed record"},
		{"garbage", "hello\n", "malformed record"},
		{"no version", `{"workload":"w","target":"cpu","trace":null}` + "\n", "no version"},
		{"version 0", `{"version":0,"workload":"w","target":"cpu","trace":null}` + "\n", "version 0 is not positive"},
		{"string version", `{"version":"1","workload":"w","target":"cpu","trace":null}` + "\n", "malformed record"},
		{"no workload", `{"version":1,"target":"cpu","trace":null}` + "\n", "no workload"},
		{"no target", `{"version":1,"workload":"w","trace":null}` + "\n", "no target"},
		{"bad seconds", `{"version":1,"workload":"w","target":"cpu","seconds":"fast","trace":null}` + "\n", "malformed record"},
		{"bad trace", `{"version":1,"workload":"w","target":"cpu","trace":{"insts":[{"kind":""}]}}` + "\n", "no kind"},
		{"trace field", `{"version":1,"workload":"w","target":"cpu","trace":{"insts":[],"bogus":1}}` + "\n", "bogus"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := dbPath(t)
			content := good1 + c.line + good2
			require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
			d, _, err := OpenDatabase(path)
			require.Error(t, err)
			assert.Nil(t, d)
			assert.Contains(t, err.Error(), path+":2: ")
			assert.Contains(t, err.Error(), c.want)
			data, rerr := os.ReadFile(path)
			require.NoError(t, rerr)
			assert.Equal(t, content, string(data), "a failed open leaves the file alone")
		})
	}

	// A malformed last line that does end with a newline is not a torn
	// append: it is an error too.
	path := dbPath(t)
	require.NoError(t, os.WriteFile(path, []byte(good1+good2+"{\"version\":1,\n"), 0o644))
	_, _, err := OpenDatabase(path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), path+":3: ")
	// So is a complete JSON value that is not a valid record, even unterminated.
	require.NoError(t, os.WriteFile(path, []byte(good1+`{"version":1,"target":"cpu"}`), 0o644))
	_, _, err = OpenDatabase(path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), path+":2: ")
	assert.Contains(t, err.Error(), "no workload")
}

func TestDatabaseFutureVersion(t *testing.T) {
	path := dbPath(t)
	good1 := dbLine(t, dbRec("w", "cpu", "c1", 1))
	good2 := dbLine(t, dbRec("w", "cpu", "c2", 2))
	future := fmt.Sprintf(`{"version":%d,"workload":"w","target":"cpu","candidate":"c9","seconds":{"new":"format"}}`, RecordVersion+1)
	content := good1 + "\n" + future + "\n" + good2 + future
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	d, warns, err := OpenDatabase(path)
	require.NoError(t, err)
	defer d.Close()
	require.Len(t, warns, 2)
	assert.True(t, strings.HasPrefix(warns[0], path+":3: warning: "), warns[0])
	assert.Contains(t, warns[0], fmt.Sprintf("version %d", RecordVersion+1))
	assert.True(t, strings.HasPrefix(warns[1], path+":5: warning: "), warns[1])
	assert.Equal(t, []string{"c1", "c2"}, dbCandidates(d.Records("w", "cpu")))
	assert.False(t, d.Has("w", "cpu", "c9"))
	assert.Equal(t, 2, d.Count("w", "cpu"))
	// The skipped records stay in the file (a newer Tessera reads them),
	// and the unterminated last one got its newline.
	require.NoError(t, d.Append(dbRec("w", "cpu", "c3", 3)))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(data), content+"\n"), string(data))
}

func TestDatabaseBlankLines(t *testing.T) {
	path := dbPath(t)
	content := "\n" + dbLine(t, dbRec("w", "cpu", "c1", 1)) + "  \n\n" + dbLine(t, dbRec("w", "cpu", "c2", 2))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	d := dbOpen(t, path)
	assert.Equal(t, []string{"c1", "c2"}, dbCandidates(d.Records("w", "cpu")))
}

func TestDatabaseBestHasCount(t *testing.T) {
	d := dbOpen(t, dbPath(t))
	_, ok := d.Best("w", "cpu")
	assert.False(t, ok, "empty database")

	failed := dbRec("w", "cpu", "f1")
	failed.Error, failed.ErrorMsg = ErrTimeout, "exceeded 10s"
	require.NoError(t, d.Append(failed))
	wrong := dbRec("w", "cpu", "f2", 1e-9) // fast but wrong: not OK
	wrong.Error = ErrWrong
	require.NoError(t, d.Append(wrong))
	_, ok = d.Best("w", "cpu")
	assert.False(t, ok, "only failed records")

	for _, r := range []*Record{
		dbRec("w", "cpu", "a", 3, 1, 2),   // median 2
		dbRec("w", "cpu", "b", 1.5, 0.5),  // median 1
		dbRec("w", "cpu", "c", 0.25, 7),   // median 3.625 despite the lowest single time
		dbRec("w", "cpu", "d", 1, 1),      // median 1: a tie, b came first
		dbRec("w", "gpu", "e", 0.001),     // another target
		dbRec("v", "cpu", "g", 0.0001, 2), // another workload
	} {
		require.NoError(t, d.Append(r))
	}
	best, ok := d.Best("w", "cpu")
	require.True(t, ok)
	assert.Equal(t, "b", best.Candidate)
	assert.Equal(t, 1.0, best.Median())
	best, ok = d.Best("w", "gpu")
	require.True(t, ok)
	assert.Equal(t, "e", best.Candidate)
	_, ok = d.Best("w", "tpu")
	assert.False(t, ok)

	assert.True(t, d.Has("w", "cpu", "f1"), "a failed trial counts")
	assert.True(t, d.Has("w", "cpu", "a"))
	assert.False(t, d.Has("w", "gpu", "a"), "another target")
	assert.False(t, d.Has("v", "cpu", "a"), "another workload")
	assert.False(t, d.Has("w", "cpu", "z"))

	assert.Equal(t, 6, d.Count("w", "cpu"))
	assert.Equal(t, 1, d.Count("w", "gpu"))
	assert.Equal(t, 1, d.Count("v", "cpu"))
	assert.Equal(t, []string{"w", "v"}, d.Workloads())

	// A faster candidate appended later becomes the best.
	require.NoError(t, d.Append(dbRec("w", "cpu", "h", 0.9)))
	best, _ = d.Best("w", "cpu")
	assert.Equal(t, "h", best.Candidate)
}

func TestDatabaseAppendErrors(t *testing.T) {
	path := dbPath(t)
	d := dbOpen(t, path)
	require.NoError(t, d.Append(dbRec("w", "cpu", "ok", 1)))
	size := dbFileSize(t, path)
	future := dbRec("w", "cpu", "c")
	future.Version = RecordVersion + 1
	negative := dbRec("w", "cpu", "c")
	negative.Version = -1
	badTrace := dbRec("w", "cpu", "c", 1)
	badTrace.Trace = &schedule.Trace{Insts: []schedule.Instruction{{Kind: "annotate", Attrs: map[string]any{"f": func() {}}}}}
	for _, c := range []struct {
		name string
		r    *Record
		want string
	}{
		{"nil", nil, "nil record"},
		{"no workload", dbRec("", "cpu", "c", 1), "no workload"},
		{"no target", dbRec("w", "", "c", 1), "no target"},
		{"future version", future, "newer"},
		{"negative version", negative, "not positive"},
		{"NaN", dbRec("w", "cpu", "c", math.NaN()), "NaN"},
		{"Inf", dbRec("w", "cpu", "c", math.Inf(1)), "+Inf"},
		{"unencodable trace", badTrace, "annotate"},
	} {
		err := d.Append(c.r)
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
	}
	assert.Equal(t, size, dbFileSize(t, path), "nothing was written")
	assert.Equal(t, 1, d.Count("w", "cpu"))
	assert.False(t, d.Has("w", "cpu", "c"))
	assert.Equal(t, []string{"w"}, d.Workloads())
}

func TestDatabaseOpenErrors(t *testing.T) {
	dir := t.TempDir()
	_, _, err := OpenDatabase(filepath.Join(dir, "missing", "tune.jsonl"))
	assert.Error(t, err, "the directory does not exist")
	_, _, err = OpenDatabase(dir)
	assert.Error(t, err, "a directory")
}

// ReadRecords reads what OpenDatabase reads, fails with OpenDatabase's
// located error on a malformed line, and never writes: a missing file is
// not created and a torn last line stays in the file.
func TestReadRecords(t *testing.T) {
	good1 := dbLine(t, dbRec("w", "cpu", "c1", 1))
	good2 := dbLine(t, dbRec("v", "cpu", "c2", 2))
	future := fmt.Sprintf(`{"version":%d,"workload":"w","target":"cpu"}`, RecordVersion+1) + "\n"
	path := dbPath(t)
	content := good1 + "\n" + future + good2 + `{"version":1,"wor`
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	rs, warns, err := ReadRecords(path)
	require.NoError(t, err)
	assert.Equal(t, []string{"c1", "c2"}, dbCandidates(rs))
	require.Len(t, warns, 2)
	assert.True(t, strings.HasPrefix(warns[0], path+":3: warning: "), warns[0])
	assert.True(t, strings.HasPrefix(warns[1], path+":5: warning: skipping a torn last line"), warns[1])
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, content, string(data), "ReadRecords leaves the file alone")

	bad := dbPath(t)
	require.NoError(t, os.WriteFile(bad, []byte(good1+"hello\n"+good2), 0o644))
	_, _, rerr := ReadRecords(bad)
	require.Error(t, rerr)
	_, _, oerr := OpenDatabase(bad)
	require.Error(t, oerr)
	assert.Equal(t, oerr.Error(), rerr.Error())
	assert.True(t, strings.HasPrefix(rerr.Error(), bad+":2: malformed record: "), rerr.Error())

	missing := filepath.Join(t.TempDir(), "none.jsonl")
	_, _, err = ReadRecords(missing)
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "\n")
	assert.Contains(t, err.Error(), "no such file")
	_, statErr := os.Stat(missing)
	assert.True(t, os.IsNotExist(statErr), "ReadRecords created the file")
}

func TestDatabaseFsync(t *testing.T) {
	path := dbPath(t)
	d := dbOpen(t, path)
	syncs := 0
	d.syncFile = func(f *os.File) error {
		syncs++
		return f.Sync()
	}
	for i := 0; i < 3; i++ {
		require.NoError(t, d.Append(dbRec("w", "cpu", fmt.Sprint("c", i), 1)))
		assert.Equal(t, i+1, syncs, "one fsync per append")
	}
	size := dbFileSize(t, path)

	// A failed fsync fails the append, which then leaves no trace.
	d.syncFile = func(*os.File) error { return errors.New("disk on fire") }
	err := d.Append(dbRec("w", "cpu", "lost", 1))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "fsync")
	assert.Contains(t, err.Error(), "disk on fire")
	assert.Equal(t, size, dbFileSize(t, path))
	assert.False(t, d.Has("w", "cpu", "lost"))
	assert.Equal(t, 3, d.Count("w", "cpu"))

	d.syncFile = (*os.File).Sync
	require.NoError(t, d.Append(dbRec("w", "cpu", "c3", 1)))
	require.NoError(t, d.Close())
	d2 := dbOpen(t, path)
	assert.Equal(t, []string{"c0", "c1", "c2", "c3"}, dbCandidates(d2.Records("w", "cpu")))
}

func TestDatabaseConcurrentAppends(t *testing.T) {
	path := dbPath(t)
	d := dbOpen(t, path)
	const writers, each = 6, 20
	var wg sync.WaitGroup
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				r := dbRec(fmt.Sprint("w", g%2), "cpu", fmt.Sprintf("g%d-%d", g, i), float64(1+g*each+i))
				if i%5 == 0 {
					r.Seconds, r.Error = nil, ErrRun
				}
				assert.NoError(t, d.Append(r))
				// Readers run alongside the writers.
				d.Best("w0", "cpu")
				d.Count("w1", "cpu")
				d.Records("w0", "cpu")
				d.Workloads()
				d.Has("w1", "cpu", "g1-0")
			}
		}(g)
	}
	wg.Wait()

	check := func(d *Database) {
		t.Helper()
		total := d.Count("w0", "cpu") + d.Count("w1", "cpu")
		assert.Equal(t, writers*each, total)
		for g := 0; g < writers; g++ {
			// Each writer's records are in its order.
			var mine []string
			for _, c := range dbCandidates(d.Records(fmt.Sprint("w", g%2), "cpu")) {
				if strings.HasPrefix(c, fmt.Sprintf("g%d-", g)) {
					mine = append(mine, c)
				}
			}
			require.Len(t, mine, each)
			for i, c := range mine {
				assert.Equal(t, fmt.Sprintf("g%d-%d", g, i), c)
			}
		}
		best, ok := d.Best("w0", "cpu")
		require.True(t, ok)
		assert.Equal(t, "g0-1", best.Candidate)
		best, ok = d.Best("w1", "cpu")
		require.True(t, ok)
		assert.Equal(t, "g1-1", best.Candidate)
	}
	check(d)
	require.NoError(t, d.Close())
	check(dbOpen(t, path))
}
