package tessera_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/go/packages"
)

// modulePath is the module of this repository.
const modulePath = "github.com/tessera-ml/tessera"

// layoutRule is one row of DESIGN.md's layout table: what a folder's
// packages may import.
type layoutRule struct {
	// folder is module-relative; the rule covers the folder and everything
	// below it, unless a longer folder has its own rule.
	folder string
	// tree is how many path elements form a package's own tree, which it
	// may always import (2 for dialects/hlo/..., targets/cpu/...).
	tree int
	// internal lists the module-relative folders it may import besides its
	// own tree; nil with any=true means everything.
	internal []string
	any      bool
	// stdOnly restricts third-party imports to the prefixes in external.
	stdOnly  bool
	external []string
	// allowed is the table's wording, for messages.
	allowed string
}

// layoutRules encodes DESIGN.md's "may import" column. Folders without a
// rule (future packages) may import anything.
var layoutRules = []layoutRule{
	{folder: "internal/syntax", tree: 2, stdOnly: true, external: []string{"github.com/alecthomas/participle/v2"}, allowed: "std, participle"},
	{folder: "internal/registry", tree: 2, stdOnly: true, allowed: "std"},
	{folder: "internal/traceevent", tree: 2, stdOnly: true, external: []string{"github.com/google/renameio/v2"}, allowed: "std, renameio"},
	{folder: "internal/fp", tree: 2, stdOnly: true, external: []string{"github.com/x448/float16"}, allowed: "std, float16"},
	{folder: "graphir", tree: 1, internal: []string{"internal/syntax", "internal/registry", "internal/fp"}, stdOnly: true, external: []string{"github.com/alecthomas/participle/v2", "github.com/x448/float16"}, allowed: "std, participle, float16, internal/syntax, internal/registry, internal/fp"},
	{folder: "dialects", tree: 2, internal: []string{"graphir"}, allowed: "graphir"},
	// hlo ops register their tensor IR lowering beside their definition,
	// graph ops their legalization to hlo.
	{folder: "dialects/hlo", tree: 2, internal: []string{"graphir", "tensorir"}, allowed: "graphir, tensorir"},
	{folder: "dialects/graph", tree: 2, internal: []string{"graphir", "dialects/hlo"}, allowed: "graphir, dialects/hlo"},
	{folder: "dialects/graph/onnx", tree: 3, internal: []string{"graphir", "dialects/graph"}, allowed: "graphir, dialects/graph"},
	{folder: "tensorir", tree: 1, internal: []string{"internal/syntax", "internal/registry", "internal/fp"}, stdOnly: true, external: []string{"github.com/alecthomas/participle/v2", "github.com/x448/float16"}, allowed: "std, participle, float16, internal/syntax, internal/registry, internal/fp"},
	{folder: "lowering", tree: 1, internal: []string{"graphir", "dialects", "tensorir"}, allowed: "graphir, dialects/..., tensorir"},
	{folder: "schedule", tree: 1, internal: []string{"tensorir"}, allowed: "tensorir"},
	// The runner loads and times candidates with runtime ("timing for the
	// runner" in runtime's row), which DESIGN.md's autotune row omitted.
	{folder: "autotune", tree: 1, internal: []string{"schedule", "tensorir", "targets", "runtime"}, allowed: "schedule, tensorir, targets, runtime"},
	// Tuning pictures: autotune's records drawn with gonum/plot, for the
	// CLI and the bench; autotune itself never imports it.
	{folder: "autotune/tuneplot", tree: 2, internal: []string{"autotune"}, stdOnly: true, external: []string{"gonum.org/v1/plot", "github.com/google/renameio/v2"}, allowed: "std, gonum.org/v1/plot, renameio, autotune"},
	// Distributed tuning: autotune's measurer behind a NATS JetStream
	// broker (the client, and the server embedded for --broker embedded).
	{folder: "autotune/distributed", tree: 2, internal: []string{"autotune", "schedule", "tensorir", "targets"}, stdOnly: true, external: []string{"github.com/nats-io/nats.go", "github.com/nats-io/nats-server/v2"}, allowed: "std, nats.go, nats-server, autotune, schedule, tensorir, targets"},
	// Targets may share code among themselves, never with the graph levels:
	// the target interface (targets/) and each target (targets/cpu/) use
	// the schedule rules, tensor IR and the runtime that loads their code.
	{folder: "targets", tree: 2, internal: []string{"tensorir", "schedule", "runtime", "targets", "internal/registry", "internal/traceevent"}, allowed: "tensorir, schedule, runtime, internal/registry, internal/traceevent (and other targets)"},
	// The NPU target's assembler reports its errors as MLIR-style
	// diagnostics (internal/syntax).
	{folder: "targets/npu", tree: 2, internal: []string{"tensorir", "schedule", "runtime", "targets", "internal/registry", "internal/syntax", "internal/traceevent"}, allowed: "tensorir, schedule, runtime, internal/registry, internal/syntax, internal/traceevent (and other targets)"},
	// The one ordered compilation table: every level's steps, the tuning
	// database (autotune) for apply-tuning-records, and the targets.
	{folder: "pipeline", tree: 1, internal: []string{"graphir", "dialects", "lowering", "tensorir", "schedule", "autotune", "targets", "internal/registry"}, allowed: "graphir, dialects/..., lowering, tensorir, schedule, autotune, targets, internal/registry"},
	{folder: "runtime", tree: 1, stdOnly: true, external: []string{"github.com/ebitengine/purego", "github.com/sbinet/npyio", "github.com/x448/float16"}, allowed: "std, purego, npyio, float16"},
	{folder: "tools", any: true, allowed: "everything"},
	{folder: "cmd", any: true, allowed: "everything"},
	{folder: "bench", any: true, allowed: "everything"},
}

