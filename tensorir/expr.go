package tensorir

// Expr is a scalar (or vector) expression. Expression nodes are immutable:
// once built, a node and everything it points to is never changed, so
// nodes may be shared between trees and functions; passes build new nodes
// (TVM's PrimExpr has the same contract). Vars and Buffers are compared by
// identity (pointer), everything else structurally (see Equal).
type Expr interface {
	// DType is the type of the value the expression computes.
	DType() DType
	exprNode()
}

// IntImm is an integer (or i1) constant. Its Value is kept wrapped to the
// dtype's width (two's complement), and is 0 or 1 for i1.
type IntImm struct {
	Type  DType
	Value int64
}

// FloatImm is a floating-point constant. Its Value is exactly
// representable in Type (Float rounds to nearest even).
type FloatImm struct {
	Type  DType
	Value float64
}

// Var is a scalar variable: a loop variable, a block iteration variable, a
// let-bound variable or a scalar function parameter. Vars are compared by
// identity; Name is for printing only.
type Var struct {
	Name string
	Type DType
}

// BinOp is the operator of a Binary expression.
type BinOp uint8

// Binary operators. Div is true division and is defined for floats only;
// integers divide with FloorDiv and FloorMod (rounding toward −∞, as TVM's
// floordiv/floormod; FloorMod's result has the sign of the divisor).
// Comparisons produce i1 (with the operands' lanes); And, Or take i1.
// Shl and Shr shift integers (not i1) by the second operand, read as
// unsigned: amounts of the width or more give 0 (Shr of a negative signed
// value: -1), not LLVM's poison. On unsigned dtypes comparisons, Min, Max,
// FloorDiv and FloorMod are unsigned (see DType.IsUnsigned).
const (
	OpAdd BinOp = iota
	OpSub
	OpMul
	OpDiv
	OpFloorDiv
	OpFloorMod
	OpMin
	OpMax
	OpEQ
	OpNE
	OpLT
	OpLE
	OpGT
	OpGE
	OpAnd
	OpOr
	OpShl // a << b; amounts ≥ the width (b as unsigned) give 0
	OpShr // a >> b: logical for unsigned dtypes, arithmetic (sign fill) for signed
)

var binOpNames = [...]string{"add", "sub", "mul", "div", "floordiv", "floormod", "min", "max",
	"eq", "ne", "lt", "le", "gt", "ge", "and", "or", "shl", "shr"}

func (op BinOp) String() string {
	if int(op) < len(binOpNames) {
		return binOpNames[op]
	}
	return "invalid"
}

// IsCompare reports whether op is one of EQ NE LT LE GT GE.
func (op BinOp) IsCompare() bool { return op >= OpEQ && op <= OpGE }

// IsLogic reports whether op is And or Or.
func (op BinOp) IsLogic() bool { return op == OpAnd || op == OpOr }

// Binary is A op B. Both operands have the same dtype (checked by Verify).
type Binary struct {
	Op   BinOp
	A, B Expr
}

// Not is logical negation of an i1 value.
type Not struct{ X Expr }

// Select is Cond ? T : F, evaluating both arms (TVM's Select).
type Select struct{ Cond, T, F Expr }

// Cast converts X to Type: float→int truncates toward zero, int→int wraps,
// any→float rounds to nearest even, int→i1 tests for non-zero.
type Cast struct {
	Type DType
	X    Expr
}

// Call is an intrinsic call; its dtype is that of its first argument.
// Known intrinsics are listed in Intrinsics.
type Call struct {
	Name string
	Args []Expr
}

// BufferLoad reads Buffer at Indices (one index expression per dimension).
type BufferLoad struct {
	Buffer  *Buffer
	Indices []Expr
}

// Intrinsic describes a math intrinsic. All take float arguments except
// abs, which also accepts integers.
type Intrinsic struct {
	Arity   int
	IntOK   bool
	Compute func(args []float64) float64
}

