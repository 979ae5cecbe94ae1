package graphir

import (
	"fmt"
	"slices"
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

// TensorType is a ranked tensor, row-major; e.g. tensor<1x3x32x32xf32>.
// A rank-0 tensor has an empty Shape and prints as tensor<f32>.
//
// A dimension may be symbolic (ONNX's dim_param; MLIR's `?`): Shape holds
// Dynamic there and Sym its expression, and the type prints its symbolic
// dimensions' expressions in order as the tensor's encoding attribute,
// tensor<?x3x224x224xf32, ["batch"]> (mlir-opt reads it as an array
// attribute). Sym is nil for a static type, which is what everything past
// the graph dialect's shape inference takes; IsStatic says which.
type TensorType struct {
	Shape []int64
	Elem  DType
	// Sym is nil, or has one entry per dimension: nil for a constant
	// dimension, the expression of a symbolic one.
	Sym []*SymExpr
}

// Dynamic is the Shape entry of a symbolic dimension.
const Dynamic int64 = -1

// NewTensorDims returns a tensor type of the given element type whose
// dimensions are dims: constant expressions become static dimensions,
// the others symbolic ones.
func NewTensorDims(elem DType, dims ...*SymExpr) *TensorType {
	t := &TensorType{Shape: make([]int64, len(dims)), Elem: elem}
	for i, d := range dims {
		if c, ok := d.Const(); ok {
			t.Shape[i] = c
			continue
		}
		if t.Sym == nil {
			t.Sym = make([]*SymExpr, len(dims))
		}
		t.Shape[i], t.Sym[i] = Dynamic, d
	}
	return t
}

// IsStatic reports whether every dimension of t is a constant.
func (t *TensorType) IsStatic() bool { return t.Sym == nil }

// Dim returns dimension i as an expression (a constant one when static).
func (t *TensorType) Dim(i int) *SymExpr {
	if t.Sym != nil && t.Sym[i] != nil {
		return t.Sym[i]
	}
	return SymConst(t.Shape[i])
}

// Dims returns every dimension as an expression.
func (t *TensorType) Dims() []*SymExpr {
	out := make([]*SymExpr, len(t.Shape))
	for i := range out {
		out[i] = t.Dim(i)
	}
	return out
}

// WithElem returns a tensor type of t's shape (symbolic dimensions
// included) and element type elem.
func (t *TensorType) WithElem(elem DType) *TensorType {
	return &TensorType{Shape: slices.Clone(t.Shape), Elem: elem, Sym: slices.Clone(t.Sym)}
}

// Symbols returns the symbol names t's dimensions use, sorted, each once.
func (t *TensorType) Symbols() []string { return SymbolsOf(t.Sym) }

// Bind returns t with its symbols bound: the dimensions whose symbols
// bind all names become constants, the others have the named symbols
// substituted. Errors: a dimension that evaluates below 0 or overflows.
func (t *TensorType) Bind(bind map[string]int64) (_ *TensorType, err error) {
	if t.IsStatic() {
		return t, nil
	}
	defer CatchOverflow(&err, t.String)
	subst := make(map[string]*SymExpr, len(bind))
	for k, v := range bind {
		subst[k] = SymConst(v)
	}
	dims := t.Dims()
	for i, e := range t.Sym {
		if e == nil {
			continue
		}
		dims[i] = e.Subst(subst)
		if v, ok := dims[i].Const(); ok && v < 0 {
			return nil, fmt.Errorf("dimension %d of %s is %s = %d, below 0", i, t, e, v)
		}
	}
	return NewTensorDims(t.Elem, dims...), nil
}

// NewTensor returns a tensor type with the given element type and shape.
func NewTensor(elem DType, shape ...int64) *TensorType {
	return &TensorType{Shape: append([]int64(nil), shape...), Elem: elem}
}

// Rank is the number of dimensions.
func (t *TensorType) Rank() int { return len(t.Shape) }

// NumElements is the product of the dimensions (1 for rank 0); Dynamic
// for a type with symbolic dimensions.
func (t *TensorType) NumElements() int64 {
	if !t.IsStatic() {
		return Dynamic
	}
	n := int64(1)
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

func (t *TensorType) String() string {
	var b strings.Builder
	b.WriteString("tensor<")
	for i, d := range t.Shape {
		if t.Sym != nil && t.Sym[i] != nil {
			b.WriteByte('?')
		} else {
			b.WriteString(strconv.FormatInt(d, 10))
		}
		b.WriteByte('x')
	}
	b.WriteString(t.Elem.String())
	if t.Sym != nil {
		b.WriteString(", [")
		first := true
		for _, e := range t.Sym {
			if e != nil {
				if !first {
					b.WriteString(", ")
				}
				first = false
				b.WriteString(strconv.Quote(e.String()))
			}
		}
		b.WriteByte(']')
	}
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
	if (t.Sym == nil) != (u.Sym == nil) {
		return false
	}
	for i, e := range t.Sym {
		if (e == nil) != (u.Sym[i] == nil) || e != nil && !e.Equal(u.Sym[i]) {
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

// ParseTensorType parses the text of a tensor type such as
// "tensor<1x784xf32>", or one with symbolic dimensions such as
// `tensor<?x784xf32, ["batch"]>` (one expression per '?', in order;
// ParseSymExpr's syntax). Errors: a malformed type; a '?' without its
// expression.
func ParseTensorType(s string) (*TensorType, error) {
	if !strings.HasPrefix(s, "tensor<") || !strings.HasSuffix(s, ">") {
		return nil, fmt.Errorf("expected tensor type, got %q", s)
	}
	body := s[len("tensor<") : len(s)-1]
	var syms []*SymExpr
	if i := strings.IndexByte(body, ','); i >= 0 {
		var err error
		if syms, err = parseDimEncoding(strings.TrimSpace(body[i+1:]), s); err != nil {
			return nil, err
		}
		body = body[:i]
	}
	parts := strings.Split(body, "x")
	elem, ok := ParseDType(parts[len(parts)-1])
	if !ok {
		return nil, fmt.Errorf("unknown element type %q in %s (want one of f32, f16, bf16, f64, i1, i8, i16, i32, i64, ui8, ui16, ui32, ui64)", parts[len(parts)-1], s)
	}
	dims := make([]*SymExpr, 0, len(parts)-1)
	for _, p := range parts[:len(parts)-1] {
		if p == "?" {
			if len(syms) == 0 {
				return nil, fmt.Errorf("dynamic dimension '?' in %s has no expression: name it, as in tensor<?x3xf32, [\"batch\"]>", s)
			}
			dims = append(dims, syms[0])
			syms = syms[1:]
			continue
		}
		d, err := strconv.ParseInt(p, 10, 64)
		if err != nil || d < 0 || p == "" || (len(p) > 1 && p[0] == '0') {
			return nil, fmt.Errorf("invalid dimension %q in %s", p, s)
		}
		dims = append(dims, SymConst(d))
	}
	if len(syms) > 0 {
		return nil, fmt.Errorf("%s has %d more symbolic expressions than '?' dimensions", s, len(syms))
	}
	return NewTensorDims(elem, dims...), nil
}

// parseDimEncoding parses a tensor type's encoding: the expressions of
// its symbolic dimensions, a bracketed list of quoted strings, none of
// them constant.
func parseDimEncoding(enc, typ string) ([]*SymExpr, error) {
	if !strings.HasPrefix(enc, "[") || !strings.HasSuffix(enc, "]") {
		return nil, fmt.Errorf("the encoding of %s must list its symbolic dimensions, as in [\"batch\"]", typ)
	}
	var out []*SymExpr
	rest := strings.TrimSpace(enc[1 : len(enc)-1])
	for rest != "" {
		q, err := strconv.QuotedPrefix(rest)
		if err != nil {
			return nil, fmt.Errorf("the encoding of %s must list quoted expressions: %q", typ, rest)
		}
		text, _ := strconv.Unquote(q)
		e, err := ParseSymExpr(text)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", typ, err)
		}
		if _, ok := e.Const(); ok {
			return nil, fmt.Errorf("%s: %q is a constant; write it as a static dimension", typ, text)
		}
		out = append(out, e)
		rest = strings.TrimSpace(rest[len(q):])
		if rest != "" {
			if rest[0] != ',' {
				return nil, fmt.Errorf("the encoding of %s must separate its expressions with ','", typ)
			}
			rest = strings.TrimSpace(rest[1:])
		}
	}
	return out, nil
}

// AsTensor returns t as a tensor type, or nil.
func AsTensor(t Type) *TensorType {
	tt, _ := t.(*TensorType)
	return tt
}
