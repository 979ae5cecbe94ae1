package sim

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/targets/npu/isa"
)

// fuzzGEMM is the shape of the seed programs; its layout sizes the DRAM.
var fuzzGEMM = gemmShape{M: 32, N: 32, K: 32, Mt: 16, Nt: 16, Kt: 16}

// addSeeds adds the double-buffered GEMM's binary, with and without a
// dependency token.
func addSeeds(f *testing.F) {
	for _, drop := range []int{-1, 1} {
		b, err := gemmProgram(isa.DefaultConfig(), fuzzGEMM, drop).MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// decodeFuzz decodes data as a program (ok false: not one); programs with
// more than a million micro-op iterations are skipped (they are valid,
// only slow).
func decodeFuzz(t *testing.T, data []byte) (*isa.Program, bool) {
	var p isa.Program
	if err := p.UnmarshalBinary(data); err != nil {
		return nil, false
	}
	var work int64
	for i := range p.Insts {
		work += p.Insts[i].Iterations()
	}
	if work > 1e6 {
		t.Skip("too long to simulate in a fuzz iteration")
	}
	return &p, true
}

// FuzzRun decodes arbitrary bytes as a program and runs it on a small
// DRAM: the simulator must refuse bad programs with errors, never panic.
func FuzzRun(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if p, ok := decodeFuzz(t, data); ok {
			Run(isa.DefaultConfig(), p, make([]byte, fuzzGEMM.layout().size))
		}
	})
}

// FuzzInsertDeps decodes arbitrary bytes as a program and inserts its
// dependency tokens: isa.InsertDeps must refuse bad programs with errors,
// never panic, and the simulator must never find a missing dependency or
// a deadlock in a program it accepted.
func FuzzInsertDeps(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		p, ok := decodeFuzz(t, data)
		if !ok || isa.InsertDeps(isa.DefaultConfig(), p) != nil {
			return
		}
		_, err := Run(isa.DefaultConfig(), p, make([]byte, fuzzGEMM.layout().size))
		if err != nil && (strings.Contains(err.Error(), "missing dependency") || strings.Contains(err.Error(), "deadlock")) {
			t.Fatalf("after InsertDeps: %v\n%s", err, p)
		}
	})
}

// FuzzElideLoads decodes arbitrary bytes as a program: isa.ElideLoads
// must refuse bad programs with errors, never panic, and a program that
// runs after isa.InsertDeps (and LOADs nothing it STOREs, which the ISA
// leaves unordered) must compute the same DRAM image with its repeated
// LOADs elided.
func FuzzElideLoads(f *testing.F) {
	addSeeds(f)
	cfg := isa.DefaultConfig()
	f.Fuzz(func(t *testing.T, data []byte) {
		p, ok := decodeFuzz(t, data)
		if !ok || loadsStored(cfg, p) {
			return
		}
		q := cloneProgram(p)
		if _, err := isa.ElideLoads(cfg, q); err != nil {
			return
		}
		if isa.InsertDeps(cfg, p) != nil {
			return
		}
		want := patternDRAM(fuzzGEMM.layout().size)
		if _, err := Run(cfg, p, want); err != nil {
			return
		}
		require.NoError(t, isa.InsertDeps(cfg, q))
		got := patternDRAM(len(want))
		_, err := Run(cfg, q, got)
		require.NoError(t, err, "%s", q)
		require.Equal(t, want, got, "%s", q)
	})
}

func patternDRAM(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + 3)
	}
	return b
}

// loadsStored reports whether a LOAD of p reads DRAM bytes a STORE of p
// writes.
func loadsStored(cfg isa.Config, p *isa.Program) bool {
	for i := range p.Insts {
		for j := range p.Insts {
			a, b := &p.Insts[i], &p.Insts[j]
			if a.Op == isa.OpLoad && a.Mem != isa.MemUop && b.Op == isa.OpStore &&
				int64(a.DRAMBase) < b.DRAMEnd(cfg) && int64(b.DRAMBase) < a.DRAMEnd(cfg) {
				return true
			}
		}
	}
	return false
}
