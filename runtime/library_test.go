package runtime_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	rt "github.com/tessera-ml/tessera/runtime"
)

// testLibSrc holds the entry points the tests call, in the object code ABI.
const testLibSrc = `
#include <stdint.h>
#include <stdlib.h>

/* y[2x4] = x[2x3] @ w[3x4] + 1 */
int32_t t_main(const float *x, const float *w, float *y) {
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 4; j++) {
			float s = 1.0f;
			for (int k = 0; k < 3; k++) s += x[i*3+k] * w[k*4+j];
			y[i*4+j] = s;
		}
	return 0;
}

int32_t t_fail(const float *x, float *y) { (void)x; y[0] = 42; return 7; }
int32_t t_neg(const float *x, float *y) { (void)x; (void)y; return -3; }

/* one tensor of every dtype in; out[k] = element sums as int64; flags = !bool */
int32_t t_dtypes(const double *f64, const int8_t *i8, const int16_t *i16, const int32_t *i32,
                 const int64_t *i64, const uint8_t *u8, const uint16_t *u16, const uint32_t *u32,
                 const uint64_t *u64, const uint8_t *b, int64_t *out, uint8_t *nb) {
	int64_t s[10] = {0};
	for (int i = 0; i < 3; i++) {
		s[0] += (int64_t)f64[i]; s[1] += i8[i]; s[2] += i16[i]; s[3] += i32[i]; s[4] += i64[i];
		s[5] += u8[i]; s[6] += u16[i]; s[7] += u32[i]; s[8] += (int64_t)u64[i]; s[9] += b[i];
		nb[i] = !b[i];
	}
	for (int k = 0; k < 10; k++) out[k] = s[k];
	return 0;
}

/* zero-size tensors still get a non-NULL pointer */
int32_t t_empty(const float *x, float *y) { return (x == NULL || y == NULL) ? 9 : 0; }

/* env: the value of TESSERA_NUM_THREADS now, and when the library was loaded */
static int64_t env_at_load = -2;
static int64_t env_value(void) {
	const char *s = getenv("TESSERA_NUM_THREADS");
	return s ? atoll(s) : -1;
}
__attribute__((constructor)) static void record_env(void) { env_at_load = env_value(); }
int32_t t_env(int64_t *out) { out[0] = env_value(); out[1] = env_at_load; return 0; }

/* a slow call for Bench's minTime: about 0.2 ms of work */
int32_t t_spin(const float *x, float *y) {
	volatile float s = 0;
	for (int i = 0; i < 200000; i++) s += x[0];
	y[0] = s;
	return 0;
}
`

// manyArgsSrc returns a C entry point t_many with n-1 int64[1] inputs and
// one int64[1] output holding sum (k+1) * in_k.
func manyArgsSrc(n int) string {
	var params, body []string
	for k := range n - 1 {
		params = append(params, fmt.Sprintf("const int64_t *a%d", k))
		body = append(body, fmt.Sprintf("s += %d * a%d[0];", k+1, k))
	}
	return fmt.Sprintf("#include <stdint.h>\nint32_t t_many(%s, int64_t *out) { int64_t s = 0; %s out[0] = s; return 0; }\n",
		strings.Join(params, ", "), strings.Join(body, " "))
}

func f32(shape []int64) rt.TensorSpec { return rt.TensorSpec{DType: rt.Float32, Shape: shape} }

func mustSlice[T rt.Scalar](t *testing.T, shape []int64, data []T) *rt.Tensor {
	t.Helper()
	x, err := rt.FromSlice(shape, data)
	require.NoError(t, err)
	return x
}

func mustNew(t *testing.T, dt rt.DType, shape []int64) *rt.Tensor {
	t.Helper()
	x, err := rt.NewTensor(dt, shape)
	require.NoError(t, err)
	return x
}

func openTestLib(t *testing.T) *rt.Library {
	t.Helper()
	so := buildSO(t, t.TempDir(), "testlib", testLibSrc)
	lib, err := rt.Open(so)
	require.NoError(t, err)
	t.Cleanup(func() { _ = lib.Close() })
	return lib
}

