package graphir

import (
	"fmt"
	"strconv"
	"strings"
)

// Location is a source position, printed as loc("file":line:col).
// The zero Location is unknown.
type Location struct {
	File string
	Line int
	Col  int
}

// Known reports whether the location names a position.
func (l Location) Known() bool { return l.Line > 0 }

// String renders file:line:col, or "<unknown>".
func (l Location) String() string {
	if !l.Known() {
		if l.File != "" {
			return l.File
		}
		return "<unknown>"
	}
	return l.File + ":" + strconv.Itoa(l.Line) + ":" + strconv.Itoa(l.Col)
}

// Severity of a diagnostic.
type Severity uint8

// Severities, as MLIR spells them.
const (
	SevError Severity = iota
	SevWarning
	SevNote
	SevRemark
)

func (s Severity) String() string {
	return [...]string{"error", "warning", "note", "remark"}[s]
}

// Diagnostic is a located message with optional notes, printed MLIR-style:
//
//	file:line:col: error: message
//	file:line:col: note: context
type Diagnostic struct {
	Loc      Location
	Severity Severity
	Message  string
	Notes    []*Diagnostic
}

// Errorf makes an error diagnostic at loc.
func Errorf(loc Location, format string, args ...any) *Diagnostic {
	return &Diagnostic{Loc: loc, Severity: SevError, Message: fmt.Sprintf(format, args...)}
}

// AddNote attaches a note at loc and returns d.
func (d *Diagnostic) AddNote(loc Location, format string, args ...any) *Diagnostic {
	d.Notes = append(d.Notes, &Diagnostic{Loc: loc, Severity: SevNote, Message: fmt.Sprintf(format, args...)})
	return d
}

func (d *Diagnostic) Error() string {
	var b strings.Builder
	d.write(&b)
	return strings.TrimSuffix(b.String(), "\n")
}

func (d *Diagnostic) write(b *strings.Builder) {
	fmt.Fprintf(b, "%s: %s: %s\n", d.Loc, d.Severity, d.Message)
	for _, n := range d.Notes {
		n.write(b)
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

// AsDiagnostics flattens an error into diagnostics; a plain error becomes
// one error diagnostic at an unknown location.
func AsDiagnostics(err error) Diagnostics {
	switch e := err.(type) {
	case nil:
		return nil
	case Diagnostics:
		return e
	case *Diagnostic:
		return Diagnostics{e}
	}
	return Diagnostics{{Severity: SevError, Message: err.Error()}}
}

// Errorf makes an error diagnostic at op's location, prefixed with the op
// name as MLIR does: "'graph.conv2d' op expected ...".
func (op *Op) Errorf(format string, args ...any) *Diagnostic {
	return Errorf(op.Loc, "'%s' op %s", op.Name, fmt.Sprintf(format, args...))
}
