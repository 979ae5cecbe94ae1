package sim

import (
	"encoding/binary"
	"math"
	"math/big"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/targets/npu/isa"
)

// TestUInt8GEMM runs u8 × i8 (and i8 × u8, u8 × u8, i8 × i8) GEMMs of
// K = 32 on the default 1×16×16 config, with inputs up to 255 and weights
// down to −128, and checks the int32 results against a plain dot product.
func TestUInt8GEMM(t *testing.T) {
	cfg := isa.DefaultConfig()
	const K, N = 32, 16
	const aAt, bAt, cAt = 0, 64, 1024
	kinds := []struct{ inp, wgt isa.DType }{
		{isa.DTUInt8, isa.DTInt8}, {isa.DTInt8, isa.DTUInt8}, {isa.DTUInt8, isa.DTUInt8}, {isa.DTInt8, isa.DTInt8},
	}
	value := func(dt isa.DType, b byte) int32 {
		if dt == isa.DTUInt8 {
			return int32(b)
		}
		return int32(int8(b))
	}
	r := rand.New(rand.NewSource(7))
	for _, kind := range kinds {
		t.Run(kind.inp.String()+"x"+kind.wgt.String(), func(t *testing.T) {
			dram := make([]byte, cAt+4*N)
			var a [K]byte
			var w [N][K]byte
			for k := range a {
				a[k] = byte(r.Intn(256))
			}
			a[0], a[1], a[2], a[31] = 255, 0, 128, 255
			for o := range w {
				for k := range w[o] {
					w[o][k] = byte(r.Intn(256))
				}
				w[o][0], w[o][2], w[o][31] = 0x80, 0x7f, 0xff // −128 (128 as u8), 127, −1 (255)
			}
			// A is K values (two inp entries); B is packed per k-block:
			// entry kb holds wgt[o][k] for k in [16kb, 16kb+16).
			copy(dram[aAt:], a[:])
			for o := 0; o < N; o++ {
				for k := 0; k < K; k++ {
					dram[bAt+(k/16)*256+o*16+k%16] = w[o][k]
				}
			}
			p := &isa.Program{Datapath: isa.DPInt8, Uops: []isa.Uop{{}, {Acc: 0, Inp: 1, Wgt: 1}}}
			p.Insts = []isa.Inst{
				{Op: isa.OpLoad, Mem: isa.MemUop, DType: isa.DTInt8, YSize: 1, XSize: 2, XStride: 2},
				{Op: isa.OpLoad, Mem: isa.MemInp, DType: kind.inp, DRAMBase: aAt, YSize: 1, XSize: 2, XStride: 2},
				{Op: isa.OpLoad, Mem: isa.MemWgt, DType: kind.wgt, DRAMBase: bAt, YSize: 1, XSize: 2, XStride: 2, Deps: isa.Deps{PushNext: true}},
				{Op: isa.OpGEMM, Reset: true, UopBegin: 0, UopEnd: 1, IterOut: 1, IterIn: 1},
				{Op: isa.OpGEMM, UopBegin: 0, UopEnd: 2, IterOut: 1, IterIn: 1, Deps: isa.Deps{PopPrev: true, PushNext: true}},
				{Op: isa.OpStore, Mem: isa.MemAcc, DType: isa.DTInt32, DRAMBase: cAt, YSize: 1, XSize: 1, XStride: 1, Deps: isa.Deps{PopPrev: true}},
				{Op: isa.OpFinish},
			}
			_, err := Run(cfg, p, dram)
			require.NoError(t, err)
			for o := 0; o < N; o++ {
				var want int32
				for k := 0; k < K; k++ {
					want += value(kind.inp, a[k]) * value(kind.wgt, w[o][k])
				}
				got := int32(binary.LittleEndian.Uint32(dram[cAt+4*o:]))
				require.Equal(t, want, got, "output %d", o)
			}
		})
	}
}

