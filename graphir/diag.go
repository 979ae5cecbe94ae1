package graphir

import (
	"fmt"

	"github.com/tessera-ml/tessera/internal/syntax"
)

// Location is a source position, printed as loc("file":line:col). The
// zero Location is unknown. It is the tensor IR's Location too
// (internal/syntax).
type Location = syntax.Location

// Severity of a diagnostic: error, warning, note or remark.
type Severity = syntax.Severity

// Severities, as MLIR spells them.
const (
	SevError   = syntax.SevError
	SevWarning = syntax.SevWarning
	SevNote    = syntax.SevNote
	SevRemark  = syntax.SevRemark
)

// Diagnostic is a located message with optional notes, printed in MLIR's
// format ("file:line:col: error: message", then its notes). It is the
// tensor IR's Diagnostic too.
type Diagnostic = syntax.Diagnostic

// Diagnostics is a list of diagnostics usable as one error.
type Diagnostics = syntax.Diagnostics

// Errorf makes an error diagnostic at loc.
func Errorf(loc Location, format string, args ...any) *Diagnostic {
	return syntax.Errorf(loc, format, args...)
}

// AsDiagnostics flattens an error into diagnostics, seeing through
// wrapped errors; a plain error becomes one error diagnostic at an
// unknown location.
func AsDiagnostics(err error) Diagnostics { return syntax.AsDiagnostics(err) }

// Errorf makes an error diagnostic at op's location, prefixed with the op
// name as MLIR does: "'graph.conv2d' op expected ...".
func (op *Op) Errorf(format string, args ...any) *Diagnostic {
	return Errorf(op.Loc, "'%s' op %s", op.Name, fmt.Sprintf(format, args...))
}

// ElidedHint says that constant data was elided and how to keep it
// (internal/syntax.ElidedHint).
const ElidedHint = syntax.ElidedHint
