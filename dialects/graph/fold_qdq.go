package graph

import (
	"math"

	"github.com/tessera-ml/tessera/graphir"
)

// FoldQDQPassName is the pass that turns QDQ contractions into integer
// kernels.
const FoldQDQPassName = "fold-qdq"

func init() {
	graphir.RegisterFuncPass(FoldQDQPassName, "fold quantize_linear(relu/clip(conv2d|matmul|gemm(dequantize_linear(x), dequantize_linear(w)[, bias]))) into an i32 contraction and graph.requantize (integer-only inference)", func(f *graphir.Func) error { FoldQDQ(f); return nil })
}

// FoldQDQ rewrites each quantized contraction of f in QDQ form — ONNX
// Runtime's and TensorRT's QDQ fusion, TVM's QNN canonicalization —
//
//	y = quantize_linear(act(contraction(dequantize_linear(xq, sx, zx),
//	                                    dequantize_linear(wq, sw, zw)[, b])), sy, zy)
//
// into integer arithmetic:
//
//	acc = contraction(i32(xq) − zx, i32(wq − zw)[, round(b / (sx·sw))])    (i32)
//	y   = requantize(acc, multiplier, shift, zy) {min, max}
//
// with multiplier · 2^−(31+shift) ≈ sx·sw / sy per output channel
// (QuantizedMultiplier), and requantize's bounds are the quantize's min
// and max (a reduce_range quantize's [0, 127] stays [0, 127]). act is
// any chain of graph.relu and graph.clip with constant bounds, which
// narrow those bounds (Q is monotone, so Q(clip(v, lo, hi)) = clamp(Q(v),
// Q(lo), Q(hi)) exactly), and of graph.flatten, graph.reshape and
// graph.max_pool2d, which commute with Q and are applied to the 8-bit
// result. The contraction is graph.conv2d (any strides, padding,
// dilation, groups: padding x with 0 after subtracting zx is padding it
// with zx, as the float path pads the dequantized x with 0),
// graph.matmul with a 2-D weight, or graph.gemm (transA false, alpha and
// beta 1) as a matmul.
//
// It applies when x's dequantize is per tensor; the weight is a constant
// dequantized per tensor or per output channel; the bias, if any, is a
// float constant or a dequantized constant (QLinearConv's i32 bias); the
// products per output and the quantized bias stay below 2^30 in
// magnitude (the i32 accumulator cannot overflow); the quantize is per
// tensor with constant parameters; every scale gives a multiplier in
// range; and the contraction's and each activation's result has no other
// user (a float consumer keeps the float path). The integer result can
// differ from the float QDQ result by a quantization step where the
// float path's rounded products and sums, or the integer path's rounded
// bias and 31-bit multiplier, cross a rounding boundary (TestFoldQDQ:
// never by more than one step, on at most 3% of the elements).
//
// A QDQ contraction whose result is not quantized again (a residual add,
// a float output) keeps float where its consumers need float: when its
// operands can stay 8-bit (eightBit: ui8 x, symmetric i8 weight) it
// becomes the 8-bit integer contraction dequantized in place,
//
//	c = f32(contraction(xq, wq) − zx·Σ wq) · (sx·sw) [+ b]
//
// (the cast, scale and bias join the contraction's kernel as its
// epilogue), which is the float path's value computed exactly before
// one rounding; otherwise it stays float.
//
// A quantized residual add, quantize_linear(act(add(dequantize_linear(a),
// dequantize_linear(b)))) with 8-bit a and b quantized per tensor (what
// tessera quantize writes for a residual connection whose result is
// quantized again), becomes an integer add and a requantize
// (rewriteAdd).
//
// Dequantizes and constants left unused are removed. It returns the
// number of contractions and adds folded.
func FoldQDQ(f *graphir.Func) int {
	n := rewriteEach(f, QuantizeLinearOp, func(q *graphir.Op) bool {
		m := matchQDQ(q)
		switch {
		case m == nil:
			return false
		case m.contraction.Name == AddOp:
			return m.rewriteAdd()
		}
		return m.rewrite()
	})
	for _, name := range []string{Conv2DOp, MatMulOp, GemmOp} {
		n += rewriteEach(f, name, func(c *graphir.Op) bool {
			m := &qdqMatch{}
			return m.contractionOf(c) && m.eightBit() && m.rewriteFloat()
		})
	}
	return n
}

