package graph

import (
	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// Gathers whose indices are a runtime tensor (an operand of any integer
// type), legalized to hlo.gather:
//
//	graph.gather(x, indices) {axis = 0} (ONNX Gather; the one-operand form
//	  with an `indices` attribute is in slice.go): result shape
//	  x.shape[:axis] ++ indices.shape ++ x.shape[axis+1:].
//	graph.gather_elements(x, indices) {axis = 0} (ONNX GatherElements):
//	  indices has x's rank and, except along axis, dims no larger than x's;
//	  result[i] = x[i with i[axis] = indices[i]], of indices' shape.
//	graph.gather_nd(x, indices) {batch_dims = 0} (ONNX GatherND): the last
//	  dim m of indices indexes x's dims batch_dims … batch_dims+m−1; the
//	  first batch_dims dims of x and indices match; result shape
//	  indices.shape[:-1] ++ x.shape[batch_dims+m:].
//
// Indices lie in [−d, d−1] and negative ones count from the end (ONNX).
// The reference evaluators report an out-of-range index as an error;
// compiled code clamps it into range (hlo.gather's semantics, as XLA and
// TVM's take in clip mode), so it never reads out of bounds.
const (
	GatherElementsOp = "graph.gather_elements"
	GatherNDOp       = "graph.gather_nd"
)

func init() {
	register(&graphir.OpDef{
		Name:     GatherElementsOp,
		Summary:  "take along one axis at per-element runtime indices (ONNX GatherElements)",
		Operands: graphir.Exactly(2),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Attrs:    []graphir.AttrSpec{{Name: "axis", Kind: graphir.KindInt, Default: graphir.IntAttr(0)}},
		Infer:    inferGatherElements,
		Eval:     evalGatherElements,
		Pretty:   true,
	}, Conversions{Legalize: legalizeGatherElements, ONNX: "GatherElements"})
	register(&graphir.OpDef{
		Name:     GatherNDOp,
		Summary:  "gather slices at runtime index vectors (ONNX GatherND)",
		Operands: graphir.Exactly(2),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Attrs:    []graphir.AttrSpec{{Name: "batch_dims", Kind: graphir.KindInt, Default: graphir.IntAttr(0)}},
		Infer:    inferGatherND,
		Eval:     evalGatherND,
		Pretty:   true,
	}, Conversions{Legalize: legalizeGatherND, ONNX: "GatherND"})
}

// indexTensors returns the data and index operand types, checking that
// the indices are integers.
func indexTensors(op *graphir.Op) (x, ind *graphir.TensorType, err error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, nil, err
	}
	if len(ts) != 2 {
		return nil, nil, op.Errorf("expects 2 operands (data, indices), got %d", len(ts))
	}
	if !ts[1].Elem.IsInt() || ts[1].Elem == graphir.I1 {
		return nil, nil, op.Errorf("indices must have an integer element type, got %s", ts[1])
	}
	return ts[0], ts[1], nil
}

// wrapIndex checks a runtime index against [−d, d−1] and wraps a negative
// one; the error names the position.
func wrapIndex(op *graphir.Op, v float64, d int64, dim int) (int64, error) {
	i := int64(v)
	if i < -d || i >= d {
		return 0, op.Errorf("index %d is out of range for dimension %d of size %d (expected [%d, %d])", i, dim, d, -d, d-1)
	}
	if i < 0 {
		i += d
	}
	return i, nil
}

// ---- graph.gather with an indices operand

func inferGatherRuntime(op *graphir.Op) ([]graphir.Type, error) {
	x, ind, err := indexTensors(op)
	if err != nil {
		return nil, err
	}
	if op.Attr("indices") != nil {
		return nil, op.Errorf("takes its indices from the attribute 'indices' or from a second operand, not both")
	}
	ax, err := gatherAxis(op, x)
	if err != nil {
		return nil, err
	}
	s := x.Shape
	shape := append(append(append([]int64{}, s[:ax]...), ind.Shape...), s[ax+1:]...)
	return one(graphir.NewTensor(x.Elem, shape...)), nil
}

func gatherAxis(op *graphir.Op, x *graphir.TensorType) (int, error) {
	if x.Rank() == 0 {
		return 0, op.Errorf("input must have rank at least 1")
	}
	axis, err := op.Int("axis")
	if err != nil {
		return 0, err
	}
	return normAxis(op, axis, x.Rank())
}

