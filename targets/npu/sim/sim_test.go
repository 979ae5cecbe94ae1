package sim

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/targets/npu/isa"
)

func TestMissingTokenNamesBothInstructions(t *testing.T) {
	cfg := isa.DefaultConfig()
	g := gemmShape{M: 64, N: 96, K: 64, Mt: 32, Nt: 48, Kt: 32}
	for _, drop := range []int{0, 3} {
		dram := make([]byte, g.layout().size)
		fillGEMM(cfg, g, dram, rand.New(rand.NewSource(1)))
		_, err := Run(cfg, gemmProgram(cfg, g, drop), dram)
		var se *Error
		require.True(t, errors.As(err, &se), "drop %d: %v", drop, err)
		assert.Equal(t, "gemm", se.Name)
		assert.Equal(t, "load.inp", se.OtherName)
		assert.Contains(t, se.Error(), "missing dependency")
		assert.Regexp(t, `^instruction \d+ \(gemm\): reads inp entry \d+, written by the other instruction .* \[instruction \d+ \(load.inp\)\]$`, se.Error())
	}
}

func TestWriteAfterReadRace(t *testing.T) {
	// The load module overwrites an input entry the GEMM reads, without
	// waiting for the compute module.
	cfg := isa.DefaultConfig()
	p := &isa.Program{Datapath: isa.DPInt8, Uops: []isa.Uop{{}}}
	ld := func(deps isa.Deps) isa.Inst {
		return isa.Inst{Op: isa.OpLoad, Mem: isa.MemInp, DType: isa.DTInt8, YSize: 1, XSize: 1, XStride: 1, Deps: deps}
	}
	p.Insts = []isa.Inst{
		{Op: isa.OpLoad, Mem: isa.MemUop, DType: isa.DTInt8, YSize: 1, XSize: 1, XStride: 1},
		{Op: isa.OpLoad, Mem: isa.MemWgt, DType: isa.DTInt8, YSize: 1, XSize: 1, XStride: 1},
		ld(isa.Deps{PushNext: true}),
		{Op: isa.OpGEMM, Reset: true, UopBegin: 0, UopEnd: 1, IterOut: 1, IterIn: 1},
		{Op: isa.OpGEMM, UopBegin: 0, UopEnd: 1, IterOut: 1, IterIn: 1, Deps: isa.Deps{PopPrev: true}},
		ld(isa.Deps{}),
		{Op: isa.OpFinish},
	}
	_, err := Run(cfg, p, make([]byte, 4096))
	require.Error(t, err)
	// The second load may run before or after the GEMM in simulated time;
	// either way the pair is named.
	assert.Regexp(t, `instruction (4 \(gemm\)|5 \(load.inp\)).*\[instruction (5 \(load.inp\)|4 \(gemm\))\]`, err.Error())
}

func TestDeadlockIsReported(t *testing.T) {
	cfg := isa.DefaultConfig()
	p := &isa.Program{Datapath: isa.DPInt8, Insts: []isa.Inst{
		{Op: isa.OpStore, Mem: isa.MemAcc, DType: isa.DTInt8, YSize: 1, XSize: 1, XStride: 1, Deps: isa.Deps{PopPrev: true}},
		{Op: isa.OpFinish},
	}}
	_, err := Run(cfg, p, make([]byte, 64))
	require.EqualError(t, err, "instruction 0 (store.acc): deadlock: the store module waits for a token from the previous module that no instruction pushes")
}

