package syntax

import (
	"errors"
	"fmt"
	"strings"
)

// Severity of a diagnostic.
type Severity uint8

// Severities, as MLIR spells them. The zero Severity is SevError.
const (
	SevError Severity = iota
	SevWarning
	SevNote
	SevRemark
)

// String returns the severity as MLIR prints it: "error", "warning",
// "note" or "remark".
func (s Severity) String() string {
	return [...]string{"error", "warning", "note", "remark"}[s]
}

// Diagnostic is a located message with optional notes, printed in MLIR's
// diagnostic format, one line each:
//
//	file:line:col: error: message
//	file:line:col: note: context
//
// A Diagnostic is an error; its notes are Diagnostics of severity SevNote.
type Diagnostic struct {
	Loc      Location
	Severity Severity
	Message  string
	Notes    []*Diagnostic
}

// Errorf makes an error diagnostic at loc with a fmt.Sprintf message.
func Errorf(loc Location, format string, args ...any) *Diagnostic {
	return &Diagnostic{Loc: loc, Severity: SevError, Message: fmt.Sprintf(format, args...)}
}

// AddNote attaches a note at loc with a fmt.Sprintf message and returns d.
func (d *Diagnostic) AddNote(loc Location, format string, args ...any) *Diagnostic {
	d.Notes = append(d.Notes, &Diagnostic{Loc: loc, Severity: SevNote, Message: fmt.Sprintf(format, args...)})
	return d
}

// Error renders d and its notes in MLIR's format, one line each, without
// a trailing newline.
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

// Error renders every diagnostic with its notes, in order, one line each,
// without a trailing newline.
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

// AsDiagnostics flattens an error into diagnostics. It sees through
// wrapped errors (errors.As): the first Diagnostics or *Diagnostic in
// err's chain is returned as the list. Any other error becomes one error
// diagnostic at an unknown location with err's text; nil gives nil.
func AsDiagnostics(err error) Diagnostics {
	if err == nil {
		return nil
	}
	var ds Diagnostics
	if errors.As(err, &ds) {
		return ds
	}
	var d *Diagnostic
	if errors.As(err, &d) {
		return Diagnostics{d}
	}
	return Diagnostics{{Severity: SevError, Message: err.Error()}}
}
