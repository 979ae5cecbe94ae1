// Package hlo is Tessera's fusion-level dialect: StableHLO-named tensor
// primitives (no implicit broadcasting; static shapes, or symbolic
// dimensions for the ops that set OpDef.Symbolic) and hlo.fusion, a
// region op grouping primitives into one kernel (kind loop, input or output).
// Every op has a verifier, result type inference where the result type is
// implied by operands and attributes, and a reference evaluator used by
// graphir.Interpret. The fusion pass `fuse` lives in fusion_pass.go.
//
// Semantics follow the StableHLO specification
// (https://github.com/openxla/stablehlo/blob/main/docs/spec.md); the
// README.md beside this file lists every op, its attributes and defaults.
package hlo

import (
	"fmt"

	g "github.com/tessera-ml/tessera/graphir"
)

// tensorOperands returns the tensor types of all operands, or a diagnostic
// naming the first non-tensor operand.
func tensorOperands(op *g.Op) ([]*g.TensorType, error) {
	if d := op.Def; d != nil {
		if n := op.NumOperands(); n < d.Operands.Min || (d.Operands.Max >= 0 && n > d.Operands.Max) {
			return nil, op.Errorf("expects %s operands, got %d", d.Operands, n)
		}
	}
	ts := make([]*g.TensorType, op.NumOperands())
	for i := range ts {
		if op.Operand(i) == nil {
			return nil, op.Errorf("operand #%d is null", i)
		}
		t, err := op.TensorOperand(i)
		if err != nil {
			return nil, err
		}
		ts[i] = t
	}
	return ts, nil
}

// resultTensor returns result i's tensor type or a diagnostic.
func resultTensor(op *g.Op, i int) (*g.TensorType, error) {
	if i >= len(op.Results) {
		return nil, op.Errorf("expects at least %d results, got %d", i+1, len(op.Results))
	}
	t, ok := op.Results[i].Type.(*g.TensorType)
	if !ok {
		return nil, op.Errorf("result #%d must be a tensor, got %s", i, op.Results[i].Type)
	}
	return t, nil
}

// padPairs reads an attribute written [[lo, hi], ...] with n pairs; absent
// means all zeros.
func padPairs(op *g.Op, name string, n int) (lo, hi []int64, err error) {
	lo, hi = make([]int64, n), make([]int64, n)
	a := op.Attr(name)
	if a == nil {
		return lo, hi, nil
	}
	bad := op.Errorf("attribute '%s' must be an array of %d [low, high] integer pairs, got %s", name, n, g.FormatAttr(a))
	arr, ok := a.(g.ArrayAttr)
	if !ok || len(arr) != n {
		return nil, nil, bad
	}
	for i, e := range arr {
		pair, ok := e.(g.ArrayAttr)
		if !ok || len(pair) != 2 {
			return nil, nil, bad
		}
		l, ok1 := pair[0].(*g.IntegerAttr)
		h, ok2 := pair[1].(*g.IntegerAttr)
		if !ok1 || !ok2 {
			return nil, nil, bad
		}
		lo[i], hi[i] = l.Value, h.Value
	}
	return lo, hi, nil
}

// PaddingAttr builds a [[lo, hi], ...] attribute as used by
// hlo.convolution's and hlo.reduce_window's padding.
func PaddingAttr(lo, hi []int64) g.ArrayAttr {
	out := make(g.ArrayAttr, len(lo))
	for i := range lo {
		out[i] = g.I64Array(lo[i], hi[i])
	}
	return out
}

// checkDims verifies that dims are distinct and in [0, rank).
func checkDims(op *g.Op, what string, dims []int64, rank int) error {
	seen := make(map[int64]bool, len(dims))
	for _, d := range dims {
		if d < 0 || d >= int64(rank) {
			return op.Errorf("%s: dimension %d is out of range for rank %d", what, d, rank)
		}
		if seen[d] {
			return op.Errorf("%s: dimension %d appears more than once", what, d)
		}
		seen[d] = true
	}
	return nil
}

func containsDim(dims []int64, d int) bool {
	for _, x := range dims {
		if x == int64(d) {
			return true
		}
	}
	return false
}

// unravel writes the multi-index of linear index i for shape into idx.
func unravel(i int64, shape []int64, idx []int64) {
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 0 {
			idx[d] = i % shape[d]
			i /= shape[d]
		}
	}
}

