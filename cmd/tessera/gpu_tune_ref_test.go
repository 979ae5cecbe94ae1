package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/autotune"
	"github.com/tessera-ml/tessera/pipeline"
	"github.com/tessera-ml/tessera/targets"
)

// gemmModel is the graph-dialect text of an n×n×n f32 matmul (the GPU
// check's GEMMs and bench/gpu_check.sh tune's model).
func gemmModel(n int) string {
	ty := fmt.Sprintf("tensor<%dx%dxf32>", n, n)
	return fmt.Sprintf("module {\n  func.func @main(%%a: %s, %%b: %s) -> %s {\n    %%0 = graph.matmul %%a, %%b : (%s, %s) -> %s\n    func.return %%0 : %s\n  }\n}\n", ty, ty, ty, ty, ty, ty, ty)
}

// prepareTuneReference computes the tuner's reference outputs of GEMM n³
// for the CUDA target into DIR/cache/tessera/autotune-ref, where
// bench/gpu_check.sh tune points the tuner (XDG_CACHE_HOME=DIR/cache):
// the tensor IR interpreter takes minutes on GEMM 1024³, time the GPU
// machine then spends tuning instead.
func prepareTuneReference(t *testing.T, dir string, n int) {
	mlir := filepath.Join(t.TempDir(), "gemm.mlir")
	require.NoError(t, os.WriteFile(mlir, []byte(gemmModel(n)), 0o644))
	m, err := loadModel(mlir, nil)
	require.NoError(t, err)
	tg, err := targets.New("cuda", targets.Options{MCPU: *gpuMCPU})
	require.NoError(t, err)
	tasks, err := pipeline.Tasks(m, tg, nil)
	require.NoError(t, err)
	ms, err := autotune.NewMeasurer(autotune.MeasureOptions{Target: tg, RefCache: filepath.Join(dir, "cache", "tessera", "autotune-ref")})
	require.NoError(t, err)
	defer ms.Close()
	for _, task := range tasks {
		require.NoError(t, ms.PrepareReference(task), task.Name)
	}
}

// TestTuneReferenceCache: references prepared for a GEMM are named by the
// kernel text and the input seed only, not by the model file's path, so
// those bench/gpu_check.sh prepares here are found by the tuner on the
// GPU machine, whose copy of the model lives elsewhere.
func TestTuneReferenceCache(t *testing.T) {
	names := func() []string {
		dir := t.TempDir()
		prepareTuneReference(t, dir, 24)
		entries, err := os.ReadDir(filepath.Join(dir, "cache", "tessera", "autotune-ref"))
		require.NoError(t, err)
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		return out
	}
	first := names()
	require.Len(t, first, 1, "one output: %v", first)
	require.Equal(t, first, names())
}
