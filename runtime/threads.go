package runtime

import (
	"fmt"
	"os"
	goruntime "runtime"
	"strconv"
	"strings"
)

// NumThreadsEnv is the environment variable compiled code reads for its
// thread count; when unset it falls back to OMP_NUM_THREADS, then to all
// cores.
const NumThreadsEnv = "TESSERA_NUM_THREADS"

// SetNumThreads sets TESSERA_NUM_THREADS=n (n ≥ 1) for the whole process.
// The variable reaches the C environment that compiled code reads with
// getenv, with and without cgo (purego's fake cgo forwards os.Setenv to C
// setenv).
//
// Call it once at start-up, before the first Open or OpenCopy and before
// any entry point runs: compiled code and libgomp may read the environment
// when a library is loaded or on their first call and keep the value, and
// C setenv is not safe while other threads read the environment. A later
// call has no guaranteed effect on libraries already loaded.
func SetNumThreads(n int) error {
	if n < 1 {
		return fmt.Errorf("runtime: SetNumThreads(%d): the thread count must be at least 1", n)
	}
	if err := os.Setenv(NumThreadsEnv, strconv.Itoa(n)); err != nil {
		return fmt.Errorf("runtime: set %s: %w", NumThreadsEnv, err)
	}
	return nil
}

// NumThreads returns the thread count compiled code will use, by the same
// rule: TESSERA_NUM_THREADS if it is a positive integer, else the first
// entry of OMP_NUM_THREADS (which may be a list such as "4,2") if
// positive, else the number of logical CPUs usable by this process.
func NumThreads() int {
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv(NumThreadsEnv))); err == nil && n > 0 {
		return n
	}
	first, _, _ := strings.Cut(os.Getenv("OMP_NUM_THREADS"), ",")
	if n, err := strconv.Atoi(strings.TrimSpace(first)); err == nil && n > 0 {
		return n
	}
	return goruntime.NumCPU()
}
