package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/autotune"
	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/schedule"
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

// cDynamicDriver runs model_main, compiled once with NSYM symbolic
// dimensions (1 or 2, a -D of the C compiler), on every (symbol
// values..., input file, output file) group of its arguments: one object,
// several sizes. The input and output hold in_per and out_per elements
// per unit of the symbols' product.
const cDynamicDriver = `#include <stdio.h>
#include <stdlib.h>
#include "model.h"

int main(int argc, char **argv) {
	long in_per = atol(argv[1]), out_per = atol(argv[2]);
	for (int a = 3; a + NSYM + 1 < argc; a += NSYM + 2) {
		int64_t sym[NSYM];
		long rows = 1;
		for (int i = 0; i < NSYM; i++) {
			sym[i] = atol(argv[a + i]);
			rows *= sym[i];
		}
		const char *in = argv[a + NSYM], *out = argv[a + NSYM + 1];
		float *x = malloc(sizeof(float) * in_per * rows + 1), *y = malloc(sizeof(float) * out_per * rows + 1);
		FILE *f = fopen(in, "rb");
		if (!f || fread(x, sizeof(float), in_per * rows, f) != (size_t)(in_per * rows)) { perror("input"); return 3; }
		fclose(f);
#if NSYM == 1
		int32_t rc = model_main(sym[0], x, y);
#else
		int32_t rc = model_main(sym[0], sym[1], x, y);
#endif
		if (rc != 0) { fprintf(stderr, "model_main returned %d\n", rc); return 4; }
		f = fopen(out, "wb");
		if (!f || fwrite(y, sizeof(float), out_per * rows, f) != (size_t)(out_per * rows)) { perror("output"); return 5; }
		fclose(f);
		free(x);
		free(y);
	}
	return 0;
}
`

// onceModel is an example model exported with dynamic axes, compiled once
// by checkCompiledOnce.
type onceModel struct {
	name string
	// decl is the entry point the header declares.
	decl string
	// symDims are the dimensions of the input that give the symbols'
	// values, in the entry point's order; inPer and outPer the elements
	// of the input and output per unit of the symbols' product.
	symDims       []int
	inPer, outPer int
	short         bool // run under -short
}

// onceModels are the models TestDynamicCompileOnce compiles once.
var onceModels = []onceModel{
	{"mlp_dynamic", "int32_t model_main(int64_t batch, const float *in0, float *out0);", []int{0}, 784, 10, true},
	{"transformer_encoder_layer_dynamic", "int32_t model_main(int64_t batch, int64_t seq, const float *in0, float *out0);", []int{0, 1}, 256, 256, true},
	{"resnet18_dynamic", "int32_t model_main(int64_t batch, const float *in0, float *out0);", []int{0}, 3 * 224 * 224, 1000, false},
}

// TestDynamicCompileOnce compiles the MLP and ResNet-18 exported with a
// dynamic batch, and the transformer layer exported with a dynamic batch
// and sequence length, once, with the symbols left free (int32_t
// model_main(int64_t batch, [int64_t seq,] const float *in0, float
// *out0)), links one C program against each object, and runs it on the
// model's three samples in one process (batch 1, 3, 8; the transformer at
// 1×17, 2×64, 4×128): each result within 1e-4 of PyTorch and within 1e-6
// (relative to the largest value) of the static compile of the same
// sizes (tessera run, which sizes the symbols from its input file).
func TestDynamicCompileOnce(t *testing.T) {
	for _, m := range onceModels {
		t.Run(m.name, func(t *testing.T) {
			if testing.Short() && !m.short {
				t.Skip("-short compiles the MLP and the transformer layer only")
			}
			dir, mlir := importDynamic(t, m.name)
			checkCompiledOnce(t, dir, mlir, m)
		})
	}
}

// importDynamic imports the example model name (exported with dynamic
// axes) into model.mlir in a fresh directory, its symbols kept.
func importDynamic(t *testing.T, name string) (dir, mlir string) {
	t.Helper()
	model := onnxModel(t, name)
	dir = t.TempDir()
	mlir = filepath.Join(dir, "model.mlir")
	_, stderr, code := tessera("import", model, "-o", mlir)
	require.Equal(t, 0, code, stderr)
	return dir, mlir
}

