package schedule

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSplitSymbolicExtent: a loop to a scalar parameter splits with an
// inferred factor ceil(%m / 4) and a guarded tail (no divisibility is
// assumed), exactly when the other factors are 1, and refuses constant
// factors that cannot be proven to cover %m.
func TestSplitSymbolicExtent(t *testing.T) {
	c := newSymbolicCase(t, "sym_chain")
	s := New(parseFunc(t, symChainSrc))
	_, err := s.Split(mustLoops(t, s, "add")[0], []int64{4, 4})
	require.Error(t, err)
	assert.Equal(t, `split: block "add", loop %i: factors [4, 4] multiply to 16, which is not proven at least the extent %m (give one factor as -1 to infer it)`, strings.SplitN(err.Error(), "\n", 2)[0])
	_, err = s.Split(mustLoops(t, s, "add")[0], []int64{-1, 4})
	require.NoError(t, err)
	_, err = s.Split(mustLoops(t, s, "relu")[0], []int64{2, -1, 1})
	require.NoError(t, err)
	assert.Equal(t, `tir.func @ew_m(%m: index, %A: buffer<(%m)x14xf32>, %B: buffer<14xf32>, out %D: buffer<(%m)x14xf32>) attributes {tessera.kernel} {
  tir.allocate %T: buffer<(%m)x14xf32, "local"> {
    tir.for %i_0 = 0 to floordiv(%m + 3, 4) {
      tir.for %i_1 = 0 to 4 {
        tir.for %j = 0 to 14 {
          tir.block "add"(%vi = spatial(0:%m, %i_0 * 4 + %i_1), %vj = spatial(0:14, %j)) where(%i_0 * 4 + %i_1 < %m) reads(%A[%vi, %vj], %B[%vj]) writes(%T[%vi, %vj]) {
            %T[%vi, %vj] = %A[%vi, %vj] + %B[%vj]
          }
        }
      }
    }
    tir.for %i_0 = 0 to 2 {
      tir.for %i_1 = 0 to floordiv(%m + 1, 2) {
        tir.for %i_2 = 0 to 1 {
          tir.for %j = 0 to 14 {
            tir.block "relu"(%vi = spatial(0:%m, %i_0 * floordiv(%m + 1, 2) + %i_1 + %i_2), %vj = spatial(0:14, %j)) where(%i_0 * floordiv(%m + 1, 2) + %i_1 + %i_2 < %m) reads(%T[%vi, %vj]) writes(%D[%vi, %vj]) {
              %D[%vi, %vj] = max(%T[%vi, %vj], 0.0) * 2.0
            }
          }
        }
      }
    }
  }
}
`, printed(s.Func()))
	c.check(t, s)

	s = New(parseFunc(t, symChainSrc))
	_, err = s.Split(mustLoops(t, s, "add")[0], []int64{1, -1, 1})
	require.NoError(t, err)
	assert.Contains(t, printed(s.Func()), `tir.for %i_1 = 0 to %m {`)
	assert.False(t, hasGuard(s.Func()), "a split by 1 and the whole extent needs no guard")
	c.check(t, s)
}

// TestSymbolicCacheAndInline: cache_read and cache_write of buffers with a
// symbolic shape copy them with loops to the shape's extents, and
// compute_inline accepts a producer whose domain is the buffer's symbolic
// shape.
func TestSymbolicCacheAndInline(t *testing.T) {
	c := newSymbolicCase(t, "sym_gemm")
	s := New(parseFunc(t, symGemmSrc))
	_, err := s.CacheRead(block(t, s, "C"), 0, "shared")
	require.NoError(t, err)
	_, err = s.CacheWrite(block(t, s, "C"), 0, "local")
	require.NoError(t, err)
	out := printed(s.Func())
	assert.Contains(t, out, `tir.allocate %A_shared: buffer<(%m)x12xf32, "shared"> {
      tir.for %ax0 = 0 to %m {
        tir.for %ax1 = 0 to 12 {
          tir.block "A_shared"(%v0 = spatial(0:%m, %ax0), %v1 = spatial(0:12, %ax1))`)
	assert.Contains(t, out, `tir.for %ax0 = 0 to %m {
        tir.for %ax1 = 0 to %n {
          tir.block "C_local"(%v0 = spatial(0:%m, %ax0), %v1 = spatial(0:%n, %ax1))`)
	c.check(t, s)

	c = newSymbolicCase(t, "sym_chain")
	s = New(parseFunc(t, symChainSrc))
	require.NoError(t, s.ComputeInline(block(t, s, "add")))
	assert.Contains(t, printed(s.Func()), `%D[%vi, %vj] = max(%A[%vi, %vj] + %B[%vj], 0.0) * 2.0`)
	c.check(t, s)
	s = New(parseFunc(t, symChainSrc))
	require.NoError(t, s.ReverseComputeInline(block(t, s, "relu")))
	c.check(t, s)
}