func TestUninitializedAndOutOfRange(t *testing.T) {
	cfg := isa.DefaultConfig()
	uopLoad := isa.Inst{Op: isa.OpLoad, Mem: isa.MemUop, DType: isa.DTInt8, YSize: 1, XSize: 1, XStride: 1}
	cases := []struct {
		name  string
		insts []isa.Inst
		uop   isa.Uop
		err   string
	}{
		{"uop never loaded", []isa.Inst{{Op: isa.OpGEMM, Reset: true, UopBegin: 3, UopEnd: 4, IterOut: 1, IterIn: 1}},
			isa.Uop{}, "instruction 0 (gemm): reads uop entry 3, which no instruction has written"},
		{"acc never reset", []isa.Inst{uopLoad,
			{Op: isa.OpLoad, Mem: isa.MemInp, DType: isa.DTInt8, YSize: 1, XSize: 1, XStride: 1},
			{Op: isa.OpLoad, Mem: isa.MemWgt, DType: isa.DTInt8, YSize: 1, XSize: 1, XStride: 1, Deps: isa.Deps{PushNext: true}},
			{Op: isa.OpGEMM, UopBegin: 0, UopEnd: 1, IterOut: 1, IterIn: 1, Deps: isa.Deps{PopPrev: true}}},
			isa.Uop{}, "instruction 3 (gemm): reads acc entry 0, which no instruction has written"},
		{"dram out of range", []isa.Inst{{Op: isa.OpLoad, Mem: isa.MemInp, DType: isa.DTInt8, DRAMBase: 480, YSize: 2, XSize: 1, XStride: 4}},
			isa.Uop{}, "instruction 0 (load.inp): DRAM bytes [480, 560) are beyond the device memory's 512 bytes"},
		{"acc index out of range", []isa.Inst{uopLoad, {Op: isa.OpGEMM, Reset: true, UopBegin: 0, UopEnd: 1, IterOut: 2, IterIn: 1, DstFactor: [2]uint32{2047, 0}}},
			isa.Uop{Acc: 5}, "instruction 1 (gemm): iteration (i0 1, i1 0, micro-op 0) addresses acc 2052, inp 0, wgt 0: beyond the buffers (acc 2048, inp 2048, wgt 1024 entries)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := &isa.Program{Datapath: isa.DPInt8, Insts: append(c.insts, isa.Inst{Op: isa.OpFinish}), Uops: []isa.Uop{c.uop}}
			_, err := Run(cfg, p, make([]byte, 512))
			require.EqualError(t, err, c.err)
		})
	}
}

func TestStaticRulesRefused(t *testing.T) {
	cfg := isa.DefaultConfig()
	p := &isa.Program{Datapath: isa.DPBF16, Insts: []isa.Inst{
		{Op: isa.OpLoad, Mem: isa.MemInp, DType: isa.DTInt8, YSize: 1, XSize: 1, XStride: 1}, {Op: isa.OpFinish}}}
	_, err := Run(cfg, p, make([]byte, 64))
	require.EqualError(t, err, "instruction 0 (load.inp): dtype i8 is not one of [bf16 f32] for inp in the bf16 datapath")
	p.Insts = p.Insts[:1]
	_, err = Run(cfg, p, make([]byte, 64))
	require.EqualError(t, err, "npu program: the last instruction must be finish")
}