func mainEntry(t *testing.T, lib *rt.Library) *rt.Entry {
	t.Helper()
	e, err := lib.Func("t_main", []rt.TensorSpec{{Name: "x", DType: rt.Float32, Shape: []int64{2, 3}}, f32([]int64{3, 4})}, []rt.TensorSpec{f32([]int64{2, 4})})
	require.NoError(t, err)
	return e
}

func mainInputs(t *testing.T) (x, w *rt.Tensor, want []float32) {
	xs := []float32{1, 2, 3, 4, 5, 6}
	ws := []float32{1, 0, 0, 2, 0, 1, 0, 3, 0, 0, 1, 4}
	want = make([]float32, 8)
	for i := range 2 {
		for j := range 4 {
			s := float32(1)
			for k := range 3 {
				s += xs[i*3+k] * ws[k*4+j]
			}
			want[i*4+j] = s
		}
	}
	return mustSlice(t, []int64{2, 3}, xs), mustSlice(t, []int64{3, 4}, ws), want
}

func TestCallComputesResult(t *testing.T) {
	lib := openTestLib(t)
	e := mainEntry(t, lib)
	x, w, want := mainInputs(t)
	y := mustNew(t, rt.Float32, []int64{2, 4})
	require.NoError(t, e.Call([]*rt.Tensor{x, w}, []*rt.Tensor{y}))
	got, err := y.Float32s()
	require.NoError(t, err)
	assert.Equal(t, want, got)
	assert.Equal(t, []float32{2, 3, 4, 21, 5, 6, 7, 48}, got) // by hand
	assert.Equal(t, "t_main", e.Symbol())
	assert.Len(t, e.Inputs(), 2)
	assert.Len(t, e.Outputs(), 1)
}

func TestCallAllDTypes(t *testing.T) {
	lib := openTestLib(t)
	in := []*rt.Tensor{
		mustSlice(t, []int64{3}, []float64{1.5, 2, 3}),
		mustSlice(t, []int64{3}, []int8{-1, -2, 100}),
		mustSlice(t, []int64{3}, []int16{-300, 1, 2}),
		mustSlice(t, []int64{3}, []int32{1 << 30, 1, 1}),
		mustSlice(t, []int64{3}, []int64{1 << 40, -1, 0}),
		mustSlice(t, []int64{3}, []uint8{255, 1, 0}),
		mustSlice(t, []int64{3}, []uint16{65535, 0, 1}),
		mustSlice(t, []int64{3}, []uint32{1 << 31, 0, 0}),
		mustSlice(t, []int64{3}, []uint64{1 << 50, 2, 3}),
		mustSlice(t, []int64{3}, []bool{true, false, true}),
	}
	var specs []rt.TensorSpec
	for _, x := range in {
		specs = append(specs, x.Spec())
	}
	e, err := lib.Func("t_dtypes", specs, []rt.TensorSpec{{DType: rt.Int64, Shape: []int64{10}}, {DType: rt.Bool, Shape: []int64{3}}})
	require.NoError(t, err)
	out := mustNew(t, rt.Int64, []int64{10})
	nb := mustNew(t, rt.Bool, []int64{3})
	require.NoError(t, e.Call(in, []*rt.Tensor{out, nb}))
	sums, err := out.Int64s()
	require.NoError(t, err)
	assert.Equal(t, []int64{6, 97, -297, 1<<30 + 2, 1<<40 - 1, 256, 65536, 1 << 31, 1<<50 + 5, 2}, sums)
	flags, err := rt.View[bool](nb)
	require.NoError(t, err)
	assert.Equal(t, []bool{false, true, false}, flags)
}

