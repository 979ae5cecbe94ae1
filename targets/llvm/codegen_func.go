package llvm

import (
	"fmt"

	"github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// fgen is the state of one LLVM function's code generation: the current
// insertion block, the values bound to tensor IR variables and the base
// pointers of buffers in scope.
type fgen struct {
	m     *mgen
	f     *ir.Func
	entry *ir.Block // holds the allocas; branches to the body at finish
	// profTS is the timespec the profiling probes read the clock into.
	profTS value.Value
	cur    *ir.Block
	vars   map[*tir.Var]value.Value
	bufs   map[*tir.Buffer]value.Value
	// defs are the defining expressions of the block iteration and let
	// variables in scope; local the buffers allocated by the code being
	// generated (codegen_pad.go).
	defs  map[*tir.Var]tir.Expr
	local map[*tir.Buffer]*localBuf
	// vec is non-nil while widening the body of a vectorized loop.
	vec *vecState
	// lane0 makes variable references inside a widened body evaluate lane
	// 0 (the vector loop variable as its first value), used to compute the
	// scalar base address of a contiguous vector access.
	lane0 bool
	// inParallel is set inside an outlined parallel body: nested parallel
	// loops run serially.
	inParallel bool
	// versioned holds the lane-predicated blocks a loop around them is
	// versioned on; assumed those whose predicate holds on every lane in
	// the copy being generated (codegen_version.go).
	versioned map[*tir.BlockRealize]bool
	assumed   map[*tir.BlockRealize]bool
	// guardDone holds the padding guards and clamps (codegen_guard.go) a
	// loop around the code being generated is partitioned on;
	// guardAssumed those that hold in it.
	guardDone, guardAssumed map[*tir.Binary]bool
	// partitioning counts the partitioned loops around the code being
	// generated.
	partitioning int
	// ranges are the constant ranges of the loops around the code being
	// generated (codegen_guard.go reads them).
	ranges  tir.BoundEnv
	nblocks int
	// loc is the location of the statement being generated, for errors.
	loc tir.Location
	// unrollBudget is the tir.PragmaAutoUnrollMaxStep in force (0: none).
	unrollBudget int64
	// boundAxes are the thread axes of the enclosing bound loops (NVPTX).
	boundAxes map[string]*tir.Var
	// deviceErr records a construct the device cannot run found while
	// generating an expression (a libm call).
	deviceErr error
}

func newFgen(m *mgen, f *ir.Func) *fgen {
	g := &fgen{m: m, f: f, vars: map[*tir.Var]value.Value{}, bufs: map[*tir.Buffer]value.Value{},
		defs: map[*tir.Var]tir.Expr{}, local: map[*tir.Buffer]*localBuf{}, boundAxes: map[string]*tir.Var{}}
	g.entry = f.NewBlock("entry")
	g.cur = g.newBlock("body")
	return g
}

// newBlock appends a new basic block named name.N to the function.
func (g *fgen) newBlock(name string) *ir.Block {
	g.nblocks++
	return g.f.NewBlock(fmt.Sprintf("%s.%d", name, g.nblocks))
}

// finish terminates the entry block and the current block (ret void, or
// ret ret when ret is non-nil).
func (g *fgen) finish(ret value.Value) {
	g.entry.NewBr(g.f.Blocks[1])
	g.cur.NewRet(ret)
}

// alloca reserves n elements of type t in the function's entry block
// (aligned to 64 bytes) and returns a t* to the first.
func (g *fgen) alloca(t types.Type, n int64) value.Value {
	a := g.entry.NewAlloca(types.NewArray(uint64(n), t))
	a.Align = 64
	zero := constant.NewInt(types.I64, 0)
	return g.entry.NewGetElementPtr(a.ElemType, a, zero, zero)
}

// splat broadcasts the scalar v to n lanes (constants stay constants).
func (g *fgen) splat(v value.Value, n int) value.Value {
	if n == 1 || lanesOf(v) == n {
		return v
	}
	vt := types.NewVector(uint64(n), v.Type())
	if c, ok := v.(constant.Constant); ok {
		return splatConst(c, vt)
	}
	ins := g.cur.NewInsertElement(constant.NewUndef(vt), v, constant.NewInt(types.I32, 0))
	mask := constant.NewZeroInitializer(types.NewVector(uint64(n), types.I32))
	return g.cur.NewShuffleVector(ins, constant.NewUndef(vt), mask)
}

// unify broadcasts scalars among vs to the widest lane count.
func (g *fgen) unify(vs ...value.Value) []value.Value {
	n := 1
	for _, v := range vs {
		if l := lanesOf(v); l > n {
			n = l
		}
	}
	out := make([]value.Value, len(vs))
	for i, v := range vs {
		out[i] = g.splat(v, n)
	}
	return out
}

// iconst is an i64 constant.
func iconst(v int64) constant.Constant { return constant.NewInt(types.I64, v) }

// toI64 converts an integer value to i64 (sign-extending; i1 zero-extends).
func (g *fgen) toI64(v value.Value) value.Value {
	bits := bitsOf(v.Type())
	switch {
	case bits == 64:
		return v
	case bits == 1:
		return g.cur.NewZExt(v, withLanes(types.I64, lanesOf(v)))
	}
	return g.cur.NewSExt(v, withLanes(types.I64, lanesOf(v)))
}

// flatIndex is the element offset of buf[indices] as a tensor IR index
// expression: ElemOffset + Σ index_d × stride_d, with row-major strides
// computed from the shape unless buf.Strides is set.
func flatIndex(buf *tir.Buffer, indices []tir.Expr) tir.Expr {
	n := len(indices)
	strides := make([]tir.Expr, n)
	if len(buf.Strides) == n {
		copy(strides, buf.Strides)
	} else if n > 0 {
		strides[n-1] = tir.Int(1)
		for d := n - 2; d >= 0; d-- {
			strides[d] = mulIdx(strides[d+1], asIndex(buf.Shape[d+1]))
		}
	}
	var off tir.Expr = tir.Int(0)
	if buf.ElemOffset != nil {
		off = asIndex(buf.ElemOffset)
	}
	for d, ix := range indices {
		off = addIdx(off, mulIdx(asIndex(ix), asIndex(strides[d])))
	}
	return off
}

// flatIndex is flatIndex with the padded strides of a storage_align'ed
// buffer (mgen.aligned).
func (g *fgen) flatIndex(buf *tir.Buffer, indices []tir.Expr) tir.Expr {
	st, ok := g.m.aligned[buf]
	if !ok || len(st) != len(indices) {
		return flatIndex(buf, indices)
	}
	var off tir.Expr = tir.Int(0)
	for d, ix := range indices {
		off = addIdx(off, mulIdx(asIndex(ix), tir.Int(st[d])))
	}
	return off
}

// asIndex casts an integer expression to index (no-op for index).
func asIndex(e tir.Expr) tir.Expr {
	if e.DType() == tir.DIndex {
		return e
	}
	if c, ok := e.(*tir.IntImm); ok {
		return tir.Int(c.Value)
	}
	return &tir.Cast{Type: tir.DIndex, X: e}
}

// addIdx and mulIdx build index arithmetic, folding constants.
func addIdx(a, b tir.Expr) tir.Expr {
	ca, aok := a.(*tir.IntImm)
	cb, bok := b.(*tir.IntImm)
	switch {
	case aok && bok:
		return tir.Int(ca.Value + cb.Value)
	case aok && ca.Value == 0:
		return b
	case bok && cb.Value == 0:
		return a
	}
	return tir.Add(a, b)
}

func mulIdx(a, b tir.Expr) tir.Expr {
	ca, aok := a.(*tir.IntImm)
	cb, bok := b.(*tir.IntImm)
	switch {
	case aok && bok:
		return tir.Int(ca.Value * cb.Value)
	case aok && ca.Value == 1:
		return b
	case bok && cb.Value == 1:
		return a
	case aok && ca.Value == 0, bok && cb.Value == 0:
		return tir.Int(0)
	}
	return tir.Mul(a, b)
}

// bufPtr is the base pointer of buf in scope, or an error naming it.
func (g *fgen) bufPtr(buf *tir.Buffer, loc tir.Location) (value.Value, error) {
	p, ok := g.bufs[buf]
	if !ok {
		return nil, tir.Errorf(loc, "buffer %%%s is not in scope (not a parameter or an enclosing allocation)", buf.Name)
	}
	return p, nil
}
