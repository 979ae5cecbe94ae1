package graphir

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tessera-ml/tessera/internal/fp"
)

// DType is a scalar element type.
type DType uint8

// Element types supported by Tessera tensors.
const (
	InvalidDType DType = iota
	F32
	F16
	BF16
	F64
	I1
	I8
	I32
	I64
	I16
	UI8
	UI16
	UI32
	UI64
)

var dtypeNames = [...]string{"invalid", "f32", "f16", "bf16", "f64", "i1", "i8", "i32", "i64", "i16", "ui8", "ui16", "ui32", "ui64"}

// String returns the MLIR spelling of the dtype (f32, i64, ...).
func (d DType) String() string {
	if int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return "invalid"
}

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool { return d == F32 || d == F16 || d == BF16 || d == F64 }

// Format is a float type's storage format for raw element bytes
// (DenseElementsAttr.Raw); 0 for other types.
func (d DType) Format() fp.Format { return fp.FormatOf(d.String()) }

// IsInt reports whether d is an integer (or boolean) type, signed or
// unsigned.
func (d DType) IsInt() bool { return d >= I1 && d <= UI64 }

// IsUnsigned reports whether d is an unsigned integer type (ui8 ... ui64).
// Their values are the integers 0 ... 2^bits-1 (MLIR's unsigned integer
// types; ONNX's UINT8 ... UINT64).
func (d DType) IsUnsigned() bool { return d >= UI8 && d <= UI64 }

// IsSignedInt reports whether d is a signed integer type (i8 ... i64; not
// i1).
func (d DType) IsSignedInt() bool { return d == I8 || d == I16 || d == I32 || d == I64 }

// Bits returns the storage width of d in bits.
func (d DType) Bits() int {
	switch d {
	case I1:
		return 1
	case I8, UI8:
		return 8
	case F16, BF16, I16, UI16:
		return 16
	case F32, I32, UI32:
		return 32
	case F64, I64, UI64:
		return 64
	}
	return 0
}

// ParseDType parses an element type name such as "f32".
func ParseDType(s string) (DType, bool) {
	for i, n := range dtypeNames {
		if i > 0 && n == s {
			return DType(i), true
		}
	}
	return InvalidDType, false
}

// Type is an IR type: *TensorType, *ScalarType, *IndexType or *FunctionType.
type Type interface {
	String() string
	// Equal reports structural equality.
	Equal(Type) bool
}

// TensorType is a statically shaped tensor, row-major; e.g. tensor<1x3x32x32xf32>.
// A rank-0 tensor has an empty Shape and prints as tensor<f32>.
type TensorType struct {
	Shape []int64
	Elem  DType
}

// NewTensor returns a tensor type with the given element type and shape.
func NewTensor(elem DType, shape ...int64) *TensorType {
	return &TensorType{Shape: append([]int64(nil), shape...), Elem: elem}
}

// Rank is the number of dimensions.
func (t *TensorType) Rank() int { return len(t.Shape) }

// NumElements is the product of the dimensions (1 for rank 0).
func (t *TensorType) NumElements() int64 {
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

func (t *TensorType) String() string {
	var b strings.Builder
	b.WriteString("tensor<")
	for _, d := range t.Shape {
		b.WriteString(strconv.FormatInt(d, 10))
		b.WriteByte('x')
	}
	b.WriteString(t.Elem.String())
	b.WriteByte('>')
	return b.String()
}

// Equal reports whether o is a tensor type with the same shape and dtype.
func (t *TensorType) Equal(o Type) bool {
	u, ok := o.(*TensorType)
	if !ok || u.Elem != t.Elem || len(u.Shape) != len(t.Shape) {
		return false
	}
	for i := range t.Shape {
		if t.Shape[i] != u.Shape[i] {
			return false
		}
	}
	return true
}

// ScalarType is a bare element type (f32, i64, ...), used for attribute values.
type ScalarType struct{ DType DType }

func (t *ScalarType) String() string { return t.DType.String() }

// Equal reports whether o is the same scalar type.
func (t *ScalarType) Equal(o Type) bool {
	u, ok := o.(*ScalarType)
	return ok && u.DType == t.DType
}

// IndexType is the target-sized integer type "index".
type IndexType struct{}

func (*IndexType) String() string { return "index" }

// Equal reports whether o is index.
func (*IndexType) Equal(o Type) bool { _, ok := o.(*IndexType); return ok }

// FunctionType is (inputs) -> results.
type FunctionType struct {
	Inputs  []Type
	Results []Type
}

func (t *FunctionType) String() string {
	var b strings.Builder
	b.WriteByte('(')
	writeTypeList(&b, t.Inputs)
	b.WriteString(") -> ")
	if len(t.Results) == 1 {
		if _, isFn := t.Results[0].(*FunctionType); !isFn {
			b.WriteString(t.Results[0].String())
			return b.String()
		}
	}
	b.WriteByte('(')
	writeTypeList(&b, t.Results)
	b.WriteByte(')')
	return b.String()
}

// Equal reports structural equality of function types.
func (t *FunctionType) Equal(o Type) bool {
	u, ok := o.(*FunctionType)
	return ok && TypesEqual(t.Inputs, u.Inputs) && TypesEqual(t.Results, u.Results)
}

func writeTypeList(b *strings.Builder, ts []Type) {
	for i, t := range ts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t.String())
	}
}

// TypesEqual compares two type lists element-wise.
func TypesEqual(a, b []Type) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// Scalar types, shared instances.
var (
	F32Type   = &ScalarType{F32}
	I64Type   = &ScalarType{I64}
	I1Type    = &ScalarType{I1}
	IndexTy   = &IndexType{}
	scalarTys = map[string]Type{}
)

func init() {
	for i := range dtypeNames {
		if i > 0 {
			scalarTys[dtypeNames[i]] = &ScalarType{DType(i)}
		}
	}
	scalarTys["index"] = IndexTy
}

// ParseTensorType parses the text of a tensor type such as "tensor<1x784xf32>".
func ParseTensorType(s string) (*TensorType, error) {
	if !strings.HasPrefix(s, "tensor<") || !strings.HasSuffix(s, ">") {
		return nil, fmt.Errorf("expected tensor type, got %q", s)
	}
	body := s[len("tensor<") : len(s)-1]
	parts := strings.Split(body, "x")
	elem, ok := ParseDType(parts[len(parts)-1])
	if !ok {
		return nil, fmt.Errorf("unknown element type %q in %s (want one of f32, f16, bf16, f64, i1, i8, i16, i32, i64, ui8, ui16, ui32, ui64)", parts[len(parts)-1], s)
	}
	shape := make([]int64, 0, len(parts)-1)
	for _, p := range parts[:len(parts)-1] {
		if p == "?" {
			return nil, fmt.Errorf("dynamic dimension '?' in %s: Tessera needs static shapes", s)
		}
		d, err := strconv.ParseInt(p, 10, 64)
		if err != nil || d < 0 || p == "" || (len(p) > 1 && p[0] == '0') {
			return nil, fmt.Errorf("invalid dimension %q in %s", p, s)
		}
		shape = append(shape, d)
	}
	return &TensorType{Shape: shape, Elem: elem}, nil
}

// AsTensor returns t as a tensor type, or nil.
func AsTensor(t Type) *TensorType {
	tt, _ := t.(*TensorType)
	return tt
}
