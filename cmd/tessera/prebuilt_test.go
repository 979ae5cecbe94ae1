package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// compileLeNetSO compiles LeNet-5 to <dir>/lenet5.so.
func compileLeNetSO(t *testing.T, dir string) string {
	t.Helper()
	so := filepath.Join(dir, "lenet5.so")
	_, stderr, code := tessera("compile", filepath.Join(examples, "lenet5.mlir"), "-o", so)
	require.Equal(t, 0, code, stderr)
	return so
}

// TestRunFromSharedObject: a .so written by compile runs (and benches)
// without compiling, with the same results, bit for bit, as the .mlir;
// the flags that choose how to compile are refused, one line each.
func TestRunFromSharedObject(t *testing.T) {
	dir := t.TempDir()
	so := compileLeNetSO(t, dir)
	x := filepath.Join(examples, "digits_x.npy")
	fromSO, fromMLIR := filepath.Join(dir, "so.npy"), filepath.Join(dir, "mlir.npy")
	stdout, stderr, code := tessera("run", so, "--input", x, "--output", fromSO, "--labels", filepath.Join(examples, "digits_y.npy"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "wrote "+fromSO+" (tensor<360x10xf32>)")
	assert.Contains(t, stdout, "accuracy: 0.9750 (360 images)")
	_, stderr, code = tessera("run", filepath.Join(examples, "lenet5.mlir"), "--input", x, "--output", fromMLIR)
	require.Equal(t, 0, code, stderr)
	a, err := os.ReadFile(fromSO)
	require.NoError(t, err)
	b, err := os.ReadFile(fromMLIR)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(a, b), "the .so and the .mlir give different outputs")

	stdout, stderr, code = tessera("run", so, "--input", x, "--threads", "1")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "result #0: tensor<360x10xf32> min ")

	stdout, stderr, code = tessera("bench", so, "--warmup", "1", "--repeats", "2", "--min-time", "1ms", "--threads", "1")
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `lenet5.so: median [0-9.]+ ms over [0-9]+ runs \(min [0-9.]+, max [0-9.]+\) on 1 threads`, stdout)

	_, stderr, code = tessera("run", so, "--input", x, "--target", "npu", "--mcpu", "znver4", "--tuning-db", "t.jsonl", "--print-ir-after", "fuse")
	assert.Equal(t, 1, code)
	assert.Equal(t, []string{
		so + ": error: --mcpu applies only when compiling a .mlir or .onnx model; this one is already compiled",
		so + ": error: --print-ir-after applies only when compiling a .mlir or .onnx model; this one is already compiled",
		so + ": error: --target applies only when compiling a .mlir or .onnx model; this one is already compiled",
		so + ": error: --tuning-db applies only when compiling a .mlir or .onnx model; this one is already compiled",
	}, strings.Split(strings.TrimSpace(stderr), "\n"))
	_, stderr, code = tessera("bench", so, "--strict-fp")
	assert.Equal(t, 1, code)
	assert.Equal(t, so+": error: --strict-fp applies only when compiling a .mlir or .onnx model; this one is already compiled\n", stderr)
}

// TestRunSharedObjectErrors: the inputs are checked against the recorded
// specs as for a .mlir model; a file that is not a Tessera model, a
// corrupted signature, another format version or another architecture is
// one "file: error:" line and exit status 1.
func TestRunSharedObjectErrors(t *testing.T) {
	dir := t.TempDir()
	so := compileLeNetSO(t, dir)
	data, err := os.ReadFile(so)
	require.NoError(t, err)
	at := bytes.Index(data, []byte(`{"version":1,`))
	require.GreaterOrEqual(t, at, 0, "the signature is in the .so")
	variant := func(name string, edit func(d []byte)) string {
		d := bytes.Clone(data)
		edit(d)
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, d, 0o755))
		return p
	}
	replace := func(old, new string) func([]byte) {
		return func(d []byte) {
			i := bytes.Index(d[at:], []byte(old))
			require.GreaterOrEqual(t, i, 0, old)
			copy(d[at+i:], new)
		}
	}
	truncated := variant("truncated.so", func(d []byte) { d[at+60] = 0 })
	renamed := variant("renamed.so", replace(`"shape"`, `"shapf"`))
	future := variant("future.so", replace(`"version":1`, `"version":2`))
	arm := variant("arm.so", func(d []byte) { binary.LittleEndian.PutUint16(d[18:], 183) }) // EM_AARCH64
	notELF := filepath.Join(dir, "text.so")
	require.NoError(t, os.WriteFile(notELF, []byte("func.func @main() {\n  func.return\n}\n"), 0o644))
	libm := "/lib/x86_64-linux-gnu/libm.so.6"
	if _, err := os.Stat(libm); err != nil {
		libm = variant("nosig.so", func(d []byte) { copy(d[bytes.LastIndex(d, []byte(".tessera.signature")):], ".tessera.signaturf") })
	}
	digits28 := filepath.Join(examples, "digits28_x.npy")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", libm}, libm + ": error: no Tessera signature (ELF section .tessera.signature): not a model compiled by tessera compile"},
		{[]string{"bench", libm}, libm + ": error: no Tessera signature"},
		{[]string{"run", truncated}, truncated + ": error: corrupted signature: unexpected end of JSON input"},
		{[]string{"run", renamed}, renamed + `: error: corrupted signature: json: unknown field "shapf"`},
		{[]string{"run", future}, future + ": error: signature format version 2, but this tessera reads version 1: recompile the model with this tessera"},
		{[]string{"run", arm}, arm + ": error: built for another architecture (EM_AARCH64); this machine is amd64 (EM_X86_64)"},
		{[]string{"run", notELF}, notELF + ": error: not an ELF shared object: bad magic number"},
		{[]string{"run", filepath.Join(dir, "missing.so")}, filepath.Join(dir, "missing.so") + ": error: cannot read it: no such file or directory"},
		{[]string{"compile", so, "--emit", "tir"}, so + ": error: an already compiled model; tessera run and bench take it, compile and tune need the .mlir or .onnx"},
		{[]string{"run", so}, "the model takes 1 inputs (arg0: tensor<360x1x32x32xf32>), got 0 --input files"},
		{[]string{"run", so, "--input", digits28}, digits28 + " holds tensor<360x1x28x28xf32>, but input #0 of the model is arg0: tensor<360x1x32x32xf32>"},
		{[]string{"bench", so, "--input", digits28, "--input", digits28}, "the model takes 1 inputs (arg0: tensor<360x1x32x32xf32>), got 2 --input files"},
		{[]string{"run", so, "--input", filepath.Join(examples, "digits_x.npy"), "--output", "a.npy", "--output", "b.npy"}, "the model has 1 results, got 2 --output files"},
	} {
		_, stderr, code := tessera(c.args...)
		assert.Equal(t, 1, code, "%v: %s", c.args, stderr)
		assert.Contains(t, stderr, c.want, "%v", c.args)
		assert.Equal(t, 1, strings.Count(stderr, "\n"), "one line: %q", stderr)
	}
}
