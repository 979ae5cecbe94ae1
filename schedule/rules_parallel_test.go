package schedule

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// hasParallel reports whether f has a parallel loop.
func hasParallel(f *tir.PrimFunc) bool {
	found := false
	tir.VisitStmt(f.Body, func(st tir.Stmt) bool {
		if l, ok := st.(*tir.For); ok && l.Kind == tir.Parallel {
			found = true
		}
		return !found
	})
	return found
}

// TestParallelCostRule: with MinParallelWork set, the default and the
// fallback rules leave a kernel whose work is below it without parallel
// loops (the rest of its schedule unchanged) and parallelize one above
// it; 0 parallelizes every kernel, as before.
func TestParallelCostRule(t *testing.T) {
	small := parseFunc(t, gemmOf(8, 32, 16))  // 8·32·16 products: ~2·10⁴ operations
	large := parseFunc(t, gemmOf(64, 64, 64)) // ~10⁶
	ws, wl := tir.EstimateWork(small), tir.EstimateWork(large)
	require.Less(t, ws*10, wl)
	rules := avx512
	rules.MinParallelWork = (ws + wl) / 2
	for name, apply := range map[string]func(CPURules, *tir.PrimFunc) *tir.PrimFunc{
		"default": func(r CPURules, f *tir.PrimFunc) *tir.PrimFunc {
			s, err := r.Default(f)
			require.NoError(t, err)
			return s.Func()
		},
		"fallback": func(r CPURules, f *tir.PrimFunc) *tir.PrimFunc { return r.Fallback(f).Func() },
	} {
		t.Run(name, func(t *testing.T) {
			assert.False(t, hasParallel(apply(rules, small)), "small kernel stays serial")
			assert.True(t, hasParallel(apply(rules, large)), "large kernel is parallel")
			assert.True(t, hasParallel(apply(avx512, small)), "no threshold: parallel")
			// the serial schedule is the parallel one with its parallel
			// loops serial
			serial, par := forKinds(apply(rules, small)), forKinds(apply(avx512, small))
			require.Len(t, serial, len(par))
			for i := range par {
				if par[i] != serial[i] {
					assert.Contains(t, par[i], ":parallel")
					assert.Contains(t, serial[i], ":serial")
				}
			}
		})
	}
}

// TestParallelCostRuleSampled: near the threshold the sampled rules draw
// serial or parallel (both occur over seeds), the draw is a
// sample_categorical decision in the trace (a replay reproduces the
// choice), and results stay those of the unscheduled kernel.
func TestParallelCostRuleSampled(t *testing.T) {
	f := parseFunc(t, gemmOf(16, 32, 16))
	rules := avx512
	rules.MinParallelWork = tir.EstimateWork(f) * 1.5
	seen := map[bool]bool{}
	for seed := int64(0); seed < 16; seed++ {
		s, err := rules.Sample(f, seed)
		require.NoError(t, err)
		seen[hasParallel(s.Func())] = true
		checkSame(t, s) // same results; the trace replays to the same IR
	}
	assert.True(t, seen[true] && seen[false], "both choices sampled: %v", seen)
	// far from the threshold there is no draw
	rules.MinParallelWork = tir.EstimateWork(f) * 100
	for seed := int64(0); seed < 4; seed++ {
		s, err := rules.Sample(f, seed)
		require.NoError(t, err)
		assert.False(t, hasParallel(s.Func()))
	}
}
