package runtime

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"unsafe"

	"github.com/x448/float16"
)

// Alignment is the byte alignment of the data of every Tensor allocated by
// this package (NewTensor, ReadNPY): one cache line, enough for any vector
// load the compiled code issues. Tensors that wrap caller memory
// (FromSlice, FromBytes) keep the caller's alignment, which Go guarantees
// to be at least the element size.
const Alignment = 64

// TensorSpec describes one argument of a compiled entry point: its element
// type and its row-major shape (dimension sizes, outermost first; an empty
// shape is a scalar holding one element). Name is used in error messages
// only and may be empty.
type TensorSpec struct {
	Name  string
	DType DType
	Shape []int64
}

// String prints the spec as "name: tensor<2x3xf32>".
func (s TensorSpec) String() string {
	t := typeString(s.DType, s.Shape)
	if s.Name == "" {
		return t
	}
	return s.Name + ": " + t
}

// Validate checks that the DType is supported and that every dimension is
// non-negative with an element count whose byte size fits in an int.
func (s TensorSpec) Validate() error {
	_, err := byteSize(s.DType, s.Shape)
	return err
}

// Tensor is a dense row-major array of one DType held in host memory. Its
// bytes are the elements in native byte order, laid out exactly as the
// compiled code's ABI expects (one pointer per tensor). A Tensor is not
// safe for concurrent writes; the shape is fixed at creation.
type Tensor struct {
	dtype DType
	shape []int64
	data  []byte
}

// typeString formats dtype and shape as an MLIR tensor type.
func typeString(dt DType, shape []int64) string {
	b := []byte("tensor<")
	for _, d := range shape {
		b = fmt.Appendf(b, "%dx", d)
	}
	return string(b) + dt.String() + ">"
}

// byteSize returns the number of bytes of a dense tensor of dt and shape,
// or an error for an invalid dtype, a negative dimension or an overflow.
func byteSize(dt DType, shape []int64) (int, error) {
	if !dt.Valid() {
		return 0, fmt.Errorf("runtime: invalid dtype %v", dt)
	}
	n := int64(1)
	for i, d := range shape {
		if d < 0 {
			return 0, fmt.Errorf("runtime: shape %v: dimension %d is negative", shape, i)
		}
		if d != 0 && n > math.MaxInt64/d {
			return 0, fmt.Errorf("runtime: shape %v: element count overflows int64", shape)
		}
		n *= d
	}
	size := int64(dt.Size())
	if n > int64(math.MaxInt)/size {
		return 0, fmt.Errorf("runtime: shape %v of %v: byte size overflows int", shape, dt)
	}
	return int(n * size), nil
}

// alignedBytes allocates n zeroed bytes whose first byte is Alignment-aligned.
func alignedBytes(n int) []byte {
	if n == 0 {
		return []byte{}
	}
	buf := make([]byte, n+Alignment-1)
	off := 0
	if r := int(uintptr(unsafe.Pointer(&buf[0])) % Alignment); r != 0 {
		off = Alignment - r
	}
	return buf[off : off+n : off+n]
}

// NewTensor allocates a zero-filled tensor of dtype dt and row-major shape
// (dimension sizes, outermost first; nil or empty for a scalar). Its data
// is Alignment-aligned. It returns an error for an invalid dtype, a
// negative dimension or a size that overflows.
func NewTensor(dt DType, shape []int64) (*Tensor, error) {
	n, err := byteSize(dt, shape)
	if err != nil {
		return nil, err
	}
	return &Tensor{dtype: dt, shape: slices.Clone(shape), data: alignedBytes(n)}, nil
}

// FromBytes wraps data (row-major elements of dt in native byte order)
// without copying it; the tensor and the caller share the memory. len(data)
// must be exactly the byte size of shape, and data must be aligned to the
// element size (any Go allocation of a typed slice is).
func FromBytes(dt DType, shape []int64, data []byte) (*Tensor, error) {
	n, err := byteSize(dt, shape)
	if err != nil {
		return nil, err
	}
	if len(data) != n {
		return nil, fmt.Errorf("runtime: %s needs %d bytes, got %d", typeString(dt, shape), n, len(data))
	}
	if n > 0 && uintptr(unsafe.Pointer(&data[0]))%uintptr(dt.Size()) != 0 {
		return nil, fmt.Errorf("runtime: %s: data is not aligned to %d bytes", typeString(dt, shape), dt.Size())
	}
	if dt == Bool {
		for i, b := range data {
			if b > 1 {
				return nil, fmt.Errorf("runtime: %s: byte %d is %d, bool elements must be 0 or 1", typeString(dt, shape), i, b)
			}
		}
	}
	return &Tensor{dtype: dt, shape: slices.Clone(shape), data: data[:n:n]}, nil
}

