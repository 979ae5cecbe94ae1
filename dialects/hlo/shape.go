package hlo

import (
	"fmt"

	g "github.com/tessera-ml/tessera/graphir"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// Op names.
const (
	BroadcastInDimOp = "hlo.broadcast_in_dim"
	ReshapeOp        = "hlo.reshape"
	TransposeOp      = "hlo.transpose"
	PadOp            = "hlo.pad"
	SliceOp          = "hlo.slice"
	ConcatenateOp    = "hlo.concatenate"
	// GetDimensionSizeOp is StableHLO's get_dimension_size: the size of a
	// dimension as a rank-0 i32 tensor, for a symbolic dimension its value
	// at run time.
	GetDimensionSizeOp = "hlo.get_dimension_size"
)

// Data-movement ops (StableHLO §broadcast_in_dim, §reshape, §transpose,
// §pad, §slice, §concatenate). All keep the element type. Each lowers to
// one block reading its operand at the index arithmetic of the op (the
// reference evaluators' semantics); reads that may fall outside an
// operand (padding, interior holes, other concatenation pieces) load at a
// clamped index and are discarded by a select, so every load is in
// bounds and the block stays a single store (inlinable).

// Traits of the data-movement ops: relayouts read one operand element per
// result element; the others may select a padding value or a piece.
const (
	relayout = g.Pure | g.Injective | g.DataMovement | g.LayoutOnly
	movement = g.Pure | g.Injective | g.DataMovement
)

func init() {
	register(&g.OpDef{
		Name:     BroadcastInDimOp,
		Symbolic: true,
		Summary:  "broadcasts operand dim i to result dim broadcast_dimensions[i]; the result type is written",
		Operands: g.Exactly(1), Results: g.Exactly(1), Traits: relayout, Pretty: true,
		Attrs:  []g.AttrSpec{{Name: "broadcast_dimensions", Kind: g.KindIntArray, Required: true}},
		Verify: func(op *g.Op) error { _, err := broadcastDims(op); return err },
		Eval:   evalBroadcast,
	}, Lowering{Compute: broadcastCompute, Symbolic: true})
	register(&g.OpDef{
		Name:     ReshapeOp,
		Symbolic: true,
		Summary:  "row-major reshape to the written result type (same element count)",
		Operands: g.Exactly(1), Results: g.Exactly(1), Traits: relayout, Pretty: true,
		Verify: verifyReshape,
		Eval: func(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
			if err := checkArgSizes(op, args); err != nil {
				return nil, err
			}
			if err := verifyReshape(op); err != nil {
				return nil, err
			}
			rt, _ := resultTensor(op, 0)
			return []*g.Tensor{{Type: rt, Data: append([]float64(nil), args[0].Data...)}}, nil
		},
	}, Lowering{Compute: reshapeCompute, Symbolic: true})
	register(&g.OpDef{
		Name:     TransposeOp,
		Symbolic: true,
		Summary:  "permutes dimensions: result dim i is operand dim permutation[i]",
		Operands: g.Exactly(1), Results: g.Exactly(1), Traits: relayout, Pretty: true,
		Attrs: []g.AttrSpec{{Name: "permutation", Kind: g.KindIntArray, Required: true}},
		Infer: func(op *g.Op) ([]g.Type, error) {
			t, _, err := transposeConfig(op)
			if err != nil {
				return nil, err
			}
			return []g.Type{t}, nil
		},
		Eval: evalTranspose,
	}, Lowering{Compute: transposeCompute, Symbolic: true})
	register(&g.OpDef{
		Name:     PadOp,
		Symbolic: true,
		Summary:  "pads with padding_value: edge padding (may be negative) and interior padding; a symbolic dimension is not padded",
		Operands: g.Exactly(2), Results: g.Exactly(1), Traits: movement, Pretty: true,
		Attrs: []g.AttrSpec{
			{Name: "edge_padding_low", Kind: g.KindIntArray},
			{Name: "edge_padding_high", Kind: g.KindIntArray},
			{Name: "interior_padding", Kind: g.KindIntArray},
		},
		Infer: func(op *g.Op) ([]g.Type, error) {
			c, err := padConfig(op)
			if err != nil {
				return nil, err
			}
			return []g.Type{c.result}, nil
		},
		Eval: evalPad,
	}, Lowering{Compute: padCompute, Symbolic: true})
	register(&g.OpDef{
		Name:     SliceOp,
		Symbolic: true,
		Summary:  "strided slice [start_indices, limit_indices) with strides; a limit of -1 is the dimension's size (the only limit of a symbolic dimension)",
		Operands: g.Exactly(1), Results: g.Exactly(1), Traits: movement, Pretty: true,
		Attrs: []g.AttrSpec{
			{Name: "start_indices", Kind: g.KindIntArray, Required: true},
			{Name: "limit_indices", Kind: g.KindIntArray, Required: true},
			{Name: "strides", Kind: g.KindIntArray},
		},
		Infer: func(op *g.Op) ([]g.Type, error) {
			c, err := sliceConfig(op)
			if err != nil {
				return nil, err
			}
			return []g.Type{c.result}, nil
		},
		Eval: evalSlice,
	}, Lowering{Compute: sliceCompute, Symbolic: true})
	register(&g.OpDef{
		Name:     ConcatenateOp,
		Symbolic: true,
		Summary:  "concatenates operands along dimension",
		Operands: g.AtLeast(1), Results: g.Exactly(1), Traits: movement, Pretty: true,
		Attrs: []g.AttrSpec{{Name: "dimension", Kind: g.KindInt, Required: true}},
		Infer: func(op *g.Op) ([]g.Type, error) {
			t, _, err := concatConfig(op)
			if err != nil {
				return nil, err
			}
			return []g.Type{t}, nil
		},
		Eval: evalConcat,
	}, Lowering{Compute: concatCompute, Symbolic: true})
	register(&g.OpDef{
		Name:     GetDimensionSizeOp,
		Symbolic: true,
		Summary:  "the size of the operand's dimension as a tensor<i32> (StableHLO §get_dimension_size); of a symbolic dimension, its value when the code runs",
		Operands: g.Exactly(1), Results: g.Exactly(1), Traits: g.Pure | g.Injective, Pretty: true,
		Attrs: []g.AttrSpec{{Name: "dimension", Kind: g.KindInt, Required: true}},
		Infer: func(op *g.Op) ([]g.Type, error) {
			if _, err := dimensionOf(op); err != nil {
				return nil, err
			}
			return []g.Type{g.NewTensor(g.I32)}, nil
		},
		Eval: func(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
			if err := checkArgs(op, args, 1); err != nil {
				return nil, err
			}
			d, err := dimensionOf(op)
			if err != nil {
				return nil, err
			}
			t := g.AsTensor(args[0].Type)
			if t == nil || d >= t.Rank() || t.Shape[d] < 0 {
				return nil, op.Errorf("evaluator input has no static dimension %d: %s", d, args[0].Type)
			}
			return []*g.Tensor{{Type: g.NewTensor(g.I32), Data: []float64{float64(t.Shape[d])}}}, nil
		},
	}, Lowering{Compute: getDimensionSizeCompute, Symbolic: true})
}

// GetDimensionSize creates hlo.get_dimension_size of x's dimension d.
func GetDimensionSize(x *g.Value, d int, loc g.Location) (*g.Op, error) {
	op := g.NewOp(GetDimensionSizeOp, []*g.Value{x}, []g.Type{g.NewTensor(g.I32)}, g.DictAttr{{Name: "dimension", Value: g.IntAttr(int64(d))}}, loc)
	if _, err := dimensionOf(op); err != nil {
		op.SetOperands(nil)
		return nil, err
	}
	return op, nil
}

// dimensionOf is get_dimension_size's dimension, checked against the
// operand's rank.
func dimensionOf(op *g.Op) (int, error) {
	ts, err := tensorOperands(op)
	if err != nil {
		return 0, err
	}
	ia, ok := op.Attr("dimension").(*g.IntegerAttr)
	if !ok {
		return 0, op.Errorf("requires integer attribute 'dimension'")
	}
	if ia.Value < 0 || ia.Value >= int64(ts[0].Rank()) {
		return 0, op.Errorf("dimension %d is out of range for rank %d", ia.Value, ts[0].Rank())
	}
	return int(ia.Value), nil
}

// getDimensionSizeCompute is the dimension's size (a constant, or the
// expression of the kernel's scalar parameters a symbolic one is) as i32.
func getDimensionSizeCompute(op *g.Op, ins []*tir.Operand, res tir.DType) (*tir.Compute, error) {
	d, err := dimensionOf(op)
	if err != nil {
		return nil, err
	}
	size := ins[0].Dim(d)
	if size == nil {
		return nil, errorAt(op, "the size of symbolic dimension %d of a splat operand does not lower to tensor IR; pin its symbols with --fix-dim", d)
	}
	return &tir.Compute{Body: func(tir.Nest, tir.Expr) tir.Expr { return &tir.Cast{Type: res, X: size} }}, nil
}

// ---- broadcast_in_dim

// BroadcastInDim builds a detached hlo.broadcast_in_dim of x to result type
// rt; it checks the op and returns a diagnostic when it is invalid.
func BroadcastInDim(x *g.Value, rt *g.TensorType, dims []int64, loc g.Location) (*g.Op, error) {
	op := g.NewOp(BroadcastInDimOp, []*g.Value{x}, []g.Type{rt}, g.DictAttr{{Name: "broadcast_dimensions", Value: g.I64Array(dims...)}}, loc)
	if _, err := broadcastDims(op); err != nil {
		op.SetOperands(nil)
		return nil, err
	}
	return op, nil
}

func broadcastDims(op *g.Op) ([]int64, error) {
	ts, err := tensorOperands(op)
	if err != nil {
		return nil, err
	}
	rt, err := resultTensor(op, 0)
	if err != nil {
		return nil, err
	}
	in := ts[0]
	if in.Elem != rt.Elem {
		return nil, op.Errorf("result element type must be %s, got %s", in.Elem, rt)
	}
	if op.Attr("broadcast_dimensions") == nil {
		return nil, op.Errorf("requires attribute 'broadcast_dimensions'")
	}
	dims, err := op.Ints("broadcast_dimensions")
	if err != nil {
		return nil, err
	}
	if len(dims) != in.Rank() {
		return nil, op.Errorf("broadcast_dimensions must have one entry per operand dimension (%d), got %d", in.Rank(), len(dims))
	}
	if err := checkDims(op, "broadcast_dimensions", dims, rt.Rank()); err != nil {
		return nil, err
	}
	for i, d := range dims {
		x, y := in.Dim(i), rt.Dim(int(d))
		if c, ok := x.Const(); !(ok && c == 1) && !x.Equal(y) {
			return nil, op.Errorf("operand dimension %d has size %s, which is neither 1 nor the size %s of result dimension %d", i, x, y, d)
		}
	}
	return dims, nil
}

func evalBroadcast(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
	if err := checkArgSizes(op, args); err != nil {
		return nil, err
	}
	dims, err := broadcastDims(op)
	if err != nil {
		return nil, err
	}
	rt, _ := resultTensor(op, 0)
	in := args[0]
	is := g.Strides(in.Type.Shape)
	// stride of each result dim in the operand (0 where broadcast)
	rs := make([]int64, rt.Rank())
	for i, d := range dims {
		if in.Type.Shape[i] != 1 {
			rs[d] = is[i]
		}
	}
	out := g.NewZeroTensor(rt)
	idx := make([]int64, rt.Rank())
	for o := range out.Data {
		unravel(int64(o), rt.Shape, idx)
		out.Data[o] = in.Data[offset(idx, rs)]
	}
	return []*g.Tensor{out}, nil
}

// ---- reshape

// Reshape builds a detached hlo.reshape of x to rt, or a diagnostic.
func Reshape(x *g.Value, rt *g.TensorType, loc g.Location) (*g.Op, error) {
	op := g.NewOp(ReshapeOp, []*g.Value{x}, []g.Type{rt}, nil, loc)
	if err := verifyReshape(op); err != nil {
		op.SetOperands(nil)
		return nil, err
	}
	return op, nil
}

// verifyReshape checks that the result type has the operand's element
// type and element count (equal expressions when symbolic). Errors: a
// diagnostic; an element count that overflows int64.
func verifyReshape(op *g.Op) (err error) {
	defer g.CatchOverflow(&err, func() string { return "the element count of " + op.Name })
	ts, err := tensorOperands(op)
	if err != nil {
		return err
	}
	rt, err := resultTensor(op, 0)
	if err != nil {
		return err
	}
	if ts[0].Elem != rt.Elem {
		return op.Errorf("result element type must be %s, got %s", ts[0].Elem, rt)
	}
	if n, m := elementCount(ts[0]), elementCount(rt); !n.Equal(m) {
		return op.Errorf("operand %s has %s elements but result %s has %s", ts[0], n, rt, m)
	}
	return nil
}

// ---- transpose

// Transpose builds a detached hlo.transpose with inferred result type.
func Transpose(x *g.Value, perm []int64, loc g.Location) (*g.Op, error) {
	return g.Build(TransposeOp, []*g.Value{x}, g.DictAttr{{Name: "permutation", Value: g.I64Array(perm...)}}, loc)
}

func transposeConfig(op *g.Op) (*g.TensorType, []int64, error) {
	ts, err := tensorOperands(op)
	if err != nil {
		return nil, nil, err
	}
	if op.Attr("permutation") == nil {
		return nil, nil, op.Errorf("requires attribute 'permutation'")
	}
	perm, err := op.Ints("permutation")
	if err != nil {
		return nil, nil, err
	}
	in := ts[0]
	if len(perm) != in.Rank() {
		return nil, nil, op.Errorf("permutation must have %d entries (the operand rank), got %d", in.Rank(), len(perm))
	}
	if err := checkDims(op, "permutation", perm, in.Rank()); err != nil {
		return nil, nil, err
	}
	dims := make([]*g.SymExpr, len(perm))
	for i, p := range perm {
		dims[i] = in.Dim(int(p))
	}
	return g.NewTensorDims(in.Elem, dims...), perm, nil
}

func evalTranspose(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
	if err := checkArgSizes(op, args); err != nil {
		return nil, err
	}
	rt, perm, err := transposeConfig(op)
	if err != nil {
		return nil, err
	}
	return []*g.Tensor{transposeData(args[0], perm, rt)}, nil
}

// transposeData is x transposed by perm (result dimension i is x's
// dimension perm[i]) into a tensor of type rt.
func transposeData(x *g.Tensor, perm []int64, rt *g.TensorType) *g.Tensor {
	out := g.NewZeroTensor(rt)
	transposeInto(out.Data, x.Data, 1, x.Type.Shape, perm, rt.Shape)
	return out
}

// transposeInto writes into dst the elements of src (row-major of shape
// in, each element size consecutive items: 1 for float64 data, the byte
// width for raw data) in the order of the transposed shape out
// (out[i] = in[perm[i]]). The source offset is kept as an odometer over
// out's indices, so there is no division per element.
func transposeInto[T any](dst, src []T, size int64, in, perm, out []int64) {
	is := g.Strides(in)
	rs := make([]int64, len(perm))
	for i, p := range perm {
		rs[i] = is[p] * size
	}
	idx := make([]int64, len(out))
	at := int64(0) // offset(idx, rs), kept as idx counts through out
	for o := int64(0); o < int64(len(dst)); o += size {
		copy(dst[o:o+size], src[at:at+size])
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			at += rs[d]
			if idx[d] < out[d] {
				break
			}
			at -= rs[d] * out[d]
			idx[d] = 0
		}
	}
}

