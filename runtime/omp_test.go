package runtime_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	rt "github.com/tessera-ml/tessera/runtime"
)

// ompSrc launches its loop through libgomp, as compiled parallel loops do.
const ompSrc = `
#include <stdint.h>
#include <omp.h>
int32_t t_omp(const float *x, float *y, int32_t *nthreads) {
	int n = 0;
	#pragma omp parallel
	{
		#pragma omp single
		n = omp_get_num_threads();
		#pragma omp for
		for (int i = 0; i < 1024; i++) y[i] = 2 * x[i];
	}
	nthreads[0] = n;
	return 0;
}
`

// TestOpenMPLibraryReloads loads, calls and unloads a library that runs
// libgomp worker threads several times: unloading must not pull libgomp
// out from under its idle workers.
func TestOpenMPLibraryReloads(t *testing.T) {
	so := buildSO(t, t.TempDir(), "omp", ompSrc, "-fopenmp")
	x := mustNew(t, rt.Float32, []int64{1024})
	xs, err := x.Float32s()
	require.NoError(t, err)
	for i := range xs {
		xs[i] = float32(i)
	}
	for range 5 {
		lib, err := rt.OpenCopy(so)
		require.NoError(t, err)
		e, err := lib.Func("t_omp", []rt.TensorSpec{x.Spec()}, []rt.TensorSpec{x.Spec(), {DType: rt.Int32, Shape: []int64{1}}})
		require.NoError(t, err)
		y := mustNew(t, rt.Float32, []int64{1024})
		n := mustNew(t, rt.Int32, []int64{1})
		require.NoError(t, e.Call([]*rt.Tensor{x}, []*rt.Tensor{y, n}))
		ys, err := y.Float32s()
		require.NoError(t, err)
		assert.Equal(t, float32(2046), ys[1023])
		ns, err := n.Int32s()
		require.NoError(t, err)
		assert.GreaterOrEqual(t, ns[0], int32(1))
		require.NoError(t, lib.Close())
	}
}