// FromSlice wraps data (row-major, len(data) = product of shape) without
// copying it; the tensor and the caller share the memory. The DType is
// that of T (float32 → f32, int64 → i64, bool → i1, ...).
func FromSlice[T Scalar](shape []int64, data []T) (*Tensor, error) {
	dt := DTypeOf[T]()
	n, err := byteSize(dt, shape)
	if err != nil {
		return nil, err
	}
	if len(data)*dt.Size() != n {
		return nil, fmt.Errorf("runtime: %s needs %d elements, got %d", typeString(dt, shape), n/dt.Size(), len(data))
	}
	var b []byte
	if n > 0 {
		b = unsafe.Slice((*byte)(unsafe.Pointer(&data[0])), n)
	} else {
		b = []byte{}
	}
	return &Tensor{dtype: dt, shape: slices.Clone(shape), data: b}, nil
}

// View returns the elements of t as a []T sharing t's memory (writes
// through the slice change the tensor). It returns an error when T does
// not match t's DType. For Bool tensors every byte must be 0 or 1, which
// this package maintains and compiled code must too.
func View[T Scalar](t *Tensor) ([]T, error) {
	if t == nil {
		return nil, fmt.Errorf("runtime: View of a nil tensor")
	}
	want := DTypeOf[T]()
	if t.dtype != want {
		return nil, fmt.Errorf("runtime: tensor is %v, not %v", t.typeString(), want)
	}
	if len(t.data) == 0 {
		return []T{}, nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&t.data[0])), len(t.data)/want.Size()), nil
}

// Float32s is View[float32]: the elements of an f32 tensor, shared.
func (t *Tensor) Float32s() ([]float32, error) { return View[float32](t) }

// Float64s is View[float64]: the elements of an f64 tensor, shared.
func (t *Tensor) Float64s() ([]float64, error) { return View[float64](t) }

// Int32s is View[int32]: the elements of an i32 tensor, shared.
func (t *Tensor) Int32s() ([]int32, error) { return View[int32](t) }

// Int64s is View[int64]: the elements of an i64 tensor, shared.
func (t *Tensor) Int64s() ([]int64, error) { return View[int64](t) }

// DType is the element type.
func (t *Tensor) DType() DType { return t.dtype }

// Shape returns a copy of the row-major shape (nil or empty for a scalar).
func (t *Tensor) Shape() []int64 { return slices.Clone(t.shape) }

// Rank is the number of dimensions (0 for a scalar).
func (t *Tensor) Rank() int { return len(t.shape) }

// NumElements is the product of the shape (1 for a scalar; 0 for the zero
// Tensor value, which has no dtype).
func (t *Tensor) NumElements() int {
	if !t.dtype.Valid() {
		return 0
	}
	return len(t.data) / t.dtype.Size()
}

// Bytes returns the row-major element bytes in native byte order, sharing
// the tensor's memory.
func (t *Tensor) Bytes() []byte { return t.data }

// Spec returns the tensor's dtype and shape as an unnamed TensorSpec.
func (t *Tensor) Spec() TensorSpec {
	return TensorSpec{DType: t.dtype, Shape: t.Shape()}
}

// String prints the MLIR type, e.g. "tensor<2x3xf32>".
func (t *Tensor) String() string { return t.typeString() }

func (t *Tensor) typeString() string { return typeString(t.dtype, t.shape) }

// Clone returns a deep copy with freshly allocated, aligned memory.
func (t *Tensor) Clone() *Tensor {
	c := &Tensor{dtype: t.dtype, shape: slices.Clone(t.shape), data: alignedBytes(len(t.data))}
	copy(c.data, t.data)
	return c
}

// Float64Values returns t's elements converted to float64, for every
// dtype: floats exactly (f16 and bf16 widened), integers exactly below
// 2^53 in magnitude (ui64 as unsigned), i1 as 0 or 1.
func (t *Tensor) Float64Values() []float64 {
	out := make([]float64, t.NumElements())
	size := t.dtype.Size()
	for i := range out {
		out[i] = t.float64At(t.data[i*size:])
	}
	return out
}

