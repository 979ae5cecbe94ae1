package hlo

import (
	"fmt"
	"slices"
	"strconv"

	g "github.com/tessera-ml/tessera/graphir"
)

// The conv-layout pass (a layout assignment for convolution activations,
// as TVM's ConvertLayout and XLA's layout assignment do for CPU
// convolutions) makes convolutions read and write their
// activations channels-last (NHWC): each hlo.convolution in the default
// NCHW layout (with at least the min-channels option's output channels)
// gets the input and output dimension numbers of NHWC, a
// transpose of its input to NHWC before it and a transpose of its result
// back to NCHW after it. Transposes are then sunk towards their users —
// through elementwise ops (bias additions, activations, residual
// additions, converts: every operand a transpose by the same
// permutation, a scalar, or a value computed from constants only — a
// broadcast_in_dim, a splat constant, or elementwise ops of those, as a
// requantization's per-channel multiplier arithmetic — rebuilt in the
// permuted layout), reductions
// (global pooling), windowed reductions (pooling), pads, slices and
// concatenations, and into broadcasts — and a transpose
// of a transpose composes into one (none when the two cancel). Between
// consecutive convolutions the activations then stay NHWC with no
// transpose at all; only the model's input is transposed (inside the
// first convolution's kernel, which reads it through the transpose) and
// a value that leaves the convolutions' chain other than by a reduction
// or an elementwise op (a reshape, a function result) is transposed back
// once. Results are unchanged: every rewrite moves data, not arithmetic.
//
// Why: in NCHW a convolution's innermost output dimension is the image
// width, which is short on late layers (7, 14) and strided for strided
// convolutions, so the CPU register tile vectorizes the output channels
// instead and transposes its accumulators on the way out (the channel
// tiling of schedule/rules_channel.go), and a depthwise convolution's
// vectors span a 7- or 14-wide row; channels-last puts the output
// channels innermost, so the same tiles store whole contiguous vectors.
// An integer convolution (fold-qdq's u8 × i8 → i32) on NCHW also copies
// its input once per call into a channel-innermost buffer, the 4 bytes
// of one vpdpbusd step being consecutive channels (rules_vnni.go's
// packU); channels-last it reads its input as it is.

// ConvLayoutPassName is the pass's name in pipelines.
const ConvLayoutPassName = "conv-layout"

func init() {
	g.RegisterPass(&g.PassInfo{
		Name:    ConvLayoutPassName,
		Summary: "run convolutions on channels-last (NHWC) activations and sink the layout transposes through elementwise ops and reductions until they cancel",
		Options: map[string]string{
			"min-channels": "convolutions with fewer output channels keep NCHW (the CPU target passes its f32 vector lanes); default 0: every convolution",
		},
		New: func(opts map[string]string) (g.Pass, error) {
			var min int64
			if v, ok := opts["min-channels"]; ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil || n < 0 {
					return nil, fmt.Errorf("option min-channels must be an integer ≥ 0, got %q", v)
				}
				min = n
			}
			return &g.FuncPass{PassName: ConvLayoutPassName, Fn: func(f *g.Func) error { return ConvLayoutFuncWith(f, min) }}, nil
		},
	})
}

// ConvLayoutFunc applies conv-layout to every convolution of f. Errors:
// a convolution that does not verify, or sinking that did not converge.
func ConvLayoutFunc(f *g.Func) error { return ConvLayoutFuncWith(f, 0) }

