package onnx

import (
	"fmt"
	"math"
	"strings"

	"github.com/tessera-ml/tessera/graphir"
)

// Shape values over symbols. A model exported with dynamic axes computes
// the shapes it reshapes to: Shape of a tensor with symbolic dimensions,
// then Gather, Unsqueeze, Concat and integer arithmetic, into Reshape's
// shape input. Over static shapes these chains fold to constants
// (fold.go). Over symbolic ones each such value is held at import as its
// elements' expressions (value.sym: an i64 scalar or vector), folded by
// symFolders, and read by Reshape, which turns it into graph.reshape's
// shape attribute. A value whose elements all become constants is an
// ordinary constant again (Gather of a static dimension). A shape value
// reaching any other op, or a graph output, is refused with the
// --fix-dim hint: nothing computes it at run time.

// symValue returns a value for the i64 elements es (rank 0 when scalar):
// a constant when every element is one.
func symValue(es []*graphir.SymExpr, scalar bool, loc graphir.Location) *value {
	vs := make([]int64, len(es))
	for i, e := range es {
		c, ok := e.Const()
		if !ok {
			return &value{sym: es, symScalar: scalar, loc: loc}
		}
		vs[i] = c
	}
	t := int64Const(vs)
	if scalar {
		t.Type = graphir.NewTensor(graphir.I64)
	}
	return constValue(t, loc)
}

// symElems returns x's elements as expressions: a shape value's, or a
// constant integer tensor's of rank ≤ 1 (ok false otherwise).
func symElems(x *value) ([]*graphir.SymExpr, bool) {
	if x.sym != nil {
		return x.sym, true
	}
	if !x.isConst() || x.typ().Rank() > 1 || !x.typ().Elem.IsInt() {
		return nil, false
	}
	t := x.tensor()
	out := make([]*graphir.SymExpr, len(t.Data))
	for i, v := range t.Data {
		if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
			return nil, false
		}
		out[i] = graphir.SymConst(int64(v))
	}
	return out, true
}

// symFolders fold the ops of shape computations over shape values.
var symFolders = map[string]func(n *node) ([]*value, error){
	"Gather":    foldSymGather,
	"Unsqueeze": foldSymUnsqueeze,
	"Squeeze":   foldSymSqueeze,
	"Concat":    foldSymConcat,
	"Add":       foldSymArith,
	"Sub":       foldSymArith,
	"Mul":       foldSymArith,
	"Div":       foldSymArith,
	"Cast":      foldSymCast,
	"Identity":  func(n *node) ([]*value, error) { return list(n.in(0)), nil },
	"Slice":     foldSymSlice,
	"Reshape":   foldSymReshape,
}

// hasSymInput reports whether an input of n is a shape value.
func (n *node) hasSymInput() bool {
	for _, x := range n.ins {
		if x != nil && x.sym != nil {
			return true
		}
	}
	return false
}

// foldSymbolic translates a node with a shape-value input through
// symFolders. Errors: an op that has none, naming the symbols.
func (n *node) foldSymbolic() ([]*value, error) {
	fold, ok := symFolders[n.p.GetOpType()]
	if !ok {
		return nil, n.symRefusal()
	}
	return fold(n)
}

// symRefusal is the error for a shape value used where only a computed
// tensor would do.
func (n *node) symRefusal() error {
	var es []*graphir.SymExpr
	for _, x := range n.ins {
		if x != nil {
			es = append(es, x.sym...)
		}
	}
	syms := graphir.SymbolsOf(es)
	return n.errorf("takes a value computed from the input's shape, which depends on the symbolic dimensions '%s' (only Reshape's shape may); pin them with %s", strings.Join(syms, "', '"), graphir.FixDimHint(syms))
}