// ---- pad

// Pad builds a detached hlo.pad with inferred result type; interior may be nil.
func Pad(x, value *g.Value, low, high, interior []int64, loc g.Location) (*g.Op, error) {
	a := g.DictAttr{{Name: "edge_padding_high", Value: g.I64Array(high...)}, {Name: "edge_padding_low", Value: g.I64Array(low...)}}
	if interior != nil {
		a = a.Set("interior_padding", g.I64Array(interior...))
	}
	return g.Build(PadOp, []*g.Value{x, value}, a, loc)
}

// PadAmounts returns an hlo.pad's low, high and interior padding, one
// entry per dimension. Errors: the op's attributes or operands do not
// verify.
func PadAmounts(op *g.Op) (lo, hi, interior []int64, err error) {
	c, err := padConfig(op)
	if err != nil {
		return nil, nil, nil, err
	}
	return c.lo, c.hi, c.interior, nil
}

type padCfg struct {
	lo, hi, interior []int64
	result           *g.TensorType
}

func padConfig(op *g.Op) (*padCfg, error) {
	ts, err := tensorOperands(op)
	if err != nil {
		return nil, err
	}
	in, pv := ts[0], ts[1]
	if pv.Rank() != 0 || pv.Elem != in.Elem {
		return nil, op.Errorf("padding value must be a rank-0 tensor<%s>, got %s", in.Elem, pv)
	}
	r := in.Rank()
	c := &padCfg{}
	if c.lo, err = op.IntsLen("edge_padding_low", r, "dimension", 0); err != nil {
		return nil, err
	}
	if c.hi, err = op.IntsLen("edge_padding_high", r, "dimension", 0); err != nil {
		return nil, err
	}
	if c.interior, err = op.IntsLen("interior_padding", r, "dimension", 0); err != nil {
		return nil, err
	}
	dims := make([]*g.SymExpr, r)
	for i, n := range in.Shape {
		if c.interior[i] < 0 {
			return nil, op.Errorf("interior_padding must be non-negative, got %d", c.interior[i])
		}
		if in.Sym != nil && in.Sym[i] != nil {
			// A symbolic dimension passes through unpadded.
			if c.lo[i] != 0 || c.hi[i] != 0 || c.interior[i] != 0 {
				_, err := staticDim(op, in, i, "a padded dimension")
				return nil, err
			}
			dims[i] = in.Sym[i]
			continue
		}
		s := c.lo[i] + c.hi[i] + n
		if n > 0 {
			s += (n - 1) * c.interior[i]
		}
		if s < 0 {
			return nil, op.Errorf("padding makes dimension %d negative (%d)", i, s)
		}
		dims[i] = g.SymConst(s)
	}
	c.result = g.NewTensorDims(in.Elem, dims...)
	return c, nil
}

