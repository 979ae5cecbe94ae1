package graph

import (
	"sort"

	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// TopKOp is graph.topk(x) {k, axis = -1, largest = true, sorted = true}:
// ONNX TopK (opsets 1–11) with K a compile-time constant, the attribute k
// (required, 0 ≤ k ≤ the size n of dimension axis). x is numeric (float or
// integer, not i1) of rank r ≥ 1; axis is in [−r, r−1]. Two results, both
// of x's shape with dimension axis set to k: Values (x's element type) and
// Indices (i64), the k largest (smallest) elements of each slice along
// axis in order, most extreme first, and their positions. Equal elements
// come in increasing position order (ONNX's tie rule). NaN counts as the
// most extreme value (as graph.argmax/argmin, so k = 1 agrees with them):
// NaNs come first, among themselves by position. sorted = false lets the
// k elements come in any order (ONNX); the result is always sorted, which
// is one of those orders.
const TopKOp = "graph.topk"

func init() {
	register(&graphir.OpDef{
		Name:     TopKOp,
		Summary:  "the k largest or smallest elements along one axis and their positions (ONNX TopK)",
		Operands: graphir.Exactly(1),
		Results:  graphir.Exactly(2),
		Traits:   graphir.Pure,
		Attrs: []graphir.AttrSpec{
			{Name: "k", Kind: graphir.KindInt, Required: true},
			{Name: "axis", Kind: graphir.KindInt, Default: graphir.IntAttr(-1)},
			{Name: "largest", Kind: graphir.KindBool, Default: graphir.BoolAttr(true)},
			{Name: "sorted", Kind: graphir.KindBool, Default: graphir.BoolAttr(true)},
		},
		Infer:  inferTopK,
		Eval:   evalTopK,
		Pretty: true,
	}, Conversions{Legalize: legalizeTopK})
}

// topKParams returns the normalized axis, k and largest of a topk on x.
// Errors: as orderAxis, a negative k, k above the size of the axis.
func topKParams(op *graphir.Op, x *graphir.TensorType) (ax int, k int64, largest bool, err error) {
	if ax, err = orderAxis(op, x); err != nil {
		return
	}
	if k, err = op.Int("k"); err != nil {
		return
	}
	if k < 0 {
		err = op.Errorf("k = %d must not be negative", k)
		return
	}
	if n := x.Shape[ax]; k > n {
		err = op.Errorf("k = %d exceeds the size %d of dimension %d (the axis) of %s", k, n, ax, x)
		return
	}
	largest, err = op.Bool("largest")
	return
}

func inferTopK(op *graphir.Op) ([]graphir.Type, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	x := ts[0]
	ax, k, _, err := topKParams(op, x)
	if err != nil {
		return nil, err
	}
	shape := append([]int64(nil), x.Shape...)
	shape[ax] = k
	return []graphir.Type{&graphir.TensorType{Shape: shape, Elem: x.Elem}, &graphir.TensorType{Shape: shape, Elem: graphir.I64}}, nil
}

// evalTopK sorts the positions of each slice stably by beats (so equal
// elements keep their position order) and keeps the first k.
func evalTopK(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	if err := checkArgs(op, args); err != nil {
		return nil, err
	}
	tys, err := inferTopK(op)
	if err != nil {
		return nil, err
	}
	x := args[0]
	ax, k, largest, err := topKParams(op, x.Type)
	if err != nil {
		return nil, err
	}
	vals := graphir.NewZeroTensor(graphir.AsTensor(tys[0]))
	idxs := graphir.NewZeroTensor(graphir.AsTensor(tys[1]))
	shape := x.Shape()
	outer, n, inner := product(shape[:ax]), shape[ax], product(shape[ax+1:])
	order := make([]int64, n)
	for o := int64(0); o < outer; o++ {
		for in := int64(0); in < inner; in++ {
			at := func(p int64) float64 { return x.Data[o*n*inner+p*inner+in] }
			for i := range order {
				order[i] = int64(i)
			}
			sort.SliceStable(order, func(a, b int) bool { return beats(at(order[a]), at(order[b]), largest) })
			for r := int64(0); r < k; r++ {
				dst := o*k*inner + r*inner + in
				vals.Data[dst], idxs.Data[dst] = at(order[r]), float64(order[r])
			}
		}
	}
	return []*graphir.Tensor{vals, idxs}, nil
}

// legalizeTopK uses a rank formulation, as hlo has no sort. Along the axis
// (n elements), element j comes before element i when it beats it (x_j >
// x_i for largest, x_j < x_i for smallest; a NaN beats a number) or ties
// with it (equal, or both NaN) at an earlier position j < i. Comparing x
// broadcast to [..., n_i, n_j, ...] with itself, the count of the j before
// each i (convert to i64, reduce add over j) is its rank: a permutation of
// [0, n). Output slot s then takes, over a [..., k_s, n_i, ...] broadcast,
// reduce max of select(rank_i = s, x_i, lowest) and of select(rank_i = s,
// i, 0): exactly one i hits, so the value (±inf and NaN included) and the
// index come out exact. Cost: O(n²) comparisons per slice for the ranks
// and O(k·n) selects for the outputs; fine for the small n of
// classification heads and beam widths, quadratic for long axes.
func legalizeTopK(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x := op.Operand(0)
	xt := graphir.AsTensor(x.Type)
	ax, k, largest, err := topKParams(op, xt)
	if err != nil {
		return nil, err
	}
	rank, err := topKRanks(b, x, ax, largest)
	if err != nil {
		return nil, err
	}
	return topKGather(b, x, rank, ax, k)
}

// topKRanks builds the i64 rank of every element of x along axis ax
// (legalizeTopK): x's shape, values a permutation of [0, n) per slice.
func topKRanks(b *builder, x *graphir.Value, ax int, largest bool) (*graphir.Value, error) {
	xt := graphir.AsTensor(x.Type)
	r := xt.Rank()
	pair := insertDim(xt.Shape, ax+1, xt.Shape[ax])
	c := &chain{b: b, t: graphir.NewTensor(graphir.I64, pair...)}
	xi := c.broadcast(x, pair, spreadDims(r, ax, ax))
	xj := c.broadcast(x, pair, spreadDims(r, ax, ax+1))
	dir := "LT"
	if largest {
		dir = "GT"
	}
	strict, tie := c.cmp(dir, xj, xi), c.cmp("EQ", xj, xi)
	if xt.Elem.IsFloat() {
		nanI, nanJ := c.cmp("NE", xi, xi), c.cmp("NE", xj, xj)
		strict = c.op(hlo.OrOp, strict, c.op(hlo.AndOp, nanJ, c.cmp("EQ", xi, xi)))
		tie = c.op(hlo.OrOp, tie, c.op(hlo.AndOp, nanJ, nanI))
	}
	earlier := c.cmp("LT", c.positions(pair, ax+1), c.positions(pair, ax))
	before := c.op(hlo.OrOp, strict, c.op(hlo.AndOp, tie, earlier))
	count := c.do(func() (*graphir.Value, error) { return b.insert(hlo.Convert(before, graphir.I64, b.src.Loc)) })
	rank := c.reduce(count, 0, hlo.AddOp, []int64{int64(ax + 1)})
	return rank, c.err
}

// topKGather builds the Values and Indices of legalizeTopK from the ranks:
// over [..., k, n, ...] (slot s at ax, element i at ax+1), slot s takes the
// element whose rank is s.
func topKGather(b *builder, x, rank *graphir.Value, ax int, k int64) ([]*graphir.Value, error) {
	xt := graphir.AsTensor(x.Type)
	slots := insertDim(xt.Shape, ax, k)
	c := &chain{b: b, t: graphir.NewTensor(graphir.I64, slots...)}
	inner := spreadDims(xt.Rank(), ax, ax+1)
	hit := c.cmp("EQ", c.broadcast(rank, slots, inner), c.positions(slots, ax))
	low := lowestValue(xt.Elem)
	lowest := c.do(func() (*graphir.Value, error) { return b.splat(graphir.NewTensor(xt.Elem, slots...), low) })
	reduced := []int64{int64(ax + 1)}
	vals := c.reduce(c.op(hlo.SelectOp, hit, c.broadcast(x, slots, inner), lowest), low, hlo.MaximumOp, reduced)
	idxs := c.reduce(c.op(hlo.SelectOp, hit, c.positions(slots, ax+1), c.splat(0)), 0, hlo.MaximumOp, reduced)
	if c.err != nil {
		return nil, c.err
	}
	return []*graphir.Value{vals, idxs}, nil
}

// insertDim is shape with a dimension of size n inserted at position at.
func insertDim(shape []int64, at int, n int64) []int64 {
	out := append([]int64(nil), shape[:at]...)
	out = append(out, n)
	return append(out, shape[at:]...)
}

// spreadDims maps the r dimensions of a value into a rank r+1 shape that
// has one dimension inserted next to ax: dimension ax goes to to (ax or
// ax+1), those before ax stay, those after shift by one.
func spreadDims(r, ax, to int) []int64 {
	dims := make([]int64, r)
	for d := range dims {
		switch {
		case d < ax:
			dims[d] = int64(d)
		case d == ax:
			dims[d] = int64(to)
		default:
			dims[d] = int64(d + 1)
		}
	}
	return dims
}

// broadcast is broadcast_in_dim of v to shape with the dimension map dims.
func (c *chain) broadcast(v *graphir.Value, shape, dims []int64) *graphir.Value {
	return c.do(func() (*graphir.Value, error) { return c.b.broadcastInDim(v, shape, dims) })
}

// reduce is hlo.reduce of v over dims from init with the binary hlo op
// combiner (see builder.reduce).
func (c *chain) reduce(v *graphir.Value, init float64, combiner string, dims []int64) *graphir.Value {
	return c.do(func() (*graphir.Value, error) { return c.b.reduce(v, init, combiner, dims) })
}