// qdqMatch is one foldable quantized contraction.
type qdqMatch struct {
	q, contraction *graphir.Op
	acts           []*graphir.Op // between the contraction and q, q's side first
	zy             float64       // output zero point
	yType          graphir.DType // i8 or ui8
	qlo, qhi       float64       // the quantize's bounds
	lo, hi         float64       // requantize bounds: [qlo, qhi] narrowed by relu/clip
	sy             float64       // output scale
	x              *dqOperand
	w              *dqOperand
	addends        [2]*dqOperand // a quantized add's operands (addOf)
	wAxis          int           // the weight's output-channel axis
	outAxis        int           // the result's channel axis
	bias           []float64
}

// dqOperand is a contraction operand read through dequantize_linear with
// constant parameters; values is the quantized constant (weights only).
type dqOperand struct {
	dq     *graphir.Op
	q      *graphir.Value
	scales []float64 // one, or one per channel
	zps    []float64
	axis   int // the dequantize's axis (−1 per tensor)
	values *graphir.DenseElementsAttr
}

// dqOf reads v as dequantize_linear(q, constant scale, constant zp) of
// an 8-bit q, nil when it is not.
func dqOf(v *graphir.Value) *dqOperand {
	if v == nil || v.Def == nil || v.Def.Name != DequantizeLinearOp {
		return nil
	}
	d := dqOfAny(v.Def)
	if d == nil {
		return nil
	}
	if e := graphir.AsTensor(d.q.Type).Elem; e != graphir.I8 && e != graphir.UI8 {
		return nil
	}
	return d
}

// dqOfAny reads dequantize op dq with constant scale and zero point (q
// of any integer type), nil when they are not constant.
func dqOfAny(dq *graphir.Op) *dqOperand {
	p, err := quantOperands(dq, false)
	s, z := ConstantOf(dq.Operand(1)), ConstantOf(dq.Operand(2))
	if err != nil || s == nil || z == nil {
		return nil
	}
	return &dqOperand{dq: dq, q: dq.Operand(0), scales: s.Values(), zps: z.Values(), axis: p.axis, values: ConstantOf(dq.Operand(0))}
}

// matchQDQ matches the pattern ending at quantize op q (nil: none).
func matchQDQ(q *graphir.Op) *qdqMatch {
	p, err := quantOperands(q, true)
	s, z := ConstantOf(q.Operand(1)), ConstantOf(q.Operand(2))
	if err != nil || p.axis >= 0 || s == nil || z == nil || p.scale.Elem != graphir.F32 {
		return nil
	}
	m := &qdqMatch{q: q, sy: s.Values()[0], zy: z.Values()[0], yType: p.zp.Elem, qlo: float64(p.lo), qhi: float64(p.hi)}
	m.lo, m.hi = m.qlo, m.qhi
	v := q.Operand(0)
	for v.Def != nil && len(v.Uses()) == 1 && absorbedAct(v.Def.Name) {
		if !m.bound(v.Def) {
			return nil
		}
		m.acts = append(m.acts, v.Def)
		v = v.Def.Operand(0)
	}
	c := v.Def
	if c == nil || len(v.Uses()) != 1 {
		return nil
	}
	matched := m.contractionOf
	if c.Name == AddOp {
		matched = m.addOf
	}
	if !matched(c) {
		return nil
	}
	return m
}

// absorbedAct reports whether the fold absorbs an op between a contraction
// and its quantize: relu and clip become requantize's bounds; the ops of
// postOps commute with quantization and are applied to its result.
func absorbedAct(name string) bool { return name == ReluOp || name == ClipOp || postOps[name] }

// postOps commute with a monotone quantization: layout changes, and max
// pooling (the largest quantized value of a window is the quantization
// of its largest value; padding is skipped, not read).
var postOps = map[string]bool{FlattenOp: true, ReshapeOp: true, MaxPool2DOp: true}

// quantize is the output quantization of the float v, as q computes it
// (clamped to q's min and max).
func (m *qdqMatch) quantize(v float64) float64 {
	return quantizeValue(graphir.RoundTo(graphir.F32, v/m.sy), m.zy, m.qlo, m.qhi)
}

