package schedule

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/targets/llvm"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// denseOf is a dense layer as the MLP lowers it: T[m,n] = Σ_k
// A[m,k]·W[n,k] (W row-major [N][K], PyTorch's Linear weight), then
// O = max(T + Bias[n], 0).
func denseOf(m, n, k int) string {
	return fmt.Sprintf(`tir.func @dense_%[1]d_%[2]d_%[3]d(%%A: buffer<%[1]dx%[3]dxf32>, %%W: buffer<%[2]dx%[3]dxf32>, %%Bias: buffer<%[2]dxf32>, out %%O: buffer<%[1]dx%[2]dxf32>) attributes {tessera.kernel} {
  tir.allocate %%T: buffer<%[1]dx%[2]dxf32, "local"> {
    tir.for %%i = 0 to %[1]d {
      tir.for %%j = 0 to %[2]d {
        tir.for %%k = 0 to %[3]d {
          tir.block "dense"(%%vi = spatial(0:%[1]d, %%i), %%vj = spatial(0:%[2]d, %%j), %%vk = reduce(0:%[3]d, %%k)) reads(%%A[%%vi, %%vk], %%W[%%vj, %%vk]) writes(%%T[%%vi, %%vj]) {
            tir.init {
              %%T[%%vi, %%vj] = 0.0
            }
            %%T[%%vi, %%vj] = %%T[%%vi, %%vj] + %%A[%%vi, %%vk] * %%W[%%vj, %%vk]
          }
        }
      }
    }
    tir.for %%i = 0 to %[1]d {
      tir.for %%j = 0 to %[2]d {
        tir.block "bias_relu"(%%vi = spatial(0:%[1]d, %%i), %%vj = spatial(0:%[2]d, %%j)) reads(%%T[%%vi, %%vj], %%Bias[%%vj]) writes(%%O[%%vi, %%vj]) {
          %%O[%%vi, %%vj] = max(%%T[%%vi, %%vj] + %%Bias[%%vj], 0.0)
        }
      }
    }
  }
}
`, m, n, k)
}

// gemvWorkloads are the GEMV-shaped kernels: batch-1 dense layers (the
// MLP's 784×200 and 200×10, odd N and K), small batches, GEMMs with
// [K][N] weights and 1×1-output convolutions.
func gemvWorkloads() map[string]string {
	return map[string]string{
		"dense_1_200_784":  denseOf(1, 200, 784),
		"dense_1_10_200":   denseOf(1, 10, 200),
		"dense_1_7_1001":   denseOf(1, 7, 1001),
		"dense_1_13_3":     denseOf(1, 13, 3),
		"dense_1_120_400":  denseOf(1, 120, 400),
		"dense_1_84_120":   denseOf(1, 84, 120),
		"dense_1_1000_64":  denseOf(1, 1000, 64),
		"dense_3_37_29":    denseOf(3, 37, 29),
		"gemm_1_200_784":   gemmOf(1, 200, 784),
		"gemm_2_53_17":     gemmOf(2, 53, 17),
		"gemm_4_100_33":    gemmOf(4, 100, 33),
		"conv_hwio_1x1out": convHWIOOf(8, 32, 1, 1, 1),
		"conv_oihw_1x1out": convOf(5, 20, 1),
	}
}

// gemvTiled reports whether the contraction block (the first block with
// a reduce iteration variable) got the GEMV nest on its column loop col:
// among its enclosing loops, col split in three (col_0, col_1 unrolled,
// col_2 vectorized and innermost, no col_3), col_1 directly around col_2,
// and a reduction loop outside col_1.
func gemvTiled(f *tir.PrimFunc, col string) bool {
	var loops []*tir.For
	for _, r := range BlocksUnder(f.Body) {
		if hasReduce(r.Block) {
			for _, st := range PathTo(f.Body, r) {
				if l, ok := st.(*tir.For); ok {
					loops = append(loops, l)
				}
			}
			break
		}
	}
	n := len(loops)
	if n < 3 || loops[n-1].Var.Name != col+"_2" || loops[n-1].Kind != tir.Vectorized ||
		loops[n-2].Var.Name != col+"_1" || loops[n-2].Kind != tir.Unrolled {
		return false
	}
	reduceOutside := false
	for _, l := range loops[:n-2] {
		if l.Var.Name == col+"_3" {
			return false
		}
		if strings.HasPrefix(l.Var.Name, "k") || strings.HasPrefix(l.Var.Name, "ci") {
			reduceOutside = true
		}
	}
	return reduceOutside
}

