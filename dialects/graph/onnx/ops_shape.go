package onnx

import (
	"math"

	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/dialects/graph/onnx/onnxpb"
	"github.com/tessera-ml/tessera/graphir"
)

// Shape and data-movement ops: Identity, Dropout, Reshape, Flatten,
// Squeeze, Unsqueeze, Transpose, Concat, Split, Slice, Gather, Pad,
// Expand, Tile, DepthToSpace, SpaceToDepth, and the constant producers
// Constant, ConstantOfShape, Shape, Size, Range.

func init() {
	registerSymbolic(convertIdentity, "Identity", "Dropout")
	registerSymbolic(convertReshape, "Reshape")
	registerSymbolic(convertFlatten, "Flatten")
	registerSymbolic(convertSqueeze, "Squeeze", "Unsqueeze")
	registerSymbolic(convertTranspose, "Transpose")
	registerSymbolic(convertConcat, "Concat")
	register(convertSplit, "Split")
	registerSymbolic(convertSlice, "Slice")
	register(convertGather, "Gather")
	register(convertPad, "Pad")
	register(convertExpand, "Expand")
	register(convertTile, "Tile")
	register(convertConstant, "Constant")
	register(convertConstantOfShape, "ConstantOfShape")
	registerSymbolic(convertShape, "Shape", "Size")
	register(convertRange, "Range")
	register(convertDepthSpace, "DepthToSpace", "SpaceToDepth")
}

// convertDepthSpace maps DepthToSpace {blocksize, mode (opset 11+; DCR
// before)} and SpaceToDepth {blocksize} to graph.depth_to_space and
// graph.space_to_depth.
func convertDepthSpace(n *node) ([]*value, error) {
	if err := n.need(1, 1); err != nil {
		return nil, err
	}
	if n.attr("blocksize") == nil {
		return nil, n.errorf("attribute 'blocksize' is required")
	}
	b, err := n.intAttr("blocksize", 0)
	if err != nil {
		return nil, err
	}
	if n.p.GetOpType() == "SpaceToDepth" {
		return n.emit(graph.SpaceToDepthOp, list(n.in(0)), attrs("blocksize", graphir.IntAttr(b)))
	}
	mode, err := n.stringAttr("mode", "DCR")
	if err != nil {
		return nil, err
	}
	return n.emit(graph.DepthToSpaceOp, list(n.in(0)), attrs("blocksize", graphir.IntAttr(b), "mode", graphir.StringAttr(mode)))
}

// convertIdentity removes Identity and inference-mode Dropout.
func convertIdentity(n *node) ([]*value, error) {
	if err := n.need(1, 3); err != nil {
		return nil, err
	}
	if n.p.GetOpType() == "Dropout" {

		if n.in(2) != nil {
			tm, err := n.constInput(2, "training_mode")
			if err != nil {
				return nil, err
			}
			if len(tm.Data) > 0 && tm.Data[0] != 0 {
				return nil, n.errorf("unsupported: training_mode = true (only inference is supported)")
			}
		}
		if is, err := n.intAttr("is_test", 1); err != nil {
			return nil, err
		} else if n.opset < 7 && is == 0 {
			return nil, n.errorf("unsupported: is_test = 0")
		}
		if len(n.p.GetOutput()) > 1 && n.p.GetOutput()[1] != "" {
			// inference keeps every element: the mask is all true (bool
			// from opset 10, the input's type before)
			dt := graphir.I1
			if n.opset < 10 {
				dt = n.in(0).typ().Elem
			}
			if !n.in(0).typ().IsStatic() {
				return nil, n.errorf("the mask output over %s needs a static shape; pin its symbols with --fix-dim", n.in(0).typ())
			}
			mask, err := newConst(dt, n.in(0).typ().Shape)
			if err != nil {
				return nil, n.errorf("%v", err)
			}
			for i := range mask.Data {
				mask.Data[i] = 1
			}
			return list(n.in(0), constValue(mask, n.loc)), nil
		}
	} else if err := n.need(1, 1); err != nil {
		return nil, err
	}
	return list(n.in(0)), nil
}

// reshapeTo reshapes x to a fully resolved shape: folded for a constant,
// else graph.reshape.
func (n *node) reshapeTo(x *value, shape []int64) ([]*value, error) {
	if graphir.NewTensor(x.typ().Elem, shape...).NumElements() != x.typ().NumElements() {
		return nil, n.errorf("cannot reshape %s to %v", x.typ(), shape)
	}
	if x.isConst() {
		return list(constValue(foldReshape(x.tensor(), shape), n.loc)), nil
	}
	return n.emit("graph.reshape", list(x), attrs("shape", graphir.I64Array(shape...)))
}