func evalPad(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
	if err := checkArgSizes(op, args); err != nil {
		return nil, err
	}
	c, err := padConfig(op)
	if err != nil {
		return nil, err
	}
	in := args[0]
	out := g.NewZeroTensor(c.result)
	for i := range out.Data {
		out.Data[i] = args[1].Data[0]
	}
	os := g.Strides(c.result.Shape)
	idx := make([]int64, in.Type.Rank())
	for i, x := range in.Data {
		unravel(int64(i), in.Type.Shape, idx)
		var o int64
		inside := true
		for d, v := range idx {
			p := c.lo[d] + v*(c.interior[d]+1)
			if p < 0 || p >= c.result.Shape[d] {
				inside = false
				break
			}
			o += p * os[d]
		}
		if inside {
			out.Data[o] = x
		}
	}
	return []*g.Tensor{out}, nil
}

// ---- slice

// Slice builds a detached hlo.slice with inferred result type; strides may
// be nil, and a limit of SliceToEnd takes a dimension to its end (a
// symbolic dimension takes no other limit).
func Slice(x *g.Value, start, limit, strides []int64, loc g.Location) (*g.Op, error) {
	a := g.DictAttr{{Name: "limit_indices", Value: g.I64Array(limit...)}, {Name: "start_indices", Value: g.I64Array(start...)}}
	if strides != nil {
		a = a.Set("strides", g.I64Array(strides...))
	}
	return g.Build(SliceOp, []*g.Value{x}, a, loc)
}

