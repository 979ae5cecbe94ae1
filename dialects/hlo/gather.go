package hlo

import (
	"sort"

	g "github.com/tessera-ml/tessera/graphir"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// GatherOp is the op's name.
const GatherOp = "hlo.gather"

// hlo.gather(operand, start_indices) {offset_dims, collapsed_slice_dims,
// start_index_map, index_vector_dim, slice_sizes, indices_are_sorted}
// (StableHLO §gather, without the batching dimensions): slices of
// slice_sizes are taken from operand at start positions read from
// start_indices, an integer tensor whose dimension index_vector_dim (rank
// of start_indices = a trailing size-1 vector) holds the index vectors.
//
// Result shape: the dims of start_indices other than index_vector_dim (the
// batch dims, in order) interleaved with the slice dims that are not
// collapsed (the offset dims, at the result positions offset_dims). For a
// result index i with batch part b and offset part o:
//
//	start[start_index_map[k]] = clamp(start_indices[b, k], 0,
//	    dim(operand, start_index_map[k]) − slice_sizes[start_index_map[k]])
//	operand index = start + (o scattered over the non-collapsed dims)
//
// Start indices are clamped, as StableHLO and XLA do: an out-of-range
// index reads the nearest in-range slice, never out of bounds. The lowering
// reads start_indices in the block body (a data-dependent index), so the
// block's read region of operand is the whole dimension along
// start_index_map.
type gatherCfg struct {
	indexVector
	operand, result *g.TensorType
	offsetDims      []int64
	collapsed       []int64
	startMap        []int64
	sliceSizes      []int64
}

// GatherDims are hlo.gather's dimension numbers and slice sizes.
type GatherDims struct {
	OffsetDims, CollapsedSliceDims, StartIndexMap []int64
	IndexVectorDim                                int64
	SliceSizes                                    []int64
}

// Attrs returns the dimension numbers as op attributes.
func (d GatherDims) Attrs() g.DictAttr {
	return g.DictAttr{
		{Name: "collapsed_slice_dims", Value: g.I64Array(d.CollapsedSliceDims...)},
		{Name: "index_vector_dim", Value: g.IntAttr(d.IndexVectorDim)},
		{Name: "offset_dims", Value: g.I64Array(d.OffsetDims...)},
		{Name: "slice_sizes", Value: g.I64Array(d.SliceSizes...)},
		{Name: "start_index_map", Value: g.I64Array(d.StartIndexMap...)},
	}
}

func init() {
	register(&g.OpDef{
		Name:     GatherOp,
		Summary:  "gathers slices of operand at start indices read from start_indices (StableHLO §gather)",
		Operands: g.Exactly(2), Results: g.Exactly(1), Traits: movement, Pretty: true,
		Attrs: []g.AttrSpec{
			{Name: "offset_dims", Kind: g.KindIntArray, Required: true},
			{Name: "collapsed_slice_dims", Kind: g.KindIntArray, Required: true},
			{Name: "start_index_map", Kind: g.KindIntArray, Required: true},
			{Name: "index_vector_dim", Kind: g.KindInt, Required: true},
			{Name: "slice_sizes", Kind: g.KindIntArray, Required: true},
			{Name: "indices_are_sorted", Kind: g.KindBool},
		},
		Infer: func(op *g.Op) ([]g.Type, error) {
			c, err := gatherConfig(op)
			if err != nil {
				return nil, err
			}
			return []g.Type{c.result}, nil
		},
		Eval: evalGather,
	}, Lowering{Compute: gatherCompute})
}

// Gather builds a detached hlo.gather with inferred result type, or a
// diagnostic.
func Gather(x, indices *g.Value, d GatherDims, loc g.Location) (*g.Op, error) {
	return g.Build(GatherOp, []*g.Value{x, indices}, d.Attrs(), loc)
}

func gatherConfig(op *g.Op) (*gatherCfg, error) {
	ts, err := tensorOperands(op)
	if err != nil {
		return nil, err
	}
	c := &gatherCfg{operand: ts[0], indexVector: indexVector{indices: ts[1]}}
	if !c.indices.Elem.IsInt() || c.indices.Elem == g.I1 {
		return nil, op.Errorf("start_indices must have an integer element type, got %s", c.indices)
	}
	if err := c.readAttrs(op); err != nil {
		return nil, err
	}
	if err := c.check(op); err != nil {
		return nil, err
	}
	c.result = g.NewTensor(c.operand.Elem, c.resultShape()...)
	return c, nil
}

func (c *gatherCfg) readAttrs(op *g.Op) error {
	return c.readIndexAttrs(op, []string{"offset_dims", "collapsed_slice_dims", "start_index_map", "slice_sizes"}, &c.offsetDims, &c.collapsed, &c.startMap, &c.sliceSizes)
}

func (c *gatherCfg) check(op *g.Op) error {
	r := c.operand.Rank()
	if len(c.sliceSizes) != r {
		return op.Errorf("slice_sizes must have one entry per operand dimension (%d), got %d", r, len(c.sliceSizes))
	}
	for i, s := range c.sliceSizes {
		if s < 0 || s > c.operand.Shape[i] {
			return op.Errorf("slice_sizes[%d] = %d is out of range [0, %d]", i, s, c.operand.Shape[i])
		}
	}
	if err := checkSortedDims(op, "collapsed_slice_dims", c.collapsed, r); err != nil {
		return err
	}
	for _, d := range c.collapsed {
		if c.sliceSizes[d] > 1 {
			return op.Errorf("collapsed_slice_dims: dimension %d has slice size %d, expected at most 1", d, c.sliceSizes[d])
		}
	}
	if int64(len(c.startMap)) != c.indexVectorSize() {
		return op.Errorf("start_index_map must have one entry per index vector component (%d), got %d", c.indexVectorSize(), len(c.startMap))
	}
	if err := checkDims(op, "start_index_map", c.startMap, r); err != nil {
		return err
	}
	if len(c.offsetDims)+len(c.collapsed) != r {
		return op.Errorf("offset_dims (%d) and collapsed_slice_dims (%d) must together have the operand rank %d", len(c.offsetDims), len(c.collapsed), r)
	}
	return checkSortedDims(op, "offset_dims", c.offsetDims, len(c.batchShape())+len(c.offsetDims))
}

// checkSortedDims is checkDims plus ascending order.
func checkSortedDims(op *g.Op, what string, dims []int64, rank int) error {
	if err := checkDims(op, what, dims, rank); err != nil {
		return err
	}
	if !sort.SliceIsSorted(dims, func(i, j int) bool { return dims[i] < dims[j] }) {
		return op.Errorf("%s must be sorted, got %v", what, dims)
	}
	return nil
}

// offsetSourceDims are the operand dims not collapsed, in order: offset
// dim k of the result walks operand dim offsetSourceDims()[k].
func (c *gatherCfg) offsetSourceDims() []int {
	var out []int
	for d := 0; d < c.operand.Rank(); d++ {
		if !containsDim(c.collapsed, d) {
			out = append(out, d)
		}
	}
	return out
}

func (c *gatherCfg) resultShape() []int64 {
	batch, src := c.batchShape(), c.offsetSourceDims()
	shape := make([]int64, len(batch)+len(c.offsetDims))
	b, o := 0, 0
	for i := range shape {
		if o < len(c.offsetDims) && c.offsetDims[o] == int64(i) {
			shape[i] = c.sliceSizes[src[o]]
			o++
		} else {
			shape[i] = batch[b]
			b++
		}
	}
	return shape
}

// plan returns, for a result index, how to build the operand index: the
// result dims that form the batch index (in order) and, per operand dim,
// the result dim of its offset (−1 for collapsed dims).
func (c *gatherCfg) plan() (batchDims []int, offsetOf []int) {
	offsetOf = make([]int, c.operand.Rank())
	for i := range offsetOf {
		offsetOf[i] = -1
	}
	src := c.offsetSourceDims()
	o := 0
	for i := 0; i < c.result.Rank(); i++ {
		if o < len(c.offsetDims) && c.offsetDims[o] == int64(i) {
			offsetOf[src[o]] = i
			o++
		} else {
			batchDims = append(batchDims, i)
		}
	}
	return batchDims, offsetOf
}

func evalGather(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
	if err := checkArgSizes(op, args); err != nil {
		return nil, err
	}
	c, err := gatherConfig(op)
	if err != nil {
		return nil, err
	}
	batchDims, offsetOf := c.plan()
	x, ind := args[0], args[1]
	xs, is := g.Strides(c.operand.Shape), g.Strides(c.indices.Shape)
	out := g.NewZeroTensor(c.result)
	ri := make([]int64, c.result.Rank())
	b := make([]int64, len(batchDims))
	for o := range out.Data {
		unravel(int64(o), c.result.Shape, ri)
		for j, d := range batchDims {
			b[j] = ri[d]
		}
		xi := make([]int64, c.operand.Rank())
		for k, d := range c.startMap {
			s := int64(ind.Data[offset(c.indexAt(b, int64(k)), is)])
			xi[d] = min(max(s, 0), c.operand.Shape[d]-c.sliceSizes[d])
		}
		for d, r := range offsetOf {
			if r >= 0 {
				xi[d] += ri[r]
			}
		}
		out.Data[o] = x.Data[offset(xi, xs)]
	}
	return []*g.Tensor{out}, nil
}

// gatherCompute reads each start index component in the body, converts it
// to an index and clamps it as the evaluator does.
func gatherCompute(op *g.Op, ins []*tir.Operand, _ tir.DType) (*tir.Compute, error) {
	c, err := gatherConfig(op)
	if err != nil {
		return nil, err
	}
	batchDims, offsetOf := c.plan()
	x, ind := ins[0], ins[1]
	return &tir.Compute{Shape: c.result.Shape, Body: func(n tir.Nest, _ tir.Expr) tir.Expr {
		b := make([]tir.Expr, len(batchDims))
		for j, d := range batchDims {
			b[j] = n.Spatial[d]
		}
		xi := make([]tir.Expr, c.operand.Rank())
		for d := range xi {
			xi[d] = tir.Int(0)
		}
		for k, d := range c.startMap {
			s := &tir.Cast{Type: tir.DIndex, X: ind.At(c.indexExprAt(b, int64(k))...)}
			xi[d] = tir.Min(tir.Max(s, tir.Int(0)), tir.Int(c.operand.Shape[d]-c.sliceSizes[d]))
		}
		for d, r := range offsetOf {
			if r >= 0 {
				xi[d] = tir.Add(xi[d], n.Spatial[r])
			}
		}
		return x.At(xi...)
	}}, nil
}
