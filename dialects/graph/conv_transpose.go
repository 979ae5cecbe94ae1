package graph

import (
	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// ConvTransposeOp is graph.conv_transpose: ONNX ConvTranspose (opset 11
// semantics) with any number n ≥ 1 of spatial dimensions.
//
//	x: [N, C, D1, …, Dn], w: [C, M/group, k1, …, kn], optional b: [M]
//	→ [N, M, O1, …, On], float element type, one for all operands.
//
// Attributes (arrays have one entry per spatial dimension unless said;
// defaults in parentheses): strides (1s), dilations (1s), output_padding
// (0s), pads = [b1, …, bn, e1, …, en] (0s), output_shape (absent; n
// entries), group (1), auto_pad (NOTSET; SAME_UPPER, SAME_LOWER, VALID),
// kernel_shape (absent; when given it must equal w's spatial dimensions).
//
// Per spatial dimension i, with the dilated kernel dk = (k−1)·d + 1 and
// the natural size L = s·(D−1) + output_padding + dk (the ONNX spec):
//   - output_shape given: O = output_shape[i], the total padding
//     t = L − O is split by ConvTransposeSplit (auto_pad SAME_UPPER puts
//     the odd unit at the end, NOTSET and SAME_LOWER at the beginning);
//   - else auto_pad SAME_UPPER/SAME_LOWER: O = D·s, split likewise;
//   - else VALID: no padding, O = L;
//   - else O = L − b − e with the explicit pads (≥ 0).
//
// The resolved pads may be negative (an output_shape above L): the
// positions they add receive no product. Every O must be ≥ 1. Then
//
//	y[n, g·M/G + m, o…] = b[g·M/G + m] + Σ x[n, g·C/G + c, j…]·w[g·C/G + c, m, κ…]
//
// over c < C/G and the input and kernel positions with
// j_i·s_i + κ_i·d_i = o_i + b_i (a scatter of every input pixel times the
// kernel into the output).
const ConvTransposeOp = "graph.conv_transpose"

func init() {
	register(&graphir.OpDef{
		Name:     ConvTransposeOp,
		Summary:  "N-d transposed convolution, NC… input, [C, M/group, k…] weight, optional bias [M] (ONNX ConvTranspose)",
		Operands: graphir.Arity{Min: 2, Max: 3},
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Attrs: []graphir.AttrSpec{
			{Name: "strides", Kind: graphir.KindIntArray},
			{Name: "pads", Kind: graphir.KindIntArray},
			{Name: "output_padding", Kind: graphir.KindIntArray},
			{Name: "output_shape", Kind: graphir.KindIntArray},
			{Name: "dilations", Kind: graphir.KindIntArray},
			{Name: "group", Kind: graphir.KindInt, Default: graphir.IntAttr(1)},
			{Name: "auto_pad", Kind: graphir.KindEnum, Enum: []string{"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID"}, Default: graphir.StringAttr("NOTSET")},
			{Name: "kernel_shape", Kind: graphir.KindIntArray},
		},
		Infer:  inferConvTranspose,
		Eval:   evalConvTranspose,
		Pretty: true,
	}, Conversions{Legalize: legalizeConvTranspose})
}

// ConvTransposeGeometry is a graph.conv_transpose resolved: one entry per
// spatial dimension in each slice; PadBegin and PadEnd may be negative.
type ConvTransposeGeometry struct {
	Strides, Dilations, OutputPadding []int64
	PadBegin, PadEnd                  []int64
	Group                             int64
	Kernel                            []int64 // w's spatial dimensions
	Out                               []int64 // the result shape [N, M, O…]
}

// ConvTransposeSplit splits the total padding t of one spatial dimension
// into (begin, end) as the ONNX ConvTranspose spec (opset 11) says:
// SAME_UPPER gives (⌊t/2⌋, t − ⌊t/2⌋), NOTSET and SAME_LOWER
// (t − ⌊t/2⌋, ⌊t/2⌋). The halving rounds down (Python's //, as ONNX's
// reference), which matters for a negative t.
func ConvTransposeSplit(t int64, autoPad string) (begin, end int64) {
	half := t >> 1 // ⌊t/2⌋ for negative t too
	if autoPad == "SAME_UPPER" {
		return half, t - half
	}
	return t - half, half
}

func inferConvTranspose(op *graphir.Op) ([]graphir.Type, error) {
	g, err := ConvTransposeParams(op)
	if err != nil {
		return nil, err
	}
	x, _ := op.TensorOperand(0)
	return one(graphir.NewTensor(x.Elem, g.Out...)), nil
}

// ConvTransposeParams checks the operands and attributes of
// graph.conv_transpose op and resolves its pads and result shape (see
// ConvTransposeOp); shape inference, the evaluator and the legalization
// all use it. Errors: a located diagnostic naming what is wrong.
func ConvTransposeParams(op *graphir.Op) (*ConvTransposeGeometry, error) {
	x, w, err := convTransposeOperands(op)
	if err != nil {
		return nil, err
	}
	ns := x.Rank() - 2
	g := &ConvTransposeGeometry{Kernel: w.Shape[2:]}
	if g.Group, err = op.Int("group"); err != nil {
		return nil, err
	}
	if err := checkConvTransposeChannels(op, x, w, g.Group); err != nil {
		return nil, err
	}
	if err := g.readAttrs(op, ns); err != nil {
		return nil, err
	}
	out, err := g.resolvePads(op, x.Shape[2:])
	if err != nil {
		return nil, err
	}
	g.Out = append([]int64{x.Shape[0], w.Shape[1] * g.Group}, out...)
	return g, nil
}

// convTransposeOperands checks the operand types: x [N, C, D…] with at
// least one spatial dimension, w of x's rank, every spatial dimension of
// both ≥ 1, a 1-D bias, the same float element type everywhere.
func convTransposeOperands(op *graphir.Op) (x, w *graphir.TensorType, err error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, nil, err
	}
	if len(ts) < 2 {
		return nil, nil, op.Errorf("expects 2 or 3 operands, got %d", len(ts))
	}
	if err := sameElem(op, ts); err != nil {
		return nil, nil, err
	}
	x, w = ts[0], ts[1]
	if err := requireFloat(op, x); err != nil {
		return nil, nil, err
	}
	if x.Rank() < 3 {
		return nil, nil, op.Errorf("input must have rank at least 3 (N×C×D1…), got %s", x)
	}
	if w.Rank() != x.Rank() {
		return nil, nil, op.Errorf("weight must have the input's rank %d (C×M/group×k1…), got %s", x.Rank(), w)
	}
	for i := 2; i < x.Rank(); i++ {
		if x.Shape[i] < 1 || w.Shape[i] < 1 {
			return nil, nil, op.Errorf("spatial dimensions must be at least 1, got input %s and weight %s", x, w)
		}
	}
	if len(ts) == 3 {
		if b := ts[2]; b.Rank() != 1 {
			return nil, nil, op.Errorf("bias must be 1-D [M] (output channels), got %s", b)
		}
	}
	return x, w, nil
}

