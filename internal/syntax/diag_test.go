package syntax_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tessera-ml/tessera/internal/syntax"
)

func TestDiagnosticFormat(t *testing.T) {
	d := syntax.Errorf(syntax.Location{File: "m.mlir", Line: 3, Col: 7}, "bad %s", "thing")
	d.AddNote(syntax.Location{File: "m.mlir", Line: 1, Col: 1}, "defined here").AddNote(syntax.Location{}, "while checking")
	assert.Equal(t, "m.mlir:3:7: error: bad thing\nm.mlir:1:1: note: defined here\n<unknown>: note: while checking", d.Error())
	assert.Equal(t, syntax.SevNote, d.Notes[0].Severity)
	w := &syntax.Diagnostic{Loc: syntax.Location{File: "x.tir"}, Severity: syntax.SevWarning, Message: "w"}
	ds := syntax.Diagnostics{d, w}
	assert.Equal(t, d.Error()+"\nx.tir: warning: w", ds.Error())
	assert.NoError(t, syntax.Diagnostics(nil).Err())
	assert.Equal(t, ds, ds.Err())
	assert.Equal(t, "remark", syntax.SevRemark.String())
}

func TestAsDiagnostics(t *testing.T) {
	d := syntax.Errorf(syntax.Location{File: "a", Line: 1, Col: 2}, "x")
	ds := syntax.Diagnostics{d, d}
	assert.Nil(t, syntax.AsDiagnostics(nil))
	assert.Equal(t, ds, syntax.AsDiagnostics(ds))
	assert.Equal(t, syntax.Diagnostics{d}, syntax.AsDiagnostics(d))
	assert.Equal(t, ds, syntax.AsDiagnostics(fmt.Errorf("pass failed: %w", ds)), "sees through wrapping")
	assert.Equal(t, syntax.Diagnostics{d}, syntax.AsDiagnostics(fmt.Errorf("pass failed: %w", d)))
	plain := syntax.AsDiagnostics(errors.New("boom"))
	assert.Equal(t, "<unknown>: error: boom", plain.Error())
}
