package graph

import (
	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// CumSumOp is graph.cumsum(x) {axis = 0, exclusive = false, reverse =
// false}: ONNX CumSum (opsets 11–17) with its axis input as an attribute.
// y[..., i, ...] = Σ x[..., j, ...] over j ≤ i along axis (j < i when
// exclusive; j ≥ i, or j > i, when reverse). Float and integer x; the
// result has x's type. Sums accumulate in float64 in the evaluator.
const CumSumOp = "graph.cumsum"

func init() {
	register(&graphir.OpDef{
		Name:     CumSumOp,
		Summary:  "cumulative sum along one axis (ONNX CumSum)",
		Operands: graphir.Exactly(1),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure | graphir.SameOperandsAndResultType,
		Attrs: []graphir.AttrSpec{
			{Name: "axis", Kind: graphir.KindInt, Default: graphir.IntAttr(0)},
			{Name: "exclusive", Kind: graphir.KindBool, Default: graphir.BoolAttr(false)},
			{Name: "reverse", Kind: graphir.KindBool, Default: graphir.BoolAttr(false)},
		},
		Infer: func(op *graphir.Op) ([]graphir.Type, error) {
			x, _, _, _, err := cumsumConfig(op)
			if err != nil {
				return nil, err
			}
			return one(x), nil
		},
		Eval:   evalCumSum,
		Pretty: true,
	}, Conversions{Legalize: legalizeCumSum})
}

func cumsumConfig(op *graphir.Op) (x *graphir.TensorType, axis int, exclusive, reverse bool, err error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, 0, false, false, err
	}
	x = ts[0]
	if x.Rank() == 0 || x.Elem == graphir.I1 {
		return nil, 0, false, false, op.Errorf("input must have rank ≥ 1 and a numeric element type, got %s", x)
	}
	a, err := op.Int("axis")
	if err != nil {
		return nil, 0, false, false, err
	}
	if axis, err = normAxis(op, a, x.Rank()); err != nil {
		return nil, 0, false, false, err
	}
	if exclusive, err = op.Bool("exclusive"); err != nil {
		return nil, 0, false, false, err
	}
	reverse, err = op.Bool("reverse")
	return x, axis, exclusive, reverse, err
}

func evalCumSum(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	_, _, exclusive, reverse, err := cumsumConfig(op)
	if err != nil {
		return nil, err
	}
	x := args[0]
	err = forEachAxisRow(op, x, func(base, n, stride int64) {
		sum := 0.0
		for k := int64(0); k < n; k++ {
			i := k
			if reverse {
				i = n - 1 - k
			}
			p := base + i*stride
			if exclusive {
				out.Data[p] = sum
				sum += x.Data[p]
			} else {
				sum += x.Data[p]
				out.Data[p] = sum
			}
		}
	})
	if err != nil {
		return nil, err
	}
	return []*graphir.Tensor{out.Round()}, nil
}

// legalizeCumSum is one hlo.reduce_window (add) whose window spans the
// whole axis (n), padded so that output i covers exactly its prefix:
// low n−1 (exclusive: n, high −1); reverse mirrors the padding. O(n) adds
// per output element, exact for integers.
func legalizeCumSum(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, ax, exclusive, reverse, err := cumsumConfig(op)
	if err != nil {
		return nil, err
	}
	n := x.Shape[ax]
	if n == 0 {
		return []*graphir.Value{op.Operand(0)}, nil
	}
	r := x.Rank()
	cfg := hlo.WindowConfig{WindowDimensions: make([]int64, r), PadLow: make([]int64, r), PadHigh: make([]int64, r)}
	for d := range cfg.WindowDimensions {
		cfg.WindowDimensions[d] = 1
	}
	cfg.WindowDimensions[ax] = n
	lo, hi := n-1, int64(0)
	if exclusive {
		lo, hi = n, -1
	}
	if reverse {
		lo, hi = hi, lo
	}
	cfg.PadLow[ax], cfg.PadHigh[ax] = lo, hi
	iv, err := b.scalar(x.Elem, 0)
	if err != nil {
		return nil, err
	}
	return oneValue(b.insert(hlo.ReduceWindow(op.Operand(0), iv, cfg, hlo.AddOp, op.Loc)))
}