// checkConvTransposeChannels: group ≥ 1 divides C, w has C rows and the
// bias, if any, has M = w[1]·group entries.
func checkConvTransposeChannels(op *graphir.Op, x, w *graphir.TensorType, group int64) error {
	c := x.Shape[1]
	switch {
	case group < 1:
		return op.Errorf("group %d must be at least 1", group)
	case c%group != 0:
		return op.Errorf("group %d does not divide input channels %d", group, c)
	case w.Shape[0] != c:
		return op.Errorf("weight dimension 0 (%d) must equal the input channels %d", w.Shape[0], c)
	}
	if op.NumOperands() == 3 {
		b, _ := op.TensorOperand(2)
		if m := w.Shape[1] * group; b.Shape[0] != m {
			return op.Errorf("bias must have shape [%d] (output channels), got %s", m, b)
		}
	}
	return nil
}

// readAttrs reads and range-checks the spatial attributes: strides and
// dilations ≥ 1, output_padding and explicit pads ≥ 0, kernel_shape
// equal to w's spatial dimensions.
func (g *ConvTransposeGeometry) readAttrs(op *graphir.Op, ns int) error {
	var err error
	if g.Strides, err = op.IntsLen("strides", ns, "spatial dimension", 1); err != nil {
		return err
	}
	if g.Dilations, err = op.IntsLen("dilations", ns, "spatial dimension", 1); err != nil {
		return err
	}
	if g.OutputPadding, err = op.IntsLen("output_padding", ns, "spatial dimension", 0); err != nil {
		return err
	}
	for i := 0; i < ns; i++ {
		if g.Strides[i] < 1 || g.Dilations[i] < 1 || g.OutputPadding[i] < 0 {
			return op.Errorf("strides %s and dilations %s must be at least 1, output_padding %s non-negative",
				shapeString(g.Strides), shapeString(g.Dilations), shapeString(g.OutputPadding))
		}
	}
	ks, err := op.Ints("kernel_shape")
	if err != nil {
		return err
	}
	if ks != nil && !shapeEq(ks, g.Kernel) {
		return op.Errorf("kernel_shape %s does not match the weight's spatial dimensions %s", shapeString(ks), shapeString(g.Kernel))
	}
	return nil
}

