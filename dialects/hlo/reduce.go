package hlo

import (
	g "github.com/tessera-ml/tessera/graphir"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// Op names.
const (
	ReduceOp       = "hlo.reduce"
	ReduceWindowOp = "hlo.reduce_window"
)

// Reductions with a body region (StableHLO §reduce, §reduce_window), in
// Tessera's single-input form:
//
//	%r = "hlo.reduce"(%input, %init) ({
//	^bb0(%acc: tensor<f32>, %x: tensor<f32>):
//	  %s = hlo.add %acc, %x : tensor<f32>
//	  hlo.return %s : (tensor<f32>) -> ()
//	}) {dimensions = [1]} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
//
// The body takes two rank-0 tensors of the input's element type (the
// accumulator, then the next element) and returns one. The reference
// evaluator folds elements in row-major order starting from init: a body
// that is a single hlo.add/maximum/minimum/multiply of its two arguments
// takes a fast path with identical rounding; any other body runs through
// graphir.EvalBlock per pair. In tensor IR a reduction is a block with an
// init and one reduce variable per reduced (or window) dimension, in
// increasing dimension order (the evaluator's row-major fold order); the
// body becomes a scalar expression of the accumulator and the element,
// built from the body ops' scalar lowerings.

// fastOps are the body ops the evaluator applies directly.
var fastOps = map[string]func(a, b float64) float64{
	AddOp:      func(a, b float64) float64 { return a + b },
	MultiplyOp: func(a, b float64) float64 { return a * b },
	MaximumOp:  func(a, b float64) float64 { return fmax(a, b, 0) },
	MinimumOp:  func(a, b float64) float64 { return fmin(a, b, 0) },
}

func init() {
	register(&g.OpDef{
		Name:     ReduceOp,
		Symbolic: true,
		Summary:  "reduces the given dimensions of input with the body computation, starting from init",
		Operands: g.Exactly(2), Results: g.Exactly(1), Regions: 1,
		Traits: g.Pure | g.IsolatedFromAbove | g.Reduction,
		Attrs:  []g.AttrSpec{{Name: "dimensions", Kind: g.KindIntArray, Required: true}},
		Infer: func(op *g.Op) ([]g.Type, error) {
			t, _, err := reduceConfig(op)
			if err != nil {
				return nil, err
			}
			return []g.Type{t}, nil
		},
		Verify: func(op *g.Op) error {
			ts, err := tensorOperands(op)
			if err != nil {
				return err
			}
			return verifyBody(op, ts[0].Elem)
		},
		Eval: evalReduce,
	}, Lowering{Compute: reduceCompute, Symbolic: true})
	register(&g.OpDef{
		Name:     ReduceWindowOp,
		Symbolic: true,
		Summary:  "reduces sliding windows of input with the body computation, padding with init",
		Operands: g.Exactly(2), Results: g.Exactly(1), Regions: 1,
		Traits: g.Pure | g.IsolatedFromAbove | g.Reduction,
		Attrs: []g.AttrSpec{
			{Name: "window_dimensions", Kind: g.KindIntArray, Required: true},
			{Name: "window_strides", Kind: g.KindIntArray},
			{Name: "base_dilations", Kind: g.KindIntArray},
			{Name: "window_dilations", Kind: g.KindIntArray},
			{Name: "padding", Kind: g.KindArray},
		},
		Infer: func(op *g.Op) ([]g.Type, error) {
			c, err := windowConfig(op)
			if err != nil {
				return nil, err
			}
			return []g.Type{c.result}, nil
		},
		Verify: func(op *g.Op) error {
			ts, err := tensorOperands(op)
			if err != nil {
				return err
			}
			return verifyBody(op, ts[0].Elem)
		},
		Eval: evalReduceWindow,
	}, Lowering{Compute: reduceWindowCompute, Symbolic: true})
}

// checkInit verifies that init is a rank-0 tensor of input's element type.
func checkInit(op *g.Op, in, init *g.TensorType) error {
	if init.Rank() != 0 || init.Elem != in.Elem {
		return op.Errorf("init value must be a rank-0 tensor<%s>, got %s", in.Elem, init)
	}
	return nil
}

func reduceConfig(op *g.Op) (*g.TensorType, []int64, error) {
	ts, err := tensorOperands(op)
	if err != nil {
		return nil, nil, err
	}
	if err := checkInit(op, ts[0], ts[1]); err != nil {
		return nil, nil, err
	}
	dims, err := op.Ints("dimensions")
	if err != nil {
		return nil, nil, err
	}
	if op.Attr("dimensions") == nil {
		return nil, nil, op.Errorf("requires attribute 'dimensions'")
	}
	if err := checkDims(op, "dimensions", dims, ts[0].Rank()); err != nil {
		return nil, nil, err
	}
	var kept []*g.SymExpr
	for i, d := range ts[0].Dims() {
		if !containsDim(dims, i) {
			kept = append(kept, d)
		}
	}
	return g.NewTensorDims(ts[0].Elem, kept...), dims, nil
}

// verifyBody checks a reduction body: one block, two rank-0 arguments of
// element type elem, ending in hlo.return of one rank-0 elem value.
func verifyBody(op *g.Op, elem g.DType) error {
	if len(op.Regions) != 1 || len(op.Regions[0].Blocks) != 1 {
		return op.Errorf("body must be a region with exactly one block")
	}
	b := op.Regions[0].Blocks[0]
	scalar := g.NewTensor(elem)
	if len(b.Args) != 2 {
		return op.Errorf("body must have 2 arguments (accumulator, element), got %d", len(b.Args))
	}
	for i, a := range b.Args {
		if !a.Type.Equal(scalar) {
			return op.Errorf("body argument #%d must be %s, got %s", i, scalar, a.Type)
		}
	}
	ret := b.Last()
	if ret == nil || ret.Name != ReturnOp {
		return op.Errorf("body must end with '%s'", ReturnOp)
	}
	if ret.NumOperands() != 1 || ret.Operand(0) == nil || !ret.Operand(0).Type.Equal(scalar) {
		return op.Errorf("body must return exactly one %s value", scalar)
	}
	return nil
}

// combiner returns the function applying the body to (acc, x).
func combiner(op *g.Op, elem g.DType) (func(acc, x float64) (float64, error), error) {
	if err := verifyBody(op, elem); err != nil {
		return nil, err
	}
	b := op.Regions[0].Blocks[0]
	if f := fastBody(b); f != nil {
		return func(acc, x float64) (float64, error) { return g.RoundTo(elem, f(acc, x)), nil }, nil
	}
	st := g.NewTensor(elem)
	return func(acc, x float64) (float64, error) {
		outs, err := g.EvalBlock(b, []*g.Tensor{{Type: st, Data: []float64{acc}}, {Type: st, Data: []float64{x}}})
		if err != nil {
			return 0, err
		}
		if len(outs) != 1 || len(outs[0].Data) != 1 {
			return 0, op.Errorf("body must return one scalar")
		}
		return outs[0].Data[0], nil
	}, nil
}

// fastBody recognises a body `r = op(arg0, arg1); return r` (either argument
// order) with op in fastOps.
func fastBody(b *g.Block) func(a, c float64) float64 {
	if b.Len() != 2 {
		return nil
	}
	first, ret := b.First(), b.Last()
	f := fastOps[first.Name]
	if f == nil || first.NumOperands() != 2 || ret.NumOperands() != 1 || ret.Operand(0) != first.Result(0) {
		return nil
	}
	x, y := first.Operand(0), first.Operand(1)
	if (x == b.Args[0] && y == b.Args[1]) || (x == b.Args[1] && y == b.Args[0]) {
		return f
	}
	return nil
}

func evalReduce(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
	if err := checkArgSizes(op, args); err != nil {
		return nil, err
	}
	rt, dims, err := reduceConfig(op)
	if err != nil {
		return nil, err
	}
	in := args[0]
	comb, err := combiner(op, in.Type.Elem)
	if err != nil {
		return nil, err
	}
	out := g.NewZeroTensor(rt)
	for i := range out.Data {
		out.Data[i] = args[1].Data[0]
	}
	// output strides laid over the input's dims (0 for reduced dims)
	os := g.Strides(rt.Shape)
	inOut := make([]int64, in.Type.Rank())
	k := 0
	for d := range inOut {
		if !containsDim(dims, d) {
			inOut[d] = os[k]
			k++
		}
	}
	idx := make([]int64, in.Type.Rank())
	for i, x := range in.Data {
		unravel(int64(i), in.Type.Shape, idx)
		o := offset(idx, inOut)
		if out.Data[o], err = comb(out.Data[o], x); err != nil {
			return nil, err
		}
	}
	return []*g.Tensor{out.Round()}, nil
}

// Reduce builds a detached hlo.reduce of input over dims whose body applies
// the binary op bodyOp (e.g. AddOp, MaximumOp) to its two arguments.
func Reduce(input, init *g.Value, dims []int64, bodyOp string, loc g.Location) (*g.Op, error) {
	op, err := g.Build(ReduceOp, []*g.Value{input, init}, g.DictAttr{{Name: "dimensions", Value: g.I64Array(dims...)}}, loc)
	if err != nil {
		return nil, err
	}
	return op, attachBody(op, init.Type, bodyOp, loc)
}

// attachBody adds the region ^bb0(%a: T, %b: T): %r = bodyOp %a, %b; hlo.return %r.
func attachBody(op *g.Op, t g.Type, bodyOp string, loc g.Location) error {
	b := g.NewBlock(t, t)
	inner, err := g.Build(bodyOp, []*g.Value{b.Args[0], b.Args[1]}, nil, loc)
	if err != nil {
		op.SetOperands(nil)
		return err
	}
	b.Append(inner)
	b.Append(g.NewOp(ReturnOp, inner.Results, nil, nil, loc))
	op.AddRegion(g.NewRegion(b))
	return nil
}

// WindowConfig holds hlo.reduce_window's attributes; nil slices mean defaults.
type WindowConfig struct {
	WindowDimensions []int64
	WindowStrides    []int64
	BaseDilations    []int64
	WindowDilations  []int64
	PadLow, PadHigh  []int64
}

// Attrs returns the configuration as op attributes, omitting defaults.
func (c WindowConfig) Attrs() g.DictAttr {
	a := g.DictAttr{{Name: "window_dimensions", Value: g.I64Array(c.WindowDimensions...)}}
	if c.WindowStrides != nil {
		a = a.Set("window_strides", g.I64Array(c.WindowStrides...))
	}
	if c.BaseDilations != nil {
		a = a.Set("base_dilations", g.I64Array(c.BaseDilations...))
	}
	if c.WindowDilations != nil {
		a = a.Set("window_dilations", g.I64Array(c.WindowDilations...))
	}
	if c.PadLow != nil || c.PadHigh != nil {
		lo, hi := c.PadLow, c.PadHigh
		n := max(len(lo), len(hi))
		lo, hi = append(lo, make([]int64, n-len(lo))...), append(hi, make([]int64, n-len(hi))...)
		a = a.Set("padding", PaddingAttr(lo, hi))
	}
	return a
}

// ReduceWindow builds a detached hlo.reduce_window whose body applies bodyOp.
func ReduceWindow(input, init *g.Value, c WindowConfig, bodyOp string, loc g.Location) (*g.Op, error) {
	op, err := g.Build(ReduceWindowOp, []*g.Value{input, init}, c.Attrs(), loc)
	if err != nil {
		return nil, err
	}
	return op, attachBody(op, init.Type, bodyOp, loc)
}

type windowCfg struct {
	in                                     *g.TensorType
	dims, strides, baseDil, winDil, lo, hi []int64
	dilatedIn                              []int64 // Dynamic where in's dimension is symbolic
	result                                 *g.TensorType
}

func windowConfig(op *g.Op) (*windowCfg, error) {
	ts, err := tensorOperands(op)
	if err != nil {
		return nil, err
	}
	if err := checkInit(op, ts[0], ts[1]); err != nil {
		return nil, err
	}
	c := &windowCfg{in: ts[0]}
	r := c.in.Rank()
	if op.Attr("window_dimensions") == nil {
		return nil, op.Errorf("requires attribute 'window_dimensions'")
	}
	if c.dims, err = op.IntsLen("window_dimensions", r, "dimension", 1); err != nil {
		return nil, err
	}
	if c.strides, err = op.IntsLen("window_strides", r, "dimension", 1); err != nil {
		return nil, err
	}
	if c.baseDil, err = op.IntsLen("base_dilations", r, "dimension", 1); err != nil {
		return nil, err
	}
	if c.winDil, err = op.IntsLen("window_dilations", r, "dimension", 1); err != nil {
		return nil, err
	}
	if c.lo, c.hi, err = padPairs(op, "padding", r); err != nil {
		return nil, err
	}
	dims := make([]*g.SymExpr, r)
	c.dilatedIn = make([]int64, r)
	for i := 0; i < r; i++ {
		switch {
		case c.dims[i] <= 0:
			return nil, op.Errorf("window_dimensions must be positive, got %d", c.dims[i])
		case c.strides[i] <= 0:
			return nil, op.Errorf("window_strides must be positive, got %d", c.strides[i])
		case c.baseDil[i] <= 0:
			return nil, op.Errorf("base_dilations must be positive, got %d", c.baseDil[i])
		case c.winDil[i] <= 0:
			return nil, op.Errorf("window_dilations must be positive, got %d", c.winDil[i])
		}
		if c.in.Sym != nil && c.in.Sym[i] != nil {
			if c.baseDil[i] != 1 {
				_, err := staticDim(op, c.in, i, "a dimension under base_dilations")
				return nil, err
			}
			c.dilatedIn[i] = g.Dynamic
			dims[i] = symWindowOutput(c.in.Sym[i], c.dims[i], c.winDil[i], c.strides[i], c.lo[i], c.hi[i])
			continue
		}
		if n := c.in.Shape[i]; n > 0 {
			c.dilatedIn[i] = (n-1)*c.baseDil[i] + 1
		}
		padded := c.lo[i] + c.dilatedIn[i] + c.hi[i]
		if padded < 0 {
			return nil, op.Errorf("padding [%d, %d] makes dimension %d negative (%d)", c.lo[i], c.hi[i], i, padded)
		}
		dims[i] = g.SymConst(windowOutput(padded, c.dims[i], c.winDil[i], c.strides[i]))
	}
	c.result = g.NewTensorDims(c.in.Elem, dims...)
	return c, nil
}

func evalReduceWindow(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
	if err := checkArgSizes(op, args); err != nil {
		return nil, err
	}
	c, err := windowConfig(op)
	if err != nil {
		return nil, err
	}
	in, init := args[0], args[1].Data[0]
	comb, err := combiner(op, c.in.Elem)
	if err != nil {
		return nil, err
	}
	r := c.in.Rank()
	is := g.Strides(c.in.Shape)
	nw := g.NewTensor(g.F64, c.dims...).NumElements()
	widx := make([][]int64, nw)
	for k := range widx {
		widx[k] = make([]int64, r)
		unravel(int64(k), c.dims, widx[k])
	}
	out := g.NewZeroTensor(c.result)
	idx := make([]int64, r)
	for o := range out.Data {
		unravel(int64(o), c.result.Shape, idx)
		acc := init
		for _, w := range widx {
			x := init
			var off int64
			inside := true
			for d := 0; d < r; d++ {
				pos := idx[d]*c.strides[d] + w[d]*c.winDil[d] - c.lo[d]
				if pos < 0 || pos >= c.dilatedIn[d] || pos%c.baseDil[d] != 0 {
					inside = false
					break
				}
				off += pos / c.baseDil[d] * is[d]
			}
			if inside {
				x = in.Data[off]
			}
			if acc, err = comb(acc, x); err != nil {
				return nil, err
			}
		}
		out.Data[o] = acc
	}
	return []*g.Tensor{out.Round()}, nil
}

// reduceCompute reduces the dimensions of the input with the body.
func reduceCompute(op *g.Op, ins []*tir.Operand, res tir.DType) (*tir.Compute, error) {
	rt, dims, err := reduceConfig(op)
	if err != nil {
		return nil, err
	}
	x, init := ins[0], ins[1]
	if _, err := bodyScalar(op, tir.Zero(res), tir.Zero(res)); err != nil {
		return nil, err
	}
	var red, redDims []int64
	for d, n := range x.Shape {
		if containsDim(dims, d) {
			red = append(red, n)
			redDims = append(redDims, int64(d))
		}
	}
	redExt, err := reduceExtents(op, x, redDims)
	if err != nil {
		return nil, err
	}
	return &tir.Compute{Shape: rt.Shape, Reduce: red, ReduceExtents: redExt,
		Init: func(tir.Nest) tir.Expr { return init.At() },
		Body: func(n tir.Nest, acc tir.Expr) tir.Expr {
			idx := make([]tir.Expr, len(x.Shape))
			si, ri := 0, 0
			for d := range idx {
				if containsDim(dims, d) {
					idx[d] = n.Reduce[ri]
					ri++
				} else {
					idx[d] = n.Spatial[si]
					si++
				}
			}
			e, _ := bodyScalar(op, acc, x.At(idx...))
			return e
		}}, nil
}

// reduceExtents is the extents of a reduction over dimensions dims of x
// as expressions (tensorir.Compute.ReduceExtents), or nil when they are
// all constants. Errors (at op): a symbolic dimension of a splat operand,
// which has no shape expression.
func reduceExtents(op *g.Op, x *tir.Operand, dims []int64) ([]tir.Expr, error) {
	static := true
	for _, d := range dims {
		static = static && x.Shape[d] >= 0
	}
	if static {
		return nil, nil
	}
	out := make([]tir.Expr, len(dims))
	for i, d := range dims {
		if out[i] = x.Dim(int(d)); out[i] == nil {
			return nil, errorAt(op, "a reduction over symbolic dimension %d of a splat operand does not lower to tensor IR; pin its symbols with --fix-dim", d)
		}
	}
	return out, nil
}

// reduceWindowCompute has one reduce variable per input dimension over
// the window; positions in the padding or in base-dilation holes
// contribute init, as in the reference.
func reduceWindowCompute(op *g.Op, ins []*tir.Operand, res tir.DType) (*tir.Compute, error) {
	c, err := windowConfig(op)
	if err != nil {
		return nil, err
	}
	x, init := ins[0], ins[1]
	if _, err := bodyScalar(op, tir.Zero(res), tir.Zero(res)); err != nil {
		return nil, err
	}
	for j, d := range x.Shape {
		if d < 0 && (c.dims[j] != 1 || c.strides[j] != 1 || c.baseDil[j] != 1 || c.lo[j] != 0 || c.hi[j] != 0) {
			return nil, errorAt(op, "a window over symbolic dimension %d of %s must be trivial (size, stride and dilation 1, no padding) to lower to tensor IR; pin its symbols with --fix-dim", j, c.in)
		}
	}
	return &tir.Compute{Shape: c.result.Shape, Reduce: c.dims,
		Init: func(tir.Nest) tir.Expr { return init.At() },
		Body: func(n tir.Nest, acc tir.Expr) tir.Expr {
			elem := init.At()
			if !hasZero(x.Shape) {
				pos := make([]tir.Expr, len(x.Shape))
				for j := range pos {
					pos[j] = tir.Sub(tir.Add(tir.Mul(n.Spatial[j], tir.Int(c.strides[j])), tir.Mul(n.Reduce[j], tir.Int(c.winDil[j]))), tir.Int(c.lo[j]))
				}
				cond, idx := windowRead(pos, c.baseDil, x.Shape)
				elem = &tir.Select{Cond: cond, T: x.At(idx...), F: init.At()}
			}
			e, _ := bodyScalar(op, acc, elem)
			return e
		}}, nil
}

// bodyScalar translates the body of a reduce / reduce_window (two rank-0
// arguments: accumulator and element) into an expression of acc and x.
// Every op of the body must be elementwise or a rank-0 constant.
func bodyScalar(op *g.Op, acc, x tir.Expr) (tir.Expr, error) {
	if len(op.Regions) != 1 || len(op.Regions[0].Blocks) != 1 {
		return nil, errorAt(op, "expects one region with one block")
	}
	b := op.Regions[0].Blocks[0]
	if len(b.Args) != 2 {
		return nil, errorAt(op, "body must have two arguments, got %d", len(b.Args))
	}
	env := map[*g.Value]tir.Expr{b.Args[0]: acc, b.Args[1]: x}
	for o := b.First(); o != nil; o = o.Next() {
		if o.Name == ReturnOp {
			return bodyResult(o, env)
		}
		e, err := bodyOp(o, env)
		if err != nil {
			return nil, err
		}
		env[o.Results[0]] = e
	}
	return nil, errorAt(op, "reduction body does not end with hlo.return")
}

// bodyResult is the value a reduction body returns.
func bodyResult(ret *g.Op, env map[*g.Value]tir.Expr) (tir.Expr, error) {
	if ret.NumOperands() != 1 {
		return nil, ret.Errorf("lower-to-tir: reduction body must return one value")
	}
	r, ok := env[ret.Operand(0)]
	if !ok {
		return nil, ret.Errorf("lower-to-tir: reduction body returns a value defined outside it")
	}
	return r, nil
}

// bodyOp is the scalar value of one op of a reduction body.
func bodyOp(o *g.Op, env map[*g.Value]tir.Expr) (tir.Expr, error) {
	if len(o.Results) != 1 {
		return nil, o.Errorf("lower-to-tir: cannot lower '%s' in a reduction body", o.Name)
	}
	rt, err := resultTensor(o, 0)
	if err != nil {
		return nil, err
	}
	dt, ok := TIRDType(rt.Elem)
	if !ok {
		return nil, o.Errorf("lower-to-tir: element type %s has no tensor IR dtype", rt.Elem)
	}
	if o.Name == ConstantOp {
		d, ok := o.Attr("value").(*g.DenseElementsAttr)
		if !ok || d.Elided || len(d.Values()) == 0 {
			return nil, o.Errorf("lower-to-tir: constant in a reduction body needs a value")
		}
		return tir.Imm(dt, d.Values()[0]), nil
	}
	args := make([]tir.Expr, o.NumOperands())
	for i, v := range o.Operands() {
		e, ok := env[v]
		if !ok {
			return nil, o.Errorf("lower-to-tir: operand #%d of a reduction body op is defined outside the body", i)
		}
		args[i] = e
	}
	return scalarOf(o, args, dt)
}
