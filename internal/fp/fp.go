// Package fp holds the narrow floating-point conversions both IR levels
// (graphir's and tensorir's interpreters) and the runtime share: IEEE
// binary16 (f16) and bfloat16 (bf16) bit patterns, rounded once from
// float64 through round-to-odd float32. It imports only the standard
// library and github.com/x448/float16.
package fp

import (
	"math"

	"github.com/x448/float16"
)

// F16Bits is the IEEE binary16 bit pattern of v rounded once to nearest
// even (overflow to ±inf; NaN stays NaN): v is rounded to float32 with
// round-to-odd (Float32Odd), and github.com/x448/float16 rounds that to
// binary16.
func F16Bits(v float64) uint16 { return float16.Fromfloat32(Float32Odd(v)).Bits() }

// Float32ToF16 rounds f to IEEE binary16 bits, to nearest even
// (github.com/x448/float16).
func Float32ToF16(f float32) uint16 { return float16.Fromfloat32(f).Bits() }

// F16ToFloat32 widens IEEE binary16 bits exactly (github.com/x448/float16).
func F16ToFloat32(h uint16) float32 { return float16.Frombits(h).Float32() }

// F16Value widens IEEE binary16 bits exactly (github.com/x448/float16).
func F16Value(h uint16) float64 { return float64(float16.Frombits(h).Float32()) }

// BF16Bits is the bfloat16 bit pattern of v rounded once to nearest even
// (Float32Odd, then Float32ToBF16).
func BF16Bits(v float64) uint16 { return Float32ToBF16(Float32Odd(v)) }

// Float32Odd rounds v to float32 with round-to-odd: truncation toward zero
// with the last significand bit set when the result is inexact. Rounding
// that to nearest even in a format of at most 22 significand bits (f16:
// 11, bf16: 8) gives the same result as rounding v directly (Boldo and
// Melquiond, "When double rounding is odd", 2005); compiled code does the
// same for f64 → f16/bf16 casts. NaN and ±inf pass through.
func Float32Odd(v float64) float32 {
	f := float32(v)
	if float64(f) == v || v != v {
		return f
	}
	b := math.Float32bits(f)
	if math.Abs(float64(f)) > math.Abs(v) {
		b-- // one step toward zero (from ±inf to ±max finite)
	}
	return math.Float32frombits(b | 1)
}

// Float32ToBF16 rounds f to bfloat16 bits, to nearest even (a NaN stays a
// quiet NaN of its sign): the upper 16 bits of f's bits plus 0x7FFF plus
// the lowest kept bit, the rounding of PyTorch's c10::BFloat16
// (round_to_nearest_even) and TensorFlow's bfloat16.
func Float32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7FFFFFFF > 0x7F800000 {
		return uint16(b>>16) | 0x40
	}
	b += 0x7FFF + (b>>16)&1
	return uint16(b >> 16)
}

// BF16ToFloat32 widens bfloat16 bits exactly (a 16-bit shift).
func BF16ToFloat32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }
