package graph

import (
	"fmt"
	"math"

	"github.com/tessera-ml/tessera/graphir"

	"github.com/tessera-ml/tessera/dialects/hlo"
)

// Data-movement ops with static attributes (ONNX opset 18 semantics, the
// tensor-valued inputs of ONNX given as attributes).
//
//	graph.split(x) {axis = 0, split = [s0, s1, ...], num_outputs = n}
//	  → one result per piece (ONNX Split). With split, the sizes are ≥ 0
//	  and sum to dim(axis). Without it the piece count is num_outputs, else
//	  the number of written results; pieces have ⌈d/n⌉ elements, the last
//	  one the remainder (≥ 0).
//	graph.slice(x) {starts, ends (required), axes = [0..k-1], steps = [1...]}
//	  (ONNX Slice): negative starts/ends add dim(axis); then for step > 0
//	  start and end clamp to [0, d], for step < 0 start to [0, d−1] and end
//	  to [−1, d−1]; size = max(0, ⌈(end − start)/step⌉). steps ≠ 0; axes in
//	  [−r, r−1], distinct.
//	graph.gather(x) {axis = 0, indices = dense<...> : tensor<...xi64>}
//	  (ONNX Gather with constant indices of any integer type and rank):
//	  indices in [−d, d−1], negative ones wrap; result shape
//	  x.shape[:axis] ++ indices.shape ++ x.shape[axis+1:]. With runtime
//	  indices, graph.gather(x, indices) {axis}: see gather.go.
//	graph.pad(x) {pads = [b0, ..., b(r−1), e0, ..., e(r−1)] (required),
//	  mode = "constant" | "reflect" | "edge", value = 0.0} (ONNX Pad):
//	  dim i becomes d + b_i + e_i. Negative pads crop; cropping happens
//	  first (as ONNX Runtime), then reflect/edge pad from the cropped
//	  tensor. The crop may not exceed d, and reflect and edge need a
//	  non-empty cropped dimension where they pad. Reflect mirrors without
//	  repeating the edge, and keeps mirroring when a pad exceeds d' − 1
//	  (NumPy's pad, which ONNX's reference uses: the periodic extension of
//	  x0 … x(d'−1) x(d'−2) … x1); a dimension of size 1 repeats its element.
//	graph.expand(x) {shape = [...] (required)} (ONNX Expand): result =
//	  NumPy broadcast of x's shape with shape (bidirectional: a 1 in shape
//	  keeps x's dim); entries ≥ 0.
//	graph.tile(x) {repeats = [...] (required)} (ONNX Tile): one entry ≥ 0
//	  per dim, dim i becomes d_i · repeats_i.
//
// All accept any element type; results keep it.
const (
	SplitOp  = "graph.split"
	SliceOp  = "graph.slice"
	GatherOp = "graph.gather"
	PadOp    = "graph.pad"
	ExpandOp = "graph.expand"
	TileOp   = "graph.tile"
)

// PadModes are the values of graph.pad's mode attribute.
var PadModes = []string{"constant", "reflect", "edge"}

