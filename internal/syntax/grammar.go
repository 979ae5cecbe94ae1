package syntax

import (
	"errors"
	"strings"

	"github.com/alecthomas/participle/v2"
	"github.com/alecthomas/participle/v2/lexer"
)

// The grammar pieces both levels share. participle names a rule after
// its Go type in syntax errors ("expected PDict"), so a level declares
// its own named types over these (type pDict syntax.Dict[pNamedAttr],
// type pNamedAttr syntax.NamedAttr[pAttr]) and its messages keep the
// level's names.

// Dict is the grammar of an attribute dictionary, { entry, ... }, whose
// entries are E (a level's NamedAttr).
type Dict[E any] struct {
	Pos     lexer.Position
	Entries []*E `parser:"'{' ( @@ ( ',' @@ )* )? '}'"`
}

// NamedAttr is the grammar of a dictionary entry: a name (an identifier
// or a quoted string, kept as written) and an optional '=' value of the
// level's attribute grammar V; an entry without a value is a unit
// attribute.
type NamedAttr[V any] struct {
	Pos   lexer.Position
	Name  string `parser:"( @Ident | @String )"`
	Value *V     `parser:"( '=' @@ )?"`
}

// List is the grammar of a bracketed list, [ elem, ... ], possibly
// empty: attribute arrays at both levels, the tensor level's strides.
type List[E any] struct {
	Pos   lexer.Position
	Elems []*E `parser:"'[' ( @@ ( ',' @@ )* )? ']'"`
}

// ConvertAll converts each parsed element with conv, in order, into a
// non-nil slice; it stops at and returns conv's first error.
func ConvertAll[E, T any](elems []*E, conv func(*E) (T, error)) ([]T, error) {
	out := make([]T, 0, len(elems))
	for _, e := range elems {
		v, err := conv(e)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// NewParser builds the participle parser of a level's grammar T over its
// lexer, with comments and whitespace elided and the given lookahead. It
// panics on a malformed grammar, as participle.MustBuild does.
func NewParser[T any](def lexer.Definition, lookahead int) *participle.Parser[T] {
	return participle.MustBuild[T](
		participle.Lexer(def),
		participle.Elide("Comment", "Whitespace"),
		participle.UseLookahead(lookahead),
	)
}

// eofName rewrites participle's name for the end of input.
var eofName = strings.NewReplacer(`"<EOF>"`, "end of file")

// Parse runs p on src and returns the parse tree. A syntax error is
// returned as Diagnostics holding one error at filename:line:col, whose
// message is participle's with "<EOF>" spelled "end of file" and then
// rewritten by names (participle's names for grammar rules to the text
// they stand for; nil for none). Any other error is located at the file.
func Parse[T any](p *participle.Parser[T], filename string, src []byte, names *strings.Replacer) (*T, error) {
	tree, err := p.ParseBytes(filename, src)
	if err == nil {
		return tree, nil
	}
	var perr participle.Error
	if !errors.As(err, &perr) {
		return nil, Diagnostics{Errorf(Location{File: filename}, "%v", err)}
	}
	msg := eofName.Replace(perr.Message())
	if names != nil {
		msg = names.Replace(msg)
	}
	pos := perr.Position()
	return nil, Diagnostics{Errorf(Location{File: filename, Line: pos.Line, Col: pos.Column}, "%s", msg)}
}