// TestUInt8AccLoadStore: LOAD acc u8 zero-extends; STORE acc u8
// saturates every int32 to [0, 255].
func TestUInt8AccLoadStore(t *testing.T) {
	cfg := isa.DefaultConfig()
	in := []int32{-5, 0, 200, 300, 255, 256, -1, 1, math.MinInt32, math.MaxInt32, 128, 127, -128, 65535, 254, 7}
	want := []byte{0, 0, 200, 255, 255, 255, 0, 1, 0, 255, 128, 127, 0, 255, 254, 7}
	dram := make([]byte, 1024)
	for i, v := range in {
		binary.LittleEndian.PutUint32(dram[4*i:], uint32(v))
	}
	u8 := []byte{0, 1, 127, 128, 200, 254, 255, 0x80, 0xff, 3, 4, 5, 6, 7, 8, 9}
	copy(dram[256:], u8)
	p := &isa.Program{Datapath: isa.DPInt8, Insts: []isa.Inst{
		{Op: isa.OpLoad, Mem: isa.MemAcc, DType: isa.DTInt32, YSize: 1, XSize: 1, XStride: 1},
		{Op: isa.OpLoad, Mem: isa.MemAcc, DType: isa.DTUInt8, SRAMBase: 1, DRAMBase: 256, YSize: 1, XSize: 1, XStride: 1, Deps: isa.Deps{PushNext: true}},
		{Op: isa.OpStore, Mem: isa.MemAcc, DType: isa.DTUInt8, DRAMBase: 512, YSize: 1, XSize: 1, XStride: 1, Deps: isa.Deps{PopPrev: true}},
		{Op: isa.OpStore, Mem: isa.MemAcc, DType: isa.DTInt32, SRAMBase: 1, DRAMBase: 768, YSize: 1, XSize: 1, XStride: 1},
		{Op: isa.OpFinish},
	}}
	st, err := Run(cfg, p, dram)
	require.NoError(t, err)
	assert.Equal(t, want, dram[512:512+16], "store.acc u8 of %v", in)
	for i, b := range u8 {
		assert.Equal(t, int32(b), int32(binary.LittleEndian.Uint32(dram[768+4*i:])), "load.acc u8 lane %d", i)
	}
	assert.Equal(t, int64(64+16), st.DRAMReadBytes)
	assert.Equal(t, int64(16+64), st.DRAMWriteBytes)
}

// floorMulQ is floor(d·v / 2^31) in arbitrary precision (big.Int's Div
// is Euclidean: floor for a positive divisor).
func floorMulQ(d, v int32) int64 {
	p := new(big.Int).Mul(big.NewInt(int64(d)), big.NewInt(int64(v)))
	return p.Div(p, big.NewInt(1<<31)).Int64()
}

