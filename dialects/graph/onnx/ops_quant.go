package onnx

import (
	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
)

// Quantization ops. QuantizeLinear and DequantizeLinear map to
// graph.quantize_linear and graph.dequantize_linear (a missing zero point
// is a constant 0 of the quantized type, ui8 for QuantizeLinear).
// DynamicQuantizeLinear computes its scale and zero point from the
// input's range with graph ops, as ONNX defines it. The integer ops
// subtract their zero points in i32 and run the i32 contraction
// (MatMulInteger → graph.matmul, ConvInteger → graph.conv2d). QLinearMatMul
// and QLinearConv import in QDQ form — dequantize the operands, the float
// contraction, quantize the result — which is exactly the ONNX reference
// implementation's arithmetic.

func init() {
	register(convertQuantizeLinear, "QuantizeLinear")
	register(convertDequantizeLinear, "DequantizeLinear")
	register(convertDynamicQuantizeLinear, "DynamicQuantizeLinear")
	register(convertMatMulInteger, "MatMulInteger")
	register(convertConvInteger, "ConvInteger")
	register(convertQLinearMatMul, "QLinearMatMul")
	register(convertQLinearConv, "QLinearConv")
}

// zeroPoint is input i, or a constant zero of element type dt and the
// shape of scale when the input is absent.
func (n *node) zeroPoint(i int, scale *value, dt graphir.DType) *value {
	if z := n.in(i); z != nil {
		return z
	}
	return constValue(graphir.NewZeroTensor(graphir.NewTensor(dt, scale.typ().Shape...)), n.loc)
}

// quantAxis is the node's axis attribute (opset 13; default 1).
func (n *node) quantAxis() (graphir.DictAttr, error) {
	axis, err := n.intAttr("axis", 1)
	return attrs("axis", graphir.IntAttr(axis)), err
}

func convertQuantizeLinear(n *node) ([]*value, error) {
	if err := n.need(2, 3); err != nil {
		return nil, err
	}
	a, err := n.quantAxis()
	if err != nil {
		return nil, err
	}
	return n.emit(graph.QuantizeLinearOp, list(n.in(0), n.in(1), n.zeroPoint(2, n.in(1), graphir.UI8)), a)
}

func convertDequantizeLinear(n *node) ([]*value, error) {
	if err := n.need(2, 3); err != nil {
		return nil, err
	}
	a, err := n.quantAxis()
	if err != nil {
		return nil, err
	}
	x := n.in(0)
	return n.emit(graph.DequantizeLinearOp, list(x, n.in(1), n.zeroPoint(2, n.in(1), x.typ().Elem)), a)
}

// dequantize is DequantizeLinear of x with scale and zero point z, per
// axis axis (QLinear ops: per output channel for the weights).
func (n *node) dequantize(x, scale, z *value, axis int64) (*value, error) {
	return n.emit1(graph.DequantizeLinearOp, list(x, scale, z), attrs("axis", graphir.IntAttr(axis)))
}

// convertDynamicQuantizeLinear: x_min = min(0, min(x)), x_max = max(0,
// max(x)), scale = (x_max − x_min) / 255, zero point = round(clip(−x_min /
// scale, 0, 255)) as ui8, y = QuantizeLinear(x, scale, zero point).
func convertDynamicQuantizeLinear(n *node) ([]*value, error) {
	if err := n.need(1, 1); err != nil {
		return nil, err
	}
	x := n.in(0)
	if x.typ().Elem != graphir.F32 {
		return nil, n.errorf("input must be float (f32), got %s", x.typ())
	}
	c := &quantChain{n: n}
	zero, q := c.scalar(0), c.scalar(255)
	lo := c.op(graph.MinOp, c.op(graph.ReduceMinOp, x, attrs("keepdims", graphir.BoolAttr(false))), zero)
	hi := c.op(graph.MaxOp, c.op(graph.ReduceMaxOp, x, attrs("keepdims", graphir.BoolAttr(false))), zero)
	scale := c.op(graph.DivOp, c.op(graph.SubOp, hi, lo), q)
	zp := c.op(graph.DivOp, c.op(graph.SubOp, zero, lo), scale)
	zp = c.op(graph.RoundOp, c.op(graph.ClipOp, zp, attrs("min", graphir.F32Attr(0), "max", graphir.F32Attr(255))))
	zq := c.cast(zp, graphir.UI8)
	y := c.op(graph.QuantizeLinearOp, x, scale, zq)
	if c.err != nil {
		return nil, c.err
	}
	return list(y[0], scale[0], zq[0]), nil
}

// quantChain threads the first error through a sequence of emits.
type quantChain struct {
	n   *node
	err error
}

// op emits graph op name on the first values of ins.
func (c *quantChain) op(name string, ins ...any) []*value {
	if c.err != nil {
		return nil
	}
	var vs []*value
	a := graphir.DictAttr{}
	for _, in := range ins {
		switch x := in.(type) {
		case []*value:
			vs = append(vs, x[0])
		case *value:
			vs = append(vs, x)
		case graphir.DictAttr:
			a = x
		}
	}
	var out []*value
	out, c.err = c.n.emit(name, vs, a)
	return out
}

