package main

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/targets/npu/isa"
	"github.com/tessera-ml/tessera/targets/npu/sim"
	tir "github.com/tessera-ml/tessera/tensorir"
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
		model, input, ref, config string
		minFraction               float64
	}{
		{"mlp.mlir", "digits28_x.npy", "mlp_logits.npy", "", 1},
		{"lenet5.mlir", "digits_x.npy", "lenet5_logits.npy", "", 1},
		// a second configuration: 2×32×32 matrix unit, larger scratchpads
		{"mlp.mlir", "digits28_x.npy", "mlp_logits.npy", "testdata/npu_large.json", 1},
	}
	for _, c := range cases {
		t.Run(c.model+"/"+filepath.Base(c.config), func(t *testing.T) {
			ex := func(f string) string { return filepath.Join("../../examples", f) }
			dir := t.TempDir()
			common := []string{ex(c.model), "--input", ex(c.input), "--labels", ex("digits_y.npy")}
			cpu := runCLI(t, append([]string{"run"}, common...)...)
			report := filepath.Join(dir, "r.json")
			out := filepath.Join(dir, "y.npy")
			npuArgs := []string{"run", "--target", "npu", "--report", report, "--output", out}
			if c.config != "" {
				npuArgs = append(npuArgs, "--npu-config", c.config)
			}
			npu := runCLI(t, append(npuArgs, common...)...)
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
			wantConfig := "default"
			if c.config != "" {
				wantConfig = "large"
			}
			assert.Equal(t, wantConfig, rep.Config)
			assert.Greater(t, rep.Cycles, int64(0))
			assert.Greater(t, rep.GEMMUtilization, 0.3)
			var sum int64
			for _, k := range rep.Kernels {
				sum += k.Cycles
			}
			assert.Equal(t, rep.Cycles, sum, "kernel cycles add up to the total")
			t.Logf("%s (%s): cycles %d, utilization %.3f, DRAM %d/%d bytes, NPU MAC fraction %.3f, accuracy cpu %.4f npu %.4f",
				c.model, rep.Config, rep.Cycles, rep.GEMMUtilization, rep.DRAMReadBytes, rep.DRAMWriteBytes, rep.NPUMACFraction, ca, na)
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
	// npu-tir: each NPU kernel scheduled in tensor IR, the intrinsic on the
	// scratchpads, with its trace; the functions parse and verify
	tirText := runCLI(t, "compile", model, "--target", "npu", "--emit", "npu-tir")
	assert.Contains(t, tirText, "// kernel @fused_2:")
	assert.Contains(t, tirText, `tessera.tensorized = "npu_gemm_1x16x16_f32_f32"`)
	assert.Contains(t, tirText, `npu.virtual_threads = `)
	assert.Contains(t, tirText, "transform_block_layout(")
	funcs := 0
	for _, part := range strings.Split(tirText, "// kernel @")[1:] {
		start := strings.Index(part, "tir.func @")
		end := strings.Index(part, "// trace:")
		require.True(t, start >= 0 && end > start, "a scheduled function and its trace: %.200s", part)
		m, err := tir.ParseString("npu-tir", part[start:end])
		require.NoError(t, err)
		require.NoError(t, tir.VerifyFunc(m.Funcs[0]))
		funcs++
	}
	assert.Equal(t, 5, funcs, "LeNet-5's five NPU kernels")
	asm := runCLI(t, "compile", model, "--target", "npu", "--emit", "npu-asm")
	assert.Contains(t, asm, "; kernel @fused_2:")
	assert.Contains(t, asm, ".datapath bf16")
	// npu-bin: a tar archive of one program per NPU kernel, each decoding
	// to the program npu-asm printed
	bin := filepath.Join(t.TempDir(), "p.tar")
	runCLI(t, "compile", model, "--target", "npu", "--emit", "npu-bin", "-o", bin)
	f, err := os.Open(bin)
	require.NoError(t, err)
	defer f.Close()
	tr := tar.NewReader(f)
	n := 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		data, err := io.ReadAll(tr)
		require.NoError(t, err)
		var p isa.Program
		require.NoError(t, p.UnmarshalBinary(data), h.Name)
		assert.Contains(t, asm, "; kernel @"+strings.TrimSuffix(h.Name, ".bin")+":")
		assert.Contains(t, asm, p.String())
		n++
	}
	assert.Equal(t, strings.Count(asm, "; kernel @"), n)
	var errs bytes.Buffer
	code := run([]string{"compile", model, "--target", "npu", "--npu-config", "/nonexistent.json", "--emit", "partition"}, &bytes.Buffer{}, &errs)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs.String(), "nonexistent.json")
}

