// Package syntaxtest holds the checks that both IR text levels (graphir
// and tensorir) run in their tests and parser fuzz targets: parse,
// verify, print, and parse the printed text again. It is for tests only.
package syntaxtest

import (
	"iter"
	"strings"
	"testing"
)

// Level is an IR text level under test: how to parse, verify and print
// its modules M, and the extension of its files (".mlir", ".tir"), from
// which the checks name their inputs (test.mlir, fuzz.mlir, fuzz2.mlir).
// PrintDebug prints a module in the other form it must parse back from
// with its locations (graphir: the generic form with locations; tensorir:
// the form with locations).
type Level[M any] struct {
	Ext        string
	Parse      func(filename, src string) (M, error)
	Verify     func(M) error
	Print      func(M) string
	PrintDebug func(M) string
}

// MustParse parses src as "test"+Ext and verifies it, failing t on an
// error.
func (l Level[M]) MustParse(t testing.TB, src string) M {
	t.Helper()
	m, err := l.Parse("test"+l.Ext, src)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	if err := l.Verify(m); err != nil {
		t.Fatalf("verify: %v", err)
	}
	return m
}

// RoundTrip checks that src parses and verifies (MustParse) and that
// print ∘ parse is the identity on its printed text, in both printed
// forms: Print(parse(Print(m))) == Print(m), the PrintDebug form parses
// back to a module that prints as Print(m), and PrintDebug of that module
// is the same text (locations are kept). It returns Print(m).
func (l Level[M]) RoundTrip(t testing.TB, src string) string {
	t.Helper()
	m := l.MustParse(t, src)
	out := l.Print(m)
	if again := l.Print(l.MustParse(t, out)); again != out {
		t.Fatalf("the printed form does not round-trip:\n%s\nvs\n%s", out, again)
	}
	dbg := l.PrintDebug(m)
	m2 := l.MustParse(t, dbg)
	if got := l.Print(m2); got != out {
		t.Fatalf("the debug form parses back to a different module:\n%s\nvs\n%s", out, got)
	}
	if again := l.PrintDebug(m2); again != dbg {
		t.Fatalf("locations are not kept:\n%s\nvs\n%s", dbg, again)
	}
	return out
}

// Fuzz is the body of a parser fuzz target; it must not panic on any
// src. A parse error must be located in the input file ("fuzz.mlir:..."),
// and a verifier error must be in MLIR's format ("...: error: ..."); then
// ok is false. A verified module must print to text that parses,
// verifies and prints identically; Fuzz returns the module and that text
// with ok true.
func (l Level[M]) Fuzz(t *testing.T, src string) (m M, out string, ok bool) {
	t.Helper()
	file := "fuzz" + l.Ext
	m, err := l.Parse(file, src)
	if err != nil {
		if !strings.HasPrefix(err.Error(), file+":") {
			t.Fatalf("unlocated parse error: %v", err)
		}
		return m, "", false
	}
	if err := l.Verify(m); err != nil {
		if !strings.Contains(err.Error(), ": error: ") {
			t.Fatalf("malformed verifier error: %v", err)
		}
		return m, "", false
	}
	out = l.Print(m)
	m2, err := l.Parse("fuzz2"+l.Ext, out)
	if err != nil {
		t.Fatalf("printed module does not parse: %v\n%s", err, out)
	}
	if err := l.Verify(m2); err != nil {
		t.Fatalf("printed module does not verify: %v\n%s", err, out)
	}
	if again := l.Print(m2); again != out {
		t.Fatalf("print is not stable:\n%s\nvs\n%s", out, again)
	}
	return m, out, true
}

// BenchmarkParseVerify times parsing and verifying src, reporting its
// size as the bytes processed.
func (l Level[M]) BenchmarkParseVerify(b *testing.B, src string) {
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		m, err := l.Parse("bench"+l.Ext, src)
		if err != nil {
			b.Fatal(err)
		}
		if err := l.Verify(m); err != nil {
			b.Fatal(err)
		}
	}
}

// AddSeeds adds every text of each sequence to f's seed corpus.
func AddSeeds(f *testing.F, seqs ...iter.Seq[string]) {
	for _, seq := range seqs {
		for src := range seq {
			f.Add(src)
		}
	}
}

// Field is the sequence of field(c) for each case in cases: the texts of
// a table of test cases.
func Field[C any](cases []C, field func(C) string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for _, c := range cases {
			if !yield(field(c)) {
				return
			}
		}
	}
}
