/* Times one entry point of a Tessera object on random input: the median
 * of ITERS calls after 3 warm-up calls, printed as "median X ms".
 * Built by bench/dynamic_vs_static.sh with -DNSYM=N: N = 1 or 2 against
 * an object compiled once with N symbolic dimensions
 * (model_main(batch, [seq,] x, y)), N = 0 against an object compiled for
 * one size (model_main(x, y)).
 * Usage: driver ITERS IN_PER OUT_PER SIZE... (the symbols' sizes, also
 * for NSYM=0: they size the buffers, IN_PER and OUT_PER elements per unit
 * of their product) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "model.h"

#ifndef NSYM
#define NSYM 0
#endif

static int cmp(const void *a, const void *b) {
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char **argv) {
	if (argc < 5) { fprintf(stderr, "usage: driver ITERS IN_PER OUT_PER SIZE...\n"); return 2; }
	long iters = atol(argv[1]), in_per = atol(argv[2]), out_per = atol(argv[3]), rows = 1;
	int64_t size[4] = {1, 1, 1, 1};
	for (int i = 4; i < argc && i < 8; i++) {
		size[i - 4] = atol(argv[i]);
		rows *= size[i - 4];
	}
	float *x = malloc(sizeof(float) * in_per * rows), *y = malloc(sizeof(float) * out_per * rows);
	double *t = malloc(sizeof(double) * iters);
	srand(1);
	for (long i = 0; i < in_per * rows; i++) x[i] = (float)(rand() % 2001) / 2000.0f - 0.5f;
	for (long i = -3; i < iters; i++) {
		double t0 = now();
#if NSYM == 2
		int32_t rc = model_main(size[0], size[1], x, y);
#elif NSYM == 1
		int32_t rc = model_main(size[0], x, y);
#else
		int32_t rc = model_main(x, y);
#endif
		if (rc != 0) { fprintf(stderr, "model_main returned %d\n", rc); return 4; }
		if (i >= 0) t[i] = now() - t0;
	}
	qsort(t, iters, sizeof(double), cmp);
	printf("median %.4f ms\n", 1e3 * t[iters / 2]);
	return 0;
}
