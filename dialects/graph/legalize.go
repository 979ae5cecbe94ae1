package graph

import (
	"fmt"
	"math"
	"slices"

	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// The `legalize-to-hlo` pass rewrites every graph-dialect op (ONNX
// semantics, implicit broadcasting) into hlo-dialect primitives (StableHLO
// semantics, explicit shapes). Each op's rule is registered with the op's
// definition (register's Conversions.Legalize), in the file that defines
// the op; README.md's legalization table summarizes them.

// LegalizeToHLOPassName is the pipeline name of the pass.
const LegalizeToHLOPassName = "legalize-to-hlo"

// NoneOp is the placeholder an absent optional operand may be written as
// (an unregistered op): it has no hlo counterpart, and legalization erases
// it once its users are gone.
const NoneOp = "graph.none"

// legalizeFn rewrites one graph op: it creates hlo ops through b
// (inserted before the graph op, carrying its location) and returns the
// values that replace the op's results, or a diagnostic located at op.
type legalizeFn func(op *graphir.Op, b *builder) ([]*graphir.Value, error)

// Conversions are what only the graph level knows about an op, registered
// with its definition:
//   - Legalize is its rewrite into hlo ops (legalize-to-hlo);
//   - Symbolic says that Legalize takes symbolic dimensions (its hlo ops
//     are built from the graph op's result dimensions, TensorType.Dims,
//     and are hlo ops that take them): legalize-to-hlo refuses an op with
//     symbolic operands or results whose rule has not opted in, naming the
//     symbols and the --fix-dim hint;
//   - ONNX is the ONNX op type it implements one-to-one, or "" when the
//     importer converts it with a rule of its own: the node's inputs are
//     the op's operands in order, and the node's attributes are the op's,
//     by name, at the op's defaults (AttrSpec.Default) when absent.
type Conversions struct {
	Legalize legalizeFn
	Symbolic bool
	ONNX     string
}

var (
	legalizations         = map[string]legalizeFn{}
	symbolicLegalizations = map[string]bool{}
	onnxOps               = map[string]*graphir.OpDef{}
)

// register adds def to graphir's op registry with its conversions: the
// op's whole definition is made in one place.
func register(def *graphir.OpDef, c Conversions) {
	graphir.RegisterOp(def)
	if c.Legalize != nil {
		legalizations[def.Name] = c.Legalize
		symbolicLegalizations[def.Name] = c.Symbolic
	}
	if c.ONNX != "" {
		if prev := onnxOps[c.ONNX]; prev != nil {
			panic("graph: ONNX op " + c.ONNX + " implemented by both " + prev.Name + " and " + def.Name)
		}
		onnxOps[c.ONNX] = def
	}
}

// Legalizes reports whether graph op name has a legalization to hlo.
func Legalizes(name string) bool { return legalizations[name] != nil }

// LegalizesSymbolic reports whether graph op name's legalization to hlo
// takes symbolic dimensions (Conversions.Symbolic).
func LegalizesSymbolic(name string) bool { return symbolicLegalizations[name] }

// ONNXOp returns the graph op implementing ONNX op type t one-to-one (see
// Conversions.ONNX), or nil.
func ONNXOp(t string) *graphir.OpDef { return onnxOps[t] }

func init() {
	graphir.RegisterPass(&graphir.PassInfo{
		Name:    LegalizeToHLOPassName,
		Summary: "rewrite every graph-dialect op into hlo-dialect primitives",
		Options: map[string]string{
			"requantize-terms": "constant (default): graph.requantize's per-channel terms (the multiplier's 16-bit halves, the shift + 15, the rounding term) become i64 constants when its multiplier and shift are constant; derived: they are computed from the multiplier and shift in the kernel (the form the NPU's requantization matcher reads)",
		},
		New: func(opts map[string]string) (graphir.Pass, error) {
			var o LegalizeOptions
			switch v := opts["requantize-terms"]; v {
			case "", "constant":
			case "derived":
				o.DerivedRequantTerms = true
			default:
				return nil, fmt.Errorf("option requantize-terms must be constant or derived, got %q", v)
			}
			return &graphir.FuncPass{PassName: LegalizeToHLOPassName, Fn: func(f *graphir.Func) error { return LegalizeFuncWith(f, o) }}, nil
		},
	})
}

// LegalizeOptions choose among equivalent lowerings for a target.
type LegalizeOptions struct {
	// DerivedRequantTerms computes graph.requantize's per-channel terms
	// from its multiplier and shift in the kernel even when they are
	// constants (legalizeRequantize), the form whose single multiplier
	// and shift the NPU's requantization matcher maps onto its ALU
	// (targets/npu/requant.go); by default constant ones give the terms
	// as constants, which a CPU kernel loads instead of deriving them
	// for every element.
	DerivedRequantTerms bool
}

// LegalizeFunc is LegalizeFuncWith with the default options.
func LegalizeFunc(f *graphir.Func) error { return LegalizeFuncWith(f, LegalizeOptions{}) }

// LegalizeFunc rewrites the graph ops of f into hlo ops, in program order.
// Each graph op is replaced by a small hlo subgraph whose ops all carry the
// graph op's location. Errors (a located diagnostic naming the graph op):
// an op with no rule, an attribute or shape the rule cannot express, and,
// after the rewrite, any graph op other than an unused graph.none left in f;
// an op with symbolic operands or results whose rule does not take them
// (Conversions.Symbolic), naming the symbols and the flags that pin them
// (or bind them first: graphir.BindFunc, tessera-opt's fix-dims pass).
func LegalizeFuncWith(f *graphir.Func, o LegalizeOptions) error {
	var work []*graphir.Op
	f.Walk(func(op *graphir.Op) {
		if op.Dialect() == "graph" && op.Name != NoneOp {
			work = append(work, op)
		}
	})
	for _, op := range work {
		if err := legalizeOp(op, o); err != nil {
			return err
		}
	}
	// graph.none placeholders are dead now that their users are gone.
	var left *graphir.Op
	f.Walk(func(op *graphir.Op) {
		if op.Dialect() != "graph" || left != nil {
			return
		}
		if op.Name == NoneOp && op.IsUnused() {
			op.Erase()
			return
		}
		left = op
	})
	if left != nil {
		return left.Errorf("failed to legalize to hlo: graph op remains after legalization")
	}
	return nil
}

// legalizeOp replaces one graph op by its rule's hlo ops; a failing rule
// leaves the IR as it was.
func legalizeOp(op *graphir.Op, o LegalizeOptions) error {
	fn := legalizations[op.Name]
	if fn == nil {
		return op.Errorf("failed to legalize to hlo: no rule for this op")
	}
	if op.Block == nil {
		return op.Errorf("failed to legalize to hlo: op is detached")
	}
	if err := graphir.VerifyOp(op); err != nil {
		return err
	}
	if syms := graphir.OpSymbols(op); syms != nil && !symbolicLegalizations[op.Name] {
		return op.Errorf("failed to legalize to hlo: %s (tessera-opt: --%s='dims=NAME:N,...')", graphir.NotSymbolicYet(syms), graphir.FixDimsPassName)
	}
	b := &builder{src: op, opts: o}
	vals, err := fn(op, b)
	if err == nil {
		err = checkReplacement(op, vals)
	}
	if err != nil {
		b.rollback()
		if d, ok := err.(*graphir.Diagnostic); ok {
			return d
		}
		return op.Errorf("%v", err)
	}
	for i, r := range op.Results {
		r.ReplaceAllUsesWith(vals[i])
	}
	op.Erase()
	return nil
}

// checkReplacement compares a rule's values with the op's results.
func checkReplacement(op *graphir.Op, vals []*graphir.Value) error {
	if len(vals) != len(op.Results) {
		return op.Errorf("failed to legalize to hlo: rule produced %d values for %d results", len(vals), len(op.Results))
	}
	for i, r := range op.Results {
		if !vals[i].Type.Equal(r.Type) {
			return op.Errorf("failed to legalize to hlo: result #%d lowered to %s, expected %s", i, vals[i].Type, r.Type)
		}
	}
	return nil
}

// builder inserts hlo ops, made by the hlo dialect's typed builders (which
// infer and check their result types), before the graph op being
// legalized, each with the graph op's location; a construction error is
// reported at the graph op.
type builder struct {
	src     *graphir.Op
	created []*graphir.Op
	opts    LegalizeOptions
}

// insert places the detached op that a typed builder returned before the
// graph op and returns its result.
func (b *builder) insert(op *graphir.Op, err error) (*graphir.Value, error) {
	if err != nil {
		return nil, b.src.Errorf("failed to legalize to hlo: %s", diagMessage(err))
	}
	b.src.Block.InsertBefore(b.src, op)
	b.created = append(b.created, op)
	return op.Results[0], nil
}

// rollback erases the ops created so far (in reverse order), leaving the
// graph op untouched, so a failed rule leaves valid IR behind.
func (b *builder) rollback() {
	for i := len(b.created) - 1; i >= 0; i-- {
		b.created[i].Erase()
	}
	b.created = nil
}

func diagMessage(err error) string {
	if d, ok := err.(*graphir.Diagnostic); ok {
		return d.Message
	}
	return err.Error()
}

// tensorOf returns v's tensor type or a diagnostic at the graph op.
func (b *builder) tensorOf(v *graphir.Value, what string) (*graphir.TensorType, error) {
	t := graphir.AsTensor(v.Type)
	if t == nil {
		return nil, b.src.Errorf("%s must be a tensor, got %s", what, v.Type)
	}
	return t, nil
}

// resultTensor returns the graph op's single result type as a tensor.
func (b *builder) resultTensor() (*graphir.TensorType, error) {
	if len(b.src.Results) != 1 {
		return nil, b.src.Errorf("expected one result, got %d", len(b.src.Results))
	}
	return b.tensorOf(b.src.Results[0], "result")
}

// op builds hlo op name of operands with its inferred result type
// (elementwise ops, select, clamp).
func (b *builder) op(name string, operands ...*graphir.Value) (*graphir.Value, error) {
	return b.insert(graphir.Build(name, operands, nil, b.src.Loc))
}

// constant creates hlo.constant {value = d}.
func (b *builder) constant(d *graphir.DenseElementsAttr) (*graphir.Value, error) {
	return b.insert(hlo.ConstantFromDense(d, b.src.Loc), nil)
}

// splat creates a value of type t with every element v: a splat
// hlo.constant when t is static; for a symbolic t (constants hold data,
// so they are static) a rank-0 constant broadcast to t's dimensions by
// hlo.broadcast_in_dim, which the fuse pass clones into each fusion that
// uses it, as it does splat constants.
func (b *builder) splat(t *graphir.TensorType, v float64) (*graphir.Value, error) {
	if t.IsStatic() {
		return b.insert(hlo.Splat(t.Elem, t.Shape, v, b.src.Loc), nil)
	}
	s, err := b.scalar(t.Elem, v)
	if err != nil {
		return nil, err
	}
	return b.broadcastInDimDims(s, t.Dims(), nil)
}

// elementCount is the number of elements of x's dimensions dims (a
// mean's divisor) as a value of type t: a splat of the constant when the
// dimensions are static; else the static part times each symbolic
// dimension's size (hlo.get_dimension_size, converted to t's element
// type), broadcast to t.
func (b *builder) elementCount(x *graphir.Value, dims []int64, t *graphir.TensorType) (*graphir.Value, error) {
	xt, err := b.tensorOf(x, "operand")
	if err != nil {
		return nil, err
	}
	count := int64(1)
	var syms []int
	for _, d := range dims {
		if xt.Shape[d] < 0 {
			syms = append(syms, int(d))
		} else {
			count *= xt.Shape[d]
		}
	}
	if len(syms) == 0 {
		return b.splat(t, float64(count))
	}
	n, err := b.dimSize(x, syms[0], t.Elem)
	for _, d := range syms[1:] {
		var m *graphir.Value
		if err == nil {
			m, err = b.dimSize(x, d, t.Elem)
		}
		if err == nil {
			n, err = b.op(hlo.MultiplyOp, n, m)
		}
	}
	if err == nil && count != 1 {
		var k *graphir.Value
		if k, err = b.scalar(t.Elem, float64(count)); err == nil {
			n, err = b.op(hlo.MultiplyOp, n, k)
		}
	}
	if err != nil {
		return nil, err
	}
	return b.broadcastInDimDims(n, t.Dims(), nil)
}

// dimSize is the size of x's dimension d as a rank-0 tensor of dtype dt
// (hlo.get_dimension_size, converted).
func (b *builder) dimSize(x *graphir.Value, d int, dt graphir.DType) (*graphir.Value, error) {
	size, err := b.insert(hlo.GetDimensionSize(x, d, b.src.Loc))
	if err != nil {
		return nil, err
	}
	return b.insert(hlo.Convert(size, dt, b.src.Loc))
}

// scalar creates a rank-0 constant of dtype dt (a reduction init value).
func (b *builder) scalar(dt graphir.DType, v float64) (*graphir.Value, error) {
	return b.insert(hlo.Splat(dt, nil, v, b.src.Loc), nil)
}

// compare creates hlo.compare(x, y) {comparison_direction = dir}.
func (b *builder) compare(dir string, x, y *graphir.Value) (*graphir.Value, error) {
	return b.insert(hlo.Compare(x, y, dir, b.src.Loc))
}

// constDims returns a static shape as dimension expressions.
func constDims(shape []int64) []*graphir.SymExpr {
	out := make([]*graphir.SymExpr, len(shape))
	for i, d := range shape {
		out[i] = graphir.SymConst(d)
	}
	return out
}

// dimsEq reports whether a and b are the same dimensions.
func dimsEq(a, b []*graphir.SymExpr) bool {
	return slices.EqualFunc(a, b, (*graphir.SymExpr).Equal)
}

// reshape is reshapeDims to a static shape.
func (b *builder) reshape(x *graphir.Value, shape []int64) (*graphir.Value, error) {
	return b.reshapeDims(x, constDims(shape))
}

// reshapeDims creates hlo.reshape of x to dimensions dims (expressions;
// symbolic ones make a symbolic result type), or returns x when its
// dimensions are already dims. Errors: element counts that are not equal
// expressions (hlo.reshape's check), at the graph op.
func (b *builder) reshapeDims(x *graphir.Value, dims []*graphir.SymExpr) (*graphir.Value, error) {
	t, err := b.tensorOf(x, "reshape operand")
	if err != nil {
		return nil, err
	}
	if dimsEq(t.Dims(), dims) {
		return x, nil
	}
	return b.insert(hlo.Reshape(x, graphir.NewTensorDims(t.Elem, dims...), b.src.Loc))
}

// broadcastInDim is broadcastInDimDims to a static shape.
func (b *builder) broadcastInDim(x *graphir.Value, shape []int64, dims []int64) (*graphir.Value, error) {
	return b.broadcastInDimDims(x, constDims(shape), dims)
}

// broadcastInDimDims creates hlo.broadcast_in_dim of x to the dimensions
// target (expressions) with the dimension map dims (x's dimension i is
// result dimension dims[i]), or returns x when it is the identity.
// Errors: a map of the wrong length, a dimension out of range, or an
// operand dimension that is neither 1 nor the target's expression.
func (b *builder) broadcastInDimDims(x *graphir.Value, target []*graphir.SymExpr, dims []int64) (*graphir.Value, error) {
	t, err := b.tensorOf(x, "broadcast operand")
	if err != nil {
		return nil, err
	}
	if len(dims) != t.Rank() {
		return nil, b.src.Errorf("failed to legalize to hlo: broadcast of rank-%d value with %d dimensions", t.Rank(), len(dims))
	}
	identity := len(target) == t.Rank() && dimsEq(target, t.Dims())
	for i, d := range dims {
		if d < 0 || int(d) >= len(target) || !broadcastsTo(t.Dim(i), target[d]) {
			return nil, b.src.Errorf("cannot broadcast %s to shape %s", t, dimsString(target))
		}
		identity = identity && d == int64(i)
	}
	if identity {
		return x, nil
	}
	return b.insert(hlo.BroadcastInDim(x, graphir.NewTensorDims(t.Elem, target...), dims, b.src.Loc))
}

// broadcastsTo reports whether a dimension of size d broadcasts to one of
// size to: d is the constant 1 or the same expression.
func broadcastsTo(d, to *graphir.SymExpr) bool {
	c, ok := d.Const()
	return ok && c == 1 || d.Equal(to)
}

// broadcastTo is broadcastToDims to a static shape.
func (b *builder) broadcastTo(x *graphir.Value, shape []int64) (*graphir.Value, error) {
	return b.broadcastToDims(x, constDims(shape))
}

// broadcastToDims broadcasts x to the dimensions target NumPy-style: x's
// dimensions align with the trailing dimensions of target, and each is 1
// or the target's expression. Errors: x of higher rank, or a dimension
// that does not broadcast.
func (b *builder) broadcastToDims(x *graphir.Value, target []*graphir.SymExpr) (*graphir.Value, error) {
	t, err := b.tensorOf(x, "broadcast operand")
	if err != nil {
		return nil, err
	}
	if t.Rank() > len(target) {
		return nil, b.src.Errorf("cannot broadcast %s to shape %s", t, dimsString(target))
	}
	off := len(target) - t.Rank()
	dims := make([]int64, t.Rank())
	for i := range dims {
		dims[i] = int64(off + i)
	}
	return b.broadcastInDimDims(x, target, dims)
}

// reduce creates hlo.reduce of x over dims, starting from init and
// combining with the binary hlo op combiner (hlo.AddOp, hlo.MaximumOp, ...).
func (b *builder) reduce(x *graphir.Value, init float64, combiner string, dims []int64) (*graphir.Value, error) {
	t, err := b.tensorOf(x, "reduce operand")
	if err != nil {
		return nil, err
	}
	iv, err := b.scalar(t.Elem, init)
	if err != nil {
		return nil, err
	}
	return b.insert(hlo.Reduce(x, iv, dims, combiner, b.src.Loc))
}

// lowestValue is the identity of max for dtype dt: -inf for floats, the
// smallest representable integer otherwise.
func lowestValue(dt graphir.DType) float64 {
	switch dt {
	case graphir.I1:
		return 0
	case graphir.I8:
		return math.MinInt8
	case graphir.I16:
		return math.MinInt16
	case graphir.I32:
		return math.MinInt32
	case graphir.I64:
		return math.MinInt64
	case graphir.UI8, graphir.UI16, graphir.UI32, graphir.UI64:
		return 0
	}
	return math.Inf(-1)
}

// highestValue is the identity of min for dtype dt.
func highestValue(dt graphir.DType) float64 {
	switch dt {
	case graphir.I1:
		return 1
	case graphir.I8:
		return math.MaxInt8
	case graphir.I16:
		return math.MaxInt16
	case graphir.I32:
		return math.MaxInt32
	case graphir.I64:
		return math.MaxInt64 // 2^63 as a float64: constants saturate to 2^63-1
	case graphir.UI8:
		return math.MaxUint8
	case graphir.UI16:
		return math.MaxUint16
	case graphir.UI32:
		return math.MaxUint32
	case graphir.UI64:
		return math.MaxUint64 // 2^64 as a float64, which ui64 constants read as 2^64-1
	}
	return math.Inf(1)
}

// iota64 is from, from+1, ..., to-1.
func iota64(from, to int) []int64 {
	out := make([]int64, 0, max(0, to-from))
	for i := from; i < to; i++ {
		out = append(out, int64(i))
	}
	return out
}

// optionalOperand returns operand i, or nil when the op has fewer operands
// or the operand is a graph.none placeholder.
func optionalOperand(op *graphir.Op, i int) *graphir.Value {
	if i >= op.NumOperands() {
		return nil
	}
	v := op.Operand(i)
	if v == nil || (v.Def != nil && v.Def.Name == NoneOp) {
		return nil
	}
	return v
}

// chain threads the first error through a sequence of builder calls, so
// that rules read as formulas; t is the type splat constants take.
type chain struct {
	b   *builder
	t   *graphir.TensorType
	err error
}

// do runs one builder step unless an earlier one failed.
func (c *chain) do(f func() (*graphir.Value, error)) *graphir.Value {
	if c.err != nil {
		return nil
	}
	r, err := f()
	c.err = err
	return r
}

func (c *chain) splat(v float64) *graphir.Value {
	return c.do(func() (*graphir.Value, error) { return c.b.splat(c.t, v) })
}

func (c *chain) scalar(v float64) *graphir.Value {
	return c.do(func() (*graphir.Value, error) { return c.b.scalar(c.t.Elem, v) })
}

// op is the hlo op name of operands (see builder.op).
func (c *chain) op(name string, operands ...*graphir.Value) *graphir.Value {
	return c.do(func() (*graphir.Value, error) { return c.b.op(name, operands...) })
}

func (c *chain) cmp(dir string, x, y *graphir.Value) *graphir.Value {
	return c.do(func() (*graphir.Value, error) { return c.b.compare(dir, x, y) })
}

func (c *chain) done(r *graphir.Value) ([]*graphir.Value, error) {
	if c.err != nil {
		return nil, c.err
	}
	return []*graphir.Value{r}, nil
}

// legalizeUnary lowers a one-operand op to the hlo op name of the same
// type.
func legalizeUnary(name string) legalizeFn {
	return func(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
		r, err := b.op(name, op.Operand(0))
		return []*graphir.Value{r}, err
	}
}

// legalizeBroadcast lowers a NumPy-broadcasting elementwise op to the hlo
// op name after broadcasting every operand to the result shape.
func legalizeBroadcast(name string) legalizeFn {
	return broadcastThen(func(b *builder, xs []*graphir.Value) (*graphir.Value, error) { return b.op(name, xs...) })
}

// broadcastThen broadcasts every operand to the result shape and builds
// the result from them with build.
func broadcastThen(build func(b *builder, xs []*graphir.Value) (*graphir.Value, error)) legalizeFn {
	return func(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
		rt, err := b.resultTensor()
		if err != nil {
			return nil, err
		}
		xs, err := broadcastOperands(op, b, rt.Dims())
		if err != nil {
			return nil, err
		}
		r, err := build(b, xs)
		return []*graphir.Value{r}, err
	}
}

// broadcastOperands broadcasts every operand of op to the dimensions
// target.
func broadcastOperands(op *graphir.Op, b *builder, target []*graphir.SymExpr) ([]*graphir.Value, error) {
	xs := make([]*graphir.Value, op.NumOperands())
	for i := range xs {
		var err error
		if xs[i], err = b.broadcastToDims(op.Operand(i), target); err != nil {
			return nil, err
		}
	}
	return xs, nil
}