func (t *Tensor) float64At(b []byte) float64 {
	le := binary.LittleEndian
	switch t.dtype {
	case Float32:
		return float64(math.Float32frombits(le.Uint32(b)))
	case Float64:
		return math.Float64frombits(le.Uint64(b))
	case Float16:
		return float64(float16.Frombits(le.Uint16(b)).Float32())
	case BFloat16:
		return float64(math.Float32frombits(uint32(le.Uint16(b)) << 16))
	case Int8:
		return float64(int8(b[0]))
	case Int16:
		return float64(int16(le.Uint16(b)))
	case Int32:
		return float64(int32(le.Uint32(b)))
	case Int64:
		return float64(int64(le.Uint64(b)))
	case Uint8, Bool:
		return float64(b[0])
	case Uint16:
		return float64(le.Uint16(b))
	case Uint32:
		return float64(le.Uint32(b))
	case Uint64:
		return float64(le.Uint64(b))
	}
	return math.NaN()
}

// SetFloat64Values stores vals (one per element) into t, converting each
// to t's dtype: float dtypes round to nearest even (f16 through
// github.com/x448/float16 from the float32 nearest, bf16 likewise from
// float32, as PyTorch's c10::BFloat16 does), integer dtypes truncate toward
// zero and wrap (two's complement), i1 stores v != 0.
func (t *Tensor) SetFloat64Values(vals []float64) error {
	if len(vals) != t.NumElements() {
		return fmt.Errorf("runtime: %s needs %d values, got %d", t.typeString(), t.NumElements(), len(vals))
	}
	le := binary.LittleEndian
	size := t.dtype.Size()
	for i, v := range vals {
		b := t.data[i*size:]
		switch t.dtype {
		case Float32:
			le.PutUint32(b, math.Float32bits(float32(v)))
		case Float64:
			le.PutUint64(b, math.Float64bits(v))
		case Float16:
			le.PutUint16(b, float16.Fromfloat32(float32(v)).Bits())
		case BFloat16:
			le.PutUint16(b, bf16Bits(float32(v)))
		case Bool:
			b[0] = 0
			if v != 0 {
				b[0] = 1
			}
		default:
			u := truncWrap(v)
			switch size {
			case 1:
				b[0] = byte(u)
			case 2:
				le.PutUint16(b, uint16(u))
			case 4:
				le.PutUint32(b, uint32(u))
			default:
				le.PutUint64(b, u)
			}
		}
	}
	return nil
}

// SetInt64Bits stores the low bytes of each of vals (two's complement) into
// an integer or i1 tensor: the bit patterns of any integer dtype, ui64
// values from 2^63 being negative int64s.
func (t *Tensor) SetInt64Bits(vals []int64) error {
	if len(vals) != t.NumElements() {
		return fmt.Errorf("runtime: %s needs %d values, got %d", t.typeString(), t.NumElements(), len(vals))
	}
	switch t.dtype {
	case Float32, Float64, Float16, BFloat16:
		return fmt.Errorf("runtime: SetInt64Bits on %s", t.typeString())
	}
	size := t.dtype.Size()
	for i, v := range vals {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(v))
		copy(t.data[i*size:(i+1)*size], b[:size])
	}
	return nil
}

// truncWrap is v truncated toward zero, modulo 2^64 (NaN → 0).
func truncWrap(v float64) uint64 {
	v = math.Trunc(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return 0
	case math.Abs(v) < 1<<63:
		return uint64(int64(v))
	case v >= 1<<64 || v < -(1<<64):
		v = math.Mod(v, 1<<64)
	}
	if v < 0 {
		v += 1 << 64
	}
	if v >= 1<<64 {
		return math.MaxUint64
	}
	return uint64(v)
}

// bf16Bits rounds f to bfloat16 bits, to nearest even (the upper 16 bits
// after adding 0x7FFF plus the lowest kept bit, PyTorch's c10::BFloat16
// round_to_nearest_even); a NaN stays a quiet NaN.
func bf16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	if f != f {
		return uint16(b>>16) | 0x40
	}
	return uint16((b + 0x7FFF + (b>>16)&1) >> 16)
}
