package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/graphir"
	rt "github.com/tessera-ml/tessera/runtime"
)

const examples = "../../examples"

// tessera runs the CLI in-process and returns stdout, stderr and the exit status.
func tessera(args ...string) (string, string, int) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return out.String(), errb.String(), code
}

func readF32(t *testing.T, path string) []float32 {
	t.Helper()
	tn, err := rt.ReadNPY(path)
	require.NoError(t, err)
	v, err := tn.Float32s()
	require.NoError(t, err)
	return v
}

type pytorchRef struct {
	Models map[string]struct {
		Accuracy float64 `json:"accuracy"`
	} `json:"models"`
}

// pytorchAccuracy reads PyTorch's held-out accuracy of model from the
// committed pytorch_reference.json.
func pytorchAccuracy(t *testing.T, model string) float64 {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(examples, "pytorch_reference.json"))
	require.NoError(t, err)
	var ref pytorchRef
	require.NoError(t, json.Unmarshal(data, &ref))
	m, ok := ref.Models[model]
	require.True(t, ok, "no %s in pytorch_reference.json", model)
	return m.Accuracy
}

func argmaxAccuracy(logits []float32, labels []int64) float64 {
	classes := len(logits) / len(labels)
	right := 0
	for r, l := range labels {
		row := logits[r*classes : (r+1)*classes]
		best := 0
		for j := range row {
			if row[j] > row[best] {
				best = j
			}
		}
		if int64(best) == l {
			right++
		}
	}
	return float64(right) / float64(len(labels))
}

// TestMainJob is the main job: LeNet-5 and the MLP compiled to
// x86-64 and run on the held-out digits match PyTorch (max |Δ| ≤ 1e-4,
// same accuracy).
func TestMainJob(t *testing.T) {
	labelsT, err := rt.ReadNPY(filepath.Join(examples, "digits_y.npy"))
	require.NoError(t, err)
	labels, err := labelsT.Int64s()
	require.NoError(t, err)
	for _, c := range []struct{ model, input, logits string }{
		{"lenet5", "digits_x.npy", "lenet5_logits.npy"},
		{"mlp", "digits28_x.npy", "mlp_logits.npy"},
	} {
		t.Run(c.model, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "y.npy")
			stdout, stderr, code := tessera("run", filepath.Join(examples, c.model+".mlir"),
				"--input", filepath.Join(examples, c.input), "--output", out,
				"--reference", filepath.Join(examples, c.logits), "--labels", filepath.Join(examples, "digits_y.npy"))
			require.Equal(t, 0, code, stderr)
			assert.Contains(t, stdout, "accuracy: ")
			got := readF32(t, out)
			want := readF32(t, filepath.Join(examples, c.logits))
			require.Len(t, got, len(want))
			maxd := 0.0
			for i := range got {
				maxd = math.Max(maxd, math.Abs(float64(got[i])-float64(want[i])))
			}
			assert.LessOrEqual(t, maxd, 1e-4, "max |Δ| against PyTorch")
			assert.Equal(t, pytorchAccuracy(t, c.model), argmaxAccuracy(got, labels))
			t.Logf("%s: max |Δ| = %.3g, accuracy %.4f", c.model, maxd, argmaxAccuracy(got, labels))
		})
	}
}

