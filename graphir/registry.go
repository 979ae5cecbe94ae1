package graphir

import (
	"fmt"

	"github.com/tessera-ml/tessera/internal/registry"
)

// Trait is a bit set of op properties used by generic passes.
type Trait uint32

// Op traits (names follow MLIR's).
const (
	// Pure ops have no side effects: CSE may merge them, DCE may drop them.
	Pure Trait = 1 << iota
	// Terminator ops end a block.
	Terminator
	// Commutative ops give the same result for permuted operands.
	Commutative
	// Elementwise ops map each output element from the same-index input elements.
	Elementwise
	// SameOperandsAndResultType ops have one type for all operands and results.
	SameOperandsAndResultType
	// ConstantLike ops produce a value from their attributes alone.
	ConstantLike
	// IsolatedFromAbove ops' regions may not use values defined outside them.
	IsolatedFromAbove
	// Injective ops compute each result element from a bounded number of
	// operand elements at indices derived from the result index (TVM's
	// kInjective): broadcast, reshape, transpose, slice, pad, concatenate;
	// elementwise ops are injective too. Fusion puts them on either side
	// of a hero.
	Injective
	// DataMovement ops only move operand elements, without arithmetic
	// (reshape, transpose, broadcast, slice, pad, concatenate): fusion
	// leaves them to the consumer's group, where they are read in place.
	DataMovement
	// LayoutOnly ops read every result element from exactly one operand
	// element, without arithmetic or a padding value (reshape, transpose,
	// broadcast): the only producers fused on the operand side of a
	// contraction, where any arithmetic would be recomputed per output.
	LayoutOnly
	// Reduction ops combine many operand elements into each result element
	// through a body region (TVM's kCommReduce, XLA's reduction heroes):
	// they head "input" fusions.
	Reduction
	// Contraction ops multiply and accumulate over contracting dimensions
	// (dot, convolution; TVM's kOutEWiseFusable): they head "output"
	// fusions with their elementwise epilogue.
	Contraction
	// Opaque ops are compiled into a kernel of their own, built by their
	// lowering as a whole (hlo.rnn_scan's loop over time): fusion keeps
	// them alone in an "opaque" hlo.fusion, fusing neither producers nor
	// consumers.
	Opaque
)

// AttrKind is the expected kind of an attribute in an op's schema.
type AttrKind uint8

// Attribute kinds checked by the generic verifier.
const (
	KindAny AttrKind = iota
	KindInt
	KindFloat // accepts integer literals too
	KindString
	KindBool
	KindIntArray
	KindFloatArray
	KindArray
	KindDense
	KindType
	KindDict
	KindUnit
	KindEnum // a StringAttr with one of AttrSpec.Enum
)

var attrKindNames = [...]string{"any attribute", "integer", "float", "string", "bool", "integer array", "float array", "array", "dense elements", "type", "dictionary", "unit", "string enum"}

func (k AttrKind) String() string { return attrKindNames[k] }

// AttrSpec describes one attribute an op accepts.
type AttrSpec struct {
	Name     string
	Kind     AttrKind
	Required bool
	// Enum lists allowed values for KindEnum.
	Enum []string
	// Len, when > 0, is the required length of an array attribute.
	Len int
	// Default is what an absent attribute means (nil: no default). The
	// typed accessors (Op.Int, Op.Ints, ...) return it, importers leave
	// attributes at their default out, and it is the one place a default
	// is written.
	Default Attribute
}

// Arity is an inclusive range of counts; Max < 0 means unbounded.
type Arity struct{ Min, Max int }

// Exactly returns the arity n..n.
func Exactly(n int) Arity { return Arity{n, n} }

// AtLeast returns the arity n..∞.
func AtLeast(n int) Arity { return Arity{n, -1} }

func (a Arity) allows(n int) bool { return n >= a.Min && (a.Max < 0 || n <= a.Max) }

func (a Arity) String() string {
	switch {
	case a.Min == a.Max:
		return fmt.Sprint(a.Min)
	case a.Max < 0:
		return fmt.Sprintf("at least %d", a.Min)
	}
	return fmt.Sprintf("%d to %d", a.Min, a.Max)
}