// checkCompiledOnce compiles mlir (the import of m) once with its symbols
// free and the extra compile flags, links cDynamicDriver against the
// object, runs it on the model's three samples in one process and checks
// each result against PyTorch (1e-4) and the static compile of the same
// sizes (1e-6). It returns compile's stderr.
func checkCompiledOnce(t *testing.T, dir, mlir string, m onceModel, flags ...string) string {
	t.Helper()
	_, compileErr, code := tessera(append([]string{"compile", mlir, "-o", filepath.Join(dir, "model.o")}, flags...)...)
	require.Equal(t, 0, code, compileErr)
	hdr, err := os.ReadFile(filepath.Join(dir, "model.h"))
	require.NoError(t, err)
	assert.Contains(t, string(hdr), m.decl)

	require.NoError(t, os.WriteFile(filepath.Join(dir, "driver.c"), []byte(cDynamicDriver), 0o644))
	cc := exec.Command(cCompiler(t), "-O2", fmt.Sprintf("-DNSYM=%d", len(m.symDims)), "-o", "driver", "driver.c", "model.o", "-lm", "-lgomp", "-ldl")
	cc.Dir = dir
	out, err := cc.CombinedOutput()
	require.NoError(t, err, "%s", out)

	args := []string{fmt.Sprint(m.inPer), fmt.Sprint(m.outPer)}
	sizes := map[int][]int64{}
	for k := 1; k <= 3; k++ {
		x, err := rt.ReadNPY(filepath.Join(onnxExamples, fmt.Sprintf("%s_input_%d.npy", m.name, k)))
		require.NoError(t, err)
		for _, d := range m.symDims {
			sizes[k] = append(sizes[k], x.Shape()[d])
			args = append(args, fmt.Sprint(x.Shape()[d]))
		}
		xs, err := x.Float32s()
		require.NoError(t, err)
		in := filepath.Join(dir, fmt.Sprintf("x%d.bin", k))
		writeRawF32(t, in, xs)
		args = append(args, in, filepath.Join(dir, fmt.Sprintf("y%d.bin", k)))
	}
	run := exec.Command(filepath.Join(dir, "driver"), args...)
	out, err = run.CombinedOutput()
	require.NoError(t, err, "%s", out)

	for k := 1; k <= 3; k++ {
		got := readRawF32(t, filepath.Join(dir, fmt.Sprintf("y%d.bin", k)))
		torch := readF32(t, filepath.Join(onnxExamples, fmt.Sprintf("%s_output_%d.npy", m.name, k)))
		require.Len(t, got, len(torch))
		static := filepath.Join(dir, fmt.Sprintf("static%d.npy", k))
		_, stderr, code := tessera("run", mlir, "--input", filepath.Join(onnxExamples, fmt.Sprintf("%s_input_%d.npy", m.name, k)), "--output", static)
		require.Equal(t, 0, code, stderr)
		vsStatic, vsTorch := relativeError(got, readF32(t, static)), relativeError(got, torch)
		t.Logf("%s at %v (one object): max|Δ|/max|ref| vs the static compile %.3g, vs PyTorch %.3g", m.name, sizes[k], vsStatic, vsTorch)
		assert.LessOrEqual(t, vsStatic, 1e-6, "sizes %v against the static compile", sizes[k])
		assert.LessOrEqual(t, vsTorch, 1e-4, "sizes %v against PyTorch", sizes[k])
	}
	return compileErr
}

