// Package tensorir is Tessera's loop-nest tensor IR, modelled on TVM's
// TensorIR (TIR): functions (PrimFunc) over multi-dimensional buffers whose
// bodies are statements (loops, blocks, stores, allocations) over immutable
// scalar expressions.
//
// The package holds the IR (ir.go, expr.go, buffer.go, stmt.go), its text
// form (printer.go, lexer.go, syntax.go, parser.go; documented in
// README.md), the verifier (verify.go), the integer bound analysis
// (bound.go), the arithmetic simplifier (simplify.go) and the reference
// interpreter (interp.go). It imports only the standard library and
// participle.
package tensorir

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/tessera-ml/tessera/internal/fp"
)

// ScalarKind is the element kind of a DType.
type ScalarKind uint8

// Scalar kinds. Index is a signed 64-bit integer used for loop variables,
// shapes and buffer indices (TVM uses int32/int64 for the same purpose).
const (
	KindInvalid ScalarKind = iota
	Bool                   // i1: 0 or 1
	I8
	I16
	I32
	I64
	UI8  // unsigned: values 0 ... 2^8-1
	UI16 // unsigned 16-bit
	UI32 // unsigned 32-bit
	UI64 // unsigned 64-bit, held in an int64 as its bit pattern
	Index
	F16  // IEEE binary16
	BF16 // bfloat16 (8-bit exponent, 7-bit mantissa)
	F32
	F64
)

