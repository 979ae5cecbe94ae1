package npu

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/schedule"
	"github.com/tessera-ml/tessera/targets/npu/isa"
	"github.com/tessera-ml/tessera/targets/npu/sim"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// gemmImages are the DRAM images of gp's matmul operands (a, b, c) as the
// generator lays them out: the emitter's programs run on the same image.
func gemmImages(gp *gemmProgram) map[string]tirImage {
	c, g := gp.cfg, gp.g
	return map[string]tirImage{
		"a": {Mem: isa.MemInp, DType: g.XType, Base: gp.xOff, Bytes: gp.eInp, Rows: c.Batch, Cols: c.BlockIn, Stride: gp.kb},
		"b": {Mem: isa.MemWgt, DType: g.WType, Base: gp.wOff, Bytes: gp.eWgt, Rows: c.BlockOut, Cols: c.BlockIn, Stride: gp.kb, Swap: true},
		"c": {Mem: isa.MemAcc, DType: g.OutType, Base: gp.outOff, Bytes: gp.eOut, Rows: c.Batch, Cols: c.BlockOut, Stride: gp.nb},
	}
}

// dmas are p's LOADs of operands and STOREs by their DRAM side (memory,
// address, rows, blocks, stride), sorted.
func dmas(p *isa.Program) [][5]uint32 {
	var out [][5]uint32
	for _, in := range p.Insts {
		if in.Op == isa.OpStore || in.Op == isa.OpLoad && (in.Mem == isa.MemInp || in.Mem == isa.MemWgt) {
			out = append(out, [5]uint32{uint32(in.Mem), in.DRAMBase, in.YSize, in.XSize, in.XStride})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		for k := range out[i] {
			if out[i][k] != out[j][k] {
				return out[i][k] < out[j][k]
			}
		}
		return false
	})
	return out
}

// TestEmitFromTensorIR: the program emitted from a matmul scheduled in
// tensor IR (tileInTensorIR, the padding copies inlined into the DMA
// stages, AttrVirtualThreads on the stages and the reset) under every
// seventh tiling — tails in M, N and K, one to four virtual threads, both
// orders, per step and resident — has the generator's DMAs (the same
// LOADs, once both elide the redundant ones, and STOREs of the same DRAM
// image) and, simulated, gives the generator's result bit for bit.
// Without a resident operand (whose next LOAD the generator issues
// early) it takes at most the generator's cycles, within 1%, and exactly
// them for more than 90% of the tilings (the others: the emitter folds
// the micro-ops into a smaller table, whose LOAD is shorter).
func TestEmitFromTensorIR(t *testing.T) {
	cfg := isa.DefaultConfig()
	const m, n, k = 40, 72, 40
	mm := matmulKernel(t, m, n, k)
	g, err := analyzeGEMM(cfg, mm)
	require.NoError(t, err)
	_, args := bf16Args(mm, rand.New(rand.NewSource(17)))
	checked := map[[2]bool]int{}
	var same, perStep int64
	for i, tl := range tilings(cfg, g) {
		if i%7 != 0 {
			continue
		}
		f, _ := tileInTensorIR(t, cfg, mm, tl, tir.DF32, tir.DF32)
		s := schedule.New(f)
		for _, name := range []string{"a_pad", "b_pad"} {
			if b, err := s.GetBlock(name); err == nil {
				require.NoError(t, s.ComputeInline(b))
			}
		}
		gp, err := compileGEMM(cfg, g, tl)
		require.NoError(t, err)
		prog, err := emitTensorIR(cfg, g.DP, s.Func(), gemmImages(gp))
		require.NoError(t, err, "tiling %v", tl)

		want, got, genStats, stats := runBoth(t, gp, prog, args)
		require.Equal(t, want, got, "tiling %v", tl)
		if !tl.Resident { // the generator issues a resident operand's next LOAD early
			// the same cycles, or (a micro-op table folded smaller, its LOAD
			// shorter) a few fewer
			require.LessOrEqual(t, stats.Cycles, genStats.Cycles, "tiling %v", tl)
			require.InEpsilon(t, float64(genStats.Cycles), float64(stats.Cycles), 0.01, "tiling %v", tl)
			same += b2i(stats.Cycles == genStats.Cycles)
			perStep++
		}
		require.Equal(t, dmas(gp.prog), dmas(prog), "tiling %v", tl)
		checked[[2]bool{tl.NOuter, tl.Resident}]++
	}
	require.Len(t, checked, 4, "both orders, per step and resident: %v", checked)
	require.Greater(t, same, perStep*9/10, "tilings in the generator's cycles")
}