func (e *IntImm) DType() DType   { return e.Type }
func (e *FloatImm) DType() DType { return e.Type }
func (e *Var) DType() DType      { return e.Type }
func (e *Not) DType() DType      { return dtypeOf(e.X) }
func (e *Select) DType() DType   { return dtypeOf(e.T) }
func (e *Cast) DType() DType     { return e.Type }

// DType of a load is its buffer's element dtype.
func (e *BufferLoad) DType() DType {
	if e.Buffer == nil {
		return DType{}
	}
	return e.Buffer.DType
}

// dtypeOf is e.DType(), or the invalid DType for a missing operand (only
// possible in IR built incorrectly through the API; Verify reports it).
func dtypeOf(e Expr) DType {
	if e == nil {
		return DType{}
	}
	return e.DType()
}

// DType of a comparison or logic op is i1 (with A's lanes); otherwise A's.
func (e *Binary) DType() DType {
	t := dtypeOf(e.A)
	if e.Op.IsCompare() || e.Op.IsLogic() {
		return DBool.WithLanes(max(t.Lanes, 1))
	}
	return t
}

// DType of a call is that of its first argument.
func (e *Call) DType() DType {
	if len(e.Args) == 0 {
		return DType{}
	}
	return dtypeOf(e.Args[0])
}

func (*IntImm) exprNode()     {}
func (*FloatImm) exprNode()   {}
func (*Var) exprNode()        {}
func (*Binary) exprNode()     {}
func (*Not) exprNode()        {}
func (*Select) exprNode()     {}
func (*Cast) exprNode()       {}
func (*Call) exprNode()       {}
func (*BufferLoad) exprNode() {}

// NewVar makes a variable of dtype t.
func NewVar(name string, t DType) *Var { return &Var{Name: name, Type: t} }

// Int makes an index constant.
func Int(v int64) *IntImm { return IntOf(DIndex, v) }

// IntOf makes an integer constant of dtype t, wrapped to t's width.
func IntOf(t DType, v int64) *IntImm { return &IntImm{Type: t, Value: WrapInt(t, v)} }

// Bool makes an i1 constant.
func BoolImm(b bool) *IntImm {
	if b {
		return &IntImm{Type: DBool, Value: 1}
	}
	return &IntImm{Type: DBool, Value: 0}
}

// Float makes a float constant of dtype t, rounding v to t.
func Float(t DType, v float64) *FloatImm { return &FloatImm{Type: t, Value: RoundFloat(t, v)} }

// Bin makes A op B.
func Bin(op BinOp, a, b Expr) *Binary { return &Binary{Op: op, A: a, B: b} }

// Add makes a + b.
func Add(a, b Expr) Expr { return Bin(OpAdd, a, b) }

// Sub makes a - b.
func Sub(a, b Expr) Expr { return Bin(OpSub, a, b) }

// Mul makes a * b.
func Mul(a, b Expr) Expr { return Bin(OpMul, a, b) }

// Div makes a / b (floats only).
func Div(a, b Expr) Expr { return Bin(OpDiv, a, b) }

// FloorDiv makes floordiv(a, b).
func FloorDiv(a, b Expr) Expr { return Bin(OpFloorDiv, a, b) }

// FloorMod makes floormod(a, b).
func FloorMod(a, b Expr) Expr { return Bin(OpFloorMod, a, b) }

// Min makes min(a, b).
func Min(a, b Expr) Expr { return Bin(OpMin, a, b) }

// Max makes max(a, b).
func Max(a, b Expr) Expr { return Bin(OpMax, a, b) }

// LT makes a < b.
func LT(a, b Expr) Expr { return Bin(OpLT, a, b) }

// Load makes buf[indices...].
func Load(buf *Buffer, indices ...Expr) *BufferLoad {
	return &BufferLoad{Buffer: buf, Indices: indices}
}

