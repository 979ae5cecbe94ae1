package traceevent

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWriteAndValidate(t *testing.T) {
	tr := &Trace{DisplayTimeUnit: "ms", OtherData: map[string]any{"k": 1.5}}
	tr.NameProcess(1, "p")
	tr.NameThread(1, 2, "t")
	tr.Complete("run", "run", 1, 2, 0, 10, nil)
	tr.Complete("a", "kernel", 1, 2, 1, 3, map[string]any{"flops": 2.0})
	tr.Complete("b", "kernel", 1, 2, 5, 5, nil)
	tr.Counter("bw", 1, 0, map[string]any{"bytes": 3})
	tr.Flow("tok", "dep", "1", 1, 2, 4, 3, 6)
	tr.Complete("c", "x", 1, 3, 6, 1, nil)
	path := filepath.Join(t.TempDir(), "t.json")
	require.NoError(t, tr.WriteFile(path))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	got, err := Validate(data)
	require.NoError(t, err)
	require.Len(t, got.TraceEvents, len(tr.TraceEvents))
	require.Equal(t, 1.5, got.OtherData["k"])
	entries, _ := os.ReadDir(filepath.Dir(path))
	require.Len(t, entries, 1, "no temporary file is left")
}

func TestValidateRefuses(t *testing.T) {
	for name, c := range map[string]struct{ doc, msg string }{
		"not json":      {`[`, "not a JSON object"},
		"no events":     {`{}`, "no traceEvents"},
		"no name":       {`{"traceEvents":[{"ph":"X","ts":0,"dur":1,"pid":1,"tid":1}]}`, `no "name"`},
		"no dur":        {`{"traceEvents":[{"name":"a","ph":"X","ts":0,"pid":1,"tid":1}]}`, "no duration"},
		"negative dur":  {`{"traceEvents":[{"name":"a","ph":"X","ts":0,"dur":-1,"pid":1,"tid":1}]}`, "no duration"},
		"negative ts":   {`{"traceEvents":[{"name":"a","ph":"X","ts":-3,"dur":1,"pid":1,"tid":1}]}`, "has ts"},
		"unknown phase": {`{"traceEvents":[{"name":"a","ph":"Q","ts":0,"pid":1,"tid":1}]}`, "unknown phase"},
		"out of order":  {`{"traceEvents":[{"name":"a","ph":"X","ts":5,"dur":1,"pid":1,"tid":1},{"name":"b","ph":"X","ts":2,"dur":1,"pid":1,"tid":1}]}`, "before the previous slice"},
		"overlap":       {`{"traceEvents":[{"name":"a","ph":"X","ts":0,"dur":5,"pid":1,"tid":1},{"name":"b","ph":"X","ts":3,"dur":5,"pid":1,"tid":1}]}`, "after the slice it starts in"},
		"unpaired flow": {`{"traceEvents":[{"name":"a","ph":"s","ts":0,"pid":1,"tid":1,"id":"7"}]}`, "does not pair"},
		"unknown field": {`{"traceEvents":[{"name":"a","ph":"X","ts":0,"dur":1,"pid":1,"tid":1,"zz":1}]}`, "unknown field"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Validate([]byte(c.doc))
			require.ErrorContains(t, err, c.msg)
		})
	}
}

func TestWriteFileFailureLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	tr := &Trace{}
	require.Error(t, tr.WriteFile(filepath.Join(dir, "missing", "t.json")))
	entries, _ := os.ReadDir(dir)
	require.Empty(t, entries)
}

// FuzzValidate: the trace checker never panics, and what it accepts
// marshals and validates again.
func FuzzValidate(f *testing.F) {
	f.Add([]byte(`{"traceEvents":[{"name":"a","ph":"X","ts":0,"dur":1,"pid":1,"tid":1},{"name":"s","ph":"s","ts":0,"pid":1,"tid":1,"id":"1"},{"name":"s","ph":"f","bp":"e","ts":1,"pid":1,"tid":2,"id":"1"}]}`))
	f.Add([]byte(`{"traceEvents":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, err := Validate(data)
		if err != nil {
			return
		}
		again, err := tr.Marshal()
		require.NoError(t, err)
		_, err = Validate(again)
		require.NoError(t, err)
	})
}
