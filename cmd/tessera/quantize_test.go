package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
	rt "github.com/tessera-ml/tessera/runtime"
)

// digitsAccuracy runs a model on the held-out digits and returns the
// printed accuracy.
func digitsAccuracy(t *testing.T, model, input string) float64 {
	t.Helper()
	out, stderr, code := tessera("run", model, "--input", input, "--labels", filepath.Join(examples, "digits_y.npy"))
	require.Equal(t, 0, code, stderr)
	a, _ := accuracyOf(t, out)
	return a
}

// TestQuantizeDigits: LeNet-5 and the MLP quantized post-training (360
// training images as calibration data, written by
// examples/quantize_digits.py) keep their held-out accuracy within half a
// point of f32 with every calibration method, and the output is QDQ text
// whose weights are int8 constants.
func TestQuantizeDigits(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ model, input, calib string }{{"lenet5.mlir", "digits_x.npy", "digits_calib_x.npy"}, {"mlp.mlir", "digits28_x.npy", "digits28_calib_x.npy"}} {
		model, input := filepath.Join(examples, c.model), filepath.Join(examples, c.input)
		f32 := digitsAccuracy(t, model, input)
		for _, run := range []struct{ method, on string }{{"minmax", "cpu"}, {"minmax", "interpreter"}, {"percentile", "cpu"}, {"entropy", "cpu"}} {
			method := run.method
			out := filepath.Join(dir, method+"_"+run.on+"_"+c.model)
			_, stderr, code := tessera("quantize", model, "--calibrate", filepath.Join(examples, c.calib), "--method", method, "--calibrate-on", run.on, "-o", out)
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, stderr, "("+method+" calibration over 1 batches on the "+run.on+")")
			text, err := os.ReadFile(out)
			require.NoError(t, err)
			assert.Contains(t, string(text), "graph.quantize_linear")
			assert.Regexp(t, `graph.dequantize_linear %[0-9]+, %[0-9]+, %[0-9]+ \{axis = [01]\} : \(tensor<[0-9x]+xi8>`, string(text))
			int8 := digitsAccuracy(t, out, input)
			t.Logf("%s %s on the %s: f32 %.4f, int8 %.4f", c.model, method, run.on, f32, int8)
			assert.InDelta(t, f32, int8, 0.005, "%s %s", c.model, method)
		}
	}
}

// TestQuantizeErrors: bad calibration data is one clear line naming the
// argument, and nothing is written.
func TestQuantizeErrors(t *testing.T) {
	dir := t.TempDir()
	lenet := filepath.Join(examples, "lenet5.mlir")
	digits28 := filepath.Join(examples, "digits28_x.npy")
	ints, err := rt.FromSlice([]int64{360, 1, 32, 32}, make([]int32, 360*32*32))
	require.NoError(t, err)
	intPath := filepath.Join(dir, "ints.npy")
	require.NoError(t, rt.WriteNPY(intPath, ints))
	out := filepath.Join(dir, "q.mlir")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"quantize", lenet}, "--calibrate: give at least one calibration batch"},
		{[]string{"quantize", lenet, "--calibrate", digits28}, "--calibrate " + digits28 + ": input #0 is tensor<360x1x32x32xf32>, the calibration data is tensor<360x1x28x28xf32>"},
		{[]string{"quantize", lenet, "--calibrate", intPath}, "the calibration data is tensor<360x1x32x32xi32>"},
		{[]string{"quantize", lenet, "--calibrate", filepath.Join(dir, "missing.npy")}, "--calibrate " + filepath.Join(dir, "missing.npy") + ": "},
		{[]string{"quantize", lenet, "--calibrate", digits28 + "," + digits28}, "the model has 1 inputs, the batch gives 2"},
		{[]string{"quantize", lenet, "--calibrate", filepath.Join(examples, "digits_x.npy"), "--method", "kl"}, "calibration: unknown calibration method 'kl'"},
		{[]string{"quantize", lenet, "--calibrate", filepath.Join(examples, "digits_x.npy"), "--calibrate-on", "gpu"}, `--calibrate-on "gpu": expected cpu or interpreter`},
	} {
		_, stderr, code := tessera(append(c.args, "-o", out)...)
		assert.Equal(t, 1, code, "%v: %s", c.args, stderr)
		assert.Contains(t, stderr, c.want, "%v", c.args)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
		_, err := os.Stat(out)
		assert.True(t, os.IsNotExist(err), "%v: no output on error", c.args)
	}
}

