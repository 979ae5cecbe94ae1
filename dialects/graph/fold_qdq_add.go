package graph

import (
	"math"

	"github.com/tessera-ml/tessera/graphir"
)

// addScaleBits sets the precision of a folded add's integer weights: the
// addend of the larger scale is weighted 2^addScaleBits, the other in
// proportion. With 8-bit addends (|q − z| ≤ 255) the i32 accumulator
// stays below 2^(addScaleBits+10) = 2^26, and each weight's relative
// error is at most 2^−(addScaleBits+1) of the larger scale.
const addScaleBits = 16

// addOf matches c = graph.add(dequantize_linear(aq, sa, za),
// dequantize_linear(bq, sb, zb)) of 8-bit operands quantized per tensor
// with constant parameters and an f32 result (any broadcast).
func (m *qdqMatch) addOf(c *graphir.Op) bool {
	m.contraction = c
	for i := range m.addends {
		d := dqOf(c.Operand(i))
		if d == nil || d.axis >= 0 || len(d.scales) != 1 || !(d.scales[0] > 0) || math.IsInf(d.scales[0], 1) {
			return false
		}
		m.addends[i] = d
	}
	return graphir.AsTensor(c.Results[0].Type).Elem == graphir.F32
}

// rewriteAdd builds the matched add in integer arithmetic before q and
// replaces q's result (TFLite's quantized Add, with the two input
// rescalings exact integer weights instead of fixed-point multipliers):
//
//	acc = ka·(aq − za) + kb·(bq − zb)                            (i32)
//	ka  = round(sa / s), kb = round(sb / s),  s = max(sa, sb) / 2^addScaleBits
//	y   = requantize(acc, multiplier, shift, zy) {min, max},  multiplier·2^−(31+shift) ≈ s / sy
//
// with the bounds of q narrowed by the absorbed relu or clip, and the
// absorbed layout and pooling ops applied to y. The result can differ
// from the float QDQ path's by a quantization step where the weights'
// rounding or the float path's own crosses a rounding boundary. False
// (nothing changed) when s / sy has no multiplier in range.
func (m *qdqMatch) rewriteAdd() bool {
	s := math.Max(m.addends[0].scales[0], m.addends[1].scales[0]) / (1 << addScaleBits)
	mult, shift, ok := QuantizedMultiplier(s / m.sy)
	if !ok {
		return false
	}
	b := &rewriter{at: m.q, loc: m.contraction.Loc}
	var acc *graphir.Value
	offset := 0.0
	for _, d := range m.addends {
		k := math.RoundToEven(d.scales[0] / s)
		offset -= k * d.zps[0]
		term := b.build(MulOp, nil, b.cast(d.q, graphir.I32), b.constant(graphir.I32, nil, []float64{k}))
		if acc == nil {
			acc = term
		} else {
			acc = b.build(AddOp, nil, acc, term)
		}
	}
	if offset != 0 {
		acc = b.build(AddOp, nil, acc, b.constant(graphir.I32, nil, []float64{offset}))
	}
	mv, sv := b.constant(graphir.I32, nil, []float64{float64(mult)}), b.constant(graphir.I32, nil, []float64{float64(shift)})
	zv := b.constant(m.yType, nil, []float64{m.zy})
	a := graphir.DictAttr{}.Set("min", graphir.IntAttr(int64(m.lo))).Set("max", graphir.IntAttr(int64(m.hi)))
	return m.replaceQ(b, b.build(RequantizeOp, a, acc, mv, sv, zv))
}
