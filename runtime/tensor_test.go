package runtime_test

import (
	"math"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

	rt "github.com/tessera-ml/tessera/runtime"
)

var allDTypes = []rt.DType{rt.Float32, rt.Float64, rt.Int8, rt.Int16, rt.Int32, rt.Int64, rt.Uint8, rt.Uint16, rt.Uint32, rt.Uint64, rt.Bool, rt.Float16, rt.BFloat16}

func TestDTypeNamesAndSizes(t *testing.T) {
	names := []string{"f32", "f64", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64", "i1", "f16", "bf16"}
	sizes := []int{4, 8, 1, 2, 4, 8, 1, 2, 4, 8, 1, 2, 2}
	for i, dt := range allDTypes {
		assert.Equal(t, names[i], dt.String())
		assert.Equal(t, sizes[i], dt.Size())
		assert.True(t, dt.Valid())
		back, err := rt.ParseDType(dt.String())
		require.NoError(t, err)
		assert.Equal(t, dt, back)
	}
	for alias, dt := range map[string]rt.DType{"float32": rt.Float32, "bool": rt.Bool, "u8": rt.Uint8, "int64": rt.Int64, "float16": rt.Float16, "bfloat16": rt.BFloat16} {
		got, err := rt.ParseDType(alias)
		require.NoError(t, err)
		assert.Equal(t, dt, got)
	}
	_, err := rt.ParseDType("f8")
	assert.ErrorContains(t, err, `unknown dtype "f8"`)
	assert.False(t, rt.InvalidDType.Valid())
	assert.Equal(t, 0, rt.InvalidDType.Size())
	assert.Equal(t, "dtype(200)", rt.DType(200).String())
	assert.Equal(t, rt.Bool, rt.DTypeOf[bool]())
	assert.Equal(t, rt.Uint16, rt.DTypeOf[uint16]())
	assert.Equal(t, rt.Float16, rt.DTypeOf[float16.Float16]())
}

// TestFloat64Values converts every dtype's elements to float64 and back:
// values each dtype holds exactly survive; stores round (floats, to
// nearest even) or truncate and wrap (integers).
func TestFloat64Values(t *testing.T) {
	vals := map[rt.DType][]float64{
		rt.Float32:  {1.5, float64(float32(-0.1)), float64(float32(3e38))},
		rt.Float64:  {1.5, -0.1, 1e300},
		rt.Float16:  {1.5, -0.0999755859375, 65504},
		rt.BFloat16: {1.5, -0.10009765625, 3.3895313892515355e38},
		rt.Int8:     {-128, 127, 0},
		rt.Int16:    {-32768, 32767, -1},
		rt.Int32:    {-2147483648, 2147483647, 7},
		rt.Int64:    {-1 << 53, 1 << 53, -1},
		rt.Uint8:    {0, 255, 128},
		rt.Uint16:   {0, 65535, 40000},
		rt.Uint32:   {0, 4294967295, 3000000000},
		rt.Uint64:   {0, 1 << 63, 12345678901234},
		rt.Bool:     {0, 1, 1},
	}
	for _, dt := range allDTypes {
		x := mustNew(t, dt, []int64{3})
		require.NoError(t, x.SetFloat64Values(vals[dt]), "%v", dt)
		assert.Equal(t, vals[dt], x.Float64Values(), "%v", dt)
	}
	x := mustNew(t, rt.Uint8, []int64{4})
	require.NoError(t, x.SetFloat64Values([]float64{-1, 256, 3.9, -3.9}))
	assert.Equal(t, []byte{255, 0, 3, 253}, x.Bytes(), "wrap modulo 256 after truncation")
	h := mustNew(t, rt.Float16, []int64{3})
	require.NoError(t, h.SetFloat64Values([]float64{1 + 1.0/2048, 1 + 3.0/2048, 70000}))
	assert.Equal(t, []float64{1, 1 + 4.0/2048, math.Inf(1)}, h.Float64Values(), "ties to even; overflow to inf")
	b := mustNew(t, rt.BFloat16, []int64{2})
	require.NoError(t, b.SetFloat64Values([]float64{1 + 1.0/256, 1 + 3.0/256}))
	assert.Equal(t, []float64{1, 1 + 4.0/256}, b.Float64Values(), "bf16 ties to even")
	assert.Error(t, b.SetFloat64Values([]float64{1}), "wrong count")
	i := mustNew(t, rt.Uint64, []int64{2})
	require.NoError(t, i.SetInt64Bits([]int64{-1, 5}))
	assert.Equal(t, []uint64{math.MaxUint64, 5}, must(rt.View[uint64](i)))
	assert.Error(t, h.SetInt64Bits([]int64{1, 2, 3}), "not an integer tensor")
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestNewTensor(t *testing.T) {
	for _, dt := range allDTypes {
		x, err := rt.NewTensor(dt, []int64{3, 5, 7})
		require.NoError(t, err)
		assert.Equal(t, dt, x.DType())
		assert.Equal(t, []int64{3, 5, 7}, x.Shape())
		assert.Equal(t, 3, x.Rank())
		assert.Equal(t, 105, x.NumElements())
		assert.Len(t, x.Bytes(), 105*dt.Size())
		assert.Zero(t, uintptr(unsafe.Pointer(&x.Bytes()[0]))%rt.Alignment, "aligned to %d", rt.Alignment)
		assert.Equal(t, make([]byte, 105*dt.Size()), x.Bytes(), "zeroed")
	}
	s, err := rt.NewTensor(rt.Float64, nil)
	require.NoError(t, err)
	assert.Equal(t, 1, s.NumElements(), "a scalar holds one element")
	assert.Equal(t, "tensor<f64>", s.String())

	shape := []int64{2, 2}
	x, err := rt.NewTensor(rt.Int32, shape)
	require.NoError(t, err)
	shape[0] = 9
	x.Shape()[1] = 9
	assert.Equal(t, []int64{2, 2}, x.Shape(), "the shape is copied in and out")

	_, err = rt.NewTensor(rt.Float32, []int64{2, -1})
	assert.ErrorContains(t, err, "dimension 1 is negative")
	_, err = rt.NewTensor(rt.Float32, []int64{math.MaxInt64, 2})
	assert.ErrorContains(t, err, "overflows")
	_, err = rt.NewTensor(rt.InvalidDType, []int64{1})
	assert.ErrorContains(t, err, "invalid dtype")
}

func TestFromSliceSharesMemory(t *testing.T) {
	data := []int64{1, 2, 3, 4, 5, 6}
	x, err := rt.FromSlice([]int64{2, 3}, data)
	require.NoError(t, err)
	assert.Equal(t, rt.Int64, x.DType())
	assert.Equal(t, "tensor<2x3xi64>", x.String())
	v, err := x.Int64s()
	require.NoError(t, err)
	v[4] = 50
	assert.Equal(t, int64(50), data[4])

	_, err = rt.FromSlice([]int64{4}, []float32{1, 2, 3})
	assert.ErrorContains(t, err, "tensor<4xf32> needs 4 elements, got 3")

	e, err := rt.FromSlice([]int64{0, 3}, []float32{})
	require.NoError(t, err)
	assert.Equal(t, 0, e.NumElements())
	ev, err := e.Float32s()
	require.NoError(t, err)
	assert.Empty(t, ev)
}

func TestViewChecksDType(t *testing.T) {
	x := mustNew(t, rt.Float32, []int64{4})
	_, err := x.Int64s()
	assert.ErrorContains(t, err, "tensor is tensor<4xf32>, not i64")
	_, err = rt.View[bool](x)
	assert.ErrorContains(t, err, "not i1")
	_, err = rt.View[float32](nil)
	assert.ErrorContains(t, err, "nil tensor")
	f, err := x.Float64s()
	assert.Error(t, err)
	assert.Nil(t, f)
}

func TestFromBytes(t *testing.T) {
	b := make([]byte, 8)
	x, err := rt.FromBytes(rt.Float32, []int64{2}, b)
	require.NoError(t, err)
	v, err := x.Float32s()
	require.NoError(t, err)
	v[1] = 1
	assert.Equal(t, []byte{0, 0, 0, 0, 0, 0, 0x80, 0x3f}, b, "shared, native little-endian")

	_, err = rt.FromBytes(rt.Float32, []int64{3}, b)
	assert.ErrorContains(t, err, "needs 12 bytes, got 8")
	_, err = rt.FromBytes(rt.Int32, []int64{1}, b[1:5])
	assert.ErrorContains(t, err, "not aligned to 4 bytes")
	_, err = rt.FromBytes(rt.Bool, []int64{2}, []byte{1, 2})
	assert.ErrorContains(t, err, "byte 1 is 2, bool elements must be 0 or 1")
}

func TestCloneIsDeep(t *testing.T) {
	x := mustSlice(t, []int64{3}, []int32{1, 2, 3})
	c := x.Clone()
	v, err := c.Int32s()
	require.NoError(t, err)
	v[0] = 100
	orig, err := x.Int32s()
	require.NoError(t, err)
	assert.Equal(t, []int32{1, 2, 3}, orig)
	assert.Equal(t, x.Spec(), c.Spec())
}

func TestTensorSpec(t *testing.T) {
	s := rt.TensorSpec{Name: "x", DType: rt.Uint8, Shape: []int64{1, 3, 32, 32}}
	assert.Equal(t, "x: tensor<1x3x32x32xui8>", s.String())
	assert.NoError(t, s.Validate())
	assert.ErrorContains(t, rt.TensorSpec{DType: rt.Float32, Shape: []int64{-2}}.Validate(), "negative")
}

func TestZeroTensorValue(t *testing.T) {
	var z rt.Tensor
	assert.Equal(t, 0, z.NumElements())
	_, err := z.Float32s()
	assert.ErrorContains(t, err, "not f32")
}
