package autotune

import (
	"math"
	"math/rand"
	"sort"

	"github.com/tessera-ml/tessera/schedule"
)

// Search strategies (Options.Strategy).
const (
	// StrategyEvolutionary is Ansor's evolutionary search guided by the
	// learned cost model (Zheng et al., OSDI 2020, §5.1; MetaSchedule's
	// EvolutionarySearch): a population of measured-best traces and
	// fresh samples is mutated for a few generations, ranked by the cost
	// model, and the best unmeasured candidates are measured, with an
	// epsilon share of random ones.
	StrategyEvolutionary = "evolutionary"
	// StrategyRandom measures fresh random samples of the design space
	// (the baseline).
	StrategyRandom = "random"
)

// SearchOptions tune the evolutionary search.
type SearchOptions struct {
	Population  int     // population size (default 128)
	Generations int     // evolution rounds per batch (default 4)
	Epsilon     float64 // share of each batch picked at random (default 0.05)
}

func (o SearchOptions) withDefaults() SearchOptions {
	if o.Population <= 0 {
		o.Population = 128
	}
	if o.Generations <= 0 {
		o.Generations = 4
	}
	if o.Epsilon <= 0 {
		o.Epsilon = 0.05
	}
	return o
}

// searcher proposes candidates for one task.
type searcher struct {
	task     *Task
	rules    schedule.Rules
	rng      *rand.Rand
	opts     SearchOptions
	model    CostModel
	measured map[string]bool // candidates measured (or picked) already
	good     []*scored       // measured successful candidates, fastest first
	nextSeed int64
	single   bool // the design space has one point (no sampling decisions)
	// seeds are measured before any sample (Options.SeedDefault).
	seeds []*Candidate
}

// takeSeeds returns up to n seeds not measured yet.
func (s *searcher) takeSeeds(n int) []*Candidate {
	var out []*Candidate
	for len(s.seeds) > 0 && len(out) < n {
		c := s.seeds[0]
		s.seeds = s.seeds[1:]
		if !s.measured[c.Key] {
			s.measured[c.Key] = true
			out = append(out, c)
		}
	}
	return out
}

// scored is a candidate and its measured latency or predicted score.
type scored struct {
	c     *Candidate
	score float64 // seconds for good, predicted score in a population
}

// addMeasured notes a measured candidate (seconds +Inf for a failure).
func (s *searcher) addMeasured(c *Candidate, seconds float64) {
	s.measured[c.Key] = true
	if math.IsInf(seconds, 1) || c.Func == nil {
		return
	}
	i := sort.Search(len(s.good), func(i int) bool { return s.good[i].score > seconds })
	s.good = append(s.good, nil)
	copy(s.good[i+1:], s.good[i:])
	s.good[i] = &scored{c: c, score: seconds}
}

// fresh draws a new random sample (nil when the rules fail).
func (s *searcher) fresh() *Candidate {
	s.nextSeed++
	c, err := SampleCandidate(s.task, s.rules, s.rng.Int63()^s.nextSeed)
	if err != nil {
		return nil
	}
	if !hasDecisions(c.Trace) {
		s.single = true
	}
	return c
}

// randomBatch returns up to n unmeasured candidates: the seeds, then
// fresh samples.
func (s *searcher) randomBatch(n int) []*Candidate {
	out := s.takeSeeds(n)
	for tries := 0; len(out) < n && tries < 20*n+20; tries++ {
		c := s.fresh()
		if c == nil || s.measured[c.Key] {
			if s.single {
				break
			}
			continue
		}
		s.measured[c.Key] = true
		out = append(out, c)
	}
	return out
}

// evolveBatch returns up to n unmeasured candidates picked by the
// evolutionary search (the seeds and fresh samples while there are
// seeds left or nothing to train the model on).
func (s *searcher) evolveBatch(n int) []*Candidate {
	if len(s.seeds) > 0 || s.model == nil || s.model.NumSamples() == 0 {
		return s.randomBatch(n)
	}
	pop := s.initialPopulation()
	if len(pop) == 0 || s.single {
		return s.randomBatch(n)
	}
	for g := 0; g < s.opts.Generations; g++ {
		pop = s.generation(pop)
	}
	nRandom := int(math.Round(s.opts.Epsilon * float64(n)))
	var out []*Candidate
	for _, p := range pop {
		if len(out) >= n-nRandom {
			break
		}
		if !s.measured[p.c.Key] {
			s.measured[p.c.Key] = true
			out = append(out, p.c)
		}
	}
	return append(out, s.randomBatch(n-len(out))...)
}

// initialPopulation: the best measured candidates (up to half) and fresh
// samples, scored by the model.
func (s *searcher) initialPopulation() []*scored {
	var cs []*Candidate
	for _, g := range s.good {
		if len(cs) >= s.opts.Population/2 {
			break
		}
		cs = append(cs, g.c)
	}
	for tries := 0; len(cs) < s.opts.Population && tries < 2*s.opts.Population; tries++ {
		if c := s.fresh(); c != nil {
			cs = append(cs, c)
		}
		if s.single {
			break
		}
	}
	return s.rank(cs)
}

// generation mutates parents chosen in proportion to their rank and keeps
// the best Population of parents and children.
func (s *searcher) generation(pop []*scored) []*scored {
	all := make([]*Candidate, 0, 2*len(pop))
	for _, p := range pop {
		all = append(all, p.c)
	}
	for range pop {
		// Tournament of two: the better-ranked parent.
		a, b := s.rng.Intn(len(pop)), s.rng.Intn(len(pop))
		parent := pop[min(a, b)].c
		tr, err := Mutate(parent.Trace, s.rng)
		if err != nil {
			continue
		}
		c, err := mutateCandidate(s.task, tr, s.rules)
		if err != nil {
			continue
		}
		all = append(all, c)
	}
	ranked := s.rank(all)
	if len(ranked) > s.opts.Population {
		ranked = ranked[:s.opts.Population]
	}
	return ranked
}

// rank scores cs with the cost model, drops duplicates and sorts best
// first (ties keep their order).
func (s *searcher) rank(cs []*Candidate) []*scored {
	seen := map[string]bool{}
	var uniq []*Candidate
	for _, c := range cs {
		if !seen[c.Key] {
			seen[c.Key] = true
			uniq = append(uniq, c)
		}
	}
	feats := make([][]float64, len(uniq))
	for i, c := range uniq {
		feats[i] = ExtractFeatures(c.Func)
	}
	preds := s.model.Predict(feats)
	out := make([]*scored, len(uniq))
	for i, c := range uniq {
		out[i] = &scored{c: c, score: preds[i]}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].score > out[j].score })
	return out
}
