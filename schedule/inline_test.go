package schedule

import (
	"testing"

	"github.com/stretchr/testify/require"
)

var inlineScenarios = []scenario{
	{"compute_inline", "chain", func(t *testing.T, s *Schedule) {
		require.NoError(t, s.ComputeInline(block(t, s, "add")))
	}},
	{"compute_inline pad", "conv_bias_relu", func(t *testing.T, s *Schedule) {
		require.NoError(t, s.ComputeInline(block(t, s, "pad")))
		require.NoError(t, s.ComputeInline(block(t, s, "bias")))
	}},
	{"reverse_compute_inline", "chain", func(t *testing.T, s *Schedule) {
		require.NoError(t, s.ReverseComputeInline(block(t, s, "relu")))
	}},
	{"reverse_compute_inline epilogue chain", "conv_bias_relu", func(t *testing.T, s *Schedule) {
		require.NoError(t, s.ReverseComputeInline(block(t, s, "relu")))
		require.NoError(t, s.ReverseComputeAt(block(t, s, "bias"), mustLoops(t, s, "conv")[2]))
	}},
}

func TestInlineNumerics(t *testing.T) {
	for _, sc := range inlineScenarios {
		t.Run(sc.name, func(t *testing.T) {
			s := New(locWorkload(t, sc.workload))
			sc.apply(t, s)
			checkSame(t, s)
		})
	}
}
