package autotune

import (
	"fmt"
	"math/rand"

	"github.com/tessera-ml/tessera/schedule"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// The design space of a task is the set of traces of the sampled schedule
// rules (schedule.ApplySampledRules): one sketch per kernel structure,
// whose sampling decisions (tile sizes, register tile, write-back level)
// span the space. Candidates are drawn by running the rules with a fresh
// seed, and derived by mutating one decision of a trace and replaying it
// (MetaSchedule's MutateTileSize / MutateCategorical).

// Candidate is a point of a task's design space: the trace and the
// scheduled kernel it gives.
type Candidate struct {
	Trace *schedule.Trace
	Func  *tir.PrimFunc
	Key   string // CandidateKey(Func)
}

// SampleCandidate runs the target's sampled rules on the task's kernel
// with seed. Errors: the rules', and for a kernel over symbolic
// dimensions a sample that does not carry over to every size
// (Task.Generalizes): the design space holds only those that do.
func SampleCandidate(t *Task, rules schedule.Rules, seed int64) (*Candidate, error) {
	s, err := rules.Sample(t.Func, seed)
	if err != nil {
		return nil, err
	}
	c := newCandidate(t, s)
	if err := t.Generalizes(c, rules); err != nil {
		return nil, err
	}
	return c, nil
}

// ReplayCandidate replays tr on the task's kernel.
func ReplayCandidate(t *Task, tr *schedule.Trace) (*Candidate, error) {
	s, err := schedule.Replay(t.Func, tr)
	if err != nil {
		return nil, err
	}
	return newCandidate(t, s), nil
}

// mutateCandidate replays a mutated trace and checks that the target's
// code generation can compile it (a changed tile size can leave a
// recorded vectorize on a loop longer than the target's lanes) and that
// it carries over to every size (Task.Generalizes).
func mutateCandidate(t *Task, tr *schedule.Trace, rules schedule.Rules) (*Candidate, error) {
	c, err := ReplayCandidate(t, tr)
	if err != nil {
		return nil, err
	}
	if err := rules.Check(c.Func); err != nil {
		return nil, err
	}
	if err := t.Generalizes(c, rules); err != nil {
		return nil, err
	}
	return c, nil
}

func newCandidate(t *Task, s *schedule.Schedule) *Candidate {
	tr := s.Trace()
	tr.Func = t.Name
	return &Candidate{Trace: tr, Func: s.Func(), Key: CandidateKey(s.Func())}
}

// hasDecisions reports whether tr has a sampling instruction (a task
// without one has a single candidate).
func hasDecisions(tr *schedule.Trace) bool {
	return len(decisionSites(tr)) > 0
}

// decisionSites lists the instructions of tr whose decision a mutation
// can change.
func decisionSites(tr *schedule.Trace) []int {
	var out []int
	for i, in := range tr.Insts {
		switch in.Kind {
		case "sample_perfect_tile":
			if ds, ok := in.Decision.([]any); ok && len(ds) > 1 {
				out = append(out, i)
			}
		case "sample_categorical":
			if cs, ok := in.Attrs["candidates"].([]any); ok && len(cs) > 1 {
				out = append(out, i)
			}
		}
	}
	return out
}

// Mutate returns a copy of tr with one sampling decision changed: a
// sample_perfect_tile moves a prime factor from one tile to another
// (respecting max_innermost), a sample_categorical picks another
// candidate. It returns an error when tr has no decision to change or
// the chosen one cannot change.
func Mutate(tr *schedule.Trace, rng *rand.Rand) (*schedule.Trace, error) {
	sites := decisionSites(tr)
	if len(sites) == 0 {
		return nil, fmt.Errorf("mutate: the trace has no sampling decision")
	}
	i := sites[rng.Intn(len(sites))]
	in := tr.Insts[i]
	var dec any
	var err error
	switch in.Kind {
	case "sample_perfect_tile":
		dec, err = mutateTile(in, rng)
	default:
		dec, err = mutateCategorical(in, rng)
	}
	if err != nil {
		return nil, err
	}
	out := *tr
	out.Insts = append([]schedule.Instruction(nil), tr.Insts...)
	out.Insts[i].Decision = dec
	return &out, nil
}

func mutateTile(in schedule.Instruction, rng *rand.Rand) (any, error) {
	ds := in.Decision.([]any)
	fs := make([]int64, len(ds))
	for k, d := range ds {
		v, ok := d.(int64)
		if !ok || v < 1 {
			return nil, fmt.Errorf("mutate: sample_perfect_tile decision %v is not positive integers", ds)
		}
		fs[k] = v
	}
	maxInner, _ := in.Attrs["max_innermost"].(int64)
	for try := 0; try < 16; try++ {
		from, to := rng.Intn(len(fs)), rng.Intn(len(fs)-1)
		if to >= from {
			to++
		}
		if fs[from] == 1 {
			continue
		}
		ps := primeFactors(fs[from])
		p := ps[rng.Intn(len(ps))]
		if to == len(fs)-1 && maxInner > 0 && fs[to]*p > maxInner {
			continue
		}
		out := make([]any, len(fs))
		for k, v := range fs {
			out[k] = v
		}
		out[from] = fs[from] / p
		out[to] = fs[to] * p
		return out, nil
	}
	return nil, fmt.Errorf("mutate: no legal move for the tiling %v", ds)
}

func mutateCategorical(in schedule.Instruction, rng *rand.Rand) (any, error) {
	cs := in.Attrs["candidates"].([]any)
	cur, _ := in.Decision.(int64)
	next := int64(rng.Intn(len(cs) - 1))
	if next >= cur {
		next++
	}
	return next, nil
}

// primeFactors lists n's prime factors with multiplicity (n ≥ 2).
func primeFactors(n int64) []int64 {
	var out []int64
	for p := int64(2); p*p <= n; p++ {
		for n%p == 0 {
			out = append(out, p)
			n /= p
		}
	}
	if n > 1 {
		out = append(out, n)
	}
	return out
}