func TestCallValidatesBeforeCalling(t *testing.T) {
	lib := openTestLib(t)
	e := mainEntry(t, lib)
	x, w, _ := mainInputs(t)
	y := mustNew(t, rt.Float32, []int64{2, 4})
	cases := []struct {
		name    string
		in, out []*rt.Tensor
		msg     string
	}{
		{"wrong shape", []*rt.Tensor{x, mustNew(t, rt.Float32, []int64{4, 3})}, []*rt.Tensor{y}, "t_main input 1 is tensor<4x3xf32>, want tensor<3x4xf32>"},
		{"wrong dtype", []*rt.Tensor{mustNew(t, rt.Float64, []int64{2, 3}), w}, []*rt.Tensor{y}, "t_main input 0 (x) is tensor<2x3xf64>, want tensor<2x3xf32>"},
		{"wrong rank", []*rt.Tensor{x, w}, []*rt.Tensor{mustNew(t, rt.Float32, []int64{8})}, "t_main output 0 is tensor<8xf32>, want tensor<2x4xf32>"},
		{"too few inputs", []*rt.Tensor{x}, []*rt.Tensor{y}, "t_main takes 2 inputs, got 1"},
		{"too many outputs", []*rt.Tensor{x, w}, []*rt.Tensor{y, y}, "t_main takes 1 outputs, got 2"},
		{"nil tensor", []*rt.Tensor{x, nil}, []*rt.Tensor{y}, "t_main input 1 is nil"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := e.Call(c.in, c.out)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.msg)
		})
	}
	// The output is untouched: nothing was called.
	got, err := y.Float32s()
	require.NoError(t, err)
	assert.Equal(t, make([]float32, 8), got)
}

func TestCallRejectsAliasedOutput(t *testing.T) {
	lib := openTestLib(t)
	e, err := lib.Func("t_empty", []rt.TensorSpec{f32([]int64{4})}, []rt.TensorSpec{f32([]int64{4})})
	require.NoError(t, err)
	buf := make([]float32, 6)
	a := mustSlice(t, []int64{4}, buf[:4])
	b := mustSlice(t, []int64{4}, buf[2:])
	err = e.Call([]*rt.Tensor{a}, []*rt.Tensor{b})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "output 0 shares memory with input 0")
	// Distinct memory is accepted, and inputs may share memory.
	require.NoError(t, e.Call([]*rt.Tensor{a}, []*rt.Tensor{mustNew(t, rt.Float32, []int64{4})}))
}

func TestCallZeroSizeTensorsGetPointers(t *testing.T) {
	lib := openTestLib(t)
	e, err := lib.Func("t_empty", []rt.TensorSpec{f32([]int64{0, 3})}, []rt.TensorSpec{f32([]int64{0})})
	require.NoError(t, err)
	require.NoError(t, e.Call([]*rt.Tensor{mustNew(t, rt.Float32, []int64{0, 3})}, []*rt.Tensor{mustNew(t, rt.Float32, []int64{0})}))
}

func TestCallNonZeroReturn(t *testing.T) {
	lib := openTestLib(t)
	for sym, code := range map[string]int32{"t_fail": 7, "t_neg": -3} {
		e, err := lib.Func(sym, []rt.TensorSpec{f32([]int64{1})}, []rt.TensorSpec{f32([]int64{1})})
		require.NoError(t, err)
		err = e.Call([]*rt.Tensor{mustNew(t, rt.Float32, []int64{1})}, []*rt.Tensor{mustNew(t, rt.Float32, []int64{1})})
		var ce *rt.CallError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, code, ce.Code)
		assert.Equal(t, sym, ce.Symbol)
		assert.EqualError(t, err, fmt.Sprintf("runtime: %s returned %d", sym, code))
	}
}

