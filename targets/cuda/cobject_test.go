package cuda

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/targets"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// stubCUDA is a libcuda.so stand-in for tests without a GPU: memory is
// host memory, a launch runs nothing but is logged (kernel, grid, block,
// shared bytes), as is every call that matters. STUB_LAUNCH_FAIL=N makes
// every launch return N.
const stubCUDA = `#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static void *current;
static int inited;
int cuInit(unsigned f) { inited = 1; printf("init\n"); return 0; }
int cuDeviceGet(int *d, int o) { *d = o; return 0; }
int cuDevicePrimaryCtxRetain(void **c, int d) { *c = (void *)16; printf("retain %d\n", d); return 0; }
int cuCtxGetCurrent(void **c) { if (!inited) return 3; *c = current; return 0; }
int cuCtxSetCurrent(void *c) { current = c; return 0; }
int cuCtxSynchronize(void) { printf("sync\n"); return 0; }
int cuModuleLoadData(void **m, const void *img) {
	printf("module %s\n", strstr((const char *)img, ".entry") ? "entries" : "none");
	*m = (void *)32;
	return 0;
}
int cuModuleGetFunction(void **f, void *m, const char *name) { *f = strdup(name); printf("function %s\n", name); return 0; }
int cuMemAlloc_v2(uint64_t *p, size_t n) { *p = (uint64_t)(uintptr_t)calloc(n, 1); printf("alloc %zu\n", n); return 0; }
int cuMemFree_v2(uint64_t p) { free((void *)(uintptr_t)p); printf("free\n"); return 0; }
int cuMemcpyHtoD_v2(uint64_t d, const void *h, size_t n) { memcpy((void *)(uintptr_t)d, h, n); printf("htod %zu\n", n); return 0; }
int cuMemcpyDtoH_v2(void *h, uint64_t d, size_t n) { memcpy(h, (void *)(uintptr_t)d, n); printf("dtoh %zu\n", n); return 0; }
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
		unsigned shm, void *stream, void **params, void **extra) {
	printf("launch %s %u %u %u %u %u %u %u\n", (char *)f, gx, gy, gz, bx, by, bz, shm);
	if (getenv("STUB_LAUNCH_FAIL")) return atoi(getenv("STUB_LAUNCH_FAIL"));
	return 0;
}
`

// TestCABIObject: --emit obj writes an x86-64 object with <prefix>_main
// and <prefix>_main_device calling the CUDA driver API, and a header
// declaring both; a C program built against the header and linked with a
// stub libcuda runs it twice: the first call takes device 0's primary
// context, loads the PTX, finds each kernel, uploads each weight once and
// allocates the intermediate; every call copies the input in, launches
// the kernels in plan order with the artifact's grid and block, waits,
// copies the output back and frees its copies. A failing launch returns
// its CUresult and still frees them.
func TestCABIObject(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler (cc)")
	}
	src := strings.NewReplacer("W0", denseList(108, 0.1), "W1", denseList(27, -0.07)).Replace(mlpTIR)
	m, err := tir.ParseString("net.tir", src)
	require.NoError(t, err)
	tg, err := NewTarget(targets.Options{})
	require.NoError(t, err)
	for i, f := range m.Funcs {
		if _, ok := f.Attrs[tir.AttrKernel]; ok {
			s, err := tg.Rules().Default(f)
			require.NoError(t, err)
			m.Funcs[i] = s.Func()
		}
	}
	art, err := targets.Build(tg, m, "net")
	require.NoError(t, err)
	dir := t.TempDir()
	obj := filepath.Join(dir, "net.o")
	_, err = art.Emit("obj", obj)
	require.NoError(t, err)
	header, err := os.ReadFile(filepath.Join(dir, "net.h"))
	require.NoError(t, err)
	assert.Contains(t, string(header), "int32_t net_main(const float *in0, float *out0);")
	assert.Contains(t, string(header), "int32_t net_main_device(uint64_t in0, uint64_t out0, void *stream);")
	assert.Contains(t, string(header), "Link with -lcuda.")

	require.NoError(t, os.WriteFile(filepath.Join(dir, "cuda_stub.c"), []byte(stubCUDA), 0o644))
	prog := `#include <stdio.h>
#include "net.h"
int main(void) {
	float x[60], y[15];
	for (int i = 0; i < 60; i++) x[i] = (float)i;
	for (int call = 0; call < 2; call++) {
		int rc = net_main(x, y);
		printf("rc %d\n", rc);
	}
	return 0;
}
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.c"), []byte(prog), 0o644))
	run := func(name string, args ...string) string {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s %v:\n%s", name, args, out)
		return string(out)
	}
	run(cc, "-shared", "-fPIC", "-o", "libcuda.so", "cuda_stub.c")
	run(cc, "-o", "main", "main.c", "net.o", "-L.", "-lcuda", "-Wl,-rpath,"+dir)
	log := run("./main")

	a := art.(*Artifact)
	var launches []string
	for _, c := range a.Plans["net_main"].Calls {
		for _, k := range a.Device.Kernels {
			if k.Name == c.Kernel {
				launches = append(launches, fmt.Sprintf("launch %s %d %d %d %d %d %d %d", k.Name, k.Grid[0], k.Grid[1], k.Grid[2], k.Block[0], k.Block[1], k.Block[2], k.SharedBytes))
			}
		}
	}
	require.Len(t, launches, 2)
	want := []string{"init", "retain 0", "alloc 240", "htod 240", "alloc 60",
		"module entries", "function gemm_relu", "function gemm",
		"alloc 432", "htod 432", "alloc 36", "htod 36", "alloc 108", "htod 108", "alloc 180",
		launches[0], launches[1], "sync", "dtoh 60", "free", "free", "rc 0",
		"init", "alloc 240", "htod 240", "alloc 60", launches[0], launches[1], "sync", "dtoh 60", "free", "free", "rc 0"}
	assert.Equal(t, want, strings.Split(strings.TrimSpace(log), "\n"))

	cmd := exec.Command("./main")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "STUB_LAUNCH_FAIL=700")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	assert.Equal(t, []string{launches[0], "free", "free", "rc 700"}, lines[len(lines)-4:], "%s", out)
}