// offset is the row-major linear index of idx given strides.
func offset(idx, strides []int64) int64 {
	var o int64
	for d, x := range idx {
		o += x * strides[d]
	}
	return o
}

// evalResultType returns the written tensor type of result 0 for evaluators.
func evalResultType(op *g.Op) (*g.TensorType, error) {
	if len(op.Results) != 1 {
		return nil, op.Errorf("expects 1 result, got %d", len(op.Results))
	}
	return resultTensor(op, 0)
}

// checkArgs makes sure evaluator inputs match the operand count.
func checkArgs(op *g.Op, args []*g.Tensor, n int) error {
	if len(args) != n {
		return fmt.Errorf("'%s' op evaluator expects %d inputs, got %d", op.Name, n, len(args))
	}
	return nil
}

// checkArgSizes makes sure each evaluator input has as many elements as its
// operand's type says, so that evaluators index safely.
func checkArgSizes(op *g.Op, args []*g.Tensor) error {
	if err := checkArgs(op, args, op.NumOperands()); err != nil {
		return err
	}
	for i, a := range args {
		t, ok := op.Operand(i).Type.(*g.TensorType)
		if !ok || a == nil || int64(len(a.Data)) != t.NumElements() {
			return op.Errorf("evaluator input #%d does not match the operand type %s", i, op.Operand(i).Type)
		}
	}
	return nil
}

// Symbolic dimensions (graphir.TensorType.Sym). The ops that set
// OpDef.Symbolic infer and verify over dimension expressions
// (TensorType.Dims, compared with SymExpr.Equal); a check that needs a
// constant where a dimension is symbolic is a diagnostic naming the
// symbol (staticDim), never a comparison of Shape's Dynamic entries.

// staticDim returns dimension d of t, which op needs as a constant (what
// says what for). Errors: a symbolic dimension, naming its expression
// and the --fix-dim flags that pin its symbols.
func staticDim(op *g.Op, t *g.TensorType, d int, what string) (int64, error) {
	if t.Sym == nil || t.Sym[d] == nil {
		return t.Shape[d], nil
	}
	e := t.Sym[d]
	return 0, op.Errorf("%s (dimension %d of %s) is symbolic (%s) and must be a constant here; pin it with %s", what, d, t, e, g.FixDimHint(e.Symbols()))
}

// elementCount is the number of elements of t as an expression (the
// product of its dimensions).
func elementCount(t *g.TensorType) *g.SymExpr {
	if t.IsStatic() {
		return g.SymConst(t.NumElements())
	}
	n := g.SymConst(1)
	for _, d := range t.Dims() {
		n = n.Mul(d)
	}
	return n
}

// symWindowOutput is windowOutput over a symbolic input dimension in
// (undilated): ⌊(lo + in + hi − dw)/stride⌋ + 1 for the window of k taps
// dilated by dil (dw = (k−1)·dil + 1), stride ≥ 1. It assumes the window
// fits, as the graph dialect's inference does; BindFunc's verification
// computes the constant size again at the binding.
func symWindowOutput(in *g.SymExpr, k, dil, stride, lo, hi int64) *g.SymExpr {
	if k <= 0 {
		return g.SymConst(0)
	}
	dw := (k-1)*dil + 1
	q, _ := in.AddConst(lo + hi - dw).FloorDiv(stride)
	return q.AddConst(1)
}

// IsIdentityPermutation reports whether p maps every dimension to itself.
func IsIdentityPermutation(p []int64) bool {
	for i, d := range p {
		if d != int64(i) {
			return false
		}
	}
	return true
}

// InversePermutation is q with q[p[i]] = i: transpose(transpose(x, p),
// q) is x.
func InversePermutation(p []int64) []int64 {
	q := make([]int64, len(p))
	for i, d := range p {
		q[d] = int64(i)
	}
	return q
}

// ComposePermutations is the one permutation r with transpose(x, r) =
// transpose(transpose(x, inner), outer): r[i] = inner[outer[i]].
func ComposePermutations(inner, outer []int64) []int64 {
	r := make([]int64, len(outer))
	for i, d := range outer {
		r[i] = inner[d]
	}
	return r
}
