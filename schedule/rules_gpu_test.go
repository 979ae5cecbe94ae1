package schedule

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// TestGPURulesInterpreter: the GPU rules' default and sampled schedules of
// every rule workload pass GPU verification and compute what the
// unscheduled function computes in the tensor IR interpreter (bound loops
// run serially); the traces replay.
func TestGPURulesInterpreter(t *testing.T) {
	for name, src := range ruleWorkloads(t) {
		t.Run(name, func(t *testing.T) {
			f := parseFunc(t, src)
			want := interpret(t, f, 5)
			s, err := GPURules{}.Default(f)
			require.NoError(t, err)
			checkGPUSchedule(t, s, want)
			if !gpuSampledWorkloads[name] {
				return // TestGPUSampledSchedulesProperty samples small kernels 500 times
			}
			for seed := int64(1); seed <= 4; seed++ {
				s, err := GPURules{}.Sample(parseFunc(t, src), seed)
				require.NoError(t, err, "seed %d", seed)
				checkGPUSchedule(t, s, want)
			}
		})
	}
}

// gpuSampledWorkloads are the rule workloads whose sampled schedules the
// interpreter checks here too (the larger ones would take minutes under
// the race detector: a cooperative fetch runs once per thread).
var gpuSampledWorkloads = map[string]bool{"gemm": true, "gemm_odd": true, "conv": true, "chain": true, "pool": true, "softmax": true, "cbr": true}

func checkGPUSchedule(t *testing.T, s *Schedule, want map[string][]float64) {
	t.Helper()
	g := s.Func()
	require.NoError(t, tir.VerifyFunc(g), printed(g))
	require.NoError(t, GPURules{}.Check(g), printed(g))
	requireAllClose(t, want, interpret(t, g, 5), printed(g))
	checkReplay(t, s)
	checkPostSchedule(t, g, want, 5)
}

// checkPostSchedule runs the CUDA target's post-schedule passes on g
// (compaction, register prefetch, barriers) and checks the result
// against want: with barriers placed, the interpreter runs each block's
// threads in lockstep (GPU semantics), which checks the barriers and the
// prefetch.
func checkPostSchedule(t *testing.T, g *tir.PrimFunc, want map[string][]float64, seed int64) {
	t.Helper()
	m := &tir.Module{Funcs: []*tir.PrimFunc{tir.CompactBufferAllocation(g)}}
	require.NoError(t, tir.PrefetchShared(m))
	require.NoError(t, tir.ThreadSync(m))
	post := m.Funcs[0]
	require.NoError(t, tir.VerifyFunc(post), printed(post))
	require.NoError(t, VerifyGPU(post, DefaultGPULimits), printed(post))
	requireAllClose(t, want, interpret(t, post, seed), printed(post))
}

// requireAllClose compares interpreter results within 1e-5 relative (a
// GPU tiling may reorder a reduction's summation).
func requireAllClose(t *testing.T, want, got map[string][]float64, msg string) {
	t.Helper()
	require.Equal(t, len(want), len(got))
	for name, w := range want {
		g := got[name]
		require.Len(t, g, len(w), name)
		for i := range w {
			require.InDelta(t, w[i], g[i], 1e-5*(1+math.Abs(w[i])), "%s[%d]\n%s", name, i, msg)
		}
	}
}

