package graphir

import "fmt"

// VerifyOptions tune the verifier.
type VerifyOptions struct {
	// AllowUnregistered accepts ops without a registered definition.
	AllowUnregistered bool
	// MaxErrors stops after this many diagnostics (0: 100).
	MaxErrors int
}

// Verify checks m with default options; see VerifyWith.
func Verify(m *Module) error { return VerifyWith(m, VerifyOptions{}) }

// VerifyWith checks structural rules (unique function names, function
// signatures, terminators, SSA dominance, isolated regions) and, for each
// registered op, its operand/result/region counts, attribute schema,
// inferred result types and op-specific verifier. It returns every error
// found (up to MaxErrors) as Diagnostics.
func VerifyWith(m *Module, opts VerifyOptions) error {
	if opts.MaxErrors == 0 {
		opts.MaxErrors = 100
	}
	v := &verifier{opts: opts, visible: map[*Value]bool{}}
	seen := map[string]*Func{}
	for _, f := range m.Funcs {
		if prev, dup := seen[f.Name]; dup {
			v.add(Errorf(f.Loc, "redefinition of symbol '@%s'", f.Name).AddNote(prev.Loc, "previous definition here"))
			continue
		}
		seen[f.Name] = f
		v.fn(f)
		if v.full() {
			break
		}
	}
	return v.diags.Err()
}

// VerifyFunc checks one function as VerifyWith checks each of a module's
// (function calls into other functions are not resolved).
func VerifyFunc(f *Func) error {
	v := &verifier{opts: VerifyOptions{MaxErrors: 100}, visible: map[*Value]bool{}}
	v.fn(f)
	return v.diags.Err()
}

type verifier struct {
	opts    VerifyOptions
	diags   Diagnostics
	visible map[*Value]bool
}

func (v *verifier) add(d *Diagnostic) {
	if !v.full() {
		v.diags = append(v.diags, d)
	}
}

func (v *verifier) full() bool { return len(v.diags) >= v.opts.MaxErrors }

func (v *verifier) fn(f *Func) {
	if len(f.Body.Blocks) != 1 {
		v.add(Errorf(f.Loc, "function '@%s' must have exactly one block, has %d", f.Name, len(f.Body.Blocks)))
		return
	}
	entry := f.Entry()
	if len(entry.Args) != len(f.Type.Inputs) {
		v.add(Errorf(f.Loc, "function '@%s' has %d arguments but its type has %d inputs", f.Name, len(entry.Args), len(f.Type.Inputs)))
		return
	}
	for i, a := range entry.Args {
		if !a.Type.Equal(f.Type.Inputs[i]) {
			v.add(Errorf(f.Loc, "type of argument #%d of '@%s' is %s, but the function type says %s", i, f.Name, a.Type, f.Type.Inputs[i]))
		}
	}
	clear(v.visible)
	v.block(entry, false)
	last := entry.Last()
	if last == nil || last.Name != ReturnOpName {
		loc := f.Loc
		if last != nil {
			loc = last.Loc
		}
		v.add(Errorf(loc, "function '@%s' must end with 'func.return'", f.Name))
		return
	}
	got := valueTypes(last.Operands())
	if !TypesEqual(got, f.Type.Results) {
		v.add(last.Errorf("has types (%s) but the enclosing function '@%s' returns (%s)", typeListString(got), f.Name, typeListString(f.Type.Results)))
	}
}

func typeListString(ts []Type) string {
	s := ""
	for i, t := range ts {
		if i > 0 {
			s += ", "
		}
		s += t.String()
	}
	return s
}

// block verifies the ops of b; values it defines are visible to later ops
// and to nested regions that are not isolated from above.
func (v *verifier) block(b *Block, needTerminator bool) {
	var added []*Value
	for _, a := range b.Args {
		v.visible[a] = true
		added = append(added, a)
	}
	for op := b.First(); op != nil && !v.full(); op = op.Next() {
		if op.HasTrait(Terminator) && op.Next() != nil {
			v.add(op.Errorf("must be the last operation in its block"))
		}
		v.op(op)
		for _, r := range op.Results {
			v.visible[r] = true
			added = append(added, r)
		}
	}
	if needTerminator && (b.Last() == nil || !b.Last().HasTrait(Terminator)) {
		loc := Location{}
		if b.Region != nil && b.Region.Parent != nil {
			loc = b.Region.Parent.Loc
		}
		if b.Last() != nil {
			loc = b.Last().Loc
		}
		v.add(Errorf(loc, "block must end with a terminator operation"))
	}
	for _, a := range added {
		delete(v.visible, a)
	}
}