// OpDef is the registered definition of an op. Dialects register one per op
// in an init function of the file that defines the op.
type OpDef struct {
	// Name is "dialect.op".
	Name    string
	Summary string
	// Operands and Results give the allowed counts.
	Operands Arity
	Results  Arity
	// Regions is the exact number of regions.
	Regions int
	Traits  Trait
	Attrs   []AttrSpec
	// Verify checks op-specific rules after the generic checks (arity,
	// attribute schema, inferred result types) have passed. May be nil.
	Verify func(op *Op) error
	// Infer returns the result types implied by the operand types and
	// attributes; the verifier compares them with the written types. May be nil.
	Infer func(op *Op) ([]Type, error)
	// Eval is the reference evaluator: inputs are operand tensors, outputs
	// the result tensors. May be nil for ops without semantics (terminators).
	Eval func(op *Op, args []*Tensor) ([]*Tensor, error)
	// Symbolic marks an op whose Infer and Verify take symbolic
	// dimensions (TensorType.Sym): the verifier and Build refuse any other
	// op with a symbolic operand or result (symbolicGate).
	Symbolic bool
	// Pretty selects the short custom form `%r = name %a, %b {attrs} : types`.
	Pretty bool
	// Canonicalize lists the op's canonicalization patterns.
	Canonicalize []*Pattern
}

var ops = registry.New[*OpDef]("op")

// RegisterOp adds def to the global op registry. It panics on a duplicate
// name, which is a programming error caught at start-up.
func RegisterOp(def *OpDef) *OpDef {
	for _, s := range def.Attrs {
		if s.Default != nil && !attrHasKind(s.Default, s.Kind) {
			panic(fmt.Sprintf("graphir: %s: the default of attribute '%s' is not %s", def.Name, s.Name, kindArticle(s.Kind)))
		}
		if arr, ok := s.Default.(ArrayAttr); ok && s.Len > 0 && len(arr) != s.Len {
			panic(fmt.Sprintf("graphir: %s: the default of attribute '%s' has %d elements, not %d", def.Name, s.Name, len(arr), s.Len))
		}
	}
	ops.Add(def.Name, def)
	return def
}

// LookupOp returns the definition of name, or nil if it is not registered.
func LookupOp(name string) *OpDef {
	d, _ := ops.Lookup(name)
	return d
}

// RegisteredOps returns all registered op names, sorted.
func RegisteredOps() []string { return ops.Names() }

// Spec returns the schema entry for attribute name, or nil.
func (d *OpDef) Spec(name string) *AttrSpec {
	for i := range d.Attrs {
		if d.Attrs[i].Name == name {
			return &d.Attrs[i]
		}
	}
	return nil
}

// Default returns the schema default of attribute name (nil when the op
// has no such attribute or it has no default). A nil d has none.
func (d *OpDef) Default(name string) Attribute {
	if d == nil {
		return nil
	}
	if s := d.Spec(name); s != nil {
		return s.Default
	}
	return nil
}

// ReturnOpName is the function terminator.
const ReturnOpName = "func.return"

func init() {
	RegisterOp(&OpDef{
		Name:     ReturnOpName,
		Summary:  "returns the function's results",
		Operands: AtLeast(0),
		Results:  Exactly(0),
		Traits:   Terminator,
		Symbolic: true,
	})
}

// InferTypes runs d's Infer on op after symbolicGate. Errors: the gate's,
// Infer's.
func (d *OpDef) InferTypes(op *Op) (tys []Type, err error) {
	if d := symbolicGate(op); d != nil {
		return nil, d
	}
	defer CatchOverflow(&err, func() string { return op.Name + "'s shape arithmetic" })
	return d.Infer(op)
}

// symbolicGate refuses an op whose operands or results have symbolic
// dimensions when its definition does not take them, naming the symbols
// and how to pin them.
func symbolicGate(op *Op) *Diagnostic {
	if op.Def == nil || op.Def.Symbolic {
		return nil
	}
	if syms := OpSymbols(op); syms != nil {
		return op.Errorf("%s", NotSymbolicYet(syms))
	}
	return nil
}

// OpSymbols lists the symbols of op's operand and result types, in name
// order; nil, without allocating, when every type is static (the path of
// every op of a static model).
func OpSymbols(op *Op) []string {
	if !anySymbolic(op.Operands()) && !anySymbolic(op.Results) {
		return nil
	}
	return TypesSymbols(append(valueTypes(op.Operands()), valueTypes(op.Results)...)...)
}

// anySymbolic reports whether a tensor value among vs has a symbolic
// dimension.
func anySymbolic(vs []*Value) bool {
	for _, v := range vs {
		if v == nil {
			continue
		}
		if t := AsTensor(v.Type); t != nil && !t.IsStatic() {
			return true
		}
	}
	return false
}