// resolvePads sets PadBegin and PadEnd from output_shape, auto_pad or
// pads (in that order of precedence, see ConvTransposeOp) and returns
// the output spatial dimensions.
func (g *ConvTransposeGeometry) resolvePads(op *graphir.Op, in []int64) ([]int64, error) {
	ns := len(in)
	autoPad, err := op.Str("auto_pad")
	if err != nil {
		return nil, err
	}
	outShape, err := op.Ints("output_shape")
	if err != nil {
		return nil, err
	}
	if outShape != nil && len(outShape) != ns {
		return nil, op.Errorf("attribute 'output_shape' must have %d elements (one per spatial dimension), got %d", ns, len(outShape))
	}
	pads, err := op.IntsLen("pads", 2*ns, "spatial dimension begin and end", 0)
	if err != nil {
		return nil, err
	}
	g.PadBegin, g.PadEnd = make([]int64, ns), make([]int64, ns)
	out := make([]int64, ns)
	for i := 0; i < ns; i++ {
		natural := g.Strides[i]*(in[i]-1) + g.OutputPadding[i] + (g.Kernel[i]-1)*g.Dilations[i] + 1
		switch {
		case outShape != nil:
			out[i] = outShape[i]
			g.PadBegin[i], g.PadEnd[i] = ConvTransposeSplit(natural-out[i], autoPad)
		case autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER":
			out[i] = in[i] * g.Strides[i]
			g.PadBegin[i], g.PadEnd[i] = ConvTransposeSplit(natural-out[i], autoPad)
		case autoPad == "VALID":
			out[i] = natural
		default:
			if pads[i] < 0 || pads[ns+i] < 0 {
				return nil, op.Errorf("pads %s must be non-negative", shapeString(pads))
			}
			g.PadBegin[i], g.PadEnd[i] = pads[i], pads[ns+i]
			out[i] = natural - pads[i] - pads[ns+i]
		}
		if out[i] < 1 {
			return nil, op.Errorf("output spatial dimension %d would be %d (natural size %d, pads %d and %d); it must be at least 1",
				i, out[i], natural, g.PadBegin[i], g.PadEnd[i])
		}
	}
	return out, nil
}

// scatterTargets maps every (input position j, kernel position κ) pair,
// both row-major over the spatial dimensions, to the row-major output
// position o with o_i = j_i·s_i + κ_i·d_i − b_i, or −1 where that falls
// outside the output.
func (g *ConvTransposeGeometry) scatterTargets(in []int64) []int64 {
	out := g.Out[2:]
	nIn, nK := product(in), product(g.Kernel)
	targets := make([]int64, nIn*nK)
	j, k := make([]int64, len(in)), make([]int64, len(in))
	for p := int64(0); p < nIn; p++ {
		unravelInto(p, in, j)
		for q := int64(0); q < nK; q++ {
			unravelInto(q, g.Kernel, k)
			t := int64(0)
			for i := range in {
				o := j[i]*g.Strides[i] + k[i]*g.Dilations[i] - g.PadBegin[i]
				if o < 0 || o >= out[i] {
					t = -1
					break
				}
				t = t*out[i] + o
			}
			targets[p*nK+q] = t
		}
	}
	return targets
}