func (v *verifier) op(op *Op) {
	for i, o := range op.Operands() {
		switch {
		case o == nil:
			v.add(op.Errorf("operand #%d is null", i))
			return
		case !v.visible[o]:
			d := op.Errorf("operand #%d does not dominate this use", i)
			if o.Def != nil {
				d.AddNote(o.Def.Loc, "operand defined here")
			}
			v.add(d)
			return
		}
	}
	if op.Def == nil {
		if !v.opts.AllowUnregistered && op.Name != ReturnOpName {
			v.add(op.Errorf("is not registered (unknown dialect or op name)"))
		}
		v.regions(op)
		return
	}
	if d := checkDef(op); d != nil {
		v.add(d)
		return
	}
	v.regions(op)
	if v.full() {
		return
	}
	if d := checkSemantics(op); d != nil {
		v.add(d)
	}
}

// VerifyOp checks one registered op on its own: the generic schema checks
// (arity, attribute kinds, regions), then its inferred result types
// against the written ones and its Verify; regions and the dominance of
// its operands are not checked. Passes that rewrite op by op (such as
// legalization) call it so that a rule only ever sees a well-formed op.
// Errors: the first diagnostic, located at op; an unregistered op.
func VerifyOp(op *Op) error {
	if op.Def == nil {
		return op.Errorf("is not registered (unknown dialect or op name)")
	}
	if d := checkDef(op); d != nil {
		return d
	}
	if d := checkSemantics(op); d != nil {
		return d
	}
	return nil
}

// checkSemantics compares op's inferred result types with the written
// ones and runs its Verify.
func checkSemantics(op *Op) (diag *Diagnostic) {
	if d := symbolicGate(op); d != nil {
		return d
	}
	var overflow error
	defer func() {
		if overflow != nil {
			diag = op.Errorf("%v", overflow)
		}
	}()
	defer CatchOverflow(&overflow, func() string { return "its shape arithmetic" })
	for i, r := range op.Results {
		if err := validType(r.Type); err != nil {
			return op.Errorf("result #%d: %v", i, err)
		}
	}
	if op.Def.Infer != nil {
		tys, err := op.Def.Infer(op)
		if err != nil {
			return asOpDiag(op, err)
		}
		if !TypesEqual(tys, valueTypes(op.Results)) {
			return op.Errorf("inferred result types (%s) do not match the written types (%s)", typeListString(tys), typeListString(valueTypes(op.Results)))
		}
	}
	if op.Def.Verify != nil {
		if err := op.Def.Verify(op); err != nil {
			return asOpDiag(op, err)
		}
	}
	return nil
}

func (v *verifier) regions(op *Op) {
	isolated := op.HasTrait(IsolatedFromAbove)
	var saved map[*Value]bool
	if isolated {
		saved = v.visible
		v.visible = map[*Value]bool{}
	}
	for _, r := range op.Regions {
		for _, b := range r.Blocks {
			v.block(b, op.Def != nil)
		}
	}
	if isolated {
		v.visible = saved
	}
}

func asOpDiag(op *Op, err error) *Diagnostic {
	if d, ok := err.(*Diagnostic); ok {
		return d
	}
	return op.Errorf("%v", err)
}

// checkDef applies the generic schema checks of a registered op.
func checkDef(op *Op) *Diagnostic {
	d := op.Def
	if !d.Operands.allows(op.NumOperands()) {
		return op.Errorf("expects %s operands, got %d", d.Operands, op.NumOperands())
	}
	if !d.Results.allows(len(op.Results)) {
		return op.Errorf("expects %s results, got %d", d.Results, len(op.Results))
	}
	if len(op.Regions) != d.Regions {
		return op.Errorf("expects %d regions, got %d", d.Regions, len(op.Regions))
	}
	if d.Traits&SameOperandsAndResultType != 0 {
		if uniformType(op) == nil {
			return op.Errorf("requires the same type for all operands and results")
		}
	}
	for _, na := range op.Attrs {
		if d.Spec(na.Name) == nil && !isDiscardable(na.Name) {
			return op.Errorf("does not accept attribute '%s'", na.Name)
		}
		if dense, ok := na.Value.(*DenseElementsAttr); ok && !dense.wellFormed() {
			return op.Errorf("attribute '%s' holds %d elements, but %s has %d", na.Name, dense.Len(), dense.Type, dense.Type.NumElements())
		}
	}
	for i := range d.Attrs {
		if err := checkAttr(op, &d.Attrs[i]); err != nil {
			return err
		}
	}
	return nil
}