// convertReshape maps Reshape with a constant shape (0 copies the input
// dimension unless allowzero, one −1 is inferred) to graph.reshape.
func convertReshape(n *node) ([]*value, error) {
	var target []int64
	var err error
	if n.opset < 5 {
		target, err = n.intsAttr("shape", nil)
	} else {
		if err := n.need(2, 2); err != nil {
			return nil, err
		}
		target, err = n.constInts(1, "shape")
	}
	if err != nil {
		return nil, err
	}
	x := n.in(0)
	in := x.typ().Shape
	if az, err := n.intAttr("allowzero", 0); err != nil {
		return nil, err
	} else if az != 0 {
		for _, d := range target {
			if d == 0 {
				return nil, n.errorf("unsupported: allowzero = 1 with a 0 in the shape")
			}
		}
	}
	if !x.typ().IsStatic() {
		// graph.reshape resolves 0 and -1 over the symbolic dimensions
		return n.emit("graph.reshape", list(x), attrs("shape", graphir.I64Array(target...)))
	}
	shape, err := graph.ReshapeShape(in, target)
	if err != nil {
		return nil, n.errorf("%v", err)
	}
	return n.reshapeTo(x, shape)
}

// convertFlatten maps Flatten {axis} (default 1) to a 2-D reshape.
func convertFlatten(n *node) ([]*value, error) {
	if err := n.need(1, 1); err != nil {
		return nil, err
	}
	x := n.in(0)
	axis, err := n.intOf("axis", graph.FlattenOp, "axis")
	if err != nil {
		return nil, err
	}
	s := x.typ().Shape
	if axis < -int64(len(s)) || axis > int64(len(s)) {
		return nil, n.errorf("axis %d is out of range for rank %d", axis, len(s))
	}
	if axis < 0 {
		axis += int64(len(s))
	}
	rows, cols := int64(1), int64(1)
	for d, v := range s {
		if int64(d) < axis {
			rows *= v
		} else {
			cols *= v
		}
	}
	if x.isConst() {
		return n.reshapeTo(x, []int64{rows, cols})
	}
	return n.emit("graph.flatten", list(x), attrs("axis", graphir.IntAttr(axis)))
}

// axesArg reads `axes` from the attribute (opset < 13) or the optional
// constant input #1 (opset ≥ 13).
func (n *node) axesArg(inputFrom int64) ([]int64, bool, error) {
	if n.opset < inputFrom {
		if !n.has("axes") {
			return nil, false, nil
		}
		a, err := n.intsAttr("axes", nil)
		return a, true, err
	}
	if n.in(1) == nil {
		return nil, false, nil
	}
	a, err := n.constInts(1, "axes")
	return a, true, err
}

// convertSqueeze maps Squeeze and Unsqueeze to graph.reshape.
func convertSqueeze(n *node) ([]*value, error) {
	if err := n.need(1, 2); err != nil {
		return nil, err
	}
	x := n.in(0)
	in := x.typ().Dims()
	axes, given, err := n.axesArg(13)
	if err != nil {
		return nil, err
	}
	var dims []*graphir.SymExpr
	if n.p.GetOpType() == "Squeeze" {
		dims, err = n.squeezedDims(x.typ(), axes, given)
	} else {
		dims, err = n.unsqueezedDims(in, axes, given)
	}
	if err != nil {
		return nil, err
	}
	if !x.typ().IsStatic() {
		return n.reshapeToDims(x, dims)
	}
	return n.reshapeTo(x, graphir.NewTensorDims(x.typ().Elem, dims...).Shape)
}

