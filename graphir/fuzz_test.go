package graphir_test

import (
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/internal/syntax/syntaxtest"
)

// graphLevel is the graph level for the text checks shared with the
// tensor IR (internal/syntax/syntaxtest); unregistered ops verify.
var graphLevel = syntaxtest.Level[*graphir.Module]{
	Ext:   ".mlir",
	Parse: graphir.ParseString,
	Print: graphir.Print,
	Verify: func(m *graphir.Module) error {
		return graphir.VerifyWith(m, graphir.VerifyOptions{AllowUnregistered: true})
	},
	PrintDebug: func(m *graphir.Module) string {
		return graphir.PrintWith(m, graphir.PrintOptions{Generic: true, DebugInfo: true})
	},
}

// FuzzParse feeds arbitrary text to the parser and verifier. Neither may
// panic; errors must be located; every accepted and verified module must
// print to text that parses back and prints identically, also from its
// generic form. The seed corpus (the round-trip and bad-input tables)
// runs in every `go test`.
func FuzzParse(f *testing.F) {
	syntaxtest.AddSeeds(f, maps.Values(roundTripCases),
		syntaxtest.Field(badInputs, func(c struct{ name, src, want string }) string { return c.src }))
	f.Fuzz(func(t *testing.T, src string) {
		m, out, ok := graphLevel.Fuzz(t, src)
		if !ok {
			return
		}
		gen := graphir.PrintWith(m, graphir.PrintOptions{Generic: true})
		m3, err := graphir.ParseString("fuzz3.mlir", gen)
		if err != nil {
			t.Fatalf("generic form does not parse: %v\n%s", err, gen)
		}
		if graphir.Print(m3) != out {
			t.Fatalf("generic form parses to a different module")
		}
	})
}

// chainModule returns a function of n ops alternating test.add and test.neg
// on tensor<4x4xf32>, in pretty form.
func chainModule(n int) string {
	var b strings.Builder
	b.WriteString("func.func @big(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {\n")
	prev := "%a"
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			fmt.Fprintf(&b, "  %%v%d = test.add %s, %%b : tensor<4x4xf32>\n", i, prev)
		} else {
			fmt.Fprintf(&b, "  %%v%d = \"test.neg\"(%s) : (tensor<4x4xf32>) -> tensor<4x4xf32>\n", i, prev)
		}
		prev = fmt.Sprintf("%%v%d", i)
	}
	fmt.Fprintf(&b, "  func.return %s : tensor<4x4xf32>\n}\n", prev)
	return b.String()
}

// BenchmarkParseVerify10k parses and verifies a 10,000-op module
// (the issue asks for under 1 s per iteration on the 2-core dev machine).
func BenchmarkParseVerify10k(b *testing.B) {
	graphLevel.BenchmarkParseVerify(b, chainModule(10000))
}

// BenchmarkPrint10k prints a 10,000-op module.
func BenchmarkPrint10k(b *testing.B) {
	m, err := graphir.ParseString("big.mlir", chainModule(10000))
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		_ = graphir.Print(m)
	}
}

func TestChainModuleVerifies(t *testing.T) {
	m := graphLevel.MustParse(t, chainModule(101))
	if n := m.Funcs[0].Entry().Len(); n != 102 {
		t.Fatalf("got %d ops", n)
	}
}