// TestPaddedLoadAndALU loads a 2×3 int8 image with one entry of padding
// all round, and checks the scratchpad through GEMM with an identity
// weight, the ALU ops and a store of every entry.
func TestPaddedLoadAndALU(t *testing.T) {
	cfg := isa.DefaultConfig()
	cfg.BlockIn, cfg.BlockOut = 4, 4
	require.NoError(t, cfg.Validate())
	dram := make([]byte, 1024)
	for i := 0; i < 6*4; i++ {
		dram[i] = byte(int8(i - 10))
	}
	// identity weight at 256: wgt[o][i] = (o == i)
	for o := 0; o < 4; o++ {
		dram[256+o*4+o] = 1
	}
	n := 4 * 5 // padded 4 rows × 5 columns
	p := &isa.Program{Datapath: isa.DPInt8, Uops: []isa.Uop{{}, {Acc: 0, Inp: 0}}}
	p.Insts = []isa.Inst{
		{Op: isa.OpLoad, Mem: isa.MemUop, DType: isa.DTInt8, YSize: 1, XSize: 2, XStride: 2},
		{Op: isa.OpLoad, Mem: isa.MemInp, DType: isa.DTInt8, YSize: 2, XSize: 3, XStride: 3, PadTop: 1, PadBottom: 1, PadLeft: 1, PadRight: 1},
		{Op: isa.OpLoad, Mem: isa.MemWgt, DType: isa.DTInt8, DRAMBase: 256, YSize: 1, XSize: 1, XStride: 1, Deps: isa.Deps{PushNext: true}},
		{Op: isa.OpGEMM, Reset: true, UopBegin: 0, UopEnd: 1, IterOut: uint32(n), IterIn: 1, DstFactor: [2]uint32{1, 0}},
		{Op: isa.OpGEMM, UopBegin: 1, UopEnd: 2, IterOut: uint32(n), IterIn: 1, DstFactor: [2]uint32{1, 0}, SrcFactor: [2]uint32{1, 0}, Deps: isa.Deps{PopPrev: true}},
		// acc[e] = clip(max(acc[e]*3 + acc[e], -5) >> 1, 7): 4x, relu-ish, rounding shift, clip
		{Op: isa.OpALU, ALU: isa.ALUMul, UopBegin: 0, UopEnd: 1, IterOut: uint32(n), IterIn: 1, DstFactor: [2]uint32{1, 0}, UseImm: true, Imm: 3},
		{Op: isa.OpALU, ALU: isa.ALUMax, UopBegin: 0, UopEnd: 1, IterOut: uint32(n), IterIn: 1, DstFactor: [2]uint32{1, 0}, UseImm: true, Imm: uint16(0xfffb)},
		{Op: isa.OpALU, ALU: isa.ALUShr, UopBegin: 0, UopEnd: 1, IterOut: uint32(n), IterIn: 1, DstFactor: [2]uint32{1, 0}, UseImm: true, Imm: 1},
		{Op: isa.OpALU, ALU: isa.ALUClip, UopBegin: 0, UopEnd: 1, IterOut: uint32(n), IterIn: 1, DstFactor: [2]uint32{1, 0}, UseImm: true, Imm: 7, Deps: isa.Deps{PushNext: true}},
		{Op: isa.OpStore, Mem: isa.MemAcc, DType: isa.DTInt32, DRAMBase: 512, YSize: 1, XSize: uint32(n), XStride: uint32(n), Deps: isa.Deps{PopPrev: true}},
		{Op: isa.OpFinish},
	}
	st, err := Run(cfg, p, dram)
	require.NoError(t, err)
	for r := 0; r < 4; r++ {
		for c := 0; c < 5; c++ {
			for k := 0; k < 4; k++ {
				var x int32
				if r >= 1 && r <= 2 && c >= 1 && c <= 3 {
					x = int32(((r-1)*3+(c-1))*4 + k - 10)
				}
				want := aluInt(isa.ALUClip, aluInt(isa.ALUShr, max(x*3, -5), 1), 7)
				got := int32(binary.LittleEndian.Uint32(dram[512+4*((r*5+c)*4+k):]))
				require.Equal(t, want, got, "row %d col %d lane %d", r, c, k)
			}
		}
	}
	assert.Equal(t, int64(6*4+16+2*8), st.DRAMReadBytes)
	assert.Equal(t, int64(n*16), st.DRAMWriteBytes)
}