type sliceCfg struct {
	start, strides []int64
	result         *g.TensorType
}

func sliceConfig(op *g.Op) (*sliceCfg, error) {
	ts, err := tensorOperands(op)
	if err != nil {
		return nil, err
	}
	in := ts[0]
	r := in.Rank()
	for _, n := range []string{"start_indices", "limit_indices"} {
		if op.Attr(n) == nil {
			return nil, op.Errorf("requires attribute '%s'", n)
		}
	}
	c := &sliceCfg{}
	if c.start, err = op.IntsLen("start_indices", r, "dimension", 0); err != nil {
		return nil, err
	}
	limit, err := op.IntsLen("limit_indices", r, "dimension", 0)
	if err != nil {
		return nil, err
	}
	if c.strides, err = op.IntsLen("strides", r, "dimension", 1); err != nil {
		return nil, err
	}
	dims := make([]*g.SymExpr, r)
	for i := 0; i < r; i++ {
		if dims[i], err = sliceDim(op, in, i, c.start[i], limit[i], c.strides[i]); err != nil {
			return nil, err
		}
	}
	c.result = g.NewTensorDims(in.Elem, dims...)
	return c, nil
}

// SliceToEnd is the limit_indices entry of hlo.slice that takes a
// dimension to its end: its size, which is the only limit a symbolic
// dimension takes.
const SliceToEnd = g.Dynamic

