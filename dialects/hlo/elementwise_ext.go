package hlo

import (
	"math"

	g "github.com/tessera-ml/tessera/graphir"
)

// More elementwise ops (StableHLO §erf — CHLO's erf, StableHLO has it as
// chlo.erf —, §floor, §ceil, §sign, §clamp, §and, §or, §not):
//
//	hlo.erf(x), hlo.floor(x), hlo.ceil(x)  float x → same type
//	hlo.sign(x)          signed integer or float x → -1, 0 or 1; NaN → NaN, ±0 → ±0
//	hlo.clamp(min, x, max)  min(max(x, min), max); min and max have x's type
//	                     or are rank 0 of its element type; NaN in any
//	                     operand propagates (as maximum/minimum); not i1
//	hlo.and(a, b), hlo.or(a, b)  i1 operands of one type → that type
//	hlo.not(x)           i1 → i1
//
// StableHLO's and/or/not also take integers (bitwise); Tessera's take i1 only.

// Op names of the extension.
const (
	ErfOp   = "hlo.erf"
	FloorOp = "hlo.floor"
	CeilOp  = "hlo.ceil"
	SignOp  = "hlo.sign"
	ClampOp = "hlo.clamp"
	AndOp   = "hlo.and"
	OrOp    = "hlo.or"
	NotOp   = "hlo.not"
)

// sign is -1, 0 or 1 by the sign of x; NaN and ±0 pass through.
func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return x
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func init() {
	ext := []struct {
		name, summary string
		floatOnly     bool
		fn            func(float64) float64
	}{
		{ErfOp, "elementwise Gauss error function", true, math.Erf},
		{FloorOp, "elementwise round toward -inf", true, math.Floor},
		{CeilOp, "elementwise round toward +inf", true, math.Ceil},
		{SignOp, "elementwise sign: -1, 0 or 1 (NaN and ±0 pass through)", false, sign},
	}
	for _, d := range ext {
		registerUnaryDef(unaryDef{d.name, d.summary, d.floatOnly, d.fn})
	}
	for _, d := range []struct {
		name, summary string
		fn            func(a, b bool) bool
	}{
		{AndOp, "elementwise logical and of i1 tensors", func(a, b bool) bool { return a && b }},
		{OrOp, "elementwise logical or of i1 tensors", func(a, b bool) bool { return a || b }},
	} {
		d := d
		g.RegisterOp(&g.OpDef{
			Name: d.name, Summary: d.summary,
			Operands: g.Exactly(2), Results: g.Exactly(1),
			Traits: g.Pure | g.Elementwise | g.SameOperandsAndResultType | g.Commutative, Pretty: true,
			Infer: func(op *g.Op) ([]g.Type, error) {
				tys, err := inferBinary(op, true)
				if err != nil {
					return nil, err
				}
				if tys[0].(*g.TensorType).Elem != g.I1 {
					return nil, op.Errorf("operands must have element type i1, got %s", tys[0])
				}
				return tys, nil
			},
			Eval: func(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
				if err := checkArgSizes(op, args); err != nil {
					return nil, err
				}
				rt, err := evalResultType(op)
				if err != nil {
					return nil, err
				}
				out := g.NewZeroTensor(rt)
				if int64(len(args[0].Data)) != rt.NumElements() {
					return nil, op.Errorf("evaluator got %d elements for a result of %d", len(args[0].Data), rt.NumElements())
				}
				for i := range out.Data {
					out.Data[i] = b2f(d.fn(args[0].Data[i] != 0, args[1].Data[i] != 0))
				}
				return []*g.Tensor{out}, nil
			},
		})
	}
	g.RegisterOp(&g.OpDef{
		Name: NotOp, Summary: "elementwise logical not of an i1 tensor",
		Operands: g.Exactly(1), Results: g.Exactly(1),
		Traits: g.Pure | g.Elementwise | g.SameOperandsAndResultType, Pretty: true,
		Infer: func(op *g.Op) ([]g.Type, error) {
			ts, err := tensorOperands(op)
			if err != nil {
				return nil, err
			}
			if ts[0].Elem != g.I1 {
				return nil, op.Errorf("operand must have element type i1, got %s", ts[0])
			}
			return []g.Type{ts[0]}, nil
		},
		Eval: func(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
			if err := checkArgSizes(op, args); err != nil {
				return nil, err
			}
			rt, err := evalResultType(op)
			if err != nil {
				return nil, err
			}
			if int64(len(args[0].Data)) != rt.NumElements() {
				return nil, op.Errorf("evaluator got %d elements for a result of %d", len(args[0].Data), rt.NumElements())
			}
			out := g.NewZeroTensor(rt)
			for i, x := range args[0].Data {
				out.Data[i] = b2f(x == 0)
			}
			return []*g.Tensor{out}, nil
		},
	})
	g.RegisterOp(&g.OpDef{
		Name:     ClampOp,
		Summary:  "elementwise min(max(x, min), max); min and max have the operand's type or are rank 0",
		Operands: g.Exactly(3), Results: g.Exactly(1), Traits: g.Pure | g.Elementwise, Pretty: true,
		Infer: inferClamp,
		Eval:  evalClamp,
	})
}

