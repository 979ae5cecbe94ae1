package distributed

import (
	"os"
	"testing"

	"github.com/tessera-ml/tessera/autotune"
)

// TestMain lets the test binary serve as the workers' builder and runner
// processes (autotune's local measurer starts os.Executable()).
func TestMain(m *testing.M) {
	autotune.MaybeRunWorker()
	os.Exit(m.Run())
}
