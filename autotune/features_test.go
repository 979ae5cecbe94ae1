package autotune

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/schedule"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// featGemmSrc is C[m, n] = sum_k A[m, k] * B[k, n].
func featGemmSrc(m, n, k int) string {
	return fmt.Sprintf(`tir.func @gemm(%%A: buffer<%[1]dx%[3]dxf32>, %%B: buffer<%[3]dx%[2]dxf32>, out %%C: buffer<%[1]dx%[2]dxf32>) attributes {tessera.kernel} {
  tir.for %%i = 0 to %[1]d {
    tir.for %%j = 0 to %[2]d {
      tir.for %%k = 0 to %[3]d {
        tir.block "C"(%%vi = spatial(0:%[1]d, %%i), %%vj = spatial(0:%[2]d, %%j), %%vk = reduce(0:%[3]d, %%k)) reads(%%A[%%vi, %%vk], %%B[%%vk, %%vj]) writes(%%C[%%vi, %%vj]) {
          tir.init {
            %%C[%%vi, %%vj] = 0.0
          }
          %%C[%%vi, %%vj] = %%C[%%vi, %%vj] + %%A[%%vi, %%vk] * %%B[%%vk, %%vj]
        }
      }
    }
  }
}
`, m, n, k)
}

const featChainSrc = `tir.func @ew(%A: buffer<6x14xf32>, %B: buffer<14xf32>, out %D: buffer<6x14xf32>) attributes {tessera.kernel} {
  tir.allocate %T: buffer<6x14xf32, "local"> {
    tir.for %i = 0 to 6 {
      tir.for %j = 0 to 14 {
        tir.block "add"(%vi = spatial(0:6, %i), %vj = spatial(0:14, %j)) reads(%A[%vi, %vj], %B[%vj]) writes(%T[%vi, %vj]) {
          %T[%vi, %vj] = %A[%vi, %vj] + %B[%vj]
        }
      }
    }
    tir.for %i = 0 to 6 {
      tir.for %j = 0 to 14 {
        tir.block "relu"(%vi = spatial(0:6, %i), %vj = spatial(0:14, %j)) reads(%T[%vi, %vj]) writes(%D[%vi, %vj]) {
          %D[%vi, %vj] = exp(max(%T[%vi, %vj], 0.0)) / 2.0
        }
      }
    }
  }
}
`

const featConvSrc = `tir.func @conv(%I: buffer<3x8x8xf32>, %W: buffer<4x3x3x3xf32>, out %O: buffer<4x6x6xf32>) attributes {tessera.kernel} {
  tir.for %co = 0 to 4 {
    tir.for %h = 0 to 6 {
      tir.for %w = 0 to 6 {
        tir.for %ci = 0 to 3 {
          tir.for %kh = 0 to 3 {
            tir.for %kw = 0 to 3 {
              tir.block "conv"(%vco = spatial(0:4, %co), %vh = spatial(0:6, %h), %vw = spatial(0:6, %w), %vci = reduce(0:3, %ci), %vkh = reduce(0:3, %kh), %vkw = reduce(0:3, %kw)) reads(%I[%vci, %vh + %vkh, %vw + %vkw], %W[%vco, %vci, %vkh, %vkw]) writes(%O[%vco, %vh, %vw]) {
                tir.init {
                  %O[%vco, %vh, %vw] = 0.0
                }
                %O[%vco, %vh, %vw] = %O[%vco, %vh, %vw] + %I[%vci, %vh + %vkh, %vw + %vkw] * %W[%vco, %vci, %vkh, %vkw]
              }
            }
          }
        }
      }
    }
  }
}
`

func featParse(t testing.TB, src string) *tir.PrimFunc {
	t.Helper()
	m, err := tir.ParseString("f.tir", src)
	require.NoError(t, err)
	require.NoError(t, tir.Verify(m))
	return m.Funcs[0]
}