// registerUnaryDef registers one unary op described like those of
// elementwise.go: Infer requires a non-i1 (float when floatOnly) operand.
func registerUnaryDef(d unaryDef) {
	g.RegisterOp(&g.OpDef{
		Name: d.name, Summary: d.summary,
		Operands: g.Exactly(1), Results: g.Exactly(1),
		Traits: g.Pure | g.Elementwise | g.SameOperandsAndResultType, Pretty: true,
		Infer: func(op *g.Op) ([]g.Type, error) {
			ts, err := tensorOperands(op)
			if err != nil {
				return nil, err
			}
			if e := ts[0].Elem; e == g.I1 || (d.floatOnly && !e.IsFloat()) {
				want := "a signed integer or floating-point"
				if d.floatOnly {
					want = "a floating-point"
				}
				return nil, op.Errorf("operand must have %s element type, got %s", want, ts[0])
			}
			return []g.Type{ts[0]}, nil
		},
		Eval: func(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
			if err := checkArgSizes(op, args); err != nil {
				return nil, err
			}
			rt, err := evalResultType(op)
			if err != nil {
				return nil, err
			}
			if int64(len(args[0].Data)) != rt.NumElements() {
				return nil, op.Errorf("evaluator got %d elements for a result of %d", len(args[0].Data), rt.NumElements())
			}
			out := g.NewZeroTensor(rt)
			for i, x := range args[0].Data {
				out.Data[i] = d.fn(x)
			}
			return []*g.Tensor{out.Round()}, nil
		},
	})
}

func inferClamp(op *g.Op) ([]g.Type, error) {
	ts, err := tensorOperands(op)
	if err != nil {
		return nil, err
	}
	x := ts[1]
	if x.Elem == g.I1 {
		return nil, op.Errorf("does not accept i1 operands, got %s", x)
	}
	for _, i := range []int{0, 2} {
		b := ts[i]
		if b.Elem != x.Elem {
			return nil, op.Errorf("operand #%d must have element type %s, got %s", i, x.Elem, b)
		}
		if b.Rank() != 0 && !b.Equal(x) {
			return nil, op.Errorf("operand #%d must be rank 0 or have the operand's type %s, got %s", i, x, b)
		}
	}
	return []g.Type{x}, nil
}

func evalClamp(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
	if err := checkArgSizes(op, args); err != nil {
		return nil, err
	}
	rt, err := evalResultType(op)
	if err != nil {
		return nil, err
	}
	lo, x, hi := args[0], args[1], args[2]
	if int64(len(x.Data)) != rt.NumElements() {
		return nil, op.Errorf("evaluator got %d elements for a result of %d", len(x.Data), rt.NumElements())
	}
	at := func(t *g.Tensor, i int) float64 {
		if len(t.Data) == 1 && t.Type.Rank() == 0 {
			return t.Data[0]
		}
		return t.Data[i]
	}
	out := g.NewZeroTensor(rt)
	for i, v := range x.Data {
		out.Data[i] = math.Min(math.Max(v, at(lo, i)), at(hi, i))
	}
	return []*g.Tensor{out.Round()}, nil
}
