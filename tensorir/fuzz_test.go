package tensorir_test

import (
	"maps"
	"slices"
	"testing"

	"github.com/tessera-ml/tessera/internal/syntax/syntaxtest"
	"github.com/tessera-ml/tessera/tensorir"
)

// tensorLevel is the tensor IR for the text checks shared with the graph
// level (internal/syntax/syntaxtest).
var tensorLevel = syntaxtest.Level[*tensorir.Module]{
	Ext:    ".tir",
	Parse:  tensorir.ParseString,
	Verify: tensorir.Verify,
	Print:  tensorir.Print,
	PrintDebug: func(m *tensorir.Module) string {
		return tensorir.PrintWith(m, tensorir.PrintOptions{DebugInfo: true})
	},
}

// FuzzParse feeds arbitrary text to the parser, the verifier and the
// printer. None may panic; errors must be located; every accepted and
// verified module must print to text that parses back, verifies and
// prints identically. The seed corpus (every round-trip example, the
// README examples, the bad inputs, the verifier's error cases and a
// symbolic host function) runs in
// every `go test`.
func FuzzParse(f *testing.F) {
	f.Add(symbolicHost)
	syntaxtest.AddSeeds(f, maps.Values(roundTripCases), slices.Values(readmeExamples(f)),
		syntaxtest.Field(badInputs, func(c badInput) string { return c.src }),
		syntaxtest.Field(verifyErrorCases, func(c verifyCase) string { return c.src }))
	f.Fuzz(func(t *testing.T, src string) { tensorLevel.Fuzz(t, src) })
}
