package schedule

import (
	"testing"

	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

var cacheScenarios = []scenario{
	{"cache_read input", "gemm", func(t *testing.T, s *Schedule) {
		_, err := s.CacheRead(block(t, s, "C"), 1, "shared")
		require.NoError(t, err)
	}},
	{"cache_read at loop", "gemm", func(t *testing.T, s *Schedule) {
		a, err := s.CacheRead(block(t, s, "C"), 0, "local")
		require.NoError(t, err)
		require.NoError(t, s.ComputeAt(a, mustLoops(t, s, "C")[0]))
	}},
	{"cache_read intermediate", "chain", func(t *testing.T, s *Schedule) {
		c, err := s.CacheRead(block(t, s, "relu"), 0, "local")
		require.NoError(t, err)
		require.NoError(t, s.ComputeAt(c, mustLoops(t, s, "relu")[1]))
	}},
	{"cache_read after compute_at", "chain", func(t *testing.T, s *Schedule) {
		require.NoError(t, s.ComputeAt(block(t, s, "add"), mustLoops(t, s, "relu")[0]))
		_, err := s.CacheRead(block(t, s, "relu"), 0, "local")
		require.NoError(t, err)
	}},
	{"cache_read next to its producer", "chain", func(t *testing.T, s *Schedule) {
		require.NoError(t, s.ComputeAt(block(t, s, "add"), mustLoops(t, s, "relu")[1]))
		_, err := s.CacheRead(block(t, s, "relu"), 0, "local")
		require.NoError(t, err)
	}},
	{"cache_write gemm", "gemm", func(t *testing.T, s *Schedule) {
		c, err := s.CacheWrite(block(t, s, "C"), 0, "local")
		require.NoError(t, err)
		require.NoError(t, s.ReverseComputeAt(c, mustLoops(t, s, "C")[1]))
	}},
	{"cache_write tiled", "gemm", func(t *testing.T, s *Schedule) {
		ls := mustLoops(t, s, "C")
		i, err := s.Split(ls[0], []int64{-1, 5})
		require.NoError(t, err)
		c, err := s.CacheWrite(block(t, s, "C"), 0, "local")
		require.NoError(t, err)
		require.NoError(t, s.ReverseComputeAt(c, i[0]))
	}},
	{"cache_write conv", "conv", func(t *testing.T, s *Schedule) {
		c, err := s.CacheWrite(block(t, s, "conv"), 0, "global")
		require.NoError(t, err)
		require.NoError(t, s.ReverseComputeAt(c, mustLoops(t, s, "conv")[0]))
	}},
	{"cache read and write softmax", "softmax", func(t *testing.T, s *Schedule) {
		c, err := s.CacheRead(block(t, s, "exp"), 0, "shared")
		require.NoError(t, err)
		require.NoError(t, s.ComputeAt(c, mustLoops(t, s, "exp")[0]))
		w, err := s.CacheWrite(block(t, s, "div"), 0, "local")
		require.NoError(t, err)
		require.NoError(t, s.ReverseComputeAt(w, mustLoops(t, s, "div")[0]))
	}},
	{"set_scope", "chain", func(t *testing.T, s *Schedule) {
		require.NoError(t, s.SetScope(block(t, s, "add"), 0, "shared"))
	}},
	{"storage_align", "chain", func(t *testing.T, s *Schedule) {
		require.NoError(t, s.SetScope(block(t, s, "add"), 0, "shared"))
		require.NoError(t, s.StorageAlign(block(t, s, "add"), 0, 0, 16, 1))
		require.NoError(t, s.StorageAlign(block(t, s, "add"), 0, 0, 32, 8))
	}},
}

func TestCacheNumerics(t *testing.T) {
	for _, sc := range cacheScenarios {
		t.Run(sc.name, func(t *testing.T) {
			s := New(locWorkload(t, sc.workload))
			sc.apply(t, s)
			checkSame(t, s)
		})
	}
}

func TestSetScopeAndStorageAlign(t *testing.T) {
	s := New(locWorkload(t, "chain"))
	require.NoError(t, s.SetScope(block(t, s, "add"), 0, "shared"))
	require.NoError(t, s.StorageAlign(block(t, s, "add"), 0, 0, 16, 1))
	require.NoError(t, s.StorageAlign(block(t, s, "add"), 0, 0, 32, 8))
	r := findBlock(s.Func().Body, "add")
	require.Equal(t, tir.ScopeShared, r.Block.Writes[0].Buffer.Scope)
	require.Equal(t, tir.ScopeShared, findBlock(s.Func().Body, "relu").Block.Reads[0].Buffer.Scope)
	// The second request for the same buffer and axis replaces the first.
	require.Equal(t, tir.ArrayAttr{tir.ArrayAttr{tir.IntAttr(0), tir.IntAttr(0), tir.IntAttr(32), tir.IntAttr(8)}}, r.Block.Annotations[AttrBufferDimAlign])
}
