package hlo

import (
	g "github.com/tessera-ml/tessera/graphir"
)

// Op names.
const (
	FusionOp = "hlo.fusion"
	ReturnOp = "hlo.return"
)

// hlo.fusion(inputs...) ({ ^bb0(args matching inputs): ... hlo.return %r })
// {kind = "loop" | "input" | "output" | "opaque"} groups ops that are compiled into one
// kernel (XLA's fusion instruction). The region is isolated from above: its
// block arguments stand for the operands, in order, with the same types,
// and the hlo.return operand types are the fusion's result types.
//   - loop:   elementwise and data-movement ops only
//   - input:  a reduce / reduce_window hero with fused elementwise producers
//   - output: a dot_general / convolution hero with an elementwise epilogue
//     (and layout-only ops on its operands)
//   - opaque: one Opaque op alone (hlo.rnn_scan), whose lowering builds
//     the whole kernel
//
// hlo.return(values...) terminates the regions of hlo.fusion, hlo.reduce and
// hlo.reduce_window.

// FusionKinds are the values of hlo.fusion's kind attribute.
var FusionKinds = []string{"loop", "input", "output", "opaque"}

func init() {
	g.RegisterOp(&g.OpDef{
		Name:     FusionOp,
		Symbolic: true,
		Summary:  "a group of ops compiled into one kernel; region args are the operands",
		Operands: g.AtLeast(0), Results: g.AtLeast(1), Regions: 1,
		Traits: g.Pure | g.IsolatedFromAbove,
		Attrs:  []g.AttrSpec{{Name: "kind", Kind: g.KindEnum, Required: true, Enum: FusionKinds}},
		Verify: verifyFusion,
		Eval: func(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
			if err := verifyFusion(op); err != nil {
				return nil, err
			}
			if err := checkArgs(op, args, op.NumOperands()); err != nil {
				return nil, err
			}
			return g.EvalBlock(op.Regions[0].Blocks[0], args)
		},
	})
	g.RegisterOp(&g.OpDef{
		Name:     ReturnOp,
		Symbolic: true,
		Summary:  "returns values from the region of hlo.fusion, hlo.reduce, hlo.reduce_window or hlo.scatter",
		Operands: g.AtLeast(0), Results: g.Exactly(0), Traits: g.Terminator | g.Pure, Pretty: true,
		Verify: func(op *g.Op) error {
			p := op.ParentOp()
			if p == nil || (p.Name != FusionOp && p.Name != ReduceOp && p.Name != ReduceWindowOp && p.Name != ScatterOp) {
				return op.Errorf("expects parent op to be one of '%s', '%s', '%s', '%s'", FusionOp, ReduceOp, ReduceWindowOp, ScatterOp)
			}
			return nil
		},
	})
}

func verifyFusion(op *g.Op) error {
	if len(op.Regions) != 1 || len(op.Regions[0].Blocks) != 1 {
		return op.Errorf("region must have exactly one block")
	}
	b := op.Regions[0].Blocks[0]
	if len(b.Args) != op.NumOperands() {
		return op.Errorf("region has %d arguments but the op has %d operands", len(b.Args), op.NumOperands())
	}
	for i, a := range b.Args {
		if o := op.Operand(i); o == nil || !a.Type.Equal(o.Type) {
			return op.Errorf("region argument #%d has type %s but operand #%d has type %s", i, a.Type, i, typeOf(o))
		}
	}
	ret := b.Last()
	if ret == nil || ret.Name != ReturnOp {
		return op.Errorf("region must end with '%s'", ReturnOp)
	}
	if ret.NumOperands() != len(op.Results) {
		return op.Errorf("region returns %d values but the op has %d results", ret.NumOperands(), len(op.Results))
	}
	for i, r := range op.Results {
		if v := ret.Operand(i); v == nil || !v.Type.Equal(r.Type) {
			return op.Errorf("region returns %s as value #%d but result #%d has type %s", typeOf(v), i, i, r.Type)
		}
	}
	return nil
}

func typeOf(v *g.Value) string {
	if v == nil {
		return "<null>"
	}
	return v.Type.String()
}
