package lowering

import (
	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
)

// Activation graph ops (dialects/graph/activation.go); s(v) is an
// hlo.constant splat of x's type, c(v) a rank-0 hlo.constant:
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
//	graph.prelu(x, slope) → select(x ≥ s(0), x, x·broadcast_in_dim(slope))
//
// Comparisons with NaN are false, so a NaN input takes the negative
// branch, which multiplies it: NaN out, as the graph evaluator.
func init() {
	registerLegalization("graph.softplus", legalizeSoftplus)
	registerLegalization("graph.softsign", legalizeSoftsign)
	registerLegalization("graph.clip", legalizeClip)
	registerLegalization("graph.hard_sigmoid", legalizeHardSigmoid)
	registerLegalization("graph.hard_swish", legalizeHardSwish)
	registerLegalization("graph.leaky_relu", legalizeLeakyRelu)
	registerLegalization("graph.elu", legalizeElu)
	registerLegalization("graph.selu", legalizeSelu)
	registerLegalization("graph.prelu", legalizePRelu)
}

// chain is a helper that threads the first error through a sequence of
// builder calls, so that the rules read as formulas.
type chain struct {
	b   *builder
	t   *graphir.TensorType
	err error
}

func (c *chain) splat(v float64) *graphir.Value {
	if c.err != nil {
		return nil
	}
	r, err := c.b.splat(c.t, v)
	c.err = err
	return r
}

func (c *chain) scalar(v float64) *graphir.Value {
	if c.err != nil {
		return nil
	}
	r, err := c.b.scalar(c.t.Elem, v)
	c.err = err
	return r
}

func (c *chain) bin(name string, x, y *graphir.Value) *graphir.Value {
	if c.err != nil {
		return nil
	}
	r, err := c.b.binary(name, x, y)
	c.err = err
	return r
}

func (c *chain) un(name string, x *graphir.Value) *graphir.Value {
	if c.err != nil {
		return nil
	}
	r, err := c.b.unary(name, x)
	c.err = err
	return r
}

func (c *chain) cmp(dir string, x, y *graphir.Value) *graphir.Value {
	if c.err != nil {
		return nil
	}
	r, err := c.b.compare(dir, x, y)
	c.err = err
	return r
}

func (c *chain) sel(p, t, f *graphir.Value) *graphir.Value {
	if c.err != nil {
		return nil
	}
	r, err := c.b.selectOp(p, t, f)
	c.err = err
	return r
}

func (c *chain) clamp(lo, x, hi *graphir.Value) *graphir.Value {
	if c.err != nil {
		return nil
	}
	r, err := c.b.create("hlo.clamp", []*graphir.Value{lo, x, hi}, x.Type, nil)
	c.err = err
	return r
}

func (c *chain) done(r *graphir.Value) ([]*graphir.Value, error) {
	if c.err != nil {
		return nil, c.err
	}
	return []*graphir.Value{r}, nil
}

// unaryChain checks op's single float operand and returns it with a chain.
func unaryChain(op *graphir.Op, b *builder) (*graphir.Value, *chain, error) {
	x, t, err := unaryOperand(op, b)
	if err != nil {
		return nil, nil, err
	}
	return x, &chain{b: b, t: t}, nil
}

// floatParams runs the op's own Infer (which reads and checks its attributes)
// and returns the named float attributes with their defaults.
func floatParams(op *graphir.Op, names []string, defs []float64) ([]float64, error) {
	if op.Def != nil && op.Def.Infer != nil {
		if _, err := op.Def.Infer(op); err != nil {
			return nil, err
		}
	}
	out := make([]float64, len(names))
	for i, n := range names {
		out[i] = defs[i]
		switch a := op.Attr(n).(type) {
		case nil:
		case *graphir.FloatAttr:
			out[i] = a.Value
		case *graphir.IntegerAttr:
			out[i] = float64(a.Value)
		default:
			return nil, op.Errorf("attribute '%s' must be a float, got %s", n, graphir.FormatAttr(a))
		}
	}
	return out, nil
}

func legalizeSoftplus(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, c, err := unaryChain(op, b)
	if err != nil {
		return nil, err
	}
	m := c.bin("hlo.maximum", x, c.splat(0))
	e := c.un("hlo.exponential", c.un("hlo.negate", c.un("hlo.abs", x)))
	l := c.un("hlo.log", c.bin("hlo.add", c.splat(1), e))
	return c.done(c.bin("hlo.add", m, l))
}

