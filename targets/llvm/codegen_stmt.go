package llvm

import (
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// Stack limits for Allocate: a buffer with a constant size of at most
// this many bytes lives on the stack (an alloca in the function's entry
// block, so loops do not grow the stack; inside a parallel body this is
// the worker thread's stack); larger or symbolic-size buffers take a
// heap block their site keeps for the thread (keptBlock).
const (
	maxStackLocal  = 256 << 10 // scope "local" (and "shared", unused on CPUs)
	maxStackGlobal = 64 << 10  // scope "global"
)

// stmt generates s at the current insertion point.
func (g *fgen) stmt(s tir.Stmt) error {
	if s == nil {
		return nil
	}
	if l := s.Location(); l.Known() {
		g.loc = l
	}
	switch s.(type) {
	case *tir.CallKernel, *tir.AllocateConst, *tir.ArenaAlloc:
		if g.m.device {
			return g.errorf("host statement in a GPU kernel: kernel calls, constants and the arena run on the host")
		}
	}
	switch x := s.(type) {
	case *tir.SeqStmt:
		for _, t := range x.Stmts {
			if err := g.stmt(t); err != nil {
				return err
			}
		}
		return nil
	case *tir.BufferStore:
		return g.store(x)
	case *tir.LetStmt:
		v, err := g.expr(x.Value)
		if err != nil {
			return err
		}
		return g.bind(x.Var, x.Value, v, func() error { return g.stmt(x.Body) })
	case *tir.IfThenElse:
		return g.ifThenElse(x)
	case *tir.Evaluate:
		_, err := g.expr(x.Value)
		return err
	case *tir.Barrier:
		return g.barrier()
	case *tir.Allocate:
		return g.allocate(x.Buffer, x.Body, func() error { return g.stmt(x.Body) })
	case *tir.For:
		return g.forLoop(x)
	case *tir.BlockRealize:
		return g.blockRealize(x)
	case *tir.Block:
		return g.errorf("block %q outside a block realize", x.Name)
	case *tir.CallKernel:
		return g.callKernel(x)
	case *tir.AllocateConst:
		return g.allocateConst(x)
	case *tir.ArenaAlloc:
		return g.arenaAlloc(x)
	}
	return g.errorf("unsupported statement %T", s)
}

// bind binds variable x (defined by expression def, generated as v) for
// the duration of body. Inside a widened body, a lane-dependent binding
// is recorded so that index analysis can see through it.
func (g *fgen) bind(x *tir.Var, def tir.Expr, v value.Value, body func() error) error {
	old, had := g.vars[x]
	g.vars[x] = v
	oldDef, hadDef := g.defs[x]
	if def != nil {
		g.defs[x] = def
	} else {
		delete(g.defs, x) // a loop variable: its own value
	}
	defer func() {
		if hadDef {
			g.defs[x] = oldDef
		} else {
			delete(g.defs, x)
		}
	}()
	if g.vec != nil && g.vec.isVarying(def) {
		g.vec.varying[x] = true
		g.vec.defs[x] = def
		defer func() { delete(g.vec.varying, x); delete(g.vec.defs, x) }()
	}
	defer func() {
		if had {
			g.vars[x] = old
		} else {
			delete(g.vars, x)
		}
	}()
	return body()
}

// cond generates a branch condition, which must be a scalar i1.
func (g *fgen) cond(e tir.Expr) (value.Value, error) {
	c, err := g.expr(e)
	if err != nil {
		return nil, err
	}
	if lanesOf(c) > 1 {
		return nil, g.errorf("condition depends on the lanes of a vectorized loop")
	}
	return c, nil
}

// ifThen branches on c: then() runs when it holds, els() (may be nil)
// otherwise; both continue at a common join block.
func (g *fgen) ifThen(c value.Value, then, els func() error) error {
	tb := g.newBlock("then")
	join := g.newBlock("endif")
	eb := join
	if els != nil {
		eb = g.newBlock("else")
	}
	g.cur.NewCondBr(c, tb, eb)
	g.cur = tb
	if err := then(); err != nil {
		return err
	}
	g.cur.NewBr(join)
	if els != nil {
		g.cur = eb
		if err := els(); err != nil {
			return err
		}
		g.cur.NewBr(join)
	}
	g.cur = join
	return nil
}

func (g *fgen) ifThenElse(x *tir.IfThenElse) error {
	c, err := g.expr(x.Cond)
	if err != nil {
		return err
	}
	var els func() error
	if x.Else != nil {
		els = func() error { return g.stmt(x.Else) }
	}
	return g.guarded(c, x.Cond, func() error { return g.stmt(x.Then) }, els)
}

// guarded runs then() where c holds and els() (may be nil) where it does
// not. A scalar c branches (ifThen). A lane-dependent c inside a widened
// body predicates instead: each arm runs with the lane mask narrowed to
// the lanes that take it (masked loads and stores, see
// codegen_memory.go), and is skipped when no lane does.
func (g *fgen) guarded(c value.Value, cond tir.Expr, then, els func() error) error {
	if lanesOf(c) == 1 {
		return g.ifThen(c, then, els)
	}
	notC := g.cur.NewXor(c, constOf(c.Type(), 1))
	if err := g.withMask(c, cond, then); err != nil {
		return err
	}
	if els == nil {
		return nil
	}
	return g.withMask(notC, nil, els)
}

// withMask runs body with the widened body's lane mask narrowed by c,
// skipping it when no lane is active; cond is c's tensor IR condition
// (nil when none describes it).
func (g *fgen) withMask(c value.Value, cond tir.Expr, body func() error) error {
	mask := c
	if g.vec.mask != nil {
		mask = g.cur.NewAnd(g.vec.mask, c)
	}
	bits := g.cur.NewBitCast(mask, types.NewInt(uint64(g.vec.lanes)))
	active := g.cur.NewICmp(enum.IPredNE, bits, constant.NewInt(types.NewInt(uint64(g.vec.lanes)), 0))
	saved, savedConds, savedOpaque := g.vec.mask, g.vec.conds, g.vec.opaque
	defer func() { g.vec.mask, g.vec.conds, g.vec.opaque = saved, savedConds, savedOpaque }()
	return g.ifThen(active, func() error {
		g.vec.mask = mask
		if cond == nil {
			g.vec.opaque = true
		} else {
			g.vec.conds = append(savedConds[:len(savedConds):len(savedConds)], cond)
		}
		return body()
	}, nil)
}

// allocate gives buf storage for the duration of body: on the stack when
// its size is a constant within maxStackLocal/maxStackGlobal, else a
// block the site keeps for its thread (keptBlock). Contents start
// undefined. The rows of a buffer that vectorized loops in scope (the
// statement the allocation covers) access are padded (codegen_pad.go).
func (g *fgen) allocate(buf *tir.Buffer, scope tir.Stmt, body func() error) error {
	if _, ok := g.bufs[buf]; ok {
		return g.errorf("buffer %%%s is allocated twice", buf.Name)
	}
	st, err := storageType(buf.DType)
	if err != nil {
		return g.errorf("buffer %%%s: %v", buf.Name, err)
	}
	g.padRows(buf, scope)
	g.local[buf] = &localBuf{scope: scope}
	defer delete(g.local, buf)
	// Elements spanned: the flat index of the last element (of the last
	// row's padding), plus one.
	last := make([]tir.Expr, len(buf.Shape))
	for d, s := range buf.Shape {
		last[d] = addIdx(asIndex(s), tir.Int(-1))
	}
	if p := g.rowPitch(buf); p > 0 && len(last) > 0 {
		last[len(last)-1] = tir.Int(p - 1)
	}
	n := addIdx(g.flatIndex(buf, last), tir.Int(1))
	limit := int64(maxStackGlobal)
	if buf.Scope != tir.ScopeGlobal && buf.Scope != "" {
		limit = maxStackLocal
	}
	if g.m.device {
		switch buf.Scope {
		case tir.ScopeShared:
			return g.sharedAlloc(buf, st, n, body)
		case tir.ScopeGlobal, "":
			return g.errorf("buffer %%%s: a global-scope allocation inside a GPU kernel (the host allocates device memory; use scope shared or local)", buf.Name)
		}
	}
	eb := tir.ElemBytes(buf.DType)
	if c, ok := n.(*tir.IntImm); ok && c.Value*eb <= limit {
		g.bufs[buf] = g.alloca(st, max(c.Value, 1))
		defer delete(g.bufs, buf)
		return body()
	}
	if g.vec != nil {
		return g.errorf("buffer %%%s: heap allocation inside a vectorized loop", buf.Name)
	}
	nv, err := g.expr(n)
	if err != nil {
		return err
	}
	bytes := g.cur.NewMul(g.toI64(nv), iconst(eb))
	g.bufs[buf] = g.cur.NewBitCast(g.keptBlock(bytes), types.NewPointer(st))
	defer delete(g.bufs, buf)
	return body()
}

// zero64 is the i64 constant 0.
var zero64 = constant.NewInt(types.I64, 0)
