package tensorir

import (
	"math"

	"github.com/tessera-ml/tessera/internal/fp"
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
	"exp":       {Arity: 1, Compute: func(a []float64) float64 { return math.Exp(a[0]) }},
	"log":       {Arity: 1, Compute: func(a []float64) float64 { return math.Log(a[0]) }},
	"sqrt":      {Arity: 1, Compute: func(a []float64) float64 { return math.Sqrt(a[0]) }},
	"rsqrt":     {Arity: 1, Compute: func(a []float64) float64 { return 1 / math.Sqrt(a[0]) }},
	"tanh":      {Arity: 1, Compute: func(a []float64) float64 { return math.Tanh(a[0]) }},
	"sigmoid":   {Arity: 1, Compute: func(a []float64) float64 { return 1 / (1 + math.Exp(-a[0])) }},
	"erf":       {Arity: 1, Compute: func(a []float64) float64 { return math.Erf(a[0]) }},
	"atan":      {Arity: 1, Compute: func(a []float64) float64 { return math.Atan(a[0]) }},
	"sin":       {Arity: 1, Compute: func(a []float64) float64 { return math.Sin(a[0]) }},
	"cos":       {Arity: 1, Compute: func(a []float64) float64 { return math.Cos(a[0]) }},
	"tan":       {Arity: 1, Compute: func(a []float64) float64 { return math.Tan(a[0]) }},
	"asin":      {Arity: 1, Compute: func(a []float64) float64 { return math.Asin(a[0]) }},
	"acos":      {Arity: 1, Compute: func(a []float64) float64 { return math.Acos(a[0]) }},
	"sinh":      {Arity: 1, Compute: func(a []float64) float64 { return math.Sinh(a[0]) }},
	"cosh":      {Arity: 1, Compute: func(a []float64) float64 { return math.Cosh(a[0]) }},
	"asinh":     {Arity: 1, Compute: func(a []float64) float64 { return math.Asinh(a[0]) }},
	"acosh":     {Arity: 1, Compute: func(a []float64) float64 { return math.Acosh(a[0]) }},
	"atanh":     {Arity: 1, Compute: func(a []float64) float64 { return math.Atanh(a[0]) }},
	"fmod":      {Arity: 2, Compute: func(a []float64) float64 { return math.Mod(a[0], a[1]) }},
	"abs":       {Arity: 1, IntOK: true, Compute: func(a []float64) float64 { return math.Abs(a[0]) }},
	"pow":       {Arity: 2, Compute: func(a []float64) float64 { return math.Pow(a[0], a[1]) }},
	"fma":       {Arity: 3, Compute: func(a []float64) float64 { return math.FMA(a[0], a[1], a[2]) }},
	"floor":     {Arity: 1, Compute: func(a []float64) float64 { return math.Floor(a[0]) }},
	"ceil":      {Arity: 1, Compute: func(a []float64) float64 { return math.Ceil(a[0]) }},
	"roundeven": {Arity: 1, Compute: func(a []float64) float64 { return math.RoundToEven(a[0]) }},
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

// The f16/bf16 conversions are internal/fp's (one implementation for
// every level); see there for the rounding.
var (
	F16Bits       = fp.F16Bits
	Float32ToF16  = fp.Float32ToF16
	F16ToFloat32  = fp.F16ToFloat32
	F16Value      = fp.F16Value
	BF16Bits      = fp.BF16Bits
	Float32Odd    = fp.Float32Odd
	Float32ToBF16 = fp.Float32ToBF16
	BF16ToFloat32 = fp.BF16ToFloat32
)

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
