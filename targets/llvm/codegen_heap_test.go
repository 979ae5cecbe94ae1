package llvm

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// keptBlockC calls sym_entry (B[i] = 2·A[n-1-i] + n, through a heap
// scratch buffer of n floats) with growing and shrinking n, on the main
// thread and on two threads at once, and checks every result: the kept
// block grows when a call needs more, is reused when it does not, and is
// the thread's own.
const keptBlockC = `
#include <dlfcn.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef int32_t (*fn_t)(int64_t, const float *, float *);
static fn_t fn;

static int check(int64_t n) {
	float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
	for (int64_t i = 0; i < n; i++) a[i] = (float)(i % 97) * 0.5f;
	int bad = fn(n, a, b) != 0;
	for (int64_t i = 0; i < n; i++) bad |= b[i] != 2.0f * a[n - 1 - i] + (float)n;
	free(a); free(b);
	return bad;
}

static void *worker(void *arg) {
	int64_t base = (int64_t)(intptr_t)arg;
	int bad = 0;
	for (int r = 0; r < 50; r++) bad |= check(base + (r * 7919) % 30000);
	return (void *)(intptr_t)bad;
}

int main(int argc, char **argv) {
	void *h = dlopen(argv[1], RTLD_NOW);
	if (!h || !(fn = (fn_t)dlsym(h, "sym_entry"))) { fprintf(stderr, "load failed\n"); return 2; }
	int64_t ns[] = {1, 100000, 7, 100000, 3, 250000, 250000, 2};
	for (int i = 0; i < 8; i++) if (check(ns[i])) { printf("wrong at n=%lld\n", (long long)ns[i]); return 1; }
	pthread_t t[2];
	for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, worker, (void *)(intptr_t)(1 + i * 5000));
	for (int i = 0; i < 2; i++) { void *r; pthread_join(t[i], &r); if (r) { printf("wrong on thread %d\n", i); return 1; } }
	/* Unloading frees every block (the module's destructor): 40 loads, each
	   taking a 1 MB block, leave the heap as it was. */
	dlclose(h);
	struct mallinfo2 m0 = mallinfo2();
	for (int i = 0; i < 40; i++) {
		void *h2 = dlopen(argv[1], RTLD_NOW);
		if (!h2 || !(fn = (fn_t)dlsym(h2, "sym_entry"))) { fprintf(stderr, "reload failed\n"); return 2; }
		if (check(250000)) { printf("wrong after reload\n"); return 1; }
		dlclose(h2);
	}
	struct mallinfo2 m1 = mallinfo2();
	size_t grew = (m1.uordblks + m1.hblkhd) - (m0.uordblks + m0.hblkhd);
	if ((m1.uordblks + m1.hblkhd) > (m0.uordblks + m0.hblkhd) + (4 << 20)) { printf("blocks leak across dlclose: %zu bytes\n", grew); return 1; }
	printf("ok\n");
	return 0;
}
`

// TestKeptBlockGrowsAndIsPerThread: a heap-allocated scratch buffer of a
// symbolic size is a block its site keeps for the thread (keptBlock),
// and calls with larger, smaller and equal sizes, sequential and from
// two threads at once, all compute the right result; unloading the
// library frees the blocks (40 load-call-unload cycles leave the heap as
// it was).
func TestKeptBlockGrowsAndIsPerThread(t *testing.T) {
	m := parseModule(t, `tir.func @sym(%n: index, %A: buffer<(%n)xf32>, out %B: buffer<(%n)xf32>) attributes {global_symbol = "sym_entry"} {
  tir.allocate %T: buffer<(%n)xf32> {
    tir.for %i = 0 to %n {
      %T[%n - 1 - %i] = %A[%i] * 2.0
    }
    tir.for %i = 0 to %n {
      %B[%i] = %T[%i] + cast<f32>(%n)
    }
  }
}
`)
	so, res := buildShared(t, m, Options{StrictFP: true})
	assert.Contains(t, res.LLVM(), "thread_local global i64 0")
	dir := t.TempDir()
	src := filepath.Join(dir, "kept.c")
	require.NoError(t, os.WriteFile(src, []byte(keptBlockC), 0o644))
	bin := filepath.Join(dir, "kept")
	out, err := exec.Command("cc", "-O1", "-o", bin, src, "-ldl", "-lpthread").CombinedOutput()
	require.NoError(t, err, string(out))
	out, err = exec.Command(bin, so).CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Equal(t, "ok\n", string(out))
}
