package autotune

import (
	"os"
	"testing"
)

// TestMain lets the test binary serve as the tuner's builder and runner
// worker processes (the tuner starts os.Executable() with WorkerEnv set).
func TestMain(m *testing.M) {
	MaybeRunWorker()
	os.Exit(m.Run())
}
