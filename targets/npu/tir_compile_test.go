package npu

import (
	"math/rand"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/targets/npu/isa"
	"github.com/tessera-ml/tessera/targets/npu/sim"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// TestCompileTIR: kernels as lowering makes them — a dense layer over a
// fused flatten with bias and relu, a 3×3 convolution with bias and relu
// (ResNet-18's layer shape, smaller), convolutions with stride, dilation
// and two images, matmuls with and without tails — compile through tensor IR
// (scheduleTIR: transform_block_layout, reindex, the tiling, the
// epilogue on the accumulator; emitTensorIR) under tilings of both
// orders, one to two threads, per step and resident. Their programs run
// on the generator's DRAM image give the generator's result within 2e-6
// of the largest output (bit for bit without an epilogue: the generator
// starts the accumulator from a bias, which tensor IR adds after the
// sum) in at most 1.2× its cycles.
func TestCompileTIR(t *testing.T) {
	cfg := isa.DefaultConfig()
	kernels := map[string]*tir.PrimFunc{
		"dense":          parseKernel(t, "testdata/dense.tir"),
		"conv_bias_relu": parseKernel(t, "testdata/conv_bias_relu.tir"),
		"matmul":         matmulKernel(t, 40, 72, 40),
		"matmul_whole":   matmulKernel(t, 32, 48, 32), // whole blocks: nothing to pad
		"conv_two":       gemmConvs[0].kernel(),
		"conv_strided":   gemmConvs[1].kernel(),
	}
	for name, f := range kernels {
		g, err := analyzeGEMM(cfg, f)
		require.NoError(t, err, name)
		_, args := bf16Args(f, rand.New(rand.NewSource(31)))
		for _, tl := range []Tiling{{Mt: 4, Nt: 1, Kt: 2, Threads: 2}, {Mt: 3, Nt: 2, Kt: 1, Threads: 1, NOuter: true},
			{Mt: 8, Nt: 1, Kt: 3, Threads: 2, Resident: true}} {
			want, got, genStats, stats := viaTIR(t, cfg, f, g, tl, args)
			if len(g.Epilogue) == 0 {
				require.Equal(t, want, got, "%s, tiling %v", name, tl)
			}
			require.LessOrEqual(t, relDiff(want, got), 2e-6, "%s, tiling %v", name, tl)
			require.LessOrEqual(t, float64(stats.Cycles), 1.2*float64(genStats.Cycles), "%s, tiling %v", name, tl)
		}
	}
}

// TestCompileTIRRefusals: what tensor IR does not express yet is refused
// with the reason, for the generator to compile instead.
func TestCompileTIRRefusals(t *testing.T) {
	cfg := isa.DefaultConfig()
	c := conv{n: 1, c: 16, h: 6, w: 6, co: 16, kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1, pt: 1, pb: 1, pl: 1, pr: 1}
	f := c.kernel()
	g, err := analyzeGEMM(cfg, f)
	require.NoError(t, err)
	_, err = compileTIR(cfg, f, g, Tiling{Mt: 2, Nt: 1, Kt: 1, Threads: 1, Window: true})
	require.ErrorContains(t, err, "the window layout is not expressed in tensor IR yet")
	var refusal *notMappable
	require.ErrorAs(t, err, &refusal)

	m, err := tir.ParseString("dw.tir", c.depthwiseText())
	require.NoError(t, err)
	g, err = analyzeGEMM(cfg, m.Funcs[0])
	require.NoError(t, err)
	_, err = compileTIR(cfg, m.Funcs[0], g, Tiling{Mt: 1, Nt: 1, Kt: 1, Threads: 1})
	require.ErrorContains(t, err, "grouped and depthwise contractions are not expressed in tensor IR yet")

	e := epilogueKernel(t, "0.3")
	g, err = analyzeGEMM(cfg, e)
	require.NoError(t, err)
	_, err = compileTIR(cfg, e, g, Tiling{Mt: 4, Nt: 1, Kt: 2, Threads: 1})
	require.ErrorContains(t, err, "constant 0.3 is not an ALU immediate")
}

// TestCompileTIRLeNet: LeNet-5's NPU kernels (testdata/lenet5_kernels.tir:
// two convolutions and three dense layers, two of them with the batch as
// N and the bias a row operand) compile through tensor IR under their
// default tilings to the generator's results, within 1e-6 of the largest
// output, in at most 1.4× its cycles.
func TestCompileTIRLeNet(t *testing.T) {
	cfg := isa.DefaultConfig()
	data, err := os.ReadFile("testdata/lenet5_kernels.tir")
	require.NoError(t, err)
	m, err := tir.ParseString("lenet5_kernels.tir", string(data))
	require.NoError(t, err)
	require.Len(t, m.Funcs, 5)
	for _, f := range m.Funcs {
		g, err := analyzeGEMM(cfg, f)
		require.NoError(t, err, f.Name)
		tl, ok, err := tilingOf(f, g)
		require.NoError(t, err)
		require.True(t, ok, f.Name)
		_, args := bf16Args(f, rand.New(rand.NewSource(37)))
		want, got, genStats, stats := viaTIR(t, cfg, f, g, tl, args)
		require.LessOrEqual(t, relDiff(want, got), 1e-6, f.Name)
		require.LessOrEqual(t, float64(stats.Cycles), 1.4*float64(genStats.Cycles), f.Name)
		t.Logf("@%s %v: %d cycles, the generator's %d (%.3f×)", f.Name, tl, stats.Cycles, genStats.Cycles, float64(stats.Cycles)/float64(genStats.Cycles))
	}
}

// TestCompileTIRResNet18: every ResNet-18 kernel the NPU runs
// (testdata/resnet18_kernels.tir: 21 convolutions, 1×1 and strided
// included, with bias, residual adds and relu, and the classifier)
// compiles through tensor IR under the generator's best gather-layout
// tiling (the tensor IR does not express the window layout yet) to the
// generator's results, within 1e-6 of the largest output, in at most
// 1.2× its cycles. make test runs it without the race detector (its
// NPU_TIR_TESTS).
func TestCompileTIRResNet18(t *testing.T) {
	cfg := isa.DefaultConfig()
	data, err := os.ReadFile("testdata/resnet18_kernels.tir")
	require.NoError(t, err)
	m, err := tir.ParseString("resnet18_kernels.tir", string(data))
	require.NoError(t, err)
	var total, genTotal int64
	kernels := 0
	for _, f := range m.Funcs {
		g, err := analyzeGEMM(cfg, f)
		if err != nil {
			continue // a host kernel (pooling)
		}
		tl, best := Tiling{}, -1.0
		for _, c := range tilings(cfg, g) {
			if cy, _ := estimate(cfg, g, c, false); !c.Window && !c.Resident && (best < 0 || cy < best) {
				best, tl = cy, c
			}
		}
		_, args := bf16Args(f, rand.New(rand.NewSource(41)))
		want, got, genStats, stats := viaTIR(t, cfg, f, g, tl, args)
		require.LessOrEqual(t, relDiff(want, got), 1e-6, f.Name)
		require.LessOrEqual(t, float64(stats.Cycles), 1.2*float64(genStats.Cycles), f.Name)
		total, genTotal, kernels = total+stats.Cycles, genTotal+genStats.Cycles, kernels+1
	}
	require.Equal(t, 21, kernels)
	t.Logf("ResNet-18's %d NPU kernels on gather tilings: %d cycles through tensor IR, the generator's %d (%.3f×)", kernels, total, genTotal, float64(total)/float64(genTotal))
}

// viaTIR runs kernel f (analysed as g) under tiling tl compiled by the
// generator and through tensor IR (compileTIR) on the same inputs args:
// both outputs and statistics.
func viaTIR(t *testing.T, cfg isa.Config, f *tir.PrimFunc, g *gemmKernel, tl Tiling, args [][]float32) (want, got []float32, gen, st *sim.Stats) {
	t.Helper()
	gp, err := compileGEMM(cfg, g, tl)
	require.NoError(t, err)
	tp, err := compileTIR(cfg, f, g, tl)
	require.NoError(t, err, "@%s, tiling %v", f.Name, tl)
	return runBoth(t, gp, tp.prog, args)
}
