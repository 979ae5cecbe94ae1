package graphir

import (
	"fmt"

	"github.com/alecthomas/participle/v2/lexer"

	"github.com/tessera-ml/tessera/internal/syntax"
)

// textLexer tokenizes Tessera's MLIR-syntax text for the participle
// grammar in syntax.go. It is hand-written (rather than participle's
// regexp lexer) because lexing dominated parse time; it builds on the
// scanner core shared with the tensor IR (internal/syntax), whose token
// types (ValueID, SymbolRef, String, Hex, Float, Int, Ident, Punct) it
// adds to with the tokXxx constants below. Numbers may carry a sign.
// Shaped types (tensor<1x784xf32>) and dense literals (dense<...>) are
// single tokens, decoded by the builder.
var textLexer = syntax.Definition{
	Tokens: syntax.Symbols(map[string]lexer.TokenType{
		"DenseRes": tokDenseRes, "Dense": tokDense, "Tensor": tokTensor,
		"BlockID": tokBlockID, "Arrow": tokArrow,
	}),
	NewLexer: func(s syntax.Scanner) lexer.Lexer { return &syntax.Lexer{Scanner: s, Scan: scanToken} },
}

const (
	tokDenseRes = syntax.LevelTokens - iota // dense_resource<...>
	tokDense                                // dense<...>
	tokTensor                               // tensor<...>
	tokBlockID                              // ^bb0
	tokArrow                                // ->
)

// graphNumbers: a sign belongs to the number (-12, +1.5), and an 'e'
// without exponent digits ends a float.
var graphNumbers = syntax.NumberRules{Signed: true}

// scanToken classifies the token at the cursor and returns its length: the
// graph level's own tokens, then the shared ones.
func scanToken(s *syntax.Scanner) (lexer.TokenType, int, error) {
	c := s.Src[s.Off]
	switch {
	case c == '%' || c == '^':
		return scanName(s, c)
	case syntax.IsDigit(c) || (c == '-' || c == '+') && syntax.IsDigit(s.Peek(1)):
		return s.Number(graphNumbers)
	case c == '-' && s.Peek(1) == '>':
		return tokArrow, 2, nil
	case syntax.IsIdentStart(c):
		return scanIdent(s)
	}
	return s.ScanCommon(graphNumbers)
}

// scanName scans ^bb0 or %name, where %name#N (a result of a multi-result
// op) is one token.
func scanName(s *syntax.Scanner, sigil byte) (lexer.TokenType, int, error) {
	n, err := s.NameLen()
	if err != nil || sigil == '^' {
		return tokBlockID, n, err
	}
	if s.Peek(n) == '#' && syntax.IsDigit(s.Peek(n+1)) {
		n = s.Run(n+1, syntax.IsDigit)
	}
	return syntax.ValueID, n, nil
}

// scanIdent scans an identifier, or tensor<...>, dense<...> and
// dense_resource<...> as one token.
func scanIdent(s *syntax.Scanner) (lexer.TokenType, int, error) {
	n := s.Run(0, syntax.IsIdentChar)
	if s.Peek(n) == '<' {
		switch string(s.Src[s.Off : s.Off+n]) {
		case "tensor":
			return scanAngled(s, n, tokTensor)
		case "dense":
			return scanAngled(s, n, tokDense)
		case "dense_resource":
			return scanAngled(s, n, tokDenseRes)
		}
	}
	return syntax.Ident, n, nil
}

// scanAngled returns the length of NAME<...> up to the first '>'.
func scanAngled(s *syntax.Scanner, n int, typ lexer.TokenType) (lexer.TokenType, int, error) {
	for i := s.Off + n; i < len(s.Src); i++ {
		if s.Src[i] == '>' {
			return typ, i - s.Off + 1, nil
		}
	}
	return 0, 0, fmt.Errorf("unterminated '%s<'", s.Src[s.Off:s.Off+n])
}