func TestManyArguments(t *testing.T) {
	n := rt.MaxTensors
	so := buildSO(t, t.TempDir(), "many", manyArgsSrc(n))
	lib, err := rt.Open(so)
	require.NoError(t, err)
	defer lib.Close()
	spec := rt.TensorSpec{DType: rt.Int64, Shape: []int64{1}}
	var specs []rt.TensorSpec
	var in []*rt.Tensor
	want := int64(0)
	for k := range n - 1 {
		specs = append(specs, spec)
		v := int64(1000 + k*k)
		in = append(in, mustSlice(t, []int64{1}, []int64{v}))
		want += int64(k+1) * v
	}
	e, err := lib.Func("t_many", specs, []rt.TensorSpec{spec})
	require.NoError(t, err)
	out := mustNew(t, rt.Int64, []int64{1})
	require.NoError(t, e.Call(in, []*rt.Tensor{out}))
	got, err := out.Int64s()
	require.NoError(t, err)
	assert.Equal(t, want, got[0], "every one of the %d arguments reaches C in order", n)

	// One more tensor than the limit is refused up front.
	_, err = lib.Func("t_many", append(specs, spec), []rt.TensorSpec{spec})
	require.Error(t, err)
	assert.Contains(t, err.Error(), fmt.Sprintf("takes %d tensors; at most %d are supported", n+1, n))
}

func TestFuncErrors(t *testing.T) {
	lib := openTestLib(t)
	_, err := lib.Func("no_such_symbol", nil, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `symbol "no_such_symbol" not found in `)

	_, err = lib.Func("t_main", []rt.TensorSpec{{DType: rt.Float32, Shape: []int64{-1}}}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "t_main input 0: runtime: shape [-1]: dimension 0 is negative")

	_, err = lib.Func("t_main", nil, []rt.TensorSpec{{Shape: []int64{1}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "t_main output 0: runtime: invalid dtype")
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := rt.Open(filepath.Join(dir, "missing.so"))
	require.Error(t, err)
	assert.ErrorIs(t, err, os.ErrNotExist)

	_, err = rt.OpenCopy(filepath.Join(dir, "missing.so"))
	require.ErrorIs(t, err, os.ErrNotExist)

	notELF := filepath.Join(dir, "text.so")
	require.NoError(t, os.WriteFile(notELF, []byte("not a shared object"), 0o644))
	_, err = rt.Open(notELF)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "dlopen")

	// A failed OpenCopy leaves no copy behind.
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "tessera-lib-*"))
	_, err = rt.OpenCopy(notELF)
	require.Error(t, err)
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "tessera-lib-*"))
	assert.ElementsMatch(t, before, after)
}

func TestCloseThenUse(t *testing.T) {
	so := buildSO(t, t.TempDir(), "testlib", testLibSrc)
	lib, err := rt.Open(so)
	require.NoError(t, err)
	e := mainEntry(t, lib)
	x, w, _ := mainInputs(t)
	y := mustNew(t, rt.Float32, []int64{2, 4})
	require.NoError(t, lib.Close())
	assert.ErrorIs(t, e.Call([]*rt.Tensor{x, w}, []*rt.Tensor{y}), rt.ErrClosed)
	_, err = e.Bench([]*rt.Tensor{x, w}, []*rt.Tensor{y}, 0, 1, 0)
	assert.ErrorIs(t, err, rt.ErrClosed)
	_, err = lib.Symbol("t_main")
	assert.ErrorIs(t, err, rt.ErrClosed)
	assert.ErrorIs(t, lib.Close(), rt.ErrClosed)
}

// versionSrc is a library whose t_version reports the version it was built with.
func versionSrc(v int) string {
	return fmt.Sprintf("#include <stdint.h>\nint32_t t_version(int32_t *out) { out[0] = %d; return 0; }\n", v)
}

func callVersion(t *testing.T, lib *rt.Library) int32 {
	t.Helper()
	spec := rt.TensorSpec{DType: rt.Int32, Shape: []int64{1}}
	e, err := lib.Func("t_version", nil, []rt.TensorSpec{spec})
	require.NoError(t, err)
	out := mustNew(t, rt.Int32, []int64{1})
	require.NoError(t, e.Call(nil, []*rt.Tensor{out}))
	v, err := out.Int32s()
	require.NoError(t, err)
	return v[0]
}

// rebuild compiles versionSrc(v) and renames it onto path, as a build
// system replacing a library would.
func rebuild(t *testing.T, path string, v int) {
	t.Helper()
	tmp := buildSO(t, t.TempDir(), "version", versionSrc(v))
	require.NoError(t, os.Rename(tmp, path))
}

