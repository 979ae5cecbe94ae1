package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/pipeline"
	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/targets/cuda"
	tir "github.com/tessera-ml/tessera/tensorir"
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

	// -o X.o: the C-ABI object (targets/cuda TestCABIObject runs one) and
	// its header, named after the file.
	obj := filepath.Join(t.TempDir(), "digits.o")
	_, stderr, code = tessera("compile", "../../examples/mlp_small.mlir", "--target", "cuda", "-o", obj)
	require.Equal(t, 0, code, stderr)
	header, err := os.ReadFile(strings.TrimSuffix(obj, ".o") + ".h")
	require.NoError(t, err)
	require.Contains(t, string(header), "int32_t digits_main(const float *in0, float *out0);")
	require.Contains(t, string(header), "int32_t digits_main_device(uint64_t in0, uint64_t out0, void *stream);")
	elf, err := os.ReadFile(obj)
	require.NoError(t, err)
	require.Equal(t, "\x7fELF", string(elf[:4]))
}

// TestCUDARecurrence: a model with recurrence kernels (two bidirectional
// GRU layers: four scans) compiles for the CUDA target, each scan run by one
// thread under unit blockIdx/threadIdx loops with serial loops inside, and
// the whole GPU-scheduled tensor IR module, run by the interpreter,
// matches PyTorch's output.
func TestCUDARecurrence(t *testing.T) {
	if testing.Short() {
		t.Skip("interprets a GPU-scheduled model")
	}
	o := compileOptions{target: "cuda"}
	tg, err := o.newTarget()
	require.NoError(t, err)
	c, err := compileModel(filepath.Join(coverageDir, "bigru_opset17.onnx"), o, tg, pipeline.Artifact)
	require.NoError(t, err)
	defer c.release()
	m := c.ir.TIR
	scans := 0
	for _, f := range m.Funcs {
		if _, rec := f.Attrs[tir.AttrRecurrence]; !rec {
			continue
		}
		scans++
		text := tir.PrintFunc(f, tir.PrintOptions{})
		require.Contains(t, text, `thread_binding("blockIdx.x")`)
		require.Contains(t, text, `thread_binding("threadIdx.x")`)
		require.NotContains(t, text, "vectorized", "the scan's loops run serially in its thread")
	}
	require.Equal(t, 4, scans)
	ptx, err := c.ir.Artifact.Emit("ptx", "")
	require.NoError(t, err)
	require.Contains(t, string(ptx), ".entry")

	x, err := rt.ReadNPY(filepath.Join(coverageDir, "bigru_input0.npy"))
	require.NoError(t, err)
	main := m.Func("main")
	args := tir.Args{Arrays: map[string]*tir.Array{}}
	for i, p := range main.Params {
		shape, ok := p.Buffer.ConstShape()
		require.True(t, ok)
		a := tir.NewArray(p.Buffer.DType, shape...)
		if i == 0 {
			copy(a.Floats, x.Float64Values())
		}
		args.Arrays[p.Buffer.Name] = a
	}
	require.NoError(t, tir.RunModule(m, "main", args))
	for i := 0; i < 2; i++ {
		want, err := rt.ReadNPY(filepath.Join(coverageDir, fmt.Sprintf("bigru_output%d.npy", i)))
		require.NoError(t, err)
		got := args.Arrays[main.Params[1+i].Buffer.Name].Floats
		require.LessOrEqual(t, relErr64(got, want.Float64Values()), coverageTolerance, "output %d", i)
	}
}
