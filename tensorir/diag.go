package tensorir

import (
	"fmt"
	"strconv"
	"strings"
)

// Location is a source position, printed as loc("file":line:col). The
// zero Location is unknown.
type Location struct {
	File string
	Line int
	Col  int
}

// Known reports whether the location names a position.
func (l Location) Known() bool { return l.Line > 0 }

// String renders file:line:col, the file alone, or "<unknown>".
func (l Location) String() string {
	if !l.Known() {
		if l.File != "" {
			return l.File
		}
		return "<unknown>"
	}
	return l.File + ":" + strconv.Itoa(l.Line) + ":" + strconv.Itoa(l.Col)
}

// Diagnostic is a located error, printed MLIR-style as
// "file:line:col: error: message", followed by its notes
// ("file:line:col: note: message").
type Diagnostic struct {
	Loc     Location
	Message string
	Notes   []Note
}

// Note is context attached to a Diagnostic.
type Note struct {
	Loc     Location
	Message string
}

// Errorf makes an error diagnostic at loc.
func Errorf(loc Location, format string, args ...any) *Diagnostic {
	return &Diagnostic{Loc: loc, Message: fmt.Sprintf(format, args...)}
}

// AddNote attaches a note at loc and returns d.
func (d *Diagnostic) AddNote(loc Location, format string, args ...any) *Diagnostic {
	d.Notes = append(d.Notes, Note{Loc: loc, Message: fmt.Sprintf(format, args...)})
	return d
}

func (d *Diagnostic) Error() string {
	var b strings.Builder
	d.write(&b)
	return strings.TrimSuffix(b.String(), "\n")
}

func (d *Diagnostic) write(b *strings.Builder) {
	fmt.Fprintf(b, "%s: error: %s\n", d.Loc, d.Message)
	for _, n := range d.Notes {
		fmt.Fprintf(b, "%s: note: %s\n", n.Loc, n.Message)
	}
}

// Diagnostics is a list of diagnostics usable as one error.
type Diagnostics []*Diagnostic

func (ds Diagnostics) Error() string {
	var b strings.Builder
	for _, d := range ds {
		d.write(&b)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// Err returns ds as an error, or nil when empty.
func (ds Diagnostics) Err() error {
	if len(ds) == 0 {
		return nil
	}
	return ds
}