func init() {
	register(&graphir.OpDef{
		Name:     SplitOp,
		Summary:  "split along axis into pieces (ONNX Split)",
		Operands: graphir.Exactly(1),
		Results:  graphir.AtLeast(1),
		Traits:   graphir.Pure,
		Attrs: []graphir.AttrSpec{
			{Name: "axis", Kind: graphir.KindInt, Default: graphir.IntAttr(0)},
			{Name: "split", Kind: graphir.KindIntArray},
			{Name: "num_outputs", Kind: graphir.KindInt},
		},
		Infer:  inferSplit,
		Eval:   evalSplit,
		Pretty: true,
	}, Conversions{Legalize: legalizeSplit})
	register(&graphir.OpDef{
		Name:     SliceOp,
		Summary:  "strided slice with ONNX clamping and negative indices (ONNX Slice)",
		Operands: graphir.Exactly(1),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Attrs: []graphir.AttrSpec{
			{Name: "starts", Kind: graphir.KindIntArray, Required: true},
			{Name: "ends", Kind: graphir.KindIntArray, Required: true},
			{Name: "axes", Kind: graphir.KindIntArray},
			{Name: "steps", Kind: graphir.KindIntArray},
		},
		Symbolic: true,
		Infer:    inferSlice,
		Eval:     evalSlice,
		Pretty:   true,
	}, Conversions{Legalize: legalizeSlice, Symbolic: true})
	register(&graphir.OpDef{
		Name:     GatherOp,
		Summary:  "take constant or runtime indices along axis (ONNX Gather)",
		Operands: graphir.Arity{Min: 1, Max: 2},
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Attrs: []graphir.AttrSpec{
			{Name: "axis", Kind: graphir.KindInt, Default: graphir.IntAttr(0)},
			{Name: "indices", Kind: graphir.KindDense},
		},
		Infer:  inferGather,
		Eval:   evalGather,
		Pretty: true,
	}, Conversions{Legalize: legalizeGather})
	register(&graphir.OpDef{
		Name:     PadOp,
		Summary:  "pad or crop each dimension, constant/reflect/edge (ONNX Pad)",
		Operands: graphir.Exactly(1),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Attrs: []graphir.AttrSpec{
			{Name: "pads", Kind: graphir.KindIntArray, Required: true},
			{Name: "mode", Kind: graphir.KindEnum, Enum: PadModes, Default: graphir.StringAttr("constant")},
			{Name: "value", Kind: graphir.KindFloat, Default: graphir.F32Attr(0)},
		},
		Infer:  inferPad,
		Eval:   evalPad,
		Pretty: true,
	}, Conversions{Legalize: legalizePad})
	register(&graphir.OpDef{
		Name:     ExpandOp,
		Summary:  "bidirectional broadcast to a shape (ONNX Expand)",
		Operands: graphir.Exactly(1),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Attrs:    []graphir.AttrSpec{{Name: "shape", Kind: graphir.KindIntArray, Required: true}},
		Infer:    inferExpand,
		Eval:     evalExpand,
		Pretty:   true,
	}, Conversions{Legalize: legalizeExpand})
	register(&graphir.OpDef{
		Name:     TileOp,
		Summary:  "repeat the tensor along every dimension (ONNX Tile)",
		Operands: graphir.Exactly(1),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Attrs:    []graphir.AttrSpec{{Name: "repeats", Kind: graphir.KindIntArray, Required: true}},
		Infer:    inferTile,
		Eval:     evalTile,
		Pretty:   true,
	}, Conversions{Legalize: legalizeTile})
}

// ---- split

// SplitSizes returns the normalized axis and the piece sizes of a
// graph.split of shape (see the op's comment for the rules).
func SplitSizes(op *graphir.Op, shape []int64) (int, []int64, error) {
	if len(shape) == 0 {
		return 0, nil, op.Errorf("input must have rank at least 1")
	}
	axis, err := op.Int("axis")
	if err != nil {
		return 0, nil, err
	}
	ax, err := normAxis(op, axis, len(shape))
	if err != nil {
		return 0, nil, err
	}
	d := shape[ax]
	if op.Attr("split") != nil {
		if op.Attr("num_outputs") != nil {
			return 0, nil, op.Errorf("takes 'split' or 'num_outputs', not both")
		}
		sizes, err := op.Ints("split")
		if err != nil {
			return 0, nil, err
		}
		if len(sizes) == 0 {
			return 0, nil, op.Errorf("'split' must have at least one entry")
		}
		sum := int64(0)
		for _, s := range sizes {
			if s < 0 {
				return 0, nil, op.Errorf("split sizes %s must be non-negative", shapeString(sizes))
			}
			sum += s
		}
		if sum != d {
			return 0, nil, op.Errorf("split sizes %s sum to %d, but dimension %d has size %d", shapeString(sizes), sum, ax, d)
		}
		return ax, sizes, nil
	}
	n := int64(len(op.Results))
	if op.Attr("num_outputs") != nil {
		if n, err = op.Int("num_outputs"); err != nil {
			return 0, nil, err
		}
	}
	if n < 1 {
		return 0, nil, op.Errorf("needs 'split', 'num_outputs' or at least one result to know the pieces")
	}
	if n > 1<<20 {
		return 0, nil, op.Errorf("cannot split dimension %d of size %d into %d pieces", ax, d, n)
	}
	chunk := (d + n - 1) / n
	sizes := make([]int64, n)
	for i := range sizes {
		sizes[i] = chunk
	}
	sizes[n-1] = d - chunk*(n-1)
	if sizes[n-1] < 0 {
		return 0, nil, op.Errorf("cannot split dimension %d of size %d into %d pieces of %d", ax, d, n, chunk)
	}
	return ax, sizes, nil
}

func inferSplit(op *graphir.Op) ([]graphir.Type, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	ax, sizes, err := SplitSizes(op, ts[0].Shape)
	if err != nil {
		return nil, err
	}
	out := make([]graphir.Type, len(sizes))
	for i, s := range sizes {
		shape := append([]int64(nil), ts[0].Shape...)
		shape[ax] = s
		out[i] = &graphir.TensorType{Shape: shape, Elem: ts[0].Elem}
	}
	return out, nil
}

