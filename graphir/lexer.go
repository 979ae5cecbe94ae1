package graphir

import (
	"fmt"
	"io"

	"github.com/alecthomas/participle/v2/lexer"
)

// textLexer tokenizes Tessera's MLIR-syntax text for the participle
// grammar in syntax.go. It is hand-written (rather than participle's
// regexp lexer) because lexing dominated parse time; the token classes
// are the ones documented on each tokXxx constant. Comments and
// whitespace are skipped. Shaped types (tensor<1x784xf32>) and dense
// literals (dense<...>) are single tokens, decoded by the builder.
var textLexer lexer.Definition = textLexerDef{}

const (
	tokEOF      = lexer.EOF
	tokDenseRes = lexer.EOF - 1 - iota // dense_resource<...>
	tokDense                           // dense<...>
	tokTensor                          // tensor<...>
	tokValueID                         // %name, %0#1
	tokSymbol                          // @name, @"quoted"
	tokBlockID                         // ^bb0
	tokString                          // "..." with escapes
	tokHex                             // 0x1F
	tokFloat                           // -1.5e3 (a '.' is required, as in MLIR)
	tokInt                             // -12
	tokArrow                           // ->
	tokIdent                           // graph.relu, f32, true
	tokPunct                           // ( ) { } [ ] < > : , =
	tokComment
	tokWhitespace
)

type textLexerDef struct{}

func (textLexerDef) Symbols() map[string]lexer.TokenType {
	return map[string]lexer.TokenType{
		"EOF": tokEOF, "DenseRes": tokDenseRes, "Dense": tokDense, "Tensor": tokTensor,
		"ValueID": tokValueID, "SymbolRef": tokSymbol, "BlockID": tokBlockID, "String": tokString,
		"Hex": tokHex, "Float": tokFloat, "Int": tokInt, "Arrow": tokArrow, "Ident": tokIdent,
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

type textScanner struct {
	src []byte
	off int
	pos lexer.Position
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

// advance moves past n bytes, tracking line and column.
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
	s.skipSpaceAndComments()
	start := s.pos
	if s.off >= len(s.src) {
		return lexer.EOFToken(start), nil
	}
	typ, n, err := s.scan()
	if err != nil {
		return lexer.Token{}, &lexer.Error{Msg: err.Error(), Pos: start}
	}
	tok := lexer.Token{Type: typ, Value: string(s.src[s.off : s.off+n]), Pos: start}
	s.advance(n)
	return tok, nil
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

// scan classifies the token at the cursor and returns its length.
func (s *textScanner) scan() (lexer.TokenType, int, error) {
	c := s.src[s.off]
	switch {
	case c == '%' || c == '^':
		n := s.run(1, isSuffixChar)
		if n == 1 {
			return 0, 0, fmt.Errorf("expected a name after '%c'", c)
		}
		if c == '^' {
			return tokBlockID, n, nil
		}
		if s.peek(n) == '#' && isDigit(s.peek(n+1)) {
			n = s.run(n+1, isDigit)
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
	case isDigit(c) || (c == '-' || c == '+') && isDigit(s.peek(1)):
		return s.number()
	case c == '-' && s.peek(1) == '>':
		return tokArrow, 2, nil
	case isIdentStart(c):
		n := s.run(0, isIdentChar)
		if s.peek(n) == '<' {
			switch string(s.src[s.off : s.off+n]) {
			case "tensor":
				return s.angled(n, tokTensor)
			case "dense":
				return s.angled(n, tokDense)
			case "dense_resource":
				return s.angled(n, tokDenseRes)
			}
		}
		return tokIdent, n, nil
	}
	switch c {
	case '(', ')', '{', '}', '[', ']', '<', '>', ':', ',', '=':
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

// angled returns the length of NAME<...> up to the first '>'.
func (s *textScanner) angled(n int, typ lexer.TokenType) (lexer.TokenType, int, error) {
	for i := s.off + n; i < len(s.src); i++ {
		if s.src[i] == '>' {
			return typ, i - s.off + 1, nil
		}
	}
	return 0, 0, fmt.Errorf("unterminated '%s<'", s.src[s.off:s.off+n])
}

// stringLen returns the length of the string literal starting at offset
// i (its opening quote), including both quotes.
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
	n := 0
	if c := s.peek(0); c == '-' || c == '+' {
		n = 1
	}
	if s.peek(n) == '0' && s.peek(n+1) == 'x' && n == 0 {
		m := s.run(2, isHexDigit)
		if m == 2 {
			return 0, 0, fmt.Errorf("expected hex digits after 0x")
		}
		return tokHex, m, nil
	}
	n = s.run(n, isDigit)
	if s.peek(n) != '.' {
		return tokInt, n, nil
	}
	n = s.run(n+1, isDigit)
	if e := s.peek(n); e == 'e' || e == 'E' {
		m := n + 1
		if c := s.peek(m); c == '-' || c == '+' {
			m++
		}
		if isDigit(s.peek(m)) {
			n = s.run(m, isDigit)
		}
	}
	return tokFloat, n, nil
}
