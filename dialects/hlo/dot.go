package hlo

import (
	g "github.com/tessera-ml/tessera/graphir"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// DotGeneralOp is the op's name.
const DotGeneralOp = "hlo.dot_general"

// hlo.dot_general(lhs, rhs) {lhs_batching_dimensions, rhs_batching_dimensions,
// lhs_contracting_dimensions, rhs_contracting_dimensions} (StableHLO
// §dot_general). All four attributes are integer arrays, default [].
// The result shape is the batch dims (sizes from lhs, in the order of
// lhs_batching_dimensions) ++ the lhs free dims ++ the rhs free dims (free
// dims in increasing order). Operands share an element type, which is the
// result's, except 8-bit integer operands (i8 or ui8, mixed allowed),
// whose products accumulate in an i32 result (XLA's s8 dot with
// preferred_element_type s32); products accumulate in float64 and round
// once (exact for the 8-bit case: every partial sum of a contraction
// shorter than 2^38 is an integer below 2^53).
//
// Errors: batching/contracting lists of different lengths, dimensions out
// of range or repeated (within and across the batching and contracting
// lists of one side), mismatched batch or contracting sizes.

// DotDims holds the dimension numbers of hlo.dot_general.
type DotDims struct {
	LhsBatch, RhsBatch             []int64
	LhsContracting, RhsContracting []int64
}

// Attrs returns the dimension numbers as op attributes (empty lists omitted).
func (d DotDims) Attrs() g.DictAttr {
	var a g.DictAttr
	set := func(name string, vs []int64) {
		if len(vs) > 0 {
			a = a.Set(name, g.I64Array(vs...))
		}
	}
	set("lhs_batching_dimensions", d.LhsBatch)
	set("rhs_batching_dimensions", d.RhsBatch)
	set("lhs_contracting_dimensions", d.LhsContracting)
	set("rhs_contracting_dimensions", d.RhsContracting)
	return a
}

// DotGeneral builds a detached hlo.dot_general with inferred result type.
func DotGeneral(lhs, rhs *g.Value, dims DotDims, loc g.Location) (*g.Op, error) {
	return g.Build(DotGeneralOp, []*g.Value{lhs, rhs}, dims.Attrs(), loc)
}

func init() {
	arr := func(n string) g.AttrSpec { return g.AttrSpec{Name: n, Kind: g.KindIntArray} }
	register(&g.OpDef{
		Name:     DotGeneralOp,
		Symbolic: true,
		Summary:  "generalized tensor contraction with batch and contracting dimensions",
		Operands: g.Exactly(2), Results: g.Exactly(1), Traits: g.Pure | g.Contraction, Pretty: true,
		Attrs: []g.AttrSpec{arr("lhs_batching_dimensions"), arr("rhs_batching_dimensions"),
			arr("lhs_contracting_dimensions"), arr("rhs_contracting_dimensions")},
		Infer: func(op *g.Op) ([]g.Type, error) {
			c, err := dotConfig(op)
			if err != nil {
				return nil, err
			}
			return []g.Type{c.result}, nil
		},
		Eval: evalDot,
	}, Lowering{Compute: dotCompute, Symbolic: true})
}

type dotCfg struct {
	lhs, rhs         *g.TensorType
	dims             DotDims
	lhsFree, rhsFree []int64
	result           *g.TensorType
}

func dotConfig(op *g.Op) (*dotCfg, error) {
	ts, err := tensorOperands(op)
	if err != nil {
		return nil, err
	}
	c := &dotCfg{lhs: ts[0], rhs: ts[1]}
	elem, err := contractionElem(op, c.lhs, c.rhs)
	if err != nil {
		return nil, err
	}
	for _, p := range []struct {
		name string
		dst  *[]int64
	}{
		{"lhs_batching_dimensions", &c.dims.LhsBatch}, {"rhs_batching_dimensions", &c.dims.RhsBatch},
		{"lhs_contracting_dimensions", &c.dims.LhsContracting}, {"rhs_contracting_dimensions", &c.dims.RhsContracting},
	} {
		if *p.dst, err = op.Ints(p.name); err != nil {
			return nil, err
		}
	}
	d := c.dims
	if len(d.LhsBatch) != len(d.RhsBatch) {
		return nil, op.Errorf("lhs_batching_dimensions and rhs_batching_dimensions must have the same length, got %d and %d", len(d.LhsBatch), len(d.RhsBatch))
	}
	if len(d.LhsContracting) != len(d.RhsContracting) {
		return nil, op.Errorf("lhs_contracting_dimensions and rhs_contracting_dimensions must have the same length, got %d and %d", len(d.LhsContracting), len(d.RhsContracting))
	}
	if err := checkDims(op, "lhs batching and contracting dimensions", append(append([]int64{}, d.LhsBatch...), d.LhsContracting...), c.lhs.Rank()); err != nil {
		return nil, err
	}
	if err := checkDims(op, "rhs batching and contracting dimensions", append(append([]int64{}, d.RhsBatch...), d.RhsContracting...), c.rhs.Rank()); err != nil {
		return nil, err
	}
	for i := range d.LhsBatch {
		if l, r := c.lhs.Dim(int(d.LhsBatch[i])), c.rhs.Dim(int(d.RhsBatch[i])); !l.Equal(r) {
			return nil, op.Errorf("batching dimension %d has size %s on lhs (dim %d) but %s on rhs (dim %d)", i, l, d.LhsBatch[i], r, d.RhsBatch[i])
		}
	}
	for i := range d.LhsContracting {
		if l, r := c.lhs.Dim(int(d.LhsContracting[i])), c.rhs.Dim(int(d.RhsContracting[i])); !l.Equal(r) {
			return nil, op.Errorf("contracting dimension %d has size %s on lhs (dim %d) but %s on rhs (dim %d)", i, l, d.LhsContracting[i], r, d.RhsContracting[i])
		}
	}
	var dims []*g.SymExpr
	for _, b := range d.LhsBatch {
		dims = append(dims, c.lhs.Dim(int(b)))
	}
	for i := 0; i < c.lhs.Rank(); i++ {
		if !containsDim(d.LhsBatch, i) && !containsDim(d.LhsContracting, i) {
			c.lhsFree = append(c.lhsFree, int64(i))
			dims = append(dims, c.lhs.Dim(i))
		}
	}
	for i := 0; i < c.rhs.Rank(); i++ {
		if !containsDim(d.RhsBatch, i) && !containsDim(d.RhsContracting, i) {
			c.rhsFree = append(c.rhsFree, int64(i))
			dims = append(dims, c.rhs.Dim(i))
		}
	}
	c.result = g.NewTensorDims(elem, dims...)
	return c, nil
}

func evalDot(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
	if err := checkArgSizes(op, args); err != nil {
		return nil, err
	}
	c, err := dotConfig(op)
	if err != nil {
		return nil, err
	}
	lhs, rhs := args[0], args[1]
	ls, rs := g.Strides(c.lhs.Shape), g.Strides(c.rhs.Shape)
	// Offsets of every contracting multi-index in lhs and rhs.
	kShape := make([]int64, len(c.dims.LhsContracting))
	for i, d := range c.dims.LhsContracting {
		kShape[i] = c.lhs.Shape[d]
	}
	nk := g.NewTensor(g.F64, kShape...).NumElements()
	lk, rk := make([]int64, nk), make([]int64, nk)
	kidx := make([]int64, len(kShape))
	for k := int64(0); k < nk; k++ {
		unravel(k, kShape, kidx)
		for i, x := range kidx {
			lk[k] += x * ls[c.dims.LhsContracting[i]]
			rk[k] += x * rs[c.dims.RhsContracting[i]]
		}
	}
	out := g.NewZeroTensor(c.result)
	idx := make([]int64, c.result.Rank())
	nb := len(c.dims.LhsBatch)
	nl := len(c.lhsFree)
	for o := range out.Data {
		unravel(int64(o), c.result.Shape, idx)
		var lb, rb int64
		for i := 0; i < nb; i++ {
			lb += idx[i] * ls[c.dims.LhsBatch[i]]
			rb += idx[i] * rs[c.dims.RhsBatch[i]]
		}
		for i, d := range c.lhsFree {
			lb += idx[nb+i] * ls[d]
		}
		for i, d := range c.rhsFree {
			rb += idx[nb+nl+i] * rs[d]
		}
		var acc float64
		for k := range lk {
			acc += lhs.Data[lb+lk[k]] * rhs.Data[rb+rk[k]]
		}
		out.Data[o] = acc
	}
	if rt, err := evalResultType(op); err == nil && !rt.Equal(c.result) {
		return nil, op.Errorf("written result type %s differs from the inferred %s", rt, c.result)
	}
	return []*g.Tensor{out.Round()}, nil
}

// dotCompute: one reduce variable per contracting pair; result dims are
// batch ++ lhs free ++ rhs free, as dotConfig orders them.
func dotCompute(op *g.Op, ins []*tir.Operand, res tir.DType) (*tir.Compute, error) {
	c, err := dotConfig(op)
	if err != nil {
		return nil, err
	}
	d := c.dims
	nb, nl := len(d.LhsBatch), len(c.lhsFree)
	red := make([]int64, len(d.LhsContracting))
	for i, k := range d.LhsContracting {
		red[i] = c.lhs.Shape[k]
	}
	redExt, err := reduceExtents(op, ins[0], d.LhsContracting)
	if err != nil {
		return nil, err
	}
	return &tir.Compute{Shape: c.result.Shape, Reduce: red, ReduceExtents: redExt,
		Init: func(tir.Nest) tir.Expr { return tir.Zero(res) },
		Body: func(n tir.Nest, acc tir.Expr) tir.Expr {
			l := dotIndex(n, c.lhs.Rank(), d.LhsBatch, d.LhsContracting, c.lhsFree, nb)
			r := dotIndex(n, c.rhs.Rank(), d.RhsBatch, d.RhsContracting, c.rhsFree, nb+nl)
			return multiplyAdd(acc, widen(ins[0].At(l...), res), widen(ins[1].At(r...), res), res)
		}}, nil
}

// Is8Bit reports whether d is i8 or ui8.
func Is8Bit(d g.DType) bool { return d == g.I8 || d == g.UI8 }

// contractionElem is the result element type of a contraction of lhs by
// rhs: their shared element type, or i32 for 8-bit operands (mixed i8
// and ui8 allowed). Errors: other element types that differ.
func contractionElem(op *g.Op, lhs, rhs *g.TensorType) (g.DType, error) {
	switch {
	case Is8Bit(lhs.Elem) && Is8Bit(rhs.Elem):
		return g.I32, nil
	case lhs.Elem != rhs.Elem:
		return 0, op.Errorf("operands must have the same element type, got %s and %s", lhs, rhs)
	}
	return lhs.Elem, nil
}

// widen casts an operand of a narrower type than the accumulator dt (the
// 8-bit operands of an i32 contraction) to dt.
func widen(e tir.Expr, dt tir.DType) tir.Expr {
	if e.DType() == dt {
		return e
	}
	return &tir.Cast{Type: dt, X: e}
}

// dotIndex is an operand's index for the iteration variables of n: batch
// dimension #p reads spatial variable p, contracting #p reduce variable
// p, free #q spatial variable freeBase+q.
func dotIndex(n tir.Nest, rank int, batch, contract, free []int64, freeBase int) []tir.Expr {
	idx := make([]tir.Expr, rank)
	for p, d := range batch {
		idx[d] = n.Spatial[p]
	}
	for p, d := range contract {
		idx[d] = n.Reduce[p]
	}
	for q, d := range free {
		idx[d] = n.Spatial[freeBase+q]
	}
	return idx
}

// multiplyAdd is acc + a*b (acc || (a && b) on i1).
func multiplyAdd(acc, a, b tir.Expr, dt tir.DType) tir.Expr {
	if dt.IsBool() {
		return tir.Bin(tir.OpOr, acc, tir.Bin(tir.OpAnd, a, b))
	}
	return tir.Add(acc, tir.Mul(a, b))
}
