package llvm

import (
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// MaxVectorLanes is the most lanes one widened body has: a vectorized
// loop with a larger extent is generated as a serial loop over chunks of
// at most this many lanes (vectorChunk).
const MaxVectorLanes = 64

// vecState is the state of a widened loop body: the vector loop variable,
// its lane count and first value (a scalar), and the variables whose
// value depends on the lanes, with their defining expressions (for the
// index analysis of loads and stores).
type vecState struct {
	v       *tir.Var
	lanes   int
	base    value.Value
	varying map[*tir.Var]bool
	defs    map[*tir.Var]tir.Expr
	// mask is the <lanes x i1> set of active lanes under lane-dependent
	// conditions (nil: all lanes).
	mask value.Value
	// conds are the tensor IR conditions whose conjunction is mask;
	// opaque is set when mask holds lanes no condition describes (an
	// else arm), codegen_pad.go.
	conds  []tir.Expr
	opaque bool
	// min is the loop's min, v's value in lane 0.
	min tir.Expr
}

func newVecState(v *tir.Var, lanes int) *vecState {
	return &vecState{v: v, lanes: lanes, varying: map[*tir.Var]bool{v: true}, defs: map[*tir.Var]tir.Expr{}}
}

// isVarying reports whether e depends on the vector lanes.
func (vs *vecState) isVarying(e tir.Expr) bool { return usesAny(e, vs.varying) }

// usesAny reports whether e uses a variable of set.
func usesAny(e tir.Expr, set map[*tir.Var]bool) bool {
	found := false
	tir.VisitExpr(e, func(x tir.Expr) bool {
		if v, ok := x.(*tir.Var); ok && set[v] {
			found = true
		}
		return !found
	})
	return found
}

// coeff returns c when e = c × v + (terms independent of the lanes), v the
// vector loop variable, seeing through lane-dependent let and block
// variables; ok is false when e is not of that form.
func (vs *vecState) coeff(e tir.Expr) (c int64, ok bool) {
	if !vs.isVarying(e) {
		return 0, true
	}
	switch x := e.(type) {
	case *tir.Var:
		if x == vs.v {
			return 1, true
		}
		if d, ok := vs.defs[x]; ok {
			return vs.coeff(d)
		}
	case *tir.Binary:
		switch x.Op {
		case tir.OpAdd, tir.OpSub:
			ca, oka := vs.coeff(x.A)
			cb, okb := vs.coeff(x.B)
			if !oka || !okb {
				return 0, false
			}
			if x.Op == tir.OpSub {
				return ca - cb, true
			}
			return ca + cb, true
		case tir.OpMul:
			if k, isK := x.A.(*tir.IntImm); isK {
				cb, okb := vs.coeff(x.B)
				return k.Value * cb, okb
			}
			if k, isK := x.B.(*tir.IntImm); isK {
				ca, oka := vs.coeff(x.A)
				return k.Value * ca, oka
			}
		}
	case *tir.Cast:
		from := x.X.DType()
		if x.Type.IsInt() && from.IsInt() && !from.IsBool() && x.Type.Bits() >= from.Bits() {
			return vs.coeff(x.X)
		}
	}
	return 0, false
}

// CheckVectorizable reports whether the body of loop f can be widened to
// SIMD lanes by this code generator, and if not, why (an error naming the
// loop and the offending construct). Widening needs: a constant extent in
// [1, MaxVectorLanes]; inner loops (serial or unrolled; parallel and
// vectorized ones are refused) whose bounds do not depend on the lanes;
// no Allocate or block allocation; every store at an index that depends
// on the lanes (a lane-independent index would make the lanes race on one
// element). Loads and stores at an index with lane stride 1 become vector
// loads/stores, other lane-dependent indices gather/scatter lane by lane,
// lane-independent loads stay scalar and are broadcast. Lane-dependent if
// conditions, block predicates and block init conditions are predicated:
// the guarded code runs with a lane mask (masked loads and stores). Like
// TVM, the lanes are assumed independent: a store and a load of the same
// buffer at different lanes are not checked.
func CheckVectorizable(f *tir.For) error {
	fail := func(loc tir.Location, format string, args ...any) error {
		if !loc.Known() {
			loc = f.Loc
		}
		args = append([]any{f.Var.Name}, args...)
		return tir.Errorf(loc, "cannot vectorize loop %%%s: "+format, args...)
	}
	ext, ok := f.Extent.(*tir.IntImm)
	if !ok {
		return fail(f.Loc, "its extent is not a constant")
	}
	if ext.Value < 1 {
		return fail(f.Loc, "extent %d is less than 1", ext.Value)
	}
	vs := newVecState(f.Var, int(min(ext.Value, MaxVectorLanes)))
	checkExpr := func(loc tir.Location, e tir.Expr) error {
		var err error
		tir.VisitExpr(e, func(x tir.Expr) bool {
			if x.DType().Lanes > 1 && err == nil {
				err = fail(loc, "it contains an expression of vector type %v", x.DType())
			}
			return err == nil
		})
		return err
	}
	var check func(s tir.Stmt) error
	check = func(s tir.Stmt) error {
		switch x := s.(type) {
		case nil:
			return nil
		case *tir.SeqStmt:
			for _, t := range x.Stmts {
				if err := check(t); err != nil {
					return err
				}
			}
		case *tir.For:
			if x.Kind != tir.Serial && x.Kind != tir.Unrolled {
				return fail(x.Loc, "it contains the %v loop %%%s", x.Kind, x.Var.Name)
			}
			if vs.isVarying(x.Min) || vs.isVarying(x.Extent) {
				return fail(x.Loc, "the bounds of inner loop %%%s depend on the lanes", x.Var.Name)
			}
			return check(x.Body)
		case *tir.LetStmt:
			if err := checkExpr(x.Loc, x.Value); err != nil {
				return err
			}
			if vs.isVarying(x.Value) {
				vs.varying[x.Var] = true
				vs.defs[x.Var] = x.Value
			}
			return check(x.Body)
		case *tir.IfThenElse:
			if err := checkExpr(x.Loc, x.Cond); err != nil {
				return err
			}
			if err := check(x.Then); err != nil {
				return err
			}
			return check(x.Else)
		case *tir.BlockRealize:
			b := x.Block
			if len(b.Allocs) > 0 {
				return fail(b.Loc, "block %q allocates buffers", b.Name)
			}
			for i, iv := range b.IterVars {
				if i < len(x.Values) && vs.isVarying(x.Values[i]) {
					if err := checkExpr(x.Loc, x.Values[i]); err != nil {
						return err
					}
					vs.varying[iv.Var] = true
					vs.defs[iv.Var] = x.Values[i]
				}
			}
			if b.Init != nil {
				if err := check(b.Init); err != nil {
					return err
				}
			}
			return check(b.Body)
		case *tir.Allocate:
			return fail(x.Loc, "it allocates buffer %%%s", x.Buffer.Name)
		case *tir.BufferStore:
			if err := checkExpr(x.Loc, x.Value); err != nil {
				return err
			}
			for _, ix := range x.Indices {
				if err := checkExpr(x.Loc, ix); err != nil {
					return err
				}
			}
			if x.Buffer.DType.Lanes > 1 {
				return fail(x.Loc, "buffer %%%s has vector elements", x.Buffer.Name)
			}
			if !vs.isVarying(flatIndex(x.Buffer, x.Indices)) {
				return fail(x.Loc, "the store to %%%s is at an index that does not depend on the lanes (a reduction across lanes)", x.Buffer.Name)
			}
		case *tir.Evaluate:
			return checkExpr(x.Loc, x.Value)
		case *tir.Block:
			return fail(x.Loc, "block %q outside a block realize", x.Name)
		default:
			return fail(s.Location(), "unsupported statement %T", s)
		}
		return nil
	}
	return check(f.Body)
}

// vectorLoop widens a vectorized loop: the body is generated once with
// the loop variable bound to <lo, lo+1, ..., lo+L-1> and every
// lane-dependent expression computed on <L x T> vectors. Loops that
// cannot be widened are refused (see CheckVectorizable); they are never
// silently scalarized.
func (g *fgen) vectorLoop(x *tir.For) error {
	if g.vec != nil {
		return g.errorf("cannot vectorize loop %%%s: it is nested in the vectorized loop %%%s", x.Var.Name, g.vec.v.Name)
	}
	if ok, err := g.vnniDot(x); ok || err != nil {
		return err
	}
	if err := CheckVectorizable(x); err != nil {
		return err
	}
	if ext := x.Extent.(*tir.IntImm).Value; ext > MaxVectorLanes {
		return g.chunkedVectorLoop(x, ext)
	}
	lanes := int(x.Extent.(*tir.IntImm).Value)
	lo, err := g.cond(x.Min)
	if err != nil {
		return err
	}
	if lanes == 1 {
		return g.bind(x.Var, nil, lo, func() error { return g.stmt(x.Body) })
	}
	return g.widened(x.Var, x.Min, lo, lanes, func() error { return g.stmt(x.Body) })
}

// widened runs body with v bound to the lanes <lo, lo+1, ..., lo+lanes−1>
// (min its tensor IR value in lane 0) and g.vec set for them.
func (g *fgen) widened(v *tir.Var, min tir.Expr, lo value.Value, lanes int, body func() error) error {
	vt := types.NewVector(uint64(lanes), lo.Type())
	iota := make([]constant.Constant, lanes)
	for l := range iota {
		iota[l] = constant.NewInt(lo.Type().(*types.IntType), int64(l))
	}
	vv := g.cur.NewAdd(g.splat(lo, lanes), constant.NewVector(vt, iota...))
	g.vec = newVecState(v, lanes)
	g.vec.base = lo
	g.vec.min = min
	defer func() { g.vec = nil }()
	return g.bind(v, nil, vv, body)
}

// vectorChunk is the lane count of the chunks of a vectorized loop of
// extent ext > MaxVectorLanes: the largest divisor of ext between
// MaxVectorLanes/4 and MaxVectorLanes (no tail), else MaxVectorLanes
// (with a shorter last chunk).
func vectorChunk(ext int64) int64 {
	for l := int64(MaxVectorLanes); l >= MaxVectorLanes/4; l-- {
		if ext%l == 0 {
			return l
		}
	}
	return MaxVectorLanes
}

// chunkedVectorLoop generates a vectorized loop longer than
// MaxVectorLanes as a serial loop over chunks of vectorChunk(ext) lanes,
// each a widened body starting at min + chunk·lanes, and a widened tail
// for the remaining lanes.
func (g *fgen) chunkedVectorLoop(x *tir.For, ext int64) error {
	lanes := vectorChunk(ext)
	t := x.Var.Type
	chunk := tir.NewVar(x.Var.Name+".chunk", t)
	part := func(min tir.Expr, n int64) *tir.For {
		return &tir.For{Var: x.Var, Min: min, Extent: tir.IntOf(t, n), Kind: tir.Vectorized, Annotations: x.Annotations, Body: x.Body, Loc: x.Loc}
	}
	body := part(tir.Add(x.Min, tir.Mul(chunk, tir.IntOf(t, lanes))), lanes)
	it := types.NewInt(uint64(t.Bits()))
	if err := g.loop(chunk, constant.NewInt(it, 0), constant.NewInt(it, ext/lanes), func() error { return g.vectorLoop(body) }); err != nil {
		return err
	}
	if rem := ext % lanes; rem > 0 {
		return g.vectorLoop(part(tir.Add(x.Min, tir.IntOf(t, ext-rem)), rem))
	}
	return nil
}

// normalize rewrites the lane-dependent floordiv and floormod terms of
// index e that an aligned group of lanes cannot cross: with a = a₀ + (v −
// min), a₀ (a at lane 0) a multiple of the lane count L and m a multiple
// of L, floordiv(a, m) = floordiv(a₀, m) (the same for every lane) and
// floormod(a, m) = floormod(a₀, m) + (v − min) (stride 1), since the L
// lanes sit inside one aligned run of m. A fused and split copy loop's
// index (floormod(tx·4 + v, 16)) then reads as contiguous, a vector
// access. e is returned unchanged when nothing is rewritten or when it
// depends on the lanes through a let bound to a load (substituting would
// read the buffer again).
func (vs *vecState) normalize(e tir.Expr) tir.Expr {
	if !vs.isVarying(e) {
		return e
	}
	full := vs.expand(e)
	hasLoad := false
	tir.VisitExpr(full, func(x tir.Expr) bool {
		if _, ok := x.(*tir.BufferLoad); ok {
			hasLoad = true
		}
		return !hasLoad
	})
	if hasLoad {
		return e
	}
	changed := false
	out := vs.normalizeDivMod(full, &changed)
	if !changed {
		return e
	}
	return out
}

// expand substitutes the lane-dependent lets and block bindings into e
// (nested up to 4 deep), so that e reads in terms of the loop variables.
func (vs *vecState) expand(e tir.Expr) tir.Expr {
	for range 4 {
		e = tir.Substitute(e, vs.defs)
	}
	return e
}

func (vs *vecState) normalizeDivMod(e tir.Expr, changed *bool) tir.Expr {
	x, ok := e.(*tir.Binary)
	if !ok {
		return e
	}
	a, b := vs.normalizeDivMod(x.A, changed), vs.normalizeDivMod(x.B, changed)
	if a != x.A || b != x.B {
		x = &tir.Binary{Op: x.Op, A: a, B: b}
	}
	if x.Op != tir.OpFloorDiv && x.Op != tir.OpFloorMod {
		return x
	}
	m, isK := x.B.(*tir.IntImm)
	lanes := int64(vs.lanes)
	if !isK || m.Value <= 0 || m.Value%lanes != 0 || vs.min == nil || !vs.isVarying(x.A) {
		return x
	}
	if c, ok := vs.coeff(x.A); !ok || c != 1 {
		return x
	}
	a0 := tir.Simplify(tir.Substitute(x.A, map[*tir.Var]tir.Expr{vs.v: vs.min}), nil)
	if vs.isVarying(a0) || !multipleOf(a0, lanes) {
		return x
	}
	*changed = true
	if x.Op == tir.OpFloorDiv {
		return &tir.Binary{Op: tir.OpFloorDiv, A: a0, B: m}
	}
	return tir.Add(&tir.Binary{Op: tir.OpFloorMod, A: a0, B: m}, tir.Sub(vs.v, vs.min))
}
