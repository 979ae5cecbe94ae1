package schedule

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var reductionScenarios = []scenario{
	{"decompose at outer", "gemm", func(t *testing.T, s *Schedule) {
		_, err := s.DecomposeReduction(block(t, s, "C"), mustLoops(t, s, "C")[0])
		require.NoError(t, err)
	}},
	{"decompose at reduction loop", "gemm", func(t *testing.T, s *Schedule) {
		_, err := s.DecomposeReduction(block(t, s, "C"), mustLoops(t, s, "C")[2])
		require.NoError(t, err)
	}},
	{"decompose after cache_write", "conv", func(t *testing.T, s *Schedule) {
		c, err := s.CacheWrite(block(t, s, "conv"), 0, "local")
		require.NoError(t, err)
		ls := mustLoops(t, s, "conv")
		require.NoError(t, s.ReverseComputeAt(c, ls[1]))
		_, err = s.DecomposeReduction(block(t, s, "conv"), ls[2])
		require.NoError(t, err)
	}},
	{"decompose guarded", "gemm", func(t *testing.T, s *Schedule) {
		ls := mustLoops(t, s, "C")
		_, err := s.Split(ls[1], []int64{-1, 4})
		require.NoError(t, err)
		_, err = s.DecomposeReduction(block(t, s, "C"), mustLoops(t, s, "C")[1])
		require.NoError(t, err)
	}},
	{"rfactor inner", "gemm", func(t *testing.T, s *Schedule) {
		k, err := s.Split(mustLoops(t, s, "C")[2], []int64{3, 4})
		require.NoError(t, err)
		_, err = s.RFactor(k[1], 0)
		require.NoError(t, err)
	}},
	{"rfactor outer, last axis", "gemm", func(t *testing.T, s *Schedule) {
		k, err := s.Split(mustLoops(t, s, "C")[2], []int64{3, 4})
		require.NoError(t, err)
		_, err = s.RFactor(k[0], -1)
		require.NoError(t, err)
	}},
	{"rfactor softmax sum", "softmax", func(t *testing.T, s *Schedule) {
		k, err := s.Split(mustLoops(t, s, "sum")[1], []int64{2, 5})
		require.NoError(t, err)
		rf, err := s.RFactor(k[1], 1)
		require.NoError(t, err)
		_, err = s.DecomposeReduction(rf, mustLoops(t, s, rf.Name)[0])
		require.NoError(t, err)
	}},
	{"rfactor max", "softmax", func(t *testing.T, s *Schedule) {
		_, err := s.RFactor(mustLoops(t, s, "max")[1], 0)
		require.NoError(t, err)
	}},
	{"rfactor conv", "conv", func(t *testing.T, s *Schedule) {
		_, err := s.RFactor(mustLoops(t, s, "conv")[4], 1)
		require.NoError(t, err)
	}},
}

func TestReductionNumerics(t *testing.T) {
	for _, sc := range reductionScenarios {
		t.Run(sc.name, func(t *testing.T) {
			s := New(locWorkload(t, sc.workload))
			sc.apply(t, s)
			checkSame(t, s)
		})
	}
}

// symReduceSrc contracts over a symbolic %k into a static result.
const symReduceSrc = `tir.func @gemm_k(%k: index, %A: buffer<4x(%k)xf32>, %B: buffer<(%k)x6xf32>, out %C: buffer<4x6xf32>) attributes {tessera.kernel} {
  tir.for %i = 0 to 4 {
    tir.for %j = 0 to 6 {
      tir.for %r = 0 to %k {
        tir.block "C"(%vi = spatial(0:4, %i), %vj = spatial(0:6, %j), %vk = reduce(0:%k, %r)) reads(%A[%vi, %vk], %B[%vk, %vj]) writes(%C[%vi, %vj]) {
          tir.init {
            %C[%vi, %vj] = 0.0
          }
          %C[%vi, %vj] = %C[%vi, %vj] + %A[%vi, %vk] * %B[%vk, %vj]
        }
      }
    }
  }
}
`

// TestDecomposeReductionTailGuard: decompose_reduction of a reduction
// whose symbolic extent was split with a guarded tail leaves the tail
// guard out of the init's predicate (it holds at the first reduce
// iteration whenever the reduction runs), and the result equals the
// unscheduled kernel's at every k ≥ 1; at k = 0 the init still runs.
func TestDecomposeReductionTailGuard(t *testing.T) {
	orig := parseFunc(t, symReduceSrc)
	s := New(orig)
	ls := mustLoops(t, s, "C")
	parts, err := s.Split(ls[2], []int64{-1, 4})
	require.NoError(t, err)
	b, err := s.GetBlock("C")
	require.NoError(t, err)
	_, err = s.DecomposeReduction(b, parts[0])
	require.NoError(t, err)
	text := printed(s.Func())
	assert.Contains(t, text, `tir.block "C_init"`)
	assert.NotContains(t, text[:strings.Index(text, `tir.block "C"(`)], "< %k", "the init is not guarded by the reduce tail")
	for _, k := range []int64{1, 3, 4, 9} {
		a := map[string]int64{"k": k}
		sameOutputs(t, interpretAt(t, orig, 3, a), interpretAt(t, s.Func(), 3, a), fmt.Sprintf("k=%d", k))
	}
	got := interpretAt(t, s.Func(), 3, map[string]int64{"k": 0})
	for _, v := range got["C"] {
		assert.Zero(t, v, "k=0: the init alone")
	}
	checkReplay(t, s)
}
