package lit

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tools the suite resolves at start-up. binDir holds the freshly built
// tessera-opt, tessera and not, plus the FileCheck wrapper and mlir-opt link.
var (
	binDir    string
	buildErr  error
	fileCheck string // LLVM 16's FileCheck, "" when missing
	mlirOpt   string // mlir-opt-16, "" when missing
	llc       string // llc-16, "" when missing
)

const installHint = "run `make test` (it installs LLVM 16), or `sudo apt-get install llvm-16 llvm-16-tools mlir-16-tools`"

// testTimeout bounds one test file (all its RUN lines).
const testTimeout = 5 * time.Minute

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tessera-lit-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "lit: cannot create the bin directory:", err)
		os.Exit(1)
	}
	binDir = dir
	fileCheck = findTool("FileCheck-16", "/usr/lib/llvm-16/bin/FileCheck")
	mlirOpt = findTool("mlir-opt-16", "/usr/lib/llvm-16/bin/mlir-opt")
	llc = findTool("llc-16", "/usr/lib/llvm-16/bin/llc")
	buildErr = setupBin(dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// findTool returns the first candidate that is an executable path or a
// command on PATH, or "".
func findTool(candidates ...string) string {
	for _, c := range candidates {
		if p, err := exec.LookPath(c); err == nil {
			if abs, err := filepath.Abs(p); err == nil {
				return abs
			}
			return p
		}
	}
	return ""
}

// repoRoot is the module root: lit/ is one level below it.
func repoRoot() (string, error) { return filepath.Abs("..") }

// setupBin builds the tools into dir and adds the FileCheck wrapper and the
// mlir-opt link.
func setupBin(dir string) error {
	root, err := repoRoot()
	if err != nil {
		return err
	}
	goTool := findTool("go", filepath.Join(os.Getenv("GOROOT"), "bin", "go"))
	if goTool == "" {
		return errors.New("the go command is not on PATH")
	}
	cmd := exec.Command(goTool, "build", "-o", dir+string(filepath.Separator), "./tools/tessera-opt", "./cmd/tessera", "./lit/tools/not")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./tools/tessera-opt ./cmd/tessera ./lit/tools/not failed: %v\n%s", err, out)
	}
	if fileCheck != "" {
		// Always --dump-input=fail, unless the RUN line chose a mode itself
		// (FileCheck rejects the option twice).
		script := fmt.Sprintf(`#!/usr/bin/env bash
for a in "$@"; do
  case "$a" in -dump-input*|--dump-input*) exec %q "$@";; esac
done
exec %q --dump-input=fail "$@"
`, fileCheck, fileCheck)
		if err := os.WriteFile(filepath.Join(dir, "FileCheck"), []byte(script), 0o755); err != nil {
			return err
		}
	}
	if mlirOpt != "" {
		if err := os.Symlink(mlirOpt, filepath.Join(dir, "mlir-opt")); err != nil {
			return err
		}
	}
	return nil
}

// features are the names REQUIRES lines may list.
func features() map[string]bool {
	return map[string]bool{
		"tessera-opt": true,
		"FileCheck":   fileCheck != "",
		"mlir-opt":    mlirOpt != "",
		"llc":         llc != "",
	}
}

// litFile is a parsed test file.
type litFile struct {
	path     string // absolute
	runs     []runLine
	requires []string
}

// runLine is one command, after joining `\` continuations.
type runLine struct {
	line int // line of the first RUN: of the command
	cmd  string
}

var directiveRE = regexp.MustCompile(`^\s*(?://|#|;)\s*(RUN|REQUIRES):(.*)$`)

