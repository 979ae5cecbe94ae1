package graph

import (
	"fmt"

	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// Conv2DOp is graph.conv2d (ONNX Conv with two spatial dimensions).
//
//	x: N×C×H×W, w: O×(C/groups)×KH×KW, optional b: [O] → N×O×OH×OW
//	strides = [sh, sw] (default [1, 1]), pads = [top, left, bottom, right]
//	(default zeros), dilations = [dh, dw] (default [1, 1]), groups (default 1).
//
// OH = floor((H + top + bottom − dh·(KH−1) − 1)/sh) + 1, likewise OW.
// Float operands, i32 (ConvInteger's accumulation), or 8-bit x and w (i8
// or ui8, mixed allowed) accumulating in an i32 result with an i32 bias
// (ConvInteger with zero points 0: padding reads 0).
const Conv2DOp = "graph.conv2d"

func init() {
	register(&graphir.OpDef{
		Name:     Conv2DOp,
		Summary:  "2-D convolution, NCHW input, OIHW weight, optional bias [O] (ONNX Conv); float, i32, or 8-bit operands into i32 (ConvInteger's accumulation)",
		Operands: graphir.Arity{Min: 2, Max: 3},
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Attrs: []graphir.AttrSpec{
			{Name: "strides", Kind: graphir.KindIntArray, Len: 2, Default: graphir.I64Array(1, 1)},
			{Name: "pads", Kind: graphir.KindIntArray, Len: 4, Default: graphir.I64Array(0, 0, 0, 0)},
			{Name: "dilations", Kind: graphir.KindIntArray, Len: 2, Default: graphir.I64Array(1, 1)},
			{Name: "groups", Kind: graphir.KindInt, Default: graphir.IntAttr(1)},
		},
		Symbolic: true,
		Infer:    inferConv2D,
		Verify: func(op *graphir.Op) error {
			t, err := op.TensorOperand(0)
			if err != nil {
				return err
			}
			if t.Elem != graphir.I32 && !hlo.Is8Bit(t.Elem) {
				return requireFloat(op, t)
			}
			return nil
		},
		Eval:   evalConv2D,
		Pretty: true,
	}, Conversions{Legalize: legalizeConv2D, Symbolic: true})
}

// ConvOutputSize returns the output length of one spatial dimension of a
// convolution (ONNX Conv, floor rounding):
//
//	floor((in + padLo + padHi − dilation·(kernel−1) − 1) / stride) + 1
//
// It errors when stride or dilation is below 1, kernel below 1, a pad
// negative, or the dilated kernel is larger than the padded input.
func ConvOutputSize(in, kernel, stride, padLo, padHi, dilation int64) (int64, error) {
	return windowOutputSize(in, kernel, stride, padLo, padHi, dilation, false)
}

// PoolOutputSize returns the output length of one spatial dimension of a
// pooling window (ONNX MaxPool/AveragePool). With ceilMode false it equals
// ConvOutputSize. With ceilMode true the division rounds up, and, as in
// PyTorch and onnxruntime, a last window that would start inside the
// trailing padding (start ≥ in + padLo) is dropped. Errors as ConvOutputSize.
func PoolOutputSize(in, kernel, stride, padLo, padHi, dilation int64, ceilMode bool) (int64, error) {
	return windowOutputSize(in, kernel, stride, padLo, padHi, dilation, ceilMode)
}

func windowOutputSize(in, kernel, stride, padLo, padHi, dilation int64, ceilMode bool) (int64, error) {
	switch {
	case kernel < 1:
		return 0, fmt.Errorf("kernel size %d must be at least 1", kernel)
	case stride < 1:
		return 0, fmt.Errorf("stride %d must be at least 1", stride)
	case dilation < 1:
		return 0, fmt.Errorf("dilation %d must be at least 1", dilation)
	case padLo < 0 || padHi < 0:
		return 0, fmt.Errorf("pads %d, %d must be non-negative", padLo, padHi)
	}
	eff := dilation*(kernel-1) + 1
	span := in + padLo + padHi - eff
	if span < 0 {
		return 0, fmt.Errorf("dilated kernel %d is larger than the padded input %d", eff, in+padLo+padHi)
	}
	if !ceilMode {
		return span/stride + 1, nil
	}
	out := (span+stride-1)/stride + 1
	if (out-1)*stride >= in+padLo {
		out--
	}
	return out, nil
}

// convParams are the validated attributes of a conv2d.
type convParams struct {
	strides, pads, dilations []int64
	groups                   int64
}

func convAttrs(op *graphir.Op) (*convParams, error) {
	var p convParams
	var err error
	if p.strides, err = op.Ints("strides"); err != nil {
		return nil, err
	}
	if p.pads, err = op.Ints("pads"); err != nil {
		return nil, err
	}
	if p.dilations, err = op.Ints("dilations"); err != nil {
		return nil, err
	}
	if p.groups, err = op.Int("groups"); err != nil {
		return nil, err
	}
	for _, s := range p.strides {
		if s < 1 {
			return nil, op.Errorf("strides %s must be at least 1", shapeString(p.strides))
		}
	}
	for _, s := range p.pads {
		if s < 0 {
			return nil, op.Errorf("pads %s must be non-negative", shapeString(p.pads))
		}
	}
	for _, s := range p.dilations {
		if s < 1 {
			return nil, op.Errorf("dilations %s must be at least 1", shapeString(p.dilations))
		}
	}
	if p.groups < 1 {
		return nil, op.Errorf("groups %d must be at least 1", p.groups)
	}
	return &p, nil
}

func inferConv2D(op *graphir.Op) ([]graphir.Type, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	if len(ts) < 2 {
		return nil, op.Errorf("expects 2 or 3 operands, got %d", len(ts))
	}
	elem, err := contractionElem(op, ts[:2])
	if err != nil {
		return nil, err
	}
	x, w := ts[0], ts[1]
	if len(ts) == 3 && ts[2].Elem != elem {
		return nil, op.Errorf("bias has element type %s, the result %s", ts[2].Elem, elem)
	}
	if x.Rank() != 4 {
		return nil, op.Errorf("input must be rank 4 (N×C×H×W), got %s", x)
	}
	if w.Rank() != 4 {
		return nil, op.Errorf("weight must be rank 4 (O×C/groups×KH×KW), got %s", w)
	}
	p, err := convAttrs(op)
	if err != nil {
		return nil, err
	}
	if err := requireStatic(op, x, 1, "the input channel count"); err != nil {
		return nil, err
	}
	for d := range w.Shape {
		if err := requireStatic(op, w, d, "the weight's shape"); err != nil {
			return nil, err
		}
	}
	c, o := x.Shape[1], w.Shape[0]
	if c%p.groups != 0 {
		return nil, op.Errorf("groups %d does not divide input channels %d", p.groups, c)
	}
	if o%p.groups != 0 {
		return nil, op.Errorf("groups %d does not divide output channels %d", p.groups, o)
	}
	if w.Shape[1]*p.groups != c {
		return nil, op.Errorf("input channels %d do not match weight channels %d × groups %d", c, w.Shape[1], p.groups)
	}
	if len(ts) == 3 {
		if b := ts[2]; b.Rank() != 1 || b.Shape[0] != o {
			return nil, op.Errorf("bias must have shape [%d] (output channels), got %s", o, b)
		}
	}
	oh, ow, err := windowDims(op, x, w.Shape[2:], p.strides, p.pads, p.dilations, false, "weight "+w.String())
	if err != nil {
		return nil, err
	}
	return one(graphir.NewTensorDims(elem, x.Dim(0), graphir.SymConst(o), oh, ow)), nil
}

// evalConv2D is a direct convolution with float64 accumulation.
func evalConv2D(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	p, err := convAttrs(op)
	if err != nil {
		return nil, err
	}
	x, w := args[0], args[1]
	n, c, h, wd := x.Shape()[0], x.Shape()[1], x.Shape()[2], x.Shape()[3]
	o, cg, kh, kw := w.Shape()[0], w.Shape()[1], w.Shape()[2], w.Shape()[3]
	oh, ow := out.Shape()[2], out.Shape()[3]
	og := o / p.groups
	sh, sw := p.strides[0], p.strides[1]
	pt, pl := p.pads[0], p.pads[1]
	dh, dw := p.dilations[0], p.dilations[1]
	i := 0
	for b := int64(0); b < n; b++ {
		for oc := int64(0); oc < o; oc++ {
			g := oc / og
			bias := 0.0
			if len(args) == 3 {
				bias = args[2].Data[oc]
			}
			for y := int64(0); y < oh; y++ {
				for xo := int64(0); xo < ow; xo++ {
					acc := bias
					for ic := int64(0); ic < cg; ic++ {
						cin := g*cg + ic
						for ky := int64(0); ky < kh; ky++ {
							iy := y*sh - pt + ky*dh
							if iy < 0 || iy >= h {
								continue
							}
							for kx := int64(0); kx < kw; kx++ {
								ix := xo*sw - pl + kx*dw
								if ix < 0 || ix >= wd {
									continue
								}
								acc += x.Data[((b*c+cin)*h+iy)*wd+ix] * w.Data[((oc*cg+ic)*kh+ky)*kw+kx]
							}
						}
					}
					out.Data[i] = acc
					i++
				}
			}
		}
	}
	return []*graphir.Tensor{out.Round()}, nil
}

// legalizeConv2D: graph.conv2d(x, w[, b]) → hlo.convolution(x, w)
// {window_strides = strides, padding = [[top, bottom], [left, right]],
// rhs_dilation = dilations, feature_group_count = groups}, then, with a
// bias, hlo.add(conv, hlo.broadcast_in_dim(b) {broadcast_dimensions =
// [1]}). Both levels use NCHW inputs and OIHW weights, so no transposes
// appear.
func legalizeConv2D(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	p, err := convAttrs(op)
	if err != nil {
		return nil, err
	}
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	cfg := hlo.ConvConfig{WindowStrides: p.strides, PadLow: []int64{p.pads[0], p.pads[1]}, PadHigh: []int64{p.pads[2], p.pads[3]},
		RhsDilation: p.dilations, FeatureGroupCount: p.groups}
	conv, err := b.insert(hlo.Convolution(op.Operand(0), op.Operand(1), cfg, op.Loc))
	if err != nil {
		return nil, err
	}
	bias := optionalOperand(op, 2)
	if bias == nil {
		return []*graphir.Value{conv}, nil
	}
	c := &chain{b: b, t: rt}
	bb := c.do(func() (*graphir.Value, error) { return b.broadcastInDimDims(bias, rt.Dims(), []int64{1}) })
	return c.done(c.op(hlo.AddOp, conv, bb))
}