// isDiscardable reports whether an attribute name is dialect-prefixed
// ("tessera.note"); such attributes are allowed on any op, as in MLIR.
func isDiscardable(name string) bool {
	for i := 0; i < len(name); i++ {
		if name[i] == '.' {
			return true
		}
	}
	return false
}

func checkAttr(op *Op, s *AttrSpec) *Diagnostic {
	a := op.Attr(s.Name)
	if a == nil {
		if s.Required {
			return op.Errorf("requires attribute '%s'", s.Name)
		}
		return nil
	}
	if !attrHasKind(a, s.Kind) {
		return op.Errorf("attribute '%s' must be %s, got %s", s.Name, kindArticle(s.Kind), FormatAttr(a))
	}
	if s.Kind == KindEnum {
		for _, e := range s.Enum {
			if string(a.(StringAttr)) == e {
				return nil
			}
		}
		return op.Errorf("attribute '%s' must be one of %q, got %s", s.Name, s.Enum, FormatAttr(a))
	}
	if arr, ok := a.(ArrayAttr); ok && s.Len > 0 && len(arr) != s.Len {
		return op.Errorf("attribute '%s' must have %d elements, got %d", s.Name, s.Len, len(arr))
	}
	return nil
}

func kindArticle(k AttrKind) string {
	switch k {
	case KindInt, KindArray, KindIntArray:
		return "an " + k.String()
	}
	return "a " + k.String()
}

func attrHasKind(a Attribute, k AttrKind) bool {
	switch k {
	case KindAny:
		return true
	case KindInt:
		_, ok := a.(*IntegerAttr)
		return ok
	case KindFloat:
		switch a.(type) {
		case *FloatAttr, *IntegerAttr:
			return true
		}
		return false
	case KindString, KindEnum:
		_, ok := a.(StringAttr)
		return ok
	case KindBool:
		_, ok := a.(BoolAttr)
		return ok
	case KindIntArray, KindFloatArray:
		arr, ok := a.(ArrayAttr)
		if !ok {
			return false
		}
		for _, e := range arr {
			if !attrHasKind(e, map[AttrKind]AttrKind{KindIntArray: KindInt, KindFloatArray: KindFloat}[k]) {
				return false
			}
		}
		return true
	case KindArray:
		_, ok := a.(ArrayAttr)
		return ok
	case KindDense:
		_, ok := a.(*DenseElementsAttr)
		return ok
	case KindType:
		_, ok := a.(*TypeAttr)
		return ok
	case KindDict:
		_, ok := a.(DictAttr)
		return ok
	case KindUnit:
		_, ok := a.(UnitAttr)
		return ok
	}
	return false
}

// TensorOperand returns operand i's tensor type, or an error diagnostic
// naming the operand when it is not a tensor.
func (op *Op) TensorOperand(i int) (*TensorType, error) {
	t, ok := op.Operand(i).Type.(*TensorType)
	if !ok {
		return nil, op.Errorf("operand #%d must be a tensor, got %s", i, op.Operand(i).Type)
	}
	return t, nil
}

// validType refuses a tensor type with a negative static dimension or a
// Sym list that does not match its Shape (types built through the API;
// the parser refuses them).
func validType(t Type) error {
	tt := AsTensor(t)
	if tt == nil {
		return nil
	}
	if tt.Sym != nil && len(tt.Sym) != len(tt.Shape) {
		return fmt.Errorf("type %s has %d symbolic entries for rank %d", tt, len(tt.Sym), len(tt.Shape))
	}
	for i, d := range tt.Shape {
		sym := tt.Sym != nil && tt.Sym[i] != nil
		if sym != (d == Dynamic) || !sym && d < 0 {
			return fmt.Errorf("type %s: dimension %d is %d", tt, i, d)
		}
	}
	return nil
}
