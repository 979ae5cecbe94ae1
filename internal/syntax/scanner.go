package syntax

import (
	"fmt"
	"io"

	"github.com/alecthomas/participle/v2/lexer"
)

// Token types both levels' lexers produce, named in participle grammars
// by the keys of Symbols. A level numbers its own token types down from
// LevelTokens.
const (
	EOF        = lexer.EOF
	ValueID    = lexer.EOF - 1 - iota // %name
	SymbolRef                         // @name, @"quoted"
	String                            // "..." with escapes
	Hex                               // 0x7F800000
	Float                             // -1.5e3, 2.0 (a '.' is required, as in MLIR)
	Int                               // 12
	Ident                             // graph.relu, tir.for, f32, true
	Punct                             // ( ) { } [ ] < > : , = and a level's operators
	Comment                           // elided: the lexers skip comments
	Whitespace                        // elided: the lexers skip whitespace
	// LevelTokens is the first token type free for a level's own tokens
	// (LevelTokens, LevelTokens-1, ...).
	LevelTokens
)

// Symbols returns the names of the shared token types for a level's
// lexer.Definition, with the level's own names added.
func Symbols(own map[string]lexer.TokenType) map[string]lexer.TokenType {
	m := map[string]lexer.TokenType{
		"EOF": EOF, "ValueID": ValueID, "SymbolRef": SymbolRef, "String": String,
		"Hex": Hex, "Float": Float, "Int": Int, "Ident": Ident,
		"Punct": Punct, "Comment": Comment, "Whitespace": Whitespace,
	}
	for k, v := range own {
		m[k] = v
	}
	return m
}

// Definition is a participle lexer.Definition (and BytesDefinition) for a
// level: its token symbols and how to make its lexer from a Scanner over
// the whole source.
type Definition struct {
	Tokens   map[string]lexer.TokenType
	NewLexer func(Scanner) lexer.Lexer
}

// Symbols returns the token symbols of the definition.
func (d Definition) Symbols() map[string]lexer.TokenType { return d.Tokens }

// Lex reads all of r and lexes it; the error is the reader's.
func (d Definition) Lex(filename string, r io.Reader) (lexer.Lexer, error) {
	src, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return d.LexBytes(filename, src)
}

// LexBytes lexes src; it never fails (lexical errors come from Next).
func (d Definition) LexBytes(filename string, src []byte) (lexer.Lexer, error) {
	return d.NewLexer(NewScanner(filename, src)), nil
}

// Scanner is the core of a hand-written lexer: the source, the cursor
// (Off, and Pos with its line and column) and the scanning steps both
// levels share. The scan methods look at the text at the cursor and
// return the length of a token there without moving; Advance moves past it.
type Scanner struct {
	Src []byte
	Off int
	Pos lexer.Position
}

// NewScanner returns a scanner at the start of src, line 1, column 1.
func NewScanner(filename string, src []byte) Scanner {
	return Scanner{Src: src, Pos: lexer.Position{Filename: filename, Line: 1, Column: 1}}
}

// Character classes of the token syntax.

// IsIdentStart reports whether c may start an identifier: [A-Za-z_].
func IsIdentStart(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }

// IsDigit reports whether c is [0-9].
func IsDigit(c byte) bool { return c >= '0' && c <= '9' }

// IsIdentChar reports whether c may continue an identifier: [A-Za-z0-9_$.].
func IsIdentChar(c byte) bool { return IsIdentStart(c) || IsDigit(c) || c == '$' || c == '.' }

// IsSuffixChar reports whether c may continue a %name: an identifier
// character or '-'.
func IsSuffixChar(c byte) bool { return IsIdentChar(c) || c == '-' }

// IsHexDigit reports whether c is [0-9A-Fa-f].
func IsHexDigit(c byte) bool { return IsDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// AtEOF reports whether the cursor is at the end of the source.
func (s *Scanner) AtEOF() bool { return s.Off >= len(s.Src) }

// Peek returns the byte i bytes past the cursor, or 0 past the end.
func (s *Scanner) Peek(i int) byte {
	if s.Off+i < len(s.Src) {
		return s.Src[s.Off+i]
	}
	return 0
}

// Advance moves the cursor past n bytes, tracking line and column.
func (s *Scanner) Advance(n int) {
	for _, c := range s.Src[s.Off : s.Off+n] {
		if c == '\n' {
			s.Pos.Line++
			s.Pos.Column = 1
		} else {
			s.Pos.Column++
		}
	}
	s.Off += n
	s.Pos.Offset = s.Off
}

// Run extends a token of length n over the following bytes that satisfy
// ok and returns the new length.
func (s *Scanner) Run(n int, ok func(byte) bool) int {
	for s.Off+n < len(s.Src) && ok(s.Src[s.Off+n]) {
		n++
	}
	return n
}

// SkipSpaceAndComments moves past spaces, tabs, newlines and // comments
// (to the end of the line).
func (s *Scanner) SkipSpaceAndComments() {
	for s.Off < len(s.Src) {
		switch c := s.Src[s.Off]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			s.Advance(1)
		case c == '/' && s.Peek(1) == '/':
			s.Advance(s.Run(2, func(c byte) bool { return c != '\n' }))
		default:
			return
		}
	}
}

// LexError is err, from a scan method, as participle's error for the
// token at start.
func LexError(start lexer.Position, err error) error {
	return &lexer.Error{Msg: err.Error(), Pos: start}
}

// NameLen returns the length of a name introduced by the sigil at the
// cursor (%name, ^bb0): the sigil and its suffix characters. The error
// is "expected a name after '%'" when none follows.
func (s *Scanner) NameLen() (int, error) {
	n := s.Run(1, IsSuffixChar)
	if n == 1 {
		return 0, fmt.Errorf("expected a name after '%c'", s.Peek(0))
	}
	return n, nil
}