// cCompiler returns clang-16, else cc.
func cCompiler(t *testing.T) string {
	for _, c := range []string{"clang-16", "cc", "gcc"} {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	t.Fatal("no C compiler: install clang-16 (apt-get install clang-16) or gcc")
	return ""
}

const cDriver = `#include <stdio.h>
#include <stdlib.h>
#include "lenet5.h"

int main(int argc, char **argv) {
	static float x[360 * 1 * 32 * 32], y[360 * 10];
	FILE *f = fopen(argv[1], "rb");
	if (!f || fread(x, sizeof x, 1, f) != 1) { perror("input"); return 3; }
	fclose(f);
	int32_t rc = lenet5_main(x, y);
	if (rc != 0) { fprintf(stderr, "lenet5_main returned %d\n", rc); return 4; }
	f = fopen(argv[2], "wb");
	if (!f || fwrite(y, sizeof y, 1, f) != 1) { perror("output"); return 5; }
	fclose(f);
	return 0;
}
`

// TestCompileObjectLinksIntoC compiles LeNet-5 to an ELF relocatable
// object and a header, links a C program against them and checks its
// logits against PyTorch's.
func TestCompileObjectLinksIntoC(t *testing.T) {
	dir := t.TempDir()
	obj := filepath.Join(dir, "lenet5.o")
	_, stderr, code := tessera("compile", filepath.Join(examples, "lenet5.mlir"), "-o", obj)
	require.Equal(t, 0, code, stderr)
	ef, err := elf.Open(obj)
	require.NoError(t, err)
	assert.Equal(t, elf.ET_REL, ef.Type, "a relocatable object")
	assert.Equal(t, elf.EM_X86_64, ef.Machine)
	syms, err := ef.Symbols()
	require.NoError(t, err)
	found := false
	for _, s := range syms {
		found = found || (s.Name == "lenet5_main" && elf.ST_BIND(s.Info) == elf.STB_GLOBAL)
	}
	assert.True(t, found, "lenet5_main is exported")
	ef.Close()
	hdr, err := os.ReadFile(filepath.Join(dir, "lenet5.h"))
	require.NoError(t, err)
	assert.Contains(t, string(hdr), "int32_t lenet5_main(")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "driver.c"), []byte(cDriver), 0o644))
	exe := filepath.Join(dir, "driver")
	cc := exec.Command(cCompiler(t), "-O2", "-o", exe, "driver.c", "lenet5.o", "-lm", "-lgomp", "-ldl")
	cc.Dir = dir
	out, err := cc.CombinedOutput()
	require.NoError(t, err, "%s", out)

	x := readF32(t, filepath.Join(examples, "digits_x.npy"))
	var raw bytes.Buffer
	require.NoError(t, binary.Write(&raw, binary.LittleEndian, x))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "x.bin"), raw.Bytes(), 0o644))
	runC := exec.Command(exe, "x.bin", "y.bin")
	runC.Dir = dir
	out, err = runC.CombinedOutput()
	require.NoError(t, err, "%s", out)
	yraw, err := os.ReadFile(filepath.Join(dir, "y.bin"))
	require.NoError(t, err)
	y := make([]float32, len(yraw)/4)
	require.NoError(t, binary.Read(bytes.NewReader(yraw), binary.LittleEndian, y))
	want := readF32(t, filepath.Join(examples, "lenet5_logits.npy"))
	require.Len(t, y, len(want))
	for i := range y {
		require.InDelta(t, want[i], y[i], 1e-4, "logit %d", i)
	}
}

// TestEmitLevels checks each --emit level, and that the LLVM IR passes
// opt-16 -passes=verify.
// TestPipelineObservers: --print-ir-after and --timing cover every step of
// the compilation at every level (graph, tensor IR, compiled code), and
// --print-pipeline lists the steps that timing reports between the parse
// and the writing of the object.
func TestPipelineObservers(t *testing.T) {
	model := filepath.Join(examples, "mlp.mlir")
	obj := filepath.Join(t.TempDir(), "mlp.o")
	_, stderr, code := tessera("compile", model, "-o", obj, "--timing",
		"--print-ir-after", "legalize-to-hlo", "--print-ir-after", "default-schedule", "--print-ir-after", "codegen")
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `// -----// IR Dump After legalize-to-hlo //----- //\nmodule \{[^/]*hlo\.dot_general`, stderr)
	assert.Regexp(t, `// -----// IR Dump After default-schedule //----- //\ntir\.func @fused_0[^\n]*tessera\.schedule = "default"`, stderr)
	assert.Contains(t, stderr, "// -----// IR Dump After codegen //----- //\n(compiled code)")
	pipe, _, code := tessera("compile", model, "--print-pipeline")
	require.Equal(t, 0, code)
	items := strings.Split(strings.TrimSpace(pipe), ",")
	require.NotEmpty(t, items)
	report := stderr[strings.Index(stderr, "Pass execution timing report"):]
	at := 0
	// the report also times the phases around the table: the parse
	// first, writing the object (opt, llc, link) last
	items = append(append([]string{"parse"}, items...), "emit obj")
	for _, it := range items {
		name := strings.SplitN(it, "{", 2)[0]
		i := strings.Index(report[at:], "  "+name+"\n")
		require.GreaterOrEqual(t, i, 0, "step %s is missing from the timing report (or out of order):\n%s", name, report)
		at += i + len(name)
	}
	assert.Contains(t, report, "Total")
	assert.Regexp(t, `\n  peak memory: [0-9]+\.[0-9] MB\n`, report)
}

