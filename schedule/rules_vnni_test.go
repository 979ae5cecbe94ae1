package schedule

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// int8GemmOf is C[m,n] = Σ_k i32(A[m,k]) · i32(B[k,n]) with A ui8 and B
// i8, as hlo.dot_general of 8-bit operands lowers.
func int8GemmOf(m, n, k int) string {
	return fmt.Sprintf(`tir.func @q_%[1]d_%[2]d_%[3]d(%%A: buffer<%[1]dx%[3]dxui8>, %%B: buffer<%[3]dx%[2]dxi8>, out %%C: buffer<%[1]dx%[2]dxi32>) attributes {tessera.kernel} {
  tir.for %%i = 0 to %[1]d {
    tir.for %%j = 0 to %[2]d {
      tir.for %%k = 0 to %[3]d {
        tir.block "C"(%%vi = spatial(0:%[1]d, %%i), %%vj = spatial(0:%[2]d, %%j), %%vk = reduce(0:%[3]d, %%k)) reads(%%A[%%vi, %%vk], %%B[%%vk, %%vj]) writes(%%C[%%vi, %%vj]) {
          tir.init {
            %%C[%%vi, %%vj] = 0 : i32
          }
          %%C[%%vi, %%vj] = %%C[%%vi, %%vj] + cast<i32>(%%A[%%vi, %%vk]) * cast<i32>(%%B[%%vk, %%vj])
        }
      }
    }
  }
}
`, m, n, k)
}

// int8ConvOf is convOf with a ui8 input and an i8 weight into i32, the
// input read through a padding guard (select) as hlo.convolution lowers a
// padded window (here the guard always holds).
func int8ConvOf(ci, co, hw int) string {
	src := convOf(ci, co, hw)
	src = strings.Replace(src, "@conv_", "@qconv_", 1)
	src = strings.Replace(src, fmt.Sprintf("%dx%dx%dxf32>, %%W", ci, hw+2, hw+2), fmt.Sprintf("%dx%dx%dxui8>, %%W", ci, hw+2, hw+2), 1)
	src = strings.Replace(src, "x3x3xf32>", "x3x3xi8>", 1)
	src = strings.Replace(src, fmt.Sprintf("%dx%dx%dxf32>)", co, hw, hw), fmt.Sprintf("%dx%dx%dxi32>)", co, hw, hw), 1)
	src = strings.Replace(src, "= 0.0", "= 0 : i32", 1)
	return strings.Replace(src, "%I[%vci, %vh + %vkh, %vw + %vkw] * %W[%vco, %vci, %vkh, %vkw]",
		"select(%vh + %vkh >= 0, cast<i32>(%I[%vci, %vh + %vkh, %vw + %vkw]), 0 : i32) * cast<i32>(%W[%vco, %vci, %vkh, %vkw])", 1)
}

var avx512VNNI = func() CPURules { r := avx512; r.Int8Dot = true; return r }()

// vnniNest reports whether block C got the int8 nest: a 16-lane
// vectorized loop directly around a serial 4-step reduction loop around
// the block.
func vnniNest(f *tir.PrimFunc) bool {
	found := false
	tir.VisitStmt(f.Body, func(st tir.Stmt) bool {
		l, ok := st.(*tir.For)
		if !ok || l.Kind != tir.Vectorized {
			return true
		}
		in, ok := l.Body.(*tir.For)
		if !ok || in.Kind != tir.Serial {
			return true
		}
		r, ok := in.Body.(*tir.BlockRealize)
		e1, _ := constInt(l.Extent)
		e2, _ := constInt(in.Extent)
		if ok && (r.Block.Name == "C" || r.Block.Name == "conv") && e1 == vnniLanes && e2 == vnniDepth {
			found = true
		}
		return !found
	})
	return found
}

