package sim

import (
	"encoding/binary"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/targets/npu/isa"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// gemmShape is C[M,N] = A[M,K] · B[N,K]ᵀ in bf16 with f32 results, tiled
// Mt × Nt × Kt (multiples of the block sizes), for a batch-1 config.
type gemmShape struct{ M, N, K, Mt, Nt, Kt int }

// gemmLayout places A (M×K bf16 row-major), B (packed [N/bo][K/bi][bo][bi]
// bf16) and C (M×N f32 row-major) in DRAM.
type gemmLayout struct{ a, b, c, size int }

func (g gemmShape) layout() gemmLayout {
	a := 0
	b := a + g.M*g.K*2
	c := b + g.N*g.K*2
	return gemmLayout{a, b, c, c + g.M*g.N*4}
}

// gemmProgram builds a double-buffered tiled GEMM program (the VTA
// pattern): inp/wgt halves alternate per k-step, acc halves per output
// tile; load waits on compute before reusing a half (pop_next), compute
// waits on load (pop_prev) and on store before reusing an acc half
// (pop_next), store waits on compute (pop_prev). drop ≥ 0 removes the
// push and the pop of that load→compute token.
func gemmProgram(cfg isa.Config, g gemmShape, drop int) *isa.Program {
	bi, bo := cfg.BlockIn, cfg.BlockOut
	ktb, ntb := g.Kt/bi, g.Nt/bo
	inpHalf, wgtHalf, accHalf := cfg.Depth(isa.MemInp, isa.DPBF16)/2, cfg.Depth(isa.MemWgt, isa.DPBF16)/2, cfg.Depth(isa.MemAcc, isa.DPBF16)/2
	if g.Mt*ktb > inpHalf || ntb*ktb > wgtHalf || g.Mt*ntb > accHalf {
		panic("tile does not fit")
	}
	l := g.layout()
	p := &isa.Program{Datapath: isa.DPBF16}
	// micro-op runs: (h, ah) at (2h+ah)·ktb; resets of acc half ah at 4·ktb+ah.
	for h := 0; h < 2; h++ {
		for ah := 0; ah < 2; ah++ {
			for kb := 0; kb < ktb; kb++ {
				p.Uops = append(p.Uops, isa.Uop{Acc: uint32(ah * accHalf), Inp: uint32(h*inpHalf + kb), Wgt: uint32(h*wgtHalf + kb)})
			}
		}
	}
	p.Uops = append(p.Uops, isa.Uop{}, isa.Uop{Acc: uint32(accHalf)})
	emit := func(in isa.Inst) { p.Insts = append(p.Insts, in) }
	emit(isa.Inst{Op: isa.OpLoad, Mem: isa.MemUop, DType: isa.DTInt8, YSize: 1, XSize: uint32(len(p.Uops)), XStride: uint32(len(p.Uops))})
	steps, tiles := (g.M/g.Mt)*(g.N/g.Nt)*(g.K/g.Kt), (g.M/g.Mt)*(g.N/g.Nt)
	step, tile := 0, 0
	for mt := 0; mt < g.M; mt += g.Mt {
		for nt := 0; nt < g.N; nt += g.Nt {
			ah := tile % 2
			emit(isa.Inst{Op: isa.OpGEMM, Reset: true, UopBegin: uint32(4*ktb + ah), UopEnd: uint32(4*ktb + ah + 1),
				IterOut: uint32(g.Mt), IterIn: uint32(ntb), DstFactor: [2]uint32{uint32(ntb), 1},
				Deps: isa.Deps{PopNext: tile >= 2}})
			for kt := 0; kt < g.K; kt += g.Kt {
				h := step % 2
				emit(isa.Inst{Op: isa.OpLoad, Mem: isa.MemInp, DType: isa.DTBF16, SRAMBase: uint32(h * inpHalf),
					DRAMBase: uint32(l.a + (mt*g.K+kt)*2), YSize: uint32(g.Mt), XSize: uint32(ktb), XStride: uint32(g.K / bi),
					Deps: isa.Deps{PopNext: step >= 2}})
				emit(isa.Inst{Op: isa.OpLoad, Mem: isa.MemWgt, DType: isa.DTBF16, SRAMBase: uint32(h * wgtHalf),
					DRAMBase: uint32(l.b + ((nt/bo)*(g.K/bi)+kt/bi)*bo*bi*2), YSize: uint32(ntb), XSize: uint32(ktb), XStride: uint32(g.K / bi),
					Deps: isa.Deps{PushNext: step != drop}})
				run := uint32((2*h + ah) * ktb)
				emit(isa.Inst{Op: isa.OpGEMM, UopBegin: run, UopEnd: run + uint32(ktb), IterOut: uint32(g.Mt), IterIn: uint32(ntb),
					DstFactor: [2]uint32{uint32(ntb), 1}, SrcFactor: [2]uint32{uint32(ktb), 0}, WgtFactor: [2]uint32{0, uint32(ktb)},
					Deps: isa.Deps{PopPrev: step != drop, PushPrev: steps-step > 2, PushNext: kt+g.Kt >= g.K}})
				step++
			}
			emit(isa.Inst{Op: isa.OpStore, Mem: isa.MemAcc, DType: isa.DTF32, SRAMBase: uint32(ah * accHalf),
				DRAMBase: uint32(l.c + (mt*g.N+nt)*4), YSize: uint32(g.Mt), XSize: uint32(ntb), XStride: uint32(g.N / bo),
				Deps: isa.Deps{PopPrev: true, PushPrev: tiles-tile > 2}})
			tile++
		}
	}
	emit(isa.Inst{Op: isa.OpFinish})
	return p
}

// fillGEMM writes random bf16 A and B into dram and returns the f32
// reference C computed with the simulator's stated order (k ascending,
// f32 additions).
func fillGEMM(cfg isa.Config, g gemmShape, dram []byte, r *rand.Rand) []float32 {
	l := g.layout()
	bi, bo := cfg.BlockIn, cfg.BlockOut
	a := make([]float32, g.M*g.K)
	b := make([]float32, g.N*g.K)
	for i := range a {
		a[i] = isa.RoundBF16(float32(r.NormFloat64()))
		binary.LittleEndian.PutUint16(dram[l.a+2*i:], tir.Float32ToBF16(a[i]))
	}
	for n := 0; n < g.N; n++ {
		for k := 0; k < g.K; k++ {
			v := isa.RoundBF16(float32(r.NormFloat64()))
			b[n*g.K+k] = v
			off := ((n/bo)*(g.K/bi)+k/bi)*bo*bi + (n%bo)*bi + k%bi
			binary.LittleEndian.PutUint16(dram[l.b+2*off:], tir.Float32ToBF16(v))
		}
	}
	c := make([]float32, g.M*g.N)
	for m := 0; m < g.M; m++ {
		for n := 0; n < g.N; n++ {
			var s float32
			for k := 0; k < g.K; k++ {
				s += a[m*g.K+k] * b[n*g.K+k]
			}
			c[m*g.N+n] = s
		}
	}
	return c
}

func runGEMM(t *testing.T, cfg isa.Config, g gemmShape) *Stats {
	t.Helper()
	r := rand.New(rand.NewSource(1))
	dram := make([]byte, g.layout().size)
	want := fillGEMM(cfg, g, dram, r)
	st, err := Run(cfg, gemmProgram(cfg, g, -1), dram)
	require.NoError(t, err)
	l := g.layout()
	for i, w := range want {
		got := math.Float32frombits(binary.LittleEndian.Uint32(dram[l.c+4*i:]))
		require.Equal(t, w, got, "C[%d]", i)
	}
	require.Equal(t, int64(g.M*g.N*g.K), st.MACs)
	return st
}

func TestGEMMBF16Exact(t *testing.T) {
	runGEMM(t, isa.DefaultConfig(), gemmShape{M: 64, N: 96, K: 64, Mt: 32, Nt: 48, Kt: 32})
}

func TestGEMM512Utilization(t *testing.T) {
	cfg := isa.DefaultConfig()
	st := runGEMM(t, cfg, gemmShape{M: 512, N: 512, K: 512, Mt: 64, Nt: 256, Kt: 128})
	u := st.Utilization(cfg)
	t.Logf("cycles %d utilization %.3f read %d write %d modules %+v", st.Cycles, u, st.DRAMReadBytes, st.DRAMWriteBytes, st.Modules)
	require.GreaterOrEqual(t, u, 0.80)
}
