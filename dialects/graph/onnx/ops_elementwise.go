package onnx

import (
	"fmt"
	"math"

	pb "github.com/tessera-ml/tessera/dialects/graph/onnx/onnxpb"
	"github.com/tessera-ml/tessera/graphir"
)

// Elementwise ops: unary math and activations, binary arithmetic with
// NumPy broadcasting, comparisons and logic (i1 results), Where, Cast,
// Clip and the variadic Max/Min/Sum/Mean.

// unaryOps maps ONNX unary ops without attributes to graph ops.
var unaryOps = map[string]string{
	"Relu": "graph.relu", "Sigmoid": "graph.sigmoid", "Tanh": "graph.tanh",
	"Exp": "graph.exp", "Log": "graph.log", "Sqrt": "graph.sqrt", "Erf": "graph.erf",
	"Neg": "graph.neg", "Abs": "graph.abs", "Reciprocal": "graph.reciprocal",
	"Floor": "graph.floor", "Ceil": "graph.ceil", "Sign": "graph.sign",
	"Softplus": "graph.softplus", "Softsign": "graph.softsign", "HardSwish": "graph.hard_swish",
	"Not": "graph.not",
}

// unaryFold evaluates the unary ops that appear in shape computations
// directly, so those chains fold even without the graph op.
var unaryFold = map[string]func(float64) float64{
	"Neg": func(v float64) float64 { return -v },
	"Abs": math.Abs,
	"Not": func(v float64) float64 { return b2f(v == 0) },
}

// binaryOps maps ONNX binary ops to graph ops; binaryFold evaluates them
// directly on constants (integers stay integral: Div truncates).
var binaryOps = map[string]string{
	"Add": "graph.add", "Sub": "graph.sub", "Mul": "graph.mul", "Div": "graph.div", "Pow": "graph.pow",
	"PRelu": "graph.prelu",
	"Equal": "graph.equal", "Less": "graph.less", "Greater": "graph.greater",
	"LessOrEqual": "graph.less_equal", "GreaterOrEqual": "graph.greater_equal",
	"And": "graph.and", "Or": "graph.or", "Xor": "graph.equal",
}