func TestEmitLevels(t *testing.T) {
	model := filepath.Join(examples, "mlp.mlir")
	hlo, stderr, code := tessera("compile", model, "--emit", "hlo")
	require.Equal(t, 0, code, stderr)
	assert.Equal(t, 2, strings.Count(hlo, `"hlo.fusion"`))
	// --mcpu pins the vector width (the packed layout below is for 16 f32
	// lanes), whatever this machine's.
	tir, stderr, code := tessera("compile", model, "--emit", "tir", "--stats", "--mcpu", "x86-64-v4")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, tir, "tir.func @main(")
	assert.Contains(t, stderr, "memory plan: arena ")
	assert.Contains(t, stderr, "schedules: 2 kernels: 2 default rules, 0 tuned, 0 traced, 0 fallback")
	// Both weights and the first bias are read in tile order (the second
	// bias is read row-major): three constants are transposed.
	assert.Contains(t, stderr, "layouts: 3 constant kernel operands stored in the order their loop nests read them (3 constants transposed)")
	assert.Contains(t, tir, "tir.func @fused_0(%in0: buffer<360x1x28x28xf32>, %in1: buffer<13x4x196x16xf32>,")
	kept, stderr, code := tessera("compile", model, "--emit", "tir", "--stats", "--keep-layouts")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "layouts: 0 constant kernel operands")
	assert.Contains(t, kept, "tir.func @fused_0(%in0: buffer<360x1x28x28xf32>, %in1: buffer<200x784xf32>,")
	ll := filepath.Join(t.TempDir(), "mlp.ll")
	_, stderr, code = tessera("compile", model, "--emit", "llvm", "-o", ll)
	require.Equal(t, 0, code, stderr)
	opt, err := exec.LookPath("opt-16")
	require.NoError(t, err, "opt-16 missing: run make test (installs llvm-16)")
	out, err := exec.Command(opt, "-passes=verify", "-disable-output", ll).CombinedOutput()
	require.NoError(t, err, "%s", out)
	asm, stderr, code := tessera("compile", model, "--emit", "asm")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, asm, "mlp_main")
}

func TestCLIErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.mlir")
	require.NoError(t, os.WriteFile(bad, []byte("func.func @main(%a: tensor<2xf32>) -> tensor<3xf32> {\n  %0 = graph.relu %a : tensor<2xf32>\n  func.return %0 : tensor<2xf32>\n}\n"), 0o644))
	noMain := filepath.Join(dir, "nomain.mlir")
	require.NoError(t, os.WriteFile(noMain, []byte("func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n  func.return %a : tensor<2xf32>\n}\n"), 0o644))
	model := filepath.Join(examples, "mlp.mlir")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"compile", bad, "--emit", "hlo"}, bad + ":3:3: error: 'func.return' op has types (tensor<2xf32>)"},
		{[]string{"compile", noMain, "--emit", "hlo"}, "no function @main"},
		{[]string{"compile", filepath.Join(dir, "missing.mlir"), "--emit", "hlo"}, "no such file"},
		{[]string{"compile", model, "--emit", "ptx"}, `--emit must be hlo, tir or one of the cpu target's kinds (obj, so, llvm, asm), got "ptx"`},
		{[]string{"compile", model}, "--emit obj needs -o OUT"},
		{[]string{"compile", model, "--emit", "hlo", "--target", "gpu"}, `--target: unknown target "gpu" (known targets: cpu, cuda, npu)`},
		{[]string{"run", model, "--target", "tpu"}, `--target: unknown target "tpu" (known targets: cpu, cuda, npu)`},
		{[]string{"tune", model, "--target", "vulkan", "--trials", "1", "--db", filepath.Join(dir, "t.jsonl")}, `--target: unknown target "vulkan" (known targets: cpu, cuda, npu)`},
		{[]string{"compile", model, "--emit", "tir", "--print-ir-after", "nosuch"}, "--print-ir-after: unknown step 'nosuch'"},
		{[]string{"run", model, "--input", filepath.Join(examples, "digits_x.npy")}, "but input #0 of the model is"},
		{[]string{"run", model}, "the model takes 1 inputs"},
		{[]string{"run", model, "--input", filepath.Join(dir, "none.npy")}, "none.npy"},
		{[]string{"bogus"}, "unknown command"},
		{[]string{"run", model, "--input", filepath.Join(examples, "digits28_x.npy"), "--threads", "0"}, "--threads must be at least 1, got 0"},
		{[]string{"bench", model, "--threads", "-2"}, "--threads must be at least 1, got -2"},
		{[]string{"tune", model, "--threads", "0", "--trials", "1", "--db", filepath.Join(dir, "t.jsonl")}, "--threads must be at least 1, got 0"},
		{[]string{"tune", model, "--lookahead", "-1", "--trials", "1", "--db", filepath.Join(dir, "t.jsonl")}, "--lookahead must be at least 0, got -1"},
		{[]string{"compile", model, "-o", filepath.Join(dir, "missing", "m.o")}, "-o " + filepath.Join(dir, "missing", "m.o") + ": the folder " + filepath.Join(dir, "missing") + " does not exist"},
	} {
		_, stderr, code := tessera(c.args...)
		assert.Equal(t, 1, code, "%v: %s", c.args, stderr)
		assert.Contains(t, stderr, c.want, "%v", c.args)
	}
}

// opCase is a one-op graph function whose compiled result must match the
// graph interpreter.
type opCase struct {
	name   string
	ins    []string // argument types
	result string
	body   string // the op, producing %0 from %arg0...
}

