package graph

import (
	"math"

	"github.com/tessera-ml/tessera/graphir"
)

// Activation ops (ONNX semantics; every op takes and returns one float
// tensor type, except prelu which broadcasts its slope):
//
//	graph.softplus(x)      log(1 + e^x), evaluated as max(x, 0) + log1p(e^-|x|)   ONNX Softplus
//	graph.softsign(x)      x / (1 + |x|)                                           ONNX Softsign
//	graph.clip(x) {min, max}  min(max(x, min), max); an absent bound is unbounded;
//	                       NaN stays NaN; min > max gives max (NumPy clip)         ONNX Clip (bounds as attributes)
//	graph.hard_sigmoid(x) {alpha = 0.2, beta = 0.5}  max(0, min(1, alpha·x + beta)) ONNX HardSigmoid
//	graph.hard_swish(x)    x · hard_sigmoid(x) with alpha = 1/6, beta = 0.5        ONNX HardSwish
//	graph.leaky_relu(x) {alpha = 0.01}  x ≥ 0 ? x : alpha·x                         ONNX LeakyRelu
//	graph.elu(x) {alpha = 1.0}          x ≥ 0 ? x : alpha·(e^x − 1)                 ONNX Elu
//	graph.selu(x) {alpha = 1.67326319, gamma = 1.05070102}
//	                       gamma · (x > 0 ? x : alpha·(e^x − 1))                   ONNX Selu
//	graph.prelu(x, slope)  x ≥ 0 ? x : slope·x, slope unidirectionally broadcast
//	                       to x (NumPy rules; result shape = x's shape)            ONNX PRelu
//
// NaN inputs give NaN (every comparison with NaN is false, so the
// negative branch runs and multiplies the NaN). clip also accepts signed
// integer types.

// Activation op names.
const (
	SoftplusOp    = "graph.softplus"
	SoftsignOp    = "graph.softsign"
	ClipOp        = "graph.clip"
	HardSigmoidOp = "graph.hard_sigmoid"
	HardSwishOp   = "graph.hard_swish"
	LeakyReluOp   = "graph.leaky_relu"
	EluOp         = "graph.elu"
	SeluOp        = "graph.selu"
	PReluOp       = "graph.prelu"
)

// Default attribute values of the activation ops (ONNX).
const (
	DefaultHardSigmoidAlpha = 0.2
	DefaultHardSigmoidBeta  = 0.5
	DefaultLeakyReluAlpha   = 0.01
	DefaultEluAlpha         = 1.0
	DefaultSeluAlpha        = 1.67326319217681884765625
	DefaultSeluGamma        = 1.05070102214813232421875
)

// finiteAttrs reads float attributes (name, default) pairs and requires
// each to be finite.
func finiteAttrs(op *graphir.Op, names []string, defs []float64) ([]float64, error) {
	out := make([]float64, len(names))
	for i, n := range names {
		v, err := floatAttr(op, n, defs[i])
		if err != nil {
			return nil, err
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, op.Errorf("attribute '%s' must be finite, got %v", n, v)
		}
		out[i] = v
	}
	return out, nil
}

func floatAttrs(names ...string) []graphir.AttrSpec {
	s := make([]graphir.AttrSpec, len(names))
	for i, n := range names {
		s[i] = graphir.AttrSpec{Name: n, Kind: graphir.KindFloat}
	}
	return s
}

// ClipBounds returns clip's bounds: -inf / +inf when absent. Each present
// bound must not be NaN.
func ClipBounds(op *graphir.Op) (lo, hi float64, err error) {
	if lo, err = floatAttr(op, "min", math.Inf(-1)); err != nil {
		return 0, 0, err
	}
	if hi, err = floatAttr(op, "max", math.Inf(1)); err != nil {
		return 0, 0, err
	}
	if math.IsNaN(lo) || math.IsNaN(hi) {
		return 0, 0, op.Errorf("clip bounds must not be NaN")
	}
	return lo, hi, nil
}

// HardSigmoid is max(0, min(1, alpha·x + beta)); NaN stays NaN.
func HardSigmoid(x, alpha, beta float64) float64 {
	return math.Min(math.Max(alpha*x+beta, 0), 1)
}

// Softplus is log(1 + e^x) without overflow.
func Softplus(x float64) float64 { return math.Max(x, 0) + math.Log1p(math.Exp(-math.Abs(x))) }