// ConvLayoutFuncWith applies conv-layout to the convolutions of f with at
// least minChannels output channels (all of them, not per group: a
// depthwise convolution's channels fill its vectors however few each
// group has). The CPU target passes the f32 lanes of its vectors: with
// fewer output channels, NHWC register tiles fill part of a vector,
// while NCHW rows vectorize along the image width (LeNet-5's first
// convolution, 6 channels on 28-wide rows: 4.3 µs channels-last against
// 2.8 µs NCHW at batch 1, 1 thread, AVX-512; its second, 16 channels on
// 10-wide rows: 2.3 against 2.9 µs). Errors: as ConvLayoutFunc's.
func ConvLayoutFuncWith(f *g.Func, minChannels int64) error {
	for _, op := range convolutions(f) {
		c, err := convConfig(op)
		if err != nil {
			return err
		}
		if !c.input.IsNCHW() || !c.output.IsNCHW() || c.rhs.Shape[c.kernel.OutputFeature] < minChannels {
			continue
		}
		if err := toChannelsLast(op, c.lhs.Rank()); err != nil {
			return err
		}
	}
	_, err := g.ApplyPatternsGreedily(f, transposeSinkPatterns)
	return err
}

// toChannelsLast replaces the NCHW convolution op by transpose(conv'(
// transpose(x))), conv' reading and writing NHWC. The layout's Perm (the
// NHWC dimensions holding N, C, H, W…) is the transpose from NHWC back
// to NCHW.
func toChannelsLast(op *g.Op, rank int) error {
	toNCHW := NHWC(rank).Perm()
	in, err := Transpose(op.Operand(0), InversePermutation(toNCHW), op.Loc)
	if err != nil {
		return err
	}
	conv := op.Clone(map[*g.Value]*g.Value{op.Operand(0): in.Results[0]})
	SetActivationDims(conv, NHWC(rank), NHWC(rank))
	if err := inferInPlace(conv); err != nil {
		return err
	}
	out, err := Transpose(conv.Results[0], toNCHW, op.Loc)
	if err != nil {
		return err
	}
	for _, o := range []*g.Op{in, conv, out} {
		op.Block.InsertBefore(op, o)
	}
	op.Results[0].ReplaceAllUsesWith(out.Results[0])
	op.Erase()
	return nil
}

// transposeSinkPatterns move transposes towards their users and compose
// them.
var transposeSinkPatterns = []*g.Pattern{
	{Name: "compose-transposes", Root: TransposeOp, Rewrite: composeTransposes},
	{Name: "sink-transpose-elementwise", Rewrite: sinkThroughElementwise},
	{Name: "sink-transpose-reduce", Root: ReduceOp, Rewrite: sinkThroughReduce},
	{Name: "sink-transpose-reduce-window", Root: ReduceWindowOp, Rewrite: sinkThroughPerDim},
	{Name: "sink-transpose-pad", Root: PadOp, Rewrite: sinkThroughPerDim},
	{Name: "sink-transpose-slice", Root: SliceOp, Rewrite: sinkThroughPerDim},
	{Name: "sink-transpose-concatenate", Root: ConcatenateOp, Rewrite: sinkThroughConcatenate},
	{Name: "fold-transpose-broadcast", Root: BroadcastInDimOp, Rewrite: foldIntoBroadcast},
}

// perDimAttrs are the attributes with one entry per dimension of the
// first operand of the ops sinkThroughPerDim moves transposes through.
var perDimAttrs = map[string][]string{
	ReduceWindowOp: {"window_dimensions", "window_strides", "base_dilations", "window_dilations", "padding"},
	PadOp:          {"edge_padding_low", "edge_padding_high", "interior_padding"},
	SliceOp:        {"start_indices", "limit_indices", "strides"},
}

// transposeOf returns x's defining transpose's operand and permutation
// (ok false when x is not a transpose's result).
func transposeOf(x *g.Value) (*g.Value, []int64, bool) {
	if x.Def == nil || x.Def.Name != TransposeOp {
		return nil, nil, false
	}
	p, err := x.Def.Ints("permutation")
	if err != nil {
		return nil, nil, false
	}
	return x.Def.Operand(0), p, true
}

