package sim

import (
	"errors"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/targets/npu/isa"
)

// TestInsertDepsIsVTADoubleBuffering: on the hand-tokened double-buffered
// GEMM (VTA's pattern), isa.InsertDeps finds exactly the hand-placed
// tokens, and the program runs in the same cycles.
func TestInsertDepsIsVTADoubleBuffering(t *testing.T) {
	cfg := isa.DefaultConfig()
	for _, g := range []gemmShape{
		{M: 64, N: 96, K: 64, Mt: 32, Nt: 48, Kt: 32},
		{M: 32, N: 32, K: 32, Mt: 16, Nt: 16, Kt: 16},
		{M: 48, N: 32, K: 96, Mt: 16, Nt: 32, Kt: 32},
	} {
		hand := gemmProgram(cfg, g, -1)
		p := gemmProgram(cfg, g, -1)
		require.NoError(t, isa.InsertDeps(cfg, p))
		for i := range p.Insts {
			require.Equal(t, hand.Insts[i].Deps, p.Insts[i].Deps, "%+v: instruction %d (%s)", g, i, p.Insts[i].Name())
		}
		a, err := Run(cfg, hand, make([]byte, g.layout().size))
		require.NoError(t, err)
		b, err := Run(cfg, p, make([]byte, g.layout().size))
		require.NoError(t, err)
		require.Equal(t, a.Cycles, b.Cycles)
	}
}

// TestInsertDepsRandomPrograms: on random programs of every instruction
// kind over small scratchpads, the inserted tokens satisfy the
// simulator's checker, and each one is needed: without it (its push and
// its pop) the checker refuses the program — a missing dependency or a
// read of an entry before its writer ran — at the instruction that popped
// it or a later one of its module, which relied on the same token.
func TestInsertDepsRandomPrograms(t *testing.T) {
	cfg := smallConfig()
	tokens := 0
	for seed := int64(0); seed < 300; seed++ {
		rng := rand.New(rand.NewSource(seed))
		p := randomProgram(cfg, rng)
		require.NoError(t, isa.InsertDeps(cfg, p), "seed %d", seed)
		dram := randomDRAM(rng)
		_, err := Run(cfg, p, dram)
		require.NoError(t, err, "seed %d:\n%s", seed, p)
		for _, pair := range tokenPairs(p) {
			q := *p
			q.Insts = append([]isa.Inst(nil), p.Insts...)
			setFlag(&q.Insts[pair[0]], pair[2], false)
			setFlag(&q.Insts[pair[1]], pair[2]+1, false)
			_, err := Run(cfg, &q, randomDRAM(rand.New(rand.NewSource(seed))))
			var se *Error
			require.True(t, errors.As(err, &se), "seed %d: without the token %d → %d the program runs (%v):\n%s", seed, pair[0], pair[1], err, p)
			// The popping instruction, run early, may also find the entry
			// not written yet.
			require.Regexp(t, "missing dependency|which no instruction has written", se.Reason)
			require.True(t, fromOn(&q, se.Index, pair[1]) || fromOn(&q, se.Other, pair[1]), "seed %d: %v does not involve instruction %d or a later one of its module", seed, se, pair[1])
			tokens++
		}
	}
	require.Greater(t, tokens, 300, "the random programs exercise few tokens")
}

// fromOn reports whether instruction i is instruction pop or a later one
// of its module.
func fromOn(p *isa.Program, i, pop int) bool {
	return i >= pop && p.Insts[i].Module() == p.Insts[pop].Module()
}

// smallConfig has 16-entry input, weight and accumulator buffers and 32
// micro-ops, so random accesses collide often.
func smallConfig() isa.Config {
	cfg := isa.DefaultConfig()
	cfg.Name, cfg.BlockIn, cfg.BlockOut = "small", 4, 4
	cfg.InpBufferBytes, cfg.WgtBufferBytes, cfg.AccBufferBytes, cfg.UopBufferBytes = 16*4, 16*16, 16*4*4, 32*isa.UopBytes
	return cfg
}

const randomDRAMBytes = 1 << 12

func randomDRAM(rng *rand.Rand) []byte {
	b := make([]byte, randomDRAMBytes)
	rng.Read(b)
	return b
}

// randomProgram is an int8 program on smallConfig: it loads micro-ops,
// fills the input and weight buffers and resets the accumulator, then
// runs 10 to 40 random LOADs, GEMMs, ALU operations, micro-op reloads and
// STOREs (to DRAM above what the LOADs read), with no tokens.
func randomProgram(cfg isa.Config, rng *rand.Rand) *isa.Program {
	const depth, table = 16, 24
	p := &isa.Program{Datapath: isa.DPInt8, Uops: []isa.Uop{{}}}
	for len(p.Uops) < table {
		p.Uops = append(p.Uops, isa.Uop{Acc: uint32(rng.Intn(8)), Inp: uint32(rng.Intn(8)), Wgt: uint32(rng.Intn(8))})
	}
	dma := func(op isa.Opcode, mem isa.Memory, dt isa.DType, sram, y, x int) isa.Inst {
		dram := rng.Intn(1024)
		if op == isa.OpStore {
			dram += 2048
		}
		return isa.Inst{Op: op, Mem: mem, DType: dt, SRAMBase: uint32(sram), DRAMBase: uint32(dram), YSize: uint32(y), XSize: uint32(x), XStride: uint32(x + rng.Intn(3))}
	}
	p.Insts = []isa.Inst{
		{Op: isa.OpLoad, Mem: isa.MemUop, DType: isa.DTInt8, YSize: 1, XSize: 8, XStride: 8},
		dma(isa.OpLoad, isa.MemInp, isa.DTInt8, 0, 1, depth),
		dma(isa.OpLoad, isa.MemWgt, isa.DTUInt8, 0, 1, depth),
		{Op: isa.OpGEMM, Reset: true, UopBegin: 0, UopEnd: 1, IterOut: depth, IterIn: 1, DstFactor: [2]uint32{1, 0}},
	}
	for n := 10 + rng.Intn(31); n > 0; n-- {
		p.Insts = append(p.Insts, randomInst(rng, dma, depth, table))
	}
	p.Insts = append(p.Insts, isa.Inst{Op: isa.OpFinish})
	return p
}

