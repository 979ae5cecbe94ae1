package graphir

import (
	"github.com/alecthomas/participle/v2/lexer"

	"github.com/tessera-ml/tessera/internal/syntax"
)

// The grammar of Tessera's MLIR-syntax text form, one parse-tree type
// per rule; locations, dictionaries and lists are the grammar shared with
// the tensor IR (internal/syntax). The parse tree is converted to IR by
// the builder in parser.go, which resolves SSA names, checks types and
// reports located errors.
type (
	pFile struct {
		Ops []*pOp `parser:"@@*"`
	}

	pOp struct {
		Pos     lexer.Position
		Results []*pResult `parser:"( @@ ( ',' @@ )* '=' )?"`
		Module  *pModule   `parser:"( @@"`
		Func    *pFunc     `parser:"| @@"`
		Generic *pGeneric  `parser:"| @@"`
		Custom  *pCustom   `parser:"| @@ )"`
		Loc     *pLoc      `parser:"@@?"`
	}

	pResult struct {
		Pos   lexer.Position
		Name  string `parser:"@ValueID"`
		Count *int   `parser:"( ':' @Int )?"`
	}

	pModule struct {
		Pos   lexer.Position
		Name  *string `parser:"'module' @SymbolRef?"`
		Attrs *pDict  `parser:"( 'attributes' @@ )?"`
		Ops   []*pOp  `parser:"'{' @@* '}'"`
	}

	pFunc struct {
		Pos     lexer.Position
		Private bool       `parser:"'func.func' @'private'?"`
		Name    string     `parser:"@SymbolRef"`
		Args    []*pArg    `parser:"'(' ( @@ ( ',' @@ )* )? ')'"`
		Results *pTypeList `parser:"( Arrow @@ )?"`
		Attrs   *pDict     `parser:"( 'attributes' @@ )?"`
		Body    *pRegion   `parser:"@@"`
	}

	pArg struct {
		Pos   lexer.Position
		Name  string `parser:"@ValueID ':'"`
		Type  *pType `parser:"@@"`
		Attrs *pDict `parser:"@@?"`
		Loc   *pLoc  `parser:"@@?"`
	}

	// pTypeList is `parser:"(T, ...)"` or a single T.
	pTypeList struct {
		Paren bool     `parser:"( @'('"`
		List  []*pType `parser:"  ( @@ ( ',' @@ )* )? ')'"`
		One   *pType   `parser:"| @@ )"`
	}

	pRegion struct {
		Pos    lexer.Position
		Ops    []*pOp    `parser:"'{' @@*"`
		Blocks []*pBlock `parser:"@@* '}'"`
	}

	pBlock struct {
		Pos   lexer.Position
		Label string  `parser:"@BlockID"`
		Args  []*pArg `parser:"( '(' ( @@ ( ',' @@ )* )? ')' )? ':'"`
		Ops   []*pOp  `parser:"@@*"`
	}

	pGeneric struct {
		Pos      lexer.Position
		Name     string     `parser:"@String"`
		Operands []*pUse    `parser:"'(' ( @@ ( ',' @@ )* )? ')'"`
		Regions  []*pRegion `parser:"( '(' @@ ( ',' @@ )* ')' )?"`
		Attrs    *pDict     `parser:"@@?"`
		Type     *pFuncType `parser:"':' @@"`
	}

	pUse struct {
		Pos  lexer.Position
		Name string `parser:"@ValueID"`
	}

	pCustom struct {
		Pos      lexer.Position
		Name     string        `parser:"@Ident"`
		Operands []*pCustomUse `parser:"( @@ ( ',' @@ )* )?"`
		Attrs    *pDict        `parser:"@@?"`
		Types    *pOpTypes     `parser:"( ':' @@ )?"`
	}

	// pCustomUse is an operand of a custom-form op; the negative lookahead
	// stops an operand-less op (func.return) from taking the results of the
	// next op ("%0 =" or "%0:2 =") as its operands.
	pCustomUse struct {
		Pos  lexer.Position
		Name string `parser:"@ValueID (?! '=' | ':' Int )"`
	}

	pOpTypes struct {
		Fn   *pFuncType `parser:"  @@"`
		List []*pType   `parser:"| @@ ( ',' @@ )*"`
	}

	pFuncType struct {
		Pos     lexer.Position
		Inputs  []*pType   `parser:"'(' ( @@ ( ',' @@ )* )? ')'"`
		Results *pTypeList `parser:"Arrow @@"`
	}

	pType struct {
		Pos    lexer.Position
		Tensor *string    `parser:"  @Tensor"`
		Fn     *pFuncType `parser:"| @@"`
		Name   *string    `parser:"| @Ident"`
	}

	// pDict and pNamedAttr are the shared attribute dictionary grammar
	// (internal/syntax) over this level's attribute values.
	pDict syntax.Dict[pNamedAttr]

	pNamedAttr syntax.NamedAttr[pAttr]

	// pArray is the shared list grammar, [ attr, ... ].
	pArray syntax.List[pAttr]

	pAttr struct {
		Pos   lexer.Position
		Dense *pDense  `parser:"  @@"`
		Array *pArray  `parser:"| @@"`
		Dict  *pDict   `parser:"| @@"`
		Str   *string  `parser:"| @String"`
		Unit  bool     `parser:"| @'unit'"`
		Bool  *string  `parser:"| @( 'true' | 'false' )"`
		Num   *pNumber `parser:"| @@"`
		Type  *pType   `parser:"| @@"`
	}

	pDense struct {
		Pos      lexer.Position
		Body     *string `parser:"( @Dense"`
		Resource *string `parser:"| @DenseRes )"`
		Type     *pType  `parser:"':' @@"`
	}

	pNumber struct {
		Pos  lexer.Position
		Text string `parser:"@( Float | Int | Hex )"`
		Type *pType `parser:"( ':' @@ )?"`
	}

	// pLoc is the shared location grammar: loc("file":line:col), loc("file")
	// or loc(unknown).
	pLoc syntax.Loc
)

var textParser = syntax.NewParser[pFile](textLexer, 2)

// Parse reads a module in Tessera's text form: MLIR generic op syntax,
// registered ops' pretty forms, func.func/func.return in their standard
// pretty form, and an optional enclosing `module { ... }` (or the generic
// "builtin.module"). The module is not verified; call Verify.
//
// Errors are Diagnostics located at filename:line:col: syntax errors,
// undefined or redefined SSA names, type mismatches between a value and
// the type written at its use, malformed types, attributes and locations.
func Parse(filename string, src []byte) (*Module, error) {
	tree, err := syntax.Parse(textParser, filename, src, nil)
	if err != nil {
		return nil, err
	}
	return (&builder{Source: syntax.Source{File: filename}}).file_(tree)
}

// ParseString is Parse for a string.
func ParseString(filename, src string) (*Module, error) { return Parse(filename, []byte(src)) }