// parseLitFile extracts RUN and REQUIRES directives.
func parseLitFile(path string, src string) (*litFile, error) {
	lf := &litFile{path: path}
	var cur *runLine
	sc := bufio.NewScanner(strings.NewReader(src))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		m := directiveRE.FindStringSubmatch(sc.Text())
		if m == nil {
			if cur != nil {
				return nil, fmt.Errorf("%s:%d: RUN line ends with '\\' but the next line is not a RUN line", path, cur.line)
			}
			continue
		}
		body := strings.TrimSpace(m[2])
		if m[1] == "REQUIRES" {
			if cur != nil {
				return nil, fmt.Errorf("%s:%d: RUN line ends with '\\' but the next line is not a RUN line", path, cur.line)
			}
			for _, f := range strings.Split(body, ",") {
				if f = strings.TrimSpace(f); f != "" {
					lf.requires = append(lf.requires, f)
				}
			}
			continue
		}
		if cur == nil {
			cur = &runLine{line: n}
		} else {
			cur.cmd += " "
		}
		cont := strings.HasSuffix(body, `\`)
		cur.cmd += strings.TrimSpace(strings.TrimSuffix(body, `\`))
		if !cont {
			if cur.cmd == "" {
				return nil, fmt.Errorf("%s:%d: empty RUN line", path, cur.line)
			}
			lf.runs = append(lf.runs, *cur)
			cur = nil
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if cur != nil {
		return nil, fmt.Errorf("%s:%d: the last RUN line ends with '\\'", path, cur.line)
	}
	return lf, nil
}

// substitute expands lit's %-substitutions; an unknown %x is kept as is.
func substitute(cmd string, subs map[byte]string) string {
	var b strings.Builder
	for i := 0; i < len(cmd); i++ {
		if cmd[i] == '%' && i+1 < len(cmd) {
			if cmd[i+1] == '%' {
				b.WriteByte('%')
				i++
				continue
			}
			if v, ok := subs[cmd[i+1]]; ok {
				b.WriteString(v)
				i++
				continue
			}
		}
		b.WriteByte(cmd[i])
	}
	return b.String()
}

// discover lists the test files below root (relative, slash-separated,
// sorted), skipping Inputs and tools directories.
func discover(root string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (d.Name() == "Inputs" || d.Name() == "tools" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(p); ext == ".mlir" || ext == ".tir" || ext == ".s" {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

// requireTools fails the test when the suite cannot run at all.
func requireTools(t *testing.T) {
	t.Helper()
	require.NoError(t, buildErr, "building the lit tools failed")
	if fileCheck == "" {
		t.Fatalf("LLVM 16's FileCheck is not installed (looked for FileCheck-16 on PATH and /usr/lib/llvm-16/bin/FileCheck): %s", installHint)
	}
}

func TestLit(t *testing.T) {
	requireTools(t)
	files, err := discover(".")
	require.NoError(t, err)
	require.NotEmpty(t, files, "no *.mlir, *.tir or *.s test files found under lit/")
	for _, rel := range files {
		t.Run(rel, func(t *testing.T) {
			t.Parallel()
			runLitFile(t, rel)
		})
	}
}

func runLitFile(t *testing.T, rel string) {
	abs, err := filepath.Abs(filepath.FromSlash(rel))
	require.NoError(t, err)
	src, err := os.ReadFile(abs)
	require.NoError(t, err)
	lf, err := parseLitFile(rel, string(src))
	require.NoError(t, err)
	if len(lf.runs) == 0 {
		t.Fatalf("%s has no RUN lines (data files belong in an Inputs/ directory)", rel)
	}
	feats := features()
	for _, f := range lf.requires {
		has, known := feats[f]
		if !known {
			t.Fatalf("%s: REQUIRES names unknown feature %q (known: tessera-opt, FileCheck, mlir-opt, llc)", rel, f)
		}
		if !has {
			t.Skipf("%s requires %s, which is not installed: %s", rel, f, installHint)
		}
	}
	tmp := t.TempDir()
	subs := map[byte]string{
		's': abs,
		'S': filepath.Dir(abs),
		'p': filepath.Dir(abs),
		't': filepath.Join(tmp, filepath.Base(abs)+".tmp"),
		'T': tmp,
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	env := append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, r := range lf.runs {
		cmdline := substitute(r.cmd, subs)
		cmd := exec.CommandContext(ctx, "bash", "-o", "pipefail", "-c", cmdline)
		cmd.Dir = filepath.Dir(abs)
		cmd.Env = env
		// On timeout, kill the whole pipeline, not only bash.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 10 * time.Second
		out, err := cmd.CombinedOutput()
		if err != nil {
			status := err.Error()
			if ctx.Err() != nil {
				status = fmt.Sprintf("timed out after %v", testTimeout)
			}
			t.Fatalf("RUN line at %s:%d failed (%s):\n$ %s\n%s", rel, r.line, status, cmdline, limit(out, 200<<10))
		}
	}
}

// limit keeps the tail of very long command output.
func limit(out []byte, n int) string {
	if len(out) <= n {
		return string(out)
	}
	return fmt.Sprintf("[... %d bytes cut ...]\n%s", len(out)-n, out[len(out)-n:])
}

func TestParseLitFile(t *testing.T) {
	src := `// RUN: tessera-opt %s \
// RUN:   --canonicalize | FileCheck %s
// REQUIRES: mlir-opt, llc
func.func @f() { func.return }
  # RUN: echo done
// CHECK: func.func
`
	lf, err := parseLitFile("x.mlir", src)
	require.NoError(t, err)
	assert.Equal(t, []runLine{
		{line: 1, cmd: "tessera-opt %s --canonicalize | FileCheck %s"},
		{line: 5, cmd: "echo done"},
	}, lf.runs)
	assert.Equal(t, []string{"mlir-opt", "llc"}, lf.requires)

	_, err = parseLitFile("y.mlir", "// RUN: a \\\nfunc.func\n")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "y.mlir:1")
	_, err = parseLitFile("z.mlir", "// RUN: a \\\n")
	require.Error(t, err)
	_, err = parseLitFile("e.mlir", "// RUN:   \n")
	require.Error(t, err)
}

func TestSubstitute(t *testing.T) {
	subs := map[byte]string{'s': "/a/b.mlir", 'S': "/a", 't': "/tmp/x/b.mlir.tmp"}
	assert.Equal(t, "tessera-opt /a/b.mlir -o /tmp/x/b.mlir.tmp && ls /a", substitute("tessera-opt %s -o %t && ls %S", subs))
	assert.Equal(t, "printf '%d' %q 100%", substitute("printf '%%d' %q 100%", subs))
	assert.Equal(t, "%arg0", substitute("%arg0", subs))
}

func TestDiscover(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a/x.mlir", "a/Inputs/data.mlir", "b/y.tir", "b/z.go", "tools/t.mlir", "top.mlir"} {
		full := filepath.Join(dir, filepath.FromSlash(p))
		require.NoError(t, os.MkdirAll(filepath.Dir(full), 0o755))
		require.NoError(t, os.WriteFile(full, nil, 0o644))
	}
	files, err := discover(dir)
	require.NoError(t, err)
	assert.Equal(t, []string{"a/x.mlir", "b/y.tir", "top.mlir"}, files)
}

// TestFileCheckWrapper checks that the wrapper passes --dump-input=fail:
// a failing check must show the input dump.
func TestFileCheckWrapper(t *testing.T) {
	requireTools(t)
	dir := t.TempDir()
	check := filepath.Join(dir, "c.txt")
	require.NoError(t, os.WriteFile(check, []byte("// CHECK: expected-text\n"), 0o644))
	cmd := exec.Command(filepath.Join(binDir, "FileCheck"), check)
	cmd.Stdin = strings.NewReader("some other text\n")
	out, err := cmd.CombinedOutput()
	require.Error(t, err)
	assert.Contains(t, string(out), "Input was:")
	assert.Contains(t, string(out), "some other text")

	cmd = exec.Command(filepath.Join(binDir, "FileCheck"), "--dump-input=never", check)
	cmd.Stdin = strings.NewReader("some other text\n")
	out, err = cmd.CombinedOutput()
	require.Error(t, err)
	assert.NotContains(t, string(out), "Input was:")
}
