package sim

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/targets/npu/isa"
)

// TestElideLoadsRandomPrograms: on random programs that repeat DMAs from a
// small pool among every other instruction kind, isa.ElideLoads followed
// by isa.InsertDeps computes the same DRAM image as isa.InsertDeps alone,
// reads fewer DRAM bytes by exactly the removed LOADs' bytes, and removes
// LOADs often enough to matter. Keeping a LOAD whose entries another LOAD
// overwrote in between would change the results.
func TestElideLoadsRandomPrograms(t *testing.T) {
	cfg := smallConfig()
	removed := 0
	for seed := int64(0); seed < 300; seed++ {
		rng := rand.New(rand.NewSource(seed))
		base := repeatingProgram(cfg, rng)
		dram := randomDRAM(rng)

		want := cloneProgram(base)
		require.NoError(t, isa.InsertDeps(cfg, want))
		wantDRAM := append([]byte(nil), dram...)
		ws, err := Run(cfg, want, wantDRAM)
		require.NoError(t, err, "seed %d:\n%s", seed, want)

		got := cloneProgram(base)
		n, err := isa.ElideLoads(cfg, got)
		require.NoError(t, err)
		require.NoError(t, isa.InsertDeps(cfg, got))
		gotDRAM := append([]byte(nil), dram...)
		gs, err := Run(cfg, got, gotDRAM)
		require.NoError(t, err, "seed %d:\n%s", seed, got)
		require.Equal(t, wantDRAM, gotDRAM, "seed %d: eliding %d loads changed the results:\n%s", seed, n, got)
		require.Equal(t, len(base.Insts)-n, len(got.Insts))
		require.Equal(t, ws.DRAMReadBytes-elidedBytes(cfg, base, got), gs.DRAMReadBytes, "seed %d", seed)
		removed += n
	}
	require.Greater(t, removed, 300, "the random programs repeat few loads")
}

// elidedBytes is the DRAM bytes of the LOADs in p that q
// lacks (q is p with some LOADs removed).
func elidedBytes(cfg isa.Config, p, q *isa.Program) int64 {
	var n int64
	j := 0
	for i := range p.Insts {
		a := p.Insts[i]
		if j < len(q.Insts) && sameDMA(a, q.Insts[j]) {
			j++
			continue
		}
		eb := int64(cfg.EntryValues(a.Mem) * a.DType.Bytes())
		if a.Mem == isa.MemUop {
			eb = isa.UopBytes
		}
		n += int64(a.YSize) * int64(a.XSize) * eb
	}
	return n
}

func sameDMA(a, b isa.Inst) bool {
	a.Deps, b.Deps = isa.Deps{}, isa.Deps{}
	return a == b
}

func cloneProgram(p *isa.Program) *isa.Program {
	q := *p
	q.Insts = append([]isa.Inst(nil), p.Insts...)
	q.Uops = append([]isa.Uop(nil), p.Uops...)
	return &q
}

// repeatingProgram is randomProgram's program with a pool of 4 input and
// 4 weight LOADs, one of which is drawn for every other instruction.
func repeatingProgram(cfg isa.Config, rng *rand.Rand) *isa.Program {
	p := randomProgram(cfg, rng)
	var pool []isa.Inst
	for _, mem := range []isa.Memory{isa.MemInp, isa.MemWgt} {
		for k := 0; k < 4; k++ {
			y, x := 1+rng.Intn(2), 1+rng.Intn(4)
			pool = append(pool, isa.Inst{Op: isa.OpLoad, Mem: mem, DType: isa.DTInt8, SRAMBase: uint32(rng.Intn(16 - y*x + 1)),
				DRAMBase: uint32(rng.Intn(1024)), YSize: uint32(y), XSize: uint32(x), XStride: uint32(x + rng.Intn(2))})
		}
	}
	body := p.Insts[4 : len(p.Insts)-1]
	out := append([]isa.Inst(nil), p.Insts[:4]...)
	for _, in := range body {
		out = append(out, pool[rng.Intn(len(pool))], in)
	}
	p.Insts = append(out, isa.Inst{Op: isa.OpFinish})
	return p
}

