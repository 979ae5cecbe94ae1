package graph

import (
	"math"

	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// ArgMaxOp and ArgMinOp are graph.argmax / graph.argmin(x) {axis = 0,
// keepdims = true, select_last_index = false}: ONNX ArgMax / ArgMin
// (opsets 1–13). x is a numeric tensor (float or integer, not i1) of rank
// r ≥ 1 whose dimension axis (in [−r, r−1]) is not empty; the result is
// i64, x's shape with dimension axis set to 1 (keepdims) or dropped. Each
// element is the position along axis of the maximum (minimum) of its
// slice: the first one, or with select_last_index the last one. NaN counts
// as the extreme for both ops, as NumPy's argmax/argmin (ONNX's
// reference): a slice holding NaN gives the position of its first (last)
// NaN.
const (
	ArgMaxOp = "graph.argmax"
	ArgMinOp = "graph.argmin"
)

func init() {
	for _, k := range []struct{ name, onnx, what string }{
		{ArgMaxOp, "ArgMax", "maximum"},
		{ArgMinOp, "ArgMin", "minimum"},
	} {
		register(&graphir.OpDef{
			Name:     k.name,
			Summary:  "position of the " + k.what + " along one axis, i64 (ONNX " + k.onnx + ")",
			Operands: graphir.Exactly(1),
			Results:  graphir.Exactly(1),
			Traits:   graphir.Pure,
			Attrs: []graphir.AttrSpec{
				{Name: "axis", Kind: graphir.KindInt, Default: graphir.IntAttr(0)},
				{Name: "keepdims", Kind: graphir.KindBool, Default: graphir.BoolAttr(true)},
				{Name: "select_last_index", Kind: graphir.KindBool, Default: graphir.BoolAttr(false)},
			},
			Infer:  inferArgReduce,
			Eval:   evalArgReduce,
			Pretty: true,
		}, Conversions{Legalize: legalizeArgReduce, ONNX: k.onnx})
	}
}

// requireNumeric checks that t has a float or integer element type other
// than i1 (the ops that order elements: argmax, argmin, topk).
func requireNumeric(op *graphir.Op, t *graphir.TensorType) error {
	if t.Elem == graphir.I1 {
		return op.Errorf("requires a numeric (float or integer, not i1) element type, got %s", t)
	}
	return nil
}

// orderAxis validates the input of an op that orders the elements along
// attribute axis (argmax, argmin, topk) and returns the axis in [0, r).
// Errors: an i1 input, rank 0, an axis out of range.
func orderAxis(op *graphir.Op, t *graphir.TensorType) (int, error) {
	if err := requireNumeric(op, t); err != nil {
		return 0, err
	}
	if t.Rank() == 0 {
		return 0, op.Errorf("input must have rank at least 1, got %s", t)
	}
	axis, err := op.Int("axis")
	if err != nil {
		return 0, err
	}
	return normAxis(op, axis, t.Rank())
}

// argReduceParams returns the normalized axis, keepdims and
// select_last_index of an argmax/argmin on x. Errors: as orderAxis, and
// an empty dimension along axis (no position to return).
func argReduceParams(op *graphir.Op, x *graphir.TensorType) (ax int, keep, last bool, err error) {
	if ax, err = orderAxis(op, x); err != nil {
		return
	}
	if x.Shape[ax] == 0 {
		err = op.Errorf("dimension %d (the axis) of %s is empty: there is no position to select", ax, x)
		return
	}
	if keep, err = op.Bool("keepdims"); err != nil {
		return
	}
	last, err = op.Bool("select_last_index")
	return
}

// axisMask marks dimension ax of a rank-r shape.
func axisMask(r, ax int) []bool {
	m := make([]bool, r)
	m[ax] = true
	return m
}

func inferArgReduce(op *graphir.Op) ([]graphir.Type, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	ax, keep, _, err := argReduceParams(op, ts[0])
	if err != nil {
		return nil, err
	}
	return one(&graphir.TensorType{Shape: reducedShape(ts[0].Shape, axisMask(ts[0].Rank(), ax), keep), Elem: graphir.I64}), nil
}

// beats reports whether a is strictly more extreme than b: greater (max)
// or smaller (min), NaN beating every number.
func beats(a, b float64, max bool) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && !math.IsNaN(b)
	}
	if max {
		return a > b
	}
	return a < b
}