var opCases = []opCase{
	{"conv2d", []string{"tensor<2x3x9x7xf32>", "tensor<4x3x3x2xf32>", "tensor<4xf32>"}, "tensor<2x4x4x4xf32>",
		`%0 = graph.conv2d %arg0, %arg1, %arg2 {pads = [1, 0, 0, 1], strides = [2, 2]} : (tensor<2x3x9x7xf32>, tensor<4x3x3x2xf32>, tensor<4xf32>) -> tensor<2x4x4x4xf32>`},
	{"conv2d depthwise dilated", []string{"tensor<1x4x10x10xf32>", "tensor<4x1x3x3xf32>"}, "tensor<1x4x6x6xf32>",
		`%0 = graph.conv2d %arg0, %arg1 {dilations = [2, 2], groups = 4} : (tensor<1x4x10x10xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>`},
	{"conv_transpose groups", []string{"tensor<1x4x5x4xf32>", "tensor<4x3x3x3xf32>", "tensor<6xf32>"}, "tensor<1x6x11x9xf32>",
		`%0 = graph.conv_transpose %arg0, %arg1, %arg2 {group = 2, output_padding = [1, 1], pads = [1, 0, 0, 1], strides = [2, 2]} : (tensor<1x4x5x4xf32>, tensor<4x3x3x3xf32>, tensor<6xf32>) -> tensor<1x6x11x9xf32>`},
	{"conv_transpose 3d", []string{"tensor<1x2x3x4x3xf32>", "tensor<2x2x2x3x2xf32>", "tensor<2xf32>"}, "tensor<1x2x5x5x7xf32>",
		`%0 = graph.conv_transpose %arg0, %arg1, %arg2 {pads = [0, 1, 0, 1, 0, 1], strides = [2, 1, 3]} : (tensor<1x2x3x4x3xf32>, tensor<2x2x2x3x2xf32>, tensor<2xf32>) -> tensor<1x2x5x5x7xf32>`},
	{"conv_transpose constant k2 s2", []string{"tensor<2x3x4x5xf32>"}, "tensor<2x2x8x10xf32>",
		`%w = graph.constant {value = dense<[[[[-0.52, 0.09], [-0.26, 0.21]], [[0.25, -0.87], [-0.97, 0.67]]], [[[-0.48, -0.53], [0.99, -0.06]], [[0.67, -0.05], [0.28, -0.7]]], [[[0.27, 0.74], [0.05, 0.48]], [[0.34, -0.87], [0.52, 0.18]]]]> : tensor<3x2x2x2xf32>} : tensor<3x2x2x2xf32>
    %0 = graph.conv_transpose %arg0, %w {strides = [2, 2]} : (tensor<2x3x4x5xf32>, tensor<3x2x2x2xf32>) -> tensor<2x2x8x10xf32>`},
	{"matmul batched", []string{"tensor<3x5x7xf32>", "tensor<7x6xf32>"}, "tensor<3x5x6xf32>",
		`%0 = graph.matmul %arg0, %arg1 : (tensor<3x5x7xf32>, tensor<7x6xf32>) -> tensor<3x5x6xf32>`},
	{"gemm trans", []string{"tensor<9x5xf32>", "tensor<7x9xf32>", "tensor<7xf32>"}, "tensor<5x7xf32>",
		`%0 = graph.gemm %arg0, %arg1, %arg2 {alpha = 0.5 : f32, beta = 2.0 : f32, transA = true, transB = true} : (tensor<9x5xf32>, tensor<7x9xf32>, tensor<7xf32>) -> tensor<5x7xf32>`},
	{"add broadcast", []string{"tensor<4x1x5xf32>", "tensor<3x1xf32>"}, "tensor<4x3x5xf32>",
		`%0 = graph.add %arg0, %arg1 : (tensor<4x1x5xf32>, tensor<3x1xf32>) -> tensor<4x3x5xf32>`},
	{"sub", []string{"tensor<17xf32>", "tensor<17xf32>"}, "tensor<17xf32>", `%0 = graph.sub %arg0, %arg1 : tensor<17xf32>`},
	{"mul rank0", []string{"tensor<3x19xf32>", "tensor<f32>"}, "tensor<3x19xf32>", `%0 = graph.mul %arg0, %arg1 : (tensor<3x19xf32>, tensor<f32>) -> tensor<3x19xf32>`},
	{"div", []string{"tensor<2x33xf32>", "tensor<33xf32>"}, "tensor<2x33xf32>", `%0 = graph.div %arg0, %arg1 : (tensor<2x33xf32>, tensor<33xf32>) -> tensor<2x33xf32>`},
	{"relu", []string{"tensor<5x37xf32>"}, "tensor<5x37xf32>", `%0 = graph.relu %arg0 : tensor<5x37xf32>`},
	{"sigmoid", []string{"tensor<5x37xf32>"}, "tensor<5x37xf32>", `%0 = graph.sigmoid %arg0 : tensor<5x37xf32>`},
	{"tanh", []string{"tensor<3x41xf32>"}, "tensor<3x41xf32>", `%0 = graph.tanh %arg0 : tensor<3x41xf32>`},
	{"max_pool2d ceil", []string{"tensor<2x3x11x9xf32>"}, "tensor<2x3x6x4xf32>",
		`%0 = graph.max_pool2d %arg0 {ceil_mode = true, kernel = [3, 3], pads = [1, 0, 1, 0], strides = [2, 2]} : (tensor<2x3x11x9xf32>) -> tensor<2x3x6x4xf32>`},
	{"avg_pool2d", []string{"tensor<1x2x7x7xf32>"}, "tensor<1x2x4x4xf32>",
		`%0 = graph.avg_pool2d %arg0 {kernel = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x2x7x7xf32>) -> tensor<1x2x4x4xf32>`},
	{"global_avg_pool", []string{"tensor<2x5x6x7xf32>"}, "tensor<2x5x1x1xf32>", `%0 = graph.global_avg_pool %arg0 : (tensor<2x5x6x7xf32>) -> tensor<2x5x1x1xf32>`},
	{"batch_norm", []string{"tensor<2x3x4x5xf32>", "tensor<3xf32>", "tensor<3xf32>", "tensor<3xf32>", "tensor<3xf32>"}, "tensor<2x3x4x5xf32>",
		`%0 = graph.batch_norm %arg0, %arg1, %arg2, %arg3, %arg4 : (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x5xf32>`},
	{"flatten", []string{"tensor<2x3x4x5xf32>"}, "tensor<6x20xf32>", `%0 = graph.flatten %arg0 {axis = 2} : (tensor<2x3x4x5xf32>) -> tensor<6x20xf32>`},
	{"reshape", []string{"tensor<2x3x4xf32>"}, "tensor<4x6xf32>", `%0 = graph.reshape %arg0 {shape = [4, -1]} : (tensor<2x3x4xf32>) -> tensor<4x6xf32>`},
	{"transpose", []string{"tensor<2x3x5xf32>"}, "tensor<5x2x3xf32>", `%0 = graph.transpose %arg0 {perm = [2, 0, 1]} : (tensor<2x3x5xf32>) -> tensor<5x2x3xf32>`},
	{"depth_to_space_crd", []string{"tensor<2x12x3x5xf32>"}, "tensor<2x3x6x10xf32>", `%0 = graph.depth_to_space %arg0 {blocksize = 2, mode = "CRD"} : (tensor<2x12x3x5xf32>) -> tensor<2x3x6x10xf32>`},
	{"space_to_depth", []string{"tensor<1x3x6x9xf32>"}, "tensor<1x27x2x3xf32>", `%0 = graph.space_to_depth %arg0 {blocksize = 3} : (tensor<1x3x6x9xf32>) -> tensor<1x27x2x3xf32>`},
	{"concat", []string{"tensor<2x3xf32>", "tensor<2x5xf32>"}, "tensor<2x8xf32>", `%0 = graph.concat %arg0, %arg1 {axis = -1} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>`},
	{"softmax axis 1", []string{"tensor<3x7x5xf32>"}, "tensor<3x7x5xf32>", `%0 = graph.softmax %arg0 {axis = 1} : tensor<3x7x5xf32>`},
	{"quantize dequantize per axis", []string{"tensor<2x3x4xf32>"}, "tensor<2x3x4xf32>", `%s = graph.constant {value = dense<[0.01, 0.5, 0.02]> : tensor<3xf32>} : tensor<3xf32>
    %z = graph.constant {value = dense<[0, 7, 250]> : tensor<3xui8>} : tensor<3xui8>
    %q = graph.quantize_linear %arg0, %s, %z : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xui8>) -> tensor<2x3x4xui8>
    %0 = graph.dequantize_linear %q, %s, %z : (tensor<2x3x4xui8>, tensor<3xf32>, tensor<3xui8>) -> tensor<2x3x4xf32>`},
	{"constant", []string{"tensor<2x3xf32>"}, "tensor<2x3xf32>", `%c = graph.constant {value = dense<[[1.5, -2.0, 0.25], [3.0, 0.0, -1.0]]> : tensor<2x3xf32>} : tensor<2x3xf32>
    %0 = graph.mul %arg0, %c : tensor<2x3xf32>`},
}