func TestOpenCopyLoadsRebuiltLibrary(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.so")
	rebuild(t, path, 1)

	first, err := rt.OpenCopy(path)
	require.NoError(t, err)
	assert.Equal(t, path, first.Path())
	assert.NotEqual(t, path, first.LoadedPath())
	assert.Regexp(t, `model-[0-9a-f]{16}\.so$`, first.LoadedPath())
	assert.FileExists(t, first.LoadedPath())
	plain, err := rt.Open(path)
	require.NoError(t, err)
	assert.Equal(t, int32(1), callVersion(t, first))
	assert.Equal(t, int32(1), callVersion(t, plain))

	rebuild(t, path, 2)
	second, err := rt.OpenCopy(path)
	require.NoError(t, err)
	assert.Equal(t, int32(2), callVersion(t, second), "OpenCopy sees the rebuilt file")
	assert.Equal(t, int32(1), callVersion(t, first), "the first copy keeps its code")
	assert.NotEqual(t, first.LoadedPath(), second.LoadedPath())

	// Plain Open of a path that is still loaded gets the cached old code:
	// this is why distinct libraries need distinct paths.
	again, err := rt.Open(path)
	require.NoError(t, err)
	assert.Equal(t, int32(1), callVersion(t, again))
	require.NoError(t, again.Close())
	require.NoError(t, plain.Close())

	for _, lib := range []*rt.Library{first, second} {
		copyPath := lib.LoadedPath()
		require.NoError(t, lib.Close())
		assert.NoFileExists(t, copyPath, "Close removes the copy")
		assert.NoDirExists(t, filepath.Dir(copyPath))
	}
	assert.FileExists(t, path, "Close never touches the original")
}

func TestBench(t *testing.T) {
	lib := openTestLib(t)
	e := mainEntry(t, lib)
	x, w, want := mainInputs(t)
	y := mustNew(t, rt.Float32, []int64{2, 4})

	tm, err := e.Bench([]*rt.Tensor{x, w}, []*rt.Tensor{y}, 2, 5, 0)
	require.NoError(t, err)
	require.Len(t, tm.Seconds, 5)
	for _, s := range tm.Seconds {
		assert.Greater(t, s, 0.0)
		assert.Less(t, s, 1.0)
	}
	got, err := y.Float32s()
	require.NoError(t, err)
	assert.Equal(t, want, got, "outputs hold the results")

	// minTime drives the repeat count: ~0.2 ms calls for at least 20 ms.
	spin, err := lib.Func("t_spin", []rt.TensorSpec{f32([]int64{1})}, []rt.TensorSpec{f32([]int64{1})})
	require.NoError(t, err)
	tm, err = spin.Bench([]*rt.Tensor{mustSlice(t, []int64{1}, []float32{1})}, []*rt.Tensor{mustNew(t, rt.Float32, []int64{1})}, 1, 3, 20*time.Millisecond)
	require.NoError(t, err)
	total := 0.0
	lo, hi := tm.Seconds[0], tm.Seconds[0]
	for _, s := range tm.Seconds {
		total += s
		lo, hi = min(lo, s), max(hi, s)
	}
	assert.GreaterOrEqual(t, total, 0.020)
	assert.GreaterOrEqual(t, len(tm.Seconds), 3)
	assert.True(t, tm.Median >= lo && tm.Median <= hi, "median %g within [%g, %g]", tm.Median, lo, hi)
	assert.Less(t, total, 20.0)

	// Zero repeats and zero time still time one call.
	tm, err = e.Bench([]*rt.Tensor{x, w}, []*rt.Tensor{y}, 0, 0, 0)
	require.NoError(t, err)
	assert.Len(t, tm.Seconds, 1)
	assert.Equal(t, tm.Seconds[0], tm.Median)
}