// featCheck asserts the vector's length and that every entry is finite
// and non-negative, and returns it.
func featCheck(t testing.TB, f *tir.PrimFunc) []float64 {
	t.Helper()
	v := ExtractFeatures(f)
	require.Len(t, v, NumFeatures)
	for i, x := range v {
		require.False(t, math.IsNaN(x) || math.IsInf(x, 0), "feature %d = %v", i, x)
		require.GreaterOrEqual(t, x, 0.0, "feature %d", i)
	}
	return v
}

func featLg(x float64) float64 { return math.Log2(1 + x) }

// main-store feature j; buffer group g (0 = written, 1.. = reads) offset o.
func featMain(v []float64, j int) float64   { return v[j] }
func featBuf(v []float64, g, o int) float64 { return v[fBufferBase+g*bufFeatures+o] }
func featSum(v []float64, j int) float64    { return v[storeFeatures+j] }
func featGlobal(v []float64, j int) float64 { return v[2*storeFeatures+j] }
func featLoopsOf(t testing.TB, s *schedule.Schedule, block string) []schedule.LoopRV {
	t.Helper()
	b, err := s.GetBlock(block)
	require.NoError(t, err)
	ls, err := s.GetLoops(b)
	require.NoError(t, err)
	return ls
}

func TestFeaturesGemmCounts(t *testing.T) {
	const m, n, k = 16, 12, 8
	v := featCheck(t, featParse(t, featGemmSrc(m, n, k)))
	trip := float64(m * n * k)
	// The update store has the most flops: one add and one mul per trip.
	require.InDelta(t, featLg(trip), featMain(v, fAddSub), 1e-9)
	require.InDelta(t, featLg(trip), featMain(v, fMul), 1e-9)
	require.InDelta(t, featLg(2*trip), featMain(v, fFlops), 1e-9)
	require.InDelta(t, featLg(trip), featMain(v, fTrip), 1e-9)
	require.InDelta(t, featLg(3), featMain(v, fNumLoops), 1e-9)
	require.InDelta(t, 1.0, featMain(v, fIsReduce), 1e-9)
	require.Zero(t, featMain(v, fIsInit))
	require.Zero(t, featMain(v, fDiv))
	require.Zero(t, featMain(v, fVecProd))
	require.Zero(t, featMain(v, fParProd))
	// The written buffer C[i, j] with k innermost: reused.
	require.InDelta(t, featLg(m*n*4), featBuf(v, 0, bBytes), 1e-9)
	require.InDelta(t, 1.0, featBuf(v, 0, bReuse), 1e-9)
	// Reads sorted by nest footprint: A (16x8) before B (8x12).
	require.InDelta(t, featLg(m*k*4), featBuf(v, 1, bBytes), 1e-9)
	require.InDelta(t, featLg(k*n*4), featBuf(v, 2, bBytes), 1e-9)
	require.InDelta(t, 1.0, featBuf(v, 1, bContig), 1e-9)             // A[i, k]
	require.InDelta(t, featLg(n), featBuf(v, 2, bStride), 1e-9)       // B[k, j]: a row apart
	require.InDelta(t, featLg(k*4), featBuf(v, 1, bFootprint1), 1e-9) // one row of A
	require.InDelta(t, featLg(k*4), featBuf(v, 2, bFootprint1), 1e-9) // one column of B
	require.InDelta(t, featLg(k*n*4), featBuf(v, 2, bFootprint1+1), 1e-9)
	require.InDelta(t, featLg(float64(n)), featBuf(v, 1, bReuseRatio), 1e-9) // each A element read n times
	require.Zero(t, featBuf(v, 3, bBytes))                                   // no third read
	// Both stores summed: the init runs m*n times (not m*n*k).
	require.InDelta(t, featLg(trip+m*n), featSum(v, fTrip), 1e-9)
	require.InDelta(t, featLg(1), featSum(v, fIsInit), 1e-9)
	require.InDelta(t, featLg(2), featGlobal(v, gStores), 1e-9)
	require.InDelta(t, featLg(1), featGlobal(v, gBlocks), 1e-9)
	require.InDelta(t, featLg(3), featGlobal(v, gLoops), 1e-9)
	require.InDelta(t, featLg(3), featGlobal(v, gParams), 1e-9)
	require.InDelta(t, featLg(2*trip), featGlobal(v, gFlops), 1e-9)
}