// WrapInt wraps v to the width of integer dtype t (two's complement; i1
// maps non-zero to 1; ui8/ui16/ui32 take v modulo 2^bits, 0 ... 2^bits-1;
// ui64 keeps the 64-bit pattern, so values from 2^63 are negative
// int64s). Other dtypes return v.
func WrapInt(t DType, v int64) int64 {
	switch t.Kind {
	case Bool:
		if v != 0 {
			return 1
		}
		return 0
	case I8:
		return int64(int8(v))
	case I16:
		return int64(int16(v))
	case I32:
		return int64(int32(v))
	case UI8:
		return int64(uint8(v))
	case UI16:
		return int64(uint16(v))
	case UI32:
		return int64(uint32(v))
	}
	return v
}

// Equal reports whether a and b are structurally equal: same node kinds,
// dtypes, operators and constants (floats compared by bit pattern), the
// same Vars and Buffers (by identity).
func Equal(a, b Expr) bool {
	switch x := a.(type) {
	case *IntImm:
		y, ok := b.(*IntImm)
		return ok && x.Type == y.Type && x.Value == y.Value
	case *FloatImm:
		y, ok := b.(*FloatImm)
		return ok && x.Type == y.Type && floatBits(x.Value) == floatBits(y.Value)
	case *Var:
		y, ok := b.(*Var)
		return ok && x == y
	case *Binary:
		y, ok := b.(*Binary)
		return ok && x.Op == y.Op && Equal(x.A, y.A) && Equal(x.B, y.B)
	case *Not:
		y, ok := b.(*Not)
		return ok && Equal(x.X, y.X)
	case *Select:
		y, ok := b.(*Select)
		return ok && Equal(x.Cond, y.Cond) && Equal(x.T, y.T) && Equal(x.F, y.F)
	case *Cast:
		y, ok := b.(*Cast)
		return ok && x.Type == y.Type && Equal(x.X, y.X)
	case *Call:
		y, ok := b.(*Call)
		return ok && x.Name == y.Name && equalList(x.Args, y.Args)
	case *BufferLoad:
		y, ok := b.(*BufferLoad)
		return ok && x.Buffer == y.Buffer && equalList(x.Indices, y.Indices)
	case nil:
		return b == nil
	}
	return false
}

