package llvm

import (
	"github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/value"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// maxUnroll bounds the extent of a loop the code generator unrolls.
const maxUnroll = 4096

// forLoop generates a For of any kind: serial loops as a counted loop
// (phi induction variable), unrolled loops by repeating the body (constant
// extent ≤ maxUnroll), vectorized loops by widening the body
// (codegen_vector.go), parallel loops by outlining (codegen_parallel.go;
// nested inside another parallel loop they run serially). Thread-bound
// loops are GPU constructs: NVPTX kernels read them from the thread
// registers (nvptx.go), the CPU target refuses them.
//
// A loop annotated with tir.PragmaAutoUnrollMaxStep sets the step budget
// for itself and the loops inside it: a serial loop the budget covers
// (tir.AutoUnrolls) is generated as an unrolled loop.
func (g *fgen) forLoop(x *tir.For) error {
	defer g.enterRange(x)()
	if budget, ok := tir.AutoUnrollBudget(x); ok {
		saved := g.unrollBudget
		g.unrollBudget = budget
		defer func() { g.unrollBudget = saved }()
	}
	switch x.Kind {
	case tir.Serial:
		if tir.AutoUnrolls(x, g.unrollBudget) {
			return g.unrolledLoop(x)
		}
		return g.serialLoop(x)
	case tir.Unrolled:
		return g.unrolledLoop(x)
	case tir.Vectorized:
		return g.vectorLoop(x)
	case tir.Parallel:
		if g.inParallel || g.vec != nil {
			return g.serialLoop(x)
		}
		return g.parallelLoop(x)
	case tir.ThreadBinding:
		return g.boundLoop(x)
	}
	return g.errorf("loop %%%s has unknown kind %v", x.Var.Name, x.Kind)
}

// bounds generates a loop's min and extent (scalars of the variable's type).
func (g *fgen) bounds(x *tir.For) (value.Value, value.Value, error) {
	lo, err := g.cond(x.Min)
	if err != nil {
		return nil, nil, g.errorf("loop %%%s: min %v", x.Var.Name, err)
	}
	ext, err := g.cond(x.Extent)
	if err != nil {
		return nil, nil, g.errorf("loop %%%s: extent %v", x.Var.Name, err)
	}
	return lo, ext, nil
}

func (g *fgen) serialLoop(x *tir.For) error {
	if g.vec == nil && peelLast(x) {
		return g.peeledLoop(x)
	}
	return g.serialLoop2(x)
}

// serialLoop2 is serialLoop without peeling (codegen_version.go).
func (g *fgen) serialLoop2(x *tir.For) error {
	if g.vec == nil {
		if p := g.guardFacts(x); p != nil {
			return g.partitionedLoop(p)
		}
		if cands := g.versionCands(x); len(cands) > 0 {
			return g.versionedLoop(x, cands)
		}
	}
	return g.serialLoop1(x)
}

func (g *fgen) serialLoop1(x *tir.For) error {
	lo, ext, err := g.bounds(x)
	if err != nil {
		return err
	}
	end := g.cur.NewAdd(lo, ext)
	return g.loop(x.Var, lo, end, func() error { return g.stmt(x.Body) })
}

// loop emits `for (v = lo; v < end; v++) body()` with v bound to the
// induction variable (a phi).
func (g *fgen) loop(v *tir.Var, lo, end value.Value, body func() error) error {
	pre := g.cur
	head := g.newBlock("for.head")
	bodyB := g.newBlock("for.body")
	exit := g.newBlock("for.end")
	pre.NewBr(head)
	phi := head.NewPhi(ir.NewIncoming(lo, pre))
	head.NewCondBr(head.NewICmp(enum.IPredSLT, phi, end), bodyB, exit)
	g.cur = bodyB
	if err := g.bind(v, nil, phi, body); err != nil {
		return err
	}
	next := g.cur.NewAdd(phi, constOf(phi.Type(), 1))
	g.cur.NewBr(head)
	phi.Incs = append(phi.Incs, ir.NewIncoming(next, g.cur))
	g.cur = exit
	return nil
}

func (g *fgen) unrolledLoop(x *tir.For) error {
	ext, ok := x.Extent.(*tir.IntImm)
	if !ok || ext.Value > maxUnroll {
		return g.errorf("unrolled loop %%%s needs a constant extent of at most %d", x.Var.Name, maxUnroll)
	}
	lo, err := g.cond(x.Min)
	if err != nil {
		return err
	}
	whole := g.ranges[x.Var]
	defer func() { g.ranges[x.Var] = whole }()
	for k := int64(0); k < ext.Value; k++ {
		var v value.Value = lo
		if k > 0 {
			v = g.cur.NewAdd(lo, constOf(lo.Type(), float64(k)))
		}
		if whole != (tir.Interval{}) {
			g.ranges[x.Var] = tir.Interval{Lo: whole.Lo + k, Hi: whole.Lo + k} // this iteration's value
		}
		if err := g.bind(x.Var, nil, v, func() error { return g.stmt(x.Body) }); err != nil {
			return err
		}
	}
	return nil
}