func legalizeSoftsign(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, c, err := unaryChain(op, b)
	if err != nil {
		return nil, err
	}
	return c.done(c.bin("hlo.divide", x, c.bin("hlo.add", c.splat(1), c.un("hlo.abs", x))))
}

func legalizeClip(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, c, err := unaryChain(op, b)
	if err != nil {
		return nil, err
	}
	lo, hi, err := graph.ClipBounds(op)
	if err != nil {
		return nil, err
	}
	hasLo, hasHi := op.Attr("min") != nil, op.Attr("max") != nil
	switch {
	case hasLo && hasHi:
		return c.done(c.clamp(c.scalar(lo), x, c.scalar(hi)))
	case hasLo:
		return c.done(c.bin("hlo.maximum", x, c.splat(lo)))
	case hasHi:
		return c.done(c.bin("hlo.minimum", x, c.splat(hi)))
	}
	return []*graphir.Value{x}, nil
}

// hardSigmoid emits clamp(0, x·alpha + beta, 1).
func (c *chain) hardSigmoid(x *graphir.Value, alpha, beta float64) *graphir.Value {
	y := c.bin("hlo.add", c.bin("hlo.multiply", x, c.splat(alpha)), c.splat(beta))
	return c.clamp(c.scalar(0), y, c.scalar(1))
}

func legalizeHardSigmoid(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, c, err := unaryChain(op, b)
	if err != nil {
		return nil, err
	}
	p, err := floatParams(op, []string{"alpha", "beta"}, []float64{graph.DefaultHardSigmoidAlpha, graph.DefaultHardSigmoidBeta})
	if err != nil {
		return nil, err
	}
	return c.done(c.hardSigmoid(x, p[0], p[1]))
}

func legalizeHardSwish(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, c, err := unaryChain(op, b)
	if err != nil {
		return nil, err
	}
	return c.done(c.bin("hlo.multiply", x, c.hardSigmoid(x, 1.0/6, 0.5)))
}

func legalizeLeakyRelu(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, c, err := unaryChain(op, b)
	if err != nil {
		return nil, err
	}
	p, err := floatParams(op, []string{"alpha"}, []float64{graph.DefaultLeakyReluAlpha})
	if err != nil {
		return nil, err
	}
	return c.done(c.sel(c.cmp("GE", x, c.splat(0)), x, c.bin("hlo.multiply", x, c.splat(p[0]))))
}

// expm1 emits exp(x) − 1.
func (c *chain) expm1(x *graphir.Value) *graphir.Value {
	return c.bin("hlo.subtract", c.un("hlo.exponential", x), c.splat(1))
}

func legalizeElu(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, c, err := unaryChain(op, b)
	if err != nil {
		return nil, err
	}
	p, err := floatParams(op, []string{"alpha"}, []float64{graph.DefaultEluAlpha})
	if err != nil {
		return nil, err
	}
	neg := c.bin("hlo.multiply", c.splat(p[0]), c.expm1(x))
	return c.done(c.sel(c.cmp("GE", x, c.splat(0)), x, neg))
}

func legalizeSelu(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x, c, err := unaryChain(op, b)
	if err != nil {
		return nil, err
	}
	p, err := floatParams(op, []string{"alpha", "gamma"}, []float64{graph.DefaultSeluAlpha, graph.DefaultSeluGamma})
	if err != nil {
		return nil, err
	}
	pos := c.bin("hlo.multiply", x, c.splat(p[1]))
	neg := c.bin("hlo.multiply", c.splat(p[1]*p[0]), c.expm1(x))
	return c.done(c.sel(c.cmp("GT", x, c.splat(0)), pos, neg))
}

func legalizePRelu(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	if op.NumOperands() != 2 {
		return nil, op.Errorf("expects 2 operands, got %d", op.NumOperands())
	}
	x := op.Operand(0)
	t, err := b.tensorOf(x, "operand")
	if err != nil {
		return nil, err
	}
	if _, err := b.tensorOf(op.Operand(1), "slope"); err != nil {
		return nil, err
	}
	slope, err := b.broadcastTo(op.Operand(1), t.Shape)
	if err != nil {
		return nil, err
	}
	c := &chain{b: b, t: t}
	return c.done(c.sel(c.cmp("GE", x, c.splat(0)), x, c.bin("hlo.multiply", x, slope)))
}