func (c *quantChain) scalar(v float64) []*value {
	return list(constValue(&graphir.Tensor{Type: graphir.NewTensor(graphir.F32), Data: []float64{v}}, c.n.loc))
}

func (c *quantChain) cast(x []*value, dt graphir.DType) []*value {
	if c.err != nil {
		return nil
	}
	var y *value
	y, c.err = c.n.castTo(x[0], dt)
	return list(y)
}

// integerOperand is x − z in i32 (z reshaped by shape first when it is
// given, for a per-row or per-channel zero point); x alone in i32 when
// the zero point is absent.
func (n *node) integerOperand(x, z *value, shape []int64) (*value, error) {
	xi, err := n.castTo(x, graphir.I32)
	if err != nil || z == nil {
		return xi, err
	}
	zi, err := n.castTo(z, graphir.I32)
	if err != nil {
		return nil, err
	}
	if shape != nil && z.typ().NumElements() > 1 {
		if zi, err = n.emit1(graph.ReshapeOp, list(zi), attrs("shape", graphir.I64Array(shape...))); err != nil {
			return nil, err
		}
	}
	return n.emit1(graph.SubOp, list(xi, zi), nil)
}

// convertMatMulInteger: (A − a_zero_point) · (B − b_zero_point) in i32.
// A's zero point may be per row (shape [M]); B's per column ([N]).
func convertMatMulInteger(n *node) ([]*value, error) {
	if err := n.need(2, 4); err != nil {
		return nil, err
	}
	a, err := n.integerOperand(n.in(0), n.in(2), []int64{-1, 1})
	if err != nil {
		return nil, err
	}
	b, err := n.integerOperand(n.in(1), n.in(3), nil)
	if err != nil {
		return nil, err
	}
	return n.emit("graph.matmul", list(a, b), nil)
}

// convertConvInteger: Conv of (x − x_zero_point) and (w − w_zero_point)
// in i32 (w's zero point may be per output channel). Padding with 0
// after the subtraction is padding with x_zero_point before it, as ONNX
// specifies.
func convertConvInteger(n *node) ([]*value, error) {
	if err := n.need(2, 4); err != nil {
		return nil, err
	}
	x, err := n.integerOperand(n.in(0), n.in(2), nil)
	if err != nil {
		return nil, err
	}
	w, err := n.integerOperand(n.in(1), n.in(3), []int64{-1, 1, 1, 1})
	if err != nil {
		return nil, err
	}
	return n.convWith(x, w, nil)
}

// requantize quantizes the float result y with the node's output scale
// and zero point (inputs si and si+1).
func (n *node) requantize(y *value, si int) ([]*value, error) {
	return n.emit(graph.QuantizeLinearOp, list(y, n.in(si), n.in(si+1)), attrs("axis", graphir.IntAttr(1)))
}

// convertQLinearMatMul: QuantizeLinear(DequantizeLinear(a) ·
// DequantizeLinear(b), y_scale, y_zero_point); b's scale may be per
// column (axis −1 of b), a's per row (axis −2 of a).
func convertQLinearMatMul(n *node) ([]*value, error) {
	if err := n.need(8, 8); err != nil {
		return nil, err
	}
	a, err := n.dequantize(n.in(0), n.in(1), n.in(2), -2)
	if err != nil {
		return nil, err
	}
	b, err := n.dequantize(n.in(3), n.in(4), n.in(5), -1)
	if err != nil {
		return nil, err
	}
	y, err := n.emit1("graph.matmul", list(a, b), nil)
	if err != nil {
		return nil, err
	}
	return n.requantize(y, 6)
}

// convertQLinearConv: QuantizeLinear(Conv(DequantizeLinear(x),
// DequantizeLinear(w) per output channel, B · x_scale · w_scale), y_scale,
// y_zero_point); the i32 bias dequantizes with scale x_scale · w_scale
// and zero point 0, as ONNX defines it.
func convertQLinearConv(n *node) ([]*value, error) {
	if err := n.need(8, 9); err != nil {
		return nil, err
	}
	x, err := n.dequantize(n.in(0), n.in(1), n.in(2), 1)
	if err != nil {
		return nil, err
	}
	w, err := n.dequantize(n.in(3), n.in(4), n.in(5), 0)
	if err != nil {
		return nil, err
	}
	var bias *value
	if b := n.in(8); b != nil {
		bs, err := n.emit1(graph.MulOp, list(n.in(1), n.in(4)), nil)
		if err != nil {
			return nil, err
		}
		if bs.typ().Rank() == 0 {
			bs, err = n.emit1(graph.ReshapeOp, list(bs), attrs("shape", graphir.I64Array(1)))
			if err != nil {
				return nil, err
			}
		}
		zero := constValue(graphir.NewZeroTensor(graphir.NewTensor(graphir.I32, bs.typ().Shape...)), n.loc)
		if bias, err = n.dequantize(b, bs, zero, 0); err != nil {
			return nil, err
		}
	}
	ys, err := n.convWith(x, w, bias)
	if err != nil {
		return nil, err
	}
	return n.requantize(ys[0], 6)
}
