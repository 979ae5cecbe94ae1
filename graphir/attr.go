package graphir

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/tessera-ml/tessera/internal/syntax"
)

// Attribute is a compile-time constant attached to an op: *IntegerAttr,
// *FloatAttr, StringAttr, BoolAttr, ArrayAttr, *DenseElementsAttr, *TypeAttr,
// DictAttr or UnitAttr.
type Attribute interface {
	attr()
}

// IntegerAttr is an integer constant with its type (i64 when written bare).
type IntegerAttr struct {
	Value int64
	Type  Type
}

// FloatAttr is a floating-point constant with its type (f64 when written bare).
type FloatAttr struct {
	Value float64
	Type  Type
}

// StringAttr is a string constant.
type StringAttr string

// BoolAttr is true or false.
type BoolAttr bool

// ArrayAttr is an ordered list of attributes, written [a, b, c].
type ArrayAttr []Attribute

// TypeAttr wraps a type used as a value, e.g. {type = tensor<4xf32>}.
type TypeAttr struct{ Type Type }

// UnitAttr is a present-without-value flag, written as a bare name in a dictionary.
type UnitAttr struct{}

// NamedAttr is one name = value entry of an attribute dictionary.
type NamedAttr struct {
	Name  string
	Value Attribute
}

// DictAttr is an attribute dictionary kept sorted by name.
type DictAttr []NamedAttr

// DenseElementsAttr holds the elements of a constant tensor, row-major.
// Float element types keep their values in Floats, integer and i1 types in Ints.
// A splat holds a single element. Elided marks data dropped by the printer
// (dense_resource<__elided__>); such an attribute has no values.
type DenseElementsAttr struct {
	Type   *TensorType
	Floats []float64
	Ints   []int64
	// Raw holds a float type's elements instead of Floats, as the
	// little-endian bytes of its storage format (DType.Format: 2 bytes
	// for f16/bf16, 4 for f32, 8 for f64), so that a model's weights keep
	// their storage size from the importer to the object file (NewRawDense).
	// At most one of Floats and Raw is set; Len, At and Values read either.
	Raw    []byte
	Elided bool
}

// NewRawDense returns the dense attribute of float type t whose elements
// are raw, little-endian in t's storage format; raw is shared, not
// copied, so neither may be changed afterwards.
func NewRawDense(t *TensorType, raw []byte) *DenseElementsAttr {
	return &DenseElementsAttr{Type: t, Raw: raw}
}

// FloatBytes returns a float attribute's elements as little-endian bytes
// of its storage format: Raw itself when set (shared), else Floats
// encoded (values are already rounded to the type, so encoding is exact).
func (d *DenseElementsAttr) FloatBytes() []byte {
	if d.Raw != nil {
		return d.Raw
	}
	return d.Type.Elem.Format().Encode(d.Floats)
}

func (*IntegerAttr) attr()       {}
func (*FloatAttr) attr()         {}
func (StringAttr) attr()         {}
func (BoolAttr) attr()           {}
func (ArrayAttr) attr()          {}
func (*TypeAttr) attr()          {}
func (UnitAttr) attr()           {}
func (DictAttr) attr()           {}
func (*DenseElementsAttr) attr() {}

// IntAttr returns an i64 integer attribute.
func IntAttr(v int64) *IntegerAttr { return &IntegerAttr{Value: v, Type: I64Type} }

// F32Attr returns an f32 float attribute.
func F32Attr(v float64) *FloatAttr { return &FloatAttr{Value: v, Type: F32Type} }

// I64Array returns an ArrayAttr of i64 integers.
func I64Array(vs ...int64) ArrayAttr {
	a := make(ArrayAttr, len(vs))
	for i, v := range vs {
		a[i] = IntAttr(v)
	}
	return a
}

// Len is the number of stored elements (1 for a splat).
func (d *DenseElementsAttr) Len() int {
	if d.Raw != nil {
		return len(d.Raw) / d.Type.Elem.Format().Size()
	}
	if d.Type.Elem.IsFloat() {
		return len(d.Floats)
	}
	return len(d.Ints)
}

// wellFormed reports whether the stored elements fit the type: all of
// them, one splat element, or none when elided; and in the right slice.
func (d *DenseElementsAttr) wellFormed() bool {
	if d.Type == nil {
		return false
	}
	if d.Elided {
		return true
	}
	if d.Type.Elem.IsFloat() != (d.Ints == nil) {
		return false
	}
	if d.Raw != nil && (d.Floats != nil || len(d.Raw)%d.Type.Elem.Format().Size() != 0) {
		return false
	}
	n := d.Len()
	return int64(n) == d.Type.NumElements() || (n == 1 && d.Type.NumElements() > 0)
}

