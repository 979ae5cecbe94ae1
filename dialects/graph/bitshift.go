package graph

import (
	"math"

	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// BitShiftOp shifts unsigned integers (ONNX BitShift, opset 11):
//
//	graph.bit_shift(x, y) {direction = "LEFT" | "RIGHT" (required)}
//
// x and y are tensors of one unsigned element type (ui8, ui16, ui32,
// ui64), NumPy-broadcast; the result has the broadcast shape and that
// type. LEFT is x << y (bits shifted out of the width are lost), RIGHT is
// x >> y shifting in zeros. A shift by the bit width or more gives 0, as
// numpy's << and >> do for unsigned operands (C and LLVM leave it
// undefined). Errors: a signed, float or i1 element type, different
// element types, incompatible shapes, a missing or unknown direction.
// Legalized to hlo.shift_left / hlo.shift_right_logical of the broadcast
// operands.
const BitShiftOp = "graph.bit_shift"

// BitShiftDirections are the values of graph.bit_shift's direction.
var BitShiftDirections = []string{"LEFT", "RIGHT"}

func init() {
	register(&graphir.OpDef{
		Name:     BitShiftOp,
		Summary:  "x << y or x >> y on unsigned integers with NumPy broadcasting (ONNX BitShift); shifts by the bit width or more give 0",
		Operands: graphir.Exactly(2),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure | graphir.Elementwise,
		Attrs:    []graphir.AttrSpec{{Name: "direction", Kind: graphir.KindEnum, Required: true, Enum: BitShiftDirections}},
		Infer: func(op *graphir.Op) ([]graphir.Type, error) {
			tys, err := inferBinary(op)
			if err != nil {
				return nil, err
			}
			if err := checkElem(op, graphir.AsTensor(tys[0]), uintElem); err != nil {
				return nil, err
			}
			if _, err := op.Str("direction"); err != nil {
				return nil, err
			}
			return tys, nil
		},
		Eval: func(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
			dir, err := op.Str("direction")
			if err != nil {
				return nil, err
			}
			if err := checkArgs(op, args); err != nil {
				return nil, err
			}
			bits := args[0].Type.Elem.Bits()
			return evalBinary(op, args, func(a, b float64) float64 { return BitShift(a, b, bits, dir == "LEFT") })
		},
		Pretty: true,
	}, Conversions{Legalize: legalizeBitShift, ONNX: "BitShift"})
}

// BitShift is the unsigned a << b (left) or a >> b of a bits-wide
// integer: 0 when b ≥ bits; a left shift is a·2^b, which the caller wraps
// to the width (exact for values below 2^53, as every reference value).
func BitShift(a, b float64, bits int, left bool) float64 {
	if b >= float64(bits) {
		return 0
	}
	if left {
		return math.Ldexp(a, int(b))
	}
	return math.Floor(math.Ldexp(a, -int(b)))
}

// legalizeBitShift: graph.bit_shift → hlo.shift_left (LEFT) or
// hlo.shift_right_logical (RIGHT) of the operands broadcast to the
// result shape.
func legalizeBitShift(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	dir, err := op.Str("direction")
	if err != nil {
		return nil, err
	}
	name := hlo.ShiftRightLogicalOp
	if dir == "LEFT" {
		name = hlo.ShiftLeftOp
	}
	return legalizeBroadcast(name)(op, b)
}
