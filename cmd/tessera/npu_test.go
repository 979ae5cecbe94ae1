package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/targets/npu/sim"
)

// runCLI runs tessera with args and returns stdout, failing on a non-zero
// exit.
func runCLI(t *testing.T, args ...string) string {
	t.Helper()
	var out, errs bytes.Buffer
	code := run(args, &out, &errs)
	require.Equal(t, 0, code, "tessera %v: %s", args, errs.String())
	return out.String()
}

var accuracyRE = regexp.MustCompile(`accuracy: ([0-9.]+) \((\d+) images\)`)

func accuracyOf(t *testing.T, out string) (float64, int) {
	t.Helper()
	m := accuracyRE.FindStringSubmatch(out)
	require.NotNil(t, m, out)
	a, _ := strconv.ParseFloat(m[1], 64)
	n, _ := strconv.Atoi(m[2])
	return a, n
}

// TestNPUExamples runs the digit classifiers on the NPU (bf16) and on the
// CPU: the NPU's accuracy is within one image of the CPU's, its logits
// within 2e-2 of PyTorch's relative to their largest magnitude, and the
// report's figures are consistent.
func TestNPUExamples(t *testing.T) {
	cases := []struct {
		model, input, ref string
		minFraction       float64
	}{
		{"mlp.mlir", "digits28_x.npy", "mlp_logits.npy", 1},
		{"lenet5.mlir", "digits_x.npy", "lenet5_logits.npy", 0.5},
	}
	for _, c := range cases {
		t.Run(c.model, func(t *testing.T) {
			ex := func(f string) string { return filepath.Join("../../examples", f) }
			dir := t.TempDir()
			common := []string{ex(c.model), "--input", ex(c.input), "--labels", ex("digits_y.npy")}
			cpu := runCLI(t, append([]string{"run"}, common...)...)
			report := filepath.Join(dir, "r.json")
			out := filepath.Join(dir, "y.npy")
			npu := runCLI(t, append([]string{"run", "--target", "npu", "--report", report, "--output", out}, common...)...)
			ca, n := accuracyOf(t, cpu)
			na, _ := accuracyOf(t, npu)
			assert.LessOrEqual(t, math.Abs(ca-na)*float64(n), 1.0+1e-9, "accuracy cpu %.4f npu %.4f", ca, na)

			got, err := rt.ReadNPY(out)
			require.NoError(t, err)
			ref, err := rt.ReadNPY(ex(c.ref))
			require.NoError(t, err)
			g, _ := got.Float32s()
			r, _ := ref.Float32s()
			assert.LessOrEqual(t, relativeError(g, r), 2e-2)

			data, err := os.ReadFile(report)
			require.NoError(t, err)
			var rep sim.Report
			require.NoError(t, json.Unmarshal(data, &rep))
			assert.GreaterOrEqual(t, rep.NPUMACFraction, c.minFraction)
			assert.Greater(t, rep.Cycles, int64(0))
			assert.Greater(t, rep.GEMMUtilization, 0.3)
			var sum int64
			for _, k := range rep.Kernels {
				sum += k.Cycles
			}
			assert.Equal(t, rep.Cycles, sum, "kernel cycles add up to the total")
			t.Logf("%s: cycles %d, utilization %.3f, DRAM %d/%d bytes, NPU MAC fraction %.3f, accuracy cpu %.4f npu %.4f",
				c.model, rep.Cycles, rep.GEMMUtilization, rep.DRAMReadBytes, rep.DRAMWriteBytes, rep.NPUMACFraction, ca, na)
		})
	}
}

// TestNPUPartitionAndEmit: compile says where each kernel runs, and the
// programs print as assembly that the assembler reads back.
func TestNPUPartitionAndEmit(t *testing.T) {
	model := filepath.Join("../../examples", "lenet5.mlir")
	part := runCLI(t, "compile", model, "--target", "npu", "--emit", "partition")
	assert.Regexp(t, `(?m)^@fused_2: npu \(`, part)
	assert.Regexp(t, `(?m)^@fused_1: host \(`, part)
	assert.Regexp(t, `(?m)^npu MAC fraction: `, part)
	asm := runCLI(t, "compile", model, "--target", "npu", "--emit", "npu-asm")
	assert.Contains(t, asm, "; kernel @fused_2:")
	assert.Contains(t, asm, ".datapath bf16")
	var errs bytes.Buffer
	code := run([]string{"compile", model, "--target", "npu", "--npu-config", "/nonexistent.json", "--emit", "partition"}, &bytes.Buffer{}, &errs)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs.String(), "nonexistent.json")
}