// gemvColName is the column loop's name in the workloads: j for dense and
// gemm, co for the convolutions.
func gemvColName(name string) string {
	if strings.HasPrefix(name, "conv") {
		return "co"
	}
	return "j"
}

// TestGEMVRuleApplies: the default rules give every GEMV-shaped workload
// the GEMV nest, which computes exactly what the kernel computes (the
// summation order is kept) and replays; the reduction loop encloses the
// unrolled vectors; the MLP's first layer uses every column vector in one
// tile (25 vectors of 8 lanes: 200 = 12.5 × 16), serial under the cost
// rule.
func TestGEMVRuleApplies(t *testing.T) {
	target := avx512
	target.MinParallelWork = 4e6
	for name, src := range gemvWorkloads() {
		t.Run(name, func(t *testing.T) {
			f := parseFunc(t, src)
			s, err := ApplyDefaultRules(f, target)
			require.NoError(t, err)
			g := s.Func()
			require.NoError(t, tir.VerifyFunc(g), printed(g))
			require.True(t, gemvTiled(g, gemvColName(name)), "%s: no GEMV nest\n%s", name, printed(g))
			require.Equal(t, interpret(t, f, 5), interpret(t, g, 5), printed(g))
			checkReplay(t, s)
		})
	}
	s, err := ApplyDefaultRules(parseFunc(t, denseOf(1, 200, 784)), target)
	require.NoError(t, err)
	p := printed(s.Func())
	require.Contains(t, p, "tir.for %j_1 = 0 to 25 unrolled")
	require.Contains(t, p, "tir.for %j_2 = 0 to 8 vectorized")
	require.NotContains(t, p, "parallel")
	require.NotContains(t, p, "\"bias_relu\"", "the epilogue is folded into the write-back")
	// 84 outputs: 6 vectors of 14 lanes, no masked tail.
	s, err = ApplyDefaultRules(parseFunc(t, denseOf(1, 84, 120)), target)
	require.NoError(t, err)
	p = printed(s.Func())
	require.Contains(t, p, "tir.for %j_1 = 0 to 6 unrolled", p)
	require.Contains(t, p, "tir.for %j_2 = 0 to 14 vectorized", p)
	require.NotContains(t, p, "< 84)", p)
	// Batch 2, 200 outputs: 5 tiles of 5 vectors (10 accumulators), not
	// 13 + a guarded 12.
	s, err = ApplyDefaultRules(parseFunc(t, denseOf(2, 200, 784)), target)
	require.NoError(t, err)
	p = printed(s.Func())
	require.Contains(t, p, "tir.for %j_0 = 0 to 5 {", p)
	require.Contains(t, p, "tir.for %j_1 = 0 to 5 unrolled", p)
	require.NotContains(t, p, "< 200)", p)
}

// TestGEMVRuleNotApplied: GEMMs with more rows than gemvMaxRows keep the
// multi-level tiling, and so does a kernel without a broadcast operand.
func TestGEMVRuleNotApplied(t *testing.T) {
	for _, src := range []string{gemmOf(64, 200, 784), gemmOf(gemvMaxRows+1, 200, 784), denseOf(360, 200, 784), gemmSrc} {
		s, err := ApplyDefaultRules(parseFunc(t, src), avx512)
		require.NoError(t, err)
		require.False(t, gemvTiled(s.Func(), "j"), printed(s.Func()))
		require.Contains(t, printed(s.Func()), "%j_3", printed(s.Func()))
	}
	// An elementwise product summed over k (both operands indexed by j):
	// no broadcast operand, so planGEMV refuses it.
	_, err := planGEMV(New(parseFunc(t, gemmOf(1, 40, 9))), "C", avx512)
	require.NoError(t, err)
	noVec := strings.ReplaceAll(gemmOf(1, 40, 9), "%A[%vi, %vk]", "%B[%vk, %vj]")
	_, err = planGEMV(New(parseFunc(t, noVec)), "C", avx512)
	require.ErrorIs(t, err, errNotTileable)
}

