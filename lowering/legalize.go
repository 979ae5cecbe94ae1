// Package lowering holds the passes that move a model down Tessera's IR
// levels. This file defines the `legalize-to-hlo` pass, which rewrites
// every graph-dialect op (ONNX semantics, implicit broadcasting) into
// hlo-dialect primitives (StableHLO semantics, explicit shapes). The rules
// live one file per op family (legalize_elementwise.go, legalize_conv.go,
// ...), each registering its ops with registerLegalization in an init
// function; see README.md for the table.
package lowering

import (
	"fmt"
	"sort"
	"strings"

	_ "github.com/tessera-ml/tessera/dialects/graph" // graph ops must be registered to be read
	_ "github.com/tessera-ml/tessera/dialects/hlo"   // the ops this pass creates
	"github.com/tessera-ml/tessera/graphir"
)

// LegalizeToHLOPassName is the pipeline name of the pass.
const LegalizeToHLOPassName = "legalize-to-hlo"

// noneOpName is the graph dialect's placeholder for an absent optional
// operand; it has no hlo counterpart and is erased once unused.
const noneOpName = "graph.none"

// legalizeFn rewrites one graph op: it creates hlo ops through b (inserted
// before the graph op, carrying its location) and returns the values that
// replace the op's results, or a diagnostic located at op.
type legalizeFn func(op *graphir.Op, b *builder) ([]*graphir.Value, error)

var legalizations = map[string]legalizeFn{}

// registerLegalization installs the rule for a graph op; a duplicate is a
// programming error caught at start-up.
func registerLegalization(name string, fn legalizeFn) {
	if _, dup := legalizations[name]; dup {
		panic("lowering: legalization registered twice: " + name)
	}
	legalizations[name] = fn
}