// TestNPUConvolutions runs convolutions (padding, stride, dilation, a
// fused residual and relu, a 1×1 projection) on the NPU and on the CPU
// with the same random inputs: the outputs agree within the NPU's bf16
// tolerance, and every kernel runs on the NPU.
func TestNPUConvolutions(t *testing.T) {
	for _, model := range []string{"testdata/npu_conv.mlir", "testdata/npu_convs.mlir", "testdata/npu_grouped.mlir"} {
		t.Run(filepath.Base(model), func(t *testing.T) {
			dir := t.TempDir()
			part := runCLI(t, "compile", model, "--target", "npu", "--emit", "partition")
			assert.Contains(t, part, "npu MAC fraction: 1.0000", part)
			c, err := compileForTest(model)
			require.NoError(t, err)
			args := []string{model}
			r := rand.New(rand.NewPCG(3, 4))
			for i, s := range c.inputs {
				x, err := rt.NewTensor(s.DType, s.Shape)
				require.NoError(t, err)
				v, _ := x.Float32s()
				for j := range v {
					v[j] = float32(r.NormFloat64())
				}
				p := filepath.Join(dir, fmt.Sprintf("in%d.npy", i))
				require.NoError(t, rt.WriteNPY(p, x))
				args = append(args, "--input", p)
			}
			outs := func(tag string) []string {
				var a []string
				for i := range c.outputs {
					a = append(a, "--output", filepath.Join(dir, fmt.Sprintf("%s%d.npy", tag, i)))
				}
				return a
			}
			runCLI(t, append(append([]string{"run"}, args...), outs("cpu")...)...)
			runCLI(t, append(append([]string{"run", "--target", "npu"}, args...), outs("npu")...)...)
			for i := range c.outputs {
				cpu, err := rt.ReadNPY(filepath.Join(dir, fmt.Sprintf("cpu%d.npy", i)))
				require.NoError(t, err)
				npu, err := rt.ReadNPY(filepath.Join(dir, fmt.Sprintf("npu%d.npy", i)))
				require.NoError(t, err)
				a, _ := cpu.Float32s()
				b, _ := npu.Float32s()
				e := relativeError(b, a)
				assert.LessOrEqual(t, e, 2e-2, "output %d", i)
				t.Logf("output %d: max|Δ|/max|ref| = %.2e", i, e)
			}
		})
	}
}

// compiled specs of a model's entry, for making inputs.
type modelSpecs struct{ inputs, outputs []rt.TensorSpec }

func compileForTest(model string) (*modelSpecs, error) {
	l, err := loadCompiled(model, compileOptions{target: "cpu"}, 0)
	if err != nil {
		return nil, err
	}
	defer l.Close()
	return &modelSpecs{inputs: l.inputs, outputs: l.outputs}, nil
}

// TestNPUTuneExact tunes a padded 3×3 convolution on the NPU for 30
// trials (random search, seed 1). Simulated cycles are deterministic, so
// the search is: the first record is the default rules' tiling, and the
// best is exactly the tiling found on every run.
func TestNPUTuneExact(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "tune.jsonl")
	runCLI(t, "tune", "testdata/npu_conv.mlir", "--target", "npu", "--trials", "30", "--strategy", "random", "--seed", "1", "--db", db)
	data, err := os.ReadFile(db)
	require.NoError(t, err)
	var best, first float64
	n := 0
	for _, line := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
		var rec struct {
			Target  string    `json:"target"`
			Seconds []float64 `json:"seconds"`
		}
		require.NoError(t, json.Unmarshal(line, &rec))
		require.Regexp(t, `^npu -config=default `, rec.Target)
		require.NotEmpty(t, rec.Seconds)
		for _, s := range rec.Seconds {
			require.Equal(t, rec.Seconds[0], s, "simulated time does not vary between repeats")
		}
		if n == 0 {
			first = rec.Seconds[0]
		}
		if n == 0 || rec.Seconds[0] < best {
			best = rec.Seconds[0]
		}
		n++
	}
	require.Equal(t, 30, n)
	// cycles at the default 1 GHz clock: the default tiling (window layout
	// [14, 2, 1], 2 virtual threads) takes 8684; the best of these 30
	// draws, 0.7% faster, is the window layout [8, 1, 2, 1, 3, 1, 1]: 3
	// threads, N tiles outer, the weights resident (the default takes the
	// fewest DRAM bytes within 2% of the fewest estimated cycles, among
	// the tilings without a resident operand)
	assert.Equal(t, int64(8684), int64(math.Round(first*1e9)), "the default rules' tiling [14, 2, 1, 1]")
	assert.Equal(t, int64(8623), int64(math.Round(best*1e9)), "the best of 30 random tilings")
	// the records schedule the kernel when the model is compiled with them
	out := runCLI(t, "bench", "testdata/npu_conv.mlir", "--target", "npu", "--repeats", "1", "--tuning-db", db)
	assert.Contains(t, out, "@fused_0: 1 calls, 8623 cycles")
	part := runCLI(t, "compile", "testdata/npu_conv.mlir", "--target", "npu", "--emit", "partition", "--tuning-db", db)
	assert.Contains(t, part, "tiling window 8,1,2, 3 threads, n outer, weights resident")
}