func evalSplit(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	if err := checkArgs(op, args); err != nil {
		return nil, err
	}
	x := args[0]
	ax, sizes, err := SplitSizes(op, x.Shape())
	if err != nil {
		return nil, err
	}
	tys, err := inferSplit(op)
	if err != nil {
		return nil, err
	}
	outs := make([]*graphir.Tensor, len(sizes))
	at := int64(0)
	for i, t := range tys {
		out := graphir.NewZeroTensor(graphir.AsTensor(t))
		off := at
		mapElements(out, x, func(o, in []int64) bool {
			copy(in, o)
			in[ax] += off
			return true
		}, 0)
		outs[i] = out
		at += sizes[i]
	}
	return outs, nil
}

// mapElements fills out from x: for each output index o, src sets the
// input index in and returns true, or returns false for a padding element,
// which gets pad.
func mapElements(out, x *graphir.Tensor, src func(o, in []int64) bool, pad float64) {
	oshape := out.Shape()
	st := graphir.Strides(x.Shape())
	o := make([]int64, len(oshape))
	in := make([]int64, x.Type.Rank())
	for k := range out.Data {
		rem := int64(k)
		for d := len(oshape) - 1; d >= 0; d-- {
			o[d] = rem % oshape[d]
			rem /= oshape[d]
		}
		if !src(o, in) {
			out.Data[k] = pad
			continue
		}
		off := int64(0)
		for d, i := range in {
			off += i * st[d]
		}
		out.Data[k] = x.Data[off]
	}
}

// ---- slice

// SliceParams resolves a graph.slice on shape into per-dimension start,
// step and size after ONNX clamping (dims not in axes: 0, 1, full size).
func SliceParams(op *graphir.Op, shape []int64) (start, step, size []int64, err error) {
	r := len(shape)
	for _, n := range []string{"starts", "ends"} {
		if op.Attr(n) == nil {
			return nil, nil, nil, op.Errorf("requires attribute '%s'", n)
		}
	}
	starts, err := op.Ints("starts")
	if err != nil {
		return nil, nil, nil, err
	}
	k := len(starts)
	ends, err := op.Ints("ends")
	if err != nil {
		return nil, nil, nil, err
	}
	if len(ends) != k {
		return nil, nil, nil, op.Errorf("starts %s and ends %s must have the same length", shapeString(starts), shapeString(ends))
	}
	axes, err := intsOr(op, "axes", iota64n(k))
	if err != nil {
		return nil, nil, nil, err
	}
	if len(axes) != k {
		return nil, nil, nil, op.Errorf("axes %s must have %d entries (the length of starts)", shapeString(axes), k)
	}
	ones := make([]int64, k)
	for i := range ones {
		ones[i] = 1
	}
	steps, err := intsOr(op, "steps", ones)
	if err != nil {
		return nil, nil, nil, err
	}
	if len(steps) != k {
		return nil, nil, nil, op.Errorf("steps %s must have %d entries (the length of starts)", shapeString(steps), k)
	}
	start, step, size = make([]int64, r), make([]int64, r), append([]int64(nil), shape...)
	for i := range step {
		step[i] = 1
	}
	seen := make([]bool, r)
	for i, a := range axes {
		ax, err := normAxis(op, a, r)
		if err != nil {
			return nil, nil, nil, err
		}
		if seen[ax] {
			return nil, nil, nil, op.Errorf("axes %s names dimension %d more than once", shapeString(axes), ax)
		}
		seen[ax] = true
		if steps[i] == 0 {
			return nil, nil, nil, op.Errorf("steps %s must be non-zero", shapeString(steps))
		}
		start[ax], step[ax], size[ax] = clampSlice(starts[i], ends[i], steps[i], shape[ax])
	}
	return start, step, size, nil
}

// clampSlice applies ONNX Slice's rules to one axis of size d.
func clampSlice(s, e, st, d int64) (start, step, size int64) {
	if s < 0 {
		s += d
	}
	if e < 0 {
		e += d
	}
	if st > 0 {
		s, e = min(max(s, 0), d), min(max(e, 0), d)
		if e <= s {
			return 0, st, 0
		}
		return s, st, (e - s + st - 1) / st
	}
	if d == 0 {
		return 0, st, 0
	}
	s, e = min(max(s, 0), d-1), min(max(e, -1), d-1)
	if s <= e {
		return 0, st, 0
	}
	return s, st, (s - e - st - 1) / -st
}

func iota64n(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}

func inferSlice(op *graphir.Op) ([]graphir.Type, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	_, _, size, err := SliceParams(op, ts[0].Shape)
	if err != nil {
		return nil, err
	}
	if !ts[0].IsStatic() {
		return sliceSymbolic(op, ts[0], size)
	}
	return one(&graphir.TensorType{Shape: size, Elem: ts[0].Elem}), nil
}

