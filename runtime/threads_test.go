package runtime_test

import (
	goruntime "runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	rt "github.com/tessera-ml/tessera/runtime"
)

func TestSetNumThreadsReachesCompiledCode(t *testing.T) {
	t.Setenv(rt.NumThreadsEnv, "") // restored after the test
	require.NoError(t, rt.SetNumThreads(5))
	assert.Equal(t, 5, rt.NumThreads())

	lib := openTestLib(t)
	e, err := lib.Func("t_env", nil, []rt.TensorSpec{{DType: rt.Int64, Shape: []int64{2}}})
	require.NoError(t, err)
	out := mustNew(t, rt.Int64, []int64{2})
	require.NoError(t, e.Call(nil, []*rt.Tensor{out}))
	got, err := out.Int64s()
	require.NoError(t, err)
	assert.Equal(t, []int64{5, 5}, got, "getenv now and at load time")

	// Set after loading: a live getenv sees it, but what the library read
	// when it was loaded does not change — hence "before the first Open".
	require.NoError(t, rt.SetNumThreads(2))
	require.NoError(t, e.Call(nil, []*rt.Tensor{out}))
	assert.Equal(t, []int64{2, 5}, got)

	assert.ErrorContains(t, rt.SetNumThreads(0), "at least 1")
}

func TestNumThreadsFallbacks(t *testing.T) {
	t.Setenv(rt.NumThreadsEnv, "")
	t.Setenv("OMP_NUM_THREADS", "")
	assert.Equal(t, goruntime.NumCPU(), rt.NumThreads())
	t.Setenv("OMP_NUM_THREADS", "4,2")
	assert.Equal(t, 4, rt.NumThreads())
	t.Setenv(rt.NumThreadsEnv, "junk")
	assert.Equal(t, 4, rt.NumThreads())
	t.Setenv(rt.NumThreadsEnv, "7")
	assert.Equal(t, 7, rt.NumThreads())
}
