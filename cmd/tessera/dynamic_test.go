package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dynamicModels are the models export_models.py writes with dynamic axes
// (its DYNAMIC table), each with its samples' sizes.
var dynamicModels = []struct {
	name    string
	samples int
	short   bool // run under -short
}{
	{"mlp_dynamic", 3, true},
	{"transformer_encoder_layer_dynamic", 3, true},
	{"resnet18_dynamic", 3, false},
}

// TestDynamicModels imports each model exported with dynamic axes once,
// into graph-dialect text whose types keep the symbols, and runs that text
// on every sample (batch 1, 3 and 8; the transformer at batch × sequence
// 1×17, 2×64 and 4×128), each run sizing the symbols from its input file:
// max|Δ| / max|ref| against PyTorch ≤ 1e-3.
func TestDynamicModels(t *testing.T) {
	for _, m := range dynamicModels {
		t.Run(m.name, func(t *testing.T) {
			if testing.Short() && !m.short {
				t.Skip("-short runs the MLP and the transformer layer only")
			}
			model := onnxModel(t, m.name)
			dir := t.TempDir()
			mlir := filepath.Join(dir, m.name+".mlir")
			_, stderr, code := tessera("import", model, "-o", mlir)
			require.Equal(t, 0, code, stderr)
			text, err := os.ReadFile(mlir)
			require.NoError(t, err)
			assert.Contains(t, string(text), `tensor<?x`, "the symbols stay in the types")
			for k := 1; k <= m.samples; k++ {
				in := filepath.Join(onnxExamples, fmt.Sprintf("%s_input_%d.npy", m.name, k))
				out := filepath.Join(dir, fmt.Sprintf("y%d.npy", k))
				_, stderr, code := tessera("run", mlir, "--input", in, "--output", out)
				require.Equal(t, 0, code, stderr)
				got := readF32(t, out)
				want := readF32(t, filepath.Join(onnxExamples, fmt.Sprintf("%s_output_%d.npy", m.name, k)))
				require.Len(t, got, len(want))
				rel := relativeError(got, want)
				t.Logf("%s sample %d: max|Δ|/max|ref| = %.3g", m.name, k, rel)
				assert.LessOrEqual(t, rel, modelTolerance, "sample %d against PyTorch", k)
			}
		})
	}
}