func TestFeaturesOpKinds(t *testing.T) {
	v := featCheck(t, featParse(t, featChainSrc))
	// "relu" (exp, max, div) and "add" have the same trip count; the
	// main store is the first with the most flops: relu has 3.
	trip := 6.0 * 14
	require.InDelta(t, featLg(trip), featMain(v, fMath), 1e-9)
	require.InDelta(t, featLg(trip), featMain(v, fCmpSel), 1e-9)
	require.InDelta(t, featLg(trip), featMain(v, fDiv), 1e-9)
	require.Zero(t, featMain(v, fAddSub))
	// It reads the local buffer T: allocated in scope and local.
	require.InDelta(t, featLg(6*14*4), featMain(v, fLocalAlloc), 1e-9)
	require.InDelta(t, 1.0, featBuf(v, 1, bIsLocal), 1e-9)
	require.InDelta(t, featLg(trip), featSum(v, fAddSub), 1e-9)
	require.InDelta(t, featLg(6*14*4), featGlobal(v, gAllocBytes), 1e-9)
	// B[j] in "add" is re-read 6 times; the add store's intensity is
	// 1 flop per (A + B + T) bytes.
	require.Greater(t, featMain(v, fIntensity), 0.0)
}

// The features move in the expected direction under each primitive.
func TestFeaturesScheduleDirections(t *testing.T) {
	src := featGemmSrc(64, 64, 32)
	base := featCheck(t, featParse(t, src))

	t.Run("vectorize", func(t *testing.T) {
		s := schedule.New(featParse(t, src))
		ls := featLoopsOf(t, s, "C")
		require.NoError(t, s.Reorder(ls[0], ls[2], ls[1])) // i, k, j
		js, err := s.Split(ls[1], []int64{-1, 8})
		require.NoError(t, err)
		before := featCheck(t, s.Func())
		require.NoError(t, s.Vectorize(js[1]))
		after := featCheck(t, s.Func())
		require.Zero(t, featMain(before, fVecProd))
		require.InDelta(t, featLg(8), featMain(after, fVecInner), 1e-9)
		require.InDelta(t, featLg(8), featMain(after, fVecProd), 1e-9)
		require.InDelta(t, 1.0, featMain(after, fVecIsInner), 1e-9)
		// B[k, j] and C[i, j] are contiguous along the vector loop.
		require.InDelta(t, featLg(1), featBuf(after, 0, bVecStride), 1e-9)
		require.InDelta(t, 1.0, featBuf(after, 0, bContig), 1e-9)
		// The work is the same.
		require.InDelta(t, featMain(before, fFlops), featMain(after, fFlops), 1e-9)
	})
	t.Run("parallel", func(t *testing.T) {
		s := schedule.New(featParse(t, src))
		ls := featLoopsOf(t, s, "C")
		require.NoError(t, s.Parallel(ls[0]))
		v := featCheck(t, s.Func())
		require.Zero(t, featMain(base, fParOuter))
		require.InDelta(t, 1.0, featMain(v, fParOuter), 1e-9)
		require.InDelta(t, featLg(64), featMain(v, fParProd), 1e-9)
		require.Greater(t, featSum(v, fParCount), featSum(base, fParCount))
	})
	t.Run("unroll", func(t *testing.T) {
		s := schedule.New(featParse(t, src))
		ls := featLoopsOf(t, s, "C")
		ks, err := s.Split(ls[2], []int64{-1, 4})
		require.NoError(t, err)
		require.NoError(t, s.Unroll(ks[1]))
		v := featCheck(t, s.Func())
		require.InDelta(t, featLg(4), featMain(v, fUnrollProd), 1e-9)
		require.InDelta(t, featLg(1), featMain(v, fUnrollCount), 1e-9)
		require.NoError(t, s.Unroll(ks[0]))
		v2 := featCheck(t, s.Func())
		require.Greater(t, featMain(v2, fUnrollProd), featMain(v, fUnrollProd))
		require.NoError(t, s.Annotate(ls[0], "pragma_auto_unroll_max_step", tir.IntAttr(16)))
		require.InDelta(t, featLg(16), featMain(featCheck(t, s.Func()), fAutoUnroll), 1e-9)
	})
	t.Run("tile", func(t *testing.T) {
		// i, j, k → i0, j0, k, i1, j1 with 8x8 tiles: the data touched by
		// the innermost levels shrinks to a tile; the loop count grows.
		s := schedule.New(featParse(t, src))
		ls := featLoopsOf(t, s, "C")
		is, err := s.Split(ls[0], []int64{-1, 8})
		require.NoError(t, err)
		js, err := s.Split(ls[1], []int64{-1, 8})
		require.NoError(t, err)
		require.NoError(t, s.Reorder(is[0], js[0], ls[2], is[1], js[1]))
		v := featCheck(t, s.Func())
		require.Greater(t, featMain(v, fNumLoops), featMain(base, fNumLoops))
		// B[k, j]: over the innermost 3 levels untiled (i, j, k) that is
		// all of B; tiled (k, i1, j1) a 32x8 panel.
		require.InDelta(t, featLg(64*32*4), featBuf(base, 2, bFootprint1+2), 1e-9)
		require.InDelta(t, featLg(32*8*4), featBuf(v, 2, bFootprint1+2), 1e-9)
		// C is now contiguous along j1 instead of reused along k, and
		// its innermost-2-level footprint is one 8x8 tile.
		require.InDelta(t, 1.0, featBuf(v, 0, bContig), 1e-9)
		require.InDelta(t, featLg(8*8*4), featBuf(v, 0, bFootprint1+1), 1e-9)
		require.InDelta(t, featMain(base, fFlops), featMain(v, fFlops), 1e-9)
	})
	t.Run("guarded split", func(t *testing.T) {
		s := schedule.New(featParse(t, featGemmSrc(10, 6, 5)))
		ls := featLoopsOf(t, s, "C")
		require.Zero(t, featMain(featCheck(t, s.Func()), fGuards))
		_, err := s.Split(ls[0], []int64{-1, 4}) // 12 > 10: guarded
		require.NoError(t, err)
		v := featCheck(t, s.Func())
		require.InDelta(t, featLg(1), featMain(v, fGuards), 1e-9)
		// The padded nest runs 12*6*5 times.
		require.InDelta(t, featLg(12*6*5), featMain(v, fTrip), 1e-9)
	})
	t.Run("cache", func(t *testing.T) {
		s := schedule.New(featParse(t, src))
		b, err := s.GetBlock("C")
		require.NoError(t, err)
		_, err = s.CacheRead(b, 0, "local")
		require.NoError(t, err)
		v := featCheck(t, s.Func())
		require.Zero(t, featGlobal(base, gAllocBytes))
		require.Greater(t, featGlobal(v, gAllocBytes), 0.0)
		require.Greater(t, featGlobal(v, gBlocks), featGlobal(base, gBlocks))
		require.Greater(t, featMain(v, fLocalAlloc), 0.0)
	})
}

