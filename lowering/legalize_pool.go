package lowering

import "github.com/tessera-ml/tessera/graphir"

// Pooling (NCHW).
//
// graph.max_pool2d(x) → hlo.reduce_window(x, -inf) with a hlo.maximum body,
// window_dimensions [1, 1, kh, kw], window_strides [1, 1, sh, sw],
// window_dilations [1, 1, dh, dw] and padding [[0, 0], [0, 0], [t, b'],
// [l, r']]. Padded elements take the init value -inf, so they never win.
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
// extra padded elements (init value) are never counted. A result size that
// no such padding produces is a diagnostic.
//
// graph.global_avg_pool(x) → hlo.reduce(x, 0) {dimensions = [2, ..., r-1]}
// with an add body, hlo.reshape to N×C×1×...×1, hlo.divide by a splat of the
// spatial element count (H·W for images).
func init() {
	registerLegalization("graph.max_pool2d", func(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
		return legalizePool2D(op, b, true)
	})
	registerLegalization("graph.avg_pool2d", func(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
		return legalizePool2D(op, b, false)
	})
	registerLegalization("graph.global_avg_pool", legalizeGlobalAvgPool)
}

// poolDim is the window geometry along one spatial dimension.
type poolDim struct {
	in, out, k, s, d, lo, hi int64
}

