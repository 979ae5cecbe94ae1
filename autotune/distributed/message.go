// Package distributed measures a tuning job's trials on workers on other
// machines through a NATS JetStream broker: the tuner publishes one
// build-and-measure job per candidate to a work-queue stream keyed by
// target (subject tessera.jobs.<target token>.<candidate>), workers pull
// the jobs of their target, measure them with autotune's local builder
// and runner processes (the same isolation, timeouts and correctness
// check as local tuning) and publish results to a results stream
// (tessera.results.<target token>.<candidate>, the last per subject
// kept), from which the tuner, the only writer of the tuning database,
// records them. A job's identity is its candidate: duplicated or
// redelivered results never become a second record.
//
// Measurer (tuner side) implements autotune.FleetMeasurer; Worker
// (worker side) serves jobs; StartEmbedded runs an in-process broker.
package distributed

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/tessera-ml/tessera/autotune"
)

// MessageVersion is the version of the job and result messages; a
// message of another version is rejected.
const MessageVersion = 1

// Subjects and streams.
const (
	JobsStream     = "TESSERA_JOBS"
	ResultsStream  = "TESSERA_RESULTS"
	WorkersBucket  = "tessera_workers"
	jobsPrefix     = "tessera.jobs."
	resultsPrefix  = "tessera.results."
	workerDurable  = "tessera-workers-"
	maxMessageSize = 16 << 20
)

// Job asks a worker to build and measure one candidate (TVM's
// MeasureInput): the task's unscheduled kernel, the candidate's trace,
// the target string and the measurement options.
type Job struct {
	Version int `json:"version"`
	// ID is the job's identity, TargetToken(target) + "." + candidate.
	ID string `json:"id"`
	// Target is the target string (targets.Target.Key) the candidate is
	// built and measured for; a worker serves only its own.
	Target string `json:"target"`
	// Workload is the task's workload key; Task its name.
	Workload string `json:"workload"`
	Task     string `json:"task"`
	// Kernel is the unscheduled kernel as a tensor IR module; Func is its
	// function's name.
	Kernel string `json:"kernel"`
	Func   string `json:"func"`
	// Constants are the task's constant parameters (autotune.Task).
	Constants []int `json:"constants,omitempty"`
	// Candidate is the candidate key the replayed trace must give.
	Candidate string          `json:"candidate"`
	Trace     json.RawMessage `json:"trace"`
	Measure   MeasureSpec     `json:"measure"`
	// Host, when set, is the only host fingerprint whose measurement the
	// tuner accepts; a worker on another host leaves the job to others.
	Host string `json:"host,omitempty"`
}

// MeasureSpec carries the measurement options of autotune.MeasureOptions
// that travel with a job (zero: the worker's defaults). Durations are in
// seconds.
type MeasureSpec struct {
	BuildTimeout     float64 `json:"build_timeout,omitempty"`
	RunTimeout       float64 `json:"run_timeout,omitempty"`
	Warmup           int     `json:"warmup,omitempty"`
	Repeats          int     `json:"repeats,omitempty"`
	MinRepeatSeconds float64 `json:"min_repeat_seconds,omitempty"`
	CacheFlush       bool    `json:"cache_flush,omitempty"`
	KeepLayouts      bool    `json:"keep_layouts,omitempty"`
	Tolerance        float64 `json:"tolerance,omitempty"`
}

// specOf is the travelling part of o.
func specOf(o autotune.MeasureOptions) MeasureSpec {
	return MeasureSpec{BuildTimeout: o.BuildTimeout.Seconds(), RunTimeout: o.RunTimeout.Seconds(), Warmup: o.Warmup, Repeats: o.Repeats, MinRepeatSeconds: o.MinRepeatSeconds, CacheFlush: o.CacheFlush, KeepLayouts: o.KeepLayouts, Tolerance: o.Tolerance}
}

// options is the worker's autotune.MeasureOptions for s.
func (s MeasureSpec) options() autotune.MeasureOptions {
	sec := func(x float64) time.Duration { return time.Duration(x * float64(time.Second)) }
	return autotune.MeasureOptions{Builders: 1, BuildTimeout: sec(s.BuildTimeout), RunTimeout: sec(s.RunTimeout), Warmup: s.Warmup, Repeats: s.Repeats, MinRepeatSeconds: s.MinRepeatSeconds, CacheFlush: s.CacheFlush, KeepLayouts: s.KeepLayouts, Tolerance: s.Tolerance}
}

