package onnx

import (
	"fmt"
	"math"

	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/dialects/graph/onnx/onnxpb"
	"github.com/tessera-ml/tessera/graphir"
)

// converter translates one node; it returns the node's outputs in order
// (fewer than the node declares when trailing optional outputs are unused).
type converter func(n *node) ([]*value, error)

// converters maps ONNX op types to their translation; each ops_*.go file
// registers its family in init.
var converters = map[string]converter{}

func register(c converter, opTypes ...string) {
	for _, t := range opTypes {
		if _, dup := converters[t]; dup {
			panic("onnx: converter registered twice: " + t)
		}
		converters[t] = c
	}
}

// node is the translation context of one NodeProto.
type node struct {
	im    *importer
	p     *onnxpb.NodeProto
	idx   int
	loc   graphir.Location
	opset int64
	// ins are the node's inputs; nil for an omitted optional input.
	ins []*value
}

// errorf returns a diagnostic at the node naming its index, name, op type
// and the model's opset.
func (n *node) errorf(format string, args ...any) error {
	name := ""
	if n.p.GetName() != "" {
		name = fmt.Sprintf(" '%s'", n.p.GetName())
	}
	return graphir.Errorf(n.loc, "node #%d%s (%s, opset %d): %s", n.idx, name, n.p.GetOpType(), n.opset, fmt.Sprintf(format, args...))
}

// in returns input i, or nil when it is absent.
func (n *node) in(i int) *value {
	if i < len(n.ins) {
		return n.ins[i]
	}
	return nil
}

// need checks the input count is within [lo, hi] and the first lo present.
func (n *node) need(lo, hi int) error {
	if len(n.ins) < lo || (hi >= 0 && len(n.ins) > hi) {
		if hi == lo {
			return n.errorf("expects %d inputs, got %d", lo, len(n.ins))
		}
		return n.errorf("expects %d to %d inputs, got %d", lo, hi, len(n.ins))
	}
	for i := 0; i < lo; i++ {
		if n.ins[i] == nil {
			return n.errorf("input #%d is required", i)
		}
	}
	return nil
}

func (n *node) attr(name string) *onnxpb.AttributeProto {
	for _, a := range n.p.GetAttribute() {
		if a.GetName() == name {
			return a
		}
	}
	return nil
}

func (n *node) has(name string) bool { return n.attr(name) != nil }

func (n *node) checkKind(a *onnxpb.AttributeProto, k onnxpb.AttributeProto_AttributeType) error {
	if a.GetRefAttrName() != "" {
		return n.errorf("attribute '%s' refers to a function attribute, which is not supported", a.GetName())
	}
	if a.GetType() != k && a.GetType() != onnxpb.AttributeProto_UNDEFINED {
		return n.errorf("attribute '%s' must be %s, got %s", a.GetName(), k, a.GetType())
	}
	return nil
}

func (n *node) intAttr(name string, def int64) (int64, error) {
	a := n.attr(name)
	if a == nil {
		return def, nil
	}
	return a.GetI(), n.checkKind(a, onnxpb.AttributeProto_INT)
}

func (n *node) floatAttr(name string, def float64) (float64, error) {
	a := n.attr(name)
	if a == nil {
		return def, nil
	}
	return float64(a.GetF()), n.checkKind(a, onnxpb.AttributeProto_FLOAT)
}

func (n *node) stringAttr(name, def string) (string, error) {
	a := n.attr(name)
	if a == nil {
		return def, nil
	}
	return string(a.GetS()), n.checkKind(a, onnxpb.AttributeProto_STRING)
}

func (n *node) intsAttr(name string, def []int64) ([]int64, error) {
	a := n.attr(name)
	if a == nil {
		return def, nil
	}
	return a.GetInts(), n.checkKind(a, onnxpb.AttributeProto_INTS)
}

func (n *node) floatsAttr(name string) ([]float64, error) {
	a := n.attr(name)
	if a == nil {
		return nil, nil
	}
	out := make([]float64, len(a.GetFloats()))
	for i, f := range a.GetFloats() {
		out[i] = float64(f)
	}
	return out, n.checkKind(a, onnxpb.AttributeProto_FLOATS)
}