// bound narrows the requantize bounds by a relu or clip (a layout op
// leaves them).
func (m *qdqMatch) bound(act *graphir.Op) bool {
	if postOps[act.Name] {
		return true
	}
	lo, hi := 0.0, math.Inf(1)
	if act.Name == ClipOp {
		var err error
		if lo, err = act.Float("min"); err != nil {
			return false
		}
		if hi, err = act.Float("max"); err != nil {
			return false
		}
		if math.IsNaN(lo) {
			lo = math.Inf(-1)
		}
		if math.IsNaN(hi) {
			hi = math.Inf(1)
		}
	}
	if !math.IsInf(lo, -1) {
		m.lo = math.Max(m.lo, m.quantize(lo))
	}
	if !math.IsInf(hi, 1) {
		m.hi = math.Min(m.hi, m.quantize(hi))
	}
	return m.lo <= m.hi
}

// contractionOf checks c and its operands and fills the match.
func (m *qdqMatch) contractionOf(c *graphir.Op) bool {
	m.contraction = c
	if c.NumOperands() < 2 {
		return false
	}
	m.x, m.w = dqOf(c.Operand(0)), dqOf(c.Operand(1))
	if m.x == nil || m.w == nil || m.w.values == nil || m.x.axis >= 0 || len(m.x.scales) != 1 {
		return false
	}
	wt := graphir.AsTensor(c.Operand(1).Type)
	var bias *graphir.Value
	switch c.Name {
	case Conv2DOp:
		m.wAxis, m.outAxis = 0, 1
		bias = optionalOperand(c, 2)
	case MatMulOp:
		if wt.Rank() != 2 {
			return false
		}
		m.wAxis, m.outAxis = 1, graphir.AsTensor(c.Results[0].Type).Rank()-1
	case GemmOp:
		if !m.plainGemm(c) {
			return false
		}
		m.wAxis, m.outAxis = 1, 1
		if tb, _ := c.Bool("transB"); tb {
			m.wAxis = 0
		}
		bias = optionalOperand(c, 2)
	default:
		return false
	}
	if m.w.axis >= 0 && m.w.axis != m.wAxis {
		return false
	}
	return m.biasOf(bias, wt.Shape[m.wAxis])
}

// plainGemm: transA false, alpha and beta 1.
func (m *qdqMatch) plainGemm(c *graphir.Op) bool {
	ta, _ := c.Bool("transA")
	alpha, err1 := c.Float("alpha")
	beta, err2 := c.Float("beta")
	return !ta && err1 == nil && err2 == nil && alpha == 1 && beta == 1
}

// biasOf reads a constant bias of n channels (shape [n] or [1, n]): a
// float constant, or a constant dequantized (QLinearConv's i32 bias);
// nil b is no bias.
func (m *qdqMatch) biasOf(b *graphir.Value, n int64) bool {
	if b == nil {
		return true
	}
	t := graphir.AsTensor(b.Type)
	if t == nil || !t.Elem.IsFloat() || t.Rank() == 0 || t.NumElements() != n || t.Shape[t.Rank()-1] != n {
		return false
	}
	if d := ConstantOf(b); d != nil {
		m.bias = d.Values()
		return true
	}
	if b.Def == nil || b.Def.Name != DequantizeLinearOp {
		return false
	}
	dq := dqOfAny(b.Def)
	if dq == nil || dq.values == nil {
		return false
	}
	chanOf := channelOf(dq.values.Type.Shape, dq.axis)
	for i, q := range dq.values.Values() {
		c := chanOf(i)
		m.bias = append(m.bias, (q-dq.zps[c])*dq.scales[c])
	}
	return true
}

// channelScale is sx · sw[c], the accumulator's scale in channel c.
func (m *qdqMatch) channelScale(c int) float64 {
	if len(m.w.scales) == 1 {
		c = 0
	}
	return m.x.scales[0] * m.w.scales[c]
}

// rewrite builds the integer contraction and requantize before q and
// replaces q's result; false (nothing changed) when a scale or the bias
// is out of range.
func (m *qdqMatch) rewrite() bool {
	wt := graphir.AsTensor(m.contraction.Operand(1).Type)
	channels := int(wt.Shape[m.wAxis])
	if !accumulatorFits(wt, int64(channels)) {
		return false
	}
	mults, shifts := make([]float64, channels), make([]float64, channels)
	var bq []float64
	for c := range channels {
		mult, shift, ok := QuantizedMultiplier(m.channelScale(c) / m.sy)
		if !ok {
			return false
		}
		mults[c], shifts[c] = float64(mult), float64(shift)
		if m.bias != nil {
			v := math.RoundToEven(m.bias[c] / m.channelScale(c))
			if !(math.Abs(v) < 1<<30) {
				return false
			}
			bq = append(bq, v)
		}
	}
	b := &rewriter{at: m.q, loc: m.contraction.Loc}
	acc := m.integerContraction(b, bq)
	mv, sv := b.constant(graphir.I32, []int64{int64(channels)}, mults), b.constant(graphir.I32, []int64{int64(channels)}, shifts)
	zv := b.constant(m.yType, nil, []float64{m.zy})
	a := graphir.DictAttr{}.Set("axis", graphir.IntAttr(int64(m.outAxis))).Set("min", graphir.IntAttr(int64(m.lo))).Set("max", graphir.IntAttr(int64(m.hi)))
	return m.replaceQ(b, b.build(RequantizeOp, a, acc, mv, sv, zv))
}

