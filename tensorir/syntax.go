package tensorir

import (
	"github.com/alecthomas/participle/v2/lexer"

	"github.com/tessera-ml/tessera/internal/syntax"
)

// The grammar of the tensor IR text form (README.md documents it with
// examples). The parse tree (p* structs) is converted to IR by parser.go,
// which resolves names, computes ranges and reports located errors.

type pFile struct {
	Funcs []*pFunc `parser:"@@*"`
}

type pFunc struct {
	Pos    lexer.Position
	Name   string    `parser:"'tir.func' @SymbolRef"`
	Params []*pParam `parser:"'(' ( @@ ( ',' @@ )* )? ')'"`
	Attrs  *pDict    `parser:"( 'attributes' @@ )?"`
	Body   *pBody    `parser:"@@"`
	Loc    *pLoc     `parser:"@@?"`
}

type pParam struct {
	Pos    lexer.Position
	Role   *string   `parser:"@( 'out' | 'inout' | 'in' )?"`
	Name   string    `parser:"@ValueID ':'"`
	Buffer *pBufType `parser:"( @@"`
	Scalar *string   `parser:"| @Ident )"`
	Loc    *pLoc     `parser:"@@?"`
}

type pBufType struct {
	Pos   lexer.Position
	Dims  []*pDim    `parser:"'buffer' '<' ( @@ 'x' )*"`
	DType string     `parser:"@Ident"`
	Opts  []*pBufOpt `parser:"( ',' @@ )* '>'"`
}

type pDim struct {
	Pos  lexer.Position
	Int  *string `parser:"  @Int"`
	Expr *pExpr  `parser:"| '(' @@ ')'"`
}

type pBufOpt struct {
	Pos     lexer.Position
	Scope   *string   `parser:"  @String"`
	Strides *pExprs   `parser:"| 'strides' '=' @@"`
	Offset  *pPrimary `parser:"| 'offset' '=' @@"`
	Align   *string   `parser:"| 'align' '=' @Int"`
}

type pBody struct {
	Pos   lexer.Position
	Stmts []*pStmt `parser:"'{' @@* '}'"`
}

type pStmt struct {
	Pos      lexer.Position
	For      *pFor      `parser:"( @@"`
	Block    *pBlock    `parser:"| @@"`
	If       *pIf       `parser:"| @@"`
	Let      *pLet      `parser:"| @@"`
	Allocate *pAllocate `parser:"| @@"`
	Const    *pConst    `parser:"| @@"`
	Arena    *pArena    `parser:"| @@"`
	Call     *pCallK    `parser:"| @@"`
	Evaluate *pExpr     `parser:"| 'tir.evaluate' @@"`
	Barrier  bool       `parser:"| @'tir.barrier'"`
	Store    *pStore    `parser:"| @@ )"`
	Loc      *pLoc      `parser:"@@?"`
}

type pFor struct {
	Pos    lexer.Position
	Var    string  `parser:"'tir.for' @ValueID '='"`
	Lo     *pExpr  `parser:"@@ 'to'"`
	Hi     *pExpr  `parser:"@@"`
	Kind   *string `parser:"( @( 'serial' | 'parallel' | 'vectorized' | 'unrolled' )"`
	Thread *string `parser:"| 'thread_binding' '(' @String ')' )?"`
	Annots *pDict  `parser:"( 'annotations' @@ )?"`
	Body   *pBody  `parser:"@@"`
}

type pBlock struct {
	Pos    lexer.Position
	Name   string      `parser:"'tir.block' @String"`
	Iters  []*pIterVar `parser:"'(' ( @@ ( ',' @@ )* )? ')'"`
	Where  *pExpr      `parser:"( 'where' '(' @@ ')' )?"`
	Reads  []*pRegion  `parser:"( 'reads' '(' ( @@ ( ',' @@ )* )? ')' )?"`
	Writes []*pRegion  `parser:"( 'writes' '(' ( @@ ( ',' @@ )* )? ')' )?"`
	Allocs []*pBufDecl `parser:"( 'alloc' '(' ( @@ ( ',' @@ )* )? ')' )?"`
	Annots *pDict      `parser:"( 'annotations' @@ )?"`
	Init   *pBody      `parser:"'{' ( 'tir.init' @@ )?"`
	Stmts  []*pStmt    `parser:"@@* '}'"`
}

type pIterVar struct {
	Pos   lexer.Position
	Name  string `parser:"@ValueID '='"`
	Kind  string `parser:"@( 'spatial' | 'reduce' ) '('"`
	Lo    *pExpr `parser:"@@ ':'"`
	Hi    *pExpr `parser:"@@"`
	Value *pExpr `parser:"( ',' @@ )? ')'"`
}

type pRegion struct {
	Pos    lexer.Position
	Buffer string    `parser:"@ValueID '['"`
	Dims   []*pRange `parser:"( @@ ( ',' @@ )* )? ']'"`
}

type pRange struct {
	Pos lexer.Position
	Lo  *pExpr `parser:"@@"`
	Hi  *pExpr `parser:"( ':' @@ )?"`
}

type pBufDecl struct {
	Pos  lexer.Position
	Name string    `parser:"@ValueID ':'"`
	Type *pBufType `parser:"@@"`
}

