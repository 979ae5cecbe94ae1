package tensorir

// Stmt is a statement. Statements carry the source location they were
// parsed from (or were created for), used by diagnostics. Like
// expressions, statements are treated as immutable by passes.
type Stmt interface {
	Location() Location
	stmtNode()
}

// ForKind is the execution kind of a loop.
type ForKind uint8

// Loop kinds (TVM's ForKind). The interpreter runs every kind serially;
// the kinds are contracts for code generation.
const (
	Serial        ForKind = iota // one iteration after another
	Parallel                     // iterations on CPU threads
	Vectorized                   // iterations as SIMD lanes; constant extent
	Unrolled                     // fully unrolled; constant extent
	ThreadBinding                // iterations on GPU threads (For.Thread)
)

var forKindNames = [...]string{"serial", "parallel", "vectorized", "unrolled", "thread_binding"}

func (k ForKind) String() string {
	if int(k) < len(forKindNames) {
		return forKindNames[k]
	}
	return "invalid"
}

// ThreadTags are the valid thread tags of a ThreadBinding loop.
var ThreadTags = map[string]bool{
	"blockIdx.x": true, "blockIdx.y": true, "blockIdx.z": true,
	"threadIdx.x": true, "threadIdx.y": true, "threadIdx.z": true,
	"vthread": true,
}

// For is a loop: Var runs over [Min, Min+Extent) in steps of 1. Var's
// dtype is that of Min and Extent. Thread is the tag of a ThreadBinding
// loop (blockIdx.x/y/z, threadIdx.x/y/z, vthread).
type For struct {
	Var         *Var
	Min, Extent Expr
	Kind        ForKind
	Thread      string
	Annotations Attrs
	Body        Stmt
	Loc         Location
}

// IterKind is the kind of a block iteration variable.
type IterKind uint8

// Iteration-variable kinds (TVM's kDataPar and kCommReduce).
const (
	Spatial IterKind = iota // each value writes a distinct output element
	Reduce                  // values accumulate into the same elements
)

func (k IterKind) String() string {
	if k <= Reduce {
		return [...]string{"spatial", "reduce"}[k]
	}
	return "invalid"
}

// IterVar is a block iteration variable with its domain [Dom.Min,
// Dom.Min+Dom.Extent).
type IterVar struct {
	Var  *Var
	Dom  Range
	Kind IterKind
}

// Block is TVM's (S)Block: a unit of computation with named iteration
// variables, the buffer regions it reads and writes, an optional Init run
// before the first iteration of its reduce variables, buffers allocated
// for its lifetime, annotations and a body. A Block appears in a body
// only inside a BlockRealize, which binds its iteration variables.
//
// A reduce block (one with a Reduce iteration variable) without Init
// accumulates into the prior contents of its outputs.
type Block struct {
	Name        string
	IterVars    []*IterVar
	Reads       []BufferRegion
	Writes      []BufferRegion
	Init        Stmt
	Allocs      []*Buffer
	Annotations Attrs
	Body        Stmt
	Loc         Location
}

// BlockRealize executes Block with its iteration variables bound to
// Values (one per IterVar, expressions of the enclosing loop variables)
// when Predicate holds (nil: always).
type BlockRealize struct {
	Values    []Expr
	Predicate Expr
	Block     *Block
	Loc       Location
}

// BufferStore writes Value to Buffer at Indices; Value's dtype is the
// buffer's.
type BufferStore struct {
	Buffer  *Buffer
	Value   Expr
	Indices []Expr
	Loc     Location
}

// Allocate allocates Buffer (of its scope, typically local or shared)
// for the duration of Body. Its contents start undefined (the interpreter
// zero-fills them).
type Allocate struct {
	Buffer *Buffer
	Body   Stmt
	Loc    Location
}

// IfThenElse runs Then when Cond (i1) holds, else Else (nil: nothing).
type IfThenElse struct {
	Cond       Expr
	Then, Else Stmt
	Loc        Location
}

// LetStmt binds Var to Value in Body; Var's dtype is Value's.
type LetStmt struct {
	Var   *Var
	Value Expr
	Body  Stmt
	Loc   Location
}

// SeqStmt runs Stmts in order.
type SeqStmt struct {
	Stmts []Stmt
	Loc   Location
}

// Evaluate evaluates Value for its effects (none today; TVM uses it for
// calls with side effects) and discards the result.
type Evaluate struct {
	Value Expr
	Loc   Location
}

// Barrier is a thread-block barrier (CUDA's __syncthreads, TVM's
// tvm_storage_sync("shared")): every thread of the block waits until all
// reach it, and shared-memory writes before it are visible to every
// thread after it. Only GPU kernels hold barriers (the thread-sync pass
// inserts them); the interpreter runs threads one after another, where a
// barrier has no effect.
type Barrier struct {
	Loc Location
}

func (s *Barrier) Location() Location { return s.Loc }
func (*Barrier) stmtNode()            {}

func (s *For) Location() Location          { return s.Loc }
func (s *Block) Location() Location        { return s.Loc }
func (s *BlockRealize) Location() Location { return s.Loc }
func (s *BufferStore) Location() Location  { return s.Loc }
func (s *Allocate) Location() Location     { return s.Loc }
func (s *IfThenElse) Location() Location   { return s.Loc }
func (s *LetStmt) Location() Location      { return s.Loc }
func (s *SeqStmt) Location() Location      { return s.Loc }
func (s *Evaluate) Location() Location     { return s.Loc }

func (*For) stmtNode()          {}
func (*Block) stmtNode()        {}
func (*BlockRealize) stmtNode() {}
func (*BufferStore) stmtNode()  {}
func (*Allocate) stmtNode()     {}
func (*IfThenElse) stmtNode()   {}
func (*LetStmt) stmtNode()      {}
func (*SeqStmt) stmtNode()      {}
func (*Evaluate) stmtNode()     {}

// Seq makes a sequence, flattening nested SeqStmts; one statement is
// returned as is.
func Seq(stmts ...Stmt) Stmt {
	var out []Stmt
	for _, s := range stmts {
		if q, ok := s.(*SeqStmt); ok {
			out = append(out, q.Stmts...)
		} else if s != nil {
			out = append(out, s)
		}
	}
	if len(out) == 1 {
		return out[0]
	}
	return &SeqStmt{Stmts: out}
}

// VisitStmt calls fn on s and every statement below it in pre-order
// (a BlockRealize's Block, a block's init before its body); fn returning
// false skips the statement's children.
func VisitStmt(s Stmt, fn func(Stmt) bool) {
	if s == nil || !fn(s) {
		return
	}
	switch x := s.(type) {
	case *SeqStmt:
		for _, c := range x.Stmts {
			VisitStmt(c, fn)
		}
	case *For:
		VisitStmt(x.Body, fn)
	case *BlockRealize:
		if x.Block != nil {
			VisitStmt(x.Block, fn)
		}
	case *Block:
		VisitStmt(x.Init, fn)
		VisitStmt(x.Body, fn)
	case *Allocate:
		VisitStmt(x.Body, fn)
	case *IfThenElse:
		VisitStmt(x.Then, fn)
		VisitStmt(x.Else, fn)
	case *LetStmt:
		VisitStmt(x.Body, fn)
	}
}
