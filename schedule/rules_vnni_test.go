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

var avx512VNNI = func() CPURules { r := avx512; r.VNNI = true; return r }()

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
		if ok && r.Block.Name == "C" && e1 == vnniLanes && e2 == vnniDepth {
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
	for _, sh := range [][3]int{{64, 48, 64}, {360, 200, 784}, {1, 1000, 512}, {7, 33, 20}, {13, 16, 4}, {2, 17, 12}} {
		src := int8GemmOf(sh[0], sh[1], sh[2])
		t.Run(fmt.Sprint(sh), func(t *testing.T) {
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
	// The MLP layer's tail guard names only the lanes and the fused tile
	// loop, and the init sits under a unit loop code generation versions.
	s, err := ApplyDefaultRules(parseFunc(t, int8GemmOf(360, 200, 784)), avx512VNNI)
	require.NoError(t, err)
	p := printed(s.Func())
	require.Contains(t, p, "_unit = 0 to 1 {", p)
	require.NotContains(t, p, "= 0 to 1 unrolled", p)
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
	f := parseFunc(t, int8GemmOf(48, 64, 32))
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
