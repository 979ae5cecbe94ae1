package graphir

import "fmt"

// Pattern is a rewrite rooted at ops named Root ("" matches any op).
// Rewrite inspects op and, if it applies, mutates the IR through rw and
// returns true. Patterns follow MLIR's RewritePattern: they must only
// change op, ops they create, and uses of op's results.
type Pattern struct {
	Name    string
	Root    string
	Benefit int
	Rewrite func(op *Op, rw *Rewriter) bool
}

// Rewriter creates and replaces ops on behalf of patterns and tells the
// greedy driver which ops changed.
type Rewriter struct {
	worklist []*Op
	inList   map[*Op]bool
	erased   map[*Op]bool
}

func newRewriter() *Rewriter {
	return &Rewriter{inList: map[*Op]bool{}, erased: map[*Op]bool{}}
}

func (rw *Rewriter) push(op *Op) {
	if op != nil && !rw.inList[op] && !rw.erased[op] {
		rw.inList[op] = true
		rw.worklist = append(rw.worklist, op)
	}
}

func (rw *Rewriter) pushUsers(v *Value) {
	for _, u := range v.Uses() {
		rw.push(u)
	}
}

// Create builds an op named name before pos, inferring its result types
// from its definition's Infer, and queues it for further rewriting.
func (rw *Rewriter) Create(pos *Op, name string, operands []*Value, attrs DictAttr) (*Op, error) {
	op, err := Build(name, operands, attrs, pos.Loc)
	if err != nil {
		return nil, err
	}
	pos.Block.InsertBefore(pos, op)
	rw.push(op)
	return op, nil
}

// Insert places a detached op before pos and queues it.
func (rw *Rewriter) Insert(pos, op *Op) {
	pos.Block.InsertBefore(pos, op)
	rw.push(op)
}

// ReplaceOp replaces every use of op's results with vals and erases op.
func (rw *Rewriter) ReplaceOp(op *Op, vals ...*Value) {
	if len(vals) != len(op.Results) {
		panic(fmt.Sprintf("graphir: ReplaceOp of %s with %d values for %d results", op.Name, len(vals), len(op.Results)))
	}
	for i, r := range op.Results {
		rw.pushUsers(r)
		r.ReplaceAllUsesWith(vals[i])
	}
	rw.EraseOp(op)
}

// EraseOp erases an op whose results are unused; operand producers are
// queued since they may now be dead.
func (rw *Rewriter) EraseOp(op *Op) {
	for _, o := range op.Operands() {
		if o != nil && o.Def != nil {
			rw.push(o.Def)
		}
	}
	op.Walk(func(o *Op) { rw.erased[o] = true })
	op.Erase()
}

// Modified tells the driver op was changed in place.
func (rw *Rewriter) Modified(op *Op) {
	rw.push(op)
	for _, r := range op.Results {
		rw.pushUsers(r)
	}
}

// Build creates a detached op, computing its result types with the
// registered Infer function. Errors: unknown op, no Infer, inference failure.
func Build(name string, operands []*Value, attrs DictAttr, loc Location) (*Op, error) {
	def := LookupOp(name)
	if def == nil {
		return nil, Errorf(loc, "cannot build unregistered op '%s'", name)
	}
	if def.Infer == nil {
		return nil, Errorf(loc, "op '%s' has no result type inference", name)
	}
	if !def.Operands.allows(len(operands)) {
		return nil, Errorf(loc, "'%s' op expects %s operands, got %d", name, def.Operands, len(operands))
	}
	op := NewOp(name, operands, nil, attrs, loc)
	tys, err := def.InferTypes(op)
	if err != nil {
		op.SetOperands(nil)
		return nil, err
	}
	for i, t := range tys {
		op.Results = append(op.Results, &Value{Type: t, Def: op, Index: i})
	}
	return op, nil
}

// MaxRewriteIterations bounds the greedy driver so a cycle of patterns
// cannot loop forever: each op may be rewritten at most this many times on average.
const MaxRewriteIterations = 64

// ApplyPatternsGreedily applies patterns to every op of f (nested ops too)
// until none applies, removing pure ops that become unused, as MLIR's
// greedy pattern rewrite driver does. Patterns with higher Benefit are tried first.
// It returns whether anything changed, and an error if the rewrite did not
// converge within MaxRewriteIterations × (ops count) steps.
func ApplyPatternsGreedily(f *Func, patterns []*Pattern) (bool, error) {
	byRoot := map[string][]*Pattern{}
	for _, p := range sortedByBenefit(patterns) {
		byRoot[p.Root] = append(byRoot[p.Root], p)
	}
	rw := newRewriter()
	f.Walk(rw.push)
	changed := false
	budget := MaxRewriteIterations * (len(rw.worklist) + 16)
	for len(rw.worklist) > 0 {
		if budget--; budget < 0 {
			return changed, Errorf(f.Loc, "pattern rewriting of @%s did not converge", f.Name)
		}
		op := rw.worklist[len(rw.worklist)-1]
		rw.worklist = rw.worklist[:len(rw.worklist)-1]
		delete(rw.inList, op)
		if rw.erased[op] || op.Block == nil {
			continue
		}
		if isTriviallyDead(op) {
			rw.EraseOp(op)
			changed = true
			continue
		}
		for _, p := range append(byRoot[op.Name], byRoot[""]...) {
			if p.Rewrite(op, rw) {
				changed = true
				break
			}
		}
	}
	return changed, nil
}

func sortedByBenefit(ps []*Pattern) []*Pattern {
	out := append([]*Pattern(nil), ps...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Benefit > out[j-1].Benefit; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// isTriviallyDead reports whether op is pure, not a terminator and unused.
func isTriviallyDead(op *Op) bool {
	return op.HasTrait(Pure) && !op.HasTrait(Terminator) && op.IsUnused()
}

// CreateTyped builds an op with explicit result types before pos (for ops
// whose result type is not implied by operands, e.g. reshape) and queues it.
func (rw *Rewriter) CreateTyped(pos *Op, name string, operands []*Value, resultTypes []Type, attrs DictAttr) *Op {
	op := NewOp(name, operands, resultTypes, attrs, pos.Loc)
	rw.Insert(pos, op)
	return op
}