// under reports whether path is folder or below it.
func under(path, folder string) bool {
	return path == folder || strings.HasPrefix(path, folder+"/")
}

// ruleFor returns the most specific rule covering the module-relative
// package path, or nil.
func ruleFor(rel string) *layoutRule {
	var best *layoutRule
	for i := range layoutRules {
		r := &layoutRules[i]
		if under(rel, r.folder) && (best == nil || len(r.folder) > len(best.folder)) {
			best = r
		}
	}
	return best
}

func isStd(importPath string) bool {
	first, _, _ := strings.Cut(importPath, "/")
	return !strings.Contains(first, ".")
}

// checkImport returns "" when package pkg (full import path) may import
// imp, else a message naming the offending import.
func checkImport(pkg, imp string) string {
	rel, ok := strings.CutPrefix(pkg, modulePath+"/")
	if !ok {
		return "" // the module root and other modules: no rule
	}
	r := ruleFor(rel)
	if r == nil || r.any || isStd(imp) || imp == "C" || imp == "unsafe" {
		return ""
	}
	msg := fmt.Sprintf("%s imports %s, but DESIGN.md allows %s to import only %s", pkg, imp, r.folder, r.allowed)
	impRel, internal := strings.CutPrefix(imp, modulePath+"/")
	if imp == modulePath {
		impRel, internal = "", true
	}
	if !internal {
		if !r.stdOnly {
			return ""
		}
		for _, e := range r.external {
			if under(imp, e) {
				return ""
			}
		}
		return msg
	}
	parts := strings.Split(rel, "/")
	if len(parts) > r.tree {
		parts = parts[:r.tree]
	}
	if under(impRel, strings.Join(parts, "/")) {
		return ""
	}
	for _, f := range r.internal {
		if under(impRel, f) {
			return ""
		}
	}
	return msg
}

// TestImportLayout enforces the import column of DESIGN.md's layout table
// on every non-test package of the module.
func TestImportLayout(t *testing.T) {
	if testing.Short() {
		t.Skip("loads every package of the module")
	}
	touchGoFiles(t)
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedImports}
	pkgs, err := packages.Load(cfg, "./...")
	require.NoError(t, err)
	require.NotEmpty(t, pkgs)
	var bad []string
	seen := 0
	for _, p := range pkgs {
		// Packages that do not compile still report their imports; the
		// compile errors are for the build to report.
		if !strings.HasPrefix(p.PkgPath, modulePath) {
			continue
		}
		seen++
		for imp := range p.Imports {
			if msg := checkImport(p.PkgPath, imp); msg != "" {
				bad = append(bad, msg)
			}
		}
	}
	sort.Strings(bad)
	require.Positive(t, seen, "no package of %s was loaded", modulePath)
	t.Logf("checked the imports of %d packages", seen)
	assert.Empty(t, bad, "imports that break DESIGN.md's layout:\n%s", strings.Join(bad, "\n"))
}

