package schedule

import (
	"fmt"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// Sampling instructions (TVM's src/tir/schedule/primitive/sampling.cc).
// Each records its decision in the trace; a replay uses the recorded
// decision (so editing a decision in the trace changes the replay), and
// the sampled values are handles ("v<n>") that later instructions (split,
// annotate) reference when they use them.

// perfectTilings enumerates every n-tuple of positive integers whose
// product is extent and whose last element is at most maxInnermost (≤ 0:
// unbounded), in lexicographic order.
func perfectTilings(extent int64, n int, maxInnermost int64) [][]int64 {
	var out [][]int64
	cur := make([]int64, n)
	var rec func(i int, rest int64)
	rec = func(i int, rest int64) {
		if i == n-1 {
			if maxInnermost <= 0 || rest <= maxInnermost {
				cur[i] = rest
				out = append(out, append([]int64(nil), cur...))
			}
			return
		}
		for d := int64(1); d <= rest; d++ {
			if rest%d == 0 {
				cur[i] = d
				rec(i+1, rest/d)
			}
		}
	}
	rec(0, extent)
	return out
}

// SamplePerfectTile samples n factors of loop l's constant extent whose
// product is exactly the extent, the innermost at most maxInnermost (≤ 0:
// no limit), uniformly among all such tilings. The decision (the factors)
// is recorded. Refused: an unknown loop, a non-constant extent, n < 1.
func (s *Schedule) SamplePerfectTile(l LoopRV, n int, maxInnermost int64) ([]int64, error) {
	return s.samplePerfectTile(l, n, maxInnermost, nil)
}

func (s *Schedule) samplePerfectTile(l LoopRV, n int, maxInnermost int64, decision []int64) ([]int64, error) {
	const prim = "sample_perfect_tile"
	f, err := s.FindLoop(l)
	if err != nil {
		return nil, s.Errorf(prim, nil, &l, "no such loop in @%s", s.f.Name)
	}
	ext, ok := constInt(f.Extent)
	if s.generalize && decision != nil && len(decision) == n && (!ok || product(decision) != ext) {
		// ReplayGeneralized: a tiling sampled at the representative size
		// of a loop whose extent depends on the symbols is kept as
		// decided, unrecorded; the split that uses it infers its
		// outermost factor (Split).
		return append([]int64(nil), decision...), nil
	}
	if !ok {
		return nil, s.loopErr(prim, l, "the extent %s is not a constant", tir.ExprString(f.Extent))
	}
	if n < 1 {
		return nil, s.loopErr(prim, l, "n = %d, want at least 1", n)
	}
	var out []int64
	if decision != nil {
		prod := int64(1)
		for _, d := range decision {
			if d <= 0 {
				return nil, s.loopErr(prim, l, "decision %s has a non-positive factor", formatInts(decision))
			}
			prod *= d
		}
		if len(decision) != n || prod != ext {
			return nil, s.loopErr(prim, l, "decision %s is not %d factors of the extent %d", formatInts(decision), n, ext)
		}
		if maxInnermost > 0 && decision[n-1] > maxInnermost {
			return nil, s.loopErr(prim, l, "decision %s: the innermost factor exceeds %d", formatInts(decision), maxInnermost)
		}
		out = append([]int64(nil), decision...)
	} else {
		all := perfectTilings(ext, n, maxInnermost)
		if len(all) == 0 {
			return nil, s.loopErr(prim, l, "no tiling of the extent %d into %d factors has an innermost factor ≤ %d", ext, n, maxInnermost)
		}
		out = all[s.rng.Intn(len(all))]
	}
	dec := make([]any, len(out))
	for i, v := range out {
		dec[i] = v
	}
	s.Record(prim, []any{l}, map[string]any{"n": int64(n), "max_innermost": maxInnermost}, dec, []any{out})
	s.samples[len(s.samples)-1].loop = l.Var
	return out, nil
}

// product is the product of xs.
func product(xs []int64) int64 {
	p := int64(1)
	for _, x := range xs {
		p *= x
	}
	return p
}

// SampleCategorical samples one of candidates with the given
// probabilities (normalized; they need not sum to one). The decision is
// the index of the chosen candidate. Refused: no candidates, a length
// mismatch, a negative probability, probabilities summing to zero.
func (s *Schedule) SampleCategorical(candidates []int64, probs []float64) (int64, error) {
	return s.sampleCategorical(candidates, probs, -1)
}

func (s *Schedule) sampleCategorical(candidates []int64, probs []float64, decision int64) (int64, error) {
	const prim = "sample_categorical"
	if len(candidates) == 0 {
		return 0, s.Errorf(prim, nil, nil, "no candidates")
	}
	if len(candidates) != len(probs) {
		return 0, s.Errorf(prim, nil, nil, "%d candidates but %d probabilities", len(candidates), len(probs))
	}
	sum := 0.0
	for _, p := range probs {
		if p < 0 || p != p {
			return 0, s.Errorf(prim, nil, nil, "probability %v is not a non-negative number", p)
		}
		sum += p
	}
	if sum <= 0 {
		return 0, s.Errorf(prim, nil, nil, "probabilities sum to %v", sum)
	}
	idx := decision
	if idx < 0 {
		x := s.rng.Float64() * sum
		idx = int64(len(probs) - 1)
		for i, p := range probs {
			if x < p {
				idx = int64(i)
				break
			}
			x -= p
		}
		for probs[idx] == 0 { // rounding at the top end
			idx--
		}
	} else if idx >= int64(len(candidates)) {
		return 0, s.Errorf(prim, nil, nil, "decision %d is out of range for %d candidates", idx, len(candidates))
	}
	cs := make([]any, len(candidates))
	for i, c := range candidates {
		cs[i] = c
	}
	ps := make([]any, len(probs))
	for i, p := range probs {
		ps[i] = p
	}
	v := candidates[idx]
	s.Record(prim, nil, map[string]any{"candidates": cs, "probs": ps}, idx, []any{v})
	return v, nil
}

func init() {
	RegisterInstruction("sample_perfect_tile", func(s *Schedule, in []any, attrs map[string]any, decision any) ([]any, error) {
		l, err := LoopInput(in, 0)
		if err != nil {
			return nil, err
		}
		n, err := AttrInt(attrs, "n")
		if err != nil {
			return nil, err
		}
		mi, err := AttrInt(attrs, "max_innermost")
		if err != nil {
			return nil, err
		}
		var dec []int64
		if decision != nil {
			dec, err = AttrInts(map[string]any{"decision": decision}, "decision")
			if err != nil {
				return nil, err
			}
		}
		out, err := s.samplePerfectTile(l, int(n), mi, dec)
		return []any{out}, err
	})
	RegisterInstruction("sample_categorical", func(s *Schedule, _ []any, attrs map[string]any, decision any) ([]any, error) {
		cs, err := AttrInts(attrs, "candidates")
		if err != nil {
			return nil, err
		}
		ps, err := AttrFloats(attrs, "probs")
		if err != nil {
			return nil, err
		}
		idx := int64(-1)
		if decision != nil {
			if idx, err = toInt(decision, "decision"); err != nil {
				return nil, err
			}
			if idx < 0 {
				return nil, fmt.Errorf("decision %d is negative", idx)
			}
		}
		v, err := s.sampleCategorical(cs, ps, idx)
		return []any{v}, err
	})
}