// ties reports whether a and b are equally extreme (equal, or both NaN).
func ties(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

func evalArgReduce(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	x := args[0]
	ax, _, last, err := argReduceParams(op, x.Type)
	if err != nil {
		return nil, err
	}
	isMax := op.Name == ArgMaxOp
	shape := x.Shape()
	outer, n, inner := product(shape[:ax]), shape[ax], product(shape[ax+1:])
	for o := int64(0); o < outer; o++ {
		for in := int64(0); in < inner; in++ {
			base := o*n*inner + in
			best := int64(0)
			for k := int64(1); k < n; k++ {
				v, b := x.Data[base+k*inner], x.Data[base+best*inner]
				if beats(v, b, isMax) || last && ties(v, b) {
					best = k
				}
			}
			out.Data[o*inner+in] = float64(best)
		}
	}
	return []*graphir.Tensor{out}, nil
}

// legalizeArgReduce: m = reduce max (min) of x along the axis; the
// positions that hit are where x = broadcast(m), or, for a float x whose
// slice holds a NaN (reduce or of x ≠ x), where x is NaN. With p the i64
// positions [0, n) broadcast along the axis, the first hit is reduce min
// of select(hit, p, n), the last reduce max of select(hit, p, −1); then
// reshape to the keepdims shape.
func legalizeArgReduce(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x := op.Operand(0)
	xt := graphir.AsTensor(x.Type)
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	ax, _, last, err := argReduceParams(op, xt)
	if err != nil {
		return nil, err
	}
	c := &chain{b: b, t: graphir.NewTensor(graphir.I64, xt.Shape...)}
	dims := []int64{int64(ax)}
	var extreme *graphir.Value
	if op.Name == ArgMaxOp {
		extreme = c.reduce(x, lowestValue(xt.Elem), hlo.MaximumOp, dims)
	} else {
		extreme = c.reduce(x, highestValue(xt.Elem), hlo.MinimumOp, dims)
	}
	keep := keptDims(xt.Rank(), ax)
	hit := c.cmp("EQ", x, c.broadcast(extreme, xt.Shape, keep))
	if xt.Elem.IsFloat() {
		// NaN is the extreme (NumPy's argmax): the first NaN wins.
		nan := c.cmp("NE", x, x)
		hasNaN := c.reduce(nan, 0, hlo.OrOp, dims)
		hit = c.op(hlo.SelectOp, c.broadcast(hasNaN, xt.Shape, keep), nan, hit)
	}
	p := c.positions(xt.Shape, ax)
	var idx *graphir.Value
	if last {
		idx = c.reduce(c.op(hlo.SelectOp, hit, p, c.splat(-1)), -1, hlo.MaximumOp, dims)
	} else {
		n := float64(xt.Shape[ax])
		idx = c.reduce(c.op(hlo.SelectOp, hit, p, c.splat(n)), n, hlo.MinimumOp, dims)
	}
	return c.done(c.do(func() (*graphir.Value, error) { return b.reshape(idx, rt.Shape) }))
}

// keptDims is [0, r) without ax: where a value reduced over ax maps back
// into the rank-r shape.
func keptDims(r, ax int) []int64 {
	var keep []int64
	for i := 0; i < r; i++ {
		if i != ax {
			keep = append(keep, int64(i))
		}
	}
	return keep
}

// positions is the i64 constant [0, 1, ..., shape[at]−1] broadcast to
// shape along dimension at: each element's position along that dimension.
func (c *chain) positions(shape []int64, at int) *graphir.Value {
	n := shape[at]
	pos := graphir.NewZeroTensor(graphir.NewTensor(graphir.I64, n))
	for i := range pos.Data {
		pos.Data[i] = float64(i)
	}
	return c.do(func() (*graphir.Value, error) {
		v, err := c.b.constant(pos.ToDense())
		if err != nil {
			return nil, err
		}
		return c.b.broadcastInDim(v, shape, []int64{int64(at)})
	})
}
