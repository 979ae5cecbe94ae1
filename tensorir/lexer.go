package tensorir

import (
	"fmt"
	"io"

	"github.com/alecthomas/participle/v2/lexer"
)

// textLexer tokenizes the tensor IR text form for the participle grammar
// in syntax.go. It is hand-written for speed and because buffer types
// need their own lexer state: inside `buffer<...>` a shape such as
// 128x64xf32 lexes as Int 'x' Int 'x' Ident, and a symbolic dimension is
// a parenthesized expression, `buffer<(%n)x64xf32>`, lexed normally up to
// its closing parenthesis. Comments (// to end of line) and whitespace are
// skipped.
var textLexer lexer.Definition = textLexerDef{}

const (
	tokEOF     = lexer.EOF
	tokValueID = lexer.EOF - 1 - iota // %name
	tokSymbol                         // @name, @"quoted"
	tokString                         // "..." with Go escapes
	tokHex                            // 0x7F800000
	tokFloat                          // 1.5, 2.0e-3 (a '.' is required)
	tokInt                            // 12 (a sign is an operator token)
	tokIdent                          // tir.for, f32, threadIdx.x
	tokPunct                          // ( ) { } [ ] < > : , = + - * / ! == != <= >= && ||
	tokComment
	tokWhitespace
)

type textLexerDef struct{}

func (textLexerDef) Symbols() map[string]lexer.TokenType {
	return map[string]lexer.TokenType{
		"EOF": tokEOF, "ValueID": tokValueID, "SymbolRef": tokSymbol, "String": tokString,
		"Hex": tokHex, "Float": tokFloat, "Int": tokInt, "Ident": tokIdent,
		"Punct": tokPunct, "Comment": tokComment, "Whitespace": tokWhitespace,
	}
}

func (d textLexerDef) Lex(filename string, r io.Reader) (lexer.Lexer, error) {
	src, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return d.LexBytes(filename, src)
}

func (textLexerDef) LexBytes(filename string, src []byte) (lexer.Lexer, error) {
	return &textScanner{src: src, pos: lexer.Position{Filename: filename, Line: 1, Column: 1}}, nil
}

// Lexer states.
const (
	stateNormal     = iota
	stateShapeStart // just after `buffer`, expecting '<'
	stateShape      // inside buffer<...> before the dtype
)

type textScanner struct {
	src   []byte
	off   int
	pos   lexer.Position
	state int
	depth int // parenthesis depth of a symbolic dimension
}