// sliceSymbolic is inferSlice's result for an input x with symbolic
// dimensions, size being SliceParams' sizes for the static ones: a
// symbolic dimension the slice leaves alone keeps its expression, one it
// slices from a constant start s ≥ 0 to the end (an end of at least
// 2^31−1, ONNX's idiom for "to the end") with step 1 becomes d − s; any
// other slice of a symbolic dimension depends on the clamping of its
// value and is refused with the --fix-dim hint.
func sliceSymbolic(op *graphir.Op, x *graphir.TensorType, size []int64) ([]graphir.Type, error) {
	starts, _ := op.Ints("starts")
	ends, _ := op.Ints("ends")
	axes, _ := intsOr(op, "axes", iota64n(len(starts)))
	steps, _ := intsOr(op, "steps", nil)
	dims := make([]*graphir.SymExpr, x.Rank())
	for d := range dims {
		dims[d] = graphir.SymConst(size[d])
		if x.Sym[d] != nil {
			dims[d] = x.Sym[d]
		}
	}
	for i, a := range axes {
		ax, _ := normAxis(op, a, x.Rank())
		if x.Sym[ax] == nil {
			continue
		}
		step := int64(1)
		if steps != nil {
			step = steps[i]
		}
		if step != 1 || starts[i] < 0 || ends[i] < math.MaxInt32 {
			return nil, symbolicRefusal(op, x.Sym[ax], fmt.Sprintf("dimension %d of %s, sliced from %d to %d by %d,", ax, x, starts[i], ends[i], step))
		}
		dims[ax] = x.Sym[ax].AddConst(-starts[i])
	}
	return one(graphir.NewTensorDims(x.Elem, dims...)), nil
}

func evalSlice(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	start, step, _, err := SliceParams(op, args[0].Shape())
	if err != nil {
		return nil, err
	}
	mapElements(out, args[0], func(o, in []int64) bool {
		for d := range o {
			in[d] = start[d] + o[d]*step[d]
		}
		return true
	}, 0)
	return []*graphir.Tensor{out}, nil
}

// ---- gather

// GatherIndices returns the normalized axis, the indices (wrapped into
// [0, d)) in row-major order and the indices' shape of a graph.gather on shape.
func GatherIndices(op *graphir.Op, shape []int64) (int, []int64, []int64, error) {
	if len(shape) == 0 {
		return 0, nil, nil, op.Errorf("input must have rank at least 1")
	}
	axis, err := op.Int("axis")
	if err != nil {
		return 0, nil, nil, err
	}
	ax, err := normAxis(op, axis, len(shape))
	if err != nil {
		return 0, nil, nil, err
	}
	a := op.Attr("indices")
	if a == nil {
		return 0, nil, nil, op.Errorf("requires attribute 'indices'")
	}
	dense, ok := a.(*graphir.DenseElementsAttr)
	if !ok || dense.Type == nil {
		return 0, nil, nil, op.Errorf("attribute 'indices' must be dense integer elements, got %s", graphir.FormatAttr(a))
	}
	if !dense.Type.Elem.IsInt() || dense.Type.Elem == graphir.I1 {
		return 0, nil, nil, op.Errorf("indices must have an integer element type, got %s", dense.Type)
	}
	if dense.Elided {
		return 0, nil, nil, op.Errorf("indices data %s", graphir.ElidedHint)
	}
	if int64(dense.Len()) != dense.Type.NumElements() && !dense.IsSplat() {
		return 0, nil, nil, op.Errorf("indices hold %d values for %s", dense.Len(), dense.Type)
	}
	d := shape[ax]
	n := dense.Type.NumElements()
	idx := make([]int64, n)
	for i := range idx {
		v := int64(dense.At(int(i)))
		if v < -d || v >= d {
			return 0, nil, nil, op.Errorf("index %d is out of range for dimension %d of size %d (expected [%d, %d])", v, ax, d, -d, d-1)
		}
		if v < 0 {
			v += d
		}
		idx[i] = v
	}
	return ax, idx, dense.Type.Shape, nil
}

func inferGather(op *graphir.Op) ([]graphir.Type, error) {
	if op.NumOperands() == 2 {
		return inferGatherRuntime(op)
	}
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	ax, _, ishape, err := GatherIndices(op, ts[0].Shape)
	if err != nil {
		return nil, err
	}
	s := ts[0].Shape
	shape := append(append(append([]int64{}, s[:ax]...), ishape...), s[ax+1:]...)
	return one(&graphir.TensorType{Shape: shape, Elem: ts[0].Elem}), nil
}