// sliceDim is the size of result dimension i of a slice of in from start
// to limit (SliceToEnd: the dimension's size) by stride:
// ⌈(limit − start)/stride⌉, an expression when in's dimension is
// symbolic (start ≤ its size is then checked by the verification after
// binding). Errors: bounds or stride out of range; a symbolic dimension
// with a limit other than SliceToEnd.
func sliceDim(op *g.Op, in *g.TensorType, i int, start, limit, stride int64) (*g.SymExpr, error) {
	if in.Sym != nil && in.Sym[i] != nil {
		if limit != SliceToEnd {
			_, err := staticDim(op, in, i, fmt.Sprintf("the size of a slice to %d", limit))
			return nil, err
		}
		if stride <= 0 {
			return nil, op.Errorf("strides must be positive, got %d", stride)
		}
		if start < 0 {
			return nil, op.Errorf("dimension %d: need 0 <= start (%d)", i, start)
		}
		return in.Sym[i].AddConst(stride - 1 - start).FloorDiv(stride)
	}
	if limit == SliceToEnd {
		limit = in.Shape[i]
	}
	if start < 0 || start > limit || limit > in.Shape[i] {
		return nil, op.Errorf("dimension %d: need 0 <= start (%d) <= limit (%d) <= size (%d)", i, start, limit, in.Shape[i])
	}
	if stride <= 0 {
		return nil, op.Errorf("strides must be positive, got %d", stride)
	}
	return g.SymConst((limit - start + stride - 1) / stride), nil
}