// evalConvTranspose is the direct scatter-accumulate of ConvTransposeOp
// (float64 accumulation, rounded once), independent of the legalization.
func evalConvTranspose(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	g, err := ConvTransposeParams(op)
	if err != nil {
		return nil, err
	}
	x, w := args[0], args[1]
	xs, ws := x.Shape(), w.Shape()
	targets := g.scatterTargets(xs[2:])
	n, c, mg := xs[0], xs[1], ws[1]
	nIn, nK, nOut := product(xs[2:]), product(g.Kernel), product(g.Out[2:])
	cg, m := c/g.Group, g.Out[1]
	for b := int64(0); b < n; b++ {
		for ci := int64(0); ci < c; ci++ {
			xv := x.Data[(b*c+ci)*nIn : (b*c+ci+1)*nIn]
			for mo := int64(0); mo < mg; mo++ {
				oc := ci/cg*mg + mo
				y := out.Data[(b*m+oc)*nOut : (b*m+oc+1)*nOut]
				wv := w.Data[(ci*mg+mo)*nK : (ci*mg+mo+1)*nK]
				scatterAdd(y, xv, wv, targets)
			}
		}
	}
	if len(args) == 3 {
		for p := range out.Data {
			out.Data[p] += args[2].Data[int64(p)/nOut%m]
		}
	}
	return []*graphir.Tensor{out.Round()}, nil
}

// scatterAdd adds x[j]·w[κ] into y at targets[j·len(w) + κ] (skipping −1).
func scatterAdd(y, x, w []float64, targets []int64) {
	nK := len(w)
	for j, xv := range x {
		for q, wv := range w {
			if t := targets[j*nK+q]; t >= 0 {
				y[t] += xv * wv
			}
		}
	}
}

// legalizeConvTranspose: graph.conv_transpose(x, w[, b]) →
// hlo.convolution(x, w') {lhs_dilation = strides, rhs_dilation =
// dilations, padding = [[dk−1−b, dk−1−e+output_padding], …],
// feature_group_count = group} with dk = (k−1)·d + 1 and the resolved
// pads b, e: the gradient of a convolution is a convolution of the
// zero-dilated input with the spatially flipped kernel whose input and
// output features swap within each group. w' is [M, C/group, k…]:
// folded at compile time from a constant w (convTransposeKernelData),
// else built from w (legalizeConvTransposeKernel). With a bias,
// hlo.add(conv, hlo.broadcast_in_dim(b) {broadcast_dimensions = [1]}).
func legalizeConvTranspose(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	g, err := ConvTransposeParams(op)
	if err != nil {
		return nil, err
	}
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	kernel, kdims, err := legalizeConvTransposeKernel(b, op.Operand(1), g.Group)
	if err != nil {
		return nil, err
	}
	ns := len(g.Kernel)
	cfg := hlo.ConvConfig{LhsDilation: g.Strides, RhsDilation: g.Dilations, FeatureGroupCount: g.Group, Kernel: kdims,
		PadLow: make([]int64, ns), PadHigh: make([]int64, ns)}
	for i := 0; i < ns; i++ {
		dk := (g.Kernel[i]-1)*g.Dilations[i] + 1
		cfg.PadLow[i] = dk - 1 - g.PadBegin[i]
		cfg.PadHigh[i] = dk - 1 - g.PadEnd[i] + g.OutputPadding[i]
	}
	conv, err := b.insert(hlo.Convolution(op.Operand(0), kernel, cfg, op.Loc))
	if err != nil {
		return nil, err
	}
	bias := optionalOperand(op, 2)
	if bias == nil {
		return []*graphir.Value{conv}, nil
	}
	c := &chain{b: b, t: rt}
	bb := c.do(func() (*graphir.Value, error) { return b.broadcastInDim(bias, rt.Shape, []int64{1}) })
	return c.done(c.op(hlo.AddOp, conv, bb))
}