func evalGather(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	if op.NumOperands() == 2 {
		return evalGatherRuntime(op, args)
	}
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	x := args[0]
	ax, idx, ishape, err := GatherIndices(op, x.Shape())
	if err != nil {
		return nil, err
	}
	q := len(ishape)
	ist := graphir.Strides(ishape)
	mapElements(out, x, func(o, in []int64) bool {
		copy(in[:ax], o[:ax])
		k := int64(0)
		for j := 0; j < q; j++ {
			k += o[ax+j] * ist[j]
		}
		in[ax] = idx[k]
		copy(in[ax+1:], o[ax+q:])
		return true
	}, 0)
	return []*graphir.Tensor{out}, nil
}

// ---- pad

// PadConfig is a resolved graph.pad: per-dimension begin and end pads,
// the mode and the constant value.
type PadConfig struct {
	Begin, End []int64
	Mode       string
	Value      float64
}

// PadParams validates a graph.pad on shape.
func PadParams(op *graphir.Op, shape []int64) (*PadConfig, error) {
	r := len(shape)
	if op.Attr("pads") == nil {
		return nil, op.Errorf("requires attribute 'pads'")
	}
	pads, err := op.Ints("pads")
	if err != nil {
		return nil, err
	}
	if len(pads) != 2*r {
		return nil, op.Errorf("pads %s must have %d entries (2 × rank %d)", shapeString(pads), 2*r, r)
	}
	c := &PadConfig{Begin: pads[:r], End: pads[r:], Mode: "constant"}
	if a := op.Attr("mode"); a != nil {
		s, ok := a.(graphir.StringAttr)
		if !ok || (s != "constant" && s != "reflect" && s != "edge") {
			return nil, op.Errorf("mode must be \"constant\", \"reflect\" or \"edge\", got %s", graphir.FormatAttr(a))
		}
		c.Mode = string(s)
	}
	if c.Value, err = op.Float("value"); err != nil {
		return nil, err
	}
	for i, d := range shape {
		b, e := c.Begin[i], c.End[i]
		if b < -math.MaxInt32 || e < -math.MaxInt32 || b > math.MaxInt32 || e > math.MaxInt32 {
			return nil, op.Errorf("pads %s are too large", shapeString(pads))
		}
		crop := -min(b, 0) - min(e, 0)
		if crop > d {
			return nil, op.Errorf("pads crop %d elements from dimension %d of size %d", crop, i, d)
		}
		dc := d - crop
		if c.Mode != "constant" && max(b, e) > 0 && dc == 0 {
			return nil, op.Errorf("%s pad of dimension %d needs a non-empty dimension", c.Mode, i)
		}
	}
	return c, nil
}

func inferPad(op *graphir.Op) ([]graphir.Type, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	c, err := PadParams(op, ts[0].Shape)
	if err != nil {
		return nil, err
	}
	shape := make([]int64, ts[0].Rank())
	for i, d := range ts[0].Shape {
		shape[i] = d + c.Begin[i] + c.End[i]
	}
	return one(&graphir.TensorType{Shape: shape, Elem: ts[0].Elem}), nil
}

// PadSource maps position o of the padded dimension (begin b, end e) of
// an input dimension of size d to the input index, or −1 for a constant
// element: crop first, then pad the cropped range [c0, c0 + dc).
func PadSource(o, b, e, d int64, mode string) int64 {
	c0 := -min(b, 0)
	dc := d - c0 + min(e, 0)
	p := o - max(b, 0)
	switch {
	case p >= 0 && p < dc:
	case mode == "reflect" && dc > 1:
		period := 2 * (dc - 1)
		if p = p % period; p < 0 {
			p += period
		}
		if p >= dc {
			p = period - p
		}
	case mode == "reflect":
		p = 0
	case mode == "edge":
		p = min(max(p, 0), dc-1)
	default:
		return -1
	}
	return c0 + p
}

func evalPad(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	x := args[0]
	c, err := PadParams(op, x.Shape())
	if err != nil {
		return nil, err
	}
	mapElements(out, x, func(o, in []int64) bool {
		for d := range o {
			s := PadSource(o[d], c.Begin[d], c.End[d], x.Shape()[d], c.Mode)
			if s < 0 {
				return false
			}
			in[d] = s
		}
		return true
	}, graphir.RoundTo(x.Type.Elem, c.Value))
	return []*graphir.Tensor{out}, nil
}

// ---- expand

