package tensorir

import (
	"math"

	"github.com/x448/float16"
)

// Intrinsics lists the math intrinsics a Call may name, with their arity.
// Compute evaluates one in float64 (the interpreter rounds the result to
// the call's dtype). sigmoid is the logistic function 1/(1+e^-x); fma(a, b,
// c) is a*b+c with one rounding; atan is in radians, in [-π/2, π/2]; floor and ceil round to an integral value
// toward -inf / +inf (±0, ±inf and NaN unchanged). sin, cos and tan take
// radians (±inf → NaN); asin and acos give radians in [-π/2, π/2] and
// [0, π] (NaN outside [-1, 1]); sinh, cosh, asinh, acosh (NaN below 1)
// and atanh (±1 → ±inf, NaN beyond) are the hyperbolic functions and their
// inverses; fmod(a, b) is C's fmod: a − trunc(a/b)·b exactly, with a's
// sign (fmod(a, 0) and fmod(±inf, b) are NaN, fmod(a, ±inf) = a).
var Intrinsics = map[string]Intrinsic{
	"exp":     {Arity: 1, Compute: func(a []float64) float64 { return math.Exp(a[0]) }},
	"log":     {Arity: 1, Compute: func(a []float64) float64 { return math.Log(a[0]) }},
	"sqrt":    {Arity: 1, Compute: func(a []float64) float64 { return math.Sqrt(a[0]) }},
	"rsqrt":   {Arity: 1, Compute: func(a []float64) float64 { return 1 / math.Sqrt(a[0]) }},
	"tanh":    {Arity: 1, Compute: func(a []float64) float64 { return math.Tanh(a[0]) }},
	"sigmoid": {Arity: 1, Compute: func(a []float64) float64 { return 1 / (1 + math.Exp(-a[0])) }},
	"erf":     {Arity: 1, Compute: func(a []float64) float64 { return math.Erf(a[0]) }},
	"atan":    {Arity: 1, Compute: func(a []float64) float64 { return math.Atan(a[0]) }},
	"sin":     {Arity: 1, Compute: func(a []float64) float64 { return math.Sin(a[0]) }},
	"cos":     {Arity: 1, Compute: func(a []float64) float64 { return math.Cos(a[0]) }},
	"tan":     {Arity: 1, Compute: func(a []float64) float64 { return math.Tan(a[0]) }},
	"asin":    {Arity: 1, Compute: func(a []float64) float64 { return math.Asin(a[0]) }},
	"acos":    {Arity: 1, Compute: func(a []float64) float64 { return math.Acos(a[0]) }},
	"sinh":    {Arity: 1, Compute: func(a []float64) float64 { return math.Sinh(a[0]) }},
	"cosh":    {Arity: 1, Compute: func(a []float64) float64 { return math.Cosh(a[0]) }},
	"asinh":   {Arity: 1, Compute: func(a []float64) float64 { return math.Asinh(a[0]) }},
	"acosh":   {Arity: 1, Compute: func(a []float64) float64 { return math.Acosh(a[0]) }},
	"atanh":   {Arity: 1, Compute: func(a []float64) float64 { return math.Atanh(a[0]) }},
	"fmod":    {Arity: 2, Compute: func(a []float64) float64 { return math.Mod(a[0], a[1]) }},
	"abs":     {Arity: 1, IntOK: true, Compute: func(a []float64) float64 { return math.Abs(a[0]) }},
	"pow":     {Arity: 2, Compute: func(a []float64) float64 { return math.Pow(a[0], a[1]) }},
	"fma":     {Arity: 3, Compute: func(a []float64) float64 { return math.FMA(a[0], a[1], a[2]) }},
	"floor":   {Arity: 1, Compute: func(a []float64) float64 { return math.Floor(a[0]) }},
	"ceil":    {Arity: 1, Compute: func(a []float64) float64 { return math.Ceil(a[0]) }},
}

func floatBits(v float64) uint64 { return math.Float64bits(v) }

// RoundFloat rounds v to the nearest value of float dtype t (ties to even),
// once: f16 and bf16 round directly from v (not through float32, which
// could round twice), as numpy's float64 → float16 cast and LLVM's fptrunc
// do. Other dtypes return v.
func RoundFloat(t DType, v float64) float64 {
	switch t.Kind {
	case F32:
		return float64(float32(v))
	case F16:
		return F16Value(F16Bits(v))
	case BF16:
		return float64(BF16ToFloat32(BF16Bits(v)))
	}
	return v
}

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

// floatToBits returns the bit pattern of v in float dtype t (16, 32 or 64
// bits), used to print non-finite constants.
func floatToBits(t DType, v float64) uint64 {
	switch t.Kind {
	case F16:
		return uint64(F16Bits(v))
	case BF16:
		return uint64(BF16Bits(v))
	case F32:
		return uint64(math.Float32bits(float32(v)))
	}
	return math.Float64bits(v)
}

// floatFromBits is the inverse of floatToBits.
func floatFromBits(t DType, b uint64) float64 {
	switch t.Kind {
	case F16:
		return F16Value(uint16(b))
	case BF16:
		return float64(BF16ToFloat32(uint16(b)))
	case F32:
		return float64(math.Float32frombits(uint32(b)))
	}
	return math.Float64frombits(b)
}