// composeTransposes rewrites transpose(transpose(y, q), p) into
// transpose(y, q∘p), and an identity transpose into its operand.
func composeTransposes(op *g.Op, rw *g.Rewriter) bool {
	p, err := op.Ints("permutation")
	if err != nil {
		return false
	}
	if IsIdentityPermutation(p) {
		rw.ReplaceOp(op, op.Operand(0))
		return true
	}
	y, q, ok := transposeOf(op.Operand(0))
	if !ok {
		return false
	}
	r := ComposePermutations(q, p)
	if IsIdentityPermutation(r) {
		rw.ReplaceOp(op, y)
		return true
	}
	return replaceWithTranspose(op, y, r, rw)
}

// sinkThroughElementwise rewrites an elementwise op whose operands are
// transposes by one permutation p (at least one), broadcasts, splat
// constants or scalars into the transpose by p of the op on the
// untransposed operands (the broadcasts and splats rebuilt in their
// layout).
func sinkThroughElementwise(op *g.Op, rw *g.Rewriter) bool {
	if !op.HasTrait(g.Elementwise) || len(op.Results) != 1 || len(op.Regions) > 0 {
		return false
	}
	rt, ok := op.Results[0].Type.(*g.TensorType)
	if !ok {
		return false
	}
	var p []int64
	for _, x := range op.Operands() {
		if _, q, ok := transposeOf(x); ok && len(q) == rt.Rank() {
			p = q
			break
		}
	}
	if p == nil {
		return false
	}
	operands := make([]*g.Value, op.NumOperands())
	u := &untransposer{p: p, memo: map[*g.Value]*g.Value{}}
	for i, x := range op.Operands() {
		v, ok := u.operand(x, rt, 0)
		if !ok {
			u.discard()
			return false
		}
		operands[i] = v
	}
	for _, m := range u.made {
		rw.Insert(op, m)
	}
	inner := rebuiltElementwise(op, operands, permutedType(rt, InversePermutation(p)))
	rw.Insert(op, inner)
	return replaceWithTranspose(op, inner.Results[0], p, rw)
}

// rebuiltElementwise is a detached copy of the elementwise op on new
// operands with result type t (given, not inferred: hlo.convert's result
// type is not inferable).
func rebuiltElementwise(op *g.Op, operands []*g.Value, t *g.TensorType) *g.Op {
	return g.NewOp(op.Name, operands, []g.Type{t}, op.Attrs, op.Loc)
}

// untransposer rebuilds the operands of an elementwise op in the layout
// before the transpose by p. made are the ops it built, detached, in
// definition order; memo maps each value rebuilt to its rebuilt form.
type untransposer struct {
	p    []int64
	memo map[*g.Value]*g.Value
	made []*g.Op
}

// maxUntransposeDepth bounds the constant subexpressions operand
// rebuilds (a requantization's multiplier arithmetic is 6 deep).
const maxUntransposeDepth = 12

// operand is x, an operand of an elementwise op with result type rt, in
// the layout before the transpose by p: the transpose's operand, a
// scalar as it is, or a value rebuilt in that layout: a broadcast, a
// splat constant, or an elementwise op (a requantization's per-channel
// multiplier arithmetic) whose operands are such values but no transpose
// (it only ever reads constants, so its copy costs no traffic). ok is
// false for any other operand.
func (u *untransposer) operand(x *g.Value, rt *g.TensorType, depth int) (v *g.Value, ok bool) {
	xt, isT := x.Type.(*g.TensorType)
	if !isT {
		return nil, false
	}
	if xt.Rank() == 0 {
		return x, true
	}
	if y, q, isTr := transposeOf(x); isTr && slices.Equal(q, u.p) && depth == 0 {
		return y, true
	}
	return u.constant(x, xt, rt, depth)
}