// squeezedDims drops the dimensions axes names (every dimension of size 1
// when not given) from t's. Errors: an axis out of range, a dimension that
// is not 1, a symbolic one (it is 1 only for some values).
func (n *node) squeezedDims(t *graphir.TensorType, axes []int64, given bool) ([]*graphir.SymExpr, error) {
	in := t.Dims()
	drop := map[int]bool{}
	if !given {
		if !t.IsStatic() {
			return nil, n.errorf("Squeeze without axes over %s: whether a symbolic dimension is 1 depends on its value; give axes or pin its symbols with %s", t, graphir.FixDimHint(t.Symbols()))
		}
		for d, v := range t.Shape {
			if v == 1 {
				drop[d] = true
			}
		}
	}
	for _, a := range axes {
		d, err := n.normAxis(a, len(in))
		if err != nil {
			return nil, err
		}
		if c, ok := in[d].Const(); !ok || c != 1 {
			return nil, n.errorf("cannot squeeze dimension %d of size %s", d, in[d])
		}
		drop[d] = true
	}
	var out []*graphir.SymExpr
	for d, v := range in {
		if !drop[d] {
			out = append(out, v)
		}
	}
	return out, nil
}

// unsqueezedDims inserts a 1 into in at each of axes (positions in the
// result). Errors: no axes, an axis out of range or repeated.
func (n *node) unsqueezedDims(in []*graphir.SymExpr, axes []int64, given bool) ([]*graphir.SymExpr, error) {
	if !given {
		return nil, n.errorf("Unsqueeze needs axes")
	}
	r := len(in) + len(axes)
	ins := make([]bool, r)
	for _, a := range axes {
		d, err := n.normAxis(a, r)
		if err != nil {
			return nil, err
		}
		if ins[d] {
			return nil, n.errorf("axis %d is repeated", a)
		}
		ins[d] = true
	}
	out := make([]*graphir.SymExpr, 0, r)
	k := 0
	for d := 0; d < r; d++ {
		if ins[d] {
			out = append(out, graphir.SymConst(1))
		} else {
			out = append(out, in[k])
			k++
		}
	}
	return out, nil
}

// convertTranspose maps Transpose {perm} (default: reversed) to graph.transpose.
func convertTranspose(n *node) ([]*value, error) {
	if err := n.need(1, 1); err != nil {
		return nil, err
	}
	x := n.in(0)
	r := x.typ().Rank()
	def := make([]int64, r)
	for i := range def {
		def[i] = int64(r - 1 - i)
	}
	perm, err := n.intsAttr("perm", def)
	if err != nil {
		return nil, err
	}
	seen := make([]bool, r)
	for _, p := range perm {
		if p < 0 || p >= int64(r) || seen[p] || len(perm) != r {
			return nil, n.errorf("perm %v is not a permutation of rank %d", perm, r)
		}
		seen[p] = true
	}
	if x.isConst() {
		return list(constValue(foldTranspose(x.tensor(), perm), n.loc)), nil
	}
	return n.emit("graph.transpose", list(x), attrs("perm", graphir.I64Array(perm...)))
}

// convertConcat maps Concat {axis} to graph.concat.
func convertConcat(n *node) ([]*value, error) {
	if err := n.need(1, -1); err != nil {
		return nil, err
	}
	axis, err := n.intAttr("axis", 0)
	if err != nil {
		return nil, err
	}
	if !n.has("axis") {
		return nil, n.errorf("Concat needs an axis attribute")
	}
	var ins []*value
	var ts []*graphir.Tensor
	for i, x := range n.ins {
		if x == nil {
			return nil, n.errorf("input #%d is required", i)
		}
		ins = append(ins, x)
		ts = append(ts, x.tensor())
	}
	if allConst(ins...) {
		d, err := n.normAxis(axis, ts[0].Type.Rank())
		if err != nil {
			return nil, err
		}
		t, err := foldConcat(ts, d)
		if err != nil {
			return nil, n.errorf("%v", err)
		}
		return list(constValue(t, n.loc)), nil
	}
	return n.emit("graph.concat", ins, attrs("axis", graphir.IntAttr(axis)))
}

