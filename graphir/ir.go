package graphir

// Value is an SSA value: an op result or a block argument.
type Value struct {
	Type Type
	// Def is the defining op of a result; nil for a block argument.
	Def *Op
	// Owner is the block of a block argument; nil for a result.
	Owner *Block
	// Index is the result number or the argument number.
	Index int
	// Loc is where a block argument was declared.
	Loc  Location
	uses []*Op
}

// Uses returns the ops that use v, one entry per operand slot.
func (v *Value) Uses() []*Op { return v.uses }

// HasUses reports whether any op uses v.
func (v *Value) HasUses() bool { return len(v.uses) > 0 }

// ParentBlock returns the block v is defined in.
func (v *Value) ParentBlock() *Block {
	if v.Def != nil {
		return v.Def.Block
	}
	return v.Owner
}

func (v *Value) addUse(op *Op) { v.uses = append(v.uses, op) }

func (v *Value) dropUse(op *Op) {
	for i, u := range v.uses {
		if u == op {
			v.uses = append(v.uses[:i], v.uses[i+1:]...)
			return
		}
	}
}

// ReplaceAllUsesWith makes every user of v use w instead.
func (v *Value) ReplaceAllUsesWith(w *Value) {
	if v == w {
		return
	}
	for len(v.uses) > 0 {
		op := v.uses[0]
		for i, o := range op.operands {
			if o == v {
				op.SetOperand(i, w)
			}
		}
	}
}

// Op is one operation: a name, operands, results, attributes and regions.
type Op struct {
	Name string
	// Def is the registered definition, nil for an unregistered op.
	Def      *OpDef
	operands []*Value
	Results  []*Value
	Attrs    DictAttr
	Regions  []*Region
	Loc      Location
	// Block is the enclosing block, nil while detached.
	Block      *Block
	prev, next *Op
}

// NewOp creates a detached op. Registered ops get their Def looked up.
// Result values are created from resultTypes.
func NewOp(name string, operands []*Value, resultTypes []Type, attrs DictAttr, loc Location) *Op {
	op := &Op{Name: name, Def: LookupOp(name), Attrs: attrs, Loc: loc}
	op.SetOperands(operands)
	op.Results = make([]*Value, len(resultTypes))
	for i, t := range resultTypes {
		op.Results[i] = &Value{Type: t, Def: op, Index: i}
	}
	return op
}

// Operands returns the operand list; do not modify it in place, use SetOperand.
func (op *Op) Operands() []*Value { return op.operands }

// Operand returns operand i.
func (op *Op) Operand(i int) *Value { return op.operands[i] }

// NumOperands is the operand count.
func (op *Op) NumOperands() int { return len(op.operands) }

// Result returns result i.
func (op *Op) Result(i int) *Value { return op.Results[i] }

// SetOperand replaces operand i, keeping use lists up to date.
func (op *Op) SetOperand(i int, v *Value) {
	if old := op.operands[i]; old != nil {
		old.dropUse(op)
	}
	op.operands[i] = v
	if v != nil {
		v.addUse(op)
	}
}

// SetOperands replaces the whole operand list.
func (op *Op) SetOperands(vs []*Value) {
	for _, o := range op.operands {
		if o != nil {
			o.dropUse(op)
		}
	}
	op.operands = append([]*Value(nil), vs...)
	for _, v := range op.operands {
		if v != nil {
			v.addUse(op)
		}
	}
}

// Attr returns the attribute called name, or nil.
func (op *Op) Attr(name string) Attribute { return op.Attrs.Get(name) }

// SetAttr sets attribute name.
func (op *Op) SetAttr(name string, v Attribute) { op.Attrs = op.Attrs.Set(name, v) }

// Next returns the op after op in its block, or nil.
func (op *Op) Next() *Op { return op.next }

// Prev returns the op before op in its block, or nil.
func (op *Op) Prev() *Op { return op.prev }

// Dialect returns the name's prefix before the first dot ("graph" for graph.relu).
func (op *Op) Dialect() string {
	for i := 0; i < len(op.Name); i++ {
		if op.Name[i] == '.' {
			return op.Name[:i]
		}
	}
	return ""
}

// HasTrait reports whether op's definition carries trait t.
func (op *Op) HasTrait(t Trait) bool { return op.Def != nil && op.Def.Traits&t != 0 }

// IsUnused reports whether no result of op has a use.
func (op *Op) IsUnused() bool {
	for _, r := range op.Results {
		if r.HasUses() {
			return false
		}
	}
	return true
}

// Erase unlinks op from its block and drops its operand uses, recursively
// for nested ops. Its results must be unused.
func (op *Op) Erase() {
	if op.Block != nil {
		op.Block.unlink(op)
	}
	op.dropAllReferences()
}

func (op *Op) dropAllReferences() {
	for i := range op.operands {
		op.SetOperand(i, nil)
	}
	for _, r := range op.Regions {
		for _, b := range r.Blocks {
			for o := b.first; o != nil; o = o.next {
				o.dropAllReferences()
			}
		}
	}
}

// ParentOp returns the op whose region holds op, or nil at function level.
func (op *Op) ParentOp() *Op {
	if op.Block == nil || op.Block.Region == nil {
		return nil
	}
	return op.Block.Region.Parent
}