// replaceQ applies the absorbed layout and pooling ops to the 8-bit y
// built by b, replaces q's result by it and erases q, the absorbed ops,
// the contraction and the inputs left unused; false (b's ops undone) when
// b failed.
func (m *qdqMatch) replaceQ(b *rewriter, y *graphir.Value) bool {
	for i := len(m.acts) - 1; i >= 0; i-- {
		if act := m.acts[i]; postOps[act.Name] {
			y = b.build(act.Name, act.Attrs, y)
		}
	}
	if b.err != nil {
		b.undo()
		return false
	}
	m.q.Results[0].ReplaceAllUsesWith(y)
	var inputs []*graphir.Value
	for _, op := range append(append([]*graphir.Op{m.q}, m.acts...), m.contraction) {
		inputs = append(inputs, op.Operands()...)
		op.Erase()
	}
	eraseUnusedInputs(inputs)
	return true
}

// accumulatorFits reports whether the i32 accumulator of a contraction
// with weight type wt and channels output channels cannot overflow: its
// products per output, each at most 255·255 in magnitude (|x − zx|,
// |w − zw| ≤ 255), sum below 2^30.
func accumulatorFits(wt *graphir.TensorType, channels int64) bool {
	return float64(wt.NumElements()/channels)*255*255 < 1<<30
}

// rewriteFloat replaces the matched contraction, whose consumers read
// float, by its 8-bit integer contraction dequantized per output channel
// (see FoldQDQ); false (nothing changed) for a result other than f32 or
// an accumulator that could overflow.
func (m *qdqMatch) rewriteFloat() bool {
	c := m.contraction
	rt := graphir.AsTensor(c.Results[0].Type)
	wt := graphir.AsTensor(c.Operand(1).Type)
	channels := wt.Shape[m.wAxis]
	if rt == nil || rt.Elem != graphir.F32 || !accumulatorFits(wt, channels) {
		return false
	}
	shape := make([]int64, rt.Rank()-m.outAxis) // [C] or [C, 1, 1]: broadcast along the channel axis
	shape[0] = channels
	for i := 1; i < len(shape); i++ {
		shape[i] = 1
	}
	scales := make([]float64, channels)
	for i := range scales {
		scales[i] = m.channelScale(i)
	}
	b := &rewriter{at: c, loc: c.Loc}
	y := b.cast(m.integerContraction(b, nil), graphir.F32)
	y = b.build(MulOp, nil, y, b.constant(graphir.F32, shape, scales))
	if m.bias != nil {
		y = b.build(AddOp, nil, y, b.constant(graphir.F32, shape, m.bias))
	}
	if b.err != nil {
		b.undo()
		return false
	}
	c.Results[0].ReplaceAllUsesWith(y)
	inputs := append([]*graphir.Value(nil), c.Operands()...)
	c.Erase()
	eraseUnusedInputs(inputs)
	return true
}

// integerContraction builds the i32 contraction of the match's operands
// with the quantized bias bq (nil: none).
func (m *qdqMatch) integerContraction(b *rewriter, bq []float64) *graphir.Value {
	if m.eightBit() {
		switch {
		case m.contraction.Name != Conv2DOp:
			return m.eightBitMatMul(b, bq)
		default:
			return m.eightBitConv(b, bq)
		}
	}
	x := b.cast(m.x.q, graphir.I32)
	if zx := m.x.zps[0]; zx != 0 {
		x = b.build(SubOp, nil, x, b.constant(graphir.I32, nil, []float64{zx}))
	}
	w := m.integerWeight(b)
	c := m.contraction
	n := int64(len(bq))
	switch c.Name {
	case Conv2DOp:
		ops := []*graphir.Value{x, w}
		if bq != nil {
			ops = append(ops, b.constant(graphir.I32, []int64{n}, bq))
		}
		return b.build(Conv2DOp, c.Attrs, ops...)
	}
	acc := b.build(MatMulOp, nil, x, w)
	if bq != nil {
		acc = b.build(AddOp, nil, acc, b.constant(graphir.I32, []int64{n}, bq))
	}
	return acc
}