func inferExpand(op *graphir.Op) ([]graphir.Type, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	if op.Attr("shape") == nil {
		return nil, op.Errorf("requires attribute 'shape'")
	}
	shape, err := op.Ints("shape")
	if err != nil {
		return nil, err
	}
	for _, d := range shape {
		if d < 0 {
			return nil, op.Errorf("shape %s must not have negative entries", shapeString(shape))
		}
	}
	out, err := BroadcastShapes(ts[0].Shape, shape)
	if err != nil {
		return nil, op.Errorf("cannot expand %s to shape %s: %v", ts[0], shapeString(shape), err)
	}
	return one(&graphir.TensorType{Shape: out, Elem: ts[0].Elem}), nil
}

func evalExpand(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	x := args[0]
	xs := x.Shape()
	off := out.Type.Rank() - len(xs)
	mapElements(out, x, func(o, in []int64) bool {
		for d := range in {
			if xs[d] != 1 {
				in[d] = o[off+d]
			} else {
				in[d] = 0
			}
		}
		return true
	}, 0)
	return []*graphir.Tensor{out}, nil
}

// ---- tile

func inferTile(op *graphir.Op) ([]graphir.Type, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	if op.Attr("repeats") == nil {
		return nil, op.Errorf("requires attribute 'repeats'")
	}
	reps, err := op.Ints("repeats")
	if err != nil {
		return nil, err
	}
	if len(reps) != ts[0].Rank() {
		return nil, op.Errorf("repeats %s must have %d entries (the input rank)", shapeString(reps), ts[0].Rank())
	}
	shape := make([]int64, len(reps))
	for i, r := range reps {
		if r < 0 || r > math.MaxInt32 {
			return nil, op.Errorf("repeats %s must be in [0, 2^31)", shapeString(reps))
		}
		shape[i] = ts[0].Shape[i] * r
	}
	return one(&graphir.TensorType{Shape: shape, Elem: ts[0].Elem}), nil
}

func evalTile(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	xs := args[0].Shape()
	mapElements(out, args[0], func(o, in []int64) bool {
		for d := range in {
			in[d] = o[d] % xs[d]
		}
		return true
	}, 0)
	return []*graphir.Tensor{out}, nil
}

// Legalization. Taking a constant list of indices along an axis ("take")
// is built from slices when the list has at most maxTakePieces runs: the
// list is cut into maximal runs, an ascending run with a constant stride
// ≥ 1 is one strided hlo.slice, a run of one repeated index is a 1-element
// hlo.slice broadcast (hlo.broadcast_in_dim) to the run length, and the
// pieces are joined by one hlo.concatenate (a select chain in tensor IR).
// A longer list (a reversal, a permutation) is one hlo.gather of the
// constant list, one data-dependent load per element.
//
//	graph.split(x) {axis, split} → one hlo.slice per piece
//	graph.slice(x) {starts, ends, axes, steps} → one hlo.slice with the
//	    clamped starts and limits and |steps| as strides (dims in ascending
//	    order; nothing when it is the identity); each negative-step dim is
//	    then reversed with a take of indices n−1, ..., 0
//	graph.gather(x) {axis, indices} → take of the flattened (wrapped)
//	    indices along axis, then hlo.reshape to x[:axis] ++ indices.shape
//	    ++ x[axis+1:]
//	graph.pad(x) constant → hlo.pad (negative pads crop; the value is a
//	    rank-0 hlo.constant); reflect / edge → per padded dim: hlo.slice
//	    for the crop, then hlo.concatenate of the left take (reflect:
//	    indices b, ..., 1; edge: index 0 broadcast b times), the cropped
//	    tensor and the right take
//	graph.expand(x) {shape} → hlo.broadcast_in_dim (right-aligned dims)
//	graph.tile(x) {repeats} → hlo.broadcast_in_dim of x (d0, ..., dk) to
//	    (r0, d0, ..., rk, dk) with dims [1, 3, ...], hlo.reshape to
//	    (r0·d0, ..., rk·dk); nothing when every repeat is 1

// hloSlice creates hlo.slice of x with explicit start, limit and strides,
// or returns x when the slice is the identity.
func (b *builder) hloSlice(x *graphir.Value, start, limit, strides []int64) (*graphir.Value, error) {
	t := graphir.AsTensor(x.Type)
	identity := true
	for i := range start {
		full := limit[i] == t.Shape[i] || limit[i] == hlo.SliceToEnd
		identity = identity && start[i] == 0 && full && strides[i] == 1
	}
	if identity {
		return x, nil
	}
	return b.insert(hlo.Slice(x, start, limit, strides, b.src.Loc))
}

// hloConcat joins xs along dim with hlo.concatenate (xs itself when there
// is one piece).
func (b *builder) hloConcat(xs []*graphir.Value, dim int) (*graphir.Value, error) {
	if len(xs) == 1 {
		return xs[0], nil
	}
	return b.insert(hlo.Concatenate(xs, int64(dim), b.src.Loc))
}

