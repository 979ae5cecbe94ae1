package graphir_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/graphir"
)

// mlirOpt returns the path of LLVM 16's mlir-opt, or "" when not installed.
func mlirOpt() string {
	for _, p := range []string{"mlir-opt-16", "/usr/lib/llvm-16/bin/mlir-opt"} {
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	return ""
}

// TestGenericFormAcceptedByMLIROpt feeds the generic form of every
// round-trip case (all attribute kinds, regions, locations) to
// mlir-opt-16 --allow-unregistered-dialect, a compatibility check.
func TestGenericFormAcceptedByMLIROpt(t *testing.T) {
	opt := mlirOpt()
	if opt == "" {
		t.Skip("mlir-opt-16 not installed (apt-get install mlir-16-tools); skipping the MLIR compatibility check")
	}
	for name, src := range roundTripCases {
		t.Run(name, func(t *testing.T) {
			gen := graphir.PrintWith(graphLevel.MustParse(t, src), graphir.PrintOptions{Generic: true, DebugInfo: true})
			cmd := exec.Command(opt, "--allow-unregistered-dialect", "-")
			cmd.Stdin = strings.NewReader(gen)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "mlir-opt rejected:\n%s\n%s", gen, out)
		})
	}
}
