package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/graphir"
)

// coverageDir holds the models of examples/onnx/export_coverage_models.py.
const coverageDir = onnxExamples + "/coverage"

// coverageTolerance bounds max|got − ref| / max|ref| of each float output
// against PyTorch's; integer outputs (indices) must match exactly.
const coverageTolerance = 1e-4

type coverageManifest struct {
	Models map[string]struct {
		File    string         `json:"file"`
		Inputs  []coverageFile `json:"inputs"`
		Outputs []coverageFile `json:"outputs"`
	} `json:"models"`
}

type coverageFile struct {
	File  string `json:"file"`
	DType string `json:"dtype"`
}

// TestCoverageModels imports each model of examples/onnx/coverage (opsets
// 13 and 17) with `tessera import`, runs it with `tessera run` on the
// exported inputs and compares every output with PyTorch's.
func TestCoverageModels(t *testing.T) {
	man, names := readCoverageManifest(t)
	for _, name := range names {
		m := man.Models[name]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if testing.Short() {
				t.Skip("-short skips the coverage models")
			}
			dir := t.TempDir()
			mlir := filepath.Join(dir, "m.mlir")
			_, stderr, code := tessera("import", filepath.Join(coverageDir, m.File), "-o", mlir)
			require.Equal(t, 0, code, stderr)
			args := []string{"run", mlir}
			for _, in := range m.Inputs {
				args = append(args, "--input", filepath.Join(coverageDir, in.File))
			}
			for i := range m.Outputs {
				args = append(args, "--output", filepath.Join(dir, fmt.Sprintf("y%d.npy", i)))
			}
			_, stderr, code = tessera(args...)
			require.Equal(t, 0, code, stderr)
			for i, out := range m.Outputs {
				elem := map[string]graphir.DType{"float32": graphir.F32, "int64": graphir.I64}[out.DType]
				got := readOutput(t, filepath.Join(dir, fmt.Sprintf("y%d.npy", i)), elem)
				want := readOutput(t, filepath.Join(coverageDir, out.File), elem)
				require.Len(t, got, len(want), "output %d", i)
				if elem != graphir.F32 {
					require.Equal(t, want, got, "output %d (%s) must match exactly", i, out.DType)
					continue
				}
				rel := relErr64(got, want)
				t.Logf("%s output %d: max|Δ|/max|ref| = %.2g", name, i, rel)
				require.LessOrEqual(t, rel, coverageTolerance, "output %d", i)
			}
		})
	}
}

// readCoverageManifest reads examples/onnx/coverage/manifest.json and
// returns it with its model names sorted.
func readCoverageManifest(t *testing.T) (coverageManifest, []string) {
	data, err := os.ReadFile(filepath.Join(coverageDir, "manifest.json"))
	require.NoError(t, err, "regenerate with /usr/bin/python3 examples/onnx/export_coverage_models.py")
	var man coverageManifest
	require.NoError(t, json.Unmarshal(data, &man))
	var names []string
	for n := range man.Models {
		names = append(names, n)
	}
	sort.Strings(names)
	return man, names
}

// relErr64 is max|got − ref| / max|ref| (NaN in got: +Inf).
func relErr64(got, ref []float64) float64 {
	maxd, maxr := 0.0, 0.0
	for i := range ref {
		d := math.Abs(got[i] - ref[i])
		if math.IsNaN(d) {
			return math.Inf(1)
		}
		maxd, maxr = math.Max(maxd, d), math.Max(maxr, math.Abs(ref[i]))
	}
	if maxr == 0 {
		return maxd
	}
	return maxd / maxr
}