// constInput returns input i as a constant tensor, or an error naming why
// the op needs it constant.
func (n *node) constInput(i int, what string) (*graphir.Tensor, error) {
	x := n.in(i)
	if x == nil {
		return nil, n.errorf("input #%d (%s) is required", i, what)
	}
	if x.c == nil {
		return nil, n.errorf("unsupported: input #%d (%s) must be a constant (an initializer or computable at import time)", i, what)
	}
	return x.c, nil
}

// constInts returns constant input i as integers.
func (n *node) constInts(i int, what string) ([]int64, error) {
	t, err := n.constInput(i, what)
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(t.Data))
	for k, v := range t.Data {
		switch {
		case v != math.Trunc(v):
			return nil, n.errorf("input #%d (%s) must hold integers, got %g", i, what, v)
		case v >= math.MaxInt64: // INT64_MAX, as Slice's "to the end", is 2^63 in float64
			out[k] = math.MaxInt64
		case v <= math.MinInt64:
			out[k] = math.MinInt64
		default:
			out[k] = int64(v)
		}
	}
	return out, nil
}

// requireOp fails with the usual unsupported error when graph op name is
// not registered (yet).
func (n *node) requireOp(name string) error {
	if graphir.LookupOp(name) == nil {
		return n.errorf("unsupported: needs graph op '%s', which is not available", name)
	}
	return nil
}

// emit builds graph op name on the inputs. When every input is a constant
// the op is evaluated with its reference evaluator and its results become
// constants; otherwise the op is appended to @main.
func (n *node) emit(name string, ins []*value, attrs graphir.DictAttr) ([]*value, error) {
	return n.emitTyped(name, ins, attrs, nil)
}

// emitTyped is emit with explicit result types, for ops whose result type
// Infer cannot know (graph.cast); nil types means inferred.
func (n *node) emitTyped(name string, ins []*value, attrs graphir.DictAttr, types []graphir.Type) ([]*value, error) {
	if err := n.requireOp(name); err != nil {
		return nil, err
	}
	attrs = dropDefaults(name, attrs)
	allConst := len(ins) > 0
	for _, x := range ins {
		if x.c == nil {
			allConst = false
		}
	}
	operands := make([]*graphir.Value, len(ins))
	for i, x := range ins {
		if allConst {
			// detached constants: the op is only evaluated, never inserted
			c := graphir.NewOp(graph.ConstantOp, nil, []graphir.Type{x.c.Type}, graphir.DictAttr{}.Set("value", x.c.ToDense()), n.loc)
			operands[i] = c.Result(0)
		} else {
			operands[i] = n.im.materialize(x, n.loc)
		}
	}
	var op *graphir.Op
	if types == nil {
		var err error
		op, err = graphir.Build(name, operands, attrs, n.loc)
		if err != nil {
			return nil, n.wrap(err)
		}
	} else {
		op = graphir.NewOp(name, operands, types, attrs, n.loc)
	}
	if op.Def.Verify != nil {
		if err := op.Def.Verify(op); err != nil {
			op.SetOperands(nil)
			return nil, n.wrap(err)
		}
	}
	if allConst && op.Def.Eval != nil {
		args := make([]*graphir.Tensor, len(ins))
		for i, x := range ins {
			args[i] = x.c
		}
		res, err := op.Def.Eval(op, args)
		op.SetOperands(nil)
		if err != nil {
			return nil, n.wrap(err)
		}
		out := make([]*value, len(res))
		for i, r := range res {
			out[i] = constValue(r, n.loc)
		}
		return out, nil
	}
	if allConst {
		op.SetOperands(nil)
		for i, x := range ins {
			operands[i] = n.im.materialize(x, n.loc)
		}
		op.SetOperands(operands)
	}
	n.im.fn.Entry().Append(op)
	out := make([]*value, len(op.Results))
	for i, r := range op.Results {
		out[i] = &value{v: r}
	}
	return out, nil
}

