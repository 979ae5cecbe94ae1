package graph

import (
	"math"

	"github.com/tessera-ml/tessera/graphir"
)

// Pooling op names. Inputs are N×C×H×W.
//
//	graph.max_pool2d(x) {kernel = [kh, kw] (required), strides = [1, 1],
//	  pads = [top, left, bottom, right] = 0s, dilations = [1, 1], ceil_mode = false}
//	graph.avg_pool2d(x) {kernel (required), strides, pads, ceil_mode = false,
//	  count_include_pad = false}
//	graph.global_avg_pool(x): N×C×D1×...×Dk → N×C×1×...×1 (rank ≥ 3)
//
// Output sizes follow PoolOutputSize. References: ONNX MaxPool,
// AveragePool, GlobalAveragePool; ceil_mode and count_include_pad as in
// PyTorch and onnxruntime.
const (
	MaxPool2DOp     = "graph.max_pool2d"
	AvgPool2DOp     = "graph.avg_pool2d"
	GlobalAvgPoolOp = "graph.global_avg_pool"
)

func init() {
	graphir.RegisterOp(&graphir.OpDef{
		Name:     MaxPool2DOp,
		Summary:  "2-D max pooling over NCHW input (ONNX MaxPool)",
		Operands: graphir.Exactly(1),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Attrs: []graphir.AttrSpec{
			{Name: "kernel", Kind: graphir.KindIntArray, Required: true, Len: 2},
			{Name: "strides", Kind: graphir.KindIntArray, Len: 2},
			{Name: "pads", Kind: graphir.KindIntArray, Len: 4},
			{Name: "dilations", Kind: graphir.KindIntArray, Len: 2},
			{Name: "ceil_mode", Kind: graphir.KindBool},
		},
		Infer:  inferPool,
		Eval:   evalPool,
		Pretty: true,
	})
	graphir.RegisterOp(&graphir.OpDef{
		Name:     AvgPool2DOp,
		Summary:  "2-D average pooling over NCHW input (ONNX AveragePool)",
		Operands: graphir.Exactly(1),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Attrs: []graphir.AttrSpec{
			{Name: "kernel", Kind: graphir.KindIntArray, Required: true, Len: 2},
			{Name: "strides", Kind: graphir.KindIntArray, Len: 2},
			{Name: "pads", Kind: graphir.KindIntArray, Len: 4},
			{Name: "ceil_mode", Kind: graphir.KindBool},
			{Name: "count_include_pad", Kind: graphir.KindBool},
		},
		Infer: inferPool,
		Verify: func(op *graphir.Op) error {
			t, err := op.TensorOperand(0)
			if err != nil {
				return err
			}
			return requireFloat(op, t)
		},
		Eval:   evalPool,
		Pretty: true,
	})
	graphir.RegisterOp(&graphir.OpDef{
		Name:     GlobalAvgPoolOp,
		Summary:  "mean over all spatial dimensions: N×C×H×W → N×C×1×1 (ONNX GlobalAveragePool)",
		Operands: graphir.Exactly(1),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Infer:    inferGlobalAvgPool,
		Verify: func(op *graphir.Op) error {
			t, err := op.TensorOperand(0)
			if err != nil {
				return err
			}
			return requireFloat(op, t)
		},
		Eval:   evalGlobalAvgPool,
		Pretty: true,
	})
}

type poolParams struct {
	kernel, strides, pads, dilations []int64
	ceil, includePad                 bool
}

func poolAttrs(op *graphir.Op) (*poolParams, error) {
	var p poolParams
	var err error
	if op.Attr("kernel") == nil {
		return nil, op.Errorf("requires attribute 'kernel'")
	}
	if p.kernel, err = intsAttr(op, "kernel", nil, 2); err != nil {
		return nil, err
	}
	if p.strides, err = intsAttr(op, "strides", []int64{1, 1}, 2); err != nil {
		return nil, err
	}
	if p.pads, err = intsAttr(op, "pads", []int64{0, 0, 0, 0}, 4); err != nil {
		return nil, err
	}
	p.dilations = []int64{1, 1}
	if op.Name == MaxPool2DOp {
		if p.dilations, err = intsAttr(op, "dilations", []int64{1, 1}, 2); err != nil {
			return nil, err
		}
	}
	if p.ceil, err = boolAttr(op, "ceil_mode", false); err != nil {
		return nil, err
	}
	if op.Name == AvgPool2DOp {
		if p.includePad, err = boolAttr(op, "count_include_pad", false); err != nil {
			return nil, err
		}
	}
	for _, k := range p.kernel {
		if k < 1 {
			return nil, op.Errorf("kernel %s must be at least 1", shapeString(p.kernel))
		}
	}
	for _, s := range p.strides {
		if s < 1 {
			return nil, op.Errorf("strides %s must be at least 1", shapeString(p.strides))
		}
	}
	for _, d := range p.dilations {
		if d < 1 {
			return nil, op.Errorf("dilations %s must be at least 1", shapeString(p.dilations))
		}
	}
	for i, pd := range p.pads {
		if pd < 0 {
			return nil, op.Errorf("pads %s must be non-negative", shapeString(p.pads))
		}
		if eff := p.dilations[i%2]*(p.kernel[i%2]-1) + 1; pd >= eff {
			return nil, op.Errorf("pads %s must be smaller than the (dilated) kernel %s", shapeString(p.pads), shapeString(p.kernel))
		}
	}
	return &p, nil
}

