package onnx

import (
	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
)

// Elementwise ops: unary math and activations, binary arithmetic with
// NumPy broadcasting, comparisons and logic (i1 results), Where, Cast,
// Clip and the variadic Max/Min/Sum/Mean.

// The unary and binary ops whose graph op implements them one-to-one
// (Relu, Exp, Add, Equal, LeakyRelu, ...) are imported by convertDirect
// from the graph op's definition (graph.ONNXOp); constant inputs fold
// through the op's reference evaluator.

func init() {
	register(convertXor, "Xor")
	registerSymbolic(convertPow, "Pow")
	registerSymbolic(convertClip, "Clip")
	registerSymbolic(convertVariadic, "Max", "Min", "Sum", "Mean")
	registerSymbolic(convertCast, "Cast", "CastLike")
	register(convertThresholdedRelu, "ThresholdedRelu")
}

func allConst(xs ...*value) bool {
	for _, x := range xs {
		if x == nil || !x.isConst() {
			return false
		}
	}
	return true
}

// convertXor: a ≠ b on booleans, not(equal(a, b)).
func convertXor(n *node) ([]*value, error) {
	if err := n.need(2, 2); err != nil {
		return nil, err
	}
	eq, err := n.emit1(graph.EqualOp, list(n.in(0), n.in(1)), nil)
	if err != nil {
		return nil, err
	}
	return n.emit(graph.NotOp, list(eq), nil)
}

func convertPow(n *node) ([]*value, error) {
	if err := n.need(2, 2); err != nil {
		return nil, err
	}
	return n.convertPow(n.in(0), n.in(1))
}

// convertPow handles Pow's independent base and exponent types (the result
// has the base's type): a float base takes the exponent cast to its type;
// an integer base is raised in f64 and the result cast back (truncating,
// as the ONNX reference's astype does).
func (n *node) convertPow(a, b *value) ([]*value, error) {
	at, bt := a.typ().Elem, b.typ().Elem
	if at == bt {
		return n.emit("graph.pow", list(a, b), nil)
	}
	cast := func(x *value, dt graphir.DType) (*value, error) {
		if x.typ().Elem == dt {
			return x, nil
		}
		if x.isConst() {
			return constValue(foldCast(x.tensor(), dt), n.loc), nil
		}
		out, err := n.emitTyped("graph.cast", list(x), nil, []graphir.Type{x.typ().WithElem(dt)})
		if err != nil {
			return nil, err
		}
		return out[0], nil
	}
	if at.IsFloat() {
		e, err := cast(b, at)
		if err != nil {
			return nil, err
		}
		return n.emit("graph.pow", list(a, e), nil)
	}
	fa, err := cast(a, graphir.F64)
	if err != nil {
		return nil, err
	}
	fb, err := cast(b, graphir.F64)
	if err != nil {
		return nil, err
	}
	p, err := n.emit1("graph.pow", list(fa, fb), nil)
	if err != nil {
		return nil, err
	}
	r, err := cast(p, at)
	if err != nil {
		return nil, err
	}
	return list(r), nil
}

// convertClip maps Clip to graph.clip {min, max}: attributes before opset
// 11, optional constant scalar inputs from opset 11.
func convertClip(n *node) ([]*value, error) {
	a := graphir.DictAttr{}
	if n.opset < 11 {
		if err := n.need(1, 1); err != nil {
			return nil, err
		}
		for _, name := range []string{"min", "max"} {
			if n.has(name) {
				v, err := n.floatAttr(name, 0)
				if err != nil {
					return nil, err
				}
				a = a.Set(name, graphir.F32Attr(v))
			}
		}
	} else {
		if err := n.need(1, 3); err != nil {
			return nil, err
		}
		for i, name := range []string{"min", "max"} {
			if n.in(i+1) == nil {
				continue
			}
			t, err := n.constInput(i+1, name)
			if err != nil {
				return nil, err
			}
			if len(t.Data) != 1 {
				return nil, n.errorf("input #%d (%s) must be a scalar, got %s", i+1, name, t.Type)
			}
			a = a.Set(name, graphir.F32Attr(t.Data[0]))
		}
	}
	return n.emit("graph.clip", list(n.in(0)), a)
}

// convertVariadic chains Max/Min/Sum over 2-operand graph ops; Mean is the
// chained sum divided by the operand count.
func convertVariadic(n *node) ([]*value, error) {
	if err := n.need(1, -1); err != nil {
		return nil, err
	}
	for i, x := range n.ins {
		if x == nil {
			return nil, n.errorf("input #%d is required", i)
		}
	}
	op := map[string]string{"Max": "graph.max", "Min": "graph.min", "Sum": "graph.add", "Mean": "graph.add"}[n.p.GetOpType()]
	acc := n.in(0)
	for _, x := range n.ins[1:] {
		var err error
		if acc, err = n.emit1(op, list(acc, x), nil); err != nil {
			return nil, err
		}
	}
	if n.p.GetOpType() == "Mean" && len(n.ins) > 1 {
		dt := acc.typ().Elem
		cnt := graphir.NewZeroTensor(graphir.NewTensor(dt))
		cnt.Data[0] = float64(len(n.ins))
		return n.emit("graph.div", list(acc, constValue(cnt, n.loc)), nil)
	}
	return list(acc), nil
}

// convertCast maps Cast {to} and CastLike (the type of input #1) to graph.cast whose written result type
// carries the target element type; constants fold.
func convertCast(n *node) ([]*value, error) {
	var dt graphir.DType
	if n.p.GetOpType() == "CastLike" {
		if err := n.need(2, 2); err != nil {
			return nil, err
		}
		dt = n.in(1).typ().Elem
	} else {
		if err := n.need(1, 1); err != nil {
			return nil, err
		}
		to, err := n.intAttr("to", 0)
		if err != nil {
			return nil, err
		}
		if dt, err = elemType(int32(to)); err != nil {
			return nil, n.errorf("unsupported target type %s", dataTypeName(int32(to)))
		}
	}
	y, err := n.castTo(n.in(0), dt)
	return list(y), err
}

// castTo converts x to element type dt: folded when x is constant, x
// itself when it has that type already, else a graph.cast.
func (n *node) castTo(x *value, dt graphir.DType) (*value, error) {
	if x.isConst() {
		return constValue(foldCast(x.tensor(), dt), n.loc), nil
	}
	if x.typ().Elem == dt {
		return x, nil
	}
	ys, err := n.emitTyped("graph.cast", list(x), nil, []graphir.Type{x.typ().WithElem(dt)})
	if err != nil {
		return nil, err
	}
	return ys[0], nil
}

// convertThresholdedRelu is where(x > alpha, x, 0), alpha default 1.
func convertThresholdedRelu(n *node) ([]*value, error) {
	if err := n.need(1, 1); err != nil {
		return nil, err
	}
	alpha, err := n.floatAttr("alpha", 1)
	if err != nil {
		return nil, err
	}
	x := n.in(0)
	dt := x.typ().Elem
	if !dt.IsFloat() {
		return nil, n.errorf("unsupported element type %s (float only)", dt)
	}
	at := graphir.NewZeroTensor(graphir.NewTensor(dt))
	at.Data[0] = graphir.RoundTo(dt, alpha)
	gt, err := n.emit1("graph.greater", list(x, constValue(at, n.loc)), nil)
	if err != nil {
		return nil, err
	}
	zero := graphir.NewZeroTensor(graphir.NewTensor(dt))
	return n.emit("graph.where", list(gt, x, constValue(zero, n.loc)), nil)
}
