package graph

import (
	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// TriluOp is graph.trilu(x, k?) {upper = true}: ONNX Trilu. x has rank ≥ 2;
// k, when given, is a rank-0 i64 tensor (default 0). For every matrix of
// the last two dimensions, y[..., i, j] = x[..., i, j] where j − i ≥ k
// (upper) or j − i ≤ k (lower), else 0.
const TriluOp = "graph.trilu"

func init() {
	register(&graphir.OpDef{
		Name:     TriluOp,
		Summary:  "keep the upper or lower triangle of the last two dimensions (ONNX Trilu)",
		Operands: graphir.Arity{Min: 1, Max: 2},
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Attrs:    []graphir.AttrSpec{{Name: "upper", Kind: graphir.KindBool, Default: graphir.BoolAttr(true)}},
		Infer:    inferTrilu,
		Eval:     evalTrilu,
		Pretty:   true,
	}, Conversions{Legalize: legalizeTrilu, ONNX: "Trilu"})
}

func inferTrilu(op *graphir.Op) ([]graphir.Type, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	if ts[0].Rank() < 2 {
		return nil, op.Errorf("input must have rank at least 2, got %s", ts[0])
	}
	if len(ts) > 1 && (ts[1].Rank() != 0 || ts[1].Elem != graphir.I64) {
		return nil, op.Errorf("k must be a rank-0 i64 tensor, got %s", ts[1])
	}
	return one(ts[0]), nil
}

// keepTri reports whether element (i, j) survives.
func keepTri(upper bool, i, j, k int64) bool {
	if upper {
		return j-i >= k
	}
	return j-i <= k
}

func evalTrilu(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	upper, err := op.Bool("upper")
	if err != nil {
		return nil, err
	}
	var k int64
	if len(args) > 1 {
		k = int64(args[1].Data[0])
	}
	s := args[0].Shape()
	rows, cols := s[len(s)-2], s[len(s)-1]
	for p, v := range args[0].Data {
		i, j := int64(p)/cols%rows, int64(p)%cols
		if keepTri(upper, i, j, k) {
			out.Data[p] = v
		}
	}
	return []*graphir.Tensor{out}, nil
}

// legalizeTrilu: select(compare(D, broadcast(k)), x, 0) with D the i64
// constant D[i][j] = j − i of the last two dimensions (GE for upper, LE for
// lower) broadcast over the leading ones.
func legalizeTrilu(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x := op.Operand(0)
	xt := graphir.AsTensor(x.Type)
	upper, err := op.Bool("upper")
	if err != nil {
		return nil, err
	}
	r := xt.Rank()
	if product(xt.Shape) == 0 {
		return []*graphir.Value{x}, nil // nothing to mask
	}
	rows, cols := xt.Shape[r-2], xt.Shape[r-1]
	mt := graphir.NewTensor(graphir.I64, rows, cols)
	d := graphir.NewZeroTensor(mt)
	for p := range d.Data {
		d.Data[p] = float64(int64(p)%cols - int64(p)/cols)
	}
	c := &chain{b: b, t: mt}
	diff := c.do(func() (*graphir.Value, error) { return b.constant(d.ToDense()) })
	k := optionalOperand(op, 1)
	var kb *graphir.Value
	if k == nil {
		kb = c.splat(0)
	} else {
		kb = c.do(func() (*graphir.Value, error) { return b.broadcastInDim(k, mt.Shape, nil) })
	}
	dir := "LE"
	if upper {
		dir = "GE"
	}
	keep := c.cmp(dir, diff, kb)
	full := c.do(func() (*graphir.Value, error) {
		return b.broadcastInDim(keep, xt.Shape, []int64{int64(r - 2), int64(r - 1)})
	})
	xc := &chain{b: b, t: xt}
	y := xc.op(hlo.SelectOp, full, x, xc.splat(0))
	if c.err != nil {
		return nil, c.err
	}
	return xc.done(y)
}