// eightBit reports whether the matmul can multiply the 8-bit operands
// themselves: x is ui8 and the weight i8 with every zero point 0
// (symmetric, as tessera quantize and PyTorch's fbgemm quantize weights).
// Then Σ_k (x − zx)·w = Σ_k x·w − zx·Σ_k w, and the second term is a
// constant per output column folded into the bias (gemmlowp's offset
// handling): the contraction reads bytes, and code generation can use
// the processors' u8×s8 dot-product instructions (VNNI's vpdpbusd).
func (m *qdqMatch) eightBit() bool {
	if graphir.AsTensor(m.x.q.Type).Elem != graphir.UI8 || m.w.values.Type.Elem != graphir.I8 {
		return false
	}
	for _, z := range m.w.zps {
		if z != 0 {
			return false
		}
	}
	return true
}

// eightBitMatMul builds matmul(xq, wq) : i32 + (bq − zx·Σ_k wq) for the
// eightBit case.
func (m *qdqMatch) eightBitMatMul(b *rewriter, bq []float64) *graphir.Value {
	w, shape := m.weightKN()
	k, n := shape[0], shape[1]
	corr := make([]float64, n)
	nonzero := false
	for c := range n {
		if bq != nil {
			corr[c] = bq[c]
		}
		var sum float64
		for r := range k {
			sum += w[r*n+c]
		}
		corr[c] -= m.x.zps[0] * sum
		nonzero = nonzero || corr[c] != 0
	}
	acc := b.build(MatMulOp, nil, m.x.q, b.constant(graphir.I8, shape, w))
	if nonzero {
		acc = b.build(AddOp, nil, acc, b.constant(graphir.I32, []int64{n}, corr))
	}
	return acc
}

// padded reports whether convolution c pads its input.
func padded(c *graphir.Op) bool {
	pads, _ := c.Ints("pads")
	for _, p := range pads {
		if p != 0 {
			return true
		}
	}
	return false
}

// eightBitConv builds conv2d(xq, wq, bq − zx·Σ wq[o]) : i32 for the
// eightBit case. Padding must read x's zero point (ONNX ConvInteger pads
// with x_zero_point), and conv2d's padding reads 0: so with a zero point
// other than 0 the padding becomes a graph.pad of xq with zx before an
// unpadded convolution. An ungrouped convolution with at least dotLanes
// output channels whose input channels are not a multiple of dotDepth
// gets zero weight channels up to the next multiple, and x as many
// channels of zx (in the same graph.pad): each channel group then fills
// the 4-deep u8·s8 dot products (VNNI's vpdpbusd) — an RGB stem or
// LeNet-5's 6 channels included — at no change in value, the added
// weights being 0.
func (m *qdqMatch) eightBitConv(b *rewriter, bq []float64) *graphir.Value {
	x, attrs := m.x.q, m.contraction.Attrs
	d := m.w.values
	w, shape := d.Values(), append([]int64(nil), d.Type.Shape...)
	groups, _ := m.contraction.Int("groups")
	extra := int64(0)
	if groups == 1 && shape[1]%dotDepth != 0 && shape[0] >= dotLanes {
		extra = dotDepth - shape[1]%dotDepth
		w, shape = padChannels(w, shape, extra)
	}
	zx := m.x.zps[0]
	if p, _ := m.contraction.Ints("pads"); extra > 0 || zx != 0 && padded(m.contraction) {
		pa := graphir.DictAttr{}.Set("pads", graphir.I64Array(0, 0, p[0], p[1], 0, extra, p[2], p[3])).Set("value", graphir.F32Attr(zx))
		x = b.build(PadOp, pa, x)
		attrs = attrs.Set("pads", graphir.I64Array(0, 0, 0, 0))
	}
	o := shape[0]
	per := int64(len(w)) / o
	bias := make([]float64, o)
	for c := range o {
		if bq != nil {
			bias[c] = bq[c]
		}
		var sum float64
		for _, v := range w[c*per : (c+1)*per] {
			sum += v
		}
		bias[c] -= zx * sum
	}
	wv := b.constant(graphir.I8, shape, w)
	return b.build(Conv2DOp, attrs, x, wv, b.constant(graphir.I32, []int64{o}, bias))
}

