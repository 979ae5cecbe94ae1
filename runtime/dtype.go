package runtime

import (
	"fmt"
	"strings"

	"github.com/x448/float16"
)

// DType is the element type of a Tensor. Every DType has a fixed size in
// bytes and is stored in the host's native byte order (little-endian on
// amd64 and arm64), which is what compiled code reads and writes.
type DType uint8

// The supported element types. Names follow MLIR's spelling, as in
// `tensor<1x3xf32>`: Bool is i1 (one byte per element, 0 or 1), unsigned
// types are ui8..ui64. Float16 is IEEE binary16 (NumPy's float16, Go type
// float16.Float16 of github.com/x448/float16); BFloat16 is bfloat16, the
// upper half of a float32, which NumPy has no dtype for (.npy files
// cannot hold it; Float64Values and SetFloat64Values convert).
const (
	InvalidDType DType = iota
	Float32            // f32: IEEE-754 binary32, 4 bytes
	Float64            // f64: IEEE-754 binary64, 8 bytes
	Int8               // i8: 1 byte, two's complement
	Int16              // i16: 2 bytes
	Int32              // i32: 4 bytes
	Int64              // i64: 8 bytes
	Uint8              // ui8: 1 byte
	Uint16             // ui16: 2 bytes
	Uint32             // ui32: 4 bytes
	Uint64             // ui64: 8 bytes
	Bool               // i1: 1 byte per element, 0 = false, 1 = true
	Float16            // f16: IEEE-754 binary16, 2 bytes
	BFloat16           // bf16: bfloat16 (float32's upper 16 bits), 2 bytes
	numDTypes
)

var dtypeInfo = [numDTypes]struct {
	name string
	size int
	npy  string // NumPy type code without byte order
}{
	InvalidDType: {"invalid", 0, ""},
	Float32:      {"f32", 4, "f4"},
	Float64:      {"f64", 8, "f8"},
	Int8:         {"i8", 1, "i1"},
	Int16:        {"i16", 2, "i2"},
	Int32:        {"i32", 4, "i4"},
	Int64:        {"i64", 8, "i8"},
	Uint8:        {"ui8", 1, "u1"},
	Uint16:       {"ui16", 2, "u2"},
	Uint32:       {"ui32", 4, "u4"},
	Uint64:       {"ui64", 8, "u8"},
	Bool:         {"i1", 1, "b1"},
	Float16:      {"f16", 2, "f2"},
	BFloat16:     {"bf16", 2, ""}, // NumPy has no bfloat16
}

// Valid reports whether d is one of the supported element types.
func (d DType) Valid() bool { return d > InvalidDType && d < numDTypes }

// Size is the size of one element in bytes; 0 for an invalid DType.
func (d DType) Size() int {
	if !d.Valid() {
		return 0
	}
	return dtypeInfo[d].size
}

// String is the MLIR spelling: f32, f64, f16, bf16, i8, i16, i32, i64,
// ui8, ui16, ui32, ui64, i1 (bool); "dtype(N)" for an invalid value.
func (d DType) String() string {
	if !d.Valid() {
		return fmt.Sprintf("dtype(%d)", uint8(d))
	}
	return dtypeInfo[d].name
}

// ParseDType accepts the MLIR spelling returned by String and the common
// aliases float32, float64, float16, bfloat16, int8 ... uint64, bool, u8,
// u16, u32, u64. It returns an error naming the accepted spellings for
// anything else.
func ParseDType(s string) (DType, error) {
	switch strings.ToLower(s) {
	case "f32", "float32":
		return Float32, nil
	case "f64", "float64":
		return Float64, nil
	case "f16", "float16":
		return Float16, nil
	case "bf16", "bfloat16":
		return BFloat16, nil
	case "i8", "int8":
		return Int8, nil
	case "i16", "int16":
		return Int16, nil
	case "i32", "int32":
		return Int32, nil
	case "i64", "int64":
		return Int64, nil
	case "ui8", "u8", "uint8":
		return Uint8, nil
	case "ui16", "u16", "uint16":
		return Uint16, nil
	case "ui32", "u32", "uint32":
		return Uint32, nil
	case "ui64", "u64", "uint64":
		return Uint64, nil
	case "i1", "bool":
		return Bool, nil
	}
	return InvalidDType, fmt.Errorf("runtime: unknown dtype %q (want f32, f64, f16, bf16, i8, i16, i32, i64, ui8, ui16, ui32, ui64 or i1/bool)", s)
}

// Scalar is the set of Go element types that map one-to-one onto a DType
// (bf16 has none: read it with Float64Values).
type Scalar interface {
	float32 | float64 | int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | bool | float16.Float16
}

// DTypeOf returns the DType whose elements have Go type T.
func DTypeOf[T Scalar]() DType {
	var z T
	switch any(z).(type) {
	case float32:
		return Float32
	case float64:
		return Float64
	case int8:
		return Int8
	case int16:
		return Int16
	case int32:
		return Int32
	case int64:
		return Int64
	case uint8:
		return Uint8
	case uint16:
		return Uint16
	case uint32:
		return Uint32
	case uint64:
		return Uint64
	case bool:
		return Bool
	case float16.Float16:
		return Float16
	}
	return InvalidDType // unreachable: Scalar lists exactly the cases above
}