func TestALUMulQ(t *testing.T) {
	cases := []struct{ d, v, w int32 }{
		{-3, 1 << 30, -2}, // floor(−1.5)
		{3, 1 << 30, 1},   // floor(1.5)
		{1 << 30, math.MaxInt32, 1<<30 - 1},
		{-(1 << 30), math.MaxInt32, -(1 << 30)},
		{math.MaxInt32, math.MaxInt32, math.MaxInt32 - 1},
		{math.MinInt32, math.MaxInt32, -math.MaxInt32},
		{math.MinInt32, 1, -1},
		{-1, 1, -1},
		{1, 1, 0},
		{0, math.MinInt32, 0},
		{math.MinInt32, math.MinInt32, math.MaxInt32}, // 2^31 saturates
		{1 << 16, 1 << 15, 1},
		{-(1 << 16), 1 << 15, -1},
	}
	for _, c := range cases {
		assert.Equal(t, c.w, aluInt(isa.ALUMulQ, c.d, c.v), "mulq(%d, %d)", c.d, c.v)
		if c.d != math.MinInt32 || c.v != math.MinInt32 {
			assert.Equal(t, int64(c.w), floorMulQ(c.d, c.v), "reference mulq(%d, %d)", c.d, c.v)
		}
	}
	r := rand.New(rand.NewSource(11))
	for i := 0; i < 100000; i++ {
		d, v := int32(r.Uint32()), int32(r.Uint32())
		if d == math.MinInt32 && v == math.MinInt32 {
			continue
		}
		require.Equal(t, floorMulQ(d, v), int64(aluInt(isa.ALUMulQ, d, v)), "mulq(%d, %d)", d, v)
	}

	// Through the simulator: with an immediate, and with an accumulator
	// source.
	cfg := isa.DefaultConfig()
	dram := make([]byte, 1024)
	ds := []int32{-3, 3, 1 << 30, -(1 << 30), math.MaxInt32, math.MinInt32, -1, 1, 0, 123456789, -987654321, 1 << 20, 5, -5, 1 << 31 / 3, 77}
	vs := []int32{1 << 30, 1 << 30, math.MaxInt32, math.MaxInt32, math.MaxInt32, math.MaxInt32, 1, 1, 5, -1 << 31 / 5, 1<<31 - 7, 1 << 12, -(1 << 30), 1 << 30, 3, -77}
	for i := range ds {
		binary.LittleEndian.PutUint32(dram[4*i:], uint32(ds[i]))
		binary.LittleEndian.PutUint32(dram[64+4*i:], uint32(vs[i]))
	}
	imm := int32(-12345)
	p := &isa.Program{Datapath: isa.DPInt8, Uops: []isa.Uop{{Acc: 0, Inp: 1}, {Acc: 2, Inp: 0}}, Insts: []isa.Inst{
		{Op: isa.OpLoad, Mem: isa.MemUop, DType: isa.DTInt8, YSize: 1, XSize: 2, XStride: 2},
		{Op: isa.OpLoad, Mem: isa.MemAcc, DType: isa.DTInt32, YSize: 1, XSize: 2, XStride: 2},
		{Op: isa.OpALU, ALU: isa.ALUMov, UopBegin: 1, UopEnd: 2, IterOut: 1, IterIn: 1},  // acc[2] = acc[0]
		{Op: isa.OpALU, ALU: isa.ALUMulQ, UopBegin: 0, UopEnd: 1, IterOut: 1, IterIn: 1}, // acc[0] = mulq(acc[0], acc[1])
		{Op: isa.OpALU, ALU: isa.ALUMulQ, UopBegin: 1, UopEnd: 2, IterOut: 1, IterIn: 1, UseImm: true, Imm: uint16(int16(imm)),
			Deps: isa.Deps{PushNext: true}},
		{Op: isa.OpStore, Mem: isa.MemAcc, DType: isa.DTInt32, DRAMBase: 256, YSize: 1, XSize: 3, XStride: 3, Deps: isa.Deps{PopPrev: true}},
		{Op: isa.OpFinish},
	}}
	_, err := Run(cfg, p, dram)
	require.NoError(t, err)
	for i := range ds {
		want := aluInt(isa.ALUMulQ, ds[i], vs[i])
		assert.Equal(t, want, int32(binary.LittleEndian.Uint32(dram[256+4*i:])), "lane %d: mulq(%d, %d)", i, ds[i], vs[i])
		assert.Equal(t, int32(floorMulQ(ds[i], imm)), int32(binary.LittleEndian.Uint32(dram[256+128+4*i:])), "lane %d: mulq(%d, imm %d)", i, ds[i], imm)
	}
}

