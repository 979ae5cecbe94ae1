package runtime_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// findCC returns the C compiler the tests build shared objects with: $CC,
// else cc, else gcc; "" when none is installed.
func findCC() string {
	for _, c := range []string{os.Getenv("CC"), "cc", "gcc"} {
		if c == "" {
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	return ""
}

// buildSO compiles C source into <dir>/<name>.so with -shared -fPIC and
// returns its path. A missing compiler fails the test with what to install;
// it never skips.
func buildSO(t *testing.T, dir, name, src string, flags ...string) string {
	t.Helper()
	cc := findCC()
	if cc == "" {
		t.Fatalf("no C compiler found ($CC, cc, gcc): the runtime tests build shared objects from C; install one (Debian: apt-get install gcc) or set CC")
	}
	c := filepath.Join(dir, name+".c")
	require.NoError(t, os.WriteFile(c, []byte(src), 0o644))
	so := filepath.Join(dir, name+".so")
	args := append([]string{"-shared", "-fPIC", "-O1", "-o", so, c}, flags...)
	out, err := exec.Command(cc, args...).CombinedOutput()
	require.NoError(t, err, "%s %s:\n%s", cc, strings.Join(args, " "), out)
	return so
}