func isIdentStart(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentChar(c byte) bool  { return isIdentStart(c) || isDigit(c) || c == '$' || c == '.' }
func isSuffixChar(c byte) bool { return isIdentChar(c) || c == '-' }
func isHexDigit(c byte) bool   { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func (s *textScanner) peek(i int) byte {
	if s.off+i < len(s.src) {
		return s.src[s.off+i]
	}
	return 0
}

func (s *textScanner) advance(n int) {
	for _, c := range s.src[s.off : s.off+n] {
		if c == '\n' {
			s.pos.Line++
			s.pos.Column = 1
		} else {
			s.pos.Column++
		}
	}
	s.off += n
	s.pos.Offset = s.off
}

func (s *textScanner) Next() (lexer.Token, error) {
	if s.state != stateShape || s.depth > 0 {
		s.skipSpaceAndComments()
	}
	start := s.pos
	if s.off >= len(s.src) {
		return lexer.EOFToken(start), nil
	}
	var typ lexer.TokenType
	var n int
	var err error
	if s.state == stateShape && s.depth == 0 {
		typ, n, err = s.scanShape()
	} else {
		typ, n, err = s.scan()
	}
	if err != nil {
		return lexer.Token{}, &lexer.Error{Msg: err.Error(), Pos: start}
	}
	text := string(s.src[s.off : s.off+n])
	s.transition(typ, text)
	tok := lexer.Token{Type: typ, Value: text, Pos: start}
	s.advance(n)
	return tok, nil
}

// transition updates the shape state after a token.
func (s *textScanner) transition(typ lexer.TokenType, text string) {
	switch s.state {
	case stateNormal:
		if typ == tokIdent && text == "buffer" && s.peek(len(text)) == '<' {
			s.state = stateShapeStart
		}
	case stateShapeStart:
		s.state = stateShape
	case stateShape:
		if s.depth > 0 {
			switch text {
			case "(":
				s.depth++
			case ")":
				s.depth--
			}
			return
		}
		switch {
		case text == "(":
			s.depth = 1
		case typ == tokIdent && text != "x":
			s.state = stateNormal // the dtype ends the shape
		case typ != tokInt && text != "x" && text != ")":
			s.state = stateNormal
		}
	}
}

// scanShape lexes inside buffer<...>: digits, 'x', '(' and the dtype.
func (s *textScanner) scanShape() (lexer.TokenType, int, error) {
	c := s.src[s.off]
	switch {
	case isDigit(c):
		return tokInt, s.run(0, isDigit), nil
	case c == 'x':
		return tokPunct, 1, nil
	case c == '(':
		return tokPunct, 1, nil
	case isIdentStart(c):
		return tokIdent, s.run(0, func(c byte) bool { return isIdentStart(c) || isDigit(c) }), nil
	}
	s.state = stateNormal
	s.skipSpaceAndComments()
	if s.off >= len(s.src) {
		return 0, 0, fmt.Errorf("unterminated buffer type")
	}
	return s.scan()
}

func (s *textScanner) skipSpaceAndComments() {
	for s.off < len(s.src) {
		switch c := s.src[s.off]; {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			s.advance(1)
		case c == '/' && s.peek(1) == '/':
			n := 2
			for s.off+n < len(s.src) && s.src[s.off+n] != '\n' {
				n++
			}
			s.advance(n)
		default:
			return
		}
	}
}

func (s *textScanner) scan() (lexer.TokenType, int, error) {
	c := s.src[s.off]
	switch {
	case c == '%':
		n := s.run(1, isSuffixChar)
		if n == 1 {
			return 0, 0, fmt.Errorf("expected a name after '%%'")
		}
		return tokValueID, n, nil
	case c == '@':
		if s.peek(1) == '"' {
			n, err := s.stringLen(1)
			return tokSymbol, n + 1, err
		}
		if !isIdentStart(s.peek(1)) {
			return 0, 0, fmt.Errorf("expected a symbol name after '@'")
		}
		return tokSymbol, s.run(1, isIdentChar), nil
	case c == '"':
		n, err := s.stringLen(0)
		return tokString, n, err
	case isDigit(c):
		return s.number()
	case isIdentStart(c):
		return tokIdent, s.run(0, isIdentChar), nil
	}
	two := string([]byte{c, s.peek(1)})
	switch two {
	case "==", "!=", "<=", ">=", "&&", "||":
		return tokPunct, 2, nil
	}
	switch c {
	case '(', ')', '{', '}', '[', ']', '<', '>', ':', ',', '=', '+', '-', '*', '/', '!':
		return tokPunct, 1, nil
	}
	if c < 0x20 || c >= 0x7f {
		return 0, 0, fmt.Errorf("invalid character 0x%02X in input", c)
	}
	return 0, 0, fmt.Errorf("unexpected character %q", c)
}

func (s *textScanner) run(n int, ok func(byte) bool) int {
	for s.off+n < len(s.src) && ok(s.src[s.off+n]) {
		n++
	}
	return n
}

func (s *textScanner) stringLen(i int) (int, error) {
	for j := s.off + i + 1; j < len(s.src); j++ {
		switch s.src[j] {
		case '\\':
			j++
		case '\n':
			return 0, fmt.Errorf("unterminated string literal")
		case '"':
			return j - s.off - i + 1, nil
		}
	}
	return 0, fmt.Errorf("unterminated string literal")
}

func (s *textScanner) number() (lexer.TokenType, int, error) {
	if s.peek(0) == '0' && s.peek(1) == 'x' {
		m := s.run(2, isHexDigit)
		if m == 2 {
			return 0, 0, fmt.Errorf("expected hex digits after 0x")
		}
		return tokHex, m, nil
	}
	n := s.run(0, isDigit)
	if s.peek(n) != '.' {
		return tokInt, n, nil
	}
	n = s.run(n+1, isDigit)
	if e := s.peek(n); e == 'e' || e == 'E' {
		m := n + 1
		if c := s.peek(m); c == '-' || c == '+' {
			m++
		}
		if !isDigit(s.peek(m)) {
			return 0, 0, fmt.Errorf("expected exponent digits in float literal")
		}
		n = s.run(m, isDigit)
	}
	return tokFloat, n, nil
}