// dotDepth is the depth of the processors' u8·s8 dot-product instructions
// (x86 VNNI's vpdpbusd, Arm's udot/sdot): 4 products per 32-bit lane;
// dotLanes the output channels one 512-bit vector of them computes
// (narrower convolutions gain nothing from padding).
// (The tensor IR's tensorir.Int8DotDepth and Int8DotLanes, which the
// graph dialect does not import: DESIGN.md's layout.)
const (
	dotDepth = 4
	dotLanes = 16
)

// padChannels appends extra zero input channels to an O×C×KH×KW weight.
func padChannels(w []float64, shape []int64, extra int64) ([]float64, []int64) {
	o, c, k := shape[0], shape[1], shape[2]*shape[3]
	out := make([]float64, o*(c+extra)*k)
	for i := range o {
		copy(out[i*(c+extra)*k:], w[i*c*k:(i+1)*c*k])
	}
	return out, []int64{o, c + extra, shape[2], shape[3]}
}

// integerWeight is the constant wq − zw in i32, K×N for a gemm with
// transB (transposed here; matmul takes K×N).
func (m *qdqMatch) integerWeight(b *rewriter) *graphir.Value {
	out, shape := m.weightKN()
	return b.constant(graphir.I32, shape, out)
}

// weightKN is wq − zw and its shape, K×N for a gemm with transB
// (transposed here; matmul takes K×N).
func (m *qdqMatch) weightKN() ([]float64, []int64) {
	d := m.w.values
	vals := d.Values()
	shape := d.Type.Shape
	chanOf := channelOf(shape, m.w.axis)
	out := make([]float64, len(vals))
	for i, v := range vals {
		out[i] = v - m.w.zps[chanOf(i)]
	}
	if m.contraction.Name == GemmOp && m.wAxis == 0 {
		rows, cols := shape[0], shape[1]
		t := make([]float64, len(out))
		for r := range rows {
			for c := range cols {
				t[c*rows+r] = out[r*cols+c]
			}
		}
		out, shape = t, []int64{cols, rows}
	}
	return out, shape
}

// eraseUnusedInputs removes the constants and dequantizes among the
// definitions of vs left without users, and then theirs.
func eraseUnusedInputs(vs []*graphir.Value) {
	for len(vs) > 0 {
		op := vs[0].Def
		vs = vs[1:]
		if op == nil || op.Block == nil || !op.IsUnused() || (op.Name != ConstantOp && op.Name != DequantizeLinearOp) {
			continue
		}
		vs = append(vs, op.Operands()...)
		op.Erase()
	}
}

// rewriter inserts built ops before at, keeping the first error.
type rewriter struct {
	at    *graphir.Op
	loc   graphir.Location
	added []*graphir.Op
	err   error
}

func (b *rewriter) insert(op *graphir.Op) *graphir.Value {
	b.at.Block.InsertBefore(b.at, op)
	b.added = append(b.added, op)
	return op.Results[0]
}

// build builds op name (result types inferred) before b.at.
func (b *rewriter) build(name string, a graphir.DictAttr, operands ...*graphir.Value) *graphir.Value {
	if b.err != nil {
		return nil
	}
	op, err := graphir.Build(name, operands, a, b.loc)
	if err != nil {
		b.err = err
		return nil
	}
	return b.insert(op)
}

// cast inserts graph.cast of v to dt.
func (b *rewriter) cast(v *graphir.Value, dt graphir.DType) *graphir.Value {
	if b.err != nil {
		return nil
	}
	return b.insert(graphir.NewOp(CastOp, []*graphir.Value{v}, []graphir.Type{graphir.NewTensor(dt, graphir.AsTensor(v.Type).Shape...)}, nil, b.loc))
}

// constant inserts a graph.constant of dt and shape holding vals.
func (b *rewriter) constant(dt graphir.DType, shape []int64, vals []float64) *graphir.Value {
	if b.err != nil {
		return nil
	}
	return b.insert(newConstant(&graphir.Tensor{Type: graphir.NewTensor(dt, shape...), Data: vals}, b.loc))
}

// undo erases what was inserted, last first.
func (b *rewriter) undo() {
	for i := len(b.added) - 1; i >= 0; i-- {
		b.added[i].Erase()
	}
}
