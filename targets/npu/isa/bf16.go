package isa

import tir "github.com/tessera-ml/tessera/tensorir"

// RoundBF16 is f rounded to the nearest bfloat16 (ties to even), as an
// f32: what the NPU's DMA does to an f32 input or weight
// (tensorir.Float32ToBF16).
func RoundBF16(f float32) float32 { return tir.BF16ToFloat32(tir.Float32ToBF16(f)) }
