package schedule

import (
	"testing"

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