func TestALUIntSemantics(t *testing.T) {
	cases := []struct {
		op      isa.ALUOp
		d, v, w int32
	}{
		{isa.ALUShr, 5, 1, 3}, {isa.ALUShr, -5, 1, -2}, {isa.ALUShr, 7, 2, 2}, {isa.ALUShr, 6, 2, 2},
		{isa.ALUShr, 3, -2, 12}, {isa.ALUShr, math.MaxInt32, 40, 1},
		{isa.ALUClip, 100, -7, 7}, {isa.ALUClip, -100, 7, -7}, {isa.ALUClip, math.MinInt32, math.MinInt32, math.MinInt32},
		{isa.ALUAdd, math.MaxInt32, 1, math.MinInt32}, {isa.ALUMul, 1 << 20, 1 << 12, 0},
		{isa.ALUMulHi, math.MinInt32, math.MinInt32, math.MaxInt32},
		{isa.ALUMulHi, 1 << 30, 1 << 30, 1 << 29}, {isa.ALUMulHi, -(1 << 30), 3, -1}, {isa.ALUMulHi, 1 << 30, 3, 2},
		{isa.ALUMov, 9, -4, -4}, {isa.ALUMin, 3, -4, -4}, {isa.ALUMax, 3, -4, 3}, {isa.ALUSub, 3, 5, -2},
	}
	for _, c := range cases {
		assert.Equal(t, c.w, aluInt(c.op, c.d, c.v), "%s(%d, %d)", c.op, c.d, c.v)
	}
	nan := float32(math.NaN())
	assert.True(t, math.IsNaN(float64(aluFloat(isa.ALUMax, nan, 0))))
	assert.Equal(t, float32(6), aluFloat(isa.ALUClip, 9, -6))
	assert.Equal(t, float32(0), aluFloat(isa.ALUMax, -3, 0))
}

func TestLargerConfigGEMM(t *testing.T) {
	cfg := isa.DefaultConfig()
	cfg.Name, cfg.BlockIn, cfg.BlockOut = "large", 32, 32
	cfg.InpBufferBytes, cfg.WgtBufferBytes, cfg.AccBufferBytes = 64<<10, 1<<20, 512<<10
	cfg.DRAMBytesPerCycle = 128
	require.NoError(t, cfg.Validate())
	st := runGEMM(t, cfg, gemmShape{M: 256, N: 512, K: 256, Mt: 64, Nt: 256, Kt: 128})
	u := st.Utilization(cfg)
	t.Logf("large: cycles %d utilization %.3f", st.Cycles, u)
	require.Greater(t, u, 0.80)
}

// TestRooflineBandwidthBound runs a matrix-vector product (M = 1): every
// weight byte is used once, so the load module's DMAs bound the run. The
// cycles must be ISA.md's bandwidth formula, Σ over the load module's
// DMAs of (⌈bytes / bandwidth⌉ + latency), plus the last GEMM and store,
// within 5%.
func TestRooflineBandwidthBound(t *testing.T) {
	cfg := isa.DefaultConfig()
	g := gemmShape{M: 1, N: 1024, K: 1024, Mt: 1, Nt: 256, Kt: 256}
	st := runGEMM(t, cfg, g)
	bw, lat := int64(cfg.DRAMBytesPerCycle), int64(cfg.DRAMLatencyCycles)
	steps := int64((g.N / g.Nt) * (g.K / g.Kt))
	inpBytes, wgtBytes := int64(g.Mt*g.Kt*2), int64(g.Nt*g.Kt*2)
	predicted := steps * ((inpBytes+bw-1)/bw + lat + (wgtBytes+bw-1)/bw + lat)
	ratio := float64(st.Cycles) / float64(predicted)
	t.Logf("cycles %d predicted %d ratio %.4f utilization %.3f", st.Cycles, predicted, ratio, st.Utilization(cfg))
	require.InDelta(t, 1, ratio, 0.05)
	require.Less(t, st.Utilization(cfg), 0.2)
}

// BenchmarkSimulateGEMM reports simulated MACs per host second.
func BenchmarkSimulateGEMM(b *testing.B) {
	cfg := isa.DefaultConfig()
	g := gemmShape{M: 256, N: 256, K: 256, Mt: 64, Nt: 256, Kt: 128}
	dram := make([]byte, g.layout().size)
	fillGEMM(cfg, g, dram, rand.New(rand.NewSource(1)))
	p := gemmProgram(cfg, g, -1)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Run(cfg, p, dram); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(g.M*g.N*g.K)*float64(b.N)/b.Elapsed().Seconds(), "MACs/s")
}