func foldSymGather(n *node) ([]*value, error) {
	if err := n.need(2, 2); err != nil {
		return nil, err
	}
	data := n.in(0)
	axis, err := n.intAttr("axis", 0)
	if err != nil {
		return nil, err
	}
	idx, ok := symElems(n.in(1))
	if data.sym == nil || data.symScalar || axis != 0 || !ok {
		return nil, n.symRefusal()
	}
	out := make([]*graphir.SymExpr, len(idx))
	for i, e := range idx {
		k, _ := e.Const()
		if k < 0 {
			k += int64(len(data.sym))
		}
		if k < 0 || k >= int64(len(data.sym)) {
			return nil, n.errorf("index %d is out of range for a shape of rank %d", k, len(data.sym))
		}
		out[i] = data.sym[k]
	}
	return list(symValue(out, n.in(1).typ().Rank() == 0, n.loc)), nil
}

func foldSymUnsqueeze(n *node) ([]*value, error) {
	x := n.in(0)
	axes, _, err := n.axesArg(13)
	if err != nil {
		return nil, err
	}
	if !x.symScalar || len(axes) != 1 || (axes[0] != 0 && axes[0] != -1) {
		return nil, n.symRefusal()
	}
	return list(symValue(x.sym, false, n.loc)), nil
}

func foldSymSqueeze(n *node) ([]*value, error) {
	x := n.in(0)
	axes, _, err := n.axesArg(13)
	if err != nil {
		return nil, err
	}
	if x.symScalar || len(x.sym) != 1 || len(axes) > 1 || len(axes) == 1 && axes[0] != 0 && axes[0] != -1 {
		return nil, n.symRefusal()
	}
	return list(symValue(x.sym, true, n.loc)), nil
}

func foldSymConcat(n *node) ([]*value, error) {
	var out []*graphir.SymExpr
	for _, x := range n.ins {
		es, ok := symElems(x)
		if !ok || x.sym != nil && x.symScalar || x.sym == nil && x.typ().Rank() != 1 {
			return nil, n.symRefusal()
		}
		out = append(out, es...)
	}
	return list(symValue(out, false, n.loc)), nil
}

// foldSymArith folds Add, Sub, Mul and Div elementwise (a scalar operand
// broadcasts). Div divides exactly, or floors a non-negative expression
// (shape arithmetic divides sizes by positive constants, where ONNX's
// truncation is the floor).
func foldSymArith(n *node) ([]*value, error) {
	if err := n.need(2, 2); err != nil {
		return nil, err
	}
	a, okA := symElems(n.in(0))
	b, okB := symElems(n.in(1))
	if !okA || !okB {
		return nil, n.symRefusal()
	}
	scalar := isScalarValue(n.in(0)) && isScalarValue(n.in(1))
	m := max(len(a), len(b))
	if len(a) != m && len(a) != 1 || len(b) != m && len(b) != 1 {
		return nil, n.errorf("shape values of %d and %d elements do not broadcast", len(a), len(b))
	}
	out := make([]*graphir.SymExpr, m)
	for i := range out {
		x, y := a[min(i, len(a)-1)], b[min(i, len(b)-1)]
		switch n.p.GetOpType() {
		case "Add":
			out[i] = x.Add(y)
		case "Sub":
			out[i] = x.Sub(y)
		case "Mul":
			out[i] = x.Mul(y)
		default:
			d, ok := y.Const()
			if !ok || d < 1 {
				return nil, n.errorf("divides the shape value %s by %s: only division by a positive constant is supported", x, y)
			}
			q, err := x.FloorDiv(d)
			if err != nil {
				return nil, n.errorf("%v", err)
			}
			out[i] = q
		}
	}
	return list(symValue(out, scalar, n.loc)), nil
}

func isScalarValue(x *value) bool {
	if x.sym != nil {
		return x.symScalar
	}
	return x.typ().Rank() == 0
}

// foldSymCast keeps a shape value through a cast to an integer type.
func foldSymCast(n *node) ([]*value, error) {
	to, err := n.intAttr("to", 0)
	if err != nil {
		return nil, err
	}
	dt, err := elemType(int32(to))
	if err != nil || !dt.IsInt() || dt.Bits() < 32 {
		return nil, n.symRefusal()
	}
	return list(n.in(0)), nil
}