func equalList(a, b []Expr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// VisitExpr calls fn on e and its sub-expressions in pre-order (buffer load
// indices included); fn returning false skips the node's children.
func VisitExpr(e Expr, fn func(Expr) bool) {
	if e == nil || !fn(e) {
		return
	}
	switch x := e.(type) {
	case *Binary:
		VisitExpr(x.A, fn)
		VisitExpr(x.B, fn)
	case *Not:
		VisitExpr(x.X, fn)
	case *Select:
		VisitExpr(x.Cond, fn)
		VisitExpr(x.T, fn)
		VisitExpr(x.F, fn)
	case *Cast:
		VisitExpr(x.X, fn)
	case *Call:
		for _, a := range x.Args {
			VisitExpr(a, fn)
		}
	case *BufferLoad:
		for _, a := range x.Indices {
			VisitExpr(a, fn)
		}
	}
}

// UsesVar reports whether v occurs in e (buffer load indices included).
func UsesVar(e Expr, v *Var) bool {
	return anyExpr(e, func(x Expr) bool { return x == Expr(v) })
}

// Substitute returns e with every occurrence of a variable in m replaced
// by its expression (of the same dtype); untouched subtrees are shared.
func Substitute(e Expr, m map[*Var]Expr) Expr {
	switch x := e.(type) {
	case *Var:
		if r, ok := m[x]; ok {
			return r
		}
	case *Binary:
		a, b := Substitute(x.A, m), Substitute(x.B, m)
		if a != x.A || b != x.B {
			return &Binary{Op: x.Op, A: a, B: b}
		}
	case *Not:
		if a := Substitute(x.X, m); a != x.X {
			return &Not{X: a}
		}
	case *Select:
		c, a, b := Substitute(x.Cond, m), Substitute(x.T, m), Substitute(x.F, m)
		if c != x.Cond || a != x.T || b != x.F {
			return &Select{Cond: c, T: a, F: b}
		}
	case *Cast:
		if a := Substitute(x.X, m); a != x.X {
			return &Cast{Type: x.Type, X: a}
		}
	case *Call:
		if args, changed := substituteList(x.Args, m); changed {
			return &Call{Name: x.Name, Args: args}
		}
	case *BufferLoad:
		if idx, changed := substituteList(x.Indices, m); changed {
			return &BufferLoad{Buffer: x.Buffer, Indices: idx}
		}
	}
	return e
}

func substituteList(es []Expr, m map[*Var]Expr) ([]Expr, bool) {
	out := make([]Expr, len(es))
	changed := false
	for i, e := range es {
		out[i] = Substitute(e, m)
		changed = changed || out[i] != e
	}
	return out, changed
}

// forEachStmtExpr calls fn on the expressions s holds directly (not those
// of nested statements).
func forEachStmtExpr(s Stmt, fn func(Expr)) {
	switch x := s.(type) {
	case *BufferStore:
		fn(x.Value)
		for _, i := range x.Indices {
			fn(i)
		}
	case *IfThenElse:
		fn(x.Cond)
	case *LetStmt:
		fn(x.Value)
	case *Evaluate:
		fn(x.Value)
	case *For:
		fn(x.Min)
		fn(x.Extent)
	case *BlockRealize:
		for _, v := range x.Values {
			fn(v)
		}
		if x.Predicate != nil {
			fn(x.Predicate)
		}
	}
}

// StmtUsesVar reports whether any expression in s or below it uses v
// (loop bounds, block bindings and predicates, indices, values).
func StmtUsesVar(s Stmt, v *Var) bool {
	used := false
	VisitStmt(s, func(x Stmt) bool {
		forEachStmtExpr(x, func(e Expr) {
			if e != nil && !used && UsesVar(e, v) {
				used = true
			}
		})
		return !used
	})
	return used
}

// Unclamped is e without the clamps around it: min(e, K) and max(e, K)
// of an integer constant K, as the lowering of padded and edge-replicating
// reads writes their indices.
func Unclamped(e Expr) Expr {
	for {
		b, ok := e.(*Binary)
		if !ok || b.Op != OpMax && b.Op != OpMin {
			return e
		}
		if k, ok := b.B.(*IntImm); !ok || !k.Type.IsInt() {
			return e
		}
		e = b.A
	}
}

// LinearCoeff returns c when e = c·v + (terms without v), seeing through
// sums, differences, products by integer constants and widening integer
// casts; ok is false when e uses v in any other way (a product of
// variables, a division, a min or max of v, a load indexed by v).
func LinearCoeff(e Expr, v *Var) (c int64, ok bool) {
	if !UsesVar(e, v) {
		return 0, true
	}
	switch x := e.(type) {
	case *Var:
		return 1, x == v
	case *Binary:
		switch x.Op {
		case OpAdd, OpSub:
			a, okA := LinearCoeff(x.A, v)
			b, okB := LinearCoeff(x.B, v)
			if x.Op == OpSub {
				b = -b
			}
			return a + b, okA && okB
		case OpMul:
			if k, isK := x.B.(*IntImm); isK {
				a, okA := LinearCoeff(x.A, v)
				return a * k.Value, okA
			}
			if k, isK := x.A.(*IntImm); isK {
				b, okB := LinearCoeff(x.B, v)
				return b * k.Value, okB
			}
		}
	case *Cast:
		from := x.X.DType()
		if x.Type.IsInt() && from.IsInt() && !from.IsBool() && x.Type.Bits() >= from.Bits() {
			return LinearCoeff(x.X, v)
		}
	}
	return 0, false
}