func evalSlice(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
	if err := checkArgSizes(op, args); err != nil {
		return nil, err
	}
	c, err := sliceConfig(op)
	if err != nil {
		return nil, err
	}
	is := g.Strides(args[0].Type.Shape)
	base := offset(c.start, is)
	rs := make([]int64, len(is))
	for i := range rs {
		rs[i] = is[i] * c.strides[i]
	}
	out := g.NewZeroTensor(c.result)
	idx := make([]int64, c.result.Rank())
	for o := range out.Data {
		unravel(int64(o), c.result.Shape, idx)
		out.Data[o] = args[0].Data[base+offset(idx, rs)]
	}
	return []*g.Tensor{out}, nil
}

// ---- concatenate

// Concatenate builds a detached hlo.concatenate along dim.
func Concatenate(xs []*g.Value, dim int64, loc g.Location) (*g.Op, error) {
	return g.Build(ConcatenateOp, xs, g.DictAttr{{Name: "dimension", Value: g.IntAttr(dim)}}, loc)
}

func concatConfig(op *g.Op) (*g.TensorType, int, error) {
	if op.NumOperands() == 0 {
		return nil, 0, op.Errorf("expects at least one operand")
	}
	ts, err := tensorOperands(op)
	if err != nil {
		return nil, 0, err
	}
	ia, ok := op.Attr("dimension").(*g.IntegerAttr)
	if !ok {
		return nil, 0, op.Errorf("requires integer attribute 'dimension'")
	}
	first := ts[0]
	if ia.Value < 0 || ia.Value >= int64(first.Rank()) {
		return nil, 0, op.Errorf("dimension %d is out of range for rank %d", ia.Value, first.Rank())
	}
	dim := int(ia.Value)
	dims := first.Dims()
	for i, t := range ts[1:] {
		if t.Elem != first.Elem || t.Rank() != first.Rank() {
			return nil, 0, op.Errorf("operand #%d must have element type %s and rank %d, got %s", i+1, first.Elem, first.Rank(), t)
		}
		for d := range t.Shape {
			if x, y := t.Dim(d), first.Dim(d); d != dim && !x.Equal(y) {
				return nil, 0, op.Errorf("operand #%d has size %s in dimension %d, expected %s (only dimension %d may differ)", i+1, x, d, y, dim)
			}
		}
		dims[dim] = dims[dim].Add(t.Dim(dim))
	}
	return g.NewTensorDims(first.Elem, dims...), dim, nil
}

func evalConcat(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
	if err := checkArgSizes(op, args); err != nil {
		return nil, err
	}
	rt, dim, err := concatConfig(op)
	if err != nil {
		return nil, err
	}
	out := g.NewZeroTensor(rt)
	// outer = product of dims before dim; each operand contributes a
	// contiguous chunk of Shape[dim]*inner elements per outer index.
	outer := int64(1)
	for _, n := range rt.Shape[:dim] {
		outer *= n
	}
	inner := int64(1)
	for _, n := range rt.Shape[dim+1:] {
		inner *= n
	}
	var pos int64
	for o := int64(0); o < outer; o++ {
		for _, a := range args {
			chunk := a.Type.Shape[dim] * inner
			copy(out.Data[pos:pos+chunk], a.Data[o*chunk:(o+1)*chunk])
			pos += chunk
		}
	}
	return []*g.Tensor{out}, nil
}

// ---- tensor IR lowerings

func broadcastCompute(op *g.Op, ins []*tir.Operand, _ tir.DType) (*tir.Compute, error) {
	dims, err := broadcastDims(op)
	if err != nil {
		return nil, err
	}
	rt, _ := resultTensor(op, 0)
	x := ins[0]
	return &tir.Compute{Shape: rt.Shape, Body: func(n tir.Nest, _ tir.Expr) tir.Expr {
		idx := make([]tir.Expr, len(x.Shape))
		for i, d := range dims {
			if x.Shape[i] == 1 && rt.Shape[d] != 1 {
				idx[i] = tir.Int(0)
			} else {
				idx[i] = n.Spatial[d]
			}
		}
		return x.At(idx...)
	}}, nil
}

