package syntax_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/internal/syntax"
)

func TestLocationString(t *testing.T) {
	assert.Equal(t, "m.mlir:3:7", syntax.Location{File: "m.mlir", Line: 3, Col: 7}.String())
	assert.Equal(t, "m.mlir", syntax.Location{File: "m.mlir"}.String())
	assert.Equal(t, "<unknown>", syntax.Location{}.String())
	assert.False(t, syntax.Location{File: "m.mlir"}.Known())
}

// The three location forms parse the same way at both levels and print
// back as written.
func TestParseLocationForms(t *testing.T) {
	cases := map[string]syntax.Location{
		`loc("model.py":12:5)`:  {File: "model.py", Line: 12, Col: 5},
		`loc("model.py")`:       {File: "model.py"},
		`loc(unknown)`:          {},
		`loc("a\"b\\c\0A":1:2)`: {File: "a\"b\\c\n", Line: 1, Col: 2},
	}
	for text, want := range cases {
		got, err := syntax.ParseLocation("l.mlir", text)
		require.NoError(t, err, text)
		assert.Equal(t, want, got, text)
		assert.Equal(t, text, syntax.FormatLoc(got))
	}
	got, err := syntax.ParseLocation("l.mlir", " loc( \"\\41\" // the file\n : 1 : 2 ) ")
	require.NoError(t, err)
	assert.Equal(t, syntax.Location{File: "A", Line: 1, Col: 2}, got, "hex escapes, spaces and comments")
}

func TestParseLocationErrors(t *testing.T) {
	cases := map[string]string{
		`loc("f":1)`:   `l.mlir:1:8: error: unexpected token ":" (expected ")")`,
		`loc(f)`:       `l.mlir:1:5: error: unexpected token "f" (expected ((<string> (":" <int> ":" <int>)?) | "unknown") ")")`,
		`loc("f`:       `l.mlir:1:5: error: unterminated string literal`,
		`loc("f") x`:   `l.mlir:1:10: error: unexpected token "x"`,
		"loc(\x01)":    `l.mlir:1:5: error: invalid character 0x01 in input`,
		`loc(unknown`:  `l.mlir:1:12: error: unexpected token end of file (expected ")")`,
		`loc("f":1:#)`: `l.mlir:1:11: error: unexpected character '#'`,
	}
	for text, want := range cases {
		_, err := syntax.ParseLocation("l.mlir", text)
		require.Error(t, err, text)
		assert.Equal(t, want, err.Error(), text)
		assert.Len(t, syntax.AsDiagnostics(err), 1)
	}
}

func TestQuoteUnquote(t *testing.T) {
	assert.Equal(t, `"a\"b\\\0A\C3\A9"`, syntax.Quote("a\"b\\\né"))
	for _, s := range []string{"", "plain", "tab\there", "\x00\xff", `\"`} {
		assert.Equal(t, s, syntax.Unquote(syntax.Quote(s)), "%q", s)
	}
	assert.Equal(t, "x", syntax.Unquote(`"\x"`), "an unknown escape is the character")
	assert.Equal(t, `"`, syntax.Unquote(`"`), "too short to be quoted")
}

func TestIsBareIDAndFormatFloat(t *testing.T) {
	assert.True(t, syntax.IsBareID("tir.for_2$x"))
	assert.False(t, syntax.IsBareID(""))
	assert.False(t, syntax.IsBareID("2x"))
	assert.False(t, syntax.IsBareID("a-b"))
	assert.Equal(t, "1.0", syntax.FormatFloat(1, 64))
	assert.Equal(t, "2.5e-08", syntax.FormatFloat(2.5e-8, 64))
	assert.Equal(t, "1.0e+30", syntax.FormatFloat(1e30, 64))
	assert.Equal(t, "0.1", syntax.FormatFloat(float64(float32(0.1)), 32))
}