// TestEmitEpilogueFromTensorIR: the epilogue scheduled on the
// accumulator tile (epilogueSchedule: a scale by an immediate, an M×N
// residual and a bias vector loaded into npu.acc, relu) is emitted as
// ALU instructions on the accumulator's entries in place, the output's
// copy-out as their STORE. Simulated on the generator's DRAM image, the
// program gives the generator's result bit for bit, with one STORE per
// tile and an ALU instruction per step and tile. A constant that is not
// a bf16 value and a copy outside the scratchpads are refused.
func TestEmitEpilogueFromTensorIR(t *testing.T) {
	cfg := isa.DefaultConfig()
	f := epilogueKernel(t, "0.25")
	g, err := analyzeGEMM(cfg, f)
	require.NoError(t, err)
	_, args := bf16Args(f, rand.New(rand.NewSource(19)))
	for _, tl := range []Tiling{{Mt: 4, Nt: 1, Kt: 2, Threads: 1}, {Mt: 7, Nt: 2, Kt: 3, Threads: 1, NOuter: true},
		{Mt: 19, Nt: 1, Kt: 1, Threads: 1, Resident: true}, {Mt: 2, Nt: 2, Kt: 1, Threads: 1, NOuter: true, Resident: true}} {
		gp, err := compileGEMM(cfg, g, tl)
		require.NoError(t, err)
		prog, err := emitTensorIR(cfg, g.DP, epilogueForEmit(t, cfg, f, tl), epilogueImages(gp))
		require.NoError(t, err, "tiling %v", tl)

		want, got, _, _ := runBoth(t, gp, prog, args)
		require.Equal(t, want, got, "tiling %v", tl)
		ops := map[isa.Opcode]int{}
		for _, in := range prog.Insts {
			ops[in.Op]++
		}
		alus, stores := ops[isa.OpALU], ops[isa.OpStore]
		require.Equal(t, len(gp.tiles()), stores, "tiling %v: STOREs", tl)
		require.Equal(t, 4*len(gp.tiles()), alus, "tiling %v: an ALU instruction per step and tile", tl)
	}
	tl := Tiling{Mt: 4, Nt: 1, Kt: 2, Threads: 1}
	gp, err := compileGEMM(cfg, g, tl)
	require.NoError(t, err)
	_, err = emitTensorIR(cfg, g.DP, epilogueForEmit(t, cfg, epilogueKernel(t, "0.3"), tl), epilogueImages(gp))
	require.ErrorContains(t, err, `block "epi": constant 0.3 is not an ALU immediate (a bf16 value in the bf16 datapath)`)
	s := schedule.New(epilogueKernel(t, "0.25")) // the padding copies left in global memory
	epilogueSchedule(t, cfg, s, tl)
	_, err = emitTensorIR(cfg, g.DP, s.Func(), epilogueImages(gp))
	require.ErrorContains(t, err, `block "w_pad" is not a cache stage, an accumulator reset, a block tensorized with the matrix unit's intrinsic or an epilogue on the accumulator`)
}