var binaryFold = map[string]func(a, b float64) (float64, error){
	"Add":            func(a, b float64) (float64, error) { return a + b, nil },
	"Sub":            func(a, b float64) (float64, error) { return a - b, nil },
	"Mul":            func(a, b float64) (float64, error) { return a * b, nil },
	"Equal":          func(a, b float64) (float64, error) { return b2f(a == b), nil },
	"Less":           func(a, b float64) (float64, error) { return b2f(a < b), nil },
	"Greater":        func(a, b float64) (float64, error) { return b2f(a > b), nil },
	"LessOrEqual":    func(a, b float64) (float64, error) { return b2f(a <= b), nil },
	"GreaterOrEqual": func(a, b float64) (float64, error) { return b2f(a >= b), nil },
	"And":            func(a, b float64) (float64, error) { return b2f(a != 0 && b != 0), nil },
	"Or":             func(a, b float64) (float64, error) { return b2f(a != 0 || b != 0), nil },
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func init() {
	for k := range unaryOps {
		register(convertUnary, k)
	}
	for k := range binaryOps {
		register(convertBinary, k)
	}
	register(convertAttrActivation, "LeakyRelu", "Elu", "Selu", "HardSigmoid")
	register(convertClip, "Clip")
	register(convertVariadic, "Max", "Min", "Sum", "Mean")
	register(convertWhere, "Where")
	register(convertCast, "Cast", "CastLike")
	register(convertThresholdedRelu, "ThresholdedRelu")
}

func allConst(xs ...*value) bool {
	for _, x := range xs {
		if x == nil || x.c == nil {
			return false
		}
	}
	return true
}

func convertUnary(n *node) ([]*value, error) {
	if err := n.need(1, 1); err != nil {
		return nil, err
	}
	x := n.in(0)
	if f, ok := unaryFold[n.p.GetOpType()]; ok && x.c != nil {
		t, err := foldElementwise([]*graphir.Tensor{x.c}, x.c.Type.Elem, func(xs []float64) (float64, error) { return f(xs[0]), nil })
		if err != nil {
			return nil, n.errorf("%v", err)
		}
		return list(constValue(t, n.loc)), nil
	}
	return n.emit(unaryOps[n.p.GetOpType()], list(x), nil)
}

func convertBinary(n *node) ([]*value, error) {
	if err := n.need(2, 2); err != nil {
		return nil, err
	}
	a, b := n.in(0), n.in(1)
	op := n.p.GetOpType()
	if allConst(a, b) && a.c.Type.Elem == b.c.Type.Elem {
		if c, ok, err := foldBinary(op, a.c, b.c); ok {
			if err != nil {
				return nil, n.errorf("%v", err)
			}
			return list(constValue(c, n.loc)), nil
		}
	}
	switch op {
	case "Xor": // a ≠ b on booleans: not(equal(a, b))
		if err := n.requireOp("graph.not"); err != nil {
			return nil, err
		}
		eq, err := n.emit1("graph.equal", list(a, b), nil)
		if err != nil {
			return nil, err
		}
		return n.emit("graph.not", list(eq), nil)
	case "Pow":
		return n.convertPow(a, b)
	}
	return n.emit(binaryOps[op], list(a, b), nil)
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
		if x.c != nil {
			return constValue(foldCast(x.c, dt), n.loc), nil
		}
		out, err := n.emitTyped("graph.cast", list(x), nil, []graphir.Type{graphir.NewTensor(dt, x.typ().Shape...)})
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

// foldBinary evaluates op on constants when it has a direct folder.
func foldBinary(op string, a, b *graphir.Tensor) (*graphir.Tensor, bool, error) {
	dt := a.Type.Elem
	f, ok := binaryFold[op]
	switch {
	case op == "Div":
		integer := dt.IsInt()
		f, ok = func(x, y float64) (float64, error) {
			if integer {
				if y == 0 {
					return 0, fmt.Errorf("integer division by zero")
				}
				return math.Trunc(x / y), nil
			}
			return x / y, nil
		}, true
	case !ok:
		return nil, false, nil
	}
	switch op {
	case "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor":
		dt = graphir.I1
	}
	t, err := foldElementwise([]*graphir.Tensor{a, b}, dt, func(xs []float64) (float64, error) { return f(xs[0], xs[1]) })
	return t, true, err
}

// convertAttrActivation maps LeakyRelu, Elu, Selu and HardSigmoid with
// their ONNX attribute defaults.
func convertAttrActivation(n *node) ([]*value, error) {
	if err := n.need(1, 1); err != nil {
		return nil, err
	}
	type spec struct {
		op    string
		names []string
		defs  []float64
	}
	s := map[string]spec{
		"LeakyRelu":   {"graph.leaky_relu", []string{"alpha"}, []float64{0.01}},
		"Elu":         {"graph.elu", []string{"alpha"}, []float64{1.0}},
		"Selu":        {"graph.selu", []string{"alpha", "gamma"}, []float64{1.67326319217681884765625, 1.05070102214813232421875}},
		"HardSigmoid": {"graph.hard_sigmoid", []string{"alpha", "beta"}, []float64{0.2, 0.5}},
	}[n.p.GetOpType()]
	a := graphir.DictAttr{}
	for i, name := range s.names {
		v, err := n.floatAttr(name, s.defs[i])
		if err != nil {
			return nil, err
		}
		a = a.Set(name, graphir.F32Attr(v))
	}
	return n.emit(s.op, list(n.in(0)), a)
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

// convertWhere maps Where(cond, a, b) to graph.where.
func convertWhere(n *node) ([]*value, error) {
	if err := n.need(3, 3); err != nil {
		return nil, err
	}
	c, a, b := n.in(0), n.in(1), n.in(2)
	if allConst(c, a, b) && a.c.Type.Elem == b.c.Type.Elem {
		t, err := foldElementwise([]*graphir.Tensor{c.c, a.c, b.c}, a.c.Type.Elem, func(xs []float64) (float64, error) {
			if xs[0] != 0 {
				return xs[1], nil
			}
			return xs[2], nil
		})
		if err != nil {
			return nil, n.errorf("%v", err)
		}
		return list(constValue(t, n.loc)), nil
	}
	return n.emit("graph.where", list(c, a, b), nil)
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
		if dt, err = elemType(int32(to)); err != nil || to == int64(pb.TensorProto_UINT8) {
			return nil, n.errorf("unsupported target type %s", dataTypeName(int32(to)))
		}
	}
	x := n.in(0)
	if x.c != nil {
		return list(constValue(foldCast(x.c, dt), n.loc)), nil
	}
	if x.typ().Elem == dt {
		return list(x), nil
	}
	return n.emitTyped("graph.cast", list(x), nil, []graphir.Type{graphir.NewTensor(dt, x.typ().Shape...)})
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
