package distributed

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/autotune"
)

const testTarget = "npu -config=default -datapath=bf16"

func validJob() *Job {
	cand := strings.Repeat("ab", 16)
	return &Job{Version: MessageVersion, ID: JobID(testTarget, cand), Target: testTarget, Workload: strings.Repeat("cd", 32), Task: "fused_0",
		Kernel: "module {}", Func: "fused_0", Candidate: cand, Trace: json.RawMessage(`{"func":"fused_0","insts":[]}`)}
}

func TestTargetToken(t *testing.T) {
	tok := TargetToken(testTarget)
	assert.Regexp(t, `^npu-[0-9a-f]{12}$`, tok)
	assert.NotEqual(t, tok, TargetToken(testTarget+" -threads=2"), "another target string, another token")
	assert.Regexp(t, `^c_u-[0-9a-f]{12}$`, TargetToken("c.u x"), "no subject separators in a token")
}

func TestDecodeJobRejects(t *testing.T) {
	data, err := json.Marshal(validJob())
	require.NoError(t, err)
	_, err = DecodeJob(data)
	require.NoError(t, err)
	cases := map[string]string{
		"truncated JSON":  string(data[:len(data)/2]),
		"another version": strings.Replace(string(data), `"version":1`, `"version":7`, 1),
		"no target":       strings.Replace(string(data), `"target":"`+testTarget+`"`, `"target":""`, 1),
		"bad candidate":   strings.Replace(string(data), `"candidate":"abab`, `"candidate":"zz`, 1),
		"foreign id":      strings.Replace(string(data), `"id":"npu-`, `"id":"cpu-`, 1),
		"empty":           "",
	}
	want := map[string]string{"truncated JSON": "malformed job", "another version": "job version 7", "no target": "without a target", "bad candidate": "not a candidate key", "foreign id": "is not its target's and candidate's", "empty": "empty message"}
	for name, msg := range cases {
		_, err := DecodeJob([]byte(msg))
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), want[name], name)
	}
}

func TestDecodeResultRejects(t *testing.T) {
	j := validJob()
	ok := JobResult{Version: MessageVersion, ID: j.ID, Candidate: j.Candidate, Seconds: []float64{1e-6}, Host: "h", Worker: "w"}
	data, _ := json.Marshal(ok)
	_, err := DecodeResult(data)
	require.NoError(t, err)
	for name, r := range map[string]JobResult{
		"no host":      {Version: 1, ID: j.ID, Candidate: j.Candidate, Seconds: []float64{1}},
		"no outcome":   {Version: 1, ID: j.ID, Candidate: j.Candidate, Host: "h"},
		"negative":     {Version: 1, ID: j.ID, Candidate: j.Candidate, Host: "h", Seconds: []float64{-1}},
		"id mismatch":  {Version: 1, ID: j.ID, Candidate: strings.Repeat("ef", 16), Host: "h", Seconds: []float64{1}},
		"bad version":  {Version: 2, ID: j.ID, Candidate: j.Candidate, Host: "h", Seconds: []float64{1}},
		"garbage id":   {Version: 1, ID: "x", Candidate: j.Candidate, Host: "h", Seconds: []float64{1}},
		"subject id":   {Version: 1, ID: "npu-0123456789ab.*", Candidate: "*", Host: "h", Seconds: []float64{1}},
		"empty failed": {Version: 1, ID: j.ID, Candidate: j.Candidate, Host: "h", Seconds: []float64{}},
	} {
		data, _ := json.Marshal(r)
		_, err := DecodeResult(data)
		assert.Error(t, err, name)
	}
	_, err = DecodeResult(data[:10])
	assert.ErrorContains(t, err, "malformed result")
}

func TestParseEmbedded(t *testing.T) {
	for in, want := range map[string]int{"embedded": 4222, "embedded:0": 0, "embedded:14222": 14222} {
		port, ok, err := ParseEmbedded(in)
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, want, port)
	}
	_, ok, _ := ParseEmbedded("nats://127.0.0.1:4222")
	assert.False(t, ok)
	_, ok, err := ParseEmbedded("embedded:x")
	assert.True(t, ok)
	assert.ErrorContains(t, err, "not a number")
}

// FuzzDecodeJob: the decoder never panics, and an accepted job is
// self-consistent (its id names its target and candidate) and
// round-trips through JSON.
func FuzzDecodeJob(f *testing.F) {
	data, _ := json.Marshal(validJob())
	f.Add(data)
	f.Add(data[:len(data)-3])
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, b []byte) {
		j, err := DecodeJob(b)
		if err != nil {
			return
		}
		if j.ID != JobID(j.Target, j.Candidate) {
			t.Fatalf("accepted job %q does not name its candidate", j.ID)
		}
		again, err := json.Marshal(j)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := DecodeJob(again); err != nil {
			t.Fatalf("re-encoded job rejected: %v", err)
		}
	})
}

// FuzzDecodeResult: the decoder never panics and accepts only results
// with a host and an outcome.
func FuzzDecodeResult(f *testing.F) {
	j := validJob()
	data, _ := json.Marshal(JobResult{Version: 1, ID: j.ID, Candidate: j.Candidate, Seconds: []float64{1e-6}, Host: "h"})
	f.Add(data)
	f.Add(data[:len(data)/2])
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeResult(b)
		if err != nil {
			return
		}
		if r.Host == "" || (r.Error == "" && len(r.Seconds) == 0) {
			t.Fatalf("accepted an incomplete result %+v", r)
		}
	})
}

// The measurement options a job carries reach the worker's measurer as
// the tuner set them (a worker measuring with row-major weights where
// the tuner asked for the model's layouts would record other times).
func TestMeasureSpecTravels(t *testing.T) {
	o := autotune.MeasureOptions{BuildTimeout: 7 * time.Second, RunTimeout: 3 * time.Second, Warmup: 2, Repeats: 9, MinRepeatSeconds: 0.25, CacheFlush: true, KeepLayouts: true, Tolerance: 1e-4}
	b, err := json.Marshal(specOf(o))
	require.NoError(t, err)
	var s MeasureSpec
	require.NoError(t, json.Unmarshal(b, &s))
	got := s.options()
	o.Builders = 1 // one builder per worker
	assert.Equal(t, o, got)
}
