package isa

import "math"

// BF16ToFloat32 widens a bfloat16 (the upper 16 bits of an IEEE f32)
// exactly.
func BF16ToFloat32(b uint16) float32 { return math.Float32frombits(uint32(b) << 16) }

// BF16FromFloat32 rounds f to bfloat16 to nearest, ties to even (the
// rounding of the NPU's DMA and STORE conversions and of TensorFlow's
// bfloat16). A NaN stays a NaN (quiet, sign kept); ±Inf stays ±Inf.
func BF16FromFloat32(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 0x40
	}
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}

// RoundBF16 is f rounded to the nearest bfloat16, as an f32.
func RoundBF16(f float32) float32 { return BF16ToFloat32(BF16FromFloat32(f)) }