type pIf struct {
	Pos  lexer.Position
	Cond *pExpr `parser:"'tir.if' @@"`
	Then *pBody `parser:"@@"`
	Else *pBody `parser:"( 'else' @@ )?"`
}

type pLet struct {
	Pos   lexer.Position
	Var   string `parser:"'tir.let' @ValueID '='"`
	Value *pExpr `parser:"@@"`
	Body  *pBody `parser:"@@"`
}

type pAllocate struct {
	Pos  lexer.Position
	Name string    `parser:"'tir.allocate' @ValueID ':'"`
	Type *pBufType `parser:"@@"`
	Body *pBody    `parser:"@@"`
}

type pConst struct {
	Pos    lexer.Position
	Name   string        `parser:"'tir.constant' @ValueID ':'"`
	Type   *pBufType     `parser:"@@ '='"`
	Elided bool          `parser:"( @( 'dense_resource' '<' '__elided__' '>' )"`
	Dense  bool          `parser:"| ( @'dense' '<' '['"`
	Elems  []*pConstElem `parser:"    ( @@ ( ',' @@ )* )? ']' '>' ) )"`
	Body   *pBody        `parser:"@@"`
}

type pConstElem struct {
	Pos  lexer.Position
	Neg  bool   `parser:"@'-'?"`
	Text string `parser:"@( Float | Int | Hex )"`
}

type pArena struct {
	Pos  lexer.Position
	Size *pDim        `parser:"'tir.arena' @@ '('"`
	Bufs []*pArenaBuf `parser:"( @@ ( ',' @@ )* )? ')'"`
	Body *pBody       `parser:"@@"`
}

type pArenaBuf struct {
	Pos    lexer.Position
	Name   string    `parser:"@ValueID ':'"`
	Type   *pBufType `parser:"@@"`
	Offset *pDim     `parser:"'at' @@"`
}

type pCallK struct {
	Pos    lexer.Position
	Callee string   `parser:"'tir.call' @SymbolRef '('"`
	Args   []string `parser:"( @ValueID ( ',' @ValueID )* )? ')'"`
}

type pStore struct {
	Pos     lexer.Position
	Buffer  string   `parser:"@ValueID '['"`
	Indices []*pExpr `parser:"( @@ ( ',' @@ )* )? ']' '='"`
	Value   *pExpr   `parser:"@@"`
}

// An expression is a flat list of operands and binary operators; the
// builder applies precedence (|| < && < comparisons < + - < * /, all
// left-associative except comparisons, which do not chain), which keeps
// the parse tree shallow and the parser fast.

type pExpr struct {
	Pos  lexer.Position
	Left *pUnary     `parser:"@@"`
	Rest []*pOpUnary `parser:"@@*"`
}

type pOpUnary struct {
	Pos   lexer.Position
	Op    string  `parser:"@( '||' | '&&' | '==' | '!=' | '<=' | '>=' | '<' | '>' | '+' | '-' | '*' | '/' )"`
	Right *pUnary `parser:"@@"`
}

type pUnary struct {
	Pos  lexer.Position
	Not  *pUnary   `parser:"  '!' @@"`
	Prim *pPrimary `parser:"| @@"`
}

type pPrimary struct {
	Pos   lexer.Position
	Num   *pNumber `parser:"  @@"`
	Bool  *string  `parser:"| @( 'true' | 'false' )"`
	Cast  *pCast   `parser:"| @@"`
	Call  *pCall   `parser:"| @@"`
	Ref   *pRef    `parser:"| @@"`
	Paren *pExpr   `parser:"| '(' @@ ')'"`
}

type pNumber struct {
	Pos   lexer.Position
	Neg   bool    `parser:"@'-'?"`
	Text  string  `parser:"@( Float | Int | Hex )"`
	DType *string `parser:"( ':' @Ident )?"`
}

type pCast struct {
	Pos   lexer.Position
	DType string `parser:"'cast' '<' @Ident '>'"`
	X     *pExpr `parser:"'(' @@ ')'"`
}

type pCall struct {
	Pos  lexer.Position
	Name string   `parser:"@Ident '('"`
	Args []*pExpr `parser:"( @@ ( ',' @@ )* )? ')'"`
}

type pRef struct {
	Pos     lexer.Position
	Name    string   `parser:"@ValueID"`
	Load    bool     `parser:"( @'['"`
	Indices []*pExpr `parser:"  ( @@ ( ',' @@ )* )? ']' )?"`
}

// pDict and pNamedAttr are the shared attribute dictionary grammar
// (internal/syntax) over this level's attribute values.
type pDict syntax.Dict[pNamedAttr]

type pNamedAttr syntax.NamedAttr[pAttr]

// pArray and pExprs are the shared list grammar, [ elem, ... ], of
// attributes and of expressions (strides).
type pArray syntax.List[pAttr]

type pExprs syntax.List[pExpr]

type pAttr struct {
	Pos   lexer.Position
	Array *pArray `parser:"  @@"`
	Str   *string `parser:"| @String"`
	Word  *string `parser:"| @( 'true' | 'false' | 'unit' | 'nan' )"`
	Neg   bool    `parser:"| @'-'?"`
	Num   *string `parser:"  @( Float | Int | 'inf' )"`
}

// pLoc is the shared location grammar: loc("file":line:col), loc("file")
// or loc(unknown), as at the graph level.
type pLoc syntax.Loc

var textParser = syntax.NewParser[pFile](textLexer, 4)
