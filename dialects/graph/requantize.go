package graph

import (
	"fmt"
	"math"

	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// RequantizeOp is integer-only requantization, gemmlowp's and TensorFlow
// Lite's scheme (Jacob et al., "Quantization and Training of Neural
// Networks for Efficient Integer-Arithmetic-Only Inference", CVPR 2018,
// §2.2): an i32 accumulator with the real scale acc_scale is brought to
// an 8-bit tensor with scale y_scale by the fixed-point multiplier
// acc_scale / y_scale ≈ multiplier · 2^−(31+shift):
//
//	graph.requantize(acc, multiplier, shift, zero_point) {axis = 1, min = 0, max = 255}
//	    acc i32; multiplier and shift i32 of one shape, a scalar (per
//	    tensor) or 1-D of acc's size along axis (per channel);
//	    zero_point i8 or ui8, a scalar → acc's shape, zero_point's type:
//	    y = clamp(zero_point + rshift_round(acc · multiplier, 31 + shift), min, max)
//	    rshift_round(x, t) = floor((x + 2^(t−1)) / 2^t)    (half up)
//
// multiplier is a Q31 number in [0.5, 1) (2^30 ≤ multiplier < 2^31, or
// 0) and shift lies in [MinRequantizeShift, MaxRequantizeShift] (real
// scales from 2^−32 up to 2^14); QuantizedMultiplier computes both. The
// 62-bit product is exact and rounded once (TFLite's
// TFLITE_SINGLE_ROUNDING form of MultiplyByQuantizedMultiplier). min and
// max (default: zero_point's type range) fuse a ReLU or clip in the
// integer domain, as TFLite's output_activation_min/max. The fold-qdq
// pass produces it; the interpreters compute it exactly (every
// intermediate of its lowering stays below 2^48).
const RequantizeOp = "graph.requantize"

// The shifts graph.requantize accepts: 31 + shift − 16 must be at least
// 1 for its lowering's split of the multiplier into 16-bit halves, and
// at most 46 so that the rounding constant stays exact.
const (
	MinRequantizeShift = -14
	MaxRequantizeShift = 31
)

func init() {
	register(&graphir.OpDef{
		Name:     RequantizeOp,
		Summary:  "y = clamp(zero_point + round(acc * multiplier / 2^(31+shift)), min, max): i32 to i8/ui8 by a fixed-point multiplier, per tensor or per axis (gemmlowp/TFLite)",
		Operands: graphir.Exactly(4),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Attrs:    append([]graphir.AttrSpec{{Name: "axis", Kind: graphir.KindInt, Default: graphir.IntAttr(1)}}, boundAttrs()...),
		Infer:    inferRequantize,
		Verify:   verifyRequantize,
		Eval:     evalRequantize,
		Pretty:   true,
	}, Conversions{Legalize: legalizeRequantize})
}

// requantOperands checks a requantize op's operands and reads its axis
// and bounds.
func requantOperands(op *graphir.Op) (*quantParams, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	p := &quantParams{x: ts[0], scale: ts[1], zp: ts[3], axis: -1}
	if p.x.Elem != graphir.I32 {
		return nil, op.Errorf("acc must be i32, got %s", p.x)
	}
	if ts[1].Elem != graphir.I32 || !ts[2].Equal(ts[1]) {
		return nil, op.Errorf("multiplier %s and shift %s must be i32 of one shape", ts[1], ts[2])
	}
	if p.zp.Elem != graphir.I8 && p.zp.Elem != graphir.UI8 || p.zp.NumElements() != 1 || p.zp.Rank() > 1 {
		return nil, op.Errorf("zero_point must be an i8 or ui8 scalar, got %s", p.zp)
	}
	if err := p.checkAxis(op); err != nil {
		return nil, err
	}
	if p.lo, p.hi, err = saturationBounds(op, p.zp.Elem); err != nil {
		return nil, err
	}
	return p, nil
}

func inferRequantize(op *graphir.Op) ([]graphir.Type, error) {
	p, err := requantOperands(op)
	if err != nil {
		return nil, err
	}
	return one(graphir.NewTensor(p.zp.Elem, p.x.Shape...)), nil
}

// verifyRequantize checks constant multipliers and shifts.
func verifyRequantize(op *graphir.Op) error {
	m, s := ConstantOf(op.Operand(1)), ConstantOf(op.Operand(2))
	if m == nil || s == nil {
		return nil
	}
	ms, ss := m.Values(), s.Values()
	for c := range ms {
		if err := checkRequantizeParams(int64(ms[c]), int64(ss[c])); err != nil {
			return op.Errorf("channel %d: %v", c, err)
		}
	}
	return nil
}

// checkRequantizeParams refuses a multiplier or shift outside the ranges
// graph.requantize defines.
func checkRequantizeParams(m, s int64) error {
	if m != 0 && (m < 1<<30 || m >= 1<<31) {
		return fmt.Errorf("multiplier %d is not 0 or in [2^30, 2^31)", m)
	}
	if s < MinRequantizeShift || s > MaxRequantizeShift {
		return fmt.Errorf("shift %d is outside [%d, %d]", s, MinRequantizeShift, MaxRequantizeShift)
	}
	return nil
}

// Requantize is one element of graph.requantize: clamp(zp +
// floor((acc·m + 2^(30+s)) / 2^(31+s)), lo, hi), in exact 64-bit
// arithmetic (|acc·m| < 2^62).
func Requantize(acc, m, s, zp, lo, hi int64) int64 {
	t := uint(31 + s)
	y := (acc*m + 1<<(t-1)) >> t
	return min(max(y+zp, lo), hi)
}

// evalRequantize is the exact reference.
func evalRequantize(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	p, err := requantOperands(op)
	if err != nil {
		return nil, err
	}
	acc, mult, shift := args[0], args[1], args[2]
	zp := int64(args[3].Data[0])
	out := graphir.NewZeroTensor(op.Results[0].Type.(*graphir.TensorType))
	channel := channelOf(p.x.Shape, p.axis)
	for i, v := range acc.Data {
		c := channel(i)
		m, s := int64(mult.Data[c]), int64(shift.Data[c])
		if err := checkRequantizeParams(m, s); err != nil {
			return nil, op.Errorf("channel %d: %v", c, err)
		}
		out.Data[i] = float64(Requantize(int64(v), m, s, zp, p.lo, p.hi))
	}
	return []*graphir.Tensor{out}, nil
}

// QuantizedMultiplier returns the multiplier and shift of a real scale:
// scale ≈ multiplier · 2^−(31+shift) with multiplier in [2^30, 2^31)
// (TFLite's QuantizeMultiplier: frexp, then the fraction rounded to
// Q31). ok is false for a scale that is not positive and finite, or
// whose shift falls outside [MinRequantizeShift, MaxRequantizeShift].
func QuantizedMultiplier(scale float64) (multiplier, shift int64, ok bool) {
	if !(scale > 0) || math.IsInf(scale, 1) {
		return 0, 0, false
	}
	f, e := math.Frexp(scale) // scale = f · 2^e, f in [0.5, 1)
	q := int64(math.Round(f * (1 << 31)))
	if q == 1<<31 {
		q, e = q/2, e+1
	}
	shift = int64(-e)
	return q, shift, shift >= MinRequantizeShift && shift <= MaxRequantizeShift
}

// legalizeRequantize lowers requantize in i64 with every intermediate
// below 2^48, so that the float64 hlo interpreter is exact too: with
// multiplier = mh·2^16 + ml and t = 31 + shift,
//
//	floor((acc·m + 2^(t−1)) / 2^t) = (acc·mh + 2^(t'−1) + (acc·ml >> 16)) >> t',  t' = t − 16
//
// (nested floor divisions by powers of two), then the zero point is
// added, the result clamped to [min, max] and converted. mh, ml, t' and
// 2^(t'−1) are per-channel terms (requantTerms): constants computed here
// when the multiplier and shift are (fold-qdq's always are), so that the
// kernel loads them instead of deriving them for every element, unless
// LegalizeOptions.DerivedRequantTerms asks for the derived form.
func legalizeRequantize(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	p, err := requantOperands(op)
	if err != nil {
		return nil, err
	}
	t64 := graphir.NewTensor(graphir.I64, p.x.Shape...)
	c := &chain{b: b, t: t64}
	acc := c.wide(op.Operand(0))
	terms := p.requantTerms(c, op.Operand(1), op.Operand(2))
	low := c.op(hlo.ShiftRightArithmeticOp, c.op(hlo.MultiplyOp, acc, terms.ml), c.splat(16))
	sum := c.op(hlo.AddOp, c.op(hlo.AddOp, c.op(hlo.MultiplyOp, acc, terms.mh), terms.round), low)
	zp := c.do(func() (*graphir.Value, error) {
		z, err := b.reshape(op.Operand(3), nil)
		if err != nil {
			return nil, err
		}
		return b.broadcastInDim(z, p.x.Shape, nil)
	})
	y := c.op(hlo.AddOp, c.op(hlo.ShiftRightArithmeticOp, sum, terms.tp), c.wide(zp))
	y = c.op(hlo.ClampOp, c.scalar(float64(p.lo)), y, c.scalar(float64(p.hi)))
	return c.done(c.do(func() (*graphir.Value, error) { return b.insert(hlo.Convert(y, p.zp.Elem, b.src.Loc)) }))
}

// requantTerms are legalizeRequantize's per-channel i64 terms, spread to
// the accumulator's shape: the multiplier's high and low 16 bits (mh,
// ml), the shift t' = shift + 15 and the rounding term 2^(t'−1).
type requantTerms struct{ mh, ml, tp, round *graphir.Value }

// requantTerms builds the terms of multiplier m and shift s in chain c
// (of the accumulator's i64 type): as constants when m and s are
// constant, else computed from them.
func (p *quantParams) requantTerms(c *chain, m, s *graphir.Value) requantTerms {
	spread := func(v *graphir.Value) *graphir.Value {
		return c.do(func() (*graphir.Value, error) { return p.spread(c.b, v) })
	}
	if md, sd := constantData(m), constantData(s); md != nil && sd != nil && !c.b.opts.DerivedRequantTerms {
		ms, ss := md.Values(), sd.Values()
		vals := [4][]float64{}
		for i := range ms {
			mh := math.Floor(ms[i] / (1 << 16))
			tp := ss[i] + 15
			for k, v := range []float64{mh, ms[i] - mh*(1<<16), tp, math.Ldexp(1, int(tp)-1)} {
				vals[k] = append(vals[k], v)
			}
		}
		var out [4]*graphir.Value
		for k := range out {
			t := &graphir.Tensor{Type: graphir.NewTensor(graphir.I64, md.Type.Shape...), Data: vals[k]}
			out[k] = spread(c.do(func() (*graphir.Value, error) { return c.b.constant(t.ToDense()) }))
		}
		return requantTerms{mh: out[0], ml: out[1], tp: out[2], round: out[3]}
	}
	mv, sv := c.wide(spread(m)), c.wide(spread(s))
	sixteen := c.splat(16)
	mh := c.op(hlo.ShiftRightArithmeticOp, mv, sixteen)
	tp := c.op(hlo.AddOp, sv, c.splat(15))
	return requantTerms{
		mh:    mh,
		ml:    c.op(hlo.SubtractOp, mv, c.op(hlo.ShiftLeftOp, mh, sixteen)),
		tp:    tp,
		round: c.op(hlo.ShiftLeftOp, c.splat(1), c.op(hlo.SubtractOp, tp, c.splat(1))),
	}
}

// wide converts v to i64 in chain c.
func (c *chain) wide(v *graphir.Value) *graphir.Value {
	return c.do(func() (*graphir.Value, error) { return c.b.insert(hlo.Convert(v, graphir.I64, c.b.src.Loc)) })
}