// highPad returns the high padding that makes reduce_window produce at
// least out windows, and the number of windows it produces with it.
func (p poolDim) highPad() (hi, n int64) {
	eff := p.d*(p.k-1) + 1
	hi = p.hi
	if need := (p.out-1)*p.s + eff - p.in - p.lo; need > hi {
		hi = need
	}
	return hi, (p.in+p.lo+hi-eff)/p.s + 1
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

func legalizePool2D(op *graphir.Op, b *builder, isMax bool) ([]*graphir.Value, error) {
	if op.NumOperands() != 1 {
		return nil, op.Errorf("expects 1 operand, got %d", op.NumOperands())
	}
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	xt, err := b.tensorOf(op.Operand(0), "input")
	if err != nil {
		return nil, err
	}
	if xt.Rank() != 4 || rt.Rank() != 4 || xt.Elem != rt.Elem {
		return nil, op.Errorf("expects a rank-4 NCHW input and result of one element type, got %s -> %s", xt, rt)
	}
	kernel, err := intsAttr(op, "kernel", 2, nil)
	if err != nil {
		return nil, err
	}
	if kernel == nil {
		return nil, op.Errorf("requires attribute 'kernel'")
	}
	strides, err := intsAttr(op, "strides", 2, []int64{1, 1})
	if err != nil {
		return nil, err
	}
	pads, err := intsAttr(op, "pads", 4, []int64{0, 0, 0, 0})
	if err != nil {
		return nil, err
	}
	dil, err := intsAttr(op, "dilations", 2, []int64{1, 1})
	if err != nil {
		return nil, err
	}
	var dims [2]poolDim
	for i := range dims {
		dims[i] = poolDim{in: xt.Shape[2+i], out: rt.Shape[2+i], k: kernel[i], s: strides[i], d: dil[i], lo: pads[i], hi: pads[2+i]}
		p := dims[i]
		if p.k < 1 || p.s < 1 || p.d < 1 || p.lo < 0 || p.hi < 0 || p.out < 1 {
			return nil, op.Errorf("unsupported window: kernel %v, strides %v, dilations %v, pads %v, output %s", kernel, strides, dil, pads, rt)
		}
	}
	if rt.Shape[0] != xt.Shape[0] || rt.Shape[1] != xt.Shape[1] {
		return nil, op.Errorf("result %s must keep the batch and channel dimensions of %s", rt, xt)
	}
	var his, ns [2]int64
	for i, p := range dims {
		his[i], ns[i] = p.highPad()
	}
	if ns[0] != rt.Shape[2] || ns[1] != rt.Shape[3] {
		// Only possible when a padding reaches past a whole window, which
		// the graph verifier rejects (pads must be smaller than the kernel).
		return nil, op.Errorf("result %s does not match the %d×%d windows of kernel %v, strides %v, pads %v over %s",
			rt, ns[0], ns[1], kernel, strides, pads, xt)
	}
	init := 0.0
	combiner := "hlo.add"
	if isMax {
		init, combiner = lowestValue(xt.Elem), "hlo.maximum"
	}
	iv, err := b.scalar(xt.Elem, init)
	if err != nil {
		return nil, err
	}
	attrs := graphir.DictAttr{}.
		Set("window_dimensions", graphir.I64Array(1, 1, kernel[0], kernel[1])).
		Set("window_strides", graphir.I64Array(1, 1, strides[0], strides[1])).
		Set("window_dilations", graphir.I64Array(1, 1, dil[0], dil[1])).
		Set("padding", graphir.ArrayAttr{
			graphir.I64Array(0, 0), graphir.I64Array(0, 0),
			graphir.I64Array(pads[0], his[0]), graphir.I64Array(pads[1], his[1]),
		})
	wt := graphir.NewTensor(xt.Elem, xt.Shape[0], xt.Shape[1], ns[0], ns[1])
	r, err := b.reduction("hlo.reduce_window", op.Operand(0), iv, combiner, wt, attrs)
	if err != nil {
		return nil, err
	}
	if isMax {
		return []*graphir.Value{r}, nil
	}
	var cnt [2][]int64
	for i, p := range dims {
		if op.BoolAttrOr("count_include_pad", false) {
			cnt[i] = p.counts(-p.lo, p.in+p.hi)
		} else {
			cnt[i] = p.counts(0, p.in)
		}
	}
	div, err := b.countTensor(cnt, rt)
	if err != nil {
		return nil, err
	}
	r, err = b.binary("hlo.divide", r, div)
	if err != nil {
		return nil, err
	}
	return []*graphir.Value{r}, nil
}

// countTensor materializes the outer product of per-dimension window
// counts at the result type: a splat when uniform, else an OH×OW constant
// broadcast along dims [2, 3].
func (b *builder) countTensor(cnt [2][]int64, rt *graphir.TensorType) (*graphir.Value, error) {
	oh, ow := len(cnt[0]), len(cnt[1])
	vals := make([]float64, 0, oh*ow)
	uniform := true
	for _, a := range cnt[0] {
		for _, c := range cnt[1] {
			v := float64(a * c)
			uniform = uniform && (len(vals) == 0 || v == vals[0])
			vals = append(vals, v)
		}
	}
	if uniform {
		return b.splat(rt, vals[0])
	}
	ct, err := b.constant(denseOf(graphir.NewTensor(rt.Elem, int64(oh), int64(ow)), vals))
	if err != nil {
		return nil, err
	}
	return b.broadcastInDim(ct, rt.Shape, []int64{2, 3})
}

func legalizeGlobalAvgPool(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	if op.NumOperands() != 1 {
		return nil, op.Errorf("expects 1 operand, got %d", op.NumOperands())
	}
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	xt, err := b.tensorOf(op.Operand(0), "input")
	if err != nil {
		return nil, err
	}
	if xt.Rank() < 3 || rt.Rank() != xt.Rank() || rt.Elem != xt.Elem {
		return nil, op.Errorf("expects an N×C×spatial... input and an N×C×1×...×1 result, got %s -> %s", xt, rt)
	}
	count := int64(1)
	for i, d := range xt.Shape {
		want := int64(1)
		if i < 2 {
			want = d
		} else {
			count *= d
		}
		if rt.Shape[i] != want {
			return nil, op.Errorf("expects an N×C×1×...×1 result for %s, got %s", xt, rt)
		}
	}
	sum, err := b.reduce(op.Operand(0), 0, "hlo.add", iota64(2, xt.Rank()))
	if err != nil {
		return nil, err
	}
	r, err := b.reshape(sum, rt.Shape)
	if err != nil {
		return nil, err
	}
	n, err := b.splat(rt, float64(count))
	if err != nil {
		return nil, err
	}
	if r, err = b.binary("hlo.divide", r, n); err != nil {
		return nil, err
	}
	return []*graphir.Value{r}, nil
}