// JobResult is a worker's answer to a job (TVM's MeasureResult).
type JobResult struct {
	Version   int    `json:"version"`
	ID        string `json:"id"`
	Workload  string `json:"workload"`
	Candidate string `json:"candidate"`
	// Seconds are the timed repeats; Error ("" or an autotune error kind)
	// and Msg replace them for a failed trial.
	Seconds []float64 `json:"seconds,omitempty"`
	Error   string    `json:"error,omitempty"`
	Msg     string    `json:"msg,omitempty"`
	// Worker names the worker; Host is its host fingerprint.
	Worker string `json:"worker"`
	Host   string `json:"host"`
	// Deliveries is how many times the broker had delivered the job when
	// this worker measured it (1: first delivery).
	Deliveries uint64 `json:"deliveries,omitempty"`
	// Measure echoes the job's measurement options: a tuner uses a kept
	// result only when they are its own.
	Measure MeasureSpec `json:"measure"`
}

var (
	hexKey   = regexp.MustCompile(`^[0-9a-f]{16,64}$`)
	tokenRE  = regexp.MustCompile(`^[a-z0-9_-]+-[0-9a-f]{12}$`)
	errEmpty = errors.New("empty message")
)

// TargetToken is the subject token of a target string: the target's
// name and 12 hex digits of the string's SHA-256 ("npu-3fa2…"), so that
// jobs for one target instance reach only workers built the same way.
func TargetToken(target string) string {
	name, _, _ := strings.Cut(target, " ")
	name = strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, strings.ToLower(name))
	sum := sha256.Sum256([]byte(target))
	return name + "-" + hex.EncodeToString(sum[:6])
}

// JobID is the identity of the job measuring candidate for target.
func JobID(target, candidate string) string { return TargetToken(target) + "." + candidate }

// jobSubject and resultSubject are where a job and its result go.
func jobSubject(id string) string    { return jobsPrefix + id }
func resultSubject(id string) string { return resultsPrefix + id }

// DecodeJob parses and checks a job message. Errors name what is wrong:
// invalid or truncated JSON, another version, a missing field, an ID
// that is not the target's and candidate's, a trace that is not a JSON
// object.
func DecodeJob(data []byte) (*Job, error) {
	if len(data) == 0 {
		return nil, errEmpty
	}
	var j Job
	if err := json.Unmarshal(data, &j); err != nil {
		return nil, fmt.Errorf("malformed job: %v", err)
	}
	if j.Version != MessageVersion {
		return &j, fmt.Errorf("job version %d, this Tessera reads version %d", j.Version, MessageVersion)
	}
	switch {
	case j.Target == "":
		return &j, errors.New("job without a target")
	case j.Kernel == "" || j.Func == "":
		return &j, errors.New("job without a kernel")
	case !hexKey.MatchString(j.Candidate):
		return &j, fmt.Errorf("job candidate %q is not a candidate key", j.Candidate)
	case !hexKey.MatchString(j.Workload):
		return &j, fmt.Errorf("job workload %q is not a workload key", j.Workload)
	case j.ID != JobID(j.Target, j.Candidate):
		return &j, fmt.Errorf("job id %q is not its target's and candidate's (%s)", j.ID, JobID(j.Target, j.Candidate))
	case len(j.Trace) == 0 || j.Trace[0] != '{':
		return &j, errors.New("job without a trace object")
	}
	return &j, nil
}

// DecodeResult parses and checks a result message. Errors: invalid or
// truncated JSON, another version, a missing ID, candidate or host, a
// result with neither seconds nor an error, a non-positive or non-finite
// time.
func DecodeResult(data []byte) (*JobResult, error) {
	if len(data) == 0 {
		return nil, errEmpty
	}
	var r JobResult
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("malformed result: %v", err)
	}
	if r.Version != MessageVersion {
		return nil, fmt.Errorf("result version %d, this Tessera reads version %d", r.Version, MessageVersion)
	}
	token, cand, ok := strings.Cut(r.ID, ".")
	switch {
	case !ok || !tokenRE.MatchString(token) || cand != r.Candidate || !hexKey.MatchString(cand):
		return nil, fmt.Errorf("result id %q does not name its candidate %q", r.ID, r.Candidate)
	case r.Host == "":
		return nil, errors.New("result without a host fingerprint")
	case r.Error == "" && len(r.Seconds) == 0:
		return nil, errors.New("result with neither seconds nor an error")
	}
	for _, s := range r.Seconds {
		if !(s > 0 && s < 1e9) {
			return nil, fmt.Errorf("result time %v is not a positive number of seconds", s)
		}
	}
	return &r, nil
}