// legalizeConvTransposeKernel returns the convolution kernel for weight
// w [C, M/G, k…] of a transposed convolution with G groups, and its
// kernel dimension numbers (nil: the default [M, C/G, k…] layout):
//   - w constant: an hlo.constant of convTransposeKernelData;
//   - else each spatial dimension of w reversed (slices, concatenate);
//     G = 1 keeps w's layout and names its dimensions ([C, M, k…]: output
//     feature 1, input feature 0); G > 1 regroups by reshape to
//     [G, C/G, M/G, k…], transpose [0, 2, 1, 3, …] and reshape to
//     [M, C/G, k…].
func legalizeConvTransposeKernel(b *builder, w *graphir.Value, group int64) (*graphir.Value, *hlo.KernelDims, error) {
	if d := constantData(w); d != nil {
		t, err := graphir.TensorFromDense(d)
		if err != nil {
			return nil, nil, b.src.Errorf("%v", err)
		}
		v, err := b.constant(convTransposeKernelData(t, group).ToDense())
		return v, nil, err
	}
	wt := graphir.AsTensor(w.Type)
	r := wt.Rank()
	v := w
	for d := 2; d < r; d++ {
		k := wt.Shape[d]
		if k < 2 {
			continue
		}
		rev := make([]int64, k)
		for i := range rev {
			rev[i] = k - 1 - int64(i)
		}
		var err error
		if v, err = b.take(v, d, rev); err != nil {
			return nil, nil, err
		}
	}
	if group == 1 {
		return v, &hlo.KernelDims{OutputFeature: 1, InputFeature: 0, Spatial: iota64(2, r)}, nil
	}
	c, mg := wt.Shape[0], wt.Shape[1]
	view := append([]int64{group, c / group, mg}, wt.Shape[2:]...)
	perm := append([]int64{0, 2, 1}, iota64(3, r+1)...)
	v, err := b.reshape(v, view)
	if err != nil {
		return nil, nil, err
	}
	if v, err = b.insert(hlo.Transpose(v, perm, b.src.Loc)); err != nil {
		return nil, nil, err
	}
	v, err = b.reshape(v, append([]int64{group * mg, c / group}, wt.Shape[2:]...))
	return v, nil, err
}

// convTransposeKernelData is the convolution kernel [M, C/G, k…] of the
// transposed-convolution weight w [C, M/G, k…] with G groups:
// out[g·M/G + m, c, κ…] = w[g·C/G + c, m, k−1−κ…].
func convTransposeKernelData(w *graphir.Tensor, group int64) *graphir.Tensor {
	ws := w.Shape()
	c, mg, ks := ws[0], ws[1], ws[2:]
	cg, nK := c/group, product(ks)
	out := graphir.NewZeroTensor(graphir.NewTensor(w.Type.Elem, append([]int64{group * mg, cg}, ks...)...))
	flip := make([]int64, nK) // flip[κ] = linear index of k−1−κ
	idx := make([]int64, len(ks))
	for q := int64(0); q < nK; q++ {
		unravelInto(q, ks, idx)
		f := int64(0)
		for i, k := range ks {
			f = f*k + k - 1 - idx[i]
		}
		flip[q] = f
	}
	for ci := int64(0); ci < c; ci++ {
		grp, cl := ci/cg, ci%cg
		for m := int64(0); m < mg; m++ {
			src := w.Data[(ci*mg+m)*nK : (ci*mg+m+1)*nK]
			dst := out.Data[((grp*mg+m)*cg+cl)*nK : ((grp*mg+m)*cg+cl+1)*nK]
			for q := range dst {
				dst[q] = src[flip[q]]
			}
		}
	}
	return out
}

// constantData returns the dense value of v when v is the result of a
// graph.constant or hlo.constant (what legalization turned a
// graph.constant into) with non-elided data, else nil.
func constantData(v *graphir.Value) *graphir.DenseElementsAttr {
	if d := ConstantOf(v); d != nil {
		return d
	}
	if v == nil || v.Def == nil || v.Def.Name != hlo.ConstantOp {
		return nil
	}
	d, ok := v.Def.Attr("value").(*graphir.DenseElementsAttr)
	if !ok || d == nil || d.Elided {
		return nil
	}
	return d
}
