package onnx

import (
	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
)

// Normalizations that ONNX defines by formulas over reductions import as
// those formulas in graph ops (the reductions accumulate in float64):
//
//	InstanceNormalization(x, scale, B) {epsilon = 1e-5}, x [N, C, d...]:
//	    m = mean(x) and v = mean((x − m)²) over d... per (n, c);
//	    y = (x − m) / sqrt(v + ε) · scale[c] + B[c]
//	MeanVarianceNormalization(x) {axes = [0, 2, 3]}:
//	    y = (x − mean(x)) / (sqrt(mean((x − mean(x))²)) + 1e-9)
//	    (ONNX's function body)
//	LpNormalization(x) {axis = −1, p = 2}: y = x / ‖x‖_p along axis, p 1 or 2

func init() {
	register(convertInstanceNorm, "InstanceNormalization")
	register(convertMVN, "MeanVarianceNormalization")
	register(convertLpNorm, "LpNormalization")
}

// normChain emits graph ops on one node, threading the first error.
type normChain struct {
	n   *node
	err error
}

func (c *normChain) op(name string, a graphir.DictAttr, ins ...*value) *value {
	if c.err != nil {
		return nil
	}
	v, err := c.n.emit1(name, ins, a)
	c.err = err
	return v
}

// scalar is a rank-0 constant of x's element type.
func (c *normChain) scalar(x *value, v float64) *value {
	t := graphir.NewZeroTensor(graphir.NewTensor(x.typ().Elem))
	t.Data[0] = v
	return constValue(t, c.n.loc)
}

// centered returns x − mean(x) and mean((x − mean(x))²) over axes.
func (c *normChain) centered(x *value, axes []int64) (d, v *value) {
	a := attrs("axes", graphir.I64Array(axes...))
	d = c.op("graph.sub", nil, x, c.op(graph.ReduceMeanOp, a, x))
	v = c.op(graph.ReduceMeanOp, a, c.op("graph.mul", nil, d, d))
	return d, v
}

func convertInstanceNorm(n *node) ([]*value, error) {
	if err := n.need(3, 3); err != nil {
		return nil, err
	}
	eps, err := n.floatAttr("epsilon", 1e-5)
	if err != nil {
		return nil, err
	}
	x := n.in(0)
	r := x.typ().Rank()
	if r < 3 {
		return nil, n.errorf("input must be [N, C, d1, ...] (rank ≥ 3), got %s", x.typ())
	}
	c := &normChain{n: n}
	d, v := c.centered(x, iota(2, r))
	y := c.op("graph.div", nil, d, c.op("graph.sqrt", nil, c.op("graph.add", nil, v, c.scalar(x, eps))))
	perChannel := func(p *value) *value {
		shape := append([]int64{x.typ().Shape[1]}, ones(r-2)...)
		return c.op("graph.reshape", attrs("shape", graphir.I64Array(shape...)), p)
	}
	y = c.op("graph.add", nil, c.op("graph.mul", nil, y, perChannel(n.in(1))), perChannel(n.in(2)))
	return list(y), c.err
}

func convertMVN(n *node) ([]*value, error) {
	if err := n.need(1, 1); err != nil {
		return nil, err
	}
	axes, err := n.intsAttr("axes", []int64{0, 2, 3})
	if err != nil {
		return nil, err
	}
	x := n.in(0)
	for i, a := range axes {
		if axes[i], err = n.normAxisInt(a, x.typ().Rank()); err != nil {
			return nil, err
		}
	}
	c := &normChain{n: n}
	d, v := c.centered(x, axes)
	y := c.op("graph.div", nil, d, c.op("graph.add", nil, c.op("graph.sqrt", nil, v), c.scalar(x, 1e-9)))
	return list(y), c.err
}

func convertLpNorm(n *node) ([]*value, error) {
	if err := n.need(1, 1); err != nil {
		return nil, err
	}
	axis, err := n.intAttr("axis", -1)
	if err != nil {
		return nil, err
	}
	p, err := n.intAttr("p", 2)
	if err != nil {
		return nil, err
	}
	x := n.in(0)
	ax, err := n.normAxisInt(axis, x.typ().Rank())
	if err != nil {
		return nil, err
	}
	a := attrs("axes", graphir.I64Array(ax))
	c := &normChain{n: n}
	var norm *value
	switch p {
	case 1:
		norm = c.op(graph.ReduceSumOp, a, c.op("graph.abs", nil, x))
	case 2:
		norm = c.op(graph.ReduceL2Op, a, x)
	default:
		return nil, n.errorf("p must be 1 or 2, got %d", p)
	}
	return list(c.op("graph.div", nil, x, norm)), c.err
}

func iota(from, to int) []int64 {
	out := make([]int64, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, int64(i))
	}
	return out
}

func ones(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

// normAxisInt normalizes a possibly negative axis for rank r.
func (n *node) normAxisInt(axis int64, r int) (int64, error) {
	d, err := n.normAxis(axis, r)
	return int64(d), err
}
