package autotune

import (
	"maps"
	"math"
	"sort"

	"github.com/tessera-ml/tessera/schedule"
)

// RecordVersion is the version of the measure-record format written by
// this Tessera; records with a larger version are skipped on load.
const RecordVersion = 1

// Version is the Tessera version stamped into every record.
const Version = "0.6.0"

// Error kinds of a failed trial (Record.Error).
const (
	ErrBuild   = "build"        // replay, code generation or the toolchain failed
	ErrRun     = "run"          // the candidate crashed (signal) or returned an error
	ErrTimeout = "timeout"      // building or running exceeded its time limit
	ErrWrong   = "wrong_result" // the output differs from the interpreter's
)

// Record is one measure record (a trial) of the tuning database: TVM's
// MeasureInput/MeasureResult pair, one JSON object per line (DESIGN.md,
// "Tuning records").
type Record struct {
	Version   int    `json:"version"`
	Workload  string `json:"workload"`  // workload key: hash of the canonical kernel tensor IR + target
	Target    string `json:"target"`    // target string, e.g. "cpu -vector-bits=512 -threads=2"
	Task      string `json:"task"`      // the kernel's name when it was recorded (informational)
	Candidate string `json:"candidate"` // hash of the scheduled kernel's printed tensor IR
	// Bindings are the sizes of the symbolic dimensions the trial was
	// measured at (Task.Bindings; absent for a static kernel): the trace
	// replays on the kernel specialized at them.
	Bindings map[string]int64 `json:"bindings,omitempty"`
	// Trace replays on the unscheduled kernel to give the candidate.
	Trace *schedule.Trace `json:"trace"`
	// Seconds holds each timed repeat's latency in seconds (empty on error).
	Seconds []float64 `json:"seconds,omitempty"`
	// Error is "" for a successful trial or one of ErrBuild, ErrRun,
	// ErrTimeout, ErrWrong; ErrorMsg says what happened.
	Error    string `json:"error,omitempty"`
	ErrorMsg string `json:"error_msg,omitempty"`
	// CacheFlush is set when the task's constant arguments and outputs
	// (else the arguments after the first) were flushed from the CPU
	// cache before each timed call (MeasureOptions.CacheFlush; before
	// 2026-11-29 the constants only).
	CacheFlush bool `json:"cache_flush,omitempty"`
	// RewriteLayout is set when the task's constant arguments were
	// measured in the layouts the compiled model stores them in
	// (MeasureOptions.KeepLayouts off, the task has constants); records
	// without it timed them row-major.
	RewriteLayout bool `json:"rewrite_layout,omitempty"`
	// InModel, when set, makes the record an in-model measurement, not a
	// trial: the ID (start time, RFC 3339 UTC) of the RerankInModel job
	// that compiled the model with this candidate and timed its kernels
	// there; Seconds are then, per round, the sum over the task's kernels
	// of their median per-call time in the model. Database.Ranked puts the
	// latest job's first; trial counts, the search and the plots skip
	// these records.
	InModel string `json:"in_model,omitempty"`
	// Host is the fingerprint of the worker host that measured the trial
	// in a distributed job (autotune/distributed: CPU model, cores and
	// target string); empty for a trial measured by the tuner's host.
	Host    string `json:"host,omitempty"`
	Tessera string `json:"tessera"` // Tessera version
	Time    string `json:"time"`    // RFC 3339 UTC timestamp
}

// Rows is the product of the Bindings' sizes (1 for a static kernel):
// the work a symbolic workload's trial did, in units of one size-1 call.
func (r *Record) Rows() float64 {
	n := 1.0
	for _, v := range r.Bindings {
		n *= float64(max(v, 1))
	}
	return n
}

// SameBindings reports whether the record was measured at the sizes b.
func (r *Record) SameBindings(b map[string]int64) bool {
	return maps.Equal(r.Bindings, b)
}

// OK reports whether the trial measured successfully.
func (r *Record) OK() bool { return r.Error == "" && len(r.Seconds) > 0 }

// Median is the median of Seconds (+Inf for a failed trial).
func (r *Record) Median() float64 {
	if !r.OK() {
		return math.Inf(1)
	}
	s := append([]float64(nil), r.Seconds...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
