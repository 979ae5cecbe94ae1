package graph

import (
	"math"

	"github.com/tessera-ml/tessera/dialects/hlo"
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
	register(&graphir.OpDef{
		Name:     MaxPool2DOp,
		Summary:  "2-D max pooling over NCHW input (ONNX MaxPool)",
		Operands: graphir.Exactly(1),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Attrs: []graphir.AttrSpec{
			{Name: "kernel", Kind: graphir.KindIntArray, Required: true, Len: 2},
			{Name: "strides", Kind: graphir.KindIntArray, Len: 2, Default: graphir.I64Array(1, 1)},
			{Name: "pads", Kind: graphir.KindIntArray, Len: 4, Default: graphir.I64Array(0, 0, 0, 0)},
			{Name: "dilations", Kind: graphir.KindIntArray, Len: 2, Default: graphir.I64Array(1, 1)},
			{Name: "ceil_mode", Kind: graphir.KindBool, Default: graphir.BoolAttr(false)},
		},
		Symbolic: true,
		Infer:    inferPool,
		Eval:     evalPool,
		Pretty:   true,
	}, Conversions{Legalize: legalizePool2D(true), Symbolic: true})
	register(&graphir.OpDef{
		Name:     AvgPool2DOp,
		Summary:  "2-D average pooling over NCHW input (ONNX AveragePool)",
		Operands: graphir.Exactly(1),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Attrs: []graphir.AttrSpec{
			{Name: "kernel", Kind: graphir.KindIntArray, Required: true, Len: 2},
			{Name: "strides", Kind: graphir.KindIntArray, Len: 2, Default: graphir.I64Array(1, 1)},
			{Name: "pads", Kind: graphir.KindIntArray, Len: 4, Default: graphir.I64Array(0, 0, 0, 0)},
			{Name: "ceil_mode", Kind: graphir.KindBool, Default: graphir.BoolAttr(false)},
			{Name: "count_include_pad", Kind: graphir.KindBool, Default: graphir.BoolAttr(false)},
		},
		Symbolic: true,
		Infer:    inferPool,
		Verify: func(op *graphir.Op) error {
			t, err := op.TensorOperand(0)
			if err != nil {
				return err
			}
			return requireFloat(op, t)
		},
		Eval:   evalPool,
		Pretty: true,
	}, Conversions{Legalize: legalizePool2D(false), Symbolic: true})
	register(&graphir.OpDef{
		Name:     GlobalAvgPoolOp,
		Summary:  "mean over all spatial dimensions: N×C×H×W → N×C×1×1 (ONNX GlobalAveragePool)",
		Operands: graphir.Exactly(1),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Symbolic: true,
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
	}, Conversions{Legalize: legalizeGlobalAvgPool, Symbolic: true})
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
	if p.kernel, err = op.Ints("kernel"); err != nil {
		return nil, err
	}
	if p.strides, err = op.Ints("strides"); err != nil {
		return nil, err
	}
	if p.pads, err = op.Ints("pads"); err != nil {
		return nil, err
	}
	p.dilations = []int64{1, 1}
	if op.Name == MaxPool2DOp {
		if p.dilations, err = op.Ints("dilations"); err != nil {
			return nil, err
		}
	}
	if p.ceil, err = op.Bool("ceil_mode"); err != nil {
		return nil, err
	}
	if op.Name == AvgPool2DOp {
		if p.includePad, err = op.Bool("count_include_pad"); err != nil {
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
	oh, ow, err := windowDims(op, x, p.kernel, p.strides, p.pads, p.dilations, p.ceil, "kernel "+shapeString(p.kernel))
	if err != nil {
		return nil, err
	}
	return one(graphir.NewTensorDims(x.Elem, x.Dim(0), x.Dim(1), oh, ow)), nil
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
					acc = lowestValue(x.Type.Elem) // −inf for floats
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
	dims := x.Dims()
	for i := 2; i < len(dims); i++ {
		dims[i] = graphir.SymConst(1)
	}
	return one(graphir.NewTensorDims(x.Elem, dims...)), nil
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

// Legalization (NCHW):
//
// graph.max_pool2d(x) → hlo.reduce_window(x, lowest) with a hlo.maximum
// body, window_dimensions [1, 1, kh, kw], window_strides [1, 1, sh, sw],
// window_dilations [1, 1, dh, dw] and padding [[0, 0], [0, 0], [t, b'],
// [l, r']]. Padded elements take the init value, so they never win.
//
// graph.avg_pool2d(x) → hlo.reduce_window(x, 0) with a hlo.add body (same
// window attributes) divided by the per-window element count:
//   - count_include_pad = true: the window elements inside the explicitly
//     padded extent [-t, H+b) × [-l, W+r) (as ONNX Runtime and PyTorch do),
//     which is the kernel size everywhere unless ceil_mode lets the last
//     windows run past the padded border;
//   - count_include_pad = false: the window elements inside the input.
//
// The counts are computed at legalization time: a splat constant when they
// are uniform, else an OH×OW constant broadcast along dims [2, 3].
//
// ceil_mode: the result type fixes the output size; b' (r') is raised above
// b (r) just enough for reduce_window to produce the last window, and those
// extra padded elements (init value) are never counted.
//
// graph.global_avg_pool(x) → hlo.reduce(x, 0) {dimensions = [2, ..., r-1]}
// with an add body, hlo.reshape to N×C×1×...×1, hlo.divide by a splat of
// the spatial element count (H·W for images).

// poolDim is the window geometry along one spatial dimension.
type poolDim struct {
	in, out, k, s, d, lo, hi int64
}

// symbolic reports whether the dimension's size is symbolic (in and out
// are then graphir.Dynamic).
func (p poolDim) symbolic() bool { return p.in == graphir.Dynamic }

// highPad returns the high padding that makes reduce_window produce at
// least out windows.
func (p poolDim) highPad() int64 {
	eff := p.d*(p.k-1) + 1
	return max(p.hi, (p.out-1)*p.s+eff-p.in-p.lo)
}

// counts returns, for each output position, how many window taps fall in
// [lo, hi) of the unpadded input coordinate space.
func (p poolDim) counts(lo, hi int64) []int64 {
	out := make([]int64, p.out)
	for o := range out {
		start := int64(o)*p.s - p.lo
		for j := int64(0); j < p.k; j++ {
			if x := start + j*p.d; x >= lo && x < hi {
				out[o]++
			}
		}
	}
	return out
}

func legalizePool2D(isMax bool) legalizeFn {
	return func(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
		p, err := poolAttrs(op)
		if err != nil {
			return nil, err
		}
		rt, err := b.resultTensor()
		if err != nil {
			return nil, err
		}
		xt := graphir.AsTensor(op.Operand(0).Type)
		var dims [2]poolDim
		var his [2]int64
		for i := range dims {
			dims[i] = poolDim{in: xt.Shape[2+i], out: rt.Shape[2+i], k: p.kernel[i], s: p.strides[i], d: p.dilations[i], lo: p.pads[i], hi: p.pads[2+i]}
			his[i] = dims[i].hi
			if !dims[i].symbolic() { // symbolic: no ceil_mode (inference refuses it), so hi suffices
				his[i] = dims[i].highPad()
			}
		}
		init, combiner := 0.0, hlo.AddOp
		if isMax {
			init, combiner = lowestValue(xt.Elem), hlo.MaximumOp
		}
		c := &chain{b: b, t: rt}
		cfg := hlo.WindowConfig{
			WindowDimensions: []int64{1, 1, p.kernel[0], p.kernel[1]},
			WindowStrides:    []int64{1, 1, p.strides[0], p.strides[1]},
			WindowDilations:  []int64{1, 1, p.dilations[0], p.dilations[1]},
			PadLow:           []int64{0, 0, p.pads[0], p.pads[1]},
			PadHigh:          []int64{0, 0, his[0], his[1]},
		}
		iv := c.scalar(init)
		r := c.do(func() (*graphir.Value, error) {
			return b.insert(hlo.ReduceWindow(op.Operand(0), iv, cfg, combiner, op.Loc))
		})
		if isMax {
			return c.done(r)
		}
		var cnt [2][]int64
		for i, d := range dims {
			switch {
			case d.symbolic() && !p.includePad && d.lo+d.hi > 0:
				return nil, requireStatic(op, xt, 2+i, "the size of a dimension that avg_pool2d pads without count_include_pad")
			case d.symbolic():
				cnt[i] = []int64{d.k} // every window lies inside the padded extent
			case p.includePad:
				cnt[i] = d.counts(-d.lo, d.in+d.hi)
			default:
				cnt[i] = d.counts(0, d.in)
			}
		}
		div := c.do(func() (*graphir.Value, error) { return b.countTensor(cnt, rt) })
		return c.done(c.op(hlo.DivideOp, r, div))
	}
}

// countTensor materializes the outer product of per-dimension window
// counts at the result type: a splat when uniform, else an OH×OW constant
// broadcast along dims [2, 3].
func (b *builder) countTensor(cnt [2][]int64, rt *graphir.TensorType) (*graphir.Value, error) {
	oh, ow := len(cnt[0]), len(cnt[1])
	t := graphir.NewTensor(rt.Elem, int64(oh), int64(ow))
	ct := graphir.NewZeroTensor(t)
	uniform := true
	for i, a := range cnt[0] {
		for j, c := range cnt[1] {
			ct.Data[i*ow+j] = float64(a * c)
			uniform = uniform && ct.Data[i*ow+j] == ct.Data[0]
		}
	}
	if uniform {
		return b.splat(rt, ct.Data[0])
	}
	for d := 2; d < 4; d++ {
		if err := requireStatic(b.src, rt, d, "a spatial dimension of an avg_pool2d whose window counts vary by position"); err != nil {
			return nil, err
		}
	}
	v, err := b.constant(ct.Round().ToDense())
	if err != nil {
		return nil, err
	}
	return b.broadcastInDim(v, rt.Shape, []int64{2, 3})
}

func legalizeGlobalAvgPool(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	x := op.Operand(0)
	xt := graphir.AsTensor(x.Type)
	window := iota64(2, xt.Rank())
	c := &chain{b: b, t: rt}
	sum := c.do(func() (*graphir.Value, error) { return b.reduce(x, 0, hlo.AddOp, window) })
	r := c.do(func() (*graphir.Value, error) { return b.reshapeDims(sum, rt.Dims()) })
	return c.done(c.op(hlo.DivideOp, r, c.do(func() (*graphir.Value, error) { return b.elementCount(x, window, rt) })))
}
