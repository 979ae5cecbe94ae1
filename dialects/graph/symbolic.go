package graph

import (
	"fmt"

	"github.com/tessera-ml/tessera/graphir"
)

// Symbolic dimensions (graphir.TensorType.Sym) in shape inference. The
// ops whose definitions set Symbolic infer result dimensions as
// expressions over the operands' symbols; what an expression cannot say
// (a symbolic channel count a weight must match, a ceil-mode window, a
// slice bound inside a symbolic dimension) is refused naming the
// dimension and its symbol, with the --fix-dim hint.

// requireStatic refuses dimension d of operand t when it is symbolic:
// what says what op needs the dimension for.
func requireStatic(op *graphir.Op, t *graphir.TensorType, d int, what string) error {
	if t.Sym == nil || t.Sym[d] == nil {
		return nil
	}
	return symbolicRefusal(op, t.Sym[d], fmt.Sprintf("%s (dimension %d of %s)", what, d, t))
}

// symbolicRefusal is the diagnostic for a symbolic dimension e that an op
// needs constant, with the --fix-dim hint.
func symbolicRefusal(op *graphir.Op, e *graphir.SymExpr, what string) error {
	return op.Errorf("%s is symbolic (%s) and must be a constant here; pin it with %s", what, e, graphir.FixDimHint(e.Symbols()))
}

// BroadcastDims is BroadcastShapes over dimension expressions: a constant
// 1 takes the other dimension, equal expressions stay. Errors: two
// different symbolic expressions, or a symbolic one against a constant
// other than 1 (the diagnostic names both).
func BroadcastDims(a, b *graphir.TensorType) ([]*graphir.SymExpr, error) {
	if a.IsStatic() && b.IsStatic() {
		s, err := BroadcastShapes(a.Shape, b.Shape)
		if err != nil {
			return nil, err
		}
		return graphir.NewTensor(a.Elem, s...).Dims(), nil
	}
	da, db := a.Dims(), b.Dims()
	n := max(len(da), len(db))
	out := make([]*graphir.SymExpr, n)
	for i := range out {
		x, y := graphir.SymConst(1), graphir.SymConst(1)
		if j := len(da) - n + i; j >= 0 {
			x = da[j]
		}
		if j := len(db) - n + i; j >= 0 {
			y = db[j]
		}
		cx, okx := x.Const()
		cy, oky := y.Const()
		switch {
		case x.Equal(y), oky && cy == 1:
			out[i] = x
		case okx && cx == 1:
			out[i] = y
		case okx && oky:
			return nil, fmt.Errorf("shapes %s and %s are not broadcast-compatible (dimension %d: %d vs %d)", a, b, i, cx, cy)
		default:
			return nil, fmt.Errorf("shapes %s and %s are not broadcast-compatible (dimension %d: %s vs %s)", a, b, i, x, y)
		}
	}
	return out, nil
}

// windowOutDim is windowOutputSize over a dimension expression:
// floor((in + lo + hi − eff) / stride) + 1 for a symbolic in (the bound
// check waits for the binding, BindFunc's verification). Errors: those of
// windowOutputSize; ceil mode over a symbolic dimension (its last-window
// rule depends on the value), refused by the caller with the hint.
func windowOutDim(in *graphir.SymExpr, kernel, stride, lo, hi, dilation int64, ceil bool) (*graphir.SymExpr, error) {
	if c, ok := in.Const(); ok {
		v, err := windowOutputSize(c, kernel, stride, lo, hi, dilation, ceil)
		return graphir.SymConst(v), err
	}
	if _, err := windowOutputSize(dilation*(kernel-1)+1, kernel, stride, lo, hi, dilation, false); err != nil {
		return nil, err
	}
	if ceil {
		return nil, errCeilSymbolic
	}
	eff := dilation*(kernel-1) + 1
	q, err := in.AddConst(lo + hi - eff).FloorDiv(stride)
	if err != nil {
		return nil, err
	}
	return q.AddConst(1), nil
}

var errCeilSymbolic = fmt.Errorf("ceil_mode over a symbolic dimension")

// windowDims infers the spatial output dimensions of a 2-D window op over
// x (N×C×H×W): H and W through windowOutDim. Errors: located at op.
func windowDims(op *graphir.Op, x *graphir.TensorType, kernel, strides, pads, dilations []int64, ceil bool, other string) (oh, ow *graphir.SymExpr, err error) {
	names := [2]string{"height", "width"}
	var out [2]*graphir.SymExpr
	for i := range out {
		out[i], err = windowOutDim(x.Dim(2+i), kernel[i], strides[i], pads[i], pads[i+2], dilations[i], ceil)
		switch {
		case err == errCeilSymbolic:
			return nil, nil, symbolicRefusal(op, x.Dim(2+i), fmt.Sprintf("the %s under ceil_mode", names[i]))
		case err != nil:
			return nil, nil, op.Errorf("%s: %v (input %s, %s)", names[i], err, x, other)
		}
	}
	return out[0], out[1], nil
}

// productDims returns the product of dims.
func productDims(dims []*graphir.SymExpr) *graphir.SymExpr {
	p := graphir.SymConst(1)
	for _, d := range dims {
		p = p.Mul(d)
	}
	return p
}

// dimsString prints dimension expressions as a list, [2, 3] or [b, 4*s].
func dimsString(ds []*graphir.SymExpr) string { return "[" + graphir.FormatSymExprs(ds) + "]" }
