package main

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzOpt runs arbitrary text through the whole tool: parsing,
// verification and the registered graph and hlo passes. Bad input must be
// reported as diagnostics (exit 1), never as an internal error (exit 2,
// a recovered panic). Seeds are the lit suite's inputs.
//
//	go test ./tools/tessera-opt -run='^$' -fuzz=FuzzOpt -fuzztime=30s
func FuzzOpt(f *testing.F) {
	f.Add(relu)
	f.Add(threeChunks)
	_ = filepath.WalkDir(filepath.Join("..", "..", "lit"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".mlir") || strings.HasSuffix(p, ".tir")) {
			if src, err := os.ReadFile(p); err == nil {
				f.Add(string(src))
			}
		}
		return nil
	})
	pipelines := [][]string{
		{"--split-input-file"},
		{"--split-input-file", "--allow-unregistered-dialect", "--mlir-print-op-generic", "--mlir-print-debuginfo"},
		{"--split-input-file", "--canonicalize", "--constant-fold", "--fold-batch-norm", "--cse", "--legalize-to-hlo", "--canonicalize", "--fuse", "--dce"},
		{"--split-input-file", "--legalize-to-hlo", "--fuse", "--lower-to-tir", "--inline-elementwise", "--simplify"},
		{"--split-input-file", "--inline-elementwise", "--simplify"},
	}
	f.Fuzz(func(t *testing.T, src string) {
		for _, args := range pipelines {
			out, errs, code := opt(src, args...)
			switch code {
			case 0:
				// What was printed must parse again.
				if _, errs2, code2 := opt(out, "--split-input-file", "--allow-unregistered-dialect", "--verify-each=false"); code2 != 0 {
					t.Fatalf("tessera-opt %v printed text it cannot parse:\n%s\n--- output ---\n%s", args, errs2, out)
				}
			case 1:
				if !strings.Contains(errs, "error: ") {
					t.Fatalf("tessera-opt %v failed without a diagnostic:\n%s", args, errs)
				}
			default:
				t.Fatalf("tessera-opt %v: exit status %d:\n%s\n--- input ---\n%s", args, code, errs, src)
			}
		}
	})
}