// randomInst draws one instruction within the buffers: micro-op entries
// are below 8 and loop factors below 3, so an iteration's largest index
// is 7 + 2·(IterOut−1) + 2·(IterIn−1) ≤ 13 < depth.
func randomInst(rng *rand.Rand, dma func(isa.Opcode, isa.Memory, isa.DType, int, int, int) isa.Inst, depth, table int) isa.Inst {
	rect := func() (int, int, int) { y, x := 1+rng.Intn(3), 1+rng.Intn(4); return rng.Intn(depth - y*x + 1), y, x }
	switch k := rng.Intn(7); k {
	case 0, 1:
		mem := []isa.Memory{isa.MemInp, isa.MemWgt}[k]
		s, y, x := rect()
		return dma(isa.OpLoad, mem, isa.DTInt8, s, y, x)
	case 2:
		s, y, x := rect()
		return dma(isa.OpLoad, isa.MemAcc, isa.DTInt32, s, y, x)
	case 3:
		s, y, x := rect()
		return dma(isa.OpStore, isa.MemAcc, []isa.DType{isa.DTInt8, isa.DTInt32}[rng.Intn(2)], s, y, x)
	case 4:
		x := 1 + rng.Intn(4)
		return isa.Inst{Op: isa.OpLoad, Mem: isa.MemUop, DType: isa.DTInt8, SRAMBase: uint32(rng.Intn(8 - x + 1)), DRAMBase: uint32(rng.Intn(table - x + 1)), YSize: 1, XSize: uint32(x), XStride: uint32(x)}
	}
	b := rng.Intn(8)
	in := isa.Inst{Op: isa.OpGEMM, UopBegin: uint32(b), UopEnd: uint32(b + 1 + rng.Intn(8-b)), IterOut: uint32(1 + rng.Intn(2)), IterIn: uint32(1 + rng.Intn(3))}
	for _, f := range []*[2]uint32{&in.DstFactor, &in.SrcFactor, &in.WgtFactor} {
		*f = [2]uint32{uint32(rng.Intn(3)), uint32(rng.Intn(3))}
	}
	if rng.Intn(2) == 0 {
		in.Op, in.WgtFactor = isa.OpALU, [2]uint32{}
		in.ALU = []isa.ALUOp{isa.ALUAdd, isa.ALUMax, isa.ALUMin, isa.ALUMov, isa.ALUShr}[rng.Intn(5)]
		if rng.Intn(2) == 0 {
			in.UseImm, in.Imm = true, uint16(rng.Intn(8))
		}
	}
	return in
}

// tokenPairs lists each token of p as (pushing instruction, popping
// instruction, flag index of the push): the k-th push toward a queue
// pairs with the k-th pop from it.
func tokenPairs(p *isa.Program) [][3]int {
	// flag indices: 0 push_next/pop_prev (toward the next module), 2
	// push_prev/pop_next (toward the previous one); the pop's is +1.
	var pushes, pops [isa.NumModules][4][]int
	for i := range p.Insts {
		in := &p.Insts[i]
		m := in.Module()
		for f := 0; f < 4; f++ {
			if flag(in, f) {
				if f%2 == 0 {
					pushes[m][f] = append(pushes[m][f], i)
				} else {
					pops[m][f] = append(pops[m][f], i)
				}
			}
		}
	}
	var out [][3]int
	for m := isa.ModLoad; m < isa.NumModules; m++ {
		if m+1 < isa.NumModules {
			for k, i := range pushes[m][0] {
				out = append(out, [3]int{i, pops[m+1][1][k], 0})
			}
		}
		if m > isa.ModLoad {
			for k, i := range pushes[m][2] {
				out = append(out, [3]int{i, pops[m-1][3][k], 2})
			}
		}
	}
	return out
}

// flag reads flag f: 0 push_next, 1 pop_prev, 2 push_prev, 3 pop_next.
func flag(in *isa.Inst, f int) bool {
	return [...]bool{in.PushNext, in.PopPrev, in.PushPrev, in.PopNext}[f]
}

func setFlag(in *isa.Inst, f int, v bool) {
	*[...]*bool{&in.PushNext, &in.PopPrev, &in.PushPrev, &in.PopNext}[f] = v
}