// The conv's shifted window I[ci, h+kh, w+kw]: the bounding box, not the
// product of loop extents, bounds the footprint.
func TestFeaturesConvFootprint(t *testing.T) {
	v := featCheck(t, featParse(t, featConvSrc))
	// Reads: I (3x8x8 = 192 elements) and W (4x3x3x3 = 108), I first.
	require.InDelta(t, featLg(3*8*8*4), featBuf(v, 1, bBytes), 1e-9)
	// Within kh, kw (2 innermost levels): a 3x3 window.
	require.InDelta(t, featLg(9*4), featBuf(v, 1, bFootprint1+1), 1e-9)
	// Within w, ci, kh, kw: 3 channels × 3 rows × (6+2) columns.
	require.InDelta(t, featLg(3*3*8*4), featBuf(v, 1, bFootprint1+3), 1e-9)
	// Along kw the input is contiguous, W too.
	require.InDelta(t, 1.0, featBuf(v, 1, bContig), 1e-9)
	require.InDelta(t, 1.0, featBuf(v, 2, bContig), 1e-9)
}

// Loop transformations that keep the iteration space keep the work.
func TestFeaturesWorkInvariant(t *testing.T) {
	src := featGemmSrc(24, 16, 12)
	want := featGlobal(featCheck(t, featParse(t, src)), gFlops)
	rng := rand.New(rand.NewSource(3))
	divisors := func(n int64) []int64 {
		var out []int64
		for d := int64(1); d <= n; d++ {
			if n%d == 0 {
				out = append(out, d)
			}
		}
		return out
	}
	for trial := 0; trial < 40; trial++ {
		s := schedule.NewWithSeed(featParse(t, src), int64(trial))
		for step := 0; step < 5; step++ {
			ls := featLoopsOf(t, s, "C")
			l := ls[rng.Intn(len(ls))]
			f, err := s.FindLoop(l)
			require.NoError(t, err)
			ext := f.Extent.(*tir.IntImm).Value
			switch rng.Intn(4) {
			case 0:
				ds := divisors(ext)
				_, _ = s.Split(l, []int64{-1, ds[rng.Intn(len(ds))]})
			case 1:
				_ = s.Reorder(ls[len(ls)-1], ls[0])
			case 2:
				_ = s.Parallel(l)
			case 3:
				_ = s.Unroll(l)
			}
		}
		require.InDelta(t, want, featGlobal(featCheck(t, s.Func()), gFlops), 1e-9, s.Trace().String())
	}
}