func TestBenchErrors(t *testing.T) {
	lib := openTestLib(t)
	e := mainEntry(t, lib)
	x, w, _ := mainInputs(t)
	y := mustNew(t, rt.Float32, []int64{2, 4})
	_, err := e.Bench([]*rt.Tensor{x, w}, []*rt.Tensor{y}, -1, 1, 0)
	assert.ErrorContains(t, err, "must not be negative")
	_, err = e.Bench([]*rt.Tensor{x}, []*rt.Tensor{y}, 0, 1, 0)
	assert.ErrorContains(t, err, "takes 2 inputs, got 1")

	fail, err := lib.Func("t_fail", []rt.TensorSpec{f32([]int64{1})}, []rt.TensorSpec{f32([]int64{1})})
	require.NoError(t, err)
	tm, err := fail.Bench([]*rt.Tensor{mustNew(t, rt.Float32, []int64{1})}, []*rt.Tensor{mustNew(t, rt.Float32, []int64{1})}, 3, 3, 0)
	var ce *rt.CallError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, int32(7), ce.Code)
	assert.Empty(t, tm.Seconds)
}

func TestEntrySymbol(t *testing.T) {
	assert.Equal(t, "lenet5_main", rt.EntrySymbol("lenet5", "main"))
}

// TestNoCgo builds and runs a program that loads and calls a shared object
// with CGO_ENABLED=0, the configuration purego exists for.
func TestNoCgo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go program; skipped with -short")
	}
	goTool, err := exec.LookPath("go")
	require.NoError(t, err, "the go tool is needed to build the CGO_ENABLED=0 program")
	dir := t.TempDir()
	so := buildSO(t, dir, "testlib", testLibSrc)
	bin := filepath.Join(dir, "nocgo")
	build := exec.Command(goTool, "build", "-o", bin, "./testdata/nocgo")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "CGO_ENABLED=0 go build:\n%s", out)
	out, err = exec.Command(bin, so).CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Equal(t, "cgo=false y=[2 3 4 21 5 6 7 48] threads=3/3\n", string(out))
}

func TestConcurrentCallsThenClose(t *testing.T) {
	so := buildSO(t, t.TempDir(), "testlib", testLibSrc)
	lib, err := rt.Open(so)
	require.NoError(t, err)
	e := mainEntry(t, lib)
	x, w, want := mainInputs(t)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			y, err := rt.NewTensor(rt.Float32, []int64{2, 4})
			if err == nil {
				for range 100 {
					if err = e.Call([]*rt.Tensor{x, w}, []*rt.Tensor{y}); err != nil {
						break
					}
				}
			}
			if err == nil {
				got, _ := y.Float32s()
				if !assert.ObjectsAreEqual(want, got) {
					err = fmt.Errorf("got %v, want %v", got, want)
				}
			}
			errs <- err
		}()
	}
	for range 8 {
		assert.NoError(t, <-errs)
	}
	require.NoError(t, lib.Close())
}

// BenchEach runs its hook before every warm-up and timed call; flushing
// the inputs there (FlushCache) leaves their values and the results
// unchanged.
func TestBenchEachFlushesInputs(t *testing.T) {
	lib := openTestLib(t)
	e := mainEntry(t, lib)
	x, w, want := mainInputs(t)
	xb := append([]byte(nil), x.Bytes()...)
	y := mustNew(t, rt.Float32, []int64{2, 4})
	calls := 0
	tm, err := e.BenchEach([]*rt.Tensor{x, w}, []*rt.Tensor{y}, 2, 4, 0, func() {
		calls++
		rt.FlushCache(x.Bytes())
		rt.FlushCache(w.Bytes()[1:]) // an unaligned start flushes its whole line
	})
	require.NoError(t, err)
	assert.Len(t, tm.Seconds, 4)
	assert.Equal(t, 6, calls, "2 warm-up + 4 timed calls")
	assert.Equal(t, xb, x.Bytes(), "flushing keeps the data")
	got, err := y.Float32s()
	require.NoError(t, err)
	assert.Equal(t, want, got)
	rt.FlushCache(nil)
}
