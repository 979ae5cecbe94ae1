package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/graphir"
)

// Test passes: they record their runs in trace, so tests can check the
// order in which the command line schedules passes.
var (
	traceMu sync.Mutex
	trace   []string
)

func record(s string) {
	traceMu.Lock()
	trace = append(trace, s)
	traceMu.Unlock()
}

func takeTrace() []string {
	traceMu.Lock()
	defer traceMu.Unlock()
	t := trace
	trace = nil
	return t
}

func init() {
	for _, n := range []string{"test-a", "test-b"} {
		graphir.RegisterPass(&graphir.PassInfo{
			Name: n, Summary: "records " + n,
			New: func(map[string]string) (graphir.Pass, error) {
				return &graphir.FuncPass{PassName: n, Fn: func(*graphir.Func) error { record(n); return nil }}, nil
			},
		})
	}
	graphir.RegisterPass(&graphir.PassInfo{
		Name: "test-opt", Summary: "records its option",
		Options: map[string]string{"label": "the text to record"},
		New: func(opts map[string]string) (graphir.Pass, error) {
			label := opts["label"]
			return &graphir.FuncPass{PassName: "test-opt", Fn: func(*graphir.Func) error { record("opt:" + label); return nil }}, nil
		},
	})
	graphir.RegisterPass(&graphir.PassInfo{
		Name: "test-fail", Summary: "fails on the first op",
		New: func(map[string]string) (graphir.Pass, error) {
			return &graphir.FuncPass{PassName: "test-fail", Fn: func(f *graphir.Func) error {
				return f.Entry().First().Errorf("refused by test-fail")
			}}, nil
		},
	})
	graphir.RegisterPass(&graphir.PassInfo{
		Name: "test-break", Summary: "makes the IR invalid",
		New: func(map[string]string) (graphir.Pass, error) {
			return &graphir.FuncPass{PassName: "test-break", Fn: func(f *graphir.Func) error {
				op := f.Entry().First()
				op.Results[0].Type = graphir.NewTensor(graphir.F32, 7)
				return nil
			}}, nil
		},
	})
	graphir.RegisterPass(&graphir.PassInfo{
		Name: "test-panic", Summary: "panics",
		New: func(map[string]string) (graphir.Pass, error) {
			return &graphir.FuncPass{PassName: "test-panic", Fn: func(*graphir.Func) error { panic("boom") }}, nil
		},
	})
}

// opt runs the tool in-process.
func opt(stdin string, args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = run(args, strings.NewReader(stdin), &out, &errb)
	return out.String(), errb.String(), code
}

const relu = `func.func @main(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "graph.relu"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}
`

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}

func TestHelpListsEveryPass(t *testing.T) {
	out, _, code := opt("", "--help")
	require.Equal(t, 0, code)
	passes := graphir.RegisteredPasses()
	require.NotEmpty(t, passes)
	for _, p := range passes {
		assert.Contains(t, out, "--"+p.Name+" ")
		assert.Contains(t, out, p.Summary)
	}
	for _, want := range []string{"canonicalize", "cse", "dce", "constant-fold", "fold-batch-norm", "legalize-to-hlo", "fuse"} {
		assert.Contains(t, out, "--"+want+" ", "pass %s is not registered (dialect/lowering import missing?)", want)
	}
	assert.Contains(t, out, "option label: the text to record")
	for _, f := range []string{"--pass-pipeline", "--verify-each", "--print-ir-after-all", "--print-ir-after", "--timing", "--mlir-print-op-generic", "--mlir-print-debuginfo", "--print-large-constants", "--allow-unregistered-dialect", "--split-input-file", "--verify-diagnostics", "--output"} {
		assert.Contains(t, out, f)
	}
}

func TestStdinAndFileInput(t *testing.T) {
	out, errs, code := opt(relu)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "%0 = graph.relu %arg0 : tensor<2x3xf32>")

	out2, errs, code := opt(relu, "-")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, out, out2)

	p := writeFile(t, "in.mlir", relu)
	out3, errs, code := opt("", p)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, out, out3)

	_, errs, code = opt("", filepath.Join(t.TempDir(), "missing.mlir"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "could not open input file")

	_, errs, code = opt("", p, p)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "at most one input file")
}