// featRandomStep applies a random primitive, ignoring refusals.
func featRandomStep(s *schedule.Schedule, rng *rand.Rand) {
	var blocks []string
	for _, r := range schedule.BlocksUnder(s.Func().Body) {
		blocks = append(blocks, r.Block.Name)
	}
	if len(blocks) == 0 {
		return
	}
	b := schedule.BlockRV{Name: blocks[rng.Intn(len(blocks))]}
	ls, err := s.GetLoops(b)
	if err != nil || len(ls) == 0 {
		return
	}
	l := ls[rng.Intn(len(ls))]
	switch rng.Intn(10) {
	case 0, 1, 2:
		fs := []int64{-1, 1 + rng.Int63n(9)}
		if rng.Intn(2) == 0 {
			fs = append(fs, 1+rng.Int63n(4))
		}
		_, _ = s.Split(l, fs)
	case 3:
		if len(ls) >= 2 {
			i := rng.Intn(len(ls) - 1)
			_, _ = s.Fuse(ls[i], ls[i+1])
		}
	case 4:
		perm := rng.Perm(len(ls))
		sel := make([]schedule.LoopRV, len(perm))
		for i, p := range perm {
			sel[i] = ls[p]
		}
		_ = s.Reorder(sel...)
	case 5:
		_ = s.Parallel(l)
	case 6:
		_ = s.Vectorize(ls[len(ls)-1])
	case 7:
		_ = s.Unroll(l)
	case 8:
		_, _ = s.CacheRead(b, 0, "local")
	case 9:
		_ = s.Annotate(l, "pragma_auto_unroll_max_step", tir.IntAttr(rng.Int63n(64)))
	}
}

func TestFeaturesRandomSchedules(t *testing.T) {
	srcs := []string{featGemmSrc(13, 7, 9), featChainSrc, featConvSrc}
	distinct := map[string]bool{}
	for si, src := range srcs {
		for seed := int64(0); seed < 60; seed++ {
			rng := rand.New(rand.NewSource(seed))
			s := schedule.NewWithSeed(featParse(t, src), seed)
			for i := 0; i < 1+rng.Intn(8); i++ {
				featRandomStep(s, rng)
			}
			v := featCheck(t, s.Func())
			distinct[fmt.Sprint(si, v)] = true
		}
	}
	// Different schedules give different vectors.
	require.Greater(t, len(distinct), 60)
}