// TestVNNIRuleApplies: with VNNI, 8-bit contractions with a reduction
// divisible by 4 and at least 16 columns get the int8 nest — odd row
// counts, column tails, batch 1 — compute what the kernel computes and
// replay; the register tile is 4×4 vectors on a 1024² GEMM and 15 rows
// by one vector on the MLP's 360×784×200 layer (a column tail: one
// vector, rows that divide).
func TestVNNIRuleApplies(t *testing.T) {
	srcs := map[string]string{"conv 8→20, 5²": int8ConvOf(8, 20, 5), "conv 64→32, 14²": int8ConvOf(64, 32, 14)}
	for _, sh := range [][3]int{{64, 48, 64}, {360, 200, 784}, {1, 1000, 512}, {7, 33, 20}, {13, 16, 4}, {2, 17, 12}} {
		srcs[fmt.Sprint(sh)] = int8GemmOf(sh[0], sh[1], sh[2])
	}
	for name, src := range srcs {
		t.Run(name, func(t *testing.T) {
			f := parseFunc(t, src)
			s, err := ApplyDefaultRules(f, avx512VNNI)
			require.NoError(t, err)
			g := s.Func()
			require.NoError(t, tir.VerifyFunc(g), printed(g))
			require.True(t, vnniNest(g), printed(g))
			require.Equal(t, interpret(t, f, 5), interpret(t, g, 5), printed(g))
			checkReplay(t, s)
		})
	}
	shape := func(m, n, k int) [2]int64 {
		p, err := planVNNI(New(parseFunc(t, int8GemmOf(m, n, k))), "C", avx512VNNI)
		require.NoError(t, err)
		return p.heuristicShape()
	}
	require.Equal(t, [2]int64{4, 4}, shape(1024, 1024, 1024))
	require.Equal(t, [2]int64{15, 1}, shape(360, 200, 784))
	require.Equal(t, [2]int64{1, 1}, shape(1, 1000, 512), "a column tail: one vector per tile")
	require.Equal(t, [2]int64{1, 16}, shape(1, 1024, 512))
	require.Equal(t, [2]int64{7, 2}, shape(49, 512, 4608), "ResNet's last layers: 7 rows of 2 vectors, not 1 of 16")
	require.Equal(t, [2]int64{7, 2}, shape(14, 256, 2304), "ResNet's layer 3: a 36 KB panel of S per vector streams from L2; 7 rows per read, not 2×8")
	require.Equal(t, [2]int64{4, 4}, shape(56, 64, 576), "ResNet's layer 1: 9 KB per vector")
	// With 256-bit vectors (AVX2, AVX-VNNI) an accumulator takes two of
	// the 16 ymm registers: at most 4 of them.
	avx2Int8 := avx512VNNI
	avx2Int8.VectorBits = 256
	for _, sh := range [][3]int{{1024, 1024, 1024}, {49, 512, 4608}, {1, 1024, 512}} {
		p, err := planVNNI(New(parseFunc(t, int8GemmOf(sh[0], sh[1], sh[2]))), "C", avx2Int8)
		require.NoError(t, err)
		for _, t2 := range p.tileShapes() {
			require.LessOrEqual(t, t2[0]*t2[1], int64(4), "%v", sh)
		}
		require.Equal(t, int64(4), p.heuristicShape()[0]*p.heuristicShape()[1], "%v", sh)
	}
	// A convolution: the output and input channels move innermost (the
	// accumulator's layout, and a copy of the input made once per call).
	p, err := planVNNI(New(parseFunc(t, int8ConvOf(64, 32, 14))), "conv", avx512VNNI)
	require.NoError(t, err)
	require.Equal(t, [2]int{0, 0}, [2]int{p.packC, p.packU})
	s, err := ApplyDefaultRules(parseFunc(t, int8ConvOf(64, 32, 14)), avx512VNNI)
	require.NoError(t, err)
	require.Contains(t, printed(s.Func()), "buffer<16x16x64xui8", "the input copy, channels innermost")
	// The MLP layer's tail guard names only the lanes and the fused tile
	// loop, and the init sits under a unit loop code generation versions.
	s, err = ApplyDefaultRules(parseFunc(t, int8GemmOf(360, 200, 784)), avx512VNNI)
	require.NoError(t, err)
	pr := printed(s.Func())
	require.Contains(t, pr, "_unit = 0 to 1 {", pr)
	require.NotContains(t, pr, "= 0 to 1 unrolled", pr)
}

// TestVNNIRowBlocks: a contraction whose weight exceeds vnniBlockS gets
// row blocks — the fused parallel loop walks row blocks, then column
// tiles, then the row tiles of a block — and computes what the kernel
// computes; a small weight, or a weight-stationary nest, gets none.
func TestVNNIRowBlocks(t *testing.T) {
	avx2Int8 := avx512VNNI
	avx2Int8.VectorBits = 256
	plan := func(m, n, k int, target CPURules) *vnniPlan {
		p, err := planVNNI(New(parseFunc(t, int8GemmOf(m, n, k))), "C", target)
		require.NoError(t, err)
		return p
	}
	// GEMM 1024³: 64-row blocks of 2×2 (AVX2) or 4×4 (AVX-512) tiles.
	require.Equal(t, [2]int64{2, 2}, plan(1024, 1024, 1024, avx2Int8).heuristicShape())
	require.Equal(t, int64(32), plan(1024, 1024, 1024, avx2Int8).rowBlockTiles(2))
	require.Equal(t, int64(16), plan(1024, 1024, 1024, avx512VNNI).rowBlockTiles(4))
	require.Equal(t, int64(1), plan(1024, 128, 1024, avx2Int8).rowBlockTiles(2), "a 128 KB weight stays in L2")
	require.Equal(t, int64(1), plan(49, 512, 4608, avx2Int8).rowBlockTiles(7), "weight-stationary")
	// With budgets of 1 KB of S and 512 bytes of U, an 80×64×64 GEMM: 8
	// rows of U per block, 4 of the 40 2-row tiles, and 2 column tiles
	// of 32 between.
	f := parseFunc(t, int8GemmOf(80, 64, 64))
	s := New(f)
	p, err := planVNNI(s, "C", avx2Int8)
	require.NoError(t, err)
	p.blockS, p.blockU = 1<<10, 512
	require.Equal(t, int64(4), p.rowBlockTiles(2))
	require.NoError(t, p.tile(s, avx2Int8, 2, 2))
	g := s.Func()
	require.NoError(t, tir.VerifyFunc(g), printed(g))
	pr := printed(g)
	require.Contains(t, pr, "%i_0_0_j_0_i_0_1_fused = 0 to 80 parallel", pr)
	require.Contains(t, pr, "spatial(0:80, floordiv(%i_0_0_j_0_i_0_1_fused, 8) * 8 + floormod(%i_0_0_j_0_i_0_1_fused, 4) * 2 + %i_1)", pr)
	require.Equal(t, interpret(t, f, 5), interpret(t, g, 5), pr)
	checkReplay(t, s)
}