func init() {
	registerUnary([]unaryOp{
		{name: SoftplusOp, summary: "log(1 + exp(x)) (ONNX Softplus); float element types", kind: floatElem,
			fn: func(x float64, _ []float64) float64 { return Softplus(x) }},
		{name: SoftsignOp, summary: "x / (1 + |x|) (ONNX Softsign); float element types", kind: floatElem,
			fn: func(x float64, _ []float64) float64 { return x / (1 + math.Abs(x)) }},
		{name: ClipOp, summary: "min(max(x, min), max), absent bounds unbounded (ONNX Clip)", kind: signedElem,
			attrs:  floatAttrs("min", "max"),
			params: func(op *graphir.Op) ([]float64, error) { lo, hi, err := ClipBounds(op); return []float64{lo, hi}, err },
			fn:     func(x float64, p []float64) float64 { return math.Min(math.Max(x, p[0]), p[1]) }},
		{name: HardSigmoidOp, summary: "max(0, min(1, alpha*x + beta)) (ONNX HardSigmoid); float element types", kind: floatElem,
			attrs: floatAttrs("alpha", "beta"),
			params: func(op *graphir.Op) ([]float64, error) {
				return finiteAttrs(op, []string{"alpha", "beta"}, []float64{DefaultHardSigmoidAlpha, DefaultHardSigmoidBeta})
			},
			fn: func(x float64, p []float64) float64 { return HardSigmoid(x, p[0], p[1]) }},
		{name: HardSwishOp, summary: "x * max(0, min(1, x/6 + 1/2)) (ONNX HardSwish); float element types", kind: floatElem,
			fn: func(x float64, _ []float64) float64 { return x * HardSigmoid(x, 1.0/6, 0.5) }},
		{name: LeakyReluOp, summary: "x >= 0 ? x : alpha*x (ONNX LeakyRelu); float element types", kind: floatElem,
			attrs: floatAttrs("alpha"),
			params: func(op *graphir.Op) ([]float64, error) {
				return finiteAttrs(op, []string{"alpha"}, []float64{DefaultLeakyReluAlpha})
			},
			fn: func(x float64, p []float64) float64 {
				if x >= 0 {
					return x
				}
				return p[0] * x
			}},
		{name: EluOp, summary: "x >= 0 ? x : alpha*(exp(x) - 1) (ONNX Elu); float element types", kind: floatElem,
			attrs: floatAttrs("alpha"),
			params: func(op *graphir.Op) ([]float64, error) {
				return finiteAttrs(op, []string{"alpha"}, []float64{DefaultEluAlpha})
			},
			fn: func(x float64, p []float64) float64 {
				if x >= 0 {
					return x
				}
				return p[0] * math.Expm1(x)
			}},
		{name: SeluOp, summary: "gamma * (x > 0 ? x : alpha*(exp(x) - 1)) (ONNX Selu); float element types", kind: floatElem,
			attrs: floatAttrs("alpha", "gamma"),
			params: func(op *graphir.Op) ([]float64, error) {
				return finiteAttrs(op, []string{"alpha", "gamma"}, []float64{DefaultSeluAlpha, DefaultSeluGamma})
			},
			fn: func(x float64, p []float64) float64 {
				if x > 0 {
					return p[1] * x
				}
				return p[1] * p[0] * math.Expm1(x)
			}},
	})
	graphir.RegisterOp(&graphir.OpDef{
		Name:     PReluOp,
		Summary:  "x >= 0 ? x : slope*x, slope unidirectionally broadcast to x (ONNX PRelu); float element types",
		Operands: graphir.Exactly(2),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure | graphir.Elementwise,
		Infer:    inferPRelu,
		Eval: func(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
			return evalBinary(op, args, func(x, s float64) float64 {
				if x >= 0 {
					return x
				}
				return s * x
			})
		},
		Pretty: true,
	})
}

// inferPRelu: x and slope share a float element type and slope broadcasts
// to x's shape (the result is x's type).
func inferPRelu(op *graphir.Op) ([]graphir.Type, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	if err := sameElem(op, ts); err != nil {
		return nil, err
	}
	if err := requireFloat(op, ts[0]); err != nil {
		return nil, err
	}
	shape, err := BroadcastShapes(ts[0].Shape, ts[1].Shape)
	if err != nil {
		return nil, op.Errorf("slope %s", err)
	}
	if !shapeEq(shape, ts[0].Shape) {
		return nil, op.Errorf("slope %s must broadcast to the input shape %s", shapeString(ts[1].Shape), shapeString(ts[0].Shape))
	}
	return one(ts[0]), nil
}

func shapeEq(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