// convertSplit maps Split to graph.split {axis, split}: sizes from the
// attribute (opset < 13) or the optional constant input (opset ≥ 13),
// else equal parts, one per output.
func convertSplit(n *node) ([]*value, error) {
	if err := n.need(1, 2); err != nil {
		return nil, err
	}
	x := n.in(0)
	axis, err := n.intOf("axis", graph.SplitOp, "axis")
	if err != nil {
		return nil, err
	}
	d, err := n.normAxis(axis, x.typ().Rank())
	if err != nil {
		return nil, err
	}
	var sizes []int64
	if n.opset < 13 {
		sizes, err = n.intsAttr("split", nil)
	} else if n.in(1) != nil {
		sizes, err = n.constInts(1, "split")
	}
	if err != nil {
		return nil, err
	}
	dim := x.typ().Shape[d]
	outs := int64(len(n.p.GetOutput()))
	if sizes == nil {
		if outs == 0 || dim%outs != 0 {
			return nil, n.errorf("cannot split dimension %d of size %d into %d equal parts", d, dim, outs)
		}
		for i := int64(0); i < outs; i++ {
			sizes = append(sizes, dim/outs)
		}
	}
	total := int64(0)
	for _, s := range sizes {
		if s < 0 {
			return nil, n.errorf("split sizes %v must not be negative", sizes)
		}
		total += s
	}
	if total != dim || int64(len(sizes)) != outs {
		return nil, n.errorf("split sizes %v must sum to %d and give %d outputs", sizes, dim, outs)
	}
	if x.isConst() {
		var res []*value
		start := int64(0)
		for _, s := range sizes {
			rs, err := sliceRanges(x.typ().Shape, []int64{start}, []int64{start + s}, []int64{int64(d)}, nil)
			if err != nil {
				return nil, n.errorf("%v", err)
			}
			res = append(res, constValue(foldSlice(x.tensor(), rs), n.loc))
			start += s
		}
		return res, nil
	}
	return n.emit("graph.split", list(x), attrs("axis", graphir.IntAttr(int64(d)), "split", graphir.I64Array(sizes...)))
}

// sliceInputs reads Slice's constant inputs (opset ≥ 10): starts, ends,
// and the optional axes and steps (nil when absent).
func (n *node) sliceInputs() (starts, ends, axes, steps []int64, err error) {
	if starts, err = n.constInts(1, "starts"); err != nil {
		return
	}
	if ends, err = n.constInts(2, "ends"); err != nil {
		return
	}
	if n.in(3) != nil {
		if axes, err = n.constInts(3, "axes"); err != nil {
			return
		}
	}
	if n.in(4) != nil {
		steps, err = n.constInts(4, "steps")
	}
	return
}

// convertSlice maps Slice (attributes before opset 10, constant inputs
// from 10) to graph.slice with every axis written explicitly, its ONNX
// clamping already applied.
func convertSlice(n *node) ([]*value, error) {
	var starts, ends, axes, steps []int64
	var err error
	if n.opset < 10 {
		if err = n.need(1, 1); err != nil {
			return nil, err
		}
		if starts, err = n.intsAttr("starts", nil); err != nil {
			return nil, err
		}
		if ends, err = n.intsAttr("ends", nil); err != nil {
			return nil, err
		}
		if axes, err = n.intsAttr("axes", nil); err != nil {
			return nil, err
		}
	} else {
		if err = n.need(3, 5); err != nil {
			return nil, err
		}
		if starts, ends, axes, steps, err = n.sliceInputs(); err != nil {
			return nil, err
		}
	}
	x := n.in(0)
	if !x.typ().IsStatic() {
		// graph.slice clamps as ONNX does, over the symbolic dimensions too
		a := attrs("starts", graphir.I64Array(starts...), "ends", graphir.I64Array(ends...))
		if axes != nil {
			a = a.Set("axes", graphir.I64Array(axes...))
		}
		if steps != nil {
			a = a.Set("steps", graphir.I64Array(steps...))
		}
		return n.emit("graph.slice", list(x), a)
	}
	shape := x.typ().Shape
	rs, err := sliceRanges(shape, starts, ends, axes, steps)
	if err != nil {
		return nil, n.errorf("%v", err)
	}
	if x.isConst() {
		return list(constValue(foldSlice(x.tensor(), rs), n.loc)), nil
	}
	var s, e, a, st []int64
	for d, r := range rs {
		// one past the last index taken, in the direction of the step
		end := r.start
		if r.count > 0 {
			last := r.start + (r.count-1)*r.step
			end = last + 1
			if r.step < 0 {
				end = last - 1
			}
		}
		if end < 0 {
			end = -shape[d] - 1 // clamps to "before index 0"
		}
		s, e, a, st = append(s, r.start), append(e, end), append(a, int64(d)), append(st, r.step)
	}
	return n.emit("graph.slice", list(x), attrs("starts", graphir.I64Array(s...), "ends", graphir.I64Array(e...),
		"axes", graphir.I64Array(a...), "steps", graphir.I64Array(st...)))
}