func evalGatherRuntime(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	x, ind := args[0], args[1]
	ax, err := gatherAxis(op, x.Type)
	if err != nil {
		return nil, err
	}
	q := ind.Type.Rank()
	ist := graphir.Strides(ind.Shape())
	return mapIndexed(out, x, func(o, in []int64) error {
		copy(in[:ax], o[:ax])
		k := int64(0)
		for j := 0; j < q; j++ {
			k += o[ax+j] * ist[j]
		}
		v, err := wrapIndex(op, ind.Data[k], x.Shape()[ax], ax)
		in[ax] = v
		copy(in[ax+1:], o[ax+q:])
		return err
	})
}

// mapIndexed fills out from x through src (as mapElements) and stops at
// the first index error src returns.
func mapIndexed(out, x *graphir.Tensor, src func(o, in []int64) error) ([]*graphir.Tensor, error) {
	var bad error
	mapElements(out, x, func(o, in []int64) bool {
		if bad == nil {
			bad = src(o, in)
		}
		return bad == nil
	}, 0)
	if bad != nil {
		return nil, bad
	}
	return []*graphir.Tensor{out}, nil
}

// legalizeGatherRuntime: wrapped indices, then hlo.gather of slices of
// size 1 along axis (collapsed) and full elsewhere.
func legalizeGatherRuntime(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, ind := op.Operand(0), op.Operand(1)
	xt, it := graphir.AsTensor(x.Type), graphir.AsTensor(ind.Type)
	ax, err := gatherAxis(op, xt)
	if err != nil {
		return nil, err
	}
	w, err := b.wrapIndices(ind, []int64{xt.Shape[ax]}, -1)
	if err != nil {
		return nil, err
	}
	q := int64(it.Rank())
	var offsets []int64
	for d := int64(0); d < int64(xt.Rank())+q-1; d++ {
		if d < int64(ax) || d >= int64(ax)+q {
			offsets = append(offsets, d)
		}
	}
	sizes := append([]int64(nil), xt.Shape...)
	sizes[ax] = 1
	y, err := b.insert(hlo.Gather(x, w, hlo.GatherDims{
		OffsetDims: offsets, CollapsedSliceDims: []int64{int64(ax)}, StartIndexMap: []int64{int64(ax)},
		IndexVectorDim: q, SliceSizes: sizes,
	}, op.Loc))
	return []*graphir.Value{y}, err
}

// wrapIndices returns select(i < 0, i + d, i) for an index tensor: dims
// holds one size for every index (len 1) or, with vectorDim ≥ 0, one size
// per component along dimension vectorDim. Nothing is built when every
// size is 0.
func (b *builder) wrapIndices(ind *graphir.Value, dims []int64, vectorDim int) (*graphir.Value, error) {
	it := graphir.AsTensor(ind.Type)
	c := &chain{b: b, t: it}
	var d *graphir.Value
	if vectorDim < 0 {
		d = c.splat(float64(dims[0]))
	} else {
		sizes := graphir.NewZeroTensor(graphir.NewTensor(it.Elem, int64(len(dims))))
		for i, v := range dims {
			sizes.Data[i] = float64(v)
		}
		d = c.do(func() (*graphir.Value, error) {
			v, err := b.constant(sizes.ToDense())
			if err != nil {
				return nil, err
			}
			return b.broadcastInDim(v, it.Shape, []int64{int64(vectorDim)})
		})
	}
	r := c.op(hlo.SelectOp, c.cmp("LT", ind, c.splat(0)), c.op(hlo.AddOp, ind, d), ind)
	return r, c.err
}

// iotaAlong is an index tensor of type t whose value is the position along
// dimension d.
func (b *builder) iotaAlong(t *graphir.TensorType, d int) (*graphir.Value, error) {
	pos := graphir.NewZeroTensor(graphir.NewTensor(t.Elem, t.Shape[d]))
	for i := range pos.Data {
		pos.Data[i] = float64(i)
	}
	v, err := b.constant(pos.ToDense())
	if err != nil {
		return nil, err
	}
	return b.broadcastInDim(v, t.Shape, []int64{int64(d)})
}

// indexVectors concatenates per-component index tensors (each of shape s)
// along a new trailing dimension: the index vectors of hlo.gather.
func (b *builder) indexVectors(parts []*graphir.Value) (*graphir.Value, error) {
	cols := make([]*graphir.Value, len(parts))
	for i, p := range parts {
		s := graphir.AsTensor(p.Type).Shape
		c, err := b.reshape(p, append(append([]int64(nil), s...), 1))
		if err != nil {
			return nil, err
		}
		cols[i] = c
	}
	return b.hloConcat(cols, graphir.AsTensor(cols[0].Type).Rank()-1)
}