// SymbolLen returns the length of the @symbol at the cursor: @name or
// @"quoted". The errors are an unterminated string and a missing name.
func (s *Scanner) SymbolLen() (int, error) {
	if s.Peek(1) == '"' {
		n, err := s.StringLen(1)
		return n + 1, err
	}
	if !IsIdentStart(s.Peek(1)) {
		return 0, fmt.Errorf("expected a symbol name after '@'")
	}
	return s.Run(1, IsIdentChar), nil
}

// StringLen returns the length of the string literal whose opening quote
// is i bytes past the cursor, both quotes included; a backslash escapes
// the next byte. The error is "unterminated string literal" at a newline
// or the end of the source.
func (s *Scanner) StringLen(i int) (int, error) {
	for j := s.Off + i + 1; j < len(s.Src); j++ {
		switch s.Src[j] {
		case '\\':
			j++
		case '\n':
			return 0, fmt.Errorf("unterminated string literal")
		case '"':
			return j - s.Off - i + 1, nil
		}
	}
	return 0, fmt.Errorf("unterminated string literal")
}

// NumberRules is a level's spelling of number literals.
type NumberRules struct {
	// Signed: a leading '+' or '-' is part of the literal (not of a hex
	// literal); otherwise the sign is an operator token.
	Signed bool
	// StrictExponent: a float's 'e' must be followed by digits (an error
	// otherwise); when false the literal ends before such an 'e'.
	StrictExponent bool
}

// Number returns the type (Int, Float or Hex) and length of the number
// literal at the cursor, which starts with a digit (or, with r.Signed, a
// sign and a digit). A float needs a '.'; hex is 0x and hex digits. The
// errors are missing hex digits and, with r.StrictExponent, missing
// exponent digits.
func (s *Scanner) Number(r NumberRules) (lexer.TokenType, int, error) {
	n := 0
	if c := s.Peek(0); r.Signed && (c == '-' || c == '+') {
		n = 1
	}
	if n == 0 && s.Peek(0) == '0' && s.Peek(1) == 'x' {
		m := s.Run(2, IsHexDigit)
		if m == 2 {
			return 0, 0, fmt.Errorf("expected hex digits after 0x")
		}
		return Hex, m, nil
	}
	n = s.Run(n, IsDigit)
	if s.Peek(n) != '.' {
		return Int, n, nil
	}
	return s.fraction(n+1, r)
}

// fraction scans the digits and exponent of a float after its '.'.
func (s *Scanner) fraction(n int, r NumberRules) (lexer.TokenType, int, error) {
	n = s.Run(n, IsDigit)
	if e := s.Peek(n); e != 'e' && e != 'E' {
		return Float, n, nil
	}
	m := n + 1
	if c := s.Peek(m); c == '-' || c == '+' {
		m++
	}
	switch {
	case IsDigit(s.Peek(m)):
		n = s.Run(m, IsDigit)
	case r.StrictExponent:
		return 0, 0, fmt.Errorf("expected exponent digits in float literal")
	}
	return Float, n, nil
}

// ScanCommon classifies the token at the cursor by the rules both levels
// share, after a level has tried its own: a %name, a number (spelled by
// r), an @symbol, a "string", an identifier, or one of the punctuation
// bytes ( ) { } [ ] < > : , =. Any other byte is an error: "invalid
// character 0xXX in input" for control and non-ASCII bytes, else
// "unexpected character 'c'".
func (s *Scanner) ScanCommon(r NumberRules) (lexer.TokenType, int, error) {
	c := s.Src[s.Off]
	switch {
	case c == '%':
		n, err := s.NameLen()
		return ValueID, n, err
	case IsDigit(c):
		return s.Number(r)
	case c == '@':
		n, err := s.SymbolLen()
		return SymbolRef, n, err
	case c == '"':
		n, err := s.StringLen(0)
		return String, n, err
	case IsIdentStart(c):
		return Ident, s.Run(0, IsIdentChar), nil
	}
	switch c {
	case '(', ')', '{', '}', '[', ']', '<', '>', ':', ',', '=':
		return Punct, 1, nil
	}
	if c < 0x20 || c >= 0x7f {
		return 0, 0, fmt.Errorf("invalid character 0x%02X in input", c)
	}
	return 0, 0, fmt.Errorf("unexpected character %q", c)
}

// Lexer is a participle lexer over the whole source whose tokens Scan
// classifies (a level's function, or ScanCommon's rules): Next skips
// whitespace and comments, returns the EOF token at the end, and
// otherwise the token Scan finds, or its error as a lexer error.
type Lexer struct {
	Scanner
	Scan func(*Scanner) (lexer.TokenType, int, error)
}

// Next returns the next token.
func (l *Lexer) Next() (lexer.Token, error) {
	l.SkipSpaceAndComments()
	start := l.Pos
	if l.AtEOF() {
		return lexer.EOFToken(start), nil
	}
	typ, n, err := l.Scan(&l.Scanner)
	if err != nil {
		return lexer.Token{}, LexError(start, err)
	}
	text := string(l.Src[l.Off : l.Off+n])
	l.Advance(n)
	return lexer.Token{Type: typ, Value: text, Pos: start}, nil
}

// CoreLexer lexes the shared tokens alone (ScanCommon, with unsigned
// numbers): enough for the shared grammar, as ParseLocation uses it.
var CoreLexer = Definition{
	Tokens: Symbols(nil),
	NewLexer: func(s Scanner) lexer.Lexer {
		return &Lexer{Scanner: s, Scan: func(s *Scanner) (lexer.TokenType, int, error) { return s.ScanCommon(NumberRules{}) }}
	},
}
