package graph

import (
	"fmt"
	"math"

	"github.com/tessera-ml/tessera/dialects/hlo"
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
	registerBinary([]binaryOp{
		{name: AddOp, summary: "a + b with NumPy broadcasting (ONNX Add)", traits: graphir.Commutative,
			fn: func(a, b float64) float64 { return a + b }, hlo: hlo.AddOp, onnx: "Add"},
		{name: SubOp, summary: "a - b with NumPy broadcasting (ONNX Sub)",
			fn: func(a, b float64) float64 { return a - b }, hlo: hlo.SubtractOp, onnx: "Sub"},
		{name: MulOp, summary: "a * b with NumPy broadcasting (ONNX Mul)", traits: graphir.Commutative,
			fn: func(a, b float64) float64 { return a * b }, hlo: hlo.MultiplyOp, onnx: "Mul"},
		{name: DivOp, summary: "a / b with NumPy broadcasting (ONNX Div; integers truncate toward zero)",
			fn: func(a, b float64) float64 { return a / b }, hlo: hlo.DivideOp, onnx: "Div"},
	})
	registerUnary([]unaryOp{
		{name: ReluOp, summary: "max(x, 0) (ONNX Relu)", fn: func(x float64, _ []float64) float64 {
			if x > 0 || math.IsNaN(x) {
				return x
			}
			return 0
		}, canon: []*graphir.Pattern{idempotentUnary(ReluOp)}, legalize: legalizeRelu, onnx: "Relu"},
		{name: SigmoidOp, summary: "1 / (1 + exp(-x)) (ONNX Sigmoid); float element types", kind: floatElem,
			fn: func(x float64, _ []float64) float64 { return sigmoid(x) }, hlo: hlo.LogisticOp, onnx: "Sigmoid"},
		{name: TanhOp, summary: "hyperbolic tangent (ONNX Tanh); float element types", kind: floatElem,
			fn: func(x float64, _ []float64) float64 { return math.Tanh(x) }, hlo: hlo.TanhOp, onnx: "Tanh"},
	})
}

// elemKind restricts the element type of an elementwise op's operands.
type elemKind int

const (
	anyElem    elemKind = 0 // every element type
	floatElem  elemKind = 1 // f16, bf16, f32, f64
	signedElem elemKind = 2 // floats and integers, signed or unsigned (not i1)
	boolElem   elemKind = 3 // i1 only
	negElem    elemKind = 4 // floats and signed integers (not i1, not unsigned)
	uintElem   elemKind = 5 // unsigned integers (ui8 ... ui64)
)

// checkElem reports a diagnostic when t's element type is not of kind k.
func checkElem(op *graphir.Op, t *graphir.TensorType, k elemKind) error {
	switch k {
	case floatElem:
		return requireFloat(op, t)
	case signedElem:
		if t.Elem == graphir.I1 {
			return op.Errorf("requires an integer or floating-point element type, got %s", t)
		}
	case negElem:
		if !t.Elem.IsFloat() && !t.Elem.IsSignedInt() {
			return op.Errorf("requires a signed integer or floating-point element type, got %s", t)
		}
	case uintElem:
		if !t.Elem.IsUnsigned() {
			return op.Errorf("requires an unsigned integer element type (ui8, ui16, ui32 or ui64), got %s", t)
		}
	case boolElem:
		if t.Elem != graphir.I1 {
			return op.Errorf("requires element type i1, got %s", t)
		}
	}
	return nil
}

// unaryOp is one row of the elementwise tables: an op of one operand whose
// result has the operand's type, with its reference semantics fn (which
// may read the op's attributes through params), its legalization (to the
// single hlo op hlo, or by legalize) and the ONNX op type it implements.
type unaryOp struct {
	name, summary string
	kind          elemKind
	attrs         []graphir.AttrSpec
	// params reads and checks the attributes (nil: none).
	params   func(op *graphir.Op) ([]float64, error)
	fn       func(x float64, p []float64) float64
	canon    []*graphir.Pattern
	hlo      string
	legalize legalizeFn
	onnx     string
}

// registerUnary registers the elementwise unary ops us.
func registerUnary(us []unaryOp) {
	for _, u := range us {
		u := u
		legalize := u.legalize
		if u.hlo != "" {
			legalize = legalizeUnary(u.hlo)
		}
		register(&graphir.OpDef{
			Name:     u.name,
			Summary:  u.summary,
			Operands: graphir.Exactly(1),
			Results:  graphir.Exactly(1),
			Traits:   graphir.Pure | graphir.Elementwise | graphir.SameOperandsAndResultType,
			Attrs:    u.attrs,
			Symbolic: true,
			Infer: func(op *graphir.Op) ([]graphir.Type, error) {
				ts, err := operandTensors(op)
				if err != nil {
					return nil, err
				}
				if err := checkElem(op, ts[0], u.kind); err != nil {
					return nil, err
				}
				if u.params != nil {
					if _, err := u.params(op); err != nil {
						return nil, err
					}
				}
				return one(ts[0]), nil
			},
			Eval: func(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
				out, err := evalPrologue(op, args)
				if err != nil {
					return nil, err
				}
				var p []float64
				if u.params != nil {
					if p, err = u.params(op); err != nil {
						return nil, err
					}
				}
				for i, v := range args[0].Data {
					out.Data[i] = u.fn(v, p)
				}
				return []*graphir.Tensor{out.Round()}, nil
			},
			Pretty:       true,
			Canonicalize: u.canon,
		}, Conversions{Legalize: legalize, Symbolic: true, ONNX: u.onnx})
	}
}

// binaryOp is one row of the elementwise tables: an op of two
// NumPy-broadcast operands of one element type; the result has the
// broadcast shape and that type (i1 when boolResult), fn its reference
// semantics; it legalizes to the hlo op hlo on broadcast operands (or by
// legalize).
type binaryOp struct {
	name, summary string
	kind          elemKind
	traits        graphir.Trait
	boolResult    bool
	fn            func(a, b float64) float64
	hlo           string
	legalize      legalizeFn
	onnx          string
}

func registerBinary(bs []binaryOp) {
	for _, b := range bs {
		b := b
		legalize := b.legalize
		if b.hlo != "" {
			legalize = legalizeBroadcast(b.hlo)
		}
		register(&graphir.OpDef{
			Name:     b.name,
			Summary:  b.summary,
			Operands: graphir.Exactly(2),
			Results:  graphir.Exactly(1),
			Traits:   graphir.Pure | graphir.Elementwise | b.traits,
			Symbolic: true,
			Infer: func(op *graphir.Op) ([]graphir.Type, error) {
				tys, err := inferBinary(op)
				if err != nil {
					return nil, err
				}
				t := graphir.AsTensor(tys[0])
				if err := checkElem(op, t, b.kind); err != nil {
					return nil, err
				}
				if b.boolResult {
					return one(t.WithElem(graphir.I1)), nil
				}
				return tys, nil
			},
			Eval: func(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
				return evalBinary(op, args, b.fn)
			},
			Pretty: true,
		}, Conversions{Legalize: legalize, Symbolic: true, ONNX: b.onnx})
	}
}

// legalizeRelu: graph.relu(x) → hlo.maximum(x, hlo.constant splat 0).
func legalizeRelu(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x := op.Operand(0)
	c := &chain{b: b, t: graphir.AsTensor(x.Type)}
	return c.done(c.op(hlo.MaximumOp, x, c.splat(0)))
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
	dims, err := BroadcastDims(ts[0], ts[1])
	if err != nil {
		return nil, op.Errorf("operand %s", err)
	}
	return one(graphir.NewTensorDims(ts[0].Elem, dims...)), nil
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
