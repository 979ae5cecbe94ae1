package graph

import (
	"errors"
	"math"

	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// LayerNormOp is graph.layer_norm(x, scale, bias?) {axis = -1, epsilon =
// 1e-5}: ONNX LayerNormalization (opset 17). The normalized dimensions
// are [axis, rank); mean and variance are taken over them:
//
//	y = (x − mean) · rsqrt(var + epsilon) · scale + bias
//
// scale and bias broadcast (numpy rules, trailing-aligned) to the
// normalized shape. The three results are y (x's type), the mean and the
// inverse standard deviation rsqrt(var + epsilon), both of shape
// x.shape[:axis] followed by ones (ONNX's optional outputs Mean and
// InvStdDev). Computed in x's float type (stash_type 1 computes f32 inputs
// in f32).
const LayerNormOp = "graph.layer_norm"

func init() {
	register(&graphir.OpDef{
		Name:     LayerNormOp,
		Summary:  "layer normalization over the trailing dimensions from axis (ONNX LayerNormalization)",
		Operands: graphir.Arity{Min: 2, Max: 3},
		Results:  graphir.Exactly(3),
		Traits:   graphir.Pure,
		Attrs: []graphir.AttrSpec{
			{Name: "axis", Kind: graphir.KindInt, Default: graphir.IntAttr(-1)},
			{Name: "epsilon", Kind: graphir.KindFloat, Default: graphir.F32Attr(1e-5)},
		},
		Infer:  inferLayerNorm,
		Eval:   evalLayerNorm,
		Pretty: true,
	}, Conversions{Legalize: legalizeLayerNorm})
}

// layerNormAxis validates op's operands and returns the first normalized
// dimension.
func layerNormAxis(op *graphir.Op, ts []*graphir.TensorType) (int, error) {
	x := ts[0]
	if err := requireFloat(op, x); err != nil {
		return 0, err
	}
	if x.Rank() == 0 {
		return 0, op.Errorf("input must have rank at least 1, got %s", x)
	}
	axis, err := op.Int("axis")
	if err != nil {
		return 0, err
	}
	ax, err := normAxis(op, axis, x.Rank())
	if err != nil {
		return 0, err
	}
	eps, err := op.Float("epsilon")
	if err != nil {
		return 0, err
	}
	if !(eps >= 0) || math.IsInf(eps, 0) {
		return 0, op.Errorf("epsilon %g must be finite and non-negative", eps)
	}
	norm := x.Shape[ax:]
	for i, p := range ts[1:] {
		what := [...]string{"scale", "bias"}[i]
		if p.Elem != x.Elem {
			return 0, op.Errorf("%s has element type %s, the input %s", what, p.Elem, x.Elem)
		}
		if p.Rank() > len(norm) {
			return 0, op.Errorf("%s %s has more dimensions than the normalized shape %v", what, p, norm)
		}
		for j, d := range p.Shape {
			if n := norm[len(norm)-p.Rank()+j]; d != n && d != 1 {
				return 0, op.Errorf("%s %s does not broadcast to the normalized shape %v", what, p, norm)
			}
		}
	}
	return ax, nil
}

func inferLayerNorm(op *graphir.Op) ([]graphir.Type, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	ax, err := layerNormAxis(op, ts)
	if err != nil {
		return nil, err
	}
	x := ts[0]
	stat := append([]int64(nil), x.Shape...)
	for i := ax; i < len(stat); i++ {
		stat[i] = 1
	}
	st := &graphir.TensorType{Shape: stat, Elem: x.Elem}
	return []graphir.Type{x, st, st}, nil
}

// evalLayerNorm computes in float64, sequentially, then rounds to the type.
func evalLayerNorm(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	if err := checkArgs(op, args); err != nil {
		return nil, err
	}
	tys, err := inferLayerNorm(op)
	if err != nil {
		return nil, err
	}
	ax, _ := op.Int("axis")
	axis, _ := normAxis(op, ax, args[0].Type.Rank())
	eps, _ := op.Float("epsilon")
	x := args[0]
	norm := x.Shape()[axis:]
	n := int(product(norm))
	y := graphir.NewZeroTensor(tys[0].(*graphir.TensorType))
	mean := graphir.NewZeroTensor(tys[1].(*graphir.TensorType))
	inv := graphir.NewZeroTensor(tys[2].(*graphir.TensorType))
	params := make([][]int64, len(args)-1) // element of scale/bias per normalized position
	for i, p := range args[1:] {
		params[i] = broadcastIndex(p.Shape(), norm)
	}
	for r := range mean.Data {
		row := x.Data[r*n : (r+1)*n]
		var s float64
		for _, v := range row {
			s += v
		}
		m := s / float64(n)
		var q float64
		for _, v := range row {
			q += (v - m) * (v - m)
		}
		is := 1 / math.Sqrt(q/float64(n)+eps)
		mean.Data[r], inv.Data[r] = m, is
		for j, v := range row {
			o := (v - m) * is * args[1].Data[params[0][j]]
			if len(args) > 2 {
				o += args[2].Data[params[1][j]]
			}
			y.Data[r*n+j] = o
		}
	}
	return []*graphir.Tensor{y.Round(), mean.Round(), inv.Round()}, nil
}

// legalizeLayerNorm: mean = reduce add over [axis, rank) / n, d = x −
// mean, var = reduce add of d·d / n, inv = rsqrt(var + ε), y = d · inv ·
// scale + bias (each broadcast_in_dim to x's shape); the statistics are
// reshaped to keep the normalized dimensions as ones.
func legalizeLayerNorm(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x := op.Operand(0)
	xt := graphir.AsTensor(x.Type)
	tys, err := inferLayerNorm(op)
	if err != nil {
		return nil, err
	}
	ax, _ := op.Int("axis")
	axis, _ := normAxis(op, ax, xt.Rank())
	eps, _ := op.Float("epsilon")
	var red, keep []int64
	for i := 0; i < xt.Rank(); i++ {
		if i >= axis {
			red = append(red, int64(i))
		} else {
			keep = append(keep, int64(i))
		}
	}
	n := float64(product(xt.Shape[axis:]))
	c := &chain{b: b, t: xt}
	st := &chain{b: b, t: &graphir.TensorType{Shape: xt.Shape[:axis], Elem: xt.Elem}}
	back := func(v *graphir.Value) *graphir.Value {
		return c.do(func() (*graphir.Value, error) { return b.broadcastInDim(v, xt.Shape, keep) })
	}
	param := func(v *graphir.Value) *graphir.Value {
		pr := graphir.AsTensor(v.Type).Rank()
		dims := make([]int64, pr)
		for i := range dims {
			dims[i] = int64(xt.Rank() - pr + i)
		}
		return c.do(func() (*graphir.Value, error) { return b.broadcastInDim(v, xt.Shape, dims) })
	}
	sum := func(v *graphir.Value) *graphir.Value {
		return c.do(func() (*graphir.Value, error) { return b.reduce(v, 0, hlo.AddOp, red) })
	}
	mean := st.op(hlo.DivideOp, sum(x), st.splat(n))
	d := c.op(hlo.SubtractOp, x, back(mean))
	variance := st.op(hlo.DivideOp, sum(c.op(hlo.MultiplyOp, d, d)), st.splat(n))
	inv := st.op(hlo.RsqrtOp, st.op(hlo.AddOp, variance, st.splat(eps)))
	y := c.op(hlo.MultiplyOp, c.op(hlo.MultiplyOp, d, back(inv)), param(op.Operand(1)))
	if bias := optionalOperand(op, 2); bias != nil {
		y = c.op(hlo.AddOp, y, param(bias))
	}
	stat := func(v *graphir.Value) *graphir.Value {
		return c.do(func() (*graphir.Value, error) { return b.reshape(v, graphir.AsTensor(tys[1]).Shape) })
	}
	m, is := stat(mean), stat(inv)
	if err := errors.Join(c.err, st.err); err != nil {
		return nil, err
	}
	return []*graphir.Value{y, m, is}, nil
}