// TestDynamicTuneOnce tunes the MLP exported with a dynamic batch with the
// batch left free, at --bind-dim batch=4: the records carry the size and
// a symbolic workload key, a rerun resumes them, a job at another size
// keeps its own budget, and the model compiled once with the database
// uses the tuned schedules at every batch (checkCompiledOnce), the next
// best record where the best does not replay.
func TestDynamicTuneOnce(t *testing.T) {
	dir, mlir := importDynamic(t, "mlp_dynamic")
	db := filepath.Join(dir, "tune.jsonl")
	tune := func(size string) (string, string) {
		stdout, stderr, code := tessera("tune", mlir, "--trials", "8", "--batch", "4", "--db", db, "--bind-dim", "batch="+size)
		require.Equal(t, 0, code, stderr)
		return stdout, stderr
	}
	stdout, stderr := tune("4")
	assert.Contains(t, stderr, "note: 2 of 2 tasks have symbolic dimensions: tuned at batch=4 (--bind-dim); their records apply at every size")
	assert.Contains(t, stdout, "8 of 8 trials recorded (8 this run)")
	stdout, _ = tune("4")
	assert.Contains(t, stdout, "8 of 8 trials recorded (0 this run)", "resumed")
	stdout, _ = tune("2")
	assert.Contains(t, stdout, "8 of 8 trials recorded (8 this run)", "another size has its own budget")
	recs, _, err := autotune.ReadRecords(db)
	require.NoError(t, err)
	require.Len(t, recs, 16)
	workloads := map[string]bool{}
	for i, r := range recs {
		want := int64(4)
		if i >= 8 {
			want = 2
		}
		assert.Equal(t, map[string]int64{"batch": want}, r.Bindings, "record %d", i)
		workloads[r.Workload] = true
	}
	assert.Len(t, workloads, 2, "one workload per kernel, whatever the size")

	// The fastest record of the first kernel does not replay: the next
	// one is used.
	d, _, err := autotune.OpenDatabase(db)
	require.NoError(t, err)
	broken := *recs[0]
	broken.Candidate, broken.Seconds = "broken", []float64{1e-12}
	broken.Trace = &schedule.Trace{Func: recs[0].Trace.Func, Insts: []schedule.Instruction{{Kind: "get_block", Attrs: map[string]any{"name": "no_such_block"}, Outputs: []string{"b0"}}}}
	require.NoError(t, d.Append(&broken))
	require.NoError(t, d.Close())

	compileErr := checkCompiledOnce(t, dir, mlir, onceModels[0], "--tuning-db", db)
	assert.Contains(t, compileErr, "2 of 2 kernels use tuned schedules")
	_, stderr, code := tessera("run", mlir, "--tuning-db", db, "--input", filepath.Join(onnxExamples, "mlp_dynamic_input_1.npy"), "--output", filepath.Join(dir, "y.npy"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "0 of 2 kernels use tuned schedules", "run specializes at the input's size: static kernels, other workloads")
	assert.Contains(t, stderr, "apply where the model is compiled with them free")
}

// writeRawF32 writes xs as little-endian float32s.
func writeRawF32(t *testing.T, path string, xs []float32) {
	var raw bytes.Buffer
	require.NoError(t, binary.Write(&raw, binary.LittleEndian, xs))
	require.NoError(t, os.WriteFile(path, raw.Bytes(), 0o644))
}

// readRawF32 reads little-endian float32s.
func readRawF32(t *testing.T, path string) []float32 {
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	xs := make([]float32, len(raw)/4)
	require.NoError(t, binary.Read(bytes.NewReader(raw), binary.LittleEndian, xs))
	return xs
}

// TestDynamicTargetsAndFlags: a target that compiles static shapes only
// refuses a model with symbols left free, with the hints, and specializes
// at --bind-dim saying so, in compile and in tune; a malformed --bind-dim
// is refused.
func TestDynamicTargetsAndFlags(t *testing.T) {
	dir, mlir := importDynamic(t, "mlp_dynamic")
	_, stderr, code := tessera("compile", "--target", "npu", mlir, "-o", filepath.Join(dir, "m.npu"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "error: @main has symbolic dimensions (batch), and target npu compiles static shapes only (the cpu target compiles them once for every size): specialize them with --bind-dim batch=N or --fix-dim batch=N")
	_, stderr, code = tessera("compile", "--target", "npu", mlir, "--bind-dim", "batch=2", "-o", filepath.Join(dir, "m.npu"))
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "note: target npu compiles static shapes: specialized at batch=2 (--bind-dim)")
	_, stderr, code = tessera("tune", "--target", "npu", mlir, "--trials", "1", "--db", filepath.Join(dir, "db.jsonl"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "error: @main has symbolic dimensions (batch), and target npu compiles static shapes only")
	_, stderr, code = tessera("tune", "--target", "npu", mlir, "--bind-dim", "batch=2", "--trials", "2", "--batch", "1", "--db", filepath.Join(dir, "db.jsonl"))
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "note: target npu compiles static shapes: specialized at batch=2 (--bind-dim)")
	assert.NotContains(t, stderr, "tasks have symbolic dimensions")
	_, stderr, code = tessera("compile", mlir, "--bind-dim", "batch=0", "-o", filepath.Join(dir, "m.o"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, `--bind-dim "batch=0": expected NAME=N, N a positive integer`)
}

// TestDynamicRandomInputs: run and bench of a model whose symbols no
// input file sizes refuse it before compiling, with the flags that would
// (random inputs have no size), and --fix-dim sizes them.
func TestDynamicRandomInputs(t *testing.T) {
	_, mlir := importDynamic(t, "mlp_dynamic")
	for _, cmd := range []string{"run", "bench"} {
		_, stderr, code := tessera(cmd, mlir)
		assert.Equal(t, 1, code)
		assert.Contains(t, stderr, ": error: @main has symbolic dimensions (batch) and a run on random inputs (no --input files) needs their sizes: pin them with --fix-dim batch=N")
		assert.NotContains(t, stderr, "panic")
	}
	stdout, stderr, code := tessera("bench", mlir, "--fix-dim", "batch=3", "--repeats", "2", "--min-time", "1ms")
	assert.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "median")
}