// TestQuantizeIntegerDigits: --integer writes the quantized contractions
// as integer kernels — requantized (graph.requantize) where their result
// is quantized again, dequantized in place where a float consumer reads
// it (the logits) — and compile --fold-qdq does the same to the QDQ
// text; both keep the QDQ model's held-out accuracy within half a point.
func TestQuantizeIntegerDigits(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		model, input, calib string
		folded, requantized int
	}{{"lenet5.mlir", "digits_x.npy", "digits_calib_x.npy", 5, 4}, {"mlp.mlir", "digits28_x.npy", "digits28_calib_x.npy", 2, 1}} {
		model, input := filepath.Join(examples, c.model), filepath.Join(examples, c.input)
		qdq, integer := filepath.Join(dir, "qdq_"+c.model), filepath.Join(dir, "int_"+c.model)
		_, stderr, code := tessera("quantize", model, "--calibrate", filepath.Join(examples, c.calib), "-o", qdq)
		require.Equal(t, 0, code, stderr)
		_, stderr, code = tessera("quantize", model, "--calibrate", filepath.Join(examples, c.calib), "--integer", "-o", integer)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, stderr, fmt.Sprintf("; %d contractions and residual adds as integer kernels)", c.folded))
		text, err := os.ReadFile(integer)
		require.NoError(t, err)
		assert.Equal(t, c.requantized, strings.Count(string(text), "graph.requantize "), "%s", c.model)
		want := digitsAccuracy(t, qdq, input)
		assert.InDelta(t, want, digitsAccuracy(t, integer, input), 0.005, c.model)
		out, stderr, code := tessera("run", qdq, "--fold-qdq", "--input", input, "--labels", filepath.Join(examples, "digits_y.npy"))
		require.Equal(t, 0, code, stderr)
		folded, _ := accuracyOf(t, out)
		assert.InDelta(t, want, folded, 0.005, c.model+" --fold-qdq")
	}
}

// TestQuantizeReduceRange: --reduce-range (PyTorch fbgemm's
// reduce_range) quantizes LeNet-5's activations to 7 bits — every
// graph.quantize_linear carries max = 127 and a zero point of at most
// 127 — and with --integer every graph.requantize keeps max ≤ 127; both
// stay within a point of the f32 model's held-out accuracy.
func TestQuantizeReduceRange(t *testing.T) {
	dir := t.TempDir()
	model, input := filepath.Join(examples, "lenet5.mlir"), filepath.Join(examples, "digits_x.npy")
	f32 := digitsAccuracy(t, model, input)
	for _, integer := range []bool{false, true} {
		out := filepath.Join(dir, fmt.Sprintf("reduced_%v.mlir", integer))
		args := []string{"quantize", model, "--calibrate", filepath.Join(examples, "digits_calib_x.npy"), "--reduce-range", "-o", out}
		if integer {
			args = append(args, "--integer")
		}
		_, stderr, code := tessera(args...)
		require.Equal(t, 0, code, stderr)
		assert.Contains(t, stderr, "; 7-bit activations")
		text, err := os.ReadFile(out)
		require.NoError(t, err)
		assert.Contains(t, string(text), "max = 127")
		m, err := graphir.ParseString(out, string(text))
		require.NoError(t, err)
		quantizes, requantizes := 0, 0
		m.Lookup("main").Walk(func(op *graphir.Op) {
			switch op.Name {
			case graph.QuantizeLinearOp:
				quantizes++
				hi, err := op.Int("max")
				require.NoError(t, err)
				assert.Equal(t, int64(127), hi, "%s", op.Loc)
				zp := graph.ConstantOf(op.Operand(2))
				require.NotNil(t, zp)
				assert.LessOrEqual(t, zp.Values()[0], 127.0, "%s", op.Loc)
			case graph.RequantizeOp:
				requantizes++
				hi, err := op.Int("max")
				require.NoError(t, err)
				assert.LessOrEqual(t, hi, int64(127), "%s", op.Loc)
				assert.NotNil(t, op.Attr("max"), "%s: bounded explicitly", op.Loc)
			}
		})
		assert.Positive(t, quantizes)
		if integer {
			assert.Equal(t, 4, requantizes, "as without --reduce-range (TestQuantizeIntegerDigits)")
		}
		int7 := digitsAccuracy(t, out, input)
		t.Logf("LeNet-5 --reduce-range (integer %v): f32 %.4f, quantized %.4f", integer, f32, int7)
		assert.InDelta(t, f32, int7, 0.01)
	}
}