// TestEveryGraphOpCompiledMatchesInterpreter runs each graph op through
// `tessera run` (compiled x86-64 code) and compares with the graph-level
// reference interpreter on random inputs.
func TestEveryGraphOpCompiledMatchesInterpreter(t *testing.T) {
	covered := map[string]bool{}
	for _, c := range opCases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var params []string
			for i, ty := range c.ins {
				params = append(params, fmt.Sprintf("%%arg%d: %s", i, ty))
			}
			src := fmt.Sprintf("func.func @main(%s) -> %s {\n    %s\n    func.return %%0 : %s\n}\n", strings.Join(params, ", "), c.result, c.body, c.result)
			model := filepath.Join(dir, "op.mlir")
			require.NoError(t, os.WriteFile(model, []byte(src), 0o644))
			m, err := graphir.ParseString(model, src)
			require.NoError(t, err)
			require.NoError(t, graphir.Verify(m))
			m.Walk(func(op *graphir.Op) { covered[op.Name] = true })

			r := rand.New(rand.NewPCG(7, uint64(len(c.name))))
			args := []string{"run", model, "--output", filepath.Join(dir, "y.npy")}
			var ins []*graphir.Tensor
			for i, ty := range m.Funcs[0].Type.Inputs {
				tt := ty.(*graphir.TensorType)
				gt, rtT := structInput(t, r, tt)
				if strings.HasPrefix(c.name, "batch_norm") && i == 4 {
					data := make([]float32, len(gt.Data))
					for j := range data {
						data[j] = float32(r.Float64() + 0.1) // variance
						gt.Data[j] = float64(data[j])
					}
					var err error
					rtT, err = rt.FromSlice(tt.Shape, data)
					require.NoError(t, err)
				}
				ins = append(ins, gt)
				p := filepath.Join(dir, fmt.Sprintf("x%d.npy", i))
				require.NoError(t, rt.WriteNPY(p, rtT))
				args = append(args, "--input", p)
			}
			want, err := graphir.Interpret(m.Funcs[0], ins)
			require.NoError(t, err)
			_, stderr, code := tessera(args...)
			require.Equal(t, 0, code, stderr)
			got := readF32(t, filepath.Join(dir, "y.npy"))
			require.Len(t, got, len(want[0].Data))
			for i := range got {
				w := want[0].Data[i]
				require.InDelta(t, w, float64(got[i]), 2e-5*math.Max(1, math.Abs(w)), "element %d", i)
			}
		})
	}
	// Multi-result structural cases (split, topk, the recurrent ops) are
	// compiled by TestEveryStructuralOpCompiledMatchesInterpreter.
	for _, c := range structOpCases {
		m, err := graphir.ParseString("case.mlir", "func.func @main("+structParams(c)+") -> ("+strings.Join(c.results, ", ")+") {\n"+c.body+"\nfunc.return "+structRet(c)+" : "+strings.Join(c.results, ", ")+"\n}\n")
		require.NoError(t, err, c.name)
		m.Walk(func(op *graphir.Op) { covered[op.Name] = true })
	}
	for _, name := range graphir.RegisteredOps() {
		if strings.HasPrefix(name, "graph.") {
			assert.True(t, covered[name], "no compiled test for %s", name)
		}
	}
}

