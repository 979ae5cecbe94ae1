package graphir

import (
	"fmt"
	"math"

	"github.com/x448/float16"

	"github.com/tessera-ml/tessera/internal/fp"
)

// Tensor is a value of the reference evaluators: a static shape and dtype
// and row-major elements held as float64. Integer tensors hold exact
// integers (|v| < 2^53); f32/f16/bf16 tensors hold values already rounded
// to their storage precision (see Round).
type Tensor struct {
	Type *TensorType
	Data []float64
}

// NewZeroTensor allocates a zero-filled tensor of type t.
func NewZeroTensor(t *TensorType) *Tensor {
	return &Tensor{Type: t, Data: make([]float64, t.NumElements())}
}

// TensorFromDense materializes a dense elements attribute.
// It fails for elided data.
func TensorFromDense(d *DenseElementsAttr) (*Tensor, error) {
	if d.Elided {
		return nil, fmt.Errorf("constant data of %s %s", d.Type, ElidedHint)
	}
	return &Tensor{Type: d.Type, Data: d.Values()}, nil
}

// ToDense converts t to a dense elements attribute (no splat compression).
func (t *Tensor) ToDense() *DenseElementsAttr {
	d := &DenseElementsAttr{Type: t.Type}
	if t.Type.Elem.IsFloat() {
		d.Floats = append([]float64(nil), t.Data...)
	} else {
		d.Ints = make([]int64, len(t.Data))
		for i, v := range t.Data {
			d.Ints[i] = IntBits(t.Type.Elem, v)
		}
	}
	return d
}

// SharedDense is ToDense without the copy of a float tensor's data: the
// attribute and t share it, so neither may be changed afterwards (IR
// data is never changed in place: passes build new tensors). It keeps a
// model's weights from being copied at every level.
func (t *Tensor) SharedDense() *DenseElementsAttr {
	if !t.Type.Elem.IsFloat() {
		return t.ToDense()
	}
	return &DenseElementsAttr{Type: t.Type, Floats: t.Data}
}

// Shape returns the tensor's dimensions.
func (t *Tensor) Shape() []int64 { return t.Type.Shape }

// Strides returns row-major strides in elements.
func Strides(shape []int64) []int64 {
	s := make([]int64, len(shape))
	acc := int64(1)
	for i := len(shape) - 1; i >= 0; i-- {
		s[i] = acc
		acc *= shape[i]
	}
	return s
}

// Round rounds every element to the storage precision of the dtype
// (f32/f16/bf16 round to nearest even; integers truncate toward zero and
// wrap at their width; i1 becomes 0 or 1) and returns t.
func (t *Tensor) Round() *Tensor {
	for i, v := range t.Data {
		t.Data[i] = RoundTo(t.Type.Elem, v)
	}
	return t
}

// RoundTo rounds v to the storage precision of dtype d: f32, f16 and bf16
// round once to nearest even (f16/bf16 directly from v, as numpy's
// float64 → float16 cast does, not through float32); signed integers
// truncate toward zero and wrap at their width; unsigned integers
// truncate and wrap modulo 2^bits (-1 → 255 for ui8); i1 maps non-zero
// to 1. Integer values are exact below 2^53 in magnitude (ui64 and i64
// values beyond are rounded by the float64 representation).
func RoundTo(d DType, v float64) float64 {
	switch d {
	case F32:
		return float64(float32(v))
	case F16:
		return float64(float16.Fromfloat32(float32Odd(v)).Float32())
	case BF16:
		return float64(BF16ToFloat32(Float32ToBF16(float32Odd(v))))
	case I1:
		if v != 0 {
			return 1
		}
		return 0
	case I8:
		return float64(int8(wrap64(v)))
	case I16:
		return float64(int16(wrap64(v)))
	case I32:
		return float64(int32(wrap64(v)))
	case I64:
		if math.IsNaN(v) {
			return 0
		}
		return math.Trunc(v)
	case UI8:
		return float64(uint8(wrap64(v)))
	case UI16:
		return float64(uint16(wrap64(v)))
	case UI32:
		return float64(uint32(wrap64(v)))
	case UI64:
		return float64(wrap64(v))
	}
	return v
}

// wrap64 is v truncated toward zero, modulo 2^64 (NaN and ±inf → 0).
// Exactly 2^64, the float64 nearest to 2^64-1, stands for 2^64-1 (the
// largest ui64, e.g. the identity of a ui64 minimum), as do negative
// values whose remainder rounds to it (-1 → 2^64-1).
func wrap64(v float64) uint64 {
	v = math.Trunc(v)
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return 0
	case math.Abs(v) < 1<<63:
		return uint64(int64(v))
	case v == 1<<64:
		return math.MaxUint64
	}
	v = math.Mod(v, 1<<64)
	if v < 0 {
		v += 1 << 64
	}
	if v >= 1<<64 {
		return math.MaxUint64
	}
	return uint64(v)
}

// IntBits is the 64-bit storage pattern of integer value v of dtype d, as
// DenseElementsAttr.Ints holds it: the value itself for signed types and
// i1 (i64 saturates at ±2^63, the float64 images of its extremes), the
// bits of uint64 for ui64 (values ≥ 2^63 are negative int64s; see wrap64).
func IntBits(d DType, v float64) int64 {
	switch {
	case d == UI64:
		return int64(wrap64(v))
	case v >= 1<<63:
		return math.MaxInt64
	case v < -(1 << 63):
		return math.MinInt64
	}
	return int64(v)
}

// IntValue is the value of the 64-bit storage pattern b of integer dtype
// d (the inverse of IntBits).
func IntValue(d DType, b int64) float64 {
	if d == UI64 {
		return float64(uint64(b))
	}
	return float64(b)
}

// The f16/bf16 conversions are internal/fp's (shared with tensorir).
var (
	Float32ToBF16 = fp.Float32ToBF16
	BF16ToFloat32 = fp.BF16ToFloat32
	F16Bits       = fp.F16Bits
	F16Value      = fp.F16Value
	float32Odd    = fp.Float32Odd
)
