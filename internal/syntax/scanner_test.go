package syntax_test

import (
	"strings"
	"testing"

	"github.com/alecthomas/participle/v2/lexer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/internal/syntax"
)

// lex returns "Type:value" for each token of src (CoreLexer), or the
// lexical error.
func lex(t *testing.T, src string) ([]string, error) {
	t.Helper()
	l, err := syntax.CoreLexer.LexBytes("s.mlir", []byte(src))
	require.NoError(t, err)
	names := map[lexer.TokenType]string{}
	for k, v := range syntax.CoreLexer.Symbols() {
		names[v] = k
	}
	var out []string
	for {
		tok, err := l.Next()
		if err != nil {
			return out, err
		}
		if tok.EOF() {
			return out, nil
		}
		out = append(out, names[tok.Type]+":"+tok.Value)
	}
}

func TestCoreLexerTokens(t *testing.T) {
	toks, err := lex(t, "%x.1-a @f @\"q r\" \"s\\\"t\" 12 1.5e-3 2.0 0x7F // c\n f32 ( ) { } [ ] < > : , =")
	require.NoError(t, err)
	assert.Equal(t, []string{"ValueID:%x.1-a", "SymbolRef:@f", `SymbolRef:@"q r"`, `String:"s\"t"`,
		"Int:12", "Float:1.5e-3", "Float:2.0", "Hex:0x7F", "Ident:f32",
		"Punct:(", "Punct:)", "Punct:{", "Punct:}", "Punct:[", "Punct:]", "Punct:<", "Punct:>", "Punct::", "Punct:,", "Punct:="}, toks)
}

func TestCoreLexerErrors(t *testing.T) {
	cases := map[string]string{
		"%":      "s.mlir:1:1: expected a name after '%'",
		"@1":     "s.mlir:1:1: expected a symbol name after '@'",
		"\"ab":   "s.mlir:1:1: unterminated string literal",
		"\"a\nb": "s.mlir:1:1: unterminated string literal",
		"0x":     "s.mlir:1:1: expected hex digits after 0x",
		" \x7f":  "s.mlir:1:2: invalid character 0x7F in input",
		"\n  #":  "s.mlir:2:3: unexpected character '#'",
	}
	for src, want := range cases {
		_, err := lex(t, src)
		require.Error(t, err, "%q", src)
		assert.Equal(t, want, err.Error(), "%q", src)
	}
}

// The number rules are the levels' differences: a sign belongs to a
// graph-level number, and only the tensor level insists on exponent
// digits.
func TestNumberRules(t *testing.T) {
	num := func(src string, r syntax.NumberRules) (lexer.TokenType, string, error) {
		s := syntax.NewScanner("n", []byte(src))
		typ, n, err := s.Number(r)
		return typ, src[:n], err
	}
	typ, text, err := num("-1.5e+3x", syntax.NumberRules{Signed: true})
	assert.Equal(t, []any{syntax.Float, "-1.5e+3", nil}, []any{typ, text, err})
	typ, text, _ = num("-0x1", syntax.NumberRules{Signed: true})
	assert.Equal(t, []any{syntax.Int, "-0"}, []any{typ, text}, "hex literals are unsigned")
	typ, text, _ = num("1.0e", syntax.NumberRules{})
	assert.Equal(t, []any{syntax.Float, "1.0"}, []any{typ, text})
	_, _, err = num("1.0e+", syntax.NumberRules{StrictExponent: true})
	assert.EqualError(t, err, "expected exponent digits in float literal")
}

func TestScannerPositions(t *testing.T) {
	s := syntax.NewScanner("p", []byte("ab\n  // c\n\tx"))
	s.Advance(2)
	s.SkipSpaceAndComments()
	assert.Equal(t, lexer.Position{Filename: "p", Offset: 11, Line: 3, Column: 2}, s.Pos)
	assert.Equal(t, byte('x'), s.Peek(0))
	assert.Equal(t, byte(0), s.Peek(1))
	assert.False(t, s.AtEOF())
	_, err := syntax.CoreLexer.Lex("r", strings.NewReader("x"))
	assert.NoError(t, err)
}
