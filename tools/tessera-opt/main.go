// Command tessera-opt is the mlir-opt of Tessera: it parses graph- and
// hlo-level IR in MLIR syntax, verifies it, runs the requested passes and
// prints the result. The lit test suite (lit/) drives it with FileCheck.
//
// Usage:
//
//	tessera-opt [flags] [file|-] [flags]
//
// Steps run in command-line order; each registered step of any level
// (pipeline.Steps: graph passes, tensor IR passes, the conversions and the
// target steps of `tessera compile`) has its own flag (`--canonicalize`,
// `--lower-to-tir`, `--default-schedule='mcpu=x86-64-v4'`) and
// `--pass-pipeline='canonicalize,cse'` adds a whole pipeline at its
// position. Flags may come before or after the input file.
//
// Exit status: 0 on success, 1 when the input or the command line is
// invalid (diagnostics `file:line:col: error: message` on stderr) or when
// --verify-diagnostics finds a mismatch, 2 on an internal error (a bug in
// Tessera: a Go panic turned into a report).
package main

import (
	"os"
)

// Every dialect, pass, step and target registers itself in an init
// function; package pipeline (opt.go) imports them all.

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
