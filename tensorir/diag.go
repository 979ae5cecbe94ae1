package tensorir

import "github.com/tessera-ml/tessera/internal/syntax"

// Location is a source position, printed as loc("file":line:col). The
// zero Location is unknown. It is the graph level's Location too
// (internal/syntax).
type Location = syntax.Location

// Diagnostic is a located error with optional notes, printed in MLIR's
// format: "file:line:col: error: message", then its notes
// ("file:line:col: note: message"). It is the graph level's Diagnostic
// too, so tensor IR errors need no conversion.
type Diagnostic = syntax.Diagnostic

// Diagnostics is a list of diagnostics usable as one error.
type Diagnostics = syntax.Diagnostics

// Errorf makes an error diagnostic at loc.
func Errorf(loc Location, format string, args ...any) *Diagnostic {
	return syntax.Errorf(loc, format, args...)
}

// ElidedHint says that constant data was elided and how to keep it
// (internal/syntax.ElidedHint).
const ElidedHint = syntax.ElidedHint