// epilogueForEmit is epilogueKernel f scheduled by epilogueSchedule
// under tl, its padding copies inlined into the DMA stages.
func epilogueForEmit(t *testing.T, cfg isa.Config, f *tir.PrimFunc, tl Tiling) *tir.PrimFunc {
	t.Helper()
	s := schedule.New(f)
	epilogueSchedule(t, cfg, s, tl)
	for _, name := range []string{"x_pad", "w_pad"} {
		b, err := s.GetBlock(name)
		require.NoError(t, err)
		require.NoError(t, s.ComputeInline(b))
	}
	return s.Func()
}

// epilogueImages are the DRAM images of epilogueKernel's parameters as
// the generator's program gp lays them out.
func epilogueImages(gp *gemmProgram) map[string]tirImage {
	cfg, g := gp.cfg, gp.g
	return map[string]tirImage{
		"x":    {Mem: isa.MemInp, DType: g.XType, Base: gp.xOff, Bytes: gp.eInp, Rows: cfg.Batch, Cols: cfg.BlockIn, Stride: gp.kb},
		"w":    {Mem: isa.MemWgt, DType: g.WType, Base: gp.wOff, Bytes: gp.eWgt, Rows: cfg.BlockOut, Cols: cfg.BlockIn, Stride: gp.kb, Swap: true},
		"res":  {Mem: isa.MemAcc, DType: g.Epilogue[1].Elem, Base: gp.stepOff[1], Bytes: gp.operandEntry(g.Epilogue[1]), Rows: cfg.Batch, Cols: cfg.BlockOut, Stride: gp.nb},
		"b":    {Mem: isa.MemAcc, DType: g.Epilogue[3].Elem, Base: gp.stepOff[3], Bytes: gp.operandEntry(g.Epilogue[3]), Rows: 1, Cols: cfg.BlockOut, Stride: gp.nb},
		"out0": {Mem: isa.MemAcc, DType: g.OutType, Base: gp.outOff, Bytes: gp.eOut, Rows: cfg.Batch, Cols: cfg.BlockOut, Stride: gp.nb},
	}
}

// viewImages are the DRAM images of gp's contraction f (inputs, weights,
// output) with the generator's gather tables as views: the emitter checks
// each staged element against them.
func viewImages(gp *gemmProgram, f *tir.PrimFunc) map[string]tirImage {
	c, g := gp.cfg, gp.g
	return map[string]tirImage{
		f.Params[g.X].Name(): {Mem: isa.MemInp, DType: g.XType, Base: gp.xOff, Bytes: gp.eInp, Rows: c.Batch, Cols: c.BlockIn, Stride: gp.kb, View: g.XIdx, ViewCols: g.K},
		f.Params[g.W].Name(): {Mem: isa.MemWgt, DType: g.WType, Base: gp.wOff, Bytes: gp.eWgt, Rows: c.BlockOut, Cols: c.BlockIn, Stride: gp.kb, View: g.WIdx, ViewCols: g.K},
		f.Params[g.Out].Name(): {Mem: isa.MemAcc, DType: g.OutType, Base: gp.outOff, Bytes: gp.eOut, Rows: c.Batch, Cols: c.BlockOut, Stride: gp.nb,
			View: g.OutIdx, ViewCols: g.N},
	}
}

// inlineCopies inlines the named blocks that s has (the reindex and
// padding copies a DMA stage reads through).
func inlineCopies(t *testing.T, s *schedule.Schedule, names ...string) {
	t.Helper()
	for _, name := range names {
		if b, err := s.GetBlock(name); err == nil {
			require.NoError(t, s.ComputeInline(b))
		}
	}
}

// checkEmitted runs the program emitted from the scheduled tf and the
// generator's program for the same tiling on the generator's DRAM image
// and requires the same result bit for bit and the same DMAs.
func checkEmitted(t *testing.T, cfg isa.Config, f, tf *tir.PrimFunc, g *gemmKernel, tl Tiling, seed int64) {
	t.Helper()
	gp, err := compileGEMM(cfg, g, tl)
	require.NoError(t, err)
	prog, err := emitTensorIR(cfg, g.DP, tf, viewImages(gp, f))
	require.NoError(t, err, "tiling %v", tl)
	_, args := bf16Args(f, rand.New(rand.NewSource(seed)))
	want, got, _, _ := runBoth(t, gp, prog, args)
	require.Equal(t, want, got, "tiling %v", tl)
	require.Equal(t, dmas(gp.prog), dmas(prog), "tiling %v", tl)
}