func TestFlagsAfterFileAndOrderedPasses(t *testing.T) {
	p := writeFile(t, "in.mlir", relu)
	takeTrace()
	_, errs, code := opt("", "--test-b", p, "--pass-pipeline=test-a,test-opt{label=x}", "--test-a", "--test-opt=label=y", "--test-b=false")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, []string{"test-b", "test-a", "opt:x", "test-a", "opt:y"}, takeTrace())

	_, errs, code = opt(relu, "--pass-pipeline", "builtin.module(func.func(test-b,test-a))", "--test-b")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, []string{"test-b", "test-a", "test-b"}, takeTrace())
}

func TestBadCommandLines(t *testing.T) {
	cases := map[string][]string{
		"unknown flag":            {"--no-such-flag"},
		"unknown pass":            {"--pass-pipeline=no-such-pass"},
		"unbalanced pipeline":     {"--pass-pipeline=cse(dce"},
		"unknown option":          {"--pass-pipeline=test-opt{color=red}"},
		"unknown option via flag": {"--test-opt=color=red"},
		"print-ir-after unknown":  {"--print-ir-after=nope"},
		"empty pipeline":          {"--pass-pipeline="},
	}
	for name, args := range cases {
		t.Run(name, func(t *testing.T) {
			_, errs, code := opt(relu, args...)
			assert.Equal(t, 1, code)
			assert.Contains(t, errs, "tessera-opt:")
			assert.NotContains(t, errs, "internal error")
		})
	}
}

func TestParseAndVerifyErrorsAreLocated(t *testing.T) {
	p := writeFile(t, "bad.mlir", "func.func @main(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {\n  %0 = \"graph.relu\"(%arg0) : (tensor<2x3xf32>) -> tensor<2x4xf32>\n  func.return %arg0 : tensor<2x3xf32>\n}\n")
	out, errs, code := opt("", p)
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Regexp(t, `^`+regexpQuote(p)+`:2:\d+: error: 'graph.relu' op `, errs)

	// --verify-each=false skips the verifier: the invalid op is printed.
	out, errs, code = opt("", p, "--verify-each=false")
	assert.Equal(t, 0, code, errs)
	assert.Contains(t, out, "tensor<2x4xf32>")

	_, errs, code = opt("func.func @main( {\n", "-")
	assert.Equal(t, 1, code)
	assert.Regexp(t, `^<stdin>:1:\d+: error: `, errs)
}

func regexpQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\.+*?()|[]{}^$`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func TestPassErrors(t *testing.T) {
	_, errs, code := opt(relu, "--test-fail")
	assert.Equal(t, 1, code)
	assert.Equal(t, "<stdin>:2:8: error: 'graph.relu' op refused by test-fail\n", errs)

	_, errs, code = opt(relu, "--test-break")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "<stdin>:2:8: error: ")
	assert.Contains(t, errs, "note: the IR is invalid after pass 'test-break'")

	// Without --verify-each the broken IR is printed as it is.
	out, errs, code := opt(relu, "--test-break", "--verify-each=false")
	assert.Equal(t, 0, code, errs)
	assert.Contains(t, out, "tensor<7xf32>")

	_, errs, code = opt(relu, "--test-panic")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "internal error: boom")
}

func TestOutputFile(t *testing.T) {
	dir := t.TempDir()
	o := filepath.Join(dir, "out.mlir")
	out, errs, code := opt(relu, "-o", o)
	require.Equal(t, 0, code, errs)
	assert.Empty(t, out)
	got, err := os.ReadFile(o)
	require.NoError(t, err)
	assert.Contains(t, string(got), "graph.relu")

	o2 := filepath.Join(dir, "out2.mlir")
	_, _, code = opt(relu, "--test-fail", "--output", o2)
	assert.Equal(t, 1, code)
	assert.NoFileExists(t, o2)

	_, errs, code = opt(relu, "-o", filepath.Join(dir, "no", "such", "dir", "x.mlir"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "tessera-opt:")
}

func TestPrintForms(t *testing.T) {
	out, errs, code := opt(relu, "--mlir-print-op-generic")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `"builtin.module"() ({`)
	assert.Contains(t, out, `%0 = "graph.relu"(%arg0) : (tensor<2x3xf32>) -> tensor<2x3xf32>`)
	assert.Contains(t, out, `"func.func"() ({`)

	out, errs, code = opt(relu, "--mlir-print-debuginfo")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `%0 = graph.relu %arg0 : tensor<2x3xf32> loc("<stdin>":2:8)`)
	assert.Contains(t, out, `} loc("<stdin>":1:1)`)
}

// denseModule returns a module with a non-splat constant of n elements.
func denseModule(n int) string {
	vals := make([]string, n)
	for i := range vals {
		vals[i] = fmt.Sprintf("%d.5", i)
	}
	ty := fmt.Sprintf("tensor<%dxf32>", n)
	return fmt.Sprintf("func.func @main() -> %s {\n  %%0 = \"graph.constant\"() {value = dense<[%s]> : %s} : () -> %s\n  func.return %%0 : %s\n}\n", ty, strings.Join(vals, ", "), ty, ty, ty)
}

func TestLargeConstants(t *testing.T) {
	limit := int(graphir.DefaultElideThreshold)
	out, errs, code := opt(denseModule(limit))
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, fmt.Sprintf("%d.5]", limit-1))

	out, errs, code = opt(denseModule(limit + 1))
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "dense_resource<__elided__>")
	assert.NotContains(t, out, "17.5")

	out, errs, code = opt(denseModule(limit+1), "--print-large-constants")
	require.Equal(t, 0, code, errs)
	assert.NotContains(t, out, "__elided__")
	assert.Contains(t, out, fmt.Sprintf("%d.5]", limit))

	out, errs, code = opt(denseModule(5), "--mlir-elide-elementsattrs-if-larger=4")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "dense_resource<__elided__>")
}

func TestAllowUnregistered(t *testing.T) {
	src := `func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "foo.bar"(%arg0) {k = 1 : i64} : (tensor<2xf32>) -> tensor<2xf32>
  %1 = "foo.bar"(%arg0) {k = 1 : i64} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
`
	_, errs, code := opt(src)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "<stdin>:2:")
	assert.Contains(t, errs, "foo.bar")

	out, errs, code := opt(src, "--allow-unregistered-dialect", "--test-a", "--test-b")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `"foo.bar"(%arg0) {k = 1} : (tensor<2xf32>) -> tensor<2xf32>`)
	takeTrace()

	// Verification after each pass still runs, with the tool's options.
	_, errs, code = opt(src, "--allow-unregistered-dialect", "--test-break")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "note: the IR is invalid after pass 'test-break'")
}

func TestPrintIRAfterAndTiming(t *testing.T) {
	_, errs, code := opt(relu, "--test-a", "--test-b", "--print-ir-after=test-b")
	require.Equal(t, 0, code, errs)
	assert.NotContains(t, errs, "IR Dump After test-a")
	assert.Contains(t, errs, "// -----// IR Dump After test-b //----- //\nmodule {")

	_, errs, code = opt(relu, "--test-a", "--test-b", "--print-ir-after-all", "--mlir-print-op-generic")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, "IR Dump After test-a //----- //\n\"builtin.module\"")
	assert.Contains(t, errs, "IR Dump After test-b")

	_, errs, code = opt(relu, "--test-a", "--timing", "--test-b")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, "Pass execution timing report")
	assert.Regexp(t, `(?m)^\s+\d+\.\d+ \(\s*\d+\.\d%\)\s+test-a$`, errs)
	assert.Regexp(t, `(?m)^\s+\d+\.\d+ \(100\.0%\)\s+Total$`, errs)
	takeTrace()
}

const threeChunks = `func.func @a(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  func.return %arg0 : tensor<2xf32>
}
// -----
func.func @b(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "graph.relu"(%arg0) : (tensor<2xf32>) -> tensor<3xf32>
  func.return %arg0 : tensor<2xf32>
}
   // -----
func.func @c(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  func.return %arg0 : tensor<2xf32>
}
`

func TestSplitInputFile(t *testing.T) {
	out, errs, code := opt(threeChunks, "--split-input-file")
	assert.Equal(t, 1, code)
	// The error keeps the file's line number; the other chunks are printed.
	assert.Regexp(t, `^<stdin>:6:\d+: error: 'graph.relu' op`, errs)
	require.Equal(t, 2, strings.Count(out, "module {"))
	parts := strings.Split(out, "// -----\n")
	require.Len(t, parts, 2)
	assert.Contains(t, parts[0], "@a")
	assert.Contains(t, parts[1], "@c")

	// Without splitting, the markers are comments and the module has all three.
	_, errs, code = opt(threeChunks)
	assert.Equal(t, 1, code)
	assert.Regexp(t, `^<stdin>:6:`, errs)

	chunks := splitInput("x\n// -----\ny\n// -----\n")
	assert.Equal(t, []chunk{{"x\n", 1}, {"y\n", 3}, {"", 5}}, chunks)
	assert.Equal(t, "\n\ny\n", chunks[1].source())
}

func TestVerifyDiagnostics(t *testing.T) {
	src := `func.func @a(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'graph.relu' op}}
  %0 = "graph.relu"(%arg0) : (tensor<2xf32>) -> tensor<3xf32>
  func.return %arg0 : tensor<2xf32>
}
// -----
func.func @b(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "graph.relu"(%arg0) : (tensor<2xf32>) -> tensor<3xf32>
  // expected-error@-1 {{'graph.relu' op}}
  func.return %arg0 : tensor<2xf32>
}
// -----
func.func @c(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "graph.relu"(%arg0) : (tensor<2xf32>) -> tensor<3xf32>
  // expected-error@above {{op}}
  func.return %arg0 : tensor<2xf32>
}
// -----
func.func @d(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@below {{op}}
  // an unrelated comment
  %0 = "graph.relu"(%arg0) : (tensor<2xf32>) -> tensor<3xf32>
  func.return %arg0 : tensor<2xf32>
}
// -----
func.func @e(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  func.return %arg0 : tensor<2xf32>
}
// -----
func.func @f(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "graph.relu"(%arg0) : (tensor<2xf32>) -> tensor<3xf32> // expected-error {{op}}
  func.return %arg0 : tensor<2xf32>
}
`
	_, errs, code := opt(src, "--split-input-file", "--verify-diagnostics")
	assert.Equal(t, 1, code, "@below skips only directive lines, so chunk @d's expectation points at the comment line")
	assert.Contains(t, errs, `<stdin>:20:6: error: expected error "op" was not produced`)
	assert.Contains(t, errs, "<stdin>:22:")

	fixed := strings.Replace(src, "  // an unrelated comment\n", "", 1)
	out, errs, code := opt(fixed, "--split-input-file", "--verify-diagnostics")
	assert.Equal(t, 0, code, errs)
	assert.Empty(t, errs)
	// The chunk without errors is printed, as mlir-opt does.
	assert.Contains(t, out, "@e")
	assert.NotContains(t, out, "@a")
}

func TestVerifyDiagnosticsMismatches(t *testing.T) {
	src := `func.func @a(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "graph.relu"(%arg0) : (tensor<2xf32>) -> tensor<3xf32>
  // expected-error@-1 {{no such text}}
  // expected-warning {{never emitted}}
  // expected-note@+1 {bad syntax}
  func.return %arg0 : tensor<2xf32>
}
`
	out, errs, code := opt(src, "--verify-diagnostics")
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Regexp(t, `<stdin>:2:\d+: error: unexpected error: 'graph.relu' op`, errs)
	assert.Contains(t, errs, `<stdin>:3:6: error: expected error "no such text" was not produced`)
	assert.Contains(t, errs, `<stdin>:4:6: error: expected warning "never emitted" was not produced`)
	assert.Contains(t, errs, `<stdin>:5:6: error: malformed diagnostic directive`)

	// Designators that point nowhere are reported.
	_, errs, code = opt("// expected-error@-5 {{x}}\n", "--verify-diagnostics")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "points before the first line")
	_, errs, code = opt("// expected-error@up {{x}}\n", "--verify-diagnostics")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "invalid designator")

	// A pass error with a note: both must be expected.
	noteSrc := `func.func @a(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+2 {{'graph.relu' op}}
  // expected-note@+1 {{invalid after pass 'test-break'}}
  %0 = "graph.relu"(%arg0) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %arg0 : tensor<2xf32>
}
`
	_, errs, code = opt(noteSrc, "--verify-diagnostics", "--test-break")
	assert.Equal(t, 0, code, errs)
	_, errs, code = opt(strings.Replace(noteSrc, "  // expected-note@+1 {{invalid after pass 'test-break'}}\n", "\n", 1), "--verify-diagnostics", "--test-break")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "unexpected note: the IR is invalid after pass 'test-break'")
}

// TestBadInputNeverPanics feeds malformed inputs through parsing,
// verification and the registered passes: each must give a located
// diagnostic and exit 1, never an internal error.
func TestBadInputNeverPanics(t *testing.T) {
	inputs := []string{
		"",
		"module {",
		"}}}}",
		"func.func @f() {\n}\n",
		"func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n  func.return %b : tensor<2xf32>\n}\n",
		"func.func @f(%a: tensor<-2xf32>) {\n  func.return\n}\n",
		"func.func @f(%a: tensor<2x?xf32>) {\n  func.return\n}\n",
		"func.func @f() {\n  %0 = \"graph.constant\"() {value = dense<[1.0, 2.0]> : tensor<3xf32>} : () -> tensor<3xf32>\n  func.return\n}\n",
		"func.func @f(%a: tensor<1x1x4x4xf32>, %w: tensor<1x1x9x9xf32>) -> tensor<1x1x1x1xf32> {\n  %0 = \"graph.conv2d\"(%a, %w) {strides = [0, -1], pads = [1]} : (tensor<1x1x4x4xf32>, tensor<1x1x9x9xf32>) -> tensor<1x1x1x1xf32>\n  func.return %0 : tensor<1x1x1x1xf32>\n}\n",
		"func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = \"graph.reshape\"(%a) {shape = [-1, -1]} : (tensor<2xf32>) -> tensor<2xf32>\n  func.return %0 : tensor<2xf32>\n}\n",
		"func.func @f(%a: tensor<f32>) -> tensor<f32> {\n  %0 = \"hlo.reduce\"(%a, %a) {dimensions = [5]} : (tensor<f32>, tensor<f32>) -> tensor<f32>\n  func.return %0 : tensor<f32>\n}\n",
		"func.func @f(%a: tensor<2xf32>) {\n  \"hlo.return\"(%a) : (tensor<2xf32>) -> ()\n}\n",
		"func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = \"graph.transpose\"(%a) {perm = [3]} : (tensor<2xf32>) -> tensor<2xf32>\n  func.return %0 : tensor<2xf32>\n}\n",
	}
	for i, in := range inputs {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			for _, args := range [][]string{nil, {"--canonicalize", "--constant-fold", "--legalize-to-hlo", "--fuse", "--cse", "--dce"}} {
				_, errs, code := opt(in, args...)
				assert.NotEqual(t, 2, code, "internal error for %q:\n%s", in, errs)
				if code != 0 {
					assert.Regexp(t, `(?m)^<stdin>(:\d+:\d+)?: error: `, errs)
				}
			}
		})
	}
}
