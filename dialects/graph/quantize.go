package graph

import (
	"math"

	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// Linear quantization in ONNX's QDQ form (QuantizeLinear and
// DequantizeLinear, opset 13): a real value r is represented by the
// integer q with r = (q − zero_point) · scale.
//
//	graph.quantize_linear(x, scale, zero_point) {axis = 1, min = 0, max = 127}
//	    x float (or i32), scale of x's float type (f32 for i32 x),
//	    zero_point i8 or ui8 → x's shape, zero_point's element type:
//	    q = clamp(round_half_even(x / scale) + zero_point, min, max)
//	graph.dequantize_linear(q, scale, zero_point) {axis = 1}
//	    q i8, ui8 or i32, zero_point of q's type → scale's float type:
//	    r = (q − zero_point) · scale
//
// scale and zero_point have one shape: a scalar (rank 0 or one element)
// quantizes the whole tensor, a 1-D tensor of x's size along axis
// quantizes per channel of that axis. The quotient x / scale is rounded
// to x's float type before it is rounded to an integer, as compiled code
// computes it; NaN quantizes to the zero point (clamped too).
//
// min and max (quantize only; each defaults to zero_point's type limit,
// 0..255 for ui8, −128..127 for i8) lie within that type's range, min ≤
// max; a zero point outside [min, max] is clamped with the rest. ui8 with
// max = 127 is PyTorch torch.ao.quantization's reduce_range (7-bit
// activations, fbgemm's default x86 qconfig): a u8×s8 pair sum then fits
// i16, so AVX2's vpmaddubsw cannot saturate, and the lowering's clamp is
// what code generation reads that bound from.
//
// This is the representation a model quantized post-training (tessera
// quantize, ONNX's QDQ models) carries between its float ops;
// QLinearConv and QLinearMatMul import as DQ → float op → Q around them.
const (
	QuantizeLinearOp   = "graph.quantize_linear"
	DequantizeLinearOp = "graph.dequantize_linear"
)

func init() {
	axis := graphir.AttrSpec{Name: "axis", Kind: graphir.KindInt, Default: graphir.IntAttr(1)}
	for _, d := range []struct {
		name, summary string
		quantize      bool
		attrs         []graphir.AttrSpec
	}{
		{QuantizeLinearOp, "q = clamp(round(x / scale) + zero_point, min, max), per tensor or per axis (ONNX QuantizeLinear; min/max default to the type's range)", true, append([]graphir.AttrSpec{axis}, boundAttrs()...)},
		{DequantizeLinearOp, "r = (q - zero_point) * scale, per tensor or per axis (ONNX DequantizeLinear)", false, []graphir.AttrSpec{axis}},
	} {
		quantize := d.quantize
		register(&graphir.OpDef{
			Name:     d.name,
			Summary:  d.summary,
			Operands: graphir.Exactly(3),
			Results:  graphir.Exactly(1),
			Traits:   graphir.Pure,
			Attrs:    d.attrs,
			Infer:    func(op *graphir.Op) ([]graphir.Type, error) { return inferQuant(op, quantize) },
			Eval: func(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
				return evalQuant(op, args, quantize)
			},
			Pretty: true,
		}, Conversions{Legalize: func(op *graphir.Op, b *builder) ([]*graphir.Value, error) { return legalizeQuant(op, b, quantize) }})
	}
}

// quantParams are a quantize, dequantize or requantize op's checked
// operand types, its axis (−1 for a per-tensor scale) and, for quantize
// and requantize, its saturation bounds.
type quantParams struct {
	x, scale, zp *graphir.TensorType
	axis         int
	lo, hi       int64
}

// boundAttrs are the optional saturation bounds of quantize_linear and
// requantize: no static default, an absent bound is the quantized type's
// limit (saturationBounds).
func boundAttrs() []graphir.AttrSpec {
	return []graphir.AttrSpec{{Name: "min", Kind: graphir.KindInt}, {Name: "max", Kind: graphir.KindInt}}
}

// saturationBounds reads op's min and max attributes for the quantized
// type dt: each defaults to dt's limit and must lie within dt's range,
// and min ≤ max.
func saturationBounds(op *graphir.Op, dt graphir.DType) (lo, hi int64, err error) {
	lo, hi = int64(lowestValue(dt)), int64(highestValue(dt))
	for _, b := range []struct {
		name string
		v    *int64
	}{{"min", &lo}, {"max", &hi}} {
		if op.Attr(b.name) == nil {
			continue
		}
		v, err := op.Int(b.name)
		if err != nil {
			return 0, 0, err
		}
		if v < int64(lowestValue(dt)) || v > int64(highestValue(dt)) {
			return 0, 0, op.Errorf("%s = %d is outside %s's range", b.name, v, dt)
		}
		*b.v = v
	}
	if lo > hi {
		return 0, 0, op.Errorf("min = %d is above max = %d", lo, hi)
	}
	return lo, hi, nil
}

// quantOperands checks the operands of a quantize (quantize true) or
// dequantize op.
func quantOperands(op *graphir.Op, quantize bool) (*quantParams, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	p := &quantParams{x: ts[0], scale: ts[1], zp: ts[2], axis: -1}
	if !p.scale.Elem.IsFloat() {
		return nil, op.Errorf("scale must have a float element type, got %s", p.scale)
	}
	if !p.zp.Equal(graphir.NewTensor(p.zp.Elem, p.scale.Shape...)) {
		return nil, op.Errorf("zero_point %s must have the shape of scale %s", p.zp, p.scale)
	}
	if quantize {
		if p.x.Elem != p.scale.Elem && !(p.x.Elem == graphir.I32 && p.scale.Elem == graphir.F32) {
			return nil, op.Errorf("x %s and scale %s must have one float element type (f32 scale for i32 x)", p.x, p.scale)
		}
		if p.zp.Elem != graphir.I8 && p.zp.Elem != graphir.UI8 {
			return nil, op.Errorf("zero_point must be i8 or ui8 (the quantized type), got %s", p.zp)
		}
		if p.lo, p.hi, err = saturationBounds(op, p.zp.Elem); err != nil {
			return nil, err
		}
	} else {
		if p.x.Elem != graphir.I8 && p.x.Elem != graphir.UI8 && p.x.Elem != graphir.I32 {
			return nil, op.Errorf("x must be i8, ui8 or i32, got %s", p.x)
		}
		if p.zp.Elem != p.x.Elem {
			return nil, op.Errorf("zero_point %s must have x's element type %s", p.zp, p.x.Elem)
		}
	}
	return p, p.checkAxis(op)
}

// checkAxis sets the axis of a per-axis scale (a 1-D scale of more than
// one element) and checks its size against x's dimension.
func (p *quantParams) checkAxis(op *graphir.Op) error {
	n := p.scale.NumElements()
	if p.scale.Rank() == 0 || (p.scale.Rank() == 1 && n == 1) {
		return nil
	}
	if p.scale.Rank() != 1 {
		return op.Errorf("scale must be a scalar or 1-D (per axis), got %s", p.scale)
	}
	axis, err := op.Int("axis")
	if err != nil {
		return err
	}
	if p.axis, err = normAxis(op, axis, p.x.Rank()); err != nil {
		return err
	}
	if d := p.x.Shape[p.axis]; d != n {
		return op.Errorf("per-axis scale has %d elements, but x %s has %d along axis %d", n, p.x, d, p.axis)
	}
	return nil
}

func inferQuant(op *graphir.Op, quantize bool) ([]graphir.Type, error) {
	p, err := quantOperands(op, quantize)
	if err != nil {
		return nil, err
	}
	if quantize {
		return one(graphir.NewTensor(p.zp.Elem, p.x.Shape...)), nil
	}
	return one(graphir.NewTensor(p.scale.Elem, p.x.Shape...)), nil
}

// evalQuant is the reference evaluation, element by element (float64,
// with the quotient rounded to x's float type as compiled code does).
func evalQuant(op *graphir.Op, args []*graphir.Tensor, quantize bool) ([]*graphir.Tensor, error) {
	p, err := quantOperands(op, quantize)
	if err != nil {
		return nil, err
	}
	x, scale, zp := args[0], args[1], args[2]
	out := graphir.NewZeroTensor(op.Results[0].Type.(*graphir.TensorType))
	channel := channelOf(p.x.Shape, p.axis)
	lo, hi := float64(p.lo), float64(p.hi)
	for i, v := range x.Data {
		c := channel(i)
		s, z := scale.Data[c], zp.Data[c]
		if quantize {
			out.Data[i] = quantizeValue(graphir.RoundTo(p.scale.Elem, v/s), z, lo, hi)
		} else {
			out.Data[i] = (v - z) * s
		}
	}
	return []*graphir.Tensor{out.Round()}, nil
}

// quantizeValue is clamp(round_half_even(q) + z, lo, hi); NaN quantizes
// to z, clamped too (so that a narrowed [lo, hi] bounds every result, as
// the lowering's clamp after its NaN select does).
func quantizeValue(q, z, lo, hi float64) float64 {
	if math.IsNaN(q) {
		q = 0
	}
	return math.Min(math.Max(math.RoundToEven(q)+z, lo), hi)
}

// channelOf maps an element's row-major offset in a tensor of shape to
// its index along axis (always 0 for axis −1: per tensor).
func channelOf(shape []int64, axis int) func(int) int {
	if axis < 0 {
		return func(int) int { return 0 }
	}
	inner := int64(1)
	for _, d := range shape[axis+1:] {
		inner *= d
	}
	n := shape[axis]
	return func(i int) int { return int((int64(i) / inner) % n) }
}

// legalizeQuant lowers quantize_linear to divide, round_nearest_even,
// add of the converted zero point, NaN replaced by the zero point, clamp
// to [min, max] and convert; dequantize_linear to convert, subtract and
// multiply. A per-axis scale and zero point are broadcast along the axis.
func legalizeQuant(op *graphir.Op, b *builder, quantize bool) ([]*graphir.Value, error) {
	p, err := quantOperands(op, quantize)
	if err != nil {
		return nil, err
	}
	ft := graphir.NewTensor(p.scale.Elem, p.x.Shape...)
	c := &chain{b: b, t: ft}
	spread := func(v *graphir.Value) *graphir.Value {
		return c.do(func() (*graphir.Value, error) { return p.spread(b, v) })
	}
	toFloat := func(v *graphir.Value) *graphir.Value {
		return c.do(func() (*graphir.Value, error) { return b.insert(hlo.Convert(v, p.scale.Elem, b.src.Loc)) })
	}
	x, s, z := op.Operand(0), spread(op.Operand(1)), toFloat(spread(op.Operand(2)))
	if !quantize {
		return c.done(c.op(hlo.MultiplyOp, c.op(hlo.SubtractOp, toFloat(x), z), s))
	}
	if p.x.Elem != p.scale.Elem {
		x = toFloat(x)
	}
	q := c.op(hlo.AddOp, c.op(hlo.RoundNearestEvenOp, c.op(hlo.DivideOp, x, s)), z)
	q = c.op(hlo.SelectOp, c.cmp("NE", q, q), z, q) // NaN quantizes to the zero point
	q = c.op(hlo.ClampOp, c.scalar(float64(p.lo)), q, c.scalar(float64(p.hi)))
	return c.done(c.do(func() (*graphir.Value, error) { return b.insert(hlo.Convert(q, p.zp.Elem, b.src.Loc)) }))
}

// spread broadcasts a scale or zero point to x's shape: along the axis
// when per axis, everywhere when per tensor.
func (p *quantParams) spread(b *builder, v *graphir.Value) (*graphir.Value, error) {
	if p.axis >= 0 {
		return b.broadcastInDim(v, p.x.Shape, []int64{int64(p.axis)})
	}
	if p.scale.Rank() == 1 {
		var err error
		if v, err = b.reshape(v, nil); err != nil {
			return nil, err
		}
	}
	return b.broadcastInDim(v, p.x.Shape, nil)
}
