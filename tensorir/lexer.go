package tensorir

import (
	"fmt"

	"github.com/alecthomas/participle/v2/lexer"

	"github.com/tessera-ml/tessera/internal/syntax"
)

// textLexer tokenizes the tensor IR text form for the participle grammar
// in syntax.go. It is hand-written for speed, on the scanner core shared
// with the graph level (internal/syntax: its token types ValueID,
// SymbolRef, String, Hex, Float, Int, Ident and Punct), and adds what is
// the tensor level's own: the expression operators (+ - * / ! == != <=
// >= && ||, all Punct; a sign is an operator, not part of a number) and
// the lexer state of buffer types. Inside `buffer<...>` a shape such as
// 128x64xf32 lexes as Int 'x' Int 'x' Ident, and a symbolic dimension is
// a parenthesized expression, `buffer<(%n)x64xf32>`, lexed normally up to
// its closing parenthesis. Comments (// to end of line) and whitespace
// are skipped.
var textLexer = syntax.Definition{
	Tokens:   syntax.Symbols(nil),
	NewLexer: func(s syntax.Scanner) lexer.Lexer { return &textScanner{Scanner: s} },
}

// tensorNumbers: numbers are unsigned, and a float's exponent needs
// digits.
var tensorNumbers = syntax.NumberRules{StrictExponent: true}

// Lexer states.
const (
	stateNormal     = iota
	stateShapeStart // just after `buffer`, expecting '<'
	stateShape      // inside buffer<...> before the dtype
)

type textScanner struct {
	syntax.Scanner
	state int
	depth int // parenthesis depth of a symbolic dimension
}

func (s *textScanner) Next() (lexer.Token, error) {
	inShape := s.state == stateShape && s.depth == 0
	if !inShape {
		s.SkipSpaceAndComments()
	}
	start := s.Pos
	if s.AtEOF() {
		return lexer.EOFToken(start), nil
	}
	var typ lexer.TokenType
	var n int
	var err error
	if inShape {
		typ, n, err = s.scanShape()
	} else {
		typ, n, err = s.scan()
	}
	if err != nil {
		return lexer.Token{}, syntax.LexError(start, err)
	}
	text := string(s.Src[s.Off : s.Off+n])
	s.transition(typ, text)
	s.Advance(n)
	return lexer.Token{Type: typ, Value: text, Pos: start}, nil
}

// transition updates the shape state after the token typ, text at the
// cursor.
func (s *textScanner) transition(typ lexer.TokenType, text string) {
	switch s.state {
	case stateNormal:
		if typ == syntax.Ident && text == "buffer" && s.Peek(len(text)) == '<' {
			s.state = stateShapeStart
		}
	case stateShapeStart:
		s.state = stateShape
	case stateShape:
		s.shapeTransition(typ, text)
	}
}

// shapeTransition tracks a symbolic dimension's parentheses and ends the
// shape at the dtype (or any token that cannot continue a shape).
func (s *textScanner) shapeTransition(typ lexer.TokenType, text string) {
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
	case typ == syntax.Ident && text != "x":
		s.state = stateNormal // the dtype ends the shape
	case typ != syntax.Int && text != "x" && text != ")":
		s.state = stateNormal
	}
}

// scanShape lexes inside buffer<...>: digits, 'x', '(' and the dtype.
func (s *textScanner) scanShape() (lexer.TokenType, int, error) {
	c := s.Src[s.Off]
	switch {
	case syntax.IsDigit(c):
		return syntax.Int, s.Run(0, syntax.IsDigit), nil
	case c == 'x' || c == '(':
		return syntax.Punct, 1, nil
	case syntax.IsIdentStart(c):
		return syntax.Ident, s.Run(0, isDTypeChar), nil
	}
	s.state = stateNormal
	s.SkipSpaceAndComments()
	if s.AtEOF() {
		return 0, 0, fmt.Errorf("unterminated buffer type")
	}
	return s.scan()
}

// isDTypeChar reports whether c may continue a dtype in a shape, where
// '.' and '$' end it: [A-Za-z0-9_].
func isDTypeChar(c byte) bool { return syntax.IsIdentStart(c) || syntax.IsDigit(c) }

// scan classifies the token at the cursor and returns its length: an
// operator, or a shared token (%names without #N, unsigned numbers).
func (s *textScanner) scan() (lexer.TokenType, int, error) {
	if n := operatorLen(s.Src[s.Off], s.Peek(1)); n > 0 {
		return syntax.Punct, n, nil
	}
	return s.ScanCommon(tensorNumbers)
}

// operatorLen returns the length of the expression operator starting with
// c, d (== != <= >= && || or one of + - * / !), or 0.
func operatorLen(c, d byte) int {
	switch {
	case d == '=' && (c == '=' || c == '!' || c == '<' || c == '>'), c == '&' && d == '&', c == '|' && d == '|':
		return 2
	}
	switch c {
	case '+', '-', '*', '/', '!':
		return 1
	}
	return 0
}
