package sim

import (
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/targets/npu/isa"
)

// FuzzRun decodes arbitrary bytes as a program and runs it on a small
// DRAM: the simulator must refuse bad programs with errors, never panic.
// Programs with more than a million micro-op iterations are skipped (they
// are valid, only slow).
func FuzzRun(f *testing.F) {
	cfg := isa.DefaultConfig()
	g := gemmShape{M: 32, N: 32, K: 32, Mt: 16, Nt: 16, Kt: 16}
	for _, drop := range []int{-1, 1} {
		b, err := gemmProgram(cfg, g, drop).MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p isa.Program
		if err := p.UnmarshalBinary(data); err != nil {
			return
		}
		var work int64
		for i := range p.Insts {
			work += p.Insts[i].Iterations()
		}
		if work > 1e6 {
			t.Skip("too long to simulate in a fuzz iteration")
		}
		Run(cfg, &p, make([]byte, g.layout().size))
	})
}

// FuzzInsertDeps decodes arbitrary bytes as a program and inserts its
// dependency tokens: isa.InsertDeps must refuse bad programs with errors,
// never panic, and the simulator must never find a missing dependency or
// a deadlock in a program it accepted.
func FuzzInsertDeps(f *testing.F) {
	cfg := isa.DefaultConfig()
	g := gemmShape{M: 32, N: 32, K: 32, Mt: 16, Nt: 16, Kt: 16}
	for _, drop := range []int{-1, 1} {
		b, err := gemmProgram(cfg, g, drop).MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p isa.Program
		if err := p.UnmarshalBinary(data); err != nil {
			return
		}
		var work int64
		for i := range p.Insts {
			work += p.Insts[i].Iterations()
		}
		if work > 1e6 {
			t.Skip("too long to simulate in a fuzz iteration")
		}
		if err := isa.InsertDeps(cfg, &p); err != nil {
			return
		}
		_, err := Run(cfg, &p, make([]byte, g.layout().size))
		if err != nil && (strings.Contains(err.Error(), "missing dependency") || strings.Contains(err.Error(), "deadlock")) {
			t.Fatalf("after InsertDeps: %v\n%s", err, &p)
		}
	})
}
