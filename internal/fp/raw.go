package fp

import (
	"encoding/binary"
	"math"
)

// Format is the storage format of float tensor data held as raw
// little-endian bytes (a model's weights, from an ONNX raw_data field or
// a hex dense literal, to the bytes in the object file), so that large
// constants keep their storage size at every IR level instead of a
// float64 per element.
type Format uint8

// The storage formats: IEEE binary16, bfloat16, binary32 and binary64.
const (
	F16 Format = iota + 1
	BF16
	F32
	F64
)

// FormatOf is the format of the float dtype named name (MLIR's f16, bf16,
// f32, f64; both IR levels spell their dtypes so), 0 for any other name.
func FormatOf(name string) Format {
	switch name {
	case "f16":
		return F16
	case "bf16":
		return BF16
	case "f32":
		return F32
	case "f64":
		return F64
	}
	return 0
}

// Size is the bytes per element (0 for the zero Format).
func (f Format) Size() int {
	switch f {
	case F16, BF16:
		return 2
	case F32:
		return 4
	case F64:
		return 8
	}
	return 0
}

// Load returns element i of raw (exactly: every format widens to float64).
func (f Format) Load(raw []byte, i int) float64 {
	le := binary.LittleEndian
	switch f {
	case F16:
		return F16Value(le.Uint16(raw[2*i:]))
	case BF16:
		return float64(BF16ToFloat32(le.Uint16(raw[2*i:])))
	case F32:
		return float64(math.Float32frombits(le.Uint32(raw[4*i:])))
	case F64:
		return math.Float64frombits(le.Uint64(raw[8*i:]))
	}
	panic("fp: Load on the zero Format")
}

// Decode widens every element of raw into dst (len(dst) = len(raw)/Size).
func (f Format) Decode(raw []byte, dst []float64) {
	if f == F32 { // the common case, without the switch per element
		le := binary.LittleEndian
		for i := range dst {
			dst[i] = float64(math.Float32frombits(le.Uint32(raw[4*i:])))
		}
		return
	}
	for i := range dst {
		dst[i] = f.Load(raw, i)
	}
}

// Encode stores vals in the format, rounding each to nearest even (f16
// and bf16 through round-to-odd float32, as F16Bits and BF16Bits).
func (f Format) Encode(vals []float64) []byte {
	out := make([]byte, len(vals)*f.Size())
	le := binary.LittleEndian
	for i, v := range vals {
		switch f {
		case F16:
			le.PutUint16(out[2*i:], F16Bits(v))
		case BF16:
			le.PutUint16(out[2*i:], BF16Bits(v))
		case F32:
			le.PutUint32(out[4*i:], math.Float32bits(float32(v)))
		case F64:
			le.PutUint64(out[8*i:], math.Float64bits(v))
		}
	}
	return out
}