// TestGEMVRuleParallel: a GEMV with enough work for the cost rule is
// parallel over column tiles, at least two tiles per core.
func TestGEMVRuleParallel(t *testing.T) {
	target := avx512
	target.MinParallelWork = 1e5
	s, err := ApplyDefaultRules(parseFunc(t, denseOf(1, 1000, 512)), target)
	require.NoError(t, err)
	g := s.Func()
	require.True(t, gemvTiled(g, "j"), printed(g))
	var par *tir.For
	tir.VisitStmt(g.Body, func(st tir.Stmt) bool {
		if l, ok := st.(*tir.For); ok && l.Kind == tir.Parallel && par == nil {
			par = l
		}
		return true
	})
	require.NotNil(t, par, printed(g))
	ext, _ := constInt(par.Extent)
	require.GreaterOrEqual(t, ext, int64(2*target.Cores), printed(g))
}

// TestGEMVRuleCompiled compiles the default GEMV schedules with
// targets/cpu (AVX-512 widths; FMA contraction, so within float32
// rounding) and checks them against the interpreter on the unscheduled
// kernels.
func TestGEMVRuleCompiled(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles with llc/lld")
	}
	target := CPURules{VectorBits: llvm.HostVectorBits(), Cores: 2, MaxLanes: llvm.MaxVectorLanes, CanVectorize: llvm.CheckVectorizable}
	var entries []compiledEntry
	for name, src := range gemvWorkloads() {
		for _, serial := range []float64{0, 1e12} {
			tg := target
			tg.MinParallelWork = serial
			s, err := ApplyDefaultRules(parseFunc(t, src), tg)
			require.NoError(t, err)
			entries = append(entries, compiledEntry{fmt.Sprintf("gemv_%s_%v", name, serial > 0), src, s})
		}
	}
	compileAndCheck(t, entries)
}

// TestSampledRulesGEMVSketch: a batch-1 dense layer gets the GEMV sketch
// in some samples (with a sampled number of vectors per tile) and the
// multi-level tiling in others; every sample computes what the kernel
// computes, and the GEMV samples compile and match the interpreter.
func TestSampledRulesGEMVSketch(t *testing.T) {
	src := denseOf(1, 200, 96)
	gemv, other := 0, 0
	us := map[string]bool{}
	var entries []compiledEntry
	target := CPURules{VectorBits: llvm.HostVectorBits(), Cores: 2, MaxLanes: llvm.MaxVectorLanes, CanVectorize: llvm.CheckVectorizable}
	for seed := int64(1); seed <= 16; seed++ {
		s, err := ApplySampledRules(parseFunc(t, src), target, seed)
		require.NoError(t, err)
		checkSame(t, s)
		if gemvTiled(s.Func(), "j") {
			gemv++
			for _, l := range forKinds(s.Func()) {
				if strings.HasPrefix(l, "j_1:") {
					us[findExtent(s.Func(), "j_1")] = true
				}
			}
			entries = append(entries, compiledEntry{fmt.Sprintf("sampled_gemv_%d", seed), src, s})
		} else {
			other++
		}
	}
	require.Positive(t, gemv, "no sample used the GEMV sketch")
	require.Positive(t, other, "every sample used the GEMV sketch")
	require.Greater(t, len(us), 1, "every GEMV sample (%d) drew the same vectors per tile: %v", gemv, us)
	if !testing.Short() {
		compileAndCheck(t, entries)
	}
}

// findExtent prints the extent of the first loop named v (the GEMV tile's
// columns, not the write-back's loop of the same name).
func findExtent(f *tir.PrimFunc, v string) string {
	out := ""
	tir.VisitStmt(f.Body, func(st tir.Stmt) bool {
		if l, ok := st.(*tir.For); ok && l.Var.Name == v && out == "" {
			e, _ := constInt(l.Extent)
			out = fmt.Sprint(e)
		}
		return out == ""
	})
	return out
}