// constant is operand's rebuilding of a broadcast, a splat constant or a
// constant-only elementwise op.
func (u *untransposer) constant(x *g.Value, xt, rt *g.TensorType, depth int) (*g.Value, bool) {
	if v, done := u.memo[x]; done {
		return v, true
	}
	if xt.Rank() != rt.Rank() || x.Def == nil || depth > maxUntransposeDepth {
		return nil, false
	}
	at := permutedType(xt, InversePermutation(u.p))
	var made *g.Op
	switch d := x.Def; {
	case d.Name == BroadcastInDimOp:
		dims, err := d.Ints("broadcast_dimensions")
		if err != nil {
			return nil, false
		}
		nd := make([]int64, len(dims))
		for j, k := range dims {
			nd[j] = u.p[k]
		}
		if made, err = BroadcastInDim(d.Operand(0), at, nd, d.Loc); err != nil {
			return nil, false
		}
	case isSplatConstant(d) && xt.IsStatic():
		c := *d.Attr("value").(*g.DenseElementsAttr)
		c.Type = at
		made = ConstantFromDense(&c, d.Loc)
	case d.HasTrait(g.Elementwise) && len(d.Results) == 1 && len(d.Regions) == 0:
		ops := make([]*g.Value, d.NumOperands())
		for i, y := range d.Operands() {
			v, ok := u.operand(y, xt, depth+1)
			if !ok {
				return nil, false
			}
			ops[i] = v
		}
		made = rebuiltElementwise(d, ops, at)
	default:
		return nil, false
	}
	u.made = append(u.made, made)
	u.memo[x] = made.Results[0]
	return made.Results[0], true
}

// discard detaches the ops built so far (the rewrite does not apply).
func (u *untransposer) discard() {
	for _, m := range u.made {
		m.SetOperands(nil)
	}
	u.made = nil
}

// permutedType is t transposed by p: dimension i of the result is t's
// dimension p[i].
func permutedType(t *g.TensorType, p []int64) *g.TensorType {
	dims := make([]*g.SymExpr, len(p))
	for i, d := range p {
		dims[i] = t.Dim(int(d))
	}
	return g.NewTensorDims(t.Elem, dims...)
}

// replaceWithTranspose replaces op's one result by transpose(v, p).
func replaceWithTranspose(op *g.Op, v *g.Value, p []int64, rw *g.Rewriter) bool {
	t, err := Transpose(v, p, op.Loc)
	if err != nil {
		return false
	}
	rw.Insert(op, t)
	rw.ReplaceOp(op, t.Results[0])
	return true
}

// commonTranspose returns the operands of xs's defining transposes and
// their permutation when every x is a transpose by one permutation.
func commonTranspose(xs []*g.Value) (ins []*g.Value, p []int64, ok bool) {
	ins = make([]*g.Value, len(xs))
	for i, x := range xs {
		y, q, isTr := transposeOf(x)
		if !isTr || (p != nil && !slices.Equal(p, q)) {
			return nil, nil, false
		}
		p, ins[i] = q, y
	}
	return ins, p, p != nil
}

// sinkThroughReduce rewrites reduce(transpose(a, p)…, init…) over
// dimensions D into reduce(a…, init…) over p[D], followed by the
// transpose that restores the order of the kept dimensions (none when
// the kept dimensions keep their order, as a global pooling's N and C
// do).
func sinkThroughReduce(op *g.Op, rw *g.Rewriter) bool {
	n := op.NumOperands() / 2
	ins, p, ok := commonTranspose(op.Operands()[:n])
	if !ok {
		return false
	}
	dims, err := op.Ints("dimensions")
	if err != nil {
		return false
	}
	reduced := map[int64]bool{}
	nd := make([]int64, len(dims))
	for j, d := range dims {
		nd[j] = p[d]
		reduced[d] = true
	}
	slices.Sort(nd)
	var kept []int64 // the kept dimensions' positions in a, in result order
	for i, d := range p {
		if !reduced[int64(i)] {
			kept = append(kept, d)
		}
	}
	sorted := slices.Clone(kept)
	slices.Sort(sorted)
	reordered := !slices.Equal(sorted, kept)
	if reordered && n > 1 {
		return false // each result would need a transpose of its own
	}
	mapping := map[*g.Value]*g.Value{}
	for i := 0; i < n; i++ {
		mapping[op.Operand(i)] = ins[i]
	}
	inner := op.Clone(mapping)
	inner.SetAttr("dimensions", g.I64Array(nd...))
	if inferInPlace(inner) != nil {
		inner.SetOperands(nil)
		return false
	}
	rw.Insert(op, inner)
	if !reordered {
		rw.ReplaceOp(op, inner.Results...)
		return true
	}
	q := make([]int64, len(kept))
	for j, d := range kept {
		q[j] = int64(slices.Index(sorted, d))
	}
	return replaceWithTranspose(op, inner.Results[0], q, rw)
}