// TestEmitGatherFromTensorIR: a dense layer over a flattened map and
// convolutions (padding, stride, dilation, two images) scheduled as
// implicit GEMMs in tensor IR (reindex, transform_block_layout), the
// reindex and padding copies inlined into the DMA stages and the
// output's copies into its STORE, emit the generator's program for the
// gather layout: every staged element is the one the gather tables put
// there, the DMAs are the generator's and the result is bit for bit.
func TestEmitGatherFromTensorIR(t *testing.T) {
	cfg := isa.DefaultConfig()
	dense := gatherMatmul(t, 20, 40, 5, 2, 4)
	g, err := analyzeGEMM(cfg, dense)
	require.NoError(t, err)
	for _, tl := range []Tiling{{Mt: 4, Nt: 1, Kt: 2, Threads: 1}, {Mt: 20, Nt: 3, Kt: 3, Threads: 1, NOuter: true}} {
		tf, _ := tileInTensorIR(t, cfg, dense, tl, tir.DF32, tir.DF32)
		s := schedule.New(tf)
		inlineCopies(t, s, "a_reindex", "a_reindex_pad", "b_pad")
		checkEmitted(t, cfg, dense, s.Func(), g, tl, 23)
	}
	for _, c := range gemmConvs {
		f := c.kernel()
		g, err := analyzeGEMM(cfg, f)
		require.NoError(t, err)
		oh, ow := c.out()
		fuse := schedule.MustParseIndexMap(fmt.Sprintf("(n, co, oh, ow, ci, kh, kw) -> (n*%d + oh*%d + ow, co, ci*%d + kh*%d + kw)", oh*ow, ow, c.kh*c.kw, c.kw))
		for _, tl := range []Tiling{{Mt: 8, Nt: 1, Kt: 2, Threads: 1}, {Mt: 5, Nt: 2, Kt: 1, Threads: 1, NOuter: true, Resident: true}} {
			s := schedule.New(f)
			b, err := s.GetBlock("convolution")
			require.NoError(t, err)
			require.NoError(t, s.TransformBlockLayout(b, fuse))
			st := tileBlock(t, cfg, s, "convolution", tl, tir.DF32, tir.DF32)
			require.NotEmpty(t, st.acc)
			inlineCopies(t, s, "x_reindex", "x_reindex_pad", "w_reindex", "w_reindex_pad")
			checkEmitted(t, cfg, f, s.Func(), g, tl, 29)
		}
	}
}

// runBoth runs the generator's program gp and program prog on gp's DRAM
// image of the same inputs args (prog nil: gp's own program again) and
// returns both outputs and statistics.
func runBoth(t *testing.T, gp *gemmProgram, prog *isa.Program, args [][]float32) (want, got []float32, gen, st *sim.Stats) {
	t.Helper()
	out := gp.g.Out
	clear(args[out])
	gen, _, err := gp.run(f32Args(args), false)
	require.NoError(t, err)
	want = append([]float32(nil), args[out]...)
	dram := make([]byte, gp.dramBytes)
	clear(args[out])
	require.NoError(t, gp.pack(dram, f32Args(args)))
	st, err = sim.Run(gp.cfg, prog, dram)
	require.NoError(t, err)
	gp.unpack(dram, f32Args(args)[out])
	return want, append([]float32(nil), args[out]...), gen, st
}

// relDiff is max |want − got| / max |want|.
func relDiff(want, got []float32) float64 {
	var d, top float64
	for i := range want {
		d = math.Max(d, math.Abs(float64(want[i]-got[i])))
		top = math.Max(top, math.Abs(float64(want[i])))
	}
	return d / top
}