func inferPool(op *graphir.Op) ([]graphir.Type, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	x := ts[0]
	if x.Rank() != 4 {
		return nil, op.Errorf("input must be rank 4 (N×C×H×W), got %s", x)
	}
	p, err := poolAttrs(op)
	if err != nil {
		return nil, err
	}
	oh, err := PoolOutputSize(x.Shape[2], p.kernel[0], p.strides[0], p.pads[0], p.pads[2], p.dilations[0], p.ceil)
	if err != nil {
		return nil, op.Errorf("height: %v (input %s, kernel %s)", err, x, shapeString(p.kernel))
	}
	ow, err := PoolOutputSize(x.Shape[3], p.kernel[1], p.strides[1], p.pads[1], p.pads[3], p.dilations[1], p.ceil)
	if err != nil {
		return nil, op.Errorf("width: %v (input %s, kernel %s)", err, x, shapeString(p.kernel))
	}
	return one(graphir.NewTensor(x.Elem, x.Shape[0], x.Shape[1], oh, ow)), nil
}

// evalPool evaluates max and average pooling. Padding never contributes a
// value. A max window without input elements yields -Inf. An average
// divides by the number of input elements in the window, or, with
// count_include_pad, by the window size clipped to the padded input
// (PyTorch); a window without elements yields 0.
func evalPool(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	p, err := poolAttrs(op)
	if err != nil {
		return nil, err
	}
	x := args[0]
	n, c, h, w := x.Shape()[0], x.Shape()[1], x.Shape()[2], x.Shape()[3]
	oh, ow := out.Shape()[2], out.Shape()[3]
	kh, kw := p.kernel[0], p.kernel[1]
	sh, sw := p.strides[0], p.strides[1]
	pt, pl, pb, pr := p.pads[0], p.pads[1], p.pads[2], p.pads[3]
	dh, dw := p.dilations[0], p.dilations[1]
	isMax := op.Name == MaxPool2DOp
	i := 0
	for nc := int64(0); nc < n*c; nc++ {
		plane := x.Data[nc*h*w : (nc+1)*h*w]
		for y := int64(0); y < oh; y++ {
			for xo := int64(0); xo < ow; xo++ {
				y0, x0 := y*sh-pt, xo*sw-pl
				acc, cnt := 0.0, 0
				if isMax {
					acc = math.Inf(-1)
				}
				for ky := int64(0); ky < kh; ky++ {
					iy := y0 + ky*dh
					if iy < 0 || iy >= h {
						continue
					}
					for kx := int64(0); kx < kw; kx++ {
						ix := x0 + kx*dw
						if ix < 0 || ix >= w {
							continue
						}
						v := plane[iy*w+ix]
						if isMax {
							if v > acc || math.IsNaN(v) {
								acc = v
							}
						} else {
							acc += v
						}
						cnt++
					}
				}
				if !isMax {
					div := float64(cnt)
					if p.includePad {
						hs := min(y0+kh, h+pb) - y0
						ws := min(x0+kw, w+pr) - x0
						div = float64(hs * ws)
					}
					if div > 0 {
						acc /= div
					} else {
						acc = 0
					}
				}
				out.Data[i] = acc
				i++
			}
		}
	}
	return []*graphir.Tensor{out.Round()}, nil
}

func inferGlobalAvgPool(op *graphir.Op) ([]graphir.Type, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	x := ts[0]
	if x.Rank() < 3 {
		return nil, op.Errorf("input must have rank at least 3 (N×C×spatial...), got %s", x)
	}
	shape := append([]int64(nil), x.Shape...)
	for i := 2; i < len(shape); i++ {
		shape[i] = 1
	}
	return one(&graphir.TensorType{Shape: shape, Elem: x.Elem}), nil
}

func evalGlobalAvgPool(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	x := args[0]
	spatial := product(x.Shape()[2:])
	for i := range out.Data {
		acc := 0.0
		for _, v := range x.Data[int64(i)*spatial : int64(i+1)*spatial] {
			acc += v
		}
		if spatial > 0 {
			out.Data[i] = acc / float64(spatial)
		} else {
			out.Data[i] = math.NaN()
		}
	}
	return []*graphir.Tensor{out.Round()}, nil
}