// Walk calls fn on op and every op nested in its regions, in pre-order.
func (op *Op) Walk(fn func(*Op)) {
	fn(op)
	for _, r := range op.Regions {
		r.Walk(fn)
	}
}

// Block is a list of ops with arguments.
type Block struct {
	Args        []*Value
	Region      *Region
	first, last *Op
	n           int
}

// NewBlock returns an empty block with arguments of the given types.
func NewBlock(argTypes ...Type) *Block {
	b := &Block{}
	for _, t := range argTypes {
		b.AddArg(t, Location{})
	}
	return b
}

// AddArg appends a block argument.
func (b *Block) AddArg(t Type, loc Location) *Value {
	v := &Value{Type: t, Owner: b, Index: len(b.Args), Loc: loc}
	b.Args = append(b.Args, v)
	return v
}

// First returns the first op, or nil.
func (b *Block) First() *Op { return b.first }

// Last returns the last op (the terminator in a verified block), or nil.
func (b *Block) Last() *Op { return b.last }

// Len is the number of ops.
func (b *Block) Len() int { return b.n }

// Ops returns a snapshot of the ops, safe to mutate the block while iterating.
func (b *Block) Ops() []*Op {
	ops := make([]*Op, 0, b.n)
	for o := b.first; o != nil; o = o.next {
		ops = append(ops, o)
	}
	return ops
}

// Append adds op at the end of b.
func (b *Block) Append(op *Op) { b.InsertBefore(nil, op) }

// InsertBefore inserts op before pos (at the end when pos is nil).
func (b *Block) InsertBefore(pos, op *Op) {
	if op.Block != nil {
		op.Block.unlink(op)
	}
	op.Block = b
	if pos == nil {
		op.prev, op.next = b.last, nil
		if b.last != nil {
			b.last.next = op
		} else {
			b.first = op
		}
		b.last = op
	} else {
		op.prev, op.next = pos.prev, pos
		if pos.prev != nil {
			pos.prev.next = op
		} else {
			b.first = op
		}
		pos.prev = op
	}
	b.n++
}

// InsertAfter inserts op after pos.
func (b *Block) InsertAfter(pos, op *Op) { b.InsertBefore(pos.next, op) }

func (b *Block) unlink(op *Op) {
	if op.prev != nil {
		op.prev.next = op.next
	} else {
		b.first = op.next
	}
	if op.next != nil {
		op.next.prev = op.prev
	} else {
		b.last = op.prev
	}
	op.prev, op.next, op.Block = nil, nil, nil
	b.n--
}

// Walk calls fn on every op of b and their nested ops, in pre-order.
func (b *Block) Walk(fn func(*Op)) {
	for o := b.first; o != nil; {
		next := o.next
		o.Walk(fn)
		o = next
	}
}

// Region is an ordered list of blocks owned by an op (or a function body).
type Region struct {
	Blocks []*Block
	// Parent is the owning op; nil for a function body.
	Parent *Op
}

// NewRegion returns a region holding the given blocks.
func NewRegion(blocks ...*Block) *Region {
	r := &Region{}
	for _, b := range blocks {
		r.AddBlock(b)
	}
	return r
}

// AddBlock appends b to r.
func (r *Region) AddBlock(b *Block) {
	b.Region = r
	r.Blocks = append(r.Blocks, b)
}

// Entry returns the first block, or nil.
func (r *Region) Entry() *Block {
	if len(r.Blocks) == 0 {
		return nil
	}
	return r.Blocks[0]
}

// Walk calls fn on every op in r, in pre-order.
func (r *Region) Walk(fn func(*Op)) {
	for _, b := range r.Blocks {
		b.Walk(fn)
	}
}

// AddRegion attaches r to op.
func (op *Op) AddRegion(r *Region) {
	r.Parent = op
	op.Regions = append(op.Regions, r)
}

// Func is a func.func: a named function whose body is a single-block region
// whose block arguments are the function's parameters.
type Func struct {
	Name string
	Type *FunctionType
	// Private is true for `func.func private`.
	Private bool
	Attrs   DictAttr
	Body    *Region
	Loc     Location
	Module  *Module
}

// NewFunc creates a function with an entry block whose arguments match ty.Inputs.
func NewFunc(name string, ty *FunctionType, loc Location) *Func {
	f := &Func{Name: name, Type: ty, Loc: loc, Body: NewRegion(NewBlock(ty.Inputs...))}
	return f
}

// Entry returns the function's entry block.
func (f *Func) Entry() *Block { return f.Body.Entry() }

// Args returns the function parameters.
func (f *Func) Args() []*Value { return f.Entry().Args }

// Walk calls fn on every op of the function in pre-order.
func (f *Func) Walk(fn func(*Op)) { f.Body.Walk(fn) }

// Module is a translation unit: a list of functions.
type Module struct {
	Name  string
	Attrs DictAttr
	Funcs []*Func
	Loc   Location
}

// AddFunc appends f to m.
func (m *Module) AddFunc(f *Func) {
	f.Module = m
	m.Funcs = append(m.Funcs, f)
}

// Lookup returns the function named name, or nil.
func (m *Module) Lookup(name string) *Func {
	for _, f := range m.Funcs {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// Walk calls fn on every op of every function.
func (m *Module) Walk(fn func(*Op)) {
	for _, f := range m.Funcs {
		f.Walk(fn)
	}
}