// TestVerifyGPURefusals: each limit and structural rule of VerifyGPU is
// refused with a message naming the block or loop and the limit.
func TestVerifyGPURefusals(t *testing.T) {
	// bind binds the loops of block "C" (i, j, k) by position.
	bind := func(t *testing.T, src string, tags map[int]string) *tir.PrimFunc {
		s := New(parseFunc(t, src))
		loops, err := s.GetLoops(BlockRV{"C"})
		require.NoError(t, err)
		for i, tag := range tags {
			require.NoError(t, s.Bind(loops[i], tag))
		}
		return s.Func()
	}
	cases := []struct {
		name string
		f    func(t *testing.T) *tir.PrimFunc
		msg  string
	}{
		{"unbound", func(t *testing.T) *tir.PrimFunc { return parseFunc(t, gemmOf(8, 8, 4)) },
			`block "C" is not under a loop bound to blockIdx or threadIdx: it would run in one thread`},
		{"no threads", func(t *testing.T) *tir.PrimFunc { return bind(t, gemmOf(8, 8, 4), map[int]string{0: "blockIdx.x"}) },
			`block "C" is not under a loop bound to threadIdx`},
		{"too many threads", func(t *testing.T) *tir.PrimFunc {
			return bind(t, gemmOf(2, 2048, 4), map[int]string{0: "blockIdx.x", 1: "threadIdx.x"})
		}, "launches 2048 threads per block (threadIdx extents x 2048, y 1, z 1), above the limit 1024"},
		{"grid y", func(t *testing.T) *tir.PrimFunc {
			return bind(t, gemmOf(70000, 2, 1), map[int]string{0: "blockIdx.y", 1: "threadIdx.x"})
		}, "launches 70000 blocks along y, above the limit 65535"},
		{"parallel", func(t *testing.T) *tir.PrimFunc {
			s := New(parseFunc(t, gemmOf(8, 8, 4)))
			loops, err := s.GetLoops(BlockRV{"C"})
			require.NoError(t, err)
			require.NoError(t, s.Bind(loops[0], "blockIdx.x"))
			require.NoError(t, s.Parallel(loops[1]))
			return s.Func()
		}, "loop %j is parallel: a GPU kernel's parallelism is its thread bindings"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := VerifyGPU(c.f(t), DefaultGPULimits)
			require.Error(t, err)
			require.Contains(t, err.Error(), c.msg)
		})
	}
}

// TestGPUSampledSchedulesProperty: 500 schedules sampled from the GPU
// design space (100 each of a GEMM, a convolution, a pooling, a softmax
// and an elementwise chain; odd sizes) either pass GPU verification and
// compute what the unscheduled kernel computes in the interpreter, or are
// refused by verification with a message naming the kernel and the limit.
func TestGPUSampledSchedulesProperty(t *testing.T) {
	workloads := map[string]string{
		"gemm":    gemmOf(13, 21, 10),
		"conv":    convOf(3, 5, 7),
		"pool":    poolSrc,
		"softmax": softmaxSrc,
		"chain":   chainSrc,
	}
	accepted, refused := 0, 0
	for name, src := range workloads {
		f := parseFunc(t, src)
		want := interpret(t, f, 9)
		for seed := int64(0); seed < 100; seed++ {
			s, err := GPURules{}.Sample(parseFunc(t, src), seed)
			require.NoError(t, err, "%s seed %d", name, seed)
			g := s.Func()
			if err := (GPURules{}).Check(g); err != nil {
				require.Contains(t, err.Error(), "gpu verification: ", "%s seed %d", name, seed)
				refused++
				continue
			}
			accepted++
			requireAllClose(t, want, interpret(t, g, 9), fmt.Sprintf("%s seed %d\n%s", name, seed, printed(g)))
			checkPostSchedule(t, g, want, 9)
		}
	}
	t.Logf("%d sampled GPU schedules accepted and equal to the unscheduled kernels, %d refused by verification", accepted, refused)
	require.Equal(t, 500, accepted+refused)
}

// TestDefaultGPUTileSizes: the default GPU tiling's register tiles and
// threads per loop for a batch-1 dense layer (no register tile, the block's
// 256 threads on the row), a 1024² GEMM (4×4, 64×64 tiles) and a 4096² one
// (8×8, 128×128 tiles); factors are [blocks, vthread, threads, 1, reg].
func TestDefaultGPUTileSizes(t *testing.T) {
	for _, tc := range []struct {
		m, n, k int
		i, j    []int64
	}{
		{1, 1000, 1280, []int64{-1, 1, 1, 1, 1}, []int64{-1, 1, 256, 1, 1}},
		{1024, 1024, 1024, []int64{-1, 1, 16, 1, 4}, []int64{-1, 1, 16, 1, 4}},
		{4096, 4096, 4096, []int64{-1, 1, 16, 1, 8}, []int64{-1, 1, 16, 1, 8}},
		{37, 53, 29, []int64{-1, 1, 16, 1, 2}, []int64{-1, 1, 16, 1, 2}},
	} {
		s := New(parseFunc(t, gemmOf(tc.m, tc.n, tc.k)))
		nest, ok := nestOf(s, "C")
		require.True(t, ok)
		tile := defaultGPUTile(nest, 256)
		assert.Equal(t, tc.i, tile.factors[0], "%d×%d×%d: i", tc.m, tc.n, tc.k)
		assert.Equal(t, tc.j, tile.factors[1], "%d×%d×%d: j", tc.m, tc.n, tc.k)
		step := int64(16)
		if tc.i[4] == 8 {
			step = 8
		}
		assert.Equal(t, []int64{-1, largestDivisorAtMost(int64(tc.k), step), 1}, tile.factors[2])
	}
}