// foldSymSlice slices a shape vector by constant starts, ends and steps
// (ONNX clamping).
func foldSymSlice(n *node) ([]*value, error) {
	x := n.in(0)
	if x.sym == nil || x.symScalar || n.opset < 10 {
		return nil, n.symRefusal()
	}
	starts, ends, axes, steps, err := n.sliceInputs()
	if err != nil {
		return nil, err
	}
	rs, err := sliceRanges([]int64{int64(len(x.sym))}, starts, ends, axes, steps)
	if err != nil {
		return nil, n.errorf("%v", err)
	}
	out := make([]*graphir.SymExpr, rs[0].count)
	for i := range out {
		out[i] = x.sym[rs[0].start+int64(i)*rs[0].step]
	}
	return list(symValue(out, false, n.loc)), nil
}

// foldSymReshape is Reshape of a tensor to a shape value
// (reshapeToDims).
func foldSymReshape(n *node) ([]*value, error) {
	if err := n.need(2, 2); err != nil {
		return nil, err
	}
	x, shape := n.in(0), n.in(1)
	if x.sym != nil || shape.sym == nil || shape.symScalar {
		return nil, n.symRefusal()
	}
	return n.reshapeToDims(x, shape.sym)
}

// reshapeToDims reshapes x to dimension expressions dims: each becomes
// graph.reshape's shape attribute entry — its constant, 0 where it is the
// input's dimension at that index, or −1 — and the inferred result must
// have exactly dims (with several −1, the written result type gives
// them). Errors: element counts that differ for some value of the
// symbols.
func (n *node) reshapeToDims(x *value, dims []*graphir.SymExpr) ([]*value, error) {
	in := x.typ()
	attr := make([]int64, len(dims))
	free := 0
	for i, e := range dims {
		if c, ok := e.Const(); ok {
			attr[i] = c
			continue
		}
		if i < in.Rank() && in.Dim(i).Equal(e) {
			continue // 0: copy the input's dimension
		}
		free, attr[i] = free+1, -1
	}
	var types []graphir.Type // graph.reshape takes several −1 from its written type
	if free > 1 {
		types = []graphir.Type{graphir.NewTensorDims(in.Elem, dims...)}
	}
	outs, err := n.emitTyped("graph.reshape", list(x), attrs("shape", graphir.I64Array(attr...)), types)
	if err != nil {
		return nil, err
	}
	got := outs[0].typ().Dims()
	for i, e := range dims {
		if !got[i].Equal(e) {
			return nil, n.errorf("reshapes %s to [%s], but the element count gives dimension %d as %s", in, graphir.FormatSymExprs(dims), i, got[i])
		}
	}
	return outs, nil
}

// shapeValueOf is Shape (start, end) or Size of a tensor of type t: a
// constant when the dimensions it reads are static, a shape value
// otherwise.
func shapeValueOf(n *node, t *graphir.TensorType) (*value, error) {
	dims := t.Dims()
	if n.p.GetOpType() == "Size" {
		p := graphir.SymConst(1)
		for _, d := range dims {
			p = p.Mul(d)
		}
		return symValue([]*graphir.SymExpr{p}, true, n.loc), nil
	}
	r := int64(len(dims))
	start, err := n.intAttr("start", 0)
	if err != nil {
		return nil, err
	}
	end, err := n.intAttr("end", r)
	if err != nil {
		return nil, err
	}
	if start < 0 {
		start += r
	}
	if end < 0 {
		end += r
	}
	start, end = clamp(start, 0, r), clamp(end, 0, r)
	if end < start {
		end = start
	}
	return symValue(dims[start:end], false, n.loc), nil
}

// errSymOutput refuses a shape value as a graph output.
func errSymOutput(name string, x *value) error {
	return fmt.Errorf("graph output '%s' is a shape value [%s] over symbolic dimensions, which Tessera computes only at import; pin them with %s", name, graphir.FormatSymExprs(x.sym), graphir.FixDimHint(graphir.SymbolsOf(x.sym)))
}