// wrap turns a diagnostic of a built graph op into one naming the node.
func (n *node) wrap(err error) error {
	if d, ok := err.(*graphir.Diagnostic); ok {
		return n.errorf("%s", d.Message)
	}
	return n.errorf("%v", err)
}

// one returns the first result of emit.
func (n *node) emit1(name string, ins []*value, attrs graphir.DictAttr) (*value, error) {
	out, err := n.emit(name, ins, attrs)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// attrs builds a dictionary from name/value pairs, skipping nil values.
func attrs(kv ...any) graphir.DictAttr {
	d := graphir.DictAttr{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			continue
		}
		d = d.Set(kv[i].(string), kv[i+1].(graphir.Attribute))
	}
	return d
}

func list(xs ...*value) []*value { return xs }

// opDefaults lists graph-op attributes at their default value, which the
// importer leaves out (an absent attribute means the default).
var opDefaults = map[string]graphir.DictAttr{
	"graph.conv2d":             attrs("strides", graphir.I64Array(1, 1), "pads", graphir.I64Array(0, 0, 0, 0), "dilations", graphir.I64Array(1, 1), "groups", graphir.IntAttr(1)),
	"graph.max_pool2d":         attrs("strides", graphir.I64Array(1, 1), "pads", graphir.I64Array(0, 0, 0, 0), "dilations", graphir.I64Array(1, 1), "ceil_mode", graphir.BoolAttr(false)),
	"graph.avg_pool2d":         attrs("strides", graphir.I64Array(1, 1), "pads", graphir.I64Array(0, 0, 0, 0), "ceil_mode", graphir.BoolAttr(false), "count_include_pad", graphir.BoolAttr(false)),
	"graph.gemm":               attrs("alpha", graphir.F32Attr(1), "beta", graphir.F32Attr(1), "transA", graphir.BoolAttr(false), "transB", graphir.BoolAttr(false)),
	"graph.batch_norm":         attrs("epsilon", graphir.F32Attr(1e-5)),
	"graph.flatten":            attrs("axis", graphir.IntAttr(1)),
	"graph.softmax":            attrs("axis", graphir.IntAttr(-1)),
	"graph.log_softmax":        attrs("axis", graphir.IntAttr(-1)),
	"graph.leaky_relu":         attrs("alpha", graphir.F32Attr(0.01)),
	"graph.elu":                attrs("alpha", graphir.F32Attr(1)),
	"graph.hard_sigmoid":       attrs("alpha", graphir.F32Attr(0.2), "beta", graphir.F32Attr(0.5)),
	"graph.selu":               attrs("alpha", graphir.F32Attr(1.67326319217681884765625), "gamma", graphir.F32Attr(1.05070102214813232421875)),
	"graph.pad":                attrs("mode", graphir.StringAttr("constant"), "value", graphir.F32Attr(0)),
	"graph.split":              attrs("axis", graphir.IntAttr(0)),
	"graph.gather":             attrs("axis", graphir.IntAttr(0)),
	"graph.reduce_sum":         attrs("keepdims", graphir.BoolAttr(true)),
	"graph.reduce_mean":        attrs("keepdims", graphir.BoolAttr(true)),
	"graph.reduce_max":         attrs("keepdims", graphir.BoolAttr(true)),
	"graph.reduce_min":         attrs("keepdims", graphir.BoolAttr(true)),
	"graph.reduce_prod":        attrs("keepdims", graphir.BoolAttr(true)),
	"graph.reduce_l2":          attrs("keepdims", graphir.BoolAttr(true)),
	"graph.reduce_log_sum_exp": attrs("keepdims", graphir.BoolAttr(true)),
}

// dropDefaults removes attributes equal to their default.
func dropDefaults(op string, a graphir.DictAttr) graphir.DictAttr {
	out := graphir.DictAttr{}
	for _, na := range a {
		if def := opDefaults[op].Get(na.Name); def != nil && graphir.AttrEqual(def, na.Value) {
			continue
		}
		out = out.Set(na.Name, na.Value)
	}
	return out
}