// TestElideLoadsCases: what ElideLoads keeps and removes.
func TestElideLoadsCases(t *testing.T) {
	cfg := smallConfig()
	load := func(mem isa.Memory, sram, dram int) isa.Inst {
		dt := isa.DTInt8
		if mem == isa.MemAcc {
			dt = isa.DTInt32
		}
		return isa.Inst{Op: isa.OpLoad, Mem: mem, DType: dt, SRAMBase: uint32(sram), DRAMBase: uint32(dram), YSize: 2, XSize: 2, XStride: 4}
	}
	store := func(dram int) isa.Inst {
		return isa.Inst{Op: isa.OpStore, Mem: isa.MemAcc, DType: isa.DTInt8, DRAMBase: uint32(dram), YSize: 1, XSize: 1, XStride: 1}
	}
	padded := load(isa.MemInp, 0, 0)
	padded.PadTop = 1
	uops := isa.Inst{Op: isa.OpLoad, Mem: isa.MemUop, DType: isa.DTInt8, YSize: 1, XSize: 2, XStride: 2}
	for _, c := range []struct {
		name  string
		insts []isa.Inst
		keep  []bool
	}{
		{"repeat", []isa.Inst{load(isa.MemInp, 0, 0), load(isa.MemWgt, 0, 0), load(isa.MemInp, 0, 0)}, []bool{true, true, false}},
		{"other entries between", []isa.Inst{load(isa.MemInp, 0, 0), load(isa.MemInp, 4, 64), load(isa.MemInp, 0, 0)}, []bool{true, true, false}},
		{"overwritten", []isa.Inst{load(isa.MemInp, 0, 0), load(isa.MemInp, 3, 64), load(isa.MemInp, 0, 0)}, []bool{true, true, true}},
		{"other source", []isa.Inst{load(isa.MemInp, 0, 0), load(isa.MemInp, 0, 16)}, []bool{true, true}},
		{"other padding", []isa.Inst{load(isa.MemInp, 0, 0), padded}, []bool{true, true}},
		// the first load reads DRAM bytes [0, (4+2)·4) = [0, 24) (4-byte entries)
		{"stored between", []isa.Inst{load(isa.MemInp, 0, 0), store(20), load(isa.MemInp, 0, 0)}, []bool{true, true, true}},
		{"stored elsewhere", []isa.Inst{load(isa.MemInp, 0, 0), store(24), load(isa.MemInp, 0, 0)}, []bool{true, true, false}},
		{"accumulator", []isa.Inst{load(isa.MemAcc, 0, 0), load(isa.MemAcc, 0, 0)}, []bool{true, true}},
		{"micro-ops", []isa.Inst{uops, store(0), uops}, []bool{true, true, false}},
	} {
		p := &isa.Program{Datapath: isa.DPInt8, Uops: make([]isa.Uop, 2)}
		p.Insts = append(append([]isa.Inst(nil), c.insts...), isa.Inst{Op: isa.OpFinish})
		n, err := isa.ElideLoads(cfg, p)
		require.NoError(t, err, c.name)
		want := []isa.Inst{}
		for i, k := range c.keep {
			if k {
				want = append(want, c.insts[i])
			}
		}
		require.Equal(t, len(c.insts)-len(want), n, c.name)
		require.Equal(t, append(want, isa.Inst{Op: isa.OpFinish}), p.Insts, c.name)
	}
}

// TestElideLoadsClearsTokens: the flags of the instructions kept are
// cleared, since removed instructions may have pushed or popped tokens.
func TestElideLoadsClearsTokens(t *testing.T) {
	cfg := smallConfig()
	p := repeatingProgram(cfg, rand.New(rand.NewSource(1)))
	require.NoError(t, isa.InsertDeps(cfg, p))
	_, err := isa.ElideLoads(cfg, p)
	require.NoError(t, err)
	for i := range p.Insts {
		require.Equal(t, isa.Deps{}, p.Insts[i].Deps, "instruction %d", i)
	}
}
