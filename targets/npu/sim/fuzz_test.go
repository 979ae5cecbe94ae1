package sim

import (
	"strings"
	"testing"

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
