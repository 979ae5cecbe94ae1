package tensorir

import "math"

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

// RoundFloat rounds v to the nearest value of float dtype t (ties to even);
// other dtypes return v.
func RoundFloat(t DType, v float64) float64 {
	switch t.Kind {
	case F32:
		return float64(float32(v))
	case F16:
		return float64(F16ToFloat32(Float32ToF16(float32(v))))
	case BF16:
		return float64(BF16ToFloat32(Float32ToBF16(float32(v))))
	}
	return v
}

// Float32ToF16 rounds f to IEEE binary16 bits (nearest even; overflow to
// ±inf; NaN stays NaN). Rounding a float64 through float32 first is exact
// enough for our uses: binary16 has 11 significand bits, float32 24, so the
// double rounding of +, -, *, /, sqrt results is innocuous.
func Float32ToF16(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xFF
	mant := b & 0x7FFFFF
	if exp == 0xFF {
		if mant != 0 {
			return sign | 0x7E00 | uint16(mant>>13)
		}
		return sign | 0x7C00
	}
	e := exp - 127 + 15
	if e >= 0x1F {
		return sign | 0x7C00
	}
	if e <= 0 {
		if e < -10 {
			return sign
		}
		m := mant | 0x800000
		shift := uint32(14 - e)
		half := uint32(1) << (shift - 1)
		r := m >> shift
		rem := m & (1<<shift - 1)
		if rem > half || rem == half && r&1 == 1 {
			r++
		}
		return sign | uint16(r)
	}
	r := uint32(e)<<10 | mant>>13
	rem := mant & 0x1FFF
	if rem > 0x1000 || rem == 0x1000 && r&1 == 1 {
		r++ // may carry into the exponent, up to inf: correct
	}
	return sign | uint16(r)
}

// F16ToFloat32 widens binary16 bits exactly.
func F16ToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1F
	mant := uint32(h & 0x3FF)
	switch {
	case exp == 0x1F:
		return math.Float32frombits(sign | 0x7F800000 | mant<<13)
	case exp == 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		v := float32(mant) / 1024 / 16384 // mant × 2^-24
		if sign != 0 {
			return -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}

// Float32ToBF16 rounds f to bfloat16 bits (nearest even; NaN stays NaN).
func Float32ToBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7FFFFFFF > 0x7F800000 {
		return uint16(b>>16) | 0x40
	}
	b += 0x7FFF + (b>>16)&1
	return uint16(b >> 16)
}

// BF16ToFloat32 widens bfloat16 bits exactly.
func BF16ToFloat32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// floatToBits returns the bit pattern of v in float dtype t (16, 32 or 64
// bits), used to print non-finite constants.
func floatToBits(t DType, v float64) uint64 {
	switch t.Kind {
	case F16:
		return uint64(Float32ToF16(float32(v)))
	case BF16:
		return uint64(Float32ToBF16(float32(v)))
	case F32:
		return uint64(math.Float32bits(float32(v)))
	}
	return math.Float64bits(v)
}

// floatFromBits is the inverse of floatToBits.
func floatFromBits(t DType, b uint64) float64 {
	switch t.Kind {
	case F16:
		return float64(F16ToFloat32(uint16(b)))
	case BF16:
		return float64(BF16ToFloat32(uint16(b)))
	case F32:
		return float64(math.Float32frombits(uint32(b)))
	}
	return math.Float64frombits(b)
}
