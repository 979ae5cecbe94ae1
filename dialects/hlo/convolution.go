package hlo

import (
	"slices"

	g "github.com/tessera-ml/tessera/graphir"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// ConvolutionOp is the op's name.
const ConvolutionOp = "hlo.convolution"

// hlo.convolution(lhs, rhs) {window_strides, padding, lhs_dilation,
// rhs_dilation, feature_group_count, input_batch_dimension,
// input_feature_dimension, input_spatial_dimensions,
// kernel_output_feature_dimension, kernel_input_feature_dimension,
// kernel_spatial_dimensions, output_batch_dimension,
// output_feature_dimension, output_spatial_dimensions} (StableHLO
// §convolution), with any number ≥ 1 of spatial dims. The activations'
// layouts are StableHLO's input and output dimension numbers: lhs
// dimension input_batch_dimension (default 0) holds the N images,
// input_feature_dimension (default 1) the C features and
// input_spatial_dimensions (default [2, 3, ...]) S0, S1, …; the result's
// output_* dimensions hold N, the O output features and R0, R1, …. The
// defaults are [b, f, 0, 1, ...] (NCHW); [b, 0, 1, ..., f] is NHWC
// (channels last), what the conv-layout pass produces. The kernel (rhs)
// layout K is given by StableHLO's
// kernel dimension numbers: rhs dimension kernel_output_feature_dimension
// (default 0) has the O output features, kernel_input_feature_dimension
// (default 1) the C/feature_group_count input features and
// kernel_spatial_dimensions (default [2, 3, ...]) the window K0, K1, …;
// the defaults are [o, i, 0, 1, ...] (OIHW), and [0, 1, ..., i, o] (HWIO,
// what ConvKernelLayout produces) puts the output features innermost.
//
// Attributes (one entry per spatial dim): window_strides (default 1s, > 0),
// padding [[lo, hi], ...] (default 0s, may be negative), lhs_dilation
// (default 1s, > 0; the input is dilated with zeros, a transposed
// convolution), rhs_dilation (default 1s, > 0; atrous convolution),
// feature_group_count (default 1, divides C and O).
//
// Per spatial dim: dilated input = (S−1)·lhs_dilation+1 (0 when S = 0),
// padded = lo + dilated input + hi (must be ≥ 0), dilated window =
// (K−1)·rhs_dilation+1, R = 0 if the dilated window is empty or larger than
// padded, else ⌊(padded − dilated window)/stride⌋ + 1. Products accumulate
// in float64 and round once to the result element type.

// ConvConfig holds hlo.convolution's attributes; nil slices mean defaults.
type ConvConfig struct {
	WindowStrides     []int64
	PadLow, PadHigh   []int64
	LhsDilation       []int64
	RhsDilation       []int64
	FeatureGroupCount int64
	// Kernel dimension numbers; nil means the default OIHW layout.
	Kernel *KernelDims
	// Input and output dimension numbers; nil means the default NCHW
	// layout.
	Input, Output *ActivationDims
}

// ActivationDims are StableHLO's input (lhs) or output (result)
// dimension numbers of a convolution: which dimension holds the batch,
// the features and each spatial dimension.
type ActivationDims struct {
	Batch, Feature int64
	Spatial        []int64
}

// NCHW is the default activation layout of rank rank: [b, f, 0, 1, ...].
func NCHW(rank int) ActivationDims {
	a := ActivationDims{Batch: 0, Feature: 1}
	for d := 2; d < rank; d++ {
		a.Spatial = append(a.Spatial, int64(d))
	}
	return a
}

// NHWC is the channels-last activation layout of rank rank:
// [b, 0, 1, ..., f].
func NHWC(rank int) ActivationDims {
	a := ActivationDims{Batch: 0, Feature: int64(rank - 1)}
	for d := 1; d < rank-1; d++ {
		a.Spatial = append(a.Spatial, int64(d))
	}
	return a
}

// IsNCHW reports whether a is the default layout [b, f, 0, 1, ...].
func (a ActivationDims) IsNCHW() bool {
	return slices.Equal(a.Perm(), NCHW(len(a.Spatial)+2).Perm())
}

// Perm is the layout as a permutation: the dimensions holding the batch,
// the features and the spatial dimensions in order.
func (a ActivationDims) Perm() []int64 {
	return append([]int64{a.Batch, a.Feature}, a.Spatial...)
}

// KernelDims are StableHLO's kernel dimension numbers of a convolution:
// which rhs dimension holds the output features, the input features and
// each spatial window dimension.
type KernelDims struct {
	OutputFeature, InputFeature int64
	Spatial                     []int64
}

// Attrs returns the configuration as op attributes, omitting defaults.
func (c ConvConfig) Attrs() g.DictAttr {
	var a g.DictAttr
	if c.WindowStrides != nil {
		a = a.Set("window_strides", g.I64Array(c.WindowStrides...))
	}
	if c.PadLow != nil || c.PadHigh != nil {
		lo, hi := c.PadLow, c.PadHigh
		n := max(len(lo), len(hi))
		lo, hi = append(lo, make([]int64, n-len(lo))...), append(hi, make([]int64, n-len(hi))...)
		a = a.Set("padding", PaddingAttr(lo, hi))
	}
	if c.LhsDilation != nil {
		a = a.Set("lhs_dilation", g.I64Array(c.LhsDilation...))
	}
	if c.RhsDilation != nil {
		a = a.Set("rhs_dilation", g.I64Array(c.RhsDilation...))
	}
	if c.FeatureGroupCount > 1 {
		a = a.Set("feature_group_count", g.IntAttr(c.FeatureGroupCount))
	}
	if k := c.Kernel; k != nil {
		a = k.setAttrs(a)
	}
	if d := c.Input; d != nil {
		a = d.setAttrs(a, "input")
	}
	if d := c.Output; d != nil {
		a = d.setAttrs(a, "output")
	}
	return a
}

// setAttrs sets the kernel dimension numbers' attributes.
func (k KernelDims) setAttrs(a g.DictAttr) g.DictAttr {
	return a.Set("kernel_output_feature_dimension", g.IntAttr(k.OutputFeature)).
		Set("kernel_input_feature_dimension", g.IntAttr(k.InputFeature)).
		Set("kernel_spatial_dimensions", g.I64Array(k.Spatial...))
}

// setAttrs sets the dimension numbers' attributes named with prefix
// (input or output).
func (d ActivationDims) setAttrs(a g.DictAttr, prefix string) g.DictAttr {
	return a.Set(prefix+"_batch_dimension", g.IntAttr(d.Batch)).
		Set(prefix+"_feature_dimension", g.IntAttr(d.Feature)).
		Set(prefix+"_spatial_dimensions", g.I64Array(d.Spatial...))
}

// SetActivationDims sets op's input and output dimension numbers,
// removing the attributes of a default (NCHW) layout.
func SetActivationDims(op *g.Op, in, out ActivationDims) {
	for _, p := range []struct {
		prefix string
		d      ActivationDims
	}{{"input", in}, {"output", out}} {
		names := []string{p.prefix + "_batch_dimension", p.prefix + "_feature_dimension", p.prefix + "_spatial_dimensions"}
		if p.d.IsNCHW() {
			for _, n := range names {
				op.Attrs = op.Attrs.Delete(n)
			}
			continue
		}
		op.Attrs = p.d.setAttrs(op.Attrs, p.prefix)
	}
}

// Convolution builds a detached hlo.convolution with inferred result type.
func Convolution(lhs, rhs *g.Value, c ConvConfig, loc g.Location) (*g.Op, error) {
	return g.Build(ConvolutionOp, []*g.Value{lhs, rhs}, c.Attrs(), loc)
}

func init() {
	register(&g.OpDef{
		Name:     ConvolutionOp,
		Symbolic: true,
		Summary:  "N-d convolution, layout [b, f, spatial]x[o, i, spatial]->[b, f, spatial]",
		Operands: g.Exactly(2), Results: g.Exactly(1), Traits: g.Pure | g.Contraction, Pretty: true,
		Attrs: []g.AttrSpec{
			{Name: "window_strides", Kind: g.KindIntArray},
			{Name: "padding", Kind: g.KindArray},
			{Name: "lhs_dilation", Kind: g.KindIntArray},
			{Name: "rhs_dilation", Kind: g.KindIntArray},
			{Name: "feature_group_count", Kind: g.KindInt},
			{Name: "kernel_output_feature_dimension", Kind: g.KindInt, Default: g.IntAttr(0)},
			{Name: "kernel_input_feature_dimension", Kind: g.KindInt, Default: g.IntAttr(1)},
			{Name: "kernel_spatial_dimensions", Kind: g.KindIntArray},
			{Name: "input_batch_dimension", Kind: g.KindInt, Default: g.IntAttr(0)},
			{Name: "input_feature_dimension", Kind: g.KindInt, Default: g.IntAttr(1)},
			{Name: "input_spatial_dimensions", Kind: g.KindIntArray},
			{Name: "output_batch_dimension", Kind: g.KindInt, Default: g.IntAttr(0)},
			{Name: "output_feature_dimension", Kind: g.KindInt, Default: g.IntAttr(1)},
			{Name: "output_spatial_dimensions", Kind: g.KindIntArray},
		},
		Infer: func(op *g.Op) ([]g.Type, error) {
			c, err := convConfig(op)
			if err != nil {
				return nil, err
			}
			return []g.Type{c.result}, nil
		},
		Eval: evalConv,
	}, Lowering{Compute: convCompute, Symbolic: true})
}

type convCfg struct {
	lhs, rhs                        *g.TensorType
	strides, lo, hi, lhsDil, rhsDil []int64
	groups                          int64
	kernel                          KernelDims // always set (defaults filled)
	input, output                   ActivationDims
	// inSpatial are lhs's spatial dimension sizes (the dims of
	// input.Spatial in order; Dynamic where symbolic).
	inSpatial []int64
	dilatedIn []int64 // Dynamic where lhs's dimension is symbolic
	result    *g.TensorType
}

// KernelDimsOf returns the kernel dimension numbers of a convolution op
// with rank-r operands (defaults filled in). Errors: an attribute of the
// wrong kind or length, or dimensions that are not a permutation of the
// rhs dimensions.
func KernelDimsOf(op *g.Op, rank int) (KernelDims, error) {
	var k KernelDims
	var err error
	k.OutputFeature, k.InputFeature, k.Spatial, err = dimNumbers(op, rank, "kernel_output_feature_dimension", "kernel_input_feature_dimension", "kernel_spatial_dimensions")
	if err != nil {
		return k, err
	}
	if !isPermutation(append([]int64{k.OutputFeature, k.InputFeature}, k.Spatial...), rank) {
		return k, op.Errorf("kernel dimension numbers (output feature %d, input feature %d, spatial %v) must be a permutation of the rhs dimensions 0..%d", k.OutputFeature, k.InputFeature, k.Spatial, rank-1)
	}
	return k, nil
}

// ActivationDimsOf returns the input (prefix "input") or output (prefix
// "output") dimension numbers of a convolution op with rank-r
// activations (defaults filled in). Errors: an attribute of the wrong
// kind or length, or dimensions that are not a permutation of 0..r-1.
func ActivationDimsOf(op *g.Op, prefix string, rank int) (ActivationDims, error) {
	var a ActivationDims
	var err error
	a.Batch, a.Feature, a.Spatial, err = dimNumbers(op, rank, prefix+"_batch_dimension", prefix+"_feature_dimension", prefix+"_spatial_dimensions")
	if err != nil {
		return a, err
	}
	if !isPermutation(a.Perm(), rank) {
		return a, op.Errorf("%s dimension numbers (batch %d, feature %d, spatial %v) must be a permutation of the dimensions 0..%d", prefix, a.Batch, a.Feature, a.Spatial, rank-1)
	}
	return a, nil
}

// dimNumbers reads one operand's convolution dimension numbers for rank
// rank: the integer attributes first and second (their registered
// defaults when absent) and the array attribute spatial (default [2, 3,
// …]: the two followed by the spatial dimensions in order). Errors: an
// attribute of the wrong kind, or spatial of the wrong length.
func dimNumbers(op *g.Op, rank int, first, second, spatial string) (a, b int64, sp []int64, err error) {
	if a, err = op.Int(first); err != nil {
		return
	}
	if b, err = op.Int(second); err != nil {
		return
	}
	if sp, err = op.Ints(spatial); err != nil {
		return
	}
	if sp == nil {
		sp = NCHW(rank).Spatial
	}
	if ns := rank - 2; len(sp) != ns {
		err = op.Errorf("attribute '%s' must have %d elements (one per spatial dimension), got %d", spatial, ns, len(sp))
	}
	return
}

// isPermutation reports whether dims holds each of 0..rank-1 once.
func isPermutation(dims []int64, rank int) bool {
	seen := make([]bool, rank)
	for _, d := range dims {
		if d < 0 || d >= int64(rank) || seen[d] {
			return false
		}
		seen[d] = true
	}
	return len(dims) == rank
}

func convConfig(op *g.Op) (*convCfg, error) {
	ts, err := tensorOperands(op)
	if err != nil {
		return nil, err
	}
	c := &convCfg{lhs: ts[0], rhs: ts[1]}
	elem, err := contractionElem(op, c.lhs, c.rhs)
	if err != nil {
		return nil, err
	}
	if c.lhs.Rank() < 3 {
		return nil, op.Errorf("lhs must have rank >= 3 (N×C×spatial...), got %s", c.lhs)
	}
	if c.rhs.Rank() != c.lhs.Rank() {
		return nil, op.Errorf("rhs must have the rank of lhs (%d), got %s", c.lhs.Rank(), c.rhs)
	}
	ns := c.lhs.Rank() - 2
	if c.kernel, err = KernelDimsOf(op, c.lhs.Rank()); err != nil {
		return nil, err
	}
	if c.input, err = ActivationDimsOf(op, "input", c.lhs.Rank()); err != nil {
		return nil, err
	}
	if c.output, err = ActivationDimsOf(op, "output", c.lhs.Rank()); err != nil {
		return nil, err
	}
	if c.strides, err = op.IntsLen("window_strides", ns, "spatial dimension", 1); err != nil {
		return nil, err
	}
	if c.lo, c.hi, err = padPairs(op, "padding", ns); err != nil {
		return nil, err
	}
	if c.lhsDil, err = op.IntsLen("lhs_dilation", ns, "spatial dimension", 1); err != nil {
		return nil, err
	}
	if c.rhsDil, err = op.IntsLen("rhs_dilation", ns, "spatial dimension", 1); err != nil {
		return nil, err
	}
	for i := 0; i < ns; i++ {
		if c.strides[i] <= 0 {
			return nil, op.Errorf("window_strides must be positive, got %d", c.strides[i])
		}
		if c.lhsDil[i] <= 0 {
			return nil, op.Errorf("lhs_dilation must be positive, got %d", c.lhsDil[i])
		}
		if c.rhsDil[i] <= 0 {
			return nil, op.Errorf("rhs_dilation must be positive, got %d", c.rhsDil[i])
		}
	}
	c.groups = 1
	if a := op.Attr("feature_group_count"); a != nil {
		ia, ok := a.(*g.IntegerAttr)
		if !ok {
			return nil, op.Errorf("attribute 'feature_group_count' must be an integer, got %s", g.FormatAttr(a))
		}
		c.groups = ia.Value
	}
	if c.groups <= 0 {
		return nil, op.Errorf("feature_group_count must be positive, got %d", c.groups)
	}
	C, O, CG, err := c.featureCounts(op)
	if err != nil {
		return nil, err
	}
	if C%c.groups != 0 {
		return nil, op.Errorf("input feature dimension %d is not divisible by feature_group_count %d", C, c.groups)
	}
	if CG*c.groups != C {
		return nil, op.Errorf("rhs input feature dimension must be %d (input features %d / feature_group_count %d), got %d", C/c.groups, C, c.groups, CG)
	}
	if O%c.groups != 0 {
		return nil, op.Errorf("output feature dimension %d is not divisible by feature_group_count %d", O, c.groups)
	}
	dims := make([]*g.SymExpr, c.lhs.Rank())
	dims[c.output.Batch], dims[c.output.Feature] = c.lhs.Dim(int(c.input.Batch)), g.SymConst(O)
	c.dilatedIn = make([]int64, ns)
	c.inSpatial = make([]int64, ns)
	for i := 0; i < ns; i++ {
		k, err := staticDim(op, c.rhs, int(c.kernel.Spatial[i]), "the kernel's window size")
		if err != nil {
			return nil, err
		}
		ld, od := int(c.input.Spatial[i]), c.output.Spatial[i]
		if c.lhs.Sym != nil && c.lhs.Sym[ld] != nil {
			if c.lhsDil[i] != 1 {
				_, err := staticDim(op, c.lhs, ld, "a spatial dimension under lhs_dilation")
				return nil, err
			}
			c.dilatedIn[i], c.inSpatial[i] = g.Dynamic, g.Dynamic
			dims[od] = symWindowOutput(c.lhs.Sym[ld], k, c.rhsDil[i], c.strides[i], c.lo[i], c.hi[i])
			continue
		}
		in := c.lhs.Shape[ld]
		c.inSpatial[i] = in
		if in > 0 {
			c.dilatedIn[i] = (in-1)*c.lhsDil[i] + 1
		}
		padded := c.lo[i] + c.dilatedIn[i] + c.hi[i]
		if padded < 0 {
			return nil, op.Errorf("padding [%d, %d] makes spatial dimension %d negative (%d)", c.lo[i], c.hi[i], i, padded)
		}
		dims[od] = g.SymConst(windowOutput(padded, k, c.rhsDil[i], c.strides[i]))
	}
	c.result = g.NewTensorDims(elem, dims...)
	return c, nil
}

// convolutions lists f's hlo.convolution ops (nested ones too), in walk
// order, for passes that rewrite them.
func convolutions(f *g.Func) []*g.Op {
	var convs []*g.Op
	f.Walk(func(op *g.Op) {
		if op.Name == ConvolutionOp {
			convs = append(convs, op)
		}
	})
	return convs
}

// featureCounts returns the input features C (lhs dimension
// input_feature_dimension), the output features O and the input features
// per group CG (the kernel's), which must be constants. Errors: a
// symbolic one, naming its symbol.
func (c *convCfg) featureCounts(op *g.Op) (C, O, CG int64, err error) {
	if C, err = staticDim(op, c.lhs, int(c.input.Feature), "the input feature count"); err != nil {
		return
	}
	if O, err = staticDim(op, c.rhs, int(c.kernel.OutputFeature), "the kernel's output feature count"); err != nil {
		return
	}
	CG, err = staticDim(op, c.rhs, int(c.kernel.InputFeature), "the kernel's input feature count")
	return
}

// windowOutput is the number of window positions of a window of size k
// dilated by dil, moved by stride over padded elements.
func windowOutput(padded, k, dil, stride int64) int64 {
	if k <= 0 {
		return 0
	}
	dw := (k-1)*dil + 1
	if dw > padded {
		return 0
	}
	return (padded-dw)/stride + 1
}

func evalConv(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
	if err := checkArgSizes(op, args); err != nil {
		return nil, err
	}
	c, err := convConfig(op)
	if err != nil {
		return nil, err
	}
	lhs, rhs := args[0], args[1]
	ns := c.lhs.Rank() - 2
	ls, rs := g.Strides(c.lhs.Shape), g.Strides(c.rhs.Shape)
	kd := c.kernel
	cg := c.rhs.Shape[kd.InputFeature]
	og := c.rhs.Shape[kd.OutputFeature] / c.groups
	kShape := make([]int64, ns)
	kStrides := make([]int64, ns)
	for d, sd := range kd.Spatial {
		kShape[d], kStrides[d] = c.rhs.Shape[sd], rs[sd]
	}
	nk := g.NewTensor(g.F64, kShape...).NumElements()
	kIdx := make([][]int64, nk)
	for k := range kIdx {
		kIdx[k] = make([]int64, ns)
		unravel(int64(k), kShape, kIdx[k])
	}
	out := g.NewZeroTensor(c.result)
	idx := make([]int64, c.result.Rank())
	for o := range out.Data {
		unravel(int64(o), c.result.Shape, idx)
		n, oc := idx[c.output.Batch], idx[c.output.Feature]
		grp := oc / og
		var acc float64
		for _, kk := range kIdx {
			// input offset of this window position, without the channel
			inOff := n * ls[c.input.Batch]
			ok := true
			for d := 0; d < ns; d++ {
				pos := idx[c.output.Spatial[d]]*c.strides[d] + kk[d]*c.rhsDil[d] - c.lo[d]
				if pos < 0 || pos >= c.dilatedIn[d] || pos%c.lhsDil[d] != 0 {
					ok = false
					break
				}
				inOff += pos / c.lhsDil[d] * ls[c.input.Spatial[d]]
			}
			if !ok {
				continue
			}
			kOff := oc*rs[kd.OutputFeature] + offset(kk, kStrides)
			for ci := int64(0); ci < cg; ci++ {
				acc += lhs.Data[inOff+(grp*cg+ci)*ls[c.input.Feature]] * rhs.Data[kOff+ci*rs[kd.InputFeature]]
			}
		}
		out.Data[o] = acc
	}
	return []*g.Tensor{out.Round()}, nil
}

// convCompute (lhs N×C×S…, rhs O×(C/G)×K… and the result N×O×R…, each
// in the layout of its dimension numbers): out[n, o, r…] = Σ over ci,
// k… of lhs[n, g·C/G + ci, q…] · rhs[o, ci, k…] with g = o / (O/G) and
// q_j = (r_j·stride_j + k_j·rhs_dil_j − lo_j) / lhs_dil_j where that is an
// element of the input (padding and dilation holes read 0).
func convCompute(op *g.Op, ins []*tir.Operand, res tir.DType) (*tir.Compute, error) {
	c, err := convConfig(op)
	if err != nil {
		return nil, err
	}
	l, r := ins[0], ins[1]
	ns := len(l.Shape) - 2
	for _, d := range c.inSpatial {
		if d < 0 {
			return nil, errorAt(op, "a convolution over a symbolic spatial dimension of %s does not lower to tensor IR yet (a symbolic batch does); pin its symbols with --fix-dim", c.lhs)
		}
	}
	kd := c.kernel
	O, CG := r.Shape[kd.OutputFeature], r.Shape[kd.InputFeature]
	// The reduction loops go in the order of reduceOrder, so that the
	// inner ones walk the input's inner dimensions.
	order := reduceOrder(c.input)
	red := make([]int64, len(order))
	for j, d := range order {
		if d == 0 {
			red[j] = CG
		} else {
			red[j] = r.Shape[kd.Spatial[d-1]]
		}
	}
	return &tir.Compute{Shape: c.result.Shape, Reduce: red,
		Init: func(tir.Nest) tir.Expr { return tir.Zero(res) },
		Body: func(n tir.Nest, acc tir.Expr) tir.Expr {
			rv := make([]tir.Expr, len(order)) // rv[0] = ci, rv[1+j] = k_j
			for j, d := range order {
				rv[d] = n.Reduce[j]
			}
			ci, oc := rv[0], n.Spatial[c.output.Feature]
			var ch tir.Expr = ci
			if c.groups != 1 {
				grp := tir.FloorDiv(oc, tir.Int(O/c.groups))
				ch = tir.Add(tir.Mul(grp, tir.Int(CG)), ci)
			}
			pos := make([]tir.Expr, ns)
			for j := range pos {
				pos[j] = tir.Sub(tir.Add(tir.Mul(n.Spatial[c.output.Spatial[j]], tir.Int(c.strides[j])), tir.Mul(rv[1+j], tir.Int(c.rhsDil[j]))), tir.Int(c.lo[j]))
			}
			cond, sp := windowRead(pos, c.lhsDil, c.inSpatial)
			lidx := make([]tir.Expr, len(l.Shape))
			lidx[c.input.Batch], lidx[c.input.Feature] = n.Spatial[c.output.Batch], ch
			for j, d := range c.input.Spatial {
				lidx[d] = sp[j]
			}
			x := l.At(lidx...)
			xv := &tir.Select{Cond: cond, T: widen(x, res), F: tir.Zero(res)}
			widx := make([]tir.Expr, len(r.Shape))
			widx[kd.OutputFeature], widx[kd.InputFeature] = oc, ci
			for j, d := range kd.Spatial {
				widx[d] = rv[1+j]
			}
			return multiplyAdd(acc, xv, widen(r.At(widx...), res), res)
		}}, nil
}

// reduceOrder is the order of a convolution's reduction loops: indices
// into (ci, k0, k1, …) (0 for the input feature, 1+j for window
// dimension j) sorted by the input dimension each indexes — [ci, k…] for
// NCHW — except that when the input feature comes last (channels-last)
// behind two or more window dimensions, the last window dimension moves
// behind it: [kh, ci, kw] for NHWC. Then the innermost reductions read a
// few neighbouring pixels' channels, not one channel of many pixels or
// all 9 taps of one channel: NHWC rows of 512 channels are 2 KB apart,
// and ResNet-18's 3×3 convolutions on 7×7 ran 2.2× slower on 2 threads
// with [ci, kh, kw] (the 27 input lines of a register tile's taps fall in
// 2 L1 sets) and 1.3× slower with [kh, kw, ci] (one long channel loop per
// tap) than with [kh, ci, kw] (AVX2, 2 threads, medians of 4 alternating
// rounds; equal on 1 thread).
func reduceOrder(in ActivationDims) []int {
	order := make([]int, len(in.Spatial)+1)
	for j := range order {
		order[j] = j
	}
	dim := func(j int) int64 {
		if j == 0 {
			return in.Feature
		}
		return in.Spatial[j-1]
	}
	slices.SortFunc(order, func(a, b int) int { return int(dim(a) - dim(b)) })
	if n := len(order); n > 2 && order[n-1] == 0 {
		order[n-2], order[n-1] = order[n-1], order[n-2]
	}
	return order
}

// windowRead is the guarded read at position pos (in the padded,
// dilation-expanded input) along each dimension: the condition that every
// position is a real element, and the clamped operand indices. A
// symbolic dimension (size < 0) is read at its position unguarded: the
// caller has checked that its window is trivial (size, stride and
// dilation 1, no padding), so the position is the output index.
func windowRead(pos []tir.Expr, dil, size []int64) (tir.Expr, []tir.Expr) {
	var cond tir.Expr
	idx := make([]tir.Expr, len(pos))
	for j, p := range pos {
		if size[j] < 0 {
			idx[j] = p
			continue
		}
		q := p
		if dil[j] != 1 {
			q = tir.FloorDiv(p, tir.Int(dil[j]))
			cond = and(cond, tir.Bin(tir.OpEQ, tir.FloorMod(p, tir.Int(dil[j])), tir.Int(0)))
		}
		cond = and(cond, tir.Bin(tir.OpGE, p, tir.Int(0)))
		cond = and(cond, tir.LT(q, tir.Int(size[j])))
		idx[j] = clampIndex(q, size[j])
	}
	return cond, idx
}
