package tensorir_test

import (
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/tensorir"
)

// FuzzParse feeds arbitrary text to the parser, the verifier and the
// printer. None may panic; errors must be located; every accepted and
// verified module must print to text that parses back and prints
// identically. The seed corpus (every round-trip example, the README
// examples and the bad inputs) runs in every `go test`.
func FuzzParse(f *testing.F) {
	for _, src := range roundTripCases {
		f.Add(src)
	}
	for _, c := range badInputs {
		f.Add(c.src)
	}
	for _, c := range verifyErrorCases {
		f.Add(c.src)
	}
	for _, src := range readmeExamples(f) {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		m, err := tensorir.ParseString("fuzz.tir", src)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.tir:") {
				t.Fatalf("unlocated parse error: %v", err)
			}
			return
		}
		if err := tensorir.Verify(m); err != nil {
			if !strings.Contains(err.Error(), ": error: ") {
				t.Fatalf("malformed verifier error: %v", err)
			}
			return
		}
		out := tensorir.Print(m)
		m2, err := tensorir.ParseString("fuzz2.tir", out)
		if err != nil {
			t.Fatalf("printed module does not parse: %v\n%s", err, out)
		}
		if err := tensorir.Verify(m2); err != nil {
			t.Fatalf("printed module does not verify: %v\n%s", err, out)
		}
		if again := tensorir.Print(m2); again != out {
			t.Fatalf("print is not stable:\n%s\nvs\n%s", out, again)
		}
	})
}
