/* Times one entry point of a Tessera object on random input: the median
 * of ITERS calls after 3 warm-up calls, printed as "median X ms".
 * Built twice by bench/dynamic_vs_static.sh: with -DDYNAMIC against the
 * object compiled once with a symbolic batch (model_main(batch, x, y)),
 * and without against an object compiled for one batch (model_main(x, y)).
 * Usage: driver BATCH ITERS IN_PER_ROW OUT_PER_ROW */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "model.h"

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
	if (argc != 5) { fprintf(stderr, "usage: driver BATCH ITERS IN_PER_ROW OUT_PER_ROW\n"); return 2; }
	long batch = atol(argv[1]), iters = atol(argv[2]), in_per = atol(argv[3]), out_per = atol(argv[4]);
	float *x = malloc(sizeof(float) * in_per * batch), *y = malloc(sizeof(float) * out_per * batch);
	double *t = malloc(sizeof(double) * iters);
	srand(1);
	for (long i = 0; i < in_per * batch; i++) x[i] = (float)(rand() % 2001) / 2000.0f - 0.5f;
	for (long i = -3; i < iters; i++) {
		double t0 = now();
#ifdef DYNAMIC
		int32_t rc = model_main(batch, x, y);
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
