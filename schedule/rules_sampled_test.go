package schedule

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/targets/llvm"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// rowSumSrc reduces long rows: 4 spatial iterations, 2048 reduction
// iterations (an rfactor candidate).
const rowSumSrc = `tir.func @rowsum(%A: buffer<4x2048xf32>, out %B: buffer<4xf32>) attributes {tessera.kernel} {
  tir.for %i = 0 to 4 {
    tir.for %k = 0 to 2048 {
      tir.block "sum"(%vi = spatial(0:4, %i), %vk = reduce(0:2048, %k)) reads(%A[%vi, %vk]) writes(%B[%vi]) {
        tir.init {
          %B[%vi] = 0.0
        }
        %B[%vi] = %B[%vi] + %A[%vi, %vk]
      }
    }
  }
}
`

func sampledTarget() CPURules { return CPURules{VectorBits: 512, Cores: 2, MaxLanes: 64} }

// Sampled schedules of every workload compute what the kernel computes
// and replay from their JSON trace; every loop nest's outermost loop
// carries an auto-unroll budget drawn by sample_categorical (recorded as
// a reference to the sample, so a mutation changes it).
func TestSampledRulesSchedules(t *testing.T) {
	srcs := map[string]string{"rowsum": rowSumSrc, "conv_hwio": convHWIOOf(8, 32, 5, 7, 1)}
	for name, src := range workloads {
		srcs[name] = src
	}
	for name, src := range propertyExtra {
		srcs[name] = src
	}
	for name, src := range srcs {
		for seed := int64(1); seed <= 6; seed++ {
			s, err := ApplySampledRules(parseFunc(t, src), sampledTarget(), seed)
			require.NoError(t, err, "%s seed %d", name, seed)
			checkSame(t, s)
			data, err := s.Trace().JSON()
			require.NoError(t, err)
			require.Contains(t, string(data), `"key":"`+tir.PragmaAutoUnrollMaxStep+`","value":{"int":"$v`, "%s seed %d", name, seed)
			for _, st := range topLoops(s.Func().Body) {
				_, has := tir.AutoUnrollBudget(st)
				require.True(t, has, "%s seed %d: loop %%%s has no unroll budget\n%s", name, seed, st.Var.Name, printed(s.Func()))
			}
		}
	}
}

// topLoops are the loops not nested in another loop.
func topLoops(s tir.Stmt) []*tir.For {
	var out []*tir.For
	tir.VisitStmt(s, func(st tir.Stmt) bool {
		if f, ok := st.(*tir.For); ok {
			out = append(out, f)
			return false
		}
		return true
	})
	return out
}

// A reduction with little spatial parallelism is rfactored in some
// sketches and not in others; rfactored ones compute partial sums in a
// parallel loop.
func TestSampledRulesRFactor(t *testing.T) {
	with, without := 0, 0
	for seed := int64(1); seed <= 24; seed++ {
		s, err := ApplySampledRules(parseFunc(t, rowSumSrc), sampledTarget(), seed)
		require.NoError(t, err)
		checkSame(t, s)
		out := printed(s.Func())
		if strings.Contains(out, `"sum_rf"`) {
			with++
			require.Contains(t, out, "parallel", out)
		} else {
			without++
		}
	}
	require.Positive(t, with, "no sketch rfactored the reduction")
	require.Positive(t, without, "every sketch rfactored the reduction")

	// A reduction with enough spatial parallelism is never rfactored.
	for seed := int64(1); seed <= 8; seed++ {
		s, err := ApplySampledRules(parseFunc(t, workloads["pool"]), sampledTarget(), seed)
		require.NoError(t, err)
		require.NotContains(t, printed(s.Func()), "_rf\"")
	}
}

// Sampled schedules (rfactored reductions and auto-unroll budgets
// included) compile with targets/cpu and match the interpreter.
func TestSampledRulesCompiled(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles with llc/lld")
	}
	target := CPURules{VectorBits: llvm.HostVectorBits(), Cores: 2, MaxLanes: llvm.MaxVectorLanes, CanVectorize: llvm.CheckVectorizable}
	srcs := map[string]string{"rowsum": rowSumSrc, "softmax": softmaxSrc, "pool": poolSrc, "conv_bias_relu": convBiasReluSrc, "gemm": gemmSrc, "conv_hwio": convHWIOOf(8, 32, 5, 7, 1), "conv_hwio_s2": convHWIOOf(5, 48, 3, 9, 2)}
	var entries []compiledEntry
	for name, src := range srcs {
		for seed := int64(1); seed <= 6; seed++ {
			s, err := ApplySampledRules(parseFunc(t, src), target, seed)
			require.NoError(t, err)
			entries = append(entries, compiledEntry{fmt.Sprintf("sampled_%s_%d", name, seed), src, s})
		}
	}
	compileAndCheck(t, entries)
}

// A convolution with HWIO weights and a short row gets the
// channel-vectorized sketch in some samples and the row-vectorized one in
// others; both compute what the kernel computes.
func TestSampledRulesChannelSketch(t *testing.T) {
	src := convHWIOOf(8, 32, 5, 7, 1)
	channel, row := 0, 0
	for seed := int64(1); seed <= 16; seed++ {
		s, err := ApplySampledRules(parseFunc(t, src), sampledTarget(), seed)
		require.NoError(t, err)
		checkSame(t, s)
		if strings.Contains(s.Trace().String(), "transform_layout") {
			channel++
			require.Regexp(t, `%co_[0-9_]+ = 0 to (16|32) vectorized`, printed(s.Func()))
		} else {
			row++
		}
	}
	require.Positive(t, channel, "no sample used the channel-vectorized sketch")
	require.Positive(t, row, "every sample used the channel-vectorized sketch")
}