// LegalizedOps returns the graph ops the pass knows how to rewrite, sorted.
func LegalizedOps() []string {
	names := make([]string, 0, len(legalizations))
	for n := range legalizations {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func init() {
	graphir.RegisterPass(&graphir.PassInfo{
		Name:    LegalizeToHLOPassName,
		Summary: "rewrite every graph-dialect op into hlo-dialect primitives",
		New: func(map[string]string) (graphir.Pass, error) {
			return &graphir.FuncPass{PassName: LegalizeToHLOPassName, Fn: LegalizeFunc}, nil
		},
	})
}

// LegalizeToHLO runs the legalization on every function of m.
func LegalizeToHLO(m *graphir.Module) error {
	for _, f := range m.Funcs {
		if err := LegalizeFunc(f); err != nil {
			return err
		}
	}
	return nil
}

// LegalizeFunc rewrites the graph ops of f into hlo ops, in program order.
// Each graph op is replaced by a small hlo subgraph whose ops all carry the
// graph op's location. Errors (a located diagnostic naming the graph op):
// an op with no rule, an attribute or shape the rule cannot express, and,
// after the rewrite, any graph op other than an unused graph.none left in f.
func LegalizeFunc(f *graphir.Func) error {
	var work []*graphir.Op
	f.Walk(func(op *graphir.Op) {
		if op.Dialect() == "graph" && op.Name != noneOpName {
			work = append(work, op)
		}
	})
	for _, op := range work {
		fn := legalizations[op.Name]
		if fn == nil {
			return op.Errorf("failed to legalize to hlo: no rule for this op")
		}
		if op.Block == nil {
			return op.Errorf("failed to legalize to hlo: op is detached")
		}
		b := &builder{src: op}
		vals, err := fn(op, b)
		if err != nil {
			b.rollback()
			if d, ok := err.(*graphir.Diagnostic); ok {
				return d
			}
			return op.Errorf("%v", err)
		}
		if len(vals) != len(op.Results) {
			b.rollback()
			return op.Errorf("failed to legalize to hlo: rule produced %d values for %d results", len(vals), len(op.Results))
		}
		for i, r := range op.Results {
			if !vals[i].Type.Equal(r.Type) {
				b.rollback()
				return op.Errorf("failed to legalize to hlo: result #%d lowered to %s, expected %s", i, vals[i].Type, r.Type)
			}
		}
		for i, r := range op.Results {
			r.ReplaceAllUsesWith(vals[i])
		}
		op.Erase()
	}
	// graph.none placeholders are dead now that their users are gone.
	var left *graphir.Op
	f.Walk(func(op *graphir.Op) {
		if op.Dialect() != "graph" || left != nil {
			return
		}
		if op.Name == noneOpName && op.IsUnused() {
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

// builder creates hlo ops before the graph op being legalized, each with
// the graph op's location and explicitly computed result types, which it
// checks against the hlo op's own type inference so that a rule's mistake
// is reported at the graph op instead of surfacing later in the verifier.
type builder struct {
	src     *graphir.Op
	created []*graphir.Op
}

// create inserts op name(operands){attrs} with result type t before the
// graph op and returns its result. Regions, if any, are attached to the
// returned value's defining op by the caller before verification.
func (b *builder) create(name string, operands []*graphir.Value, t graphir.Type, attrs graphir.DictAttr, regions ...*graphir.Region) (*graphir.Value, error) {
	op := graphir.NewOp(name, operands, []graphir.Type{t}, attrs, b.src.Loc)
	for _, r := range regions {
		op.AddRegion(r)
	}
	if op.Def == nil {
		op.SetOperands(nil)
		return nil, b.src.Errorf("failed to legalize to hlo: '%s' is not registered", name)
	}
	b.src.Block.InsertBefore(b.src, op)
	b.created = append(b.created, op)
	if op.Def.Infer != nil {
		tys, err := op.Def.Infer(op)
		if err != nil {
			return nil, b.src.Errorf("failed to legalize to hlo: building '%s': %s", name, diagMessage(err))
		}
		if len(tys) != 1 || !tys[0].Equal(t) {
			return nil, b.src.Errorf("failed to legalize to hlo: '%s' infers %v but the rule expects %s", name, tys, t)
		}
	}
	return op.Results[0], nil
}

// rollback erases the ops created so far (in reverse order), leaving the
// graph op untouched, so a failed rule leaves valid IR behind.
func (b *builder) rollback() {
	for i := len(b.created) - 1; i >= 0; i-- {
		op := b.created[i]
		if op.Block != nil {
			op.Erase()
		} else {
			op.SetOperands(nil)
		}
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

// denseSplat returns a splat dense attribute of type t holding v.
func denseSplat(t *graphir.TensorType, v float64) *graphir.DenseElementsAttr {
	d := &graphir.DenseElementsAttr{Type: t}
	if t.Elem.IsFloat() {
		d.Floats = []float64{graphir.RoundTo(t.Elem, v)}
	} else {
		d.Ints = []int64{int64(graphir.RoundTo(t.Elem, v))}
	}
	return d
}

// denseOf returns a dense attribute of type t with the given row-major values.
func denseOf(t *graphir.TensorType, vs []float64) *graphir.DenseElementsAttr {
	d := &graphir.DenseElementsAttr{Type: t}
	if t.Elem.IsFloat() {
		d.Floats = make([]float64, len(vs))
		for i, v := range vs {
			d.Floats[i] = graphir.RoundTo(t.Elem, v)
		}
	} else {
		d.Ints = make([]int64, len(vs))
		for i, v := range vs {
			d.Ints[i] = int64(graphir.RoundTo(t.Elem, v))
		}
	}
	return d
}

// constant creates hlo.constant {value = d}.
func (b *builder) constant(d *graphir.DenseElementsAttr) (*graphir.Value, error) {
	return b.create("hlo.constant", nil, d.Type, graphir.DictAttr{}.Set("value", d))
}

// splat creates a constant of type t with every element v.
func (b *builder) splat(t *graphir.TensorType, v float64) (*graphir.Value, error) {
	return b.constant(denseSplat(t, v))
}

// scalar creates a rank-0 constant of dtype dt (a reduction init value).
func (b *builder) scalar(dt graphir.DType, v float64) (*graphir.Value, error) {
	return b.constant(denseSplat(graphir.NewTensor(dt), v))
}

// binary creates an elementwise hlo op on two same-typed operands.
func (b *builder) binary(name string, x, y *graphir.Value) (*graphir.Value, error) {
	return b.create(name, []*graphir.Value{x, y}, x.Type, nil)
}

// unary creates an elementwise hlo op with x's type.
func (b *builder) unary(name string, x *graphir.Value) (*graphir.Value, error) {
	return b.create(name, []*graphir.Value{x}, x.Type, nil)
}

// reshape creates hlo.reshape of x to shape, or returns x when the shape
// is already right.
func (b *builder) reshape(x *graphir.Value, shape []int64) (*graphir.Value, error) {
	t, err := b.tensorOf(x, "reshape operand")
	if err != nil {
		return nil, err
	}
	if shapeEqual(t.Shape, shape) {
		return x, nil
	}
	return b.create("hlo.reshape", []*graphir.Value{x}, graphir.NewTensor(t.Elem, shape...), nil)
}

// broadcastInDim creates hlo.broadcast_in_dim of x to shape with the
// given dimension map, or returns x when it is the identity.
func (b *builder) broadcastInDim(x *graphir.Value, shape []int64, dims []int64) (*graphir.Value, error) {
	t, err := b.tensorOf(x, "broadcast operand")
	if err != nil {
		return nil, err
	}
	if len(dims) != t.Rank() {
		return nil, b.src.Errorf("failed to legalize to hlo: broadcast of rank-%d value with %d dimensions", t.Rank(), len(dims))
	}
	identity := len(shape) == t.Rank() && shapeEqual(shape, t.Shape)
	for i, d := range dims {
		if d < 0 || int(d) >= len(shape) || (t.Shape[i] != 1 && t.Shape[i] != shape[d]) {
			return nil, b.src.Errorf("cannot broadcast %s to shape %s", t, shapeString(shape))
		}
		identity = identity && d == int64(i)
	}
	if identity {
		return x, nil
	}
	attrs := graphir.DictAttr{}.Set("broadcast_dimensions", graphir.I64Array(dims...))
	return b.create("hlo.broadcast_in_dim", []*graphir.Value{x}, graphir.NewTensor(t.Elem, shape...), attrs)
}

// broadcastTo broadcasts x to shape NumPy-style: x's dimensions align with
// the trailing dimensions of shape, and each has size 1 or the target size.
func (b *builder) broadcastTo(x *graphir.Value, shape []int64) (*graphir.Value, error) {
	t, err := b.tensorOf(x, "broadcast operand")
	if err != nil {
		return nil, err
	}
	if t.Rank() > len(shape) {
		return nil, b.src.Errorf("cannot broadcast %s to shape %s", t, shapeString(shape))
	}
	off := len(shape) - t.Rank()
	dims := make([]int64, t.Rank())
	for i := range dims {
		dims[i] = int64(off + i)
	}
	return b.broadcastInDim(x, shape, dims)
}

// reduction creates an hlo reduction op (hlo.reduce or hlo.reduce_window)
// whose body combines two rank-0 values of dtype dt with the binary hlo op
// combiner, e.g. hlo.add or hlo.maximum.
func (b *builder) reduction(name string, x, init *graphir.Value, combiner string, t *graphir.TensorType, attrs graphir.DictAttr) (*graphir.Value, error) {
	scalarT := graphir.NewTensor(t.Elem)
	body := graphir.NewBlock(scalarT, scalarT)
	comb := graphir.NewOp(combiner, []*graphir.Value{body.Args[0], body.Args[1]}, []graphir.Type{scalarT}, nil, b.src.Loc)
	body.Append(comb)
	body.Append(graphir.NewOp("hlo.return", []*graphir.Value{comb.Results[0]}, nil, nil, b.src.Loc))
	return b.create(name, []*graphir.Value{x, init}, t, attrs, graphir.NewRegion(body))
}

// reduce creates hlo.reduce of x over dims with init and combiner.
func (b *builder) reduce(x *graphir.Value, init float64, combiner string, dims []int64) (*graphir.Value, error) {
	t, err := b.tensorOf(x, "reduce operand")
	if err != nil {
		return nil, err
	}
	iv, err := b.scalar(t.Elem, init)
	if err != nil {
		return nil, err
	}
	drop := map[int64]bool{}
	for _, d := range dims {
		drop[d] = true
	}
	var shape []int64
	for i, s := range t.Shape {
		if !drop[int64(i)] {
			shape = append(shape, s)
		}
	}
	attrs := graphir.DictAttr{}.Set("dimensions", graphir.I64Array(dims...))
	return b.reduction("hlo.reduce", x, iv, combiner, graphir.NewTensor(t.Elem, shape...), attrs)
}

// lowestValue is the identity of max for dtype dt: -inf for floats, the
// smallest representable integer otherwise.
func lowestValue(dt graphir.DType) float64 {
	switch dt {
	case graphir.I1:
		return 0
	case graphir.I8:
		return -128
	case graphir.I32:
		return -2147483648
	case graphir.I64:
		return -9223372036854775808
	}
	return negInf
}

// broadcastShapes returns the NumPy broadcast of two shapes, or false.
func broadcastShapes(a, b []int64) ([]int64, bool) {
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
		case da == db, db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, false
		}
	}
	return out, true
}

func shapeEqual(a, b []int64) bool {
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

func shapeString(s []int64) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// intsAttr reads an integer-array attribute of op with an exact length,
// returning def when it is absent. Errors: wrong kind or length.
func intsAttr(op *graphir.Op, name string, n int, def []int64) ([]int64, error) {
	a := op.Attr(name)
	if a == nil {
		return def, nil
	}
	arr, ok := a.(graphir.ArrayAttr)
	if !ok {
		return nil, op.Errorf("attribute '%s' must be an integer array, got %s", name, graphir.FormatAttr(a))
	}
	if n >= 0 && len(arr) != n {
		return nil, op.Errorf("attribute '%s' must have %d elements, got %d", name, n, len(arr))
	}
	out := make([]int64, len(arr))
	for i, e := range arr {
		ia, ok := e.(*graphir.IntegerAttr)
		if !ok {
			return nil, op.Errorf("attribute '%s' must be an integer array, got %s", name, graphir.FormatAttr(a))
		}
		out[i] = ia.Value
	}
	return out, nil
}

// optionalOperand returns operand i, or nil when the op has fewer operands
// or the operand is a graph.none placeholder.
func optionalOperand(op *graphir.Op, i int) *graphir.Value {
	if i >= op.NumOperands() {
		return nil
	}
	v := op.Operand(i)
	if v == nil || (v.Def != nil && v.Def.Name == noneOpName) {
		return nil
	}
	return v
}

// normalizeAxis maps a possibly negative axis into [0, rank).
func normalizeAxis(op *graphir.Op, axis int64, rank int) (int64, error) {
	if axis < -int64(rank) || axis >= int64(rank) {
		return 0, op.Errorf("axis %d is out of range for rank %d", axis, rank)
	}
	if axis < 0 {
		axis += int64(rank)
	}
	return axis, nil
}

func iota64(from, to int) []int64 {
	out := make([]int64, 0, max(0, to-from))
	for i := from; i < to; i++ {
		out = append(out, int64(i))
	}
	return out
}