func TestCheckImport(t *testing.T) {
	m := modulePath + "/"
	ok := []struct{ pkg, imp string }{
		{m + "graphir", "fmt"},
		{m + "graphir", "github.com/alecthomas/participle/v2/lexer"},
		{m + "graphir", m + "internal/syntax"},
		{m + "tensorir", m + "internal/syntax"},
		{m + "internal/syntax", "github.com/alecthomas/participle/v2"},
		{m + "dialects/graph", m + "graphir"},
		{m + "dialects/hlo", m + "graphir"},
		{m + "dialects/hlo/internal/x", m + "dialects/hlo"},
		{m + "dialects/graph/onnx", m + "dialects/graph"},
		{m + "dialects/graph/onnx", "google.golang.org/protobuf/proto"},
		{m + "lowering", m + "dialects/hlo"},
		{m + "lowering", m + "tensorir/transform"},
		{m + "tensorir/transform", m + "tensorir"},
		{m + "schedule", m + "tensorir"},
		{m + "autotune", m + "targets/cpu"},
		{m + "targets/cpu", m + "tensorir"},
		{m + "targets/cpu", "github.com/llir/llvm/ir"},
		{m + "targets/cuda", m + "targets/cpu"},
		{m + "targets/cpu", m + "runtime"},
		{m + "targets/cpu", m + "schedule"},
		{m + "tools/tessera-opt", m + "lowering"},
		{m + "cmd/tessera", m + "autotune"},
		{m + "autotune/tuneplot", m + "autotune"},
		{m + "autotune/tuneplot", "gonum.org/v1/plot/vg/vgimg"},
		{m + "cmd/tessera", m + "autotune/tuneplot"},
		{m + "bench", m + "autotune/tuneplot"},
		{m + "somefuture", m + "graphir"},
		{m + "lit/tools/not", "os/exec"},
	}
	for _, c := range ok {
		assert.Empty(t, checkImport(c.pkg, c.imp), "%s → %s", c.pkg, c.imp)
	}
	bad := []struct{ pkg, imp, rule string }{
		{m + "graphir", m + "dialects/graph", "only std, participle"},
		{m + "internal/syntax", m + "graphir", "only std, participle"},
		{m + "internal/syntax", m + "tensorir", "only std, participle"},
		{m + "internal/syntax", "github.com/llir/llvm/ir", "only std, participle"},
		{m + "graphir", "github.com/llir/llvm/ir", "only std, participle"},
		{m + "graphir/sub", m + "lowering", "only std, participle"},
		{m + "dialects/hlo", m + "dialects/graph", "only graphir"},
		{m + "dialects/graph", m + "lowering", "only graphir"},
		{m + "dialects/graph/onnx", m + "dialects/hlo", "graphir, dialects/graph"},
		{m + "tensorir", m + "graphir", "only std, participle"},
		{m + "tensorir", "github.com/stretchr/testify/assert", "only std, participle"},
		{m + "lowering", m + "schedule", "graphir, dialects/..., tensorir"},
		{m + "schedule", m + "graphir", "only tensorir"},
		{m + "schedule", m + "targets/cpu", "only tensorir"},
		{m + "targets/cpu", m + "graphir", "tensorir"},
		{m + "targets/npu", m + "dialects/hlo", "tensorir"},
		{m + "targets/cuda", m + "lowering", "tensorir"},
		{m + "runtime", m + "graphir", "only std, purego, npyio"},
		{m + "runtime", m + "targets/cpu", "only std, purego, npyio"},
		{m + "autotune", m + "lowering", "schedule, tensorir, targets, runtime"},
		{m + "autotune/tuneplot", m + "pipeline", "std, gonum.org/v1/plot, renameio, autotune"},
		{m + "autotune/tuneplot", "github.com/llir/llvm/ir", "std, gonum.org/v1/plot, renameio, autotune"},
	}
	for _, c := range bad {
		msg := checkImport(c.pkg, c.imp)
		if assert.NotEmpty(t, msg, "%s → %s should be refused", c.pkg, c.imp) {
			assert.Contains(t, msg, c.imp)
			assert.Contains(t, msg, c.rule)
		}
	}
}

// touchGoFiles opens every .go file of the module in this process. The
// imports are read by `go list` in a subprocess, which go test's result
// cache does not see; opening the files here records them, so a changed
// import invalidates a cached pass of this test.
func touchGoFiles(t *testing.T) {
	t.Helper()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "." || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			return f.Close()
		}
		return nil
	})
	require.NoError(t, err)
}
