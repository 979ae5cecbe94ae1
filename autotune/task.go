// Package autotune searches schedules for the kernels of a model and
// records what it measures (Ansor, Zheng et al., OSDI 2020; TVM
// MetaSchedule, Shao et al., NeurIPS 2022): tasks are the distinct
// kernels (task.go), the design space is the trace of the sampled
// schedule rules (space.go), the search is evolutionary, guided by a
// learned cost model over features of the scheduled tensor IR (search.go,
// features.go, costmodel.go), candidates are built in parallel worker
// processes and measured one at a time in a separate runner process
// (measure.go, worker.go), every trial is appended to a JSON-lines tuning
// database (database.go), and a task scheduler splits the trial budget
// across tasks (scheduler.go). Tune (tune.go) drives a job;
// RerankInModel (inmodel.go) then re-measures the best candidates inside
// the compiled model.
package autotune

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/tessera-ml/tessera/schedule"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// Task is one tuning task: a distinct kernel of a model (TVM's
// ExtractedTask / Ansor's SearchTask).
type Task struct {
	// Name is the first kernel with this workload; Kernels lists all.
	Name    string
	Kernels []string
	// Func is the unscheduled kernel (after elementwise inlining, the
	// state traces replay on); a kernel over symbolic dimensions is
	// specialized at Bindings (tensorir.Specialize), so candidates are
	// built and measured at those sizes.
	Func *tir.PrimFunc
	// Key is the workload key: the hex SHA-256 of the kernel's canonical
	// printed tensor IR and the target string. For a kernel over symbolic
	// dimensions it is the symbolic kernel's, whatever the Bindings, so a
	// record measured at one size applies at every size.
	Key string
	// Bindings are the sizes a kernel over symbolic dimensions is tuned at
	// (schedule.RepresentativeSizes: --bind-dim, else
	// schedule.DefaultRepresentative), by symbol name; nil for a static
	// kernel. Records carry them (Record.Bindings).
	Bindings map[string]int64
	// Symbolic is the kernel over symbolic dimensions before
	// specialization (nil for a static kernel): the task's design space is
	// the schedules of Func that carry over to it at every size
	// (Task.Generalizes).
	Symbolic *tir.PrimFunc
	// Weight is the number of kernels of the model with this workload.
	Weight int
	// Constants are the indices of the parameters that every call of every
	// kernel of the task passes a model constant (its weights; see
	// tensorir.ConstantParams). MeasureOptions.CacheFlush flushes them.
	Constants []int
	// FLOPs is the floating-point operations of one call (adds,
	// multiplies, divides, math calls, min/max; estimated from the loop
	// nest: per store, its arithmetic times the trip count of the loops
	// around it).
	FLOPs float64
}

// CanonicalText is the printed tensor IR of f under the fixed name
// @kernel, without attributes, so equal kernels of one model (and of
// different models) print equal.
func CanonicalText(f *tir.PrimFunc) string {
	cp := *f
	cp.Name = "kernel"
	cp.Attrs = nil
	return tir.PrintFunc(&cp, tir.PrintOptions{})
}

// WorkloadKey is the hex SHA-256 of f's canonical text and the target
// string.
func WorkloadKey(f *tir.PrimFunc, target string) string {
	h := sha256.New()
	h.Write([]byte(CanonicalText(f)))
	h.Write([]byte{0})
	h.Write([]byte(target))
	return hex.EncodeToString(h.Sum(nil))
}

// CandidateKey identifies a scheduled kernel: the hex SHA-256 of its
// canonical text (two traces giving the same code are one candidate).
func CandidateKey(f *tir.PrimFunc) string {
	sum := sha256.Sum256([]byte(CanonicalText(f)))
	return hex.EncodeToString(sum[:16])
}

// IsKernel reports whether f is a kernel (not a host function).
func IsKernel(f *tir.PrimFunc) bool {
	_, host := f.Attrs[tir.AttrHost]
	return !host
}

// ExtractTasks returns the tasks of the kernels of funcs (host functions
// and kernels already scheduled, tensorir.AttrSchedule, or scheduled by
// lower-to-tir, tensorir.AttrRecurrence, are skipped) for the target whose
// key (targets.Target.Key) is ts, deduplicated by workload key, in
// first-occurrence order. A kernel over symbolic dimensions is tuned
// specialized at its representative sizes (schedule.RepresentativeSizes
// of sizes, by symbol name: --bind-dim) and keyed by its symbolic form
// (Task.Bindings, Task.Key).
func ExtractTasks(funcs []*tir.PrimFunc, ts string, sizes map[string]int64) []*Task {
	var tasks []*Task
	byKey := map[string]*Task{}
	consts := tir.ConstantParams(&tir.Module{Funcs: funcs})
	for _, f := range funcs {
		_, done := f.Attrs[tir.AttrSchedule]
		if _, rec := f.Attrs[tir.AttrRecurrence]; !IsKernel(f) || done || rec {
			continue
		}
		key := WorkloadKey(f, ts)
		vals := schedule.RepresentativeSizes(f, sizes)
		cs := specializedParams(f, consts[f.Name], vals)
		if t := byKey[key]; t != nil {
			t.Weight++
			t.Kernels = append(t.Kernels, f.Name)
			t.Constants = intersect(t.Constants, cs)
			continue
		}
		g := tir.Specialize(f, vals)
		t := &Task{Name: f.Name, Kernels: []string{f.Name}, Func: g, Key: key, Bindings: vals, Weight: 1, Constants: cs, FLOPs: tir.EstimateFLOPs(g)}
		if vals != nil {
			t.Symbolic = f
		}
		byKey[key] = t
		tasks = append(tasks, t)
	}
	return tasks
}

// Generalizes checks that the candidate c (a schedule of Func) carries
// over to the symbolic kernel at every size, as the compiler carries a
// record over (schedule.FromRepresentative with rules); nil for a static
// task. Errors: why it does not (a primitive the generalized replay
// refuses).
func (t *Task) Generalizes(c *Candidate, rules schedule.Rules) error {
	if t.Symbolic == nil {
		return nil
	}
	_, err := schedule.FromRepresentative(rules, t.Symbolic, t.Bindings, c.Func, c.Trace)
	return err
}

// specializedParams renumbers the parameter indices idx of f for f
// specialized at vals, which drops the scalar parameters vals binds.
func specializedParams(f *tir.PrimFunc, idx []int, vals map[string]int64) []int {
	if len(vals) == 0 {
		return idx
	}
	var out []int
	for _, i := range idx {
		n := i
		for _, p := range f.Params[:i] {
			if _, bound := vals[p.Name()]; bound && p.Var != nil {
				n--
			}
		}
		out = append(out, n)
	}
	return out
}

// intersect keeps the elements of a (sorted) that are in b.
func intersect(a, b []int) []int {
	var out []int
	for _, x := range a {
		for _, y := range b {
			if x == y {
				out = append(out, x)
				break
			}
		}
	}
	return out
}
