package isa

import (
	"bytes"
	"errors"
	"math/rand"
	"testing"

	"github.com/tessera-ml/tessera/internal/syntax"
)

// fuzzSeedPrograms are the hand-written test programs and a few random
// ones.
func fuzzSeedPrograms() []*Program {
	var ps []*Program
	for _, p := range handPrograms() {
		ps = append(ps, p)
	}
	r := rand.New(rand.NewSource(3))
	for i := 0; i < 20; i++ {
		ps = append(ps, randomProgram(r))
	}
	return ps
}

// FuzzAssemble: Assemble never panics; its errors are located
// diagnostics in the file; a program it returns encodes, and its text
// assembles to the same program and prints the same text.
func FuzzAssemble(f *testing.F) {
	f.Add(exampleText)
	for _, p := range fuzzSeedPrograms() {
		f.Add(p.String())
	}
	f.Fuzz(func(t *testing.T, src string) {
		p, err := Assemble("fuzz.s", []byte(src))
		if err != nil {
			var d *syntax.Diagnostic
			if !errors.As(err, &d) || d.Loc.File != "fuzz.s" || d.Loc.Line < 1 || d.Loc.Col < 1 {
				t.Fatalf("error is not a located diagnostic: %#v", err)
			}
			return
		}
		if _, err := p.MarshalBinary(); err != nil {
			t.Fatalf("assembled program does not encode: %v\n%s", err, src)
		}
		text := p.String()
		q, err := Assemble("fuzz2.s", []byte(text))
		if err != nil {
			t.Fatalf("printed text does not assemble: %v\n%s", err, text)
		}
		if !equalPrograms(p, q) {
			t.Fatalf("round trip changed the program:\n%+v\n%+v\n%s", p, q, text)
		}
		if q.String() != text {
			t.Fatalf("printing is not stable:\n%s\n%s", text, q.String())
		}
	})
}

// FuzzDecodeProgram: UnmarshalBinary never panics; a program it decodes
// encodes to the same bytes and round-trips through its text form.
func FuzzDecodeProgram(f *testing.F) {
	for _, p := range fuzzSeedPrograms() {
		b, err := p.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var p Program
		if err := p.UnmarshalBinary(data); err != nil {
			return
		}
		b, err := p.MarshalBinary()
		if err != nil {
			t.Fatalf("decoded program does not encode: %v", err)
		}
		if !bytes.Equal(b, data) {
			t.Fatalf("re-encoding changed the bytes:\n%x\n%x", data, b)
		}
		q, err := Assemble("fuzz.s", []byte(p.String()))
		if err != nil {
			t.Fatalf("text of a decoded program does not assemble: %v\n%s", err, p.String())
		}
		if !equalPrograms(&p, q) {
			t.Fatalf("text round trip changed the program:\n%+v\n%+v", p, q)
		}
	})
}

// equalPrograms compares two programs, an empty list equal to nil.
func equalPrograms(p, q *Program) bool {
	if p.Datapath != q.Datapath || len(p.Insts) != len(q.Insts) || len(p.Uops) != len(q.Uops) {
		return false
	}
	for i := range p.Insts {
		if p.Insts[i] != q.Insts[i] {
			return false
		}
	}
	for i := range p.Uops {
		if p.Uops[i] != q.Uops[i] {
			return false
		}
	}
	return true
}

// FuzzParseConfig: the configuration loader refuses bad JSON and bad
// values with errors, never panics, and what it accepts validates.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(`{"name":"large","block_in":32,"block_out":32,"wgt_buffer_bytes":1048576}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"batch":0}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseConfig(data)
		if err == nil && c.Validate() != nil {
			t.Fatalf("ParseConfig accepted an invalid config %+v", c)
		}
	})
}