// axisSlice slices x along dim alone: [start, start + (n−1)·stride + 1)
// with stride, full range elsewhere.
func (b *builder) axisSlice(x *graphir.Value, dim int, start, n, stride int64) (*graphir.Value, error) {
	t := graphir.AsTensor(x.Type)
	st, lim, str := make([]int64, t.Rank()), append([]int64(nil), t.Shape...), make([]int64, t.Rank())
	for i := range str {
		str[i] = 1
	}
	st[dim], str[dim] = start, stride
	lim[dim] = start
	if n > 0 {
		lim[dim] = start + (n-1)*stride + 1
	}
	return b.hloSlice(x, st, lim, str)
}

// takePieces returns the pieces whose concatenation along dim is x taken
// at idx (all in range) along dim; see the comment above.
func (b *builder) takePieces(x *graphir.Value, dim int, idx []int64) ([]*graphir.Value, error) {
	if len(idx) == 0 {
		v, err := b.axisSlice(x, dim, 0, 0, 1)
		return []*graphir.Value{v}, err
	}
	t := graphir.AsTensor(x.Type)
	var pieces []*graphir.Value
	for k := 0; k < len(idx); {
		n, step := takeRun(idx, k)
		var p *graphir.Value
		var err error
		if step == 0 {
			one, err := b.axisSlice(x, dim, idx[k], 1, 1)
			if err != nil {
				return nil, err
			}
			shape := append([]int64(nil), t.Shape...)
			shape[dim] = n
			p, err = b.broadcastInDim(one, shape, iota64(0, t.Rank()))
			if err != nil {
				return nil, err
			}
		} else if p, err = b.axisSlice(x, dim, idx[k], n, step); err != nil {
			return nil, err
		}
		pieces = append(pieces, p)
		k += int(n)
	}
	return pieces, nil
}

// takeRun is the length and stride of the run of idx starting at k: an
// ascending run with a constant stride (0: a repeated index), else 1.
func takeRun(idx []int64, k int) (n, step int64) {
	n, step = 1, 1
	if k+1 < len(idx) && idx[k+1] >= idx[k] {
		step = idx[k+1] - idx[k]
		for k+int(n) < len(idx) && idx[k+int(n)]-idx[k+int(n)-1] == step {
			n++
		}
	}
	return n, step
}

// maxTakePieces is the most pieces a take is built from; a longer list
// (a reversal, a permutation) is one hlo.gather of a constant index list.
const maxTakePieces = 4

// take is x taken at idx along dim, as one value.
func (b *builder) take(x *graphir.Value, dim int, idx []int64) (*graphir.Value, error) {
	runs := 0
	for k := 0; k < len(idx); runs++ {
		n, _ := takeRun(idx, k)
		k += int(n)
	}
	if runs > maxTakePieces {
		return b.gatherConstant(x, dim, idx)
	}
	ps, err := b.takePieces(x, dim, idx)
	if err != nil {
		return nil, err
	}
	return b.hloConcat(ps, dim)
}

func legalizeSplit(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x := op.Operand(0)
	ax, sizes, err := SplitSizes(op, graphir.AsTensor(x.Type).Shape)
	if err != nil {
		return nil, err
	}
	var out []*graphir.Value
	at := int64(0)
	for _, s := range sizes {
		p, err := b.axisSlice(x, ax, at, s, 1)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
		at += s
	}
	return out, nil
}

func legalizeSlice(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x := op.Operand(0)
	xt := graphir.AsTensor(x.Type)
	start, step, size, err := SliceParams(op, xt.Shape)
	if err != nil {
		return nil, err
	}
	r := xt.Rank()
	st, lim, str := make([]int64, r), make([]int64, r), make([]int64, r)
	var reversed []int
	for i := 0; i < r; i++ {
		s, n := step[i], size[i]
		if s < 0 && n > 0 {
			// The same elements in ascending order: the last one taken first.
			s = -s
			start[i] -= (n - 1) * s
			if n > 1 {
				reversed = append(reversed, i)
			}
		}
		if s < 0 {
			s = -s
		}
		st[i], str[i], lim[i] = start[i], s, start[i]
		if n > 0 {
			lim[i] = start[i] + (n-1)*s + 1
		}
	}
	if err := symbolicSliceBounds(op, xt, st, lim, str); err != nil {
		return nil, err
	}
	y, err := b.hloSlice(x, st, lim, str)
	if err != nil {
		return nil, err
	}
	for _, d := range reversed {
		rev := make([]int64, size[d])
		for k := range rev {
			rev[k] = size[d] - 1 - int64(k)
		}
		if y, err = b.take(y, d, rev); err != nil {
			return nil, err
		}
	}
	return []*graphir.Value{y}, nil
}

