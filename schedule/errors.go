package schedule

import (
	"fmt"
	"strconv"
	"strings"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// Error is the refusal of a schedule primitive: the primitive, the block
// and loop concerned (by name; empty when none), the reason and the
// offending part of the printed IR.
type Error struct {
	Primitive string
	Block     string
	Loop      string
	Reason    string
	IR        string
}

// maxIRLines bounds the rendered IR of an error.
const maxIRLines = 15

// Error renders
//
//	PRIM: block "B", loop %l: REASON
//	  <IR, indented by two spaces>
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Primitive + ":")
	var where []string
	if e.Block != "" {
		where = append(where, "block "+strconv.Quote(e.Block))
	}
	if e.Loop != "" {
		where = append(where, "loop %"+e.Loop)
	}
	if len(where) > 0 {
		b.WriteString(" " + strings.Join(where, ", ") + ":")
	}
	b.WriteString(" " + e.Reason)
	if e.IR != "" {
		for _, line := range strings.Split(e.IR, "\n") {
			b.WriteString("\n  " + line)
		}
	}
	return b.String()
}

// Errorf makes the refusal of primitive prim concerning block and/or loop
// (either may be nil; a loop's error names the first block under it when
// block is nil) with the reason format, args. The offending loop's
// subtree (else the block's realization) is rendered with
// tensorir.PrintStmt, cut to at most 15 lines ("... (N more lines)").
func (s *Schedule) Errorf(prim string, block *BlockRV, loop *LoopRV, format string, args ...any) *Error {
	e := &Error{Primitive: prim, Reason: fmt.Sprintf(format, args...)}
	var node tir.Stmt
	if block != nil {
		e.Block = block.Name
		if r := findBlock(s.f.Body, block.Name); r != nil {
			node = r
		}
	}
	if loop != nil {
		e.Loop = loop.Name()
		if loop.Var != nil {
			if l := findLoop(s.f.Body, loop.Var); l != nil {
				node = l
				if e.Block == "" {
					e.Block = firstBlock(l)
				}
			}
		}
	}
	if node != nil {
		e.IR = RenderIR(node)
	}
	return e
}

// ErrorAt is Errorf rendering the statement node (nil: nothing) instead
// of the loop's or block's subtree.
func (s *Schedule) ErrorAt(prim string, block *BlockRV, loop *LoopRV, node tir.Stmt, format string, args ...any) *Error {
	e := s.Errorf(prim, block, loop, format, args...)
	e.IR = ""
	if node != nil {
		e.IR = RenderIR(node)
	}
	return e
}

// RenderIR prints st cut to at most 15 lines.
func RenderIR(st tir.Stmt) string {
	lines := strings.Split(tir.PrintStmt(st), "\n")
	if len(lines) > maxIRLines {
		n := len(lines) - (maxIRLines - 1)
		lines = append(lines[:maxIRLines-1], fmt.Sprintf("... (%d more lines)", n))
	}
	return strings.Join(lines, "\n")
}