// ---- graph.gather_elements

func inferGatherElements(op *graphir.Op) ([]graphir.Type, error) {
	x, ind, err := indexTensors(op)
	if err != nil {
		return nil, err
	}
	ax, err := gatherAxis(op, x)
	if err != nil {
		return nil, err
	}
	if ind.Rank() != x.Rank() {
		return nil, op.Errorf("indices must have the data's rank %d, got %s", x.Rank(), ind)
	}
	for d := range x.Shape {
		if d != ax && ind.Shape[d] > x.Shape[d] {
			return nil, op.Errorf("indices dimension %d has size %d, larger than the data's %d", d, ind.Shape[d], x.Shape[d])
		}
	}
	return one(graphir.NewTensor(x.Elem, ind.Shape...)), nil
}

func evalGatherElements(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	x, ind := args[0], args[1]
	ax, err := gatherAxis(op, x.Type)
	if err != nil {
		return nil, err
	}
	return mapIndexed(out, x, func(o, in []int64) error {
		copy(in, o)
		v, err := wrapIndex(op, ind.Data[offsetOf(o, ind.Shape())], x.Shape()[ax], ax)
		in[ax] = v
		return err
	})
}

// legalizeGatherElements: index vectors (iota, ..., wrapped indices at
// axis, ..., iota) and a gather of single elements.
func legalizeGatherElements(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, ind := op.Operand(0), op.Operand(1)
	xt, it := graphir.AsTensor(x.Type), graphir.AsTensor(ind.Type)
	ax, err := gatherAxis(op, xt)
	if err != nil {
		return nil, err
	}
	if it.NumElements() == 0 {
		return oneValue(b.splat(graphir.NewTensor(xt.Elem, it.Shape...), 0))
	}
	parts := make([]*graphir.Value, xt.Rank())
	for d := range parts {
		if d == ax {
			parts[d], err = b.wrapIndices(ind, []int64{xt.Shape[ax]}, -1)
		} else {
			parts[d], err = b.iotaAlong(it, d)
		}
		if err != nil {
			return nil, err
		}
	}
	return b.gatherPoints(x, parts, 0)
}

// gatherPoints gathers x at the index vectors formed by parts (one index
// tensor per x dimension from dimension first on; dims before first are
// batch dims matched by an iota), collapsing every indexed dimension.
func (b *builder) gatherPoints(x *graphir.Value, parts []*graphir.Value, first int) ([]*graphir.Value, error) {
	xt := graphir.AsTensor(x.Type)
	vec, err := b.indexVectors(parts)
	if err != nil {
		return nil, err
	}
	n := len(parts)
	batchRank := graphir.AsTensor(parts[0].Type).Rank()
	sizes := append([]int64(nil), xt.Shape...)
	var offsets []int64
	for d := range sizes {
		if d < first+n {
			sizes[d] = 1
		} else {
			offsets = append(offsets, int64(batchRank+d-first-n))
		}
	}
	y, err := b.insert(hlo.Gather(x, vec, hlo.GatherDims{
		OffsetDims: offsets, CollapsedSliceDims: iota64(0, first+n), StartIndexMap: iota64(0, first+n),
		IndexVectorDim: int64(batchRank), SliceSizes: sizes,
	}, b.src.Loc))
	return []*graphir.Value{y}, err
}

// ---- graph.gather_nd

type gatherNDCfg struct {
	batch, m int
	result   *graphir.TensorType
}

func gatherNDConfig(op *graphir.Op) (*gatherNDCfg, error) {
	x, ind, err := indexTensors(op)
	if err != nil {
		return nil, err
	}
	bd, err := op.Int("batch_dims")
	if err != nil {
		return nil, err
	}
	if ind.Rank() < 1 {
		return nil, op.Errorf("indices must have rank at least 1, got %s", ind)
	}
	if bd < 0 || bd >= int64(min(x.Rank(), ind.Rank())) {
		return nil, op.Errorf("batch_dims %d is out of range [0, %d)", bd, min(x.Rank(), ind.Rank()))
	}
	c := &gatherNDCfg{batch: int(bd), m: int(ind.Shape[ind.Rank()-1])}
	if c.batch+c.m > x.Rank() {
		return nil, op.Errorf("index vectors of length %d after %d batch dims exceed the data's rank %d", c.m, c.batch, x.Rank())
	}
	for d := 0; d < c.batch; d++ {
		if x.Shape[d] != ind.Shape[d] {
			return nil, op.Errorf("batch dimension %d has size %d in the data but %d in the indices", d, x.Shape[d], ind.Shape[d])
		}
	}
	shape := append(append([]int64(nil), ind.Shape[:ind.Rank()-1]...), x.Shape[c.batch+c.m:]...)
	c.result = graphir.NewTensor(x.Elem, shape...)
	return c, nil
}