// symbolicSliceBounds sets the hlo.slice bounds of x's symbolic
// dimensions (SliceParams computes garbage for them): inference allows
// only a slice from a constant start s to the end with step 1 there, so
// s is the dimension less the result's, and the limit is hlo.SliceToEnd.
func symbolicSliceBounds(op *graphir.Op, x *graphir.TensorType, start, limit, stride []int64) error {
	if x.IsStatic() {
		return nil
	}
	rt := graphir.AsTensor(op.Results[0].Type)
	for i, e := range x.Sym {
		if e == nil {
			continue
		}
		s, ok := e.Sub(rt.Dim(i)).Const()
		if !ok || s < 0 {
			return symbolicRefusal(op, e, fmt.Sprintf("dimension %d of %s, sliced to %s,", i, x, rt.Dim(i)))
		}
		start[i], limit[i], stride[i] = s, hlo.SliceToEnd, 1
	}
	return nil
}

func legalizeGather(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	if op.NumOperands() == 2 {
		return legalizeGatherRuntime(op, b)
	}
	x := op.Operand(0)
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	ax, idx, _, err := GatherIndices(op, graphir.AsTensor(x.Type).Shape)
	if err != nil {
		return nil, err
	}
	y, err := b.take(x, ax, idx)
	if err != nil {
		return nil, err
	}
	y, err = b.reshape(y, rt.Shape)
	return []*graphir.Value{y}, err
}

func legalizePad(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x := op.Operand(0)
	xt := graphir.AsTensor(x.Type)
	c, err := PadParams(op, xt.Shape)
	if err != nil {
		return nil, err
	}
	if c.Mode == "constant" {
		v, err := b.scalar(xt.Elem, c.Value)
		if err != nil {
			return nil, err
		}
		y, err := b.insert(hlo.Pad(x, v, c.Begin, c.End, make([]int64, xt.Rank()), op.Loc))
		return []*graphir.Value{y}, err
	}
	y := x
	for d := 0; d < xt.Rank(); d++ {
		if y, err = b.padDim(y, xt.Shape[d], d, c); err != nil {
			return nil, err
		}
	}
	return []*graphir.Value{y}, nil
}

// padDim pads (reflect or edge) or crops y along dimension d of original
// size n: crop first, then concatenate the left take, the cropped tensor
// and the right take.
func (b *builder) padDim(y *graphir.Value, n int64, d int, c *PadConfig) (*graphir.Value, error) {
	lo, hi := c.Begin[d], c.End[d]
	if lo == 0 && hi == 0 {
		return y, nil
	}
	c0 := -min(lo, 0)
	dc := n - c0 + min(hi, 0)
	y, err := b.axisSlice(y, d, c0, dc, 1)
	if err != nil {
		return nil, err
	}
	var left, right []int64
	for k := int64(0); k < max(lo, 0); k++ {
		left = append(left, PadSource(k, max(lo, 0), 0, dc, c.Mode))
	}
	for k := int64(0); k < max(hi, 0); k++ {
		right = append(right, PadSource(max(lo, 0)+dc+k, max(lo, 0), max(hi, 0), dc, c.Mode))
	}
	var pieces []*graphir.Value
	if len(left) > 0 {
		ps, err := b.takePieces(y, d, left)
		if err != nil {
			return nil, err
		}
		pieces = append(pieces, ps...)
	}
	pieces = append(pieces, y)
	if len(right) > 0 {
		ps, err := b.takePieces(y, d, right)
		if err != nil {
			return nil, err
		}
		pieces = append(pieces, ps...)
	}
	return b.hloConcat(pieces, d)
}

func legalizeExpand(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	y, err := b.broadcastTo(op.Operand(0), rt.Shape)
	return []*graphir.Value{y}, err
}

func legalizeTile(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x := op.Operand(0)
	xt := graphir.AsTensor(x.Type)
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	reps, err := op.Ints("repeats")
	if err != nil {
		return nil, err
	}
	all1 := true
	var wide, dims []int64
	for i, r := range reps {
		all1 = all1 && r == 1
		wide = append(wide, r, xt.Shape[i])
		dims = append(dims, int64(2*i+1))
	}
	if all1 {
		return []*graphir.Value{x}, nil
	}
	y, err := b.broadcastInDim(x, wide, dims)
	if err != nil {
		return nil, err
	}
	y, err = b.reshape(y, rt.Shape)
	return []*graphir.Value{y}, err
}
