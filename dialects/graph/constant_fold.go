package graph

import (
	"fmt"
	"strconv"

	"github.com/tessera-ml/tessera/graphir"
)

// DefaultConstantFoldMaxElements bounds the size of a folded result.
const DefaultConstantFoldMaxElements = 1 << 20

func init() {
	graphir.RegisterPass(&graphir.PassInfo{
		Name:    "constant-fold",
		Summary: "replace graph ops whose operands are all graph.constant by a graph.constant of their evaluated result",
		Options: map[string]string{
			"max-elements": "largest result (in elements) that is folded; default 1048576",
		},
		New: func(opts map[string]string) (graphir.Pass, error) {
			limit := int64(DefaultConstantFoldMaxElements)
			if s, ok := opts["max-elements"]; ok {
				v, err := strconv.ParseInt(s, 10, 64)
				if err != nil || v < 0 {
					return nil, fmt.Errorf("option max-elements must be a non-negative integer, got %q", s)
				}
				limit = v
			}
			return &graphir.FuncPass{PassName: "constant-fold", Fn: func(f *graphir.Func) error {
				ConstantFold(f, limit)
				return nil
			}}, nil
		},
	})
}

// ConstantFold folds, in program order, every graph-dialect op with at
// least one operand, no regions and a reference evaluator whose operands
// are all graph.constant (with data not elided) and whose results have at
// most maxElements elements each (or, for an elementwise op, a quantize or
// a dequantize, at most as many as its largest operand stores, a splat
// storing one): the op is
// replaced by graph.constant ops
// holding its evaluated results, at its location. Chains fold in one call.
// Ops whose evaluation fails (e.g. integer division by zero) are left
// alone. Constants left without users are removed. It returns the number
// of ops folded.
func ConstantFold(f *graphir.Func, maxElements int64) int {
	var ops []*graphir.Op
	f.Walk(func(op *graphir.Op) { ops = append(ops, op) })
	folded := 0
	for _, op := range ops {
		if !foldable(op, maxElements) {
			continue
		}
		args := make([]*graphir.Tensor, op.NumOperands())
		ok := true
		for i, v := range op.Operands() {
			t, err := graphir.TensorFromDense(ConstantOf(v))
			if err != nil {
				ok = false
				break
			}
			args[i] = t
		}
		if !ok {
			continue
		}
		outs, err := op.Def.Eval(op, args)
		if err != nil || len(outs) != len(op.Results) {
			continue
		}
		for i, r := range op.Results {
			if !outs[i].Type.Equal(r.Type) {
				ok = false
			}
		}
		if !ok {
			continue
		}
		producers := op.Operands()
		for i, r := range op.Results {
			c := newConstant(outs[i], op.Loc)
			op.Block.InsertBefore(op, c)
			r.ReplaceAllUsesWith(c.Results[0])
		}
		producers = append([]*graphir.Value(nil), producers...)
		op.Erase()
		for _, v := range producers {
			if v.Def != nil && v.Def.Block != nil && v.Def.IsUnused() {
				v.Def.Erase()
			}
		}
		folded++
	}
	return folded
}

func foldable(op *graphir.Op, maxElements int64) bool {
	if op.Block == nil || op.Def == nil || op.Def.Eval == nil || op.Dialect() != "graph" ||
		op.HasTrait(graphir.ConstantLike) || !op.HasTrait(graphir.Pure) || len(op.Regions) > 0 || op.NumOperands() == 0 {
		return false
	}
	limit := maxElements
	for _, v := range op.Operands() {
		d := ConstantOf(v)
		if d == nil {
			return false
		}
		if elementLinear(op) {
			limit = max(limit, int64(d.Len()))
		}
	}
	for _, r := range op.Results {
		t := graphir.AsTensor(r.Type)
		if t == nil || t.NumElements() > limit {
			return false
		}
	}
	return true
}

// elementLinear reports whether op computes each result element from the
// operand elements at its position (elementwise ops, quantize and
// dequantize): its cost is linear in its size, and a result no larger
// than an operand's stored data adds no more constant data than exists,
// so it is
// folded above the max-elements limit too (a large int8 weight's
// dequantize, which would otherwise run on every call).
func elementLinear(op *graphir.Op) bool {
	return op.HasTrait(graphir.Elementwise) || op.Name == DequantizeLinearOp || op.Name == QuantizeLinearOp
}