// Malformed or unusual IR built through the API never panics.
func TestFeaturesMalformed(t *testing.T) {
	require.Equal(t, make([]float64, NumFeatures), ExtractFeatures(nil))
	require.Equal(t, make([]float64, NumFeatures), ExtractFeatures(&tir.PrimFunc{Name: "empty"}))

	a := tir.NewBuffer("A", tir.DF32, 4, 4)
	n := tir.NewVar("n", tir.DIndex)
	sym := &tir.Buffer{Name: "S", DType: tir.DF32, Shape: []tir.Expr{n, tir.Int(-3)}, Scope: tir.ScopeLocal}
	i := tir.NewVar("i", tir.DIndex)
	j := tir.NewVar("j", tir.DIndex)
	iv := &tir.IterVar{Var: tir.NewVar("vi", tir.DIndex), Dom: tir.RangeOf(0, 4)}
	bodies := []tir.Stmt{
		&tir.BufferStore{}, // no buffer, no value
		&tir.BufferStore{Buffer: a, Value: tir.Float(tir.DF32, 1)}, // too few indices
		&tir.For{Var: i, Min: tir.Int(0), Extent: n, Body: &tir.BufferStore{Buffer: a, Value: tir.Load(a, i, i, i), Indices: []tir.Expr{i, i}}},
		&tir.For{Var: i, Min: tir.Int(0), Extent: tir.Int(-5), Kind: tir.Vectorized, Body: &tir.BufferStore{Buffer: sym, Value: tir.Load(sym, i), Indices: []tir.Expr{i, n}}},
		&tir.For{Body: &tir.BufferStore{Buffer: a, Indices: []tir.Expr{nil, nil}}}, // nil var
		&tir.For{Var: i, Min: tir.Int(2), Extent: tir.Int(1 << 62), Kind: tir.Parallel, Body: &tir.For{Var: j, Extent: tir.Int(4), Kind: tir.Unrolled,
			Body: &tir.BufferStore{Buffer: a, Value: tir.Load(a, tir.FloorDiv(i, tir.Int(0)), tir.Load(a, j, j)), Indices: []tir.Expr{tir.FloorMod(j, tir.Int(0)), tir.Mul(i, i)}}}},
		&tir.BlockRealize{}, // no block
		&tir.BlockRealize{Block: &tir.Block{IterVars: []*tir.IterVar{iv, nil}, Body: &tir.BufferStore{Buffer: a, Value: tir.Load(a, iv.Var, iv.Var), Indices: []tir.Expr{iv.Var, iv.Var}}}}, // no values
		&tir.Block{Body: &tir.BufferStore{Buffer: a, Indices: []tir.Expr{tir.Int(0), tir.Int(0)}}},
		&tir.IfThenElse{Cond: tir.BoolImm(true), Then: &tir.LetStmt{Var: j, Value: tir.Int(3), Body: &tir.BufferStore{Buffer: a, Value: &tir.Call{Name: "fma"}, Indices: []tir.Expr{j, j}}}},
		&tir.LetStmt{Body: &tir.Allocate{Body: &tir.SeqStmt{Stmts: []tir.Stmt{nil, &tir.Evaluate{}}}}},
		&tir.ArenaAlloc{Body: &tir.AllocateConst{Body: &tir.CallKernel{}}},
	}
	for k, body := range bodies {
		f := &tir.PrimFunc{Name: "bad", Body: body, Params: []*tir.Param{nil, {Buffer: a}}}
		require.NotPanics(t, func() { featCheck(t, f) }, "body %d", k)
	}
}

func BenchmarkExtractFeatures(b *testing.B) {
	s := schedule.New(featParse(b, featGemmSrc(64, 64, 32)))
	ls := featLoopsOf(b, s, "C")
	is, err := s.Split(ls[0], []int64{-1, 8})
	require.NoError(b, err)
	js, err := s.Split(ls[1], []int64{-1, 8})
	require.NoError(b, err)
	require.NoError(b, s.Reorder(is[0], js[0], ls[2], is[1], js[1]))
	require.NoError(b, s.Parallel(is[0]))
	require.NoError(b, s.Vectorize(js[1]))
	f := s.Func()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ExtractFeatures(f)
	}
}