// TestWriteBackAlongAccumulator: with 256-bit vectors the int8 rule
// tiles a convolution's output by 2 columns of 32 channels; its
// write-back is vectorized along the channels (the accumulator's
// contiguous dimension: its vectorized loop steps the block variable of
// the output's channel), not along the 2 columns, and computes what the
// kernel computes. An f32 convolution of 14 columns keeps its write-back
// along the columns (contiguous stores).
func TestWriteBackAlongAccumulator(t *testing.T) {
	avx2Int8 := avx512VNNI
	avx2Int8.VectorBits = 256
	// vectorizedDim is the output dimension whose block variable the
	// vectorized loop around block name steps.
	vectorizedDim := func(f *tir.PrimFunc, name string) int {
		dim := -1
		tir.VisitStmt(f.Body, func(st tir.Stmt) bool {
			l, ok := st.(*tir.For)
			if !ok || l.Kind != tir.Vectorized {
				return true
			}
			r, ok := l.Body.(*tir.BlockRealize)
			if !ok || r.Block.Name != name {
				return true
			}
			for i, v := range r.Values {
				if c, lin := tir.LinearCoeff(v, l.Var); lin && c == 1 {
					dim = i
				}
			}
			return false
		})
		return dim
	}
	f := parseFunc(t, int8ConvOf(64, 32, 14))
	s, err := ApplyDefaultRules(f, avx2Int8)
	require.NoError(t, err)
	g := s.Func()
	require.Equal(t, 0, vectorizedDim(g, "O_local"), printed(g))
	require.Equal(t, interpret(t, f, 5), interpret(t, g, 5), printed(g))
	checkReplay(t, s)

	avx2 := avx512
	avx2.VectorBits = 256
	s, err = ApplyDefaultRules(parseFunc(t, convOf(64, 32, 14)), avx2)
	require.NoError(t, err)
	require.Equal(t, 2, vectorizedDim(s.Func(), "O_local"), printed(s.Func()))
}

// TestVNNIRuleNotApplied: without VNNI, with a reduction not divisible
// by 4, fewer than 16 columns, f32 operands or a convolution window
// (U's innermost index is not a reduction variable), the other rules
// schedule the block.
func TestVNNIRuleNotApplied(t *testing.T) {
	for name, c := range map[string]struct {
		src    string
		target CPURules
	}{
		"no VNNI":  {int8GemmOf(64, 48, 64), avx512},
		"K=30":     {int8GemmOf(64, 48, 30), avx512VNNI},
		"N=8":      {int8GemmOf(64, 8, 64), avx512VNNI},
		"f32":      {gemmSrc, avx512VNNI},
		"i8 by i8": {strings.ReplaceAll(int8GemmOf(64, 48, 64), "xui8>", "xi8>"), avx512VNNI},
	} {
		t.Run(name, func(t *testing.T) {
			f := parseFunc(t, c.src)
			_, err := planVNNI(New(f), "C", c.target)
			require.ErrorIs(t, err, errNotTileable)
			s, err := ApplyDefaultRules(f, c.target)
			require.NoError(t, err)
			require.False(t, vnniNest(s.Func()), printed(s.Func()))
			require.Equal(t, interpret(t, f, 5), interpret(t, s.Func(), 5))
		})
	}
}

// TestSampledRulesVNNI: the sampled rules draw the int8 nest's register
// tile with sample_categorical; the samples differ, compute what the
// kernel computes and replay.
func TestSampledRulesVNNI(t *testing.T) {
	for _, src := range []string{int8GemmOf(48, 64, 32), int8ConvOf(8, 32, 6)} {
		sampleVNNI(t, src)
	}
}

func sampleVNNI(t *testing.T, src string) {
	f := parseFunc(t, src)
	want := interpret(t, f, 7)
	seen := map[string]bool{}
	for seed := int64(1); seed <= 8; seed++ {
		s, err := ApplySampledRules(f, avx512VNNI, seed)
		require.NoError(t, err)
		require.True(t, vnniNest(s.Func()), printed(s.Func()))
		require.Contains(t, s.Trace().String(), "sample_categorical")
		require.Equal(t, want, interpret(t, s.Func(), 7))
		checkReplay(t, s)
		seen[printed(s.Func())] = true
	}
	require.Greater(t, len(seen), 2, "the register tile varies between samples")
}
