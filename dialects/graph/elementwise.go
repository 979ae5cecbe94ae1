package graph

import (
	"fmt"
	"math"

	"github.com/tessera-ml/tessera/graphir"
)

// BroadcastShapes returns the NumPy broadcast of shapes a and b: the shapes
// are right-aligned, a missing leading dimension counts as 1, and each pair
// of dimensions must be equal or contain a 1 (the result takes the other).
// A 0-sized dimension broadcasts only with 0 or 1. Rank-0 shapes broadcast
// with anything. It errors when a pair is incompatible or a dimension is negative.
func BroadcastShapes(a, b []int64) ([]int64, error) {
	n := max(len(a), len(b))
	out := make([]int64, n)
	for i := 0; i < n; i++ {
		da, db := int64(1), int64(1)
		if j := len(a) - n + i; j >= 0 {
			da = a[j]
		}
		if j := len(b) - n + i; j >= 0 {
			db = b[j]
		}
		switch {
		case da < 0 || db < 0:
			return nil, fmt.Errorf("shapes %s and %s have a negative dimension", shapeString(a), shapeString(b))
		case da == db || db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, fmt.Errorf("shapes %s and %s are not broadcast-compatible (dimension %d: %d vs %d)", shapeString(a), shapeString(b), i, da, db)
		}
	}
	return out, nil
}

// broadcastStrides returns strides (in elements) for reading a row-major
// tensor of shape in as if it had shape out: broadcast dimensions get stride 0.
func broadcastStrides(in, out []int64) []int64 {
	st := graphir.Strides(in)
	bs := make([]int64, len(out))
	off := len(out) - len(in)
	for i := range in {
		if in[i] != 1 || out[off+i] == 1 {
			bs[off+i] = st[i]
		}
	}
	return bs
}

// broadcastIndex returns, for every element of shape out (row-major), the
// flat index of the element it reads from a tensor of shape in.
func broadcastIndex(in, out []int64) []int64 {
	n := product(out)
	idx := make([]int64, n)
	bs := broadcastStrides(in, out)
	pos := make([]int64, len(out))
	off := int64(0)
	for k := int64(0); k < n; k++ {
		idx[k] = off
		for d := len(out) - 1; d >= 0; d-- {
			pos[d]++
			off += bs[d]
			if pos[d] < out[d] {
				break
			}
			off -= bs[d] * pos[d]
			pos[d] = 0
		}
	}
	return idx
}

// Binary elementwise op names.
const (
	AddOp = "graph.add"
	SubOp = "graph.sub"
	MulOp = "graph.mul"
	DivOp = "graph.div"
)

// Unary elementwise op names.
const (
	ReluOp    = "graph.relu"
	SigmoidOp = "graph.sigmoid"
	TanhOp    = "graph.tanh"
)

func init() {
	binary := []struct {
		name, summary string
		traits        graphir.Trait
		fn            func(a, b float64) float64
	}{
		{AddOp, "a + b with NumPy broadcasting (ONNX Add)", graphir.Commutative, func(a, b float64) float64 { return a + b }},
		{SubOp, "a - b with NumPy broadcasting (ONNX Sub)", 0, func(a, b float64) float64 { return a - b }},
		{MulOp, "a * b with NumPy broadcasting (ONNX Mul)", graphir.Commutative, func(a, b float64) float64 { return a * b }},
		{DivOp, "a / b with NumPy broadcasting (ONNX Div; integers truncate toward zero)", 0, func(a, b float64) float64 { return a / b }},
	}
	for _, b := range binary {
		fn := b.fn
		graphir.RegisterOp(&graphir.OpDef{
			Name:     b.name,
			Summary:  b.summary,
			Operands: graphir.Exactly(2),
			Results:  graphir.Exactly(1),
			Traits:   graphir.Pure | graphir.Elementwise | b.traits,
			Infer:    inferBinary,
			Eval: func(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
				return evalBinary(op, args, fn)
			},
			Pretty: true,
		})
	}
	unary := []struct {
		name, summary string
		fn            func(float64) float64
		float         bool
		canon         []*graphir.Pattern
	}{
		{ReluOp, "max(x, 0) (ONNX Relu)", func(x float64) float64 {
			if x > 0 || math.IsNaN(x) {
				return x
			}
			return 0
		}, false, []*graphir.Pattern{idempotentUnary(ReluOp)}},
		{SigmoidOp, "1 / (1 + exp(-x)) (ONNX Sigmoid); float element types", sigmoid, true, nil},
		{TanhOp, "hyperbolic tangent (ONNX Tanh); float element types", math.Tanh, true, nil},
	}
	for _, u := range unary {
		fn, float := u.fn, u.float
		graphir.RegisterOp(&graphir.OpDef{
			Name:     u.name,
			Summary:  u.summary,
			Operands: graphir.Exactly(1),
			Results:  graphir.Exactly(1),
			Traits:   graphir.Pure | graphir.Elementwise | graphir.SameOperandsAndResultType,
			Infer:    inferUnary,
			Verify: func(op *graphir.Op) error {
				if !float {
					return nil
				}
				t, err := op.TensorOperand(0)
				if err != nil {
					return err
				}
				return requireFloat(op, t)
			},
			Eval: func(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
				out, err := evalPrologue(op, args)
				if err != nil {
					return nil, err
				}
				for i, v := range args[0].Data {
					out.Data[i] = fn(v)
				}
				return []*graphir.Tensor{out.Round()}, nil
			},
			Pretty:       true,
			Canonicalize: u.canon,
		})
	}
}

// sigmoid is the logistic function, evaluated without overflow for large |x|.
func sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// inferBinary: both operands tensors of one element type; the result has
// the broadcast shape.
func inferBinary(op *graphir.Op) ([]graphir.Type, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	if err := sameElem(op, ts); err != nil {
		return nil, err
	}
	shape, err := BroadcastShapes(ts[0].Shape, ts[1].Shape)
	if err != nil {
		return nil, op.Errorf("operand %s", err)
	}
	return one(&graphir.TensorType{Shape: shape, Elem: ts[0].Elem}), nil
}

func inferUnary(op *graphir.Op) ([]graphir.Type, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	return one(ts[0]), nil
}

func evalBinary(op *graphir.Op, args []*graphir.Tensor, fn func(a, b float64) float64) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	ia := broadcastIndex(args[0].Shape(), out.Shape())
	ib := broadcastIndex(args[1].Shape(), out.Shape())
	isInt := out.Type.Elem.IsInt()
	for i := range out.Data {
		a, b := args[0].Data[ia[i]], args[1].Data[ib[i]]
		if isInt && op.Name == DivOp && b == 0 {
			return nil, op.Errorf("integer division by zero")
		}
		out.Data[i] = fn(a, b)
	}
	return []*graphir.Tensor{out.Round()}, nil
}

// idempotentUnary folds f(f(x)) to f(x) for an idempotent unary op.
func idempotentUnary(name string) *graphir.Pattern {
	return &graphir.Pattern{
		Name: name + "-idempotent",
		Root: name,
		Rewrite: func(op *graphir.Op, rw *graphir.Rewriter) bool {
			in := op.Operand(0)
			if in == nil || in.Def == nil || in.Def.Name != name || !in.Type.Equal(op.Results[0].Type) {
				return false
			}
			rw.ReplaceOp(op, in)
			return true
		},
	}
}