// TestMulQShrIsSingleRounding: mulq by m then shr by s is TFLite's
// single-rounding requantization floor((acc·m + 2^(30+s)) / 2^(31+s))
// (ISA.md, "ALU") for acc in [−2^28, 2^28], m in [2^30, 2^31), s in
// [1, 31] — in aluInt and through the simulator.
func TestMulQShrIsSingleRounding(t *testing.T) {
	ref := func(acc, m, s int32) int32 {
		return int32((int64(acc)*int64(m) + 1<<(30+s)) >> (31 + s))
	}
	requant := func(acc, m, s int32) int32 {
		return aluInt(isa.ALUShr, aluInt(isa.ALUMulQ, acc, m), s)
	}
	r := rand.New(rand.NewSource(5))
	gen := func() (acc, m, s int32) {
		acc = int32(r.Int63n(1<<29+1)) - 1<<28
		m = 1<<30 + int32(r.Int63n(1<<30))
		s = 1 + int32(r.Intn(31))
		switch r.Intn(8) {
		case 0:
			acc = []int32{-(1 << 28), 1 << 28, 0, -1, 1}[r.Intn(5)]
		case 1:
			m = []int32{1 << 30, math.MaxInt32}[r.Intn(2)]
		case 2:
			// A product just below, at or above a rounding tie of s.
			s = 1 + int32(r.Intn(8))
			m = 1 << 30
			acc = (int32(r.Intn(1<<20))-1<<19)<<(s+1) + 1<<s + int32(r.Intn(3)) - 1
		}
		return
	}
	doubleDiffers := 0
	for i := 0; i < 200000; i++ {
		acc, m, s := gen()
		require.Equal(t, ref(acc, m, s), requant(acc, m, s), "acc %d m %d s %d", acc, m, s)
		if aluInt(isa.ALUShr, aluInt(isa.ALUMulHi, acc, m), s) != ref(acc, m, s) {
			doubleDiffers++
		}
	}
	t.Logf("mulhi+shr (double rounding) differs from the single-rounding reference in %d of 200000 cases", doubleDiffers)
	// The s = 0 exception (ISA.md): shr by 0 does not round.
	assert.NotEqual(t, int32((int64(3)*(1<<30)+1<<30)>>31), requant(3, 1<<30, 0))

	// Through the simulator: 64 entries of 16 lanes; acc values in
	// entries [0, 64), multipliers in [64, 128), shifts in [128, 192).
	cfg := isa.DefaultConfig()
	const E, L = 64, 16
	dram := make([]byte, 3*E*L*4+E*L*4)
	var accs, ms, ss [E * L]int32
	for i := range accs {
		accs[i], ms[i], ss[i] = gen()
		binary.LittleEndian.PutUint32(dram[4*i:], uint32(accs[i]))
		binary.LittleEndian.PutUint32(dram[4*(E*L+i):], uint32(ms[i]))
		binary.LittleEndian.PutUint32(dram[4*(2*E*L+i):], uint32(ss[i]))
	}
	out := 3 * E * L * 4
	p := &isa.Program{Datapath: isa.DPInt8, Uops: []isa.Uop{{Acc: 0, Inp: E}, {Acc: 0, Inp: 2 * E}}, Insts: []isa.Inst{
		{Op: isa.OpLoad, Mem: isa.MemUop, DType: isa.DTInt8, YSize: 1, XSize: 2, XStride: 2},
		{Op: isa.OpLoad, Mem: isa.MemAcc, DType: isa.DTInt32, YSize: 1, XSize: 3 * E, XStride: 3 * E},
		{Op: isa.OpALU, ALU: isa.ALUMulQ, UopBegin: 0, UopEnd: 1, IterOut: E, IterIn: 1, DstFactor: [2]uint32{1, 0}, SrcFactor: [2]uint32{1, 0}},
		{Op: isa.OpALU, ALU: isa.ALUShr, UopBegin: 1, UopEnd: 2, IterOut: E, IterIn: 1, DstFactor: [2]uint32{1, 0}, SrcFactor: [2]uint32{1, 0},
			Deps: isa.Deps{PushNext: true}},
		{Op: isa.OpStore, Mem: isa.MemAcc, DType: isa.DTInt32, DRAMBase: uint32(out), YSize: 1, XSize: E, XStride: E, Deps: isa.Deps{PopPrev: true}},
		{Op: isa.OpFinish},
	}}
	_, err := Run(cfg, p, dram)
	require.NoError(t, err)
	for i := range accs {
		got := int32(binary.LittleEndian.Uint32(dram[out+4*i:]))
		require.Equal(t, ref(accs[i], ms[i], ss[i]), got, "lane %d: acc %d m %d s %d", i, accs[i], ms[i], ss[i])
	}
}