// convertGather maps Gather {axis} with constant indices to graph.gather
// {axis, indices} (constant data folds), and with runtime indices to
// graph.gather(x, indices) {axis}.
func convertGather(n *node) ([]*value, error) {
	if err := n.need(2, 2); err != nil {
		return nil, err
	}
	x := n.in(0)
	axis, err := n.intOf("axis", graph.GatherOp, "axis")
	if err != nil {
		return nil, err
	}
	d, err := n.normAxis(axis, x.typ().Rank())
	if err != nil {
		return nil, err
	}
	if !n.in(1).isConst() {
		return n.emit(graph.GatherOp, list(x, n.in(1)), attrs("axis", graphir.IntAttr(int64(d))))
	}
	idx, err := n.constInts(1, "indices")
	if err != nil {
		return nil, err
	}
	it := n.in(1).tensor()
	dim := x.typ().Shape[d]
	for _, j := range idx {
		if j < -dim || j >= dim {
			return nil, n.errorf("index %d is out of range for dimension %d of size %d", j, d, dim)
		}
	}
	if x.isConst() {
		t, err := foldGather(x.tensor(), d, idx, it.Shape())
		if err != nil {
			return nil, n.errorf("%v", err)
		}
		return list(constValue(t, n.loc)), nil
	}
	return n.emit("graph.gather", list(x), attrs("axis", graphir.IntAttr(int64(d)), "indices", foldCast(it, graphir.I64).ToDense()))
}

// convertPad maps Pad to graph.pad {pads, mode, value}: attributes before
// opset 11, constant inputs (pads, optional constant_value) from 11.
func convertPad(n *node) ([]*value, error) {
	var pads []int64
	var value float64
	var err error
	if n.opset < 11 {
		if err = n.need(1, 1); err != nil {
			return nil, err
		}
		if pads, err = n.intsAttr("pads", nil); err != nil {
			return nil, err
		}
		if value, err = n.floatOf("value", graph.PadOp); err != nil {
			return nil, err
		}
	} else {
		if err = n.need(2, 3); err != nil {
			return nil, err
		}
		if pads, err = n.constInts(1, "pads"); err != nil {
			return nil, err
		}
		if n.in(2) != nil {
			t, err := n.constInput(2, "constant_value")
			if err != nil {
				return nil, err
			}
			if len(t.Data) != 1 {
				return nil, n.errorf("constant_value must be a scalar, got %s", t.Type)
			}
			value = t.Data[0]
		}
	}
	mode, err := n.stringAttr("mode", string(graphDefault(graph.PadOp, "mode").(graphir.StringAttr)))
	if err != nil {
		return nil, err
	}
	if mode != "constant" && mode != "reflect" && mode != "edge" {
		return nil, n.errorf("unsupported mode '%s'", mode)
	}
	x := n.in(0)
	if len(pads) != 2*x.typ().Rank() {
		return nil, n.errorf("pads %v must have 2×%d elements", pads, x.typ().Rank())
	}
	return n.emit("graph.pad", list(x), attrs("pads", graphir.I64Array(pads...), "mode", graphir.StringAttr(mode), "value", graphir.F32Attr(value)))
}

// convertExpand maps Expand with a constant shape to graph.expand.
func convertExpand(n *node) ([]*value, error) {
	if err := n.need(2, 2); err != nil {
		return nil, err
	}
	shape, err := n.constInts(1, "shape")
	if err != nil {
		return nil, err
	}
	x := n.in(0)
	out, ok := broadcastShapes(x.typ().Shape, shape)
	if !ok {
		return nil, n.errorf("cannot expand %s to %v", x.typ(), shape)
	}
	if x.isConst() {
		if err := checkFoldSize(out); err != nil {
			return nil, n.errorf("%v", err)
		}
		ones := &graphir.Tensor{Type: graphir.NewTensor(x.typ().Elem, out...), Data: make([]float64, graphir.NewTensor(graphir.F32, out...).NumElements())}
		t, err := foldElementwise([]*graphir.Tensor{x.tensor(), ones}, x.typ().Elem, func(xs []float64) (float64, error) { return xs[0], nil })
		if err != nil {
			return nil, n.errorf("%v", err)
		}
		return list(constValue(t, n.loc)), nil
	}
	return n.emit("graph.expand", list(x), attrs("shape", graphir.I64Array(shape...)))
}

