package main

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	rt "github.com/tessera-ml/tessera/runtime"
)

// cabiCheckC is the GPU check's C program for the CUDA target's C ABI:
// it runs the MLP example through mlp_main (host pointers) and through
// mlp_main_device (device pointers it allocates, the default stream),
// compares both with the reference logits and exits 1 when either
// differs by more than 1e-3 relative (the model tolerance).
const cabiCheckC = `#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include "mlp.h"

int cuMemAlloc_v2(uint64_t *p, size_t n);
int cuMemcpyHtoD_v2(uint64_t d, const void *h, size_t n);
int cuMemcpyDtoH_v2(void *h, uint64_t d, size_t n);
int cuCtxSynchronize(void);

static float *readRaw(const char *path, long *n) {
	FILE *f = fopen(path, "rb");
	if (!f) { perror(path); exit(2); }
	fseek(f, 0, SEEK_END);
	*n = ftell(f) / 4;
	fseek(f, 0, SEEK_SET);
	float *p = malloc(*n * 4);
	if (fread(p, 4, *n, f) != (size_t)*n) { perror(path); exit(2); }
	fclose(f);
	return p;
}

static double relErr(const float *got, const float *want, long n) {
	double num = 0, den = 1;
	for (long i = 0; i < n; i++) {
		num = fmax(num, fabs((double)got[i] - want[i]));
		den = fmax(den, fabs((double)want[i]));
	}
	return num / den;
}

int main(int argc, char **argv) {
	long nx, ny;
	float *x = readRaw(argv[1], &nx), *want = readRaw(argv[2], &ny);
	float *y = calloc(ny, 4), *y2 = calloc(ny, 4);
	int rc = mlp_main(x, y);
	if (rc != 0) { printf("C ABI: mlp_main returned CUresult %d\n", rc); return 1; }
	uint64_t dx, dy;
	if (cuMemAlloc_v2(&dx, nx * 4) || cuMemAlloc_v2(&dy, ny * 4) || cuMemcpyHtoD_v2(dx, x, nx * 4)) { printf("C ABI: allocation failed\n"); return 1; }
	rc = mlp_main_device(dx, dy, 0);
	if (rc == 0) rc = cuCtxSynchronize();
	if (rc == 0) rc = cuMemcpyDtoH_v2(y2, dy, ny * 4);
	if (rc != 0) { printf("C ABI: mlp_main_device returned CUresult %d\n", rc); return 1; }
	double e1 = relErr(y, want, ny), e2 = relErr(y2, want, ny);
	printf("C ABI: mlp_main rel err %.2g, mlp_main_device rel err %.2g (%ld outputs)\n", e1, e2, ny);
	return e1 > 1e-3 || e2 > 1e-3;
}
`

// prepareCABI compiles the MLP example to a C-ABI object (cabi/mlp.o
// and mlp.h) with its input and reference logits as raw f32 files and
// the check program beside it: bench/gpu_check.sh builds it with cc
// against libcuda and runs it.
func prepareCABI(t *testing.T, dir string) {
	out := filepath.Join(dir, "cabi")
	require.NoError(t, os.MkdirAll(out, 0o755))
	err := compileTo("../../examples/mlp.mlir", compileOptions{target: "cuda", mcpu: *gpuMCPU, name: "mlp"}, "obj", filepath.Join(out, "mlp.o"), false, io.Discard, io.Discard)
	require.NoError(t, err)
	for src, dst := range map[string]string{"../../examples/digits28_x.npy": "x.bin", "../../examples/mlp_logits.npy": "y.bin"} {
		tn, err := rt.ReadNPY(src)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(out, dst), tn.Bytes(), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(out, "cabi_check.c"), []byte(cabiCheckC), 0o644))
}
