package lit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// validInput is one chunk of a lit input that tessera-opt accepts.
type validInput struct {
	name string // rel path, with #chunk when split
	src  string
}

// splitChunks splits like tessera-opt --split-input-file: on lines starting
// with `// -----`, padding each chunk with newlines so that line numbers
// stay those of the file.
func splitChunks(src string) []string {
	var chunks []string
	var cur strings.Builder
	lines := strings.SplitAfter(src, "\n")
	start := 0
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimLeft(l, " \t"), "// -----") {
			chunks = append(chunks, strings.Repeat("\n", start)+cur.String())
			cur.Reset()
			start = i + 1
			continue
		}
		cur.WriteString(l)
	}
	return append(chunks, strings.Repeat("\n", start)+cur.String())
}

// optRun runs the built tessera-opt on src (as stdin) and returns stdout,
// stderr and the exit status.
func optRun(t *testing.T, src string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "tessera-opt"), append(args, "-")...)
	cmd.Stdin = strings.NewReader(src)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), errb.String(), 0
	case errors.As(err, &ee):
		return out.String(), errb.String(), ee.ExitCode()
	}
	t.Fatalf("cannot run tessera-opt: %v", err)
	return "", "", -1
}

// validInputs returns, per lit file, the chunks that parse and verify. Files
// that test diagnostics (--verify-diagnostics, expected-error) are left out;
// chunks that tessera-opt rejects are left out with a log line; an internal
// error (exit 2) fails the test.
func validInputs(t *testing.T) map[string][]validInput {
	t.Helper()
	files, err := discover(".")
	require.NoError(t, err)
	out := map[string][]validInput{}
	for _, rel := range files {
		if filepath.Ext(rel) != ".mlir" {
			continue
		}
		src, err := os.ReadFile(filepath.FromSlash(rel))
		require.NoError(t, err)
		lf, err := parseLitFile(rel, string(src))
		require.NoError(t, err)
		split := false
		skip := strings.Contains(string(src), "expected-error")
		for _, r := range lf.runs {
			skip = skip || strings.Contains(r.cmd, "verify-diagnostics")
			split = split || strings.Contains(r.cmd, "split-input-file")
		}
		if skip {
			continue
		}
		chunks := []string{string(src)}
		if split {
			chunks = splitChunks(string(src))
		}
		for i, c := range chunks {
			name := rel
			if split {
				name = fmt.Sprintf("%s#%d", rel, i)
			}
			_, stderr, code := optRun(t, c, "--allow-unregistered-dialect")
			switch code {
			case 0:
				out[rel] = append(out[rel], validInput{name, c})
			case 1:
				t.Logf("%s: left out, tessera-opt rejects it: %s", name, firstLine(stderr))
			default:
				t.Errorf("%s: tessera-opt exited with status %d:\n%s", name, code, stderr)
			}
		}
	}
	return out
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// TestMLIROptCompat checks DESIGN.md's promise that the printed generic
// form, with locations and full constants, is accepted by
// `mlir-opt-16 --allow-unregistered-dialect`.
func TestMLIROptCompat(t *testing.T) {
	requireTools(t)
	if mlirOpt == "" {
		t.Skip("mlir-opt-16 not installed: apt-get install mlir-16-tools (make test installs it)")
	}
	inputs := validInputs(t)
	require.NotEmpty(t, inputs, "no valid lit inputs to check")
	for rel, chunks := range inputs {
		t.Run(rel, func(t *testing.T) {
			for _, in := range chunks {
				generic, stderr, code := optRun(t, in.src, "--allow-unregistered-dialect", "--mlir-print-op-generic", "--print-large-constants", "--mlir-print-debuginfo")
				require.Equal(t, 0, code, "%s: tessera-opt failed:\n%s", in.name, stderr)
				cmd := exec.Command(mlirOpt, "--allow-unregistered-dialect", "-")
				cmd.Stdin = strings.NewReader(generic)
				out, err := cmd.CombinedOutput()
				assert.NoError(t, err, "%s: mlir-opt-16 rejects the generic form:\n%s\n--- generic form ---\n%s", in.name, out, generic)
			}
		})
	}
}

// TestPrintParseIdentity checks that printing is a fixed point of parsing
// (print ∘ parse = identity on printed text) for every valid lit input, in
// the pretty and the generic form, with and without locations.
func TestPrintParseIdentity(t *testing.T) {
	requireTools(t)
	inputs := validInputs(t)
	require.NotEmpty(t, inputs, "no valid lit inputs to check")
	modes := [][]string{
		{"--print-large-constants"},
		{"--print-large-constants", "--mlir-print-op-generic"},
		{"--print-large-constants", "--mlir-print-debuginfo"},
		{"--print-large-constants", "--mlir-print-op-generic", "--mlir-print-debuginfo"},
	}
	for rel, chunks := range inputs {
		t.Run(rel, func(t *testing.T) {
			for _, in := range chunks {
				for _, mode := range modes {
					args := append([]string{"--allow-unregistered-dialect"}, mode...)
					first, stderr, code := optRun(t, in.src, args...)
					require.Equal(t, 0, code, "%s %v: %s", in.name, mode, stderr)
					second, stderr, code := optRun(t, first, args...)
					require.Equal(t, 0, code, "%s %v: the printed text does not parse:\n%s\n--- printed ---\n%s", in.name, mode, stderr, first)
					assert.Equal(t, first, second, "%s %v: printing the parsed printed text changed it", in.name, mode)
				}
			}
		})
	}
}

func TestSplitChunks(t *testing.T) {
	src := "a\n// -----\nb\nc\n  // ----- x\n"
	chunks := splitChunks(src)
	require.Len(t, chunks, 3)
	assert.Equal(t, "a\n", chunks[0])
	assert.Equal(t, "\n\nb\nc\n", chunks[1])
	assert.Equal(t, "\n\n\n\n\n", chunks[2])
}
