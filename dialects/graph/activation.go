package graph

import (
	"math"

	"github.com/tessera-ml/tessera/dialects/hlo"
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
//	graph.celu(x) {alpha = 1.0}         max(0, x) + min(0, alpha·(e^(x/alpha) − 1)),
//	                       alpha finite and non-zero                              ONNX Celu
//	graph.shrink(x) {lambd = 0.5, bias = 0.0}
//	                       x < −lambd ? x + bias : (x > lambd ? x − bias : 0)     ONNX Shrink (float types)
//	graph.mish(x)          x · tanh(softplus(x))                                  ONNX Mish
//	graph.prelu(x, slope)  x ≥ 0 ? x : slope·x, slope unidirectionally broadcast
//	                       to x (NumPy rules; result shape = x's shape)            ONNX PRelu
//
// NaN inputs give NaN (every comparison with NaN is false, so the
// negative branch runs and multiplies the NaN), except shrink, whose
// comparisons both fail: NaN → 0, as ONNX's reference. clip also accepts
// signed integer types.

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
	CeluOp        = "graph.celu"
	ShrinkOp      = "graph.shrink"
	MishOp        = "graph.mish"
	PReluOp       = "graph.prelu"
)

// finiteAttrs reads float attributes (absent: the schema's default) and
// requires each to be finite.
func finiteAttrs(op *graphir.Op, names ...string) ([]float64, error) {
	out := make([]float64, len(names))
	for i, n := range names {
		v, err := op.Float(n)
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

// floatSpec is a float attribute's schema entry with its default (ONNX's);
// a NaN default means none.
func floatSpec(name string, def float64) graphir.AttrSpec {
	s := graphir.AttrSpec{Name: name, Kind: graphir.KindFloat}
	if !math.IsNaN(def) {
		s.Default = graphir.F32Attr(def)
	}
	return s
}

// ClipBounds returns clip's bounds: -inf / +inf when absent. Each present
// bound must not be NaN.
func ClipBounds(op *graphir.Op) (lo, hi float64, err error) {
	lo, hi = math.Inf(-1), math.Inf(1)
	if op.Attr("min") != nil {
		if lo, err = op.Float("min"); err != nil {
			return 0, 0, err
		}
	}
	if op.Attr("max") != nil {
		if hi, err = op.Float("max"); err != nil {
			return 0, 0, err
		}
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

// Celu is max(0, x) + min(0, alpha·(e^(x/alpha) − 1)) (ONNX Celu).
func Celu(x, alpha float64) float64 {
	return math.Max(0, x) + math.Min(0, alpha*math.Expm1(x/alpha))
}

// Shrink is x + bias below −lambd, x − bias above lambd and 0 between
// (NaN → 0, as ONNX's reference np.where).
func Shrink(x, lambd, bias float64) float64 {
	switch {
	case x < -lambd:
		return x + bias
	case x > lambd:
		return x - bias
	}
	return 0
}

// celuAlpha reads celu's alpha: finite and non-zero (it divides x).
func celuAlpha(op *graphir.Op) ([]float64, error) {
	p, err := finiteAttrs(op, "alpha")
	if err == nil && p[0] == 0 {
		err = op.Errorf("attribute 'alpha' must be non-zero")
	}
	return p, err
}

func init() {
	registerUnary([]unaryOp{
		{name: SoftplusOp, summary: "log(1 + exp(x)) (ONNX Softplus); float element types", kind: floatElem,
			fn:       func(x float64, _ []float64) float64 { return Softplus(x) },
			legalize: legalizeSoftplus, onnx: "Softplus"},
		{name: SoftsignOp, summary: "x / (1 + |x|) (ONNX Softsign); float element types", kind: floatElem,
			fn:       func(x float64, _ []float64) float64 { return x / (1 + math.Abs(x)) },
			legalize: legalizeSoftsign, onnx: "Softsign"},
		{name: ClipOp, summary: "min(max(x, min), max), absent bounds unbounded (ONNX Clip)", kind: signedElem,
			attrs:    []graphir.AttrSpec{floatSpec("min", math.NaN()), floatSpec("max", math.NaN())},
			params:   func(op *graphir.Op) ([]float64, error) { lo, hi, err := ClipBounds(op); return []float64{lo, hi}, err },
			fn:       func(x float64, p []float64) float64 { return math.Min(math.Max(x, p[0]), p[1]) },
			legalize: legalizeClip},
		{name: HardSigmoidOp, summary: "max(0, min(1, alpha*x + beta)) (ONNX HardSigmoid); float element types", kind: floatElem,
			attrs:    []graphir.AttrSpec{floatSpec("alpha", 0.2), floatSpec("beta", 0.5)},
			params:   func(op *graphir.Op) ([]float64, error) { return finiteAttrs(op, "alpha", "beta") },
			fn:       func(x float64, p []float64) float64 { return HardSigmoid(x, p[0], p[1]) },
			legalize: legalizeHardSigmoid, onnx: "HardSigmoid"},
		{name: HardSwishOp, summary: "x * max(0, min(1, x/6 + 1/2)) (ONNX HardSwish); float element types", kind: floatElem,
			fn:       func(x float64, _ []float64) float64 { return x * HardSigmoid(x, 1.0/6, 0.5) },
			legalize: legalizeHardSwish, onnx: "HardSwish"},
		{name: LeakyReluOp, summary: "x >= 0 ? x : alpha*x (ONNX LeakyRelu); float element types", kind: floatElem,
			attrs:  []graphir.AttrSpec{floatSpec("alpha", 0.01)},
			params: func(op *graphir.Op) ([]float64, error) { return finiteAttrs(op, "alpha") },
			fn: func(x float64, p []float64) float64 {
				if x >= 0 {
					return x
				}
				return p[0] * x
			},
			legalize: legalizeLeakyRelu, onnx: "LeakyRelu"},
		{name: EluOp, summary: "x >= 0 ? x : alpha*(exp(x) - 1) (ONNX Elu); float element types", kind: floatElem,
			attrs:  []graphir.AttrSpec{floatSpec("alpha", 1)},
			params: func(op *graphir.Op) ([]float64, error) { return finiteAttrs(op, "alpha") },
			fn: func(x float64, p []float64) float64 {
				if x >= 0 {
					return x
				}
				return p[0] * math.Expm1(x)
			},
			legalize: legalizeElu, onnx: "Elu"},
		{name: SeluOp, summary: "gamma * (x > 0 ? x : alpha*(exp(x) - 1)) (ONNX Selu); float element types", kind: floatElem,
			attrs:  []graphir.AttrSpec{floatSpec("alpha", 1.67326319217681884765625), floatSpec("gamma", 1.05070102214813232421875)},
			params: func(op *graphir.Op) ([]float64, error) { return finiteAttrs(op, "alpha", "gamma") },
			fn: func(x float64, p []float64) float64 {
				if x > 0 {
					return p[1] * x
				}
				return p[1] * p[0] * math.Expm1(x)
			},
			legalize: legalizeSelu, onnx: "Selu"},
		{name: CeluOp, summary: "max(0, x) + min(0, alpha*(exp(x/alpha) - 1)) (ONNX Celu); float element types", kind: floatElem,
			attrs:    []graphir.AttrSpec{floatSpec("alpha", 1)},
			params:   celuAlpha,
			fn:       func(x float64, p []float64) float64 { return Celu(x, p[0]) },
			legalize: legalizeCelu, onnx: "Celu"},
		{name: ShrinkOp, summary: "x < -lambd ? x + bias : (x > lambd ? x - bias : 0) (ONNX Shrink); float element types", kind: floatElem,
			attrs:    []graphir.AttrSpec{floatSpec("lambd", 0.5), floatSpec("bias", 0)},
			params:   func(op *graphir.Op) ([]float64, error) { return finiteAttrs(op, "lambd", "bias") },
			fn:       func(x float64, p []float64) float64 { return Shrink(x, p[0], p[1]) },
			legalize: legalizeShrink, onnx: "Shrink"},
		{name: MishOp, summary: "x * tanh(softplus(x)) (ONNX Mish); float element types", kind: floatElem,
			fn:       func(x float64, _ []float64) float64 { return x * math.Tanh(Softplus(x)) },
			legalize: legalizeMish, onnx: "Mish"},
	})
	register(&graphir.OpDef{
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
	}, Conversions{Legalize: legalizePRelu, ONNX: "PRelu"})
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

// Legalization (s(v) is an hlo.constant splat of x's type, c(v) a rank-0
// hlo.constant):
//
//	graph.softplus(x)     → max(x, s(0)) + log(s(1) + exp(−|x|))   (stable form)
//	graph.softsign(x)     → x / (s(1) + |x|)
//	graph.clip(x) {min, max} → hlo.clamp(c(min), x, c(max)) with both bounds;
//	                        maximum(x, s(min)) or minimum(x, s(max)) with one; x with none
//	graph.hard_sigmoid(x) → hlo.clamp(c(0), x·s(alpha) + s(beta), c(1))
//	graph.hard_swish(x)   → x · hard_sigmoid(x) with alpha = 1/6, beta = 0.5
//	graph.leaky_relu(x)   → select(x ≥ s(0), x, x·s(alpha))
//	graph.elu(x)          → select(x ≥ s(0), x, s(alpha)·(exp(x) − s(1)))
//	graph.selu(x)         → select(x > s(0), x·s(gamma), s(gamma·alpha)·(exp(x) − s(1)))
//	graph.celu(x)         → max(x, s(0)) + min(s(alpha)·(exp(x / s(alpha)) − s(1)), s(0))
//	graph.shrink(x)       → select(x < s(−lambd), x + s(bias), select(x > s(lambd), x − s(bias), s(0)))
//	graph.mish(x)         → x · tanh(softplus(x)) (softplus in its stable form)
//	graph.prelu(x, slope) → select(x ≥ s(0), x, x·broadcast_in_dim(slope))
//
// Comparisons with NaN are false, so a NaN input takes the negative
// branch, which multiplies it: NaN out, as the evaluator.

// activation starts a chain on op's operand x, with its attributes read
// (and checked) by the op's Infer.
func activation(op *graphir.Op, b *builder, attrs ...string) (*graphir.Value, *chain, []float64, error) {
	x := op.Operand(0)
	p, err := finiteAttrs(op, attrs...)
	return x, &chain{b: b, t: graphir.AsTensor(x.Type)}, p, err
}

// softplus emits max(x, 0) + log(1 + exp(−|x|)).
func (c *chain) softplus(x *graphir.Value) *graphir.Value {
	m := c.op(hlo.MaximumOp, x, c.splat(0))
	e := c.op(hlo.ExponentialOp, c.op(hlo.NegateOp, c.op(hlo.AbsOp, x)))
	l := c.op(hlo.LogOp, c.op(hlo.AddOp, c.splat(1), e))
	return c.op(hlo.AddOp, m, l)
}

func legalizeSoftplus(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, c, _, _ := activation(op, b)
	return c.done(c.softplus(x))
}

func legalizeMish(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, c, _, _ := activation(op, b)
	return c.done(c.op(hlo.MultiplyOp, x, c.op(hlo.TanhOp, c.softplus(x))))
}

func legalizeSoftsign(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, c, _, _ := activation(op, b)
	return c.done(c.op(hlo.DivideOp, x, c.op(hlo.AddOp, c.splat(1), c.op(hlo.AbsOp, x))))
}

func legalizeClip(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, c, _, _ := activation(op, b)
	lo, hi, err := ClipBounds(op)
	if err != nil {
		return nil, err
	}
	hasLo, hasHi := op.Attr("min") != nil, op.Attr("max") != nil
	switch {
	case hasLo && hasHi:
		return c.done(c.op(hlo.ClampOp, c.scalar(lo), x, c.scalar(hi)))
	case hasLo:
		return c.done(c.op(hlo.MaximumOp, x, c.splat(lo)))
	case hasHi:
		return c.done(c.op(hlo.MinimumOp, x, c.splat(hi)))
	}
	return []*graphir.Value{x}, nil
}

// hardSigmoid emits clamp(0, x·alpha + beta, 1).
func (c *chain) hardSigmoid(x *graphir.Value, alpha, beta float64) *graphir.Value {
	y := c.op(hlo.AddOp, c.op(hlo.MultiplyOp, x, c.splat(alpha)), c.splat(beta))
	return c.op(hlo.ClampOp, c.scalar(0), y, c.scalar(1))
}

func legalizeHardSigmoid(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, c, p, err := activation(op, b, "alpha", "beta")
	if err != nil {
		return nil, err
	}
	return c.done(c.hardSigmoid(x, p[0], p[1]))
}

func legalizeHardSwish(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, c, _, _ := activation(op, b)
	return c.done(c.op(hlo.MultiplyOp, x, c.hardSigmoid(x, 1.0/6, 0.5)))
}

func legalizeLeakyRelu(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, c, p, err := activation(op, b, "alpha")
	if err != nil {
		return nil, err
	}
	return c.done(c.op(hlo.SelectOp, c.cmp("GE", x, c.splat(0)), x, c.op(hlo.MultiplyOp, x, c.splat(p[0]))))
}

// expm1 emits exp(x) − 1.
func (c *chain) expm1(x *graphir.Value) *graphir.Value {
	return c.op(hlo.SubtractOp, c.op(hlo.ExponentialOp, x), c.splat(1))
}

func legalizeElu(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, c, p, err := activation(op, b, "alpha")
	if err != nil {
		return nil, err
	}
	neg := c.op(hlo.MultiplyOp, c.splat(p[0]), c.expm1(x))
	return c.done(c.op(hlo.SelectOp, c.cmp("GE", x, c.splat(0)), x, neg))
}

func legalizeSelu(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, c, p, err := activation(op, b, "alpha", "gamma")
	if err != nil {
		return nil, err
	}
	pos := c.op(hlo.MultiplyOp, x, c.splat(p[1]))
	neg := c.op(hlo.MultiplyOp, c.splat(p[1]*p[0]), c.expm1(x))
	return c.done(c.op(hlo.SelectOp, c.cmp("GT", x, c.splat(0)), pos, neg))
}

func legalizeCelu(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, c, p, err := activation(op, b, "alpha")
	if err != nil {
		return nil, err
	}
	alpha := c.splat(p[0])
	neg := c.op(hlo.MultiplyOp, alpha, c.expm1(c.op(hlo.DivideOp, x, alpha)))
	return c.done(c.op(hlo.AddOp, c.op(hlo.MaximumOp, x, c.splat(0)), c.op(hlo.MinimumOp, neg, c.splat(0))))
}

func legalizeShrink(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, c, p, err := activation(op, b, "lambd", "bias")
	if err != nil {
		return nil, err
	}
	lambd, bias := p[0], p[1]
	above := c.op(hlo.SelectOp, c.cmp("GT", x, c.splat(lambd)), c.op(hlo.SubtractOp, x, c.splat(bias)), c.splat(0))
	return c.done(c.op(hlo.SelectOp, c.cmp("LT", x, c.splat(-lambd)), c.op(hlo.AddOp, x, c.splat(bias)), above))
}

func legalizePRelu(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, c, _, _ := activation(op, b)
	slope := c.do(func() (*graphir.Value, error) { return b.broadcastTo(op.Operand(1), c.t.Shape) })
	return c.done(c.op(hlo.SelectOp, c.cmp("GE", x, c.splat(0)), x, c.op(hlo.MultiplyOp, x, slope)))
}