// IsSplat reports whether one stored element stands for all.
func (d *DenseElementsAttr) IsSplat() bool {
	return !d.Elided && d.Len() == 1 && d.Type.NumElements() != 1
}

// At returns element i (row-major) as float64, expanding splats.
func (d *DenseElementsAttr) At(i int) float64 {
	if d.Len() == 1 {
		i = 0
	}
	if d.Raw != nil {
		return d.Type.Elem.Format().Load(d.Raw, i)
	}
	if d.Type.Elem.IsFloat() {
		return d.Floats[i]
	}
	return IntValue(d.Type.Elem, d.Ints[i])
}

// Values returns all NumElements() elements as float64, expanding splats.
func (d *DenseElementsAttr) Values() []float64 {
	n := int(d.Type.NumElements())
	out := make([]float64, n)
	if d.Type.Elem.IsFloat() && len(d.Floats) == n {
		copy(out, d.Floats)
		return out
	}
	if d.Raw != nil && d.Len() == n {
		d.Type.Elem.Format().Decode(d.Raw, out)
		return out
	}
	for i := range out {
		out[i] = d.At(i)
	}
	return out
}

// Get returns the attribute named name, or nil.
func (d DictAttr) Get(name string) Attribute {
	i := sort.Search(len(d), func(i int) bool { return d[i].Name >= name })
	if i < len(d) && d[i].Name == name {
		return d[i].Value
	}
	return nil
}

// Set returns a copy of d with name bound to v, keeping the dictionary
// sorted; d itself is never modified, so dictionaries may be shared.
func (d DictAttr) Set(name string, v Attribute) DictAttr {
	i := sort.Search(len(d), func(i int) bool { return d[i].Name >= name })
	if i < len(d) && d[i].Name == name {
		out := append(DictAttr(nil), d...)
		out[i].Value = v
		return out
	}
	out := make(DictAttr, 0, len(d)+1)
	out = append(append(append(out, d[:i]...), NamedAttr{name, v}), d[i:]...)
	return out
}

// Delete returns a copy of d without name (d is not modified).
func (d DictAttr) Delete(name string) DictAttr {
	i := sort.Search(len(d), func(i int) bool { return d[i].Name >= name })
	if i < len(d) && d[i].Name == name {
		return append(append(DictAttr(nil), d[:i]...), d[i+1:]...)
	}
	return d
}

// AttrString renders an attribute in MLIR syntax.
func FormatAttr(a Attribute) string {
	var b strings.Builder
	writeAttr(&b, a, printOptions{})
	return b.String()
}

// AttrEqual reports structural equality of two attributes.
func AttrEqual(a, b Attribute) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	switch x := a.(type) {
	case *IntegerAttr:
		y, ok := b.(*IntegerAttr)
		return ok && x.Value == y.Value && x.Type.Equal(y.Type)
	case *FloatAttr:
		y, ok := b.(*FloatAttr)
		return ok && math.Float64bits(x.Value) == math.Float64bits(y.Value) && x.Type.Equal(y.Type)
	case StringAttr, BoolAttr, UnitAttr:
		return a == b
	case *TypeAttr:
		y, ok := b.(*TypeAttr)
		return ok && x.Type.Equal(y.Type)
	case ArrayAttr:
		y, ok := b.(ArrayAttr)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !AttrEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case DictAttr:
		y, ok := b.(DictAttr)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i].Name != y[i].Name || !AttrEqual(x[i].Value, y[i].Value) {
				return false
			}
		}
		return true
	case *DenseElementsAttr:
		y, ok := b.(*DenseElementsAttr)
		if !ok || !x.Type.Equal(y.Type) || x.Elided || y.Elided || x.Len() != y.Len() {
			return false
		}
		for i := 0; i < x.Len(); i++ {
			if math.Float64bits(x.At(i)) != math.Float64bits(y.At(i)) {
				return false
			}
		}
		return true
	}
	return false
}

// formatFloat prints v so that MLIR's lexer accepts it (always a '.'),
// with the shortest digits that round-trip at the given dtype's precision.
// Non-finite values print as the hexadecimal bit pattern, as MLIR does.
func formatFloat(v float64, dt DType) string {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		if dt == F64 {
			return "0x" + strings.ToUpper(strconv.FormatUint(math.Float64bits(v), 16))
		}
		return "0x" + strings.ToUpper(strconv.FormatUint(uint64(math.Float32bits(float32(v))), 16))
	}
	bits := 64
	if dt != F64 {
		bits = 32
	}
	return syntax.FormatFloat(v, bits)
}

// Float32Round rounds v to the nearest f32, the storage precision of f32 tensors.
func Float32Round(v float64) float64 { return float64(float32(v)) }