// reshapeCompute remaps row-major: the linear index of the result element
// is unravelled over the operand's shape. With symbolic dimensions the
// dimensions are grouped first (reshapeGroups: runs of the operand's and
// the result's dimensions with equal element counts) and each group is
// remapped on its own, with its dimensions as expressions, so a symbolic
// dimension kept, split ([b*s] to [s, b]) or merged ([s, 4*b, 64] to
// [b*s, 256]) divides by constants where the group allows and by the
// symbols' products where it does not.
func reshapeCompute(op *g.Op, ins []*tir.Operand, _ tir.DType) (*tir.Compute, error) {
	rt, err := resultTensor(op, 0)
	if err != nil {
		return nil, err
	}
	x := ins[0]
	ts, err := tensorOperands(op)
	if err != nil {
		return nil, err
	}
	in := ts[0]
	if !rt.IsStatic() || !in.IsStatic() {
		gin, gout := reshapeGroups(in.Dims(), rt.Dims())
		return &tir.Compute{Shape: rt.Shape, Body: func(n tir.Nest, _ tir.Expr) tir.Expr {
			if x.Splat != nil {
				return x.At()
			}
			idx := make([]tir.Expr, len(x.Shape))
			for k := range gin[:len(gin)-1] {
				unravelGroup(idx, x, n, gin[k], gin[k+1], gout[k], gout[k+1])
			}
			return x.At(idx...)
		}}, nil
	}
	return &tir.Compute{Shape: rt.Shape, Body: func(n tir.Nest, _ tir.Expr) tir.Expr {
		idx := make([]tir.Expr, len(x.Shape))
		var lin tir.Expr = tir.Int(0)
		st := g.Strides(rt.Shape)
		for i, v := range n.Spatial {
			lin = tir.Add(lin, tir.Mul(v, tir.Int(st[i])))
		}
		ist := g.Strides(x.Shape)
		for j := range x.Shape {
			e := lin
			if ist[j] != 1 {
				e = tir.FloorDiv(e, tir.Int(ist[j]))
			}
			if j > 0 {
				e = tir.FloorMod(e, tir.Int(x.Shape[j]))
			}
			idx[j] = e
		}
		return x.At(idx...)
	}}, nil
}

// reshapeGroups splits a reshape of dimensions a to dimensions b into the
// finest groups with equal element counts: group k is a[in[k]:in[k+1]]
// reshaped to b[out[k]:out[k+1]], the boundaries being where the prefix
// products of a and b are equal expressions. A constant 0 dimension (an
// empty tensor) makes one group.
func reshapeGroups(a, b []*g.SymExpr) (in, out []int) {
	in, out = []int{0}, []int{0}
	pa, pb := prefixProducts(a), prefixProducts(b)
	if pa == nil || pb == nil {
		return []int{0, len(a)}, []int{0, len(b)}
	}
	l := 0
	for k := 1; k <= len(a); k++ {
		for m := l + 1; m <= len(b); m++ {
			if pa[k].Equal(pb[m]) {
				in, out = append(in, k), append(out, m)
				l = m
				break
			}
		}
	}
	last := len(in) - 1
	switch {
	case in[last] == len(a):
		out[last] = len(b)
	default:
		in, out = append(in, len(a)), append(out, len(b))
	}
	return in, out
}

// prefixProducts is the products of ds's leading dimensions (len(ds)+1
// of them, from 1), or nil when a dimension is the constant 0.
func prefixProducts(ds []*g.SymExpr) []*g.SymExpr {
	out := []*g.SymExpr{g.SymConst(1)}
	for _, d := range ds {
		if c, ok := d.Const(); ok && c == 0 {
			return nil
		}
		out = append(out, out[len(out)-1].Mul(d))
	}
	return out
}

// unravelGroup sets idx[i0:i1], the operand x's indices of one reshape
// group, from the result's spatial variables n.Spatial[o0:o1]: their
// linear index within the group (over the result's extents) unravelled
// over x's dimensions.
func unravelGroup(idx []tir.Expr, x *tir.Operand, n tir.Nest, i0, i1, o0, o1 int) {
	var lin tir.Expr = tir.Int(0)
	for l := o0; l < o1; l++ {
		lin = tir.Add(tir.Mul(lin, n.Extents[l]), n.Spatial[l])
	}
	var stride tir.Expr = tir.Int(1)
	for k := i1 - 1; k >= i0; k-- {
		e := lin
		if !isOne(stride) {
			e = tir.FloorDiv(e, stride)
		}
		if k > i0 {
			e = tir.FloorMod(e, x.Dim(k))
		}
		idx[k] = tir.Simplify(e, nil)
		stride = tir.Simplify(tir.Mul(stride, x.Dim(k)), nil)
	}
}

// isOne reports whether e is the constant 1.
func isOne(e tir.Expr) bool {
	k, ok := e.(*tir.IntImm)
	return ok && k.Value == 1
}

func transposeCompute(op *g.Op, ins []*tir.Operand, _ tir.DType) (*tir.Compute, error) {
	rt, perm, err := transposeConfig(op)
	if err != nil {
		return nil, err
	}
	x := ins[0]
	return &tir.Compute{Shape: rt.Shape, Body: func(n tir.Nest, _ tir.Expr) tir.Expr {
		idx := make([]tir.Expr, len(x.Shape))
		for i, p := range perm {
			idx[p] = n.Spatial[i]
		}
		return x.At(idx...)
	}}, nil
}