// inferInPlace sets the result types of op (built with its old ones, by
// Clone) from its definition's inference. Errors: the inference's.
func inferInPlace(op *g.Op) error {
	tys, err := op.Def.InferTypes(op)
	if err != nil {
		return err
	}
	if len(tys) != len(op.Results) {
		return op.Errorf("infers %d result types for %d results", len(tys), len(op.Results))
	}
	for i, t := range tys {
		op.Results[i].Type = t
	}
	return nil
}

// sinkThroughPerDim rewrites op(transpose(a, p), scalars…) — a windowed
// reduction, a pad or a slice, whose other operands (the init, the
// padding value) are scalars — into transpose(op'(a, scalars…), p), op'
// with the per-dimension attributes (perDimAttrs) permuted with the
// dimensions.
func sinkThroughPerDim(op *g.Op, rw *g.Rewriter) bool {
	if len(op.Results) != 1 {
		return false
	}
	y, p, ok := transposeOf(op.Operand(0))
	if !ok {
		return false
	}
	for _, x := range op.Operands()[1:] {
		if t, isT := x.Type.(*g.TensorType); !isT || t.Rank() != 0 {
			return false
		}
	}
	inner := op.Clone(map[*g.Value]*g.Value{op.Operand(0): y})
	drop := func() bool {
		inner.SetOperands(nil)
		return false
	}
	for _, name := range perDimAttrs[op.Name] {
		if op.Attr(name) == nil {
			continue
		}
		a, isArr := op.Attr(name).(g.ArrayAttr)
		if !isArr || len(a) != len(p) {
			return drop()
		}
		na := make(g.ArrayAttr, len(a))
		for i, d := range p {
			na[d] = a[i]
		}
		inner.SetAttr(name, na)
	}
	if inferInPlace(inner) != nil {
		return drop()
	}
	rw.Insert(op, inner)
	return replaceWithTranspose(op, inner.Results[0], p, rw)
}

// sinkThroughConcatenate rewrites concatenate(transpose(a, p), …,
// transpose(z, p)) along d into transpose(concatenate(a, …, z) along
// p[d], p).
func sinkThroughConcatenate(op *g.Op, rw *g.Rewriter) bool {
	d, err := op.Int("dimension")
	if err != nil {
		return false
	}
	ins, p, ok := commonTranspose(op.Operands())
	if !ok || d < 0 || d >= int64(len(p)) {
		return false
	}
	inner, err := rw.Create(op, ConcatenateOp, ins, op.Attrs.Set("dimension", g.IntAttr(p[d])))
	if err != nil {
		return false
	}
	return replaceWithTranspose(op, inner.Results[0], p, rw)
}

// foldIntoBroadcast rewrites broadcast_in_dim(transpose(y, q), D) into
// broadcast_in_dim(y, D') with D'[q[j]] = D[j]: the broadcast places y's
// dimensions directly.
func foldIntoBroadcast(op *g.Op, rw *g.Rewriter) bool {
	y, q, ok := transposeOf(op.Operand(0))
	if !ok {
		return false
	}
	dims, err := op.Ints("broadcast_dimensions")
	if err != nil || len(dims) != len(q) {
		return false
	}
	nd := make([]int64, len(dims))
	for j, d := range dims {
		nd[q[j]] = d
	}
	b, err := BroadcastInDim(y, op.Results[0].Type.(*g.TensorType), nd, op.Loc)
	if err != nil {
		return false
	}
	rw.Insert(op, b)
	rw.ReplaceOp(op, b.Results[0])
	return true
}
