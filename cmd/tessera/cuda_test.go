package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/targets/cuda"
)

// TestCUDATarget: a model compiles to PTX with the default GPU rules (one
// .entry per kernel, thread registers read, shared tiles and barriers),
// and run, bench and tune on the CUDA target exit 1 with one line before
// compiling (no driver on CI; no GPU runtime yet anywhere), writing
// nothing.
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
		require.Contains(t, ptx, "bar.sync")
		require.Contains(t, ptx, ".shared .align 16")
	}
	db := filepath.Join(t.TempDir(), "t.jsonl")
	for _, args := range [][]string{
		{"run", "../../examples/mlp.mlir", "--target", "cuda", "--input", "../../examples/digits28_x.npy"},
		{"bench", "../../examples/mlp.mlir", "--target", "cuda"},
		{"tune", "../../examples/mlp.mlir", "--target", "cuda", "--trials", "2", "--db", db},
	} {
		_, stderr, code := tessera(args...)
		require.Equal(t, 1, code, args[0])
		require.Equal(t, 1, strings.Count(strings.TrimSpace(stderr), "\n")+1, "%s: one line: %q", args[0], stderr)
		if !cuda.DriverPresent() {
			require.Equal(t, "no CUDA driver: libcuda.so.1 not found", strings.TrimSpace(stderr), args[0])
		}
	}
	require.NoFileExists(t, db, "tune wrote a database before failing")
	_, stderr, code := tessera("compile", "../../examples/mlp.mlir", "--target", "cuda", "--mcpu", "sm_99")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `cuda: unknown processor "sm_99"`)
}