// clampIndex is min(max(e, 0), n-1): an always-valid index into a
// dimension of size n.
func clampIndex(e tir.Expr, n int64) tir.Expr {
	return tir.Min(tir.Max(e, tir.Int(0)), tir.Int(n-1))
}

// and is a && b, where a nil a is true.
func and(a, b tir.Expr) tir.Expr {
	if a == nil {
		return b
	}
	return tir.Bin(tir.OpAnd, a, b)
}

func hasZero(shape []int64) bool {
	for _, d := range shape {
		if d == 0 {
			return true
		}
	}
	return false
}

// padCompute: result position v of dim i holds operand element
// (v - lo) / (p+1) when v - lo ≥ 0, divisible by p+1 and the quotient
// < d; else the padding value.
func padCompute(op *g.Op, ins []*tir.Operand, _ tir.DType) (*tir.Compute, error) {
	c, err := padConfig(op)
	if err != nil {
		return nil, err
	}
	x, pv := ins[0], ins[1]
	return &tir.Compute{Shape: c.result.Shape, Body: func(n tir.Nest, _ tir.Expr) tir.Expr {
		padValue := pv.At()
		if hasZero(x.Shape) {
			return padValue
		}
		var cond tir.Expr
		idx := make([]tir.Expr, len(x.Shape))
		for i := range x.Shape {
			if x.Shape[i] < 0 {
				idx[i] = n.Spatial[i] // symbolic: not padded (padConfig)
				continue
			}
			p := tir.Sub(n.Spatial[i], tir.Int(c.lo[i]))
			q := p
			if step := c.interior[i] + 1; step != 1 {
				q = tir.FloorDiv(p, tir.Int(step))
				cond = and(cond, tir.Bin(tir.OpEQ, tir.FloorMod(p, tir.Int(step)), tir.Int(0)))
			}
			cond = and(cond, tir.Bin(tir.OpGE, p, tir.Int(0)))
			cond = and(cond, tir.LT(q, tir.Int(x.Shape[i])))
			idx[i] = clampIndex(q, x.Shape[i])
		}
		if cond == nil {
			return x.At(idx...)
		}
		return &tir.Select{Cond: cond, T: x.At(idx...), F: padValue}
	}}, nil
}

func sliceCompute(op *g.Op, ins []*tir.Operand, _ tir.DType) (*tir.Compute, error) {
	c, err := sliceConfig(op)
	if err != nil {
		return nil, err
	}
	x := ins[0]
	return &tir.Compute{Shape: c.result.Shape, Body: func(n tir.Nest, _ tir.Expr) tir.Expr {
		idx := make([]tir.Expr, len(x.Shape))
		for i := range idx {
			idx[i] = tir.Add(tir.Mul(n.Spatial[i], tir.Int(c.strides[i])), tir.Int(c.start[i]))
		}
		return x.At(idx...)
	}}, nil
}

// concatCompute selects the piece holding the result position along the
// concatenated dimension (pieces of size 0 are skipped).
func concatCompute(op *g.Op, ins []*tir.Operand, _ tir.DType) (*tir.Compute, error) {
	rt, dim, err := concatConfig(op)
	if err != nil {
		return nil, err
	}
	var pieces []*tir.Operand
	var offsets []int64
	off := int64(0)
	for _, o := range ins {
		if o.Shape[dim] < 0 {
			return nil, errorAt(op, "a concatenation along symbolic dimension %d does not lower to tensor IR yet; pin its symbols with --fix-dim", dim)
		}
		if o.Shape[dim] > 0 {
			pieces = append(pieces, o)
			offsets = append(offsets, off)
		}
		off += o.Shape[dim]
	}
	return &tir.Compute{Shape: rt.Shape, Body: func(n tir.Nest, _ tir.Expr) tir.Expr {
		var e tir.Expr
		for p := len(pieces) - 1; p >= 0; p-- {
			o := pieces[p]
			idx := n.Index()
			pos := tir.Sub(n.Spatial[dim], tir.Int(offsets[p]))
			if len(pieces) > 1 {
				idx[dim] = clampIndex(pos, o.Shape[dim])
			} else {
				idx[dim] = pos
			}
			v := o.At(idx...)
			if e == nil {
				e = v
			} else {
				e = &tir.Select{Cond: tir.LT(n.Spatial[dim], tir.Int(offsets[p+1])), T: v, F: e}
			}
		}
		return e
	}}, nil
}