// TestNPUUtilization checks the matrix unit's utilization, from the
// report of `tessera bench --target npu --report`, on the default
// configuration: GEMM 512³ at least 80% in both datapaths (bf16, and
// int8: ui8 × i8 into i32), a 64-channel 3×3 convolution at 56×56
// (padding 1, bias, relu) at least 60%.
func TestNPUUtilization(t *testing.T) {
	for model, floor := range map[string]float64{"testdata/npu_gemm512.mlir": 0.80, "testdata/npu_gemm512_int8.mlir": 0.80, "testdata/npu_conv64.mlir": 0.60} {
		report := filepath.Join(t.TempDir(), "r.json")
		runCLI(t, "bench", model, "--target", "npu", "--repeats", "1", "--report", report)
		data, err := os.ReadFile(report)
		require.NoError(t, err)
		var rep sim.Report
		require.NoError(t, json.Unmarshal(data, &rep))
		assert.GreaterOrEqual(t, rep.UsefulUtilization, floor, model)
		t.Logf("%s: %d cycles, utilization %.3f (useful %.3f), DRAM %d read %d written", model, rep.Cycles, rep.GEMMUtilization, rep.UsefulUtilization, rep.DRAMReadBytes, rep.DRAMWriteBytes)
	}
}

// TestNPUReportNeedsNPU: --report is the simulator's; the CPU target
// refuses it with a message, and a bad NPU configuration is named.
func TestNPUReportNeedsNPU(t *testing.T) {
	model := filepath.Join("../../examples", "mlp.mlir")
	in := filepath.Join("../../examples", "digits28_x.npy")
	var out, errs bytes.Buffer
	code := run([]string{"run", model, "--input", in, "--report", filepath.Join(t.TempDir(), "r.json")}, &out, &errs)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs.String(), "--report: only --target npu reports simulator figures")
	bad := filepath.Join(t.TempDir(), "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte(`{"acc_buffer_bytes": 12, "bogus": 1}`), 0o644))
	errs.Reset()
	code = run([]string{"run", model, "--target", "npu", "--npu-config", bad, "--input", in}, &out, &errs)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs.String(), `bad.json: npu config: json: unknown field "bogus"`)
}

// TestNPUInt8Digits: LeNet-5 and the MLP quantized with --integer (the
// digits as calibration data) run on the NPU's int8 datapath with every
// MAC on the matrix unit (the logits' dequantization runs on the host,
// fused apart by fuse{integer-epilogues=true}; TestNPUInt8BitExact checks
// the requantization on the NPU): the logits equal the CPU's, so the
// accuracy does.
func TestNPUInt8Digits(t *testing.T) {
	dir := t.TempDir()
	labels := filepath.Join(examples, "digits_y.npy")
	for _, c := range []struct{ model, input, calib string }{
		{"lenet5.mlir", "digits_x.npy", "digits_calib_x.npy"}, {"mlp.mlir", "digits28_x.npy", "digits28_calib_x.npy"}} {
		integer := filepath.Join(dir, "int_"+c.model)
		_, stderr, code := tessera("quantize", filepath.Join(examples, c.model), "--calibrate", filepath.Join(examples, c.calib), "--integer", "-o", integer)
		require.Equal(t, 0, code, stderr)
		input := filepath.Join(examples, c.input)
		outs := map[string][]float32{}
		accs := map[string]float64{}
		for _, target := range []string{"cpu", "npu"} {
			y := filepath.Join(dir, target+"_"+c.model+".npy")
			out := runCLI(t, "run", integer, "--target", target, "--input", input, "--labels", labels, "--output", y)
			accs[target], _ = accuracyOf(t, out)
			if target == "npu" {
				assert.Contains(t, out, "npu MAC fraction: 1.0000", out)
			}
			yt, err := rt.ReadNPY(y)
			require.NoError(t, err)
			outs[target], _ = yt.Float32s()
		}
		assert.Equal(t, accs["cpu"], accs["npu"], c.model)
		assert.LessOrEqual(t, relativeError(outs["npu"], outs["cpu"]), 1e-6, c.model)
		t.Logf("%s int8: accuracy %.4f on the CPU and the NPU", c.model, accs["npu"])
	}
}
