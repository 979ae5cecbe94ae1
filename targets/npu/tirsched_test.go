package npu

import (
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/schedule"
	"github.com/tessera-ml/tessera/targets"
	"github.com/tessera-ml/tessera/targets/npu/isa"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// tileInTensorIR schedules the matmul kernel mm (C[m, n] = Σ A[m, k] ·
// B[k, n], block "dot") as tiling tl lays it on the NPU (tileBlock).

// tileBlock is tileContraction, required to succeed.
func tileBlock(t *testing.T, cfg isa.Config, s *schedule.Schedule, name string, tl Tiling, x, w tir.DType) tirStages {
	t.Helper()
	st, err := tileContraction(cfg, s, name, tl, x, w)
	require.NoError(t, err)
	return st
}

func tileInTensorIR(t *testing.T, cfg isa.Config, mm *tir.PrimFunc, tl Tiling, x, w tir.DType) (*tir.PrimFunc, tirStages) {
	t.Helper()
	s := schedule.New(mm)
	st := tileBlock(t, cfg, s, "dot", tl, x, w)
	return s.Func(), st
}

// stageRuns is stageRunsOf, required to find the stage.
func stageRuns(t *testing.T, f *tir.PrimFunc, name string) int {
	t.Helper()
	runs := stageRunsOf(f, name)
	require.GreaterOrEqual(t, runs, 0, "stage %q", name)
	return runs
}

// TestTilingInTensorIR: every fifth 2-thread tiling of a matmul with
// tails in M, N and K (blocks padded, tail tiles guarded), in both orders
// and with either operand resident, is expressible in tensor IR with the NPU's scopes and
// GEMM intrinsic (tileInTensorIR). Run by the interpreter, the tensorized
// function — whose intrinsic rounds the operands to bf16 and accumulates
// in f32 in the matrix unit's order — gives what the simulator gives for
// the same tiling, and each cache stage runs as many times as the
// generator emits its LOADs before elision: per step, or per run of
// tiles for a resident operand.
func TestTilingInTensorIR(t *testing.T) {
	cfg := isa.DefaultConfig()
	const m, n, k = 40, 72, 40 // 40 M entries, 5 N blocks, 3 K blocks
	mm := matmulKernel(t, m, n, k)
	g, err := analyzeGEMM(cfg, mm)
	require.NoError(t, err)
	arrays, args := bf16Args(mm, rand.New(rand.NewSource(3)))
	checked := map[[2]bool]int{}
	tails := 0
	for i, tl := range tilings(cfg, g) {
		if tl.Threads != 2 || i%5 != 0 {
			continue
		}
		if 40%tl.Mt != 0 || 5%tl.Nt != 0 || 3%tl.Kt != 0 {
			tails++
		}
		f, st := tileInTensorIR(t, cfg, mm, tl, tir.DF32, tir.DF32)
		in := map[string]*tir.Array{"a": arrays["a"], "b": arrays["b"], "c": tir.NewArray(tir.DF32, m, n)}
		require.NoError(t, tir.Run(f, in))
		gp := runGenerator(t, cfg, g, tl, args)
		for e, want := range in["c"].Floats { // bf16 products are exact in f32: no FMA question
			require.Equal(t, float32(want), args[g.Out][e], "tiling %v: element %d", tl, e)
		}
		gp.emit() // the generator's LOADs, none elided
		loads := map[isa.Memory]int{}
		for _, in := range gp.prog.Insts {
			if in.Op == isa.OpLoad {
				loads[in.Mem]++
			}
		}
		require.Equal(t, loads[isa.MemInp], stageRuns(t, f, "a_pad_npu.inp"), "tiling %v: input LOADs", tl)
		require.Equal(t, loads[isa.MemWgt], stageRuns(t, f, "b_pad_npu.wgt"), "tiling %v: weight LOADs", tl)
		require.Equal(t, len(gp.tiles()), stageRuns(t, f, st.acc), "tiling %v: STOREs", tl)
		checked[[2]bool{tl.NOuter, tl.Resident}]++
	}
	require.Len(t, checked, 4, "both orders, per step and resident: %v", checked)
	require.Positive(t, tails, "tilings with tail tiles")
}

// TestInt8TilingInTensorIR: the int8 datapath's intrinsic (u8 inputs, i8
// weights, i32 accumulator) tensorizes a quantized matmul under tilings
// of both orders and residences, bit-exact with the simulator.
func TestInt8TilingInTensorIR(t *testing.T) {
	cfg := isa.DefaultConfig()
	const m, n, k = 24, 40, 40
	mm := matmulOf(t, m, n, k, "ui8", "i8", "i32")
	g, err := analyzeGEMM(cfg, mm)
	require.NoError(t, err)
	a, b := u8i8Operands(9, m, n, k)
	for _, tl := range []Tiling{{Mt: 8, Nt: 1, Kt: 3, Threads: 2}, {Mt: 4, Nt: 3, Kt: 1, Threads: 2, Resident: true},
		{Mt: 2, Nt: 1, Kt: 1, Threads: 2, NOuter: true}, {Mt: 12, Nt: 1, Kt: 1, Threads: 2, NOuter: true, Resident: true}} {
		f, _ := tileInTensorIR(t, cfg, mm, tl, tir.DUI8, tir.DI8)
		in := map[string]*tir.Array{"a": tir.ArrayFromInt64(tir.DUI8, a, m, k), "b": tir.ArrayFromInt64(tir.DI8, b, k, n), "c": tir.NewArray(tir.DI32, m, n)}
		require.NoError(t, tir.Run(f, in))
		gp, err := compileGEMM(cfg, g, tl)
		require.NoError(t, err)
		got := simulateInt8(t, gp, m, n, k, a, b)
		for e, want := range in["c"].Ints {
			require.Equal(t, want, int64(got[e]), "tiling %v: element %d", tl, e)
		}
	}
}

// TestGEMMIntrinsPerConfig: a target built for another configuration
// registers its matrix unit's intrinsics (once, however many targets).
func TestGEMMIntrinsPerConfig(t *testing.T) {
	large, err := isa.LoadConfig("../../cmd/tessera/testdata/npu_large.json")
	require.NoError(t, err)
	for range 2 {
		_, err = NewTarget(targets.Options{Config: "../../cmd/tessera/testdata/npu_large.json"})
		require.NoError(t, err)
	}
	for _, op := range gemmOperands {
		in := schedule.LookupTensorIntrin(GEMMIntrinName(large, op.x, op.w))
		require.NotNil(t, in, "%s", GEMMIntrinName(large, op.x, op.w))
		shape, _ := in.Desc.Params[0].Buffer.ConstShape()
		require.Equal(t, []int64{2, 32}, shape)
		require.Equal(t, ScopeInp, in.Desc.Params[0].Buffer.Scope)
	}
	require.Equal(t, "npu_gemm_2x32x32_ui8_i8", GEMMIntrinName(large, tir.DUI8, tir.DI8))
}

// gatherMatmul is C[m, n] = Σ_k A[m, k / (h·w), k % (h·w) / w, k % w] ·
// B[k, n]: a dense layer over a flattened c×h×w map, the gather layout's
// case (the generator tabulates A's fused index expressions).
func gatherMatmul(t *testing.T, m, n, c, h, w int) *tir.PrimFunc {
	t.Helper()
	k := c * h * w
	src := fmt.Sprintf(`tir.func @mm(%%a: buffer<%[1]dx%[3]dx%[4]dx%[5]dxf32>, %%b: buffer<%[6]dx%[2]dxf32>, out %%c: buffer<%[1]dx%[2]dxf32>) attributes {tessera.kernel} {
  tir.for %%i0 = 0 to %[1]d {
    tir.for %%i1 = 0 to %[2]d {
      tir.for %%r0 = 0 to %[6]d {
        tir.block "dot"(%%v0 = spatial(0:%[1]d, %%i0), %%v1 = spatial(0:%[2]d, %%i1), %%k0 = reduce(0:%[6]d, %%r0)) reads(%%a[%%v0, 0:%[3]d, 0:%[4]d, 0:%[5]d], %%b[%%k0, %%v1]) writes(%%c[%%v0, %%v1]) {
          tir.init {
            %%c[%%v0, %%v1] = 0.0
          }
          %%c[%%v0, %%v1] = %%c[%%v0, %%v1] + %%a[%%v0, floordiv(%%k0, %[7]d), floordiv(floormod(%%k0, %[7]d), %[5]d), floormod(%%k0, %[5]d)] * %%b[%%k0, %%v1]
        }
      }
    }
  }
}
`, m, n, c, h, w, k, h*w)
	mod, err := tir.ParseString("gather.tir", src)
	require.NoError(t, err)
	return mod.Funcs[0]
}

// TestGatherTilingInTensorIR: a dense layer over a flattened map (the
// gather layout) is tiled like a matmul once reindex has given its
// input the [M][K] form; compute_inline then folds the reindex and
// padding copies into the npu.inp stage, which reads the map through the
// fused index expressions (zero beyond K) as the generator's gather LOADs
// do. Bit-exact with the simulator, one stage run per LOAD.
func TestGatherTilingInTensorIR(t *testing.T) {
	cfg := isa.DefaultConfig()
	const m, n = 20, 40
	mm := gatherMatmul(t, m, n, 5, 2, 4) // K = 40: 3 blocks, the last a tail
	g, err := analyzeGEMM(cfg, mm)
	require.NoError(t, err)
	arrays, args := bf16Args(mm, rand.New(rand.NewSource(5)))
	for _, tl := range []Tiling{{Mt: 4, Nt: 1, Kt: 2, Threads: 2}, {Mt: 20, Nt: 3, Kt: 3, Threads: 1, NOuter: true},
		{Mt: 8, Nt: 2, Kt: 1, Threads: 2, Resident: true}} {
		f, _ := tileInTensorIR(t, cfg, mm, tl, tir.DF32, tir.DF32)
		s := schedule.New(f)
		for _, name := range []string{"a_reindex", "a_reindex_pad"} {
			b, err := s.GetBlock(name)
			require.NoError(t, err)
			require.NoError(t, s.ComputeInline(b))
		}
		f = s.Func()
		require.NoError(t, tir.VerifyFunc(f))
		in := map[string]*tir.Array{"a": arrays["a"], "b": arrays["b"], "c": tir.NewArray(tir.DF32, m, n)}
		require.NoError(t, tir.Run(f, in))
		gp := runGenerator(t, cfg, g, tl, args)
		for e, want := range in["c"].Floats {
			require.Equal(t, float32(want), args[g.Out][e], "tiling %v: element %d", tl, e)
		}
		gp.emit()
		loads := 0
		for _, in := range gp.prog.Insts {
			if in.Op == isa.OpLoad && in.Mem == isa.MemInp {
				loads++
			}
		}
		require.Equal(t, loads, stageRuns(t, f, "a_reindex_pad_npu.inp"), "tiling %v: input LOADs", tl)
	}
}

// gemmConvs are convolutions the tensor-IR tests lay out as implicit
// GEMMs: two images with padding 1, and a strided, dilated one with
// asymmetric padding and a 3×2 kernel.
var gemmConvs = []conv{
	{n: 2, c: 5, h: 6, w: 5, co: 20, kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1, pt: 1, pb: 1, pl: 1, pr: 1},
	{n: 1, c: 3, h: 7, w: 7, co: 18, kh: 3, kw: 2, sh: 2, sw: 1, dh: 1, dw: 2, pt: 1, pb: 0, pl: 0, pr: 1},
}

// TestConvTilingInTensorIR: a convolution (padding, stride, dilation,
// more than one image) on the gather layout is an implicit GEMM in
// tensor IR: transform_block_layout fuses (n, co, oh, ow, ci, kh, kw)
// into (m, n, k), reindex gives the padded input its im2col form, the
// weights [N][K] and the output [M][N], and the matmul's schedule
// follows; the reindex and padding copies inlined, the npu.inp stage
// reads the image through the window's index expressions and guards.
// Bit-exact with the simulator under the same tiling, one stage run per
// input LOAD.
func TestConvTilingInTensorIR(t *testing.T) {
	cfg := isa.DefaultConfig()
	for _, c := range gemmConvs {
		f := c.kernel()
		g, err := analyzeGEMM(cfg, f)
		require.NoError(t, err)
		arrays, args := bf16Args(f, rand.New(rand.NewSource(11)))
		oh, ow := c.out()
		fuse := fmt.Sprintf("(n, co, oh, ow, ci, kh, kw) -> (n*%d + oh*%d + ow, co, ci*%d + kh*%d + kw)", oh*ow, ow, c.kh*c.kw, c.kw)
		for _, tl := range []Tiling{{Mt: 8, Nt: 1, Kt: 2, Threads: 2}, {Mt: 5, Nt: 2, Kt: 1, Threads: 2, NOuter: true, Resident: true},
			{Mt: 16, Nt: 1, Kt: 3, Threads: 1, Resident: true}} {
			s := schedule.New(f)
			b, err := s.GetBlock("convolution")
			require.NoError(t, err)
			require.NoError(t, s.TransformBlockLayout(b, schedule.MustParseIndexMap(fuse)))
			st := tileBlock(t, cfg, s, "convolution", tl, tir.DF32, tir.DF32)
			for _, name := range []string{"x_reindex", "x_reindex_pad"} {
				if cb, err := s.GetBlock(name); err == nil {
					require.NoError(t, s.ComputeInline(cb))
				}
			}
			tf := s.Func()
			require.NoError(t, tir.VerifyFunc(tf))
			in := map[string]*tir.Array{"x": arrays["x"], "w": arrays["w"], "y": tir.NewArray(tir.DF32, int64(c.n), int64(c.co), int64(oh), int64(ow))}
			require.NoError(t, tir.Run(tf, in))
			gp := runGenerator(t, cfg, g, tl, args)
			for e, want := range in["y"].Floats {
				require.Equal(t, float32(want), args[g.Out][e], "%+v tiling %v: element %d", c, tl, e)
			}
			gp.emit()
			loads := 0
			for _, in := range gp.prog.Insts {
				if in.Op == isa.OpLoad && in.Mem == isa.MemInp {
					loads++
				}
			}
			require.Equal(t, loads, stageRuns(t, tf, st.inp), "%+v tiling %v: input LOADs", c, tl)
		}
	}
}

// epilogueKernel is testdata/epilogue.tir with an epilogue whose first
// step is not the add of a loaded operand (that one the generator folds
// into the accumulator's start, which no schedule primitive expresses):
// a constant scale (the text of scale), an M×N residual, an immediate
// and a per-N vector.
func epilogueKernel(t *testing.T, scale string) *tir.PrimFunc {
	t.Helper()
	src, err := os.ReadFile("testdata/epilogue.tir")
	require.NoError(t, err)
	text := strings.Replace(string(src), "min(max((%res[%a, %e] + %c[%a, %e]) * 0.3, 0.0), 6.0) - %b[%e]",
		"max(%c[%a, %e] * "+scale+" + %res[%a, %e], 0.0) - %b[%e]", 1)
	require.NotEqual(t, string(src), text)
	mod, err := tir.ParseString("epilogue.tir", text)
	require.NoError(t, err)
	return mod.Funcs[0]
}

// TestEpilogueInTensorIR: the epilogue is ALU work on the accumulator
// tile, in tensor IR a block computed at the tile loop in npu.acc: the
// contraction tiled as tileBlock does, its output's copies inlined so
// that the epilogue reads the npu.acc tile, reverse_compute_at moves the
// epilogue to the inner tile loop, its loaded operands are cache_read
// into npu.acc there (the per-tile LOADs into the accumulator) and its
// output cache_written into npu.acc and copied out per tile (the
// STORE). Bit-exact with the simulator, one stage run per LOAD and
// STORE.
func TestEpilogueInTensorIR(t *testing.T) {
	cfg := isa.DefaultConfig()
	f := epilogueKernel(t, "0.3")
	g, err := analyzeGEMM(cfg, f)
	require.NoError(t, err)
	var ops []string
	for _, s := range g.Epilogue {
		ops = append(ops, s.Op)
	}
	require.Equal(t, []string{"mul", "add", "max", "sub"}, ops)
	require.False(t, g.initsAccumulator())
	arrays, args := bf16Args(f, rand.New(rand.NewSource(13)))
	for _, tl := range []Tiling{{Mt: 4, Nt: 1, Kt: 2, Threads: 2}, {Mt: 7, Nt: 2, Kt: 3, Threads: 2, NOuter: true},
		{Mt: 19, Nt: 1, Kt: 1, Threads: 1, Resident: true}} {
		s := schedule.New(f)
		stages, out := epilogueSchedule(t, cfg, s, tl)
		tf := s.Func()
		require.NoError(t, tir.VerifyFunc(tf))
		in := map[string]*tir.Array{}
		for k, v := range arrays {
			in[k] = v
		}
		in["out0"] = tir.NewArray(tir.DF32, 19, 21)
		require.NoError(t, tir.Run(tf, in))
		gp := runGenerator(t, cfg, g, tl, args)
		for e, want := range in["out0"].Floats {
			require.Equal(t, float32(want), args[g.Out][e], "tiling %v: element %d", tl, e)
		}
		gp.emit()
		accLoads, stores, started := 0, 0, false
		for _, in := range gp.prog.Insts {
			started = started || in.Op == isa.OpGEMM
			switch {
			case in.Op == isa.OpLoad && in.Mem == isa.MemAcc && started:
				accLoads++
			case in.Op == isa.OpStore:
				stores++
			}
		}
		require.Equal(t, accLoads, stageRuns(t, tf, stages[0])+stageRuns(t, tf, stages[1]), "tiling %v: operand LOADs", tl)
		require.Equal(t, len(gp.tiles()), stageRuns(t, tf, stages[0]), "tiling %v: residual LOADs", tl)
		require.Equal(t, stores, stageRuns(t, tf, out.Name), "tiling %v: STOREs", tl)
	}
}

// epilogueSchedule schedules epilogueKernel's contraction as tileBlock
// does and its epilogue on the accumulator tile (TestEpilogueInTensorIR);
// it returns the residual's and the vector's npu.acc stages and the
// output's copy-out.
func epilogueSchedule(t *testing.T, cfg isa.Config, s *schedule.Schedule, tl Tiling) ([]string, schedule.BlockRV) {
	t.Helper()
	st := tileBlock(t, cfg, s, "mm", tl, tir.DF32, tir.DF32)
	require.Empty(t, st.acc)
	block := func(name string) schedule.BlockRV {
		b, err := s.GetBlock(name)
		require.NoError(t, err)
		return b
	}
	require.NoError(t, s.ComputeInline(block("c_unpad")))
	epi := block("epi")
	require.NoError(t, s.ReverseComputeAt(epi, st.tile))
	var stages []string
	for _, x := range []string{"res", "b"} {
		cb, err := s.CacheRead(epi, readIndex(t, s, epi, x), ScopeAcc)
		require.NoError(t, err)
		require.NoError(t, s.ComputeAt(cb, st.tile))
		stages = append(stages, cb.Name)
	}
	out, err := s.CacheWrite(epi, 0, ScopeAcc)
	require.NoError(t, err)
	require.NoError(t, s.ReverseComputeAt(out, st.tile))
	return stages, out
}

// readIndex is the index of block b's read region of buffer name.
func readIndex(t *testing.T, s *schedule.Schedule, b schedule.BlockRV, name string) int {
	t.Helper()
	r, err := s.FindBlock(b)
	require.NoError(t, err)
	for i, rd := range r.Block.Reads {
		if rd.Buffer.Name == name {
			return i
		}
	}
	require.Failf(t, "no read", "block %s reads no %%%s", b.Name, name)
	return -1
}

// runGenerator compiles g under tiling tl with the generator and runs it
// on args (the output cleared first); the output is left in args.
func runGenerator(t *testing.T, cfg isa.Config, g *gemmKernel, tl Tiling, args [][]float32) *gemmProgram {
	t.Helper()
	gp, err := compileGEMM(cfg, g, tl)
	require.NoError(t, err)
	clear(args[g.Out])
	_, _, err = gp.run(f32Args(args), false)
	require.NoError(t, err)
	return gp
}
