package graphir_test

import (
	"fmt"

	"github.com/tessera-ml/tessera/graphir"
)

// A small test dialect, registered only in this package's tests, in the
// spirit of MLIR's test dialect: enough ops to exercise the parser,
// printer, verifier, passes and interpreter without the real dialects.

func sameAsOperand0(op *graphir.Op) ([]graphir.Type, error) {
	return []graphir.Type{op.Operand(0).Type}, nil
}

func evalBinary(f func(a, b float64) float64) func(*graphir.Op, []*graphir.Tensor) ([]*graphir.Tensor, error) {
	return func(op *graphir.Op, in []*graphir.Tensor) ([]*graphir.Tensor, error) {
		out := graphir.NewZeroTensor(op.Result(0).Type.(*graphir.TensorType))
		for i := range out.Data {
			out.Data[i] = f(in[0].Data[i], in[1].Data[i])
		}
		return []*graphir.Tensor{out.Round()}, nil
	}
}

func init() {
	graphir.RegisterOp(&graphir.OpDef{
		Name: "test.add", Operands: graphir.Exactly(2), Results: graphir.Exactly(1),
		Traits: graphir.Pure | graphir.Commutative | graphir.Elementwise | graphir.SameOperandsAndResultType,
		Infer:  sameAsOperand0, Pretty: true, Symbolic: true,
		Eval: evalBinary(func(a, b float64) float64 { return a + b }),
	})
	graphir.RegisterOp(&graphir.OpDef{
		Name: "test.neg", Operands: graphir.Exactly(1), Results: graphir.Exactly(1),
		Traits: graphir.Pure | graphir.SameOperandsAndResultType, Infer: sameAsOperand0, Pretty: true,
		Eval: func(op *graphir.Op, in []*graphir.Tensor) ([]*graphir.Tensor, error) {
			out := graphir.NewZeroTensor(in[0].Type)
			for i, v := range in[0].Data {
				out.Data[i] = -v
			}
			return []*graphir.Tensor{out}, nil
		},
		Canonicalize: []*graphir.Pattern{{
			Name: "neg-neg", Root: "test.neg",
			Rewrite: func(op *graphir.Op, rw *graphir.Rewriter) bool {
				in := op.Operand(0).Def
				if in == nil || in.Name != "test.neg" {
					return false
				}
				rw.ReplaceOp(op, in.Operand(0))
				return true
			},
		}},
	})
	graphir.RegisterOp(&graphir.OpDef{
		Name: "test.const", Operands: graphir.Exactly(0), Results: graphir.Exactly(1),
		Traits: graphir.Pure | graphir.ConstantLike, Pretty: true,
		Attrs: []graphir.AttrSpec{{Name: "value", Kind: graphir.KindDense, Required: true}},
		Infer: func(op *graphir.Op) ([]graphir.Type, error) {
			return []graphir.Type{op.Attr("value").(*graphir.DenseElementsAttr).Type}, nil
		},
		Eval: func(op *graphir.Op, _ []*graphir.Tensor) ([]*graphir.Tensor, error) {
			t, err := graphir.TensorFromDense(op.Attr("value").(*graphir.DenseElementsAttr))
			return []*graphir.Tensor{t}, err
		},
	})
	graphir.RegisterOp(&graphir.OpDef{
		Name: "test.print", Operands: graphir.AtLeast(1), Results: graphir.Exactly(0), Pretty: true,
	})
	graphir.RegisterOp(&graphir.OpDef{
		Name: "test.attrs", Operands: graphir.Exactly(0), Results: graphir.Exactly(0), Pretty: true,
		Attrs: []graphir.AttrSpec{
			{Name: "i", Kind: graphir.KindInt, Required: true},
			{Name: "f", Kind: graphir.KindFloat},
			{Name: "s", Kind: graphir.KindString},
			{Name: "b", Kind: graphir.KindBool},
			{Name: "ints", Kind: graphir.KindIntArray, Len: 2},
			{Name: "mode", Kind: graphir.KindEnum, Enum: []string{"loop", "input"}},
			{Name: "t", Kind: graphir.KindType},
			{Name: "d", Kind: graphir.KindDict},
			{Name: "u", Kind: graphir.KindUnit},
		},
		Verify: func(op *graphir.Op) error {
			if i, err := op.Int("i"); err != nil || i < 0 {
				return op.Errorf("attribute 'i' must be non-negative, got %d", i)
			}
			return nil
		},
	})
	graphir.RegisterOp(&graphir.OpDef{
		Name: "test.region", Operands: graphir.AtLeast(0), Results: graphir.AtLeast(0), Regions: 1,
		Traits: graphir.Pure | graphir.IsolatedFromAbove,
		Eval: func(op *graphir.Op, in []*graphir.Tensor) ([]*graphir.Tensor, error) {
			return graphir.EvalBlock(op.Regions[0].Entry(), in)
		},
		Verify: func(op *graphir.Op) error {
			if n := len(op.Regions[0].Entry().Args); n != op.NumOperands() {
				return fmt.Errorf("region has %d arguments for %d operands", n, op.NumOperands())
			}
			return nil
		},
	})
	graphir.RegisterOp(&graphir.OpDef{
		Name: "test.yield", Operands: graphir.AtLeast(0), Results: graphir.Exactly(0),
		Traits: graphir.Terminator, Pretty: true,
	})
}
