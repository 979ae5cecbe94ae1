package syntax

import (
	"strconv"
	"strings"
	"sync"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// Location is a source position. The zero Location is unknown; a
// Location with a File but no Line names only a file.
type Location struct {
	File string
	Line int
	Col  int
}

// Known reports whether the location names a position (a line).
func (l Location) Known() bool { return l.Line > 0 }

// String renders file:line:col as diagnostics print it, the file alone
// when there is no line, or "<unknown>".
func (l Location) String() string {
	if !l.Known() {
		if l.File != "" {
			return l.File
		}
		return "<unknown>"
	}
	return l.File + ":" + strconv.Itoa(l.Line) + ":" + strconv.Itoa(l.Col)
}

// FormatLoc renders a location in MLIR syntax, as both levels print and
// parse it: loc("file":line:col), loc("file") for a file without a line,
// or loc(unknown). The file is an MLIR string literal (Quote).
func FormatLoc(l Location) string {
	switch {
	case l.Known():
		return "loc(" + Quote(l.File) + ":" + strconv.Itoa(l.Line) + ":" + strconv.Itoa(l.Col) + ")"
	case l.File != "":
		return "loc(" + Quote(l.File) + ")"
	}
	return "loc(unknown)"
}

// WriteLoc appends " loc(...)" (FormatLoc) to b when debugInfo is set:
// the trailing location of a printed op, statement or function.
func WriteLoc(b *strings.Builder, l Location, debugInfo bool) {
	if debugInfo {
		b.WriteString(" ")
		b.WriteString(FormatLoc(l))
	}
}

// Loc is the grammar of a location written in the text: loc("file":line:col),
// loc("file") or loc(unknown). A level declares its own named type over it
// (type pLoc syntax.Loc) so that participle's messages keep the level's
// rule name, and converts back to call Location.
type Loc struct {
	Pos     lexer.Position
	File    *string `parser:"'loc' '(' ( @String"`
	Line    int     `parser:"  ( ':' @Int"`
	Col     int     `parser:"    ':' @Int )?"`
	Unknown bool    `parser:"| @'unknown' ) ')'"`
}

// Location converts the parsed location: loc(unknown) is the zero
// Location, loc("file") one with a File only; the file is decoded with
// Unquote.
func (l *Loc) Location() Location {
	if l.Unknown {
		return Location{}
	}
	return Location{File: Unquote(*l.File), Line: l.Line, Col: l.Col}
}

// Source is the file a parse tree was read from. It turns participle
// positions into Locations and located errors for a level's builder.
type Source struct {
	File string
}

// At is the location of position p in the source.
func (s Source) At(p lexer.Position) Location {
	return Location{File: s.File, Line: p.Line, Col: p.Column}
}

// LocOr is the location written as l, or position p in the source when
// the text gives none (l is nil).
func (s Source) LocOr(l *Loc, p lexer.Position) Location {
	if l == nil {
		return s.At(p)
	}
	return l.Location()
}

// Errorf returns Diagnostics holding one error at position p with a
// fmt.Sprintf message.
func (s Source) Errorf(p lexer.Position, format string, args ...any) error {
	return Diagnostics{Errorf(s.At(p), format, args...)}
}

// locParser parses a location alone, built on first use.
var locParser = sync.OnceValue(func() *participle.Parser[Loc] { return NewParser[Loc](CoreLexer, 2) })

// ParseLocation decodes the text of one location as FormatLoc writes it
// and both levels read it: loc("file":line:col), loc("file") or
// loc(unknown), with whitespace and // comments around its tokens.
// ParseLocation(f, FormatLoc(l)) gives back l for every l whose line and
// column are not negative (a line of 0 prints as loc("file"), dropping
// the column). Errors are Diagnostics located at filename:line:col.
func ParseLocation(filename, text string) (Location, error) {
	l, err := Parse(locParser(), filename, []byte(text), nil)
	if err != nil {
		return Location{}, err
	}
	return l.Location(), nil
}

// ElidedHint completes the error of a tool that meets constant data
// elided from a printed module: what the user runs to keep it.
const ElidedHint = "was elided when printed (tessera-opt elides constants of more than 256 elements); print the module again with --print-large-constants"
