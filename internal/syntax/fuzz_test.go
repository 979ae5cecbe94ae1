package syntax_test

import (
	"strings"
	"testing"

	"github.com/tessera-ml/tessera/internal/syntax"
)

// FuzzLocation feeds arbitrary text to ParseLocation, the shared lexer
// core and the location grammar. Nothing may panic; errors must be
// located in the file; an accepted location must print (FormatLoc) to
// text that parses back to the same location and prints identically.
// Every string must also survive Quote and Unquote. The seeds run in
// every `go test`.
func FuzzLocation(f *testing.F) {
	for _, s := range []string{`loc("model.py":12:5)`, `loc("m")`, `loc(unknown)`, `loc("a\"b\\c\0A":1:2)`,
		`loc( "x" : 1 : 2 ) // c`, `loc("f":1)`, `loc(f)`, `loc("f`, "loc(\x00)", `loc("f":99999999999999999999:1)`, `%a @b 1.5e 0x`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if got := syntax.Unquote(syntax.Quote(text)); got != text {
			t.Fatalf("Unquote(Quote(%q)) = %q", text, got)
		}
		l, err := syntax.ParseLocation("fuzz.loc", text)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.loc:") {
				t.Fatalf("unlocated error: %v", err)
			}
			return
		}
		out := syntax.FormatLoc(l)
		l2, err := syntax.ParseLocation("fuzz2.loc", out)
		if err != nil {
			t.Fatalf("printed location %s does not parse: %v", out, err)
		}
		if again := syntax.FormatLoc(l2); again != out {
			t.Fatalf("print is not stable: %s vs %s", out, again)
		}
	})
}
