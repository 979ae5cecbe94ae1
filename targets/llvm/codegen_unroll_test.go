package llvm

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// unrollText sums a 3×3 window per output: the annotation on the outer
// loop sets the auto-unroll budget for the window loops (9 steps) and the
// column loop (8 × 9 = 72 steps).
func unrollText(budget string) string {
	return `tir.func @pool(%A: buffer<10x10xf32>, out %B: buffer<8x8xf32>) {
  tir.for %i = 0 to 8 parallel annotations {pragma_auto_unroll_max_step = ` + budget + `} {
    tir.for %j = 0 to 8 {
      %B[%i, %j] = 0.0
      tir.for %ky = 0 to 3 {
        tir.for %kx = 0 to 3 {
          %B[%i, %j] = %B[%i, %j] + %A[%i + %ky, %j + %kx]
        }
      }
    }
  }
}
`
}

// Loops whose nest fits the budget are generated unrolled (no loop
// header left for them), larger ones stay loops, and the results match
// the interpreter in every case.
func TestAutoUnrollPragma(t *testing.T) {
	heads := func(budget string) int {
		res, _ := checkAgainstInterp(t, parseModule(t, unrollText(budget)), "pool", Options{}, 3, 0)
		return len(regexp.MustCompile(`(?m)^for\.head\.\d+:`).FindAllString(res.LLVM(), -1))
	}
	none, window, all := heads("0"), heads("16"), heads("512")
	require.Equal(t, 4, none, "budget 0: the j, ky and kx loops stay loops (and the parallel chunk loop)")
	assert.Equal(t, 2, window, "budget 16: ky and kx (9 steps) unrolled, j (80 steps) a loop")
	assert.Equal(t, 1, all, "budget 512: every serial loop unrolled")
}

// A vectorized loop longer than MaxVectorLanes is generated in chunks:
// 192 = 3 × 64 lanes without a tail, 100 = 50 + 50, 131 = 2 × 64 + a
// 3-lane tail; every form matches the interpreter.
func TestLongVectorLoops(t *testing.T) {
	assert.Equal(t, int64(64), vectorChunk(192))
	assert.Equal(t, int64(50), vectorChunk(100))
	assert.Equal(t, int64(64), vectorChunk(131))
	for n, lanes := range map[string]string{"192": "64", "100": "50", "131": "64"} {
		src := `tir.func @long(%A: buffer<3x` + n + `xf32>, out %B: buffer<3x` + n + `xf32>) {
  tir.for %i = 0 to 3 {
    tir.for %j = 0 to ` + n + ` vectorized {
      %B[%i, %j] = %A[%i, %j] * 2.0 + %A[2 - %i, %j]
    }
  }
}
`
		res, _ := checkAgainstInterp(t, parseModule(t, src), "long", Options{}, 7, 0)
		require.Contains(t, res.LLVM(), "<"+lanes+" x float>", n)
	}
}

// Loads at a constant lane stride of 2–4 are one masked wide load and a
// shuffle (no per-lane gather), also under a lane mask (a guarded tail);
// the last element read is the buffer's last, so a wide load that touched
// the masked-off elements would read past the end.
func TestStridedLoads(t *testing.T) {
	const src = `tir.func @strided(%A: buffer<95xf32>, out %B: buffer<32xf32>, out %C: buffer<30xf32>) {
  tir.for %j = 0 to 32 vectorized {
    %B[%j] = %A[%j * 2 + 1] + %A[%j * 3 - %j]
  }
  tir.for %o = 0 to 2 {
    tir.for %i = 0 to 16 vectorized {
      tir.block "tail"(%v = spatial(0:30, %o * 16 + %i)) where(%o * 16 + %i < 30) reads(%A[%v * 3 + 2]) writes(%C[%v]) {
        %C[%v] = %A[%v * 3 + 5]
      }
    }
  }
}
`
	res, _ := checkAgainstInterp(t, parseModule(t, src), "strided", Options{}, 11, 0)
	ll := res.LLVM()
	assert.Contains(t, ll, "@llvm.masked.load.v64f32", "stride 2, 32 lanes")
	assert.Contains(t, ll, "@llvm.masked.load.v48f32", "stride 3, 16 lanes, masked")
	assert.NotRegexp(t, `extractelement <\d+ x i64> %\d+, i32 [1-9]`, ll, "no per-lane gather (only lane 0's address)")
}
