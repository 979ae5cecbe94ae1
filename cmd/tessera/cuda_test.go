package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/targets/cuda"
)

// TestCUDATarget: a model compiles to PTX with the default GPU rules (one
// .entry per kernel, thread registers read), and running on the CUDA
// target exits 1 with one line (no GPU runtime here).
func TestCUDATarget(t *testing.T) {
	for _, mcpu := range []string{"", "sm_90"} {
		args := []string{"compile", "../../examples/lenet5.mlir", "--target", "cuda", "--emit", "ptx"}
		if mcpu != "" {
			args = append(args, "--mcpu", mcpu)
		}
		ptx, stderr, code := tessera(args...)
		require.Equal(t, 0, code, stderr)
		want := mcpu
		if want == "" {
			want = cuda.DefaultProcessor
		}
		require.Contains(t, ptx, ".target "+want)
		require.GreaterOrEqual(t, strings.Count(ptx, ".visible .entry fused_"), 5, ptx)
		require.Contains(t, ptx, "%tid.x")
		require.Contains(t, ptx, "%ctaid.x")
	}
	_, stderr, code := tessera("run", "../../examples/mlp.mlir", "--target", "cuda", "--input", "../../examples/digits28_x.npy")
	require.Equal(t, 1, code)
	require.Equal(t, 1, strings.Count(strings.TrimSpace(stderr), "\n")+1, "one line: %q", stderr)
	if !cuda.DriverPresent() {
		require.Contains(t, stderr, "no CUDA driver: libcuda.so.1 not found")
	}
	_, stderr, code = tessera("compile", "../../examples/mlp.mlir", "--target", "cuda", "--mcpu", "sm_99")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `cuda: unknown processor "sm_99"`)
}
