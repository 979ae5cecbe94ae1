package graphir

import (
	"fmt"
	"math"
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
			d.Ints[i] = int64(v)
		}
	}
	return d
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

// RoundTo rounds v to the storage precision of dtype d.
func RoundTo(d DType, v float64) float64 {
	switch d {
	case F32:
		return float64(float32(v))
	case F16:
		return roundF16(v)
	case BF16:
		return roundBF16(v)
	case I1:
		if v != 0 {
			return 1
		}
		return 0
	case I8:
		return float64(int8(int64(v)))
	case I32:
		return float64(int32(int64(v)))
	case I64:
		if math.IsNaN(v) {
			return 0
		}
		return math.Trunc(v)
	}
	return v
}

func roundBF16(v float64) float64 {
	f := float32(v)
	if f != f {
		return v
	}
	b := math.Float32bits(f)
	b += 0x7FFF + (b>>16)&1
	return float64(math.Float32frombits(b &^ 0xFFFF))
}

func roundF16(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	a := math.Abs(v)
	if a >= 65520 { // rounds past the largest half (65504)
		return math.Copysign(math.Inf(1), v)
	}
	// quantum: 2^(e-10) for normals, 2^-24 for subnormals
	e := math.Floor(math.Log2(a))
	if a == 0 || e < -14 {
		e = -14
	}
	q := math.Ldexp(1, int(e)-10)
	return math.Copysign(math.RoundToEven(a/q)*q, v)
}