// convertTile maps Tile with constant repeats to graph.tile.
func convertTile(n *node) ([]*value, error) {
	if err := n.need(2, 2); err != nil {
		return nil, err
	}
	reps, err := n.constInts(1, "repeats")
	if err != nil {
		return nil, err
	}
	x := n.in(0)
	if len(reps) != x.typ().Rank() {
		return nil, n.errorf("repeats %v must have %d elements", reps, x.typ().Rank())
	}
	for _, r := range reps {
		if r < 0 {
			return nil, n.errorf("repeats %v must not be negative", reps)
		}
	}
	if x.isConst() {
		t, err := foldTile(x.tensor(), reps)
		if err != nil {
			return nil, n.errorf("%v", err)
		}
		return list(constValue(t, n.loc)), nil
	}
	return n.emit("graph.tile", list(x), attrs("repeats", graphir.I64Array(reps...)))
}

// convertConstant turns Constant into a constant value.
func convertConstant(n *node) ([]*value, error) {
	if err := n.need(0, 0); err != nil {
		return nil, err
	}
	if len(n.p.GetAttribute()) != 1 {
		return nil, n.errorf("needs exactly one value attribute, got %d attributes", len(n.p.GetAttribute()))
	}
	a := n.p.GetAttribute()[0]
	var t *graphir.Tensor
	switch a.GetName() {
	case "value":
		if err := n.checkKind(a, onnxpb.AttributeProto_TENSOR); err != nil {
			return nil, err
		}
		var err error
		if t, err = decodeTensor(a.GetT()); err != nil {
			return nil, n.errorf("%v", err)
		}
	case "value_float":
		t = graphir.NewZeroTensor(graphir.NewTensor(graphir.F32))
		t.Data[0] = float64(a.GetF())
	case "value_int":
		t = graphir.NewZeroTensor(graphir.NewTensor(graphir.I64))
		t.Data[0] = float64(a.GetI())
	case "value_floats":
		t = graphir.NewZeroTensor(graphir.NewTensor(graphir.F32, int64(len(a.GetFloats()))))
		for i, f := range a.GetFloats() {
			t.Data[i] = float64(f)
		}
	case "value_ints":
		t = int64Const(a.GetInts())
	default:
		return nil, n.errorf("unsupported attribute '%s'", a.GetName())
	}
	return list(constValue(t, n.loc)), nil
}

// convertConstantOfShape folds ConstantOfShape (constant shape input,
// optional one-element value tensor, default f32 0).
func convertConstantOfShape(n *node) ([]*value, error) {
	if err := n.need(1, 1); err != nil {
		return nil, err
	}
	shape, err := n.constInts(0, "shape")
	if err != nil {
		return nil, err
	}
	dt, fill := graphir.F32, 0.0
	if a := n.attr("value"); a != nil {
		if err := n.checkKind(a, onnxpb.AttributeProto_TENSOR); err != nil {
			return nil, err
		}
		v, err := decodeTensor(a.GetT())
		if err != nil {
			return nil, n.errorf("%v", err)
		}
		if len(v.Data) != 1 {
			return nil, n.errorf("value must hold one element, got %s", v.Type)
		}
		dt, fill = v.Type.Elem, v.Data[0]
	}
	t, err := newConst(dt, shape)
	if err != nil {
		return nil, n.errorf("%v", err)
	}
	for i := range t.Data {
		t.Data[i] = fill
	}
	return list(constValue(t, n.loc)), nil
}

// convertShape folds Shape (with opset-15 start/end) and Size: to a
// constant over static dimensions, to a shape value over symbolic ones
// (shapeValueOf).
func convertShape(n *node) ([]*value, error) {
	if err := n.need(1, 1); err != nil {
		return nil, err
	}
	x, err := shapeValueOf(n, n.in(0).typ())
	return list(x), err
}

// convertRange folds Range over constant scalar inputs.
func convertRange(n *node) ([]*value, error) {
	if err := n.need(3, 3); err != nil {
		return nil, err
	}
	var v [3]float64
	for i, what := range []string{"start", "limit", "delta"} {
		t, err := n.constInput(i, what)
		if err != nil {
			return nil, err
		}
		if len(t.Data) != 1 {
			return nil, n.errorf("%s must be a scalar, got %s", what, t.Type)
		}
		v[i] = t.Data[0]
	}
	dt := n.in(0).typ().Elem
	if dt.IsInt() && (math.Abs(v[0]) > 1<<53 || math.Abs(v[1]) > 1<<53) {
		return nil, n.errorf("range bounds are too large")
	}
	t, err := foldRange(v[0], v[1], v[2], dt)
	if err != nil {
		return nil, n.errorf("%v", err)
	}
	return list(constValue(t, n.loc)), nil
}
