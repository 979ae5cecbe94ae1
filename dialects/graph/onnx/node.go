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

// symbolicConverters are the op types whose converters take inputs with
// symbolic dimensions (their own shape logic reads no Dynamic entry; the
// graph ops they emit infer symbolically or refuse). A node of any other
// custom converter with such an input is refused with the --fix-dim hint
// (importer.node); ops converted directly rely on their graph op's
// Symbolic.
var symbolicConverters = map[string]bool{}

// registerSymbolic is register for converters that take symbolic inputs.
func registerSymbolic(c converter, opTypes ...string) {
	register(c, opTypes...)
	for _, t := range opTypes {
		symbolicConverters[t] = true
	}
}

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

// constInput returns input i as a constant tensor, or an error naming why
// the op needs it constant.
func (n *node) constInput(i int, what string) (*graphir.Tensor, error) {
	x := n.in(i)
	if x == nil {
		return nil, n.errorf("input #%d (%s) is required", i, what)
	}
	if !x.isConst() {
		hint := ""
		if name, ok := n.im.argNames[x.v]; ok {
			hint = fmt.Sprintf("; it is the graph input '%s': give it a value with tessera import --bind-input %s=FILE.npy", name, name)
		}
		return nil, n.errorf("unsupported: input #%d (%s) must be a constant (an initializer or computable at import time)%s", i, what, hint)
	}
	return x.tensor(), nil
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
// constants (a dequantize_linear stays an op with Options.KeepQDQ);
// otherwise the op is appended to @main.
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
	allConst := len(ins) > 0 && !(name == graph.DequantizeLinearOp && n.im.keepQDQ)
	for _, x := range ins {
		if !x.isConst() {
			allConst = false
		}
	}
	operands := make([]*graphir.Value, len(ins))
	for i, x := range ins {
		if allConst {
			// detached constants: the op is only evaluated, never inserted
			c := graphir.NewOp(graph.ConstantOp, nil, []graphir.Type{x.typ()}, graphir.DictAttr{}.Set("value", x.tensor().ToDense()), n.loc)
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
			args[i] = x.tensor()
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

// dropDefaults removes the attributes equal to graph op op's defaults
// (AttrSpec.Default): an absent attribute means the default.
func dropDefaults(op string, a graphir.DictAttr) graphir.DictAttr {
	out := graphir.DictAttr{}
	for _, na := range a {
		if def := graphDefault(op, na.Name); def != nil && graphir.AttrEqual(def, na.Value) {
			continue
		}
		out = out.Set(na.Name, na.Value)
	}
	return out
}

// graphDefault is the default of attribute name of graph op op, from the
// op's schema (nil when it has none): ONNX's default for an attribute the
// graph op shares is the same value, written once, in the op's definition.
func graphDefault(op, name string) graphir.Attribute {
	return graphir.LookupOp(op).Default(name)
}

// intsOf reads integer-list attribute name, which graph op op shares:
// absent, the op's default.
func (n *node) intsOf(name, op string) ([]int64, error) {
	var def []int64
	if arr, ok := graphDefault(op, name).(graphir.ArrayAttr); ok {
		for _, e := range arr {
			def = append(def, e.(*graphir.IntegerAttr).Value)
		}
	}
	return n.intsAttr(name, def)
}

// intOf reads integer attribute name of graph op op's attribute graphName
// (an ONNX int, a graph int or bool): absent, the op's default.
func (n *node) intOf(name, op, graphName string) (int64, error) {
	var def int64
	switch d := graphDefault(op, graphName).(type) {
	case *graphir.IntegerAttr:
		def = d.Value
	case graphir.BoolAttr:
		if d {
			def = 1
		}
	}
	return n.intAttr(name, def)
}

// floatOf reads float attribute name, which graph op op shares: absent,
// the op's default.
func (n *node) floatOf(name, op string) (float64, error) {
	var def float64
	if d, ok := graphDefault(op, name).(*graphir.FloatAttr); ok {
		def = d.Value
	}
	return n.floatAttr(name, def)
}

// convertDirect imports a node whose op type graph op def implements
// one-to-one (graph.ONNXOp): the inputs become its operands in order and
// every attribute becomes the graph attribute of the same name, converted
// to the kind the op's schema declares. Errors: an input count outside the
// op's arity, an attribute the op does not have or of a kind it cannot
// take.
func convertDirect(n *node, def *graphir.OpDef) ([]*value, error) {
	if err := n.need(def.Operands.Min, def.Operands.Max); err != nil {
		return nil, err
	}
	attrs, err := n.directAttrs(def)
	if err != nil {
		return nil, err
	}
	return n.emit(def.Name, n.ins, attrs)
}

// directAttrs converts every attribute of the node to the graph attribute
// of the same name of op def, of the kind its schema declares. Errors: an
// attribute the op does not have or of a kind it cannot take.
func (n *node) directAttrs(def *graphir.OpDef) (graphir.DictAttr, error) {
	attrs := graphir.DictAttr{}
	for _, a := range n.p.GetAttribute() {
		spec := def.Spec(a.GetName())
		if spec == nil {
			return nil, n.errorf("unsupported attribute '%s'", a.GetName())
		}
		v, err := n.graphAttr(a, spec.Kind)
		if err != nil {
			return nil, err
		}
		attrs = attrs.Set(a.GetName(), v)
	}
	return attrs, nil
}

// graphAttr converts an ONNX attribute to a graph attribute of kind k.
func (n *node) graphAttr(a *onnxpb.AttributeProto, k graphir.AttrKind) (graphir.Attribute, error) {
	name := a.GetName()
	switch k {
	case graphir.KindFloat:
		v, err := n.floatAttr(name, 0)
		return graphir.F32Attr(v), err
	case graphir.KindInt:
		v, err := n.intAttr(name, 0)
		return graphir.IntAttr(v), err
	case graphir.KindBool:
		v, err := n.intAttr(name, 0)
		return graphir.BoolAttr(v != 0), err
	case graphir.KindIntArray:
		v, err := n.intsAttr(name, nil)
		return graphir.I64Array(v...), err
	case graphir.KindString, graphir.KindEnum:
		v, err := n.stringAttr(name, "")
		return graphir.StringAttr(v), err
	}
	return nil, n.errorf("unsupported attribute '%s' (%s)", name, a.GetType())
}

// staticInputs refuses a node whose inputs have symbolic dimensions,
// naming them with the --fix-dim hint (converters not in
// symbolicConverters).
func (n *node) staticInputs() error {
	var ts []graphir.Type
	for _, x := range n.ins {
		if x != nil {
			ts = append(ts, x.typ())
		}
	}
	if syms := graphir.TypesSymbols(ts...); len(syms) > 0 {
		return n.errorf("%s", graphir.NotSymbolicYet(syms))
	}
	return nil
}