var kindNames = [...]string{"invalid", "i1", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64", "index", "f16", "bf16", "f32", "f64"}

// DType is a scalar or vector element type. Lanes is 1 for scalars; a
// vector type (Lanes > 1) prints as f32x4 (TVM's float32x4).
type DType struct {
	Kind  ScalarKind
	Lanes int
}

// Predeclared scalar dtypes.
var (
	DBool  = DType{Bool, 1}
	DI8    = DType{I8, 1}
	DI16   = DType{I16, 1}
	DI32   = DType{I32, 1}
	DI64   = DType{I64, 1}
	DUI8   = DType{UI8, 1}
	DUI16  = DType{UI16, 1}
	DUI32  = DType{UI32, 1}
	DUI64  = DType{UI64, 1}
	DIndex = DType{Index, 1}
	DF16   = DType{F16, 1}
	DBF16  = DType{BF16, 1}
	DF32   = DType{F32, 1}
	DF64   = DType{F64, 1}
)

// IsFloat reports whether the element kind is a floating-point kind.
func (t DType) IsFloat() bool { return t.Kind >= F16 && t.Kind <= F64 }

// IsInt reports whether the element kind is an integer kind (i1 included).
func (t DType) IsInt() bool { return t.Kind >= Bool && t.Kind <= Index }

// IsUnsigned reports whether the element kind is an unsigned integer
// kind (ui8 ... ui64): its comparisons, min/max, floordiv/floormod (which
// are then plain unsigned division and remainder), right shifts and
// conversions treat values as unsigned (LLVM's ult, udiv, lshr, zext,
// uitofp). i1 is not unsigned in this sense.
func (t DType) IsUnsigned() bool { return t.Kind >= UI8 && t.Kind <= UI64 }

// IsBool reports whether the element kind is i1.
func (t DType) IsBool() bool { return t.Kind == Bool }

// IsScalar reports whether t has one lane.
func (t DType) IsScalar() bool { return t.Lanes == 1 }

// Valid reports whether t names a known kind with at least one lane.
func (t DType) Valid() bool {
	return t.Kind != KindInvalid && int(t.Kind) < len(kindNames) && t.Lanes >= 1
}

// Bits is the width of one lane in bits (index is 64).
func (t DType) Bits() int {
	switch t.Kind {
	case Bool:
		return 1
	case I8, UI8:
		return 8
	case F16, BF16, I16, UI16:
		return 16
	case I32, UI32, F32:
		return 32
	case I64, UI64, Index, F64:
		return 64
	}
	return 0
}

// Format is a float kind's storage format for raw element bytes
// (AllocateConst.Raw); 0 for other kinds.
func (t DType) Format() fp.Format { return fp.FormatOf(t.Element().String()) }

// Element returns the scalar type of one lane.
func (t DType) Element() DType { return DType{t.Kind, 1} }

// WithLanes returns t with n lanes.
func (t DType) WithLanes(n int) DType { return DType{t.Kind, n} }

func (t DType) String() string {
	if !t.Valid() {
		return "invalid"
	}
	if t.Lanes == 1 {
		return kindNames[t.Kind]
	}
	return kindNames[t.Kind] + "x" + strconv.Itoa(t.Lanes)
}

// ParseDType parses a dtype name: f32, bf16, index, i1, ... or a vector
// type such as f32x4 (lanes ≥ 2).
func ParseDType(s string) (DType, bool) {
	base, lanes := s, 1
	if i := strings.LastIndexByte(s, 'x'); i > 0 && i+1 < len(s) && isAllDigits(s[i+1:]) {
		n, err := strconv.Atoi(s[i+1:])
		if err != nil || n < 2 || n > 1<<16 || s[i+1] == '0' {
			return DType{}, false
		}
		base, lanes = s[:i], n
	}
	for k, name := range kindNames {
		if k > 0 && name == base {
			return DType{ScalarKind(k), lanes}, true
		}
	}
	return DType{}, false
}

func isAllDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// Attr is an attribute value of a function or an annotation of a loop or
// block: UnitAttr, BoolAttr, IntAttr, FloatAttr, StringAttr or ArrayAttr.
type Attr interface{ attrValue() }

// UnitAttr is a present-or-absent flag (printed as the bare key).
type UnitAttr struct{}

// BoolAttr prints as true or false.
type BoolAttr bool

// IntAttr is a 64-bit integer.
type IntAttr int64

// FloatAttr is a 64-bit float; non-finite values print as inf, -inf, nan.
type FloatAttr float64

// StringAttr prints as a quoted string.
type StringAttr string

// ArrayAttr prints as [a, b, ...].
type ArrayAttr []Attr

func (UnitAttr) attrValue()   {}
func (BoolAttr) attrValue()   {}
func (IntAttr) attrValue()    {}
func (FloatAttr) attrValue()  {}
func (StringAttr) attrValue() {}
func (ArrayAttr) attrValue()  {}

// Attrs is a named attribute dictionary; it prints sorted by key.
type Attrs map[string]Attr

// Keys returns the keys in sorted order.
func (a Attrs) Keys() []string {
	ks := make([]string, 0, len(a))
	for k := range a {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Function attribute names with a meaning to Tessera.
const (
	// AttrGlobalSymbol is the exported symbol name (a StringAttr), as in TVM.
	AttrGlobalSymbol = "global_symbol"
	// AttrKernel marks a function as a device kernel (a UnitAttr).
	AttrKernel = "tessera.kernel"
	// AttrSchedule marks a kernel as scheduled and says by what (a
	// StringAttr: "trace", "tuned", "default" or "fallback"; TVM's
	// tir.is_scheduled), so later scheduling steps leave it alone.
	AttrSchedule = "tessera.schedule"
	// AttrRecurrence marks a kernel whose blocks sit in a serial loop over
	// time carrying state between iterations (a UnitAttr; hlo.rnn_scan's
	// kernel, and hlo.scatter's, whose update loop stores at data-dependent,
	// possibly colliding positions): it needs schedule.ScheduleRecurrence,
	// which the pipeline's lower-to-tir step applies, not the default rules.
	AttrRecurrence = "tessera.recurrence"
)

// Role says how a function reads or writes a buffer parameter.
type Role uint8

// Parameter roles. Scalar parameters are always RoleIn.
const (
	RoleIn    Role = iota // read only
	RoleOut               // written (its prior contents are not read)
	RoleInOut             // read and written
)

func (r Role) String() string {
	if r <= RoleInOut {
		return [...]string{"in", "out", "inout"}[r]
	}
	return "invalid"
}

// Param is one parameter of a PrimFunc: either a buffer (Buffer != nil) or
// a scalar variable (Var != nil), such as a symbolic extent of dtype index.
type Param struct {
	Buffer *Buffer
	Var    *Var
	Role   Role
	Loc    Location
}

// Name is the parameter's name without the '%'.
func (p *Param) Name() string {
	if p.Buffer != nil {
		return p.Buffer.Name
	}
	if p.Var != nil {
		return p.Var.Name
	}
	return ""
}

// PrimFunc is a tensor-level function (TVM's tir::PrimFunc): parameters,
// a statement body and attributes such as global_symbol and tessera.kernel.
type PrimFunc struct {
	Name   string
	Params []*Param
	Body   Stmt
	Attrs  Attrs
	Loc    Location
}

// Param returns the parameter named name, or nil.
func (f *PrimFunc) Param(name string) *Param {
	for _, p := range f.Params {
		if p.Name() == name {
			return p
		}
	}
	return nil
}

// Module is an ordered collection of PrimFuncs with unique names.
type Module struct {
	Funcs []*PrimFunc
}

// Func returns the function named name, or nil.
func (m *Module) Func(name string) *PrimFunc {
	for _, f := range m.Funcs {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// Add appends f; it is an error to add a second function with f's name.
func (m *Module) Add(f *PrimFunc) error {
	if m.Func(f.Name) != nil {
		return fmt.Errorf("module already has a function @%s", f.Name)
	}
	m.Funcs = append(m.Funcs, f)
	return nil
}