func TestBench(t *testing.T) {
	stdout, stderr, code := tessera("bench", filepath.Join(examples, "mlp.mlir"), "--warmup", "1", "--repeats", "3", "--min-time", "10ms", "--threads", "1")
	require.Equal(t, 0, code, stderr)
	assert.Regexp(t, `mlp.mlir: median [0-9.]+ ms over [0-9]+ runs \(min [0-9.]+, max [0-9.]+\) on 1 threads`, stdout)
	stdout, stderr, code = tessera("bench", filepath.Join(examples, "mlp.mlir"), "--input", filepath.Join(examples, "digits28_x.npy"), "--repeats", "2", "--min-time", "1ms")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "median")
}

// TestTraceReplacesDefaultSchedule replays a schedule trace on the MLP's
// first kernel: the printed kernel shows the trace's loops and the
// compiled model still matches PyTorch.
func TestTraceReplacesDefaultSchedule(t *testing.T) {
	model := filepath.Join(examples, "mlp.mlir")
	trace := filepath.Join("testdata", "mlp_fused_0.json")
	tir, stderr, code := tessera("compile", model, "--emit", "tir", "--trace", trace)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, tir, "tir.for %i1_1 = 0 to 16 vectorized {")
	assert.Contains(t, tir, "where(%i1_0 * 16 + %i1_1 < 200)")
	out := filepath.Join(t.TempDir(), "y.npy")
	_, stderr, code = tessera("run", model, "--trace", trace, "--input", filepath.Join(examples, "digits28_x.npy"), "--output", out)
	require.Equal(t, 0, code, stderr)
	got, want := readF32(t, out), readF32(t, filepath.Join(examples, "mlp_logits.npy"))
	for i := range got {
		require.InDelta(t, want[i], got[i], 1e-4)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"func":"fused_0","insts":[{"kind":"get_block","attrs":{"name":"nope"},"outputs":["b0"]}]}`), 0o644))
	_, stderr, code = tessera("compile", model, "--emit", "tir", "--trace", bad)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "get_block")
	assert.Contains(t, stderr, "nope")
}

// TestRunResults: without --output, run prints a summary of every result;
// some but not all --output files is an error naming the missing results.
func TestRunResults(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "two.mlir")
	require.NoError(t, os.WriteFile(model, []byte(`func.func @main(%a: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = graph.relu %a : tensor<3xf32>
  %1 = graph.neg %a : tensor<3xf32>
  func.return %0, %1 : tensor<3xf32>, tensor<3xf32>
}
`), 0o644))
	x, err := rt.FromSlice([]int64{3}, []float32{-1, 2, 0.5})
	require.NoError(t, err)
	in := filepath.Join(dir, "x.npy")
	require.NoError(t, rt.WriteNPY(in, x))
	out, stderr, code := tessera("run", model, "--input", in)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "result #0: tensor<3xf32> min 0 max 2 mean 0.833333: [0, 2, 0.5]")
	assert.Contains(t, out, "result #1: tensor<3xf32> min -2 max 1 mean -0.5: [1, -2, -0.5]")
	_, stderr, code = tessera("run", model, "--input", in, "--output", filepath.Join(dir, "y.npy"))
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr, "the model has 2 results, got 1 --output files: give one per result (missing: out1: tensor<3xf32>), or none to print a summary of each")
}

// TestONNXModelsCompileDirectly: compile and run take a .onnx file and
// import it as `tessera import` would.
func TestONNXModelsCompileDirectly(t *testing.T) {
	out, stderr, code := tessera("compile", filepath.Join(examples, "onnx", "squeezenet1_1.onnx"), "--emit", "hlo")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, out, "hlo.fusion")
}

// TestTuneWarnsAboutUntunedTasks: a budget that ends before the first
// round reaches every task says which tasks get no trials.
func TestTuneWarnsAboutUntunedTasks(t *testing.T) {
	_, stderr, code := tessera("tune", filepath.Join(examples, "lenet5.mlir"), "--trials", "2", "--batch", "1", "--db", filepath.Join(t.TempDir(), "t.jsonl"))
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stderr, "warning: --trials 2 with --batch 1 reaches 2 of the 7 tasks; these get no trials: fused_2, fused_3, fused_4, fused_5, fused_6 (give --trials 7 or more)")
}