func inferGatherND(op *graphir.Op) ([]graphir.Type, error) {
	c, err := gatherNDConfig(op)
	if err != nil {
		return nil, err
	}
	return one(c.result), nil
}

func evalGatherND(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	c, err := gatherNDConfig(op)
	if err != nil {
		return nil, err
	}
	x, ind := args[0], args[1]
	xs, is := x.Shape(), ind.Shape()
	q := len(is) - 1 // result dims that come from the indices
	return mapIndexed(out, x, func(o, in []int64) error {
		copy(in[:c.batch], o[:c.batch])
		base := offsetOf(append(append([]int64(nil), o[:q]...), 0), is)
		for k := 0; k < c.m; k++ {
			v, err := wrapIndex(op, ind.Data[base+int64(k)], xs[c.batch+k], c.batch+k)
			if err != nil {
				return err
			}
			in[c.batch+k] = v
		}
		copy(in[c.batch+c.m:], o[q:])
		return nil
	})
}

// legalizeGatherND: the batch dims become iota components of the index
// vectors, the m index components are wrapped, and hlo.gather collapses
// every indexed dimension.
func legalizeGatherND(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	c, err := gatherNDConfig(op)
	if err != nil {
		return nil, err
	}
	x, ind := op.Operand(0), op.Operand(1)
	xt, it := graphir.AsTensor(x.Type), graphir.AsTensor(ind.Type)
	if c.result.NumElements() == 0 {
		return oneValue(b.splat(c.result, 0))
	}
	q := it.Rank() - 1
	pts := graphir.NewTensor(it.Elem, it.Shape[:q]...)
	parts := make([]*graphir.Value, 0, c.batch+c.m)
	for d := 0; d < c.batch; d++ {
		p, err := b.iotaAlong(pts, d)
		if err != nil {
			return nil, err
		}
		parts = append(parts, p)
	}
	for k := 0; k < c.m; k++ {
		col, err := b.axisSlice(ind, q, int64(k), 1, 1)
		if err != nil {
			return nil, err
		}
		if col, err = b.reshape(col, pts.Shape); err != nil {
			return nil, err
		}
		if col, err = b.wrapIndices(col, []int64{xt.Shape[c.batch+k]}, -1); err != nil {
			return nil, err
		}
		parts = append(parts, col)
	}
	if len(parts) == 0 {
		// m = 0 and no batch dims: every index vector is empty, each result
		// row is the whole of x.
		return oneValue(b.broadcastTo(x, c.result.Shape))
	}
	return b.gatherPoints(x, parts, 0)
}

// oneValue wraps a single legalized value.
func oneValue(v *graphir.Value, err error) ([]*graphir.Value, error) {
	if err != nil {
		return nil, err
	}
	return []*graphir.Value{v}, nil
}

// offsetOf is the row-major position of idx in shape.
func offsetOf(idx, shape []int64) int64 {
	o := int64(0)
	for d, i := range idx {
		o = o*shape[d] + i
	}
	return o
}

// gatherConstant is x taken at the in-range indices idx along dim: one
// hlo.gather of an i64 constant, the result dim dim of size len(idx).
func (b *builder) gatherConstant(x *graphir.Value, dim int, idx []int64) (*graphir.Value, error) {
	xt := graphir.AsTensor(x.Type)
	it := graphir.NewZeroTensor(graphir.NewTensor(graphir.I64, int64(len(idx))))
	for i, v := range idx {
		it.Data[i] = float64(v)
	}
	c, err := b.constant(it.ToDense())
	if err != nil {
		return nil, err
	}
	var offsets []int64
	for d := 0; d < xt.Rank(); d++ {
		if d != dim {
			offsets = append(offsets, int64(d))
		}
	}
	sizes := append([]int64(nil), xt.Shape...)
	sizes[dim] = 1
	return b.insert(hlo.Gather(x, c, hlo.GatherDims{
		OffsetDims: offsets, CollapsedSliceDims: []int64{int64(dim)}, StartIndexMap: []int64{int64(dim)},
		IndexVectorDim: 1, SliceSizes: sizes,
	}, b.src.Loc))
}
