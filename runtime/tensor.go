package runtime

import (
	"fmt"
	"math"
	"slices"
	"unsafe"
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
