// Package lit holds Tessera's lit test suite: `*.mlir`, `*.tir` and
// (NPU assembly, `; RUN:`) `*.s` files, one folder per IR level and pass,
// each with `// RUN:` lines that run tools/tessera-opt or tessera and
// LLVM's FileCheck. The Go tests of
// this package run the suite inside `go test`:
//
//   - TestLit builds tools/tessera-opt, cmd/tessera and lit/tools/not once into a
//     temporary bin directory that goes first on PATH, then runs every test
//     file as a subtest named by its path relative to lit/.
//   - TestMLIROptCompat prints every valid input in generic form and checks
//     that Debian's mlir-opt-16 --allow-unregistered-dialect accepts it.
//
// A test file's directives (LLVM lit syntax, in `//` comments):
//
//	// RUN: tessera-opt %s --canonicalize | FileCheck %s
//	// RUN: not tessera-opt %s 2>&1 \
//	// RUN:   | FileCheck %s --check-prefix=ERR
//	// REQUIRES: mlir-opt
//
// RUN lines run one after the other with `bash -o pipefail -c` in the
// file's directory; a line ending in `\` continues on the next RUN line.
// Substitutions: %s the file's absolute path, %S (and %p) its directory, %t
// a temporary file path unique to the test, %T a temporary directory, %%
// a literal %. FileCheck resolves to LLVM 16's FileCheck (FileCheck-16 or
// /usr/lib/llvm-16/bin/FileCheck) and always gets --dump-input=fail;
// mlir-opt resolves to mlir-opt-16. REQUIRES lists features
// (mlir-opt, llc) without which the file is skipped. Directories named
// Inputs hold data for tests and are not run.
//
// Run one file with
//
//	go test ./lit -run 'TestLit/graphir/roundtrip.mlir'
package lit