// TestGPUSharedTileLayouts: a GEMM tiled with 8-wide register tiles on
// 16 threads per loop stages A as [k][m] (its reduce axis outermost) and
// both tiles with each thread's 8 elements interleaved in runs of 4
// across the threads; the threads are numbered in 4×8 warps (the
// innermost thread level split 2 × 8, its outer part first). The schedule
// verifies, computes what the unscheduled GEMM computes in the
// interpreter and replays.
func TestGPUSharedTileLayouts(t *testing.T) {
	f := parseFunc(t, gemmOf(128, 128, 24))
	want := interpret(t, f, 5)
	s := New(f)
	tile := gpuTile{factors: [][]int64{{-1, 1, 16, 1, 8}, {-1, 1, 16, 1, 8}, {-1, 8, 1}}, unroll: 64}
	_, err := gpuMultiLevelTile(s, "C", tile)
	require.NoError(t, err)
	text := printed(s.Func())
	tr := s.Trace().String()
	interleaved := func(x string) string {
		return strings.ReplaceAll("x floordiv 128 * 128 + x floormod 8 floordiv 4 * 64 + x floormod 128 floordiv 8 * 4 + x floormod 4", "x", x)
	}
	assert.Contains(t, tr, `map_results=["i1","`+interleaved("i0")+`"]`, "A: [k][m], m interleaved")
	assert.Contains(t, tr, `map_results=["i0","`+interleaved("i1")+`"]`, "B: n interleaved")
	assert.Regexp(t, `tir.for %j_2_0_i_2_j_2_1_fused = 0 to 256 thread_binding\("threadIdx.x"\)`, text, "4×8 warps")
	checkGPUSchedule(t, s, want)

	// The default rule does the same for a GEMM of 4096², whose shared
	// copies (before compaction, 16M elements) are transformed per
	// dimension (transform_layout's bijection check enumerates each
	// dimension on its own).
	big, err := GPURules{}.Default(parseFunc(t, gemmOf(4096, 4096, 64)))
	require.NoError(t, err)
	assert.Contains(t, big.Trace().String(), `map_results=["i1","`+interleaved("i0")+`"]`)
	require.NoError(t, GPURules{}.Check(big.Func()))
}

// TestGPURecurrence: a recurrence kernel's loops become serial and its
// body one thread's (unit blockIdx/threadIdx loops), which GPU verification
// accepts and the interpreter runs to the same result.
func TestGPURecurrence(t *testing.T) {
	src := `tir.func @scan(%X: buffer<5x8xf32>, out %Y: buffer<5x8xf32>) attributes {tessera.kernel, tessera.recurrence} {
  tir.for %t = 0 to 5 {
    tir.for %j = 0 to 8 vectorized {
      tir.block "step"(%vt = spatial(0:5, %t), %vj = spatial(0:8, %j)) reads(%X[%vt, %vj], %Y[%vt - 1, %vj]) writes(%Y[%vt, %vj]) {
        %Y[%vt, %vj] = %X[%vt, %vj] + select(%vt > 0, %Y[max(%vt - 1, 0), %vj], 0.0)
      }
    }
  }
}
`
	f := parseFunc(t, src)
	want := interpret(t, f, 3)
	g, err := GPURules{}.Recurrence(f)
	require.NoError(t, err)
	text := printed(g)
	require.NotContains(t, text, "vectorized")
	require.Contains(t, text, `tir.for %blockIdx_unit = 0 to 1 thread_binding("blockIdx.x") {`)
	require.NoError(t, GPURules{}.Check(g), text)
	requireAllClose(t, want, interpret(t, g, 3), text)
}
