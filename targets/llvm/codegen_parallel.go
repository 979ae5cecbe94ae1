package llvm

import (
	"fmt"
	"maps"

	"github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// parallelLoop outlines a parallel loop and launches it through libgomp.
//
// For loop %i in function f it emits
//
//	internal void f.parN.body(i64 begin, i64 end, i8* args)  ; runs iterations [begin, end)
//	internal void f.parN.loop(i64 begin, i64 end, captures...) ; the loop itself, called by body
//	internal void f.parN.omp(i8* args)                       ; one call per thread
//
// and, at the loop, stores {i64 lo, i64 end, captures...} into a stack
// struct and calls GOMP_parallel(f.parN.omp, args, num_threads, 0)
// through the pointer the module constructor resolved (libgomp.go; when
// libgomp could not be loaded, it calls the body on the whole range
// instead). Each
// thread takes the static block [lo + t·c, min(lo + (t+1)·c, end)) with
// c = ⌈extent / nthreads⌉, t = omp_get_thread_num(), nthreads =
// omp_get_num_threads(). Captures are the variables and buffer pointers
// the loop uses that are bound outside it, loaded back in the body.
// num_threads comes from tessera.num_threads (TESSERA_NUM_THREADS, else
// 0: libgomp's default, which is OMP_NUM_THREADS else all cores). An
// empty iteration range launches nothing.
func (g *fgen) parallelLoop(x *tir.For) error {
	lo, ext, err := g.bounds(x)
	if err != nil {
		return err
	}
	m := g.m
	m.usesParallel = true
	name := fmt.Sprintf("%s.par%d", g.f.Name(), m.nOutlined)
	m.nOutlined++

	var capVars []*tir.Var
	for _, v := range usedVars(x.Body) {
		if _, ok := g.vars[v]; ok {
			capVars = append(capVars, v)
		}
	}
	var capBufs []*tir.Buffer
	for _, b := range usedBuffers(x.Body) {
		if _, ok := g.bufs[b]; ok {
			capBufs = append(capBufs, b)
		}
	}
	fields := []types.Type{types.I64, types.I64}
	for _, v := range capVars {
		fields = append(fields, g.vars[v].Type())
	}
	for _, b := range capBufs {
		fields = append(fields, g.bufs[b].Type())
	}
	st := types.NewStruct(fields...)
	stp := types.NewPointer(st)
	field := func(blk *ir.Block, p value.Value, i int) value.Value {
		return blk.NewGetElementPtr(st, p, constant.NewInt(types.I32, 0), constant.NewInt(types.I32, int64(i)))
	}

	// The body function loads the captures and calls the loop function,
	// whose buffer parameters are noalias like the kernel's (after
	// inlining, LLVM keeps that as alias scopes).
	loopParams := []*ir.Param{ir.NewParam("begin", types.I64), ir.NewParam("end", types.I64)}
	for i, v := range capVars {
		loopParams = append(loopParams, ir.NewParam(v.Name, fields[i+2]))
	}
	for i, b := range capBufs {
		p := ir.NewParam(b.Name, fields[i+2+len(capVars)])
		p.Attrs = append(p.Attrs, enum.ParamAttrNoAlias)
		loopParams = append(loopParams, p)
	}
	loopF := m.m.NewFunc(name+".loop", types.Void, loopParams...)
	loopF.Linkage = enum.LinkageInternal
	loopF.FuncAttrs = append(loopF.FuncAttrs, enum.FuncAttrNoUnwind)
	lg := newFgen(m, loopF)
	lg.inParallel = true
	lg.loc = g.loc
	lg.unrollBudget = g.unrollBudget
	lg.ranges = maps.Clone(g.ranges)
	for i, v := range capVars {
		lg.vars[v] = loopParams[i+2]
	}
	for i, b := range capBufs {
		lg.bufs[b] = loopParams[i+2+len(capVars)]
	}
	var b0, e0 value.Value = loopParams[0], loopParams[1]
	if vt := lo.Type(); bitsOf(vt) != 64 {
		b0, e0 = lg.cur.NewTrunc(b0, vt), lg.cur.NewTrunc(e0, vt)
	}
	if err := lg.loop(x.Var, b0, e0, func() error { return lg.stmt(x.Body) }); err != nil {
		return err
	}
	lg.finish(nil)

	begin, end, args := ir.NewParam("begin", types.I64), ir.NewParam("end", types.I64), ir.NewParam("args", i8ptr)
	bodyF := m.m.NewFunc(name+".body", types.Void, begin, end, args)
	bodyF.Linkage = enum.LinkageInternal
	bodyF.FuncAttrs = append(bodyF.FuncAttrs, enum.FuncAttrNoUnwind)
	bb := bodyF.NewBlock("entry")
	sp := bb.NewBitCast(args, stp)
	callArgs := []value.Value{begin, end}
	for k := 2; k < len(fields); k++ {
		callArgs = append(callArgs, bb.NewLoad(fields[k], field(bb, sp, k)))
	}
	bb.NewCall(loopF, callArgs...)
	bb.NewRet(nil)

	// The per-thread trampoline with the static partition.
	data := ir.NewParam("data", i8ptr)
	ompF := m.m.NewFunc(name+".omp", types.Void, data)
	ompF.Linkage = enum.LinkageInternal
	ompF.FuncAttrs = append(ompF.FuncAttrs, enum.FuncAttrNoUnwind)
	ob := ompF.NewBlock("entry")
	gomp := m.libgomp()
	tid := ob.NewSExt(ob.NewCall(ob.NewLoad(gomp.threadNum.ContentType, gomp.threadNum)), types.I64)
	nth := ob.NewSExt(ob.NewCall(ob.NewLoad(gomp.numThreads.ContentType, gomp.numThreads)), types.I64)
	osp := ob.NewBitCast(data, stp)
	olo := ob.NewLoad(types.I64, field(ob, osp, 0))
	oend := ob.NewLoad(types.I64, field(ob, osp, 1))
	chunk := ob.NewSDiv(ob.NewAdd(ob.NewSub(oend, olo), ob.NewSub(nth, iconst(1))), nth)
	tb := ob.NewAdd(olo, ob.NewMul(tid, chunk))
	te := ob.NewAdd(tb, chunk)
	te2 := ob.NewSelect(ob.NewICmp(enum.IPredSLT, te, oend), te, oend)
	run := ompF.NewBlock("run")
	done := ompF.NewBlock("done")
	ob.NewCondBr(ob.NewICmp(enum.IPredSLT, tb, te2), run, done)
	run.NewCall(bodyF, tb, te2, data)
	run.NewBr(done)
	done.NewRet(nil)

	// The launch.
	c := g.cur
	endv := c.NewAdd(lo, ext)
	slot := g.entry.NewAlloca(st)
	slot.Align = 8
	c.NewStore(g.toI64(lo), field(c, slot, 0))
	c.NewStore(g.toI64(endv), field(c, slot, 1))
	for i, v := range capVars {
		c.NewStore(g.vars[v], field(c, slot, i+2))
	}
	for i, b := range capBufs {
		c.NewStore(g.bufs[b], field(c, slot, i+2+len(capVars)))
	}
	launch := func() error {
		c := g.cur
		data := c.NewBitCast(slot, i8ptr)
		fp := c.NewLoad(gomp.parallel.ContentType, gomp.parallel)
		noGomp := c.NewICmp(enum.IPredEQ, fp, constant.NewNull(gomp.parallel.ContentType.(*types.PointerType)))
		serial := func() error {
			g.cur.NewCall(bodyF, g.toI64(lo), g.toI64(endv), data)
			return nil
		}
		parallel := func() error {
			nthreads := g.cur.NewCall(m.numThreadsFunc())
			g.cur.NewCall(fp, ompF, data, nthreads, constant.NewInt(types.I32, 0))
			return nil
		}
		return g.ifThen(noGomp, serial, parallel)
	}
	return g.ifThen(c.NewICmp(enum.IPredSGT, ext, constOf(ext.Type(), 0)), launch, nil)
}

// numThreadsFunc returns `internal i32 @tessera.num_threads()`: the value
// of TESSERA_NUM_THREADS (atoi; unset, empty or negative gives 0, which
// makes GOMP_parallel use libgomp's default: OMP_NUM_THREADS, else all
// cores), read with getenv on the first call and cached in a global
// (monotonic atomic load/store, so concurrent first calls are benign).
func (m *mgen) numThreadsFunc() *ir.Func {
	if m.numThreads != nil {
		return m.numThreads
	}
	cache := m.m.NewGlobalDef("tessera.num_threads.cache", constant.NewInt(types.I32, -1))
	cache.Linkage = enum.LinkageInternal
	f := m.m.NewFunc("tessera.num_threads", types.I32)
	f.Linkage = enum.LinkageInternal
	f.FuncAttrs = append(f.FuncAttrs, enum.FuncAttrNoUnwind)
	entry := f.NewBlock("entry")
	compute := f.NewBlock("compute")
	parse := f.NewBlock("parse")
	store := f.NewBlock("store")
	cached := f.NewBlock("cached")
	v := entry.NewLoad(types.I32, cache)
	v.Atomic, v.Ordering, v.Align = true, enum.AtomicOrderingMonotonic, 4
	entry.NewCondBr(entry.NewICmp(enum.IPredSGE, v, constant.NewInt(types.I32, 0)), cached, compute)
	cached.NewRet(v)
	getenv := m.declare("getenv", i8ptr, i8ptr)
	atoi := m.declare("atoi", types.I32, i8ptr)
	p := compute.NewCall(getenv, m.cstring("TESSERA_NUM_THREADS"))
	compute.NewCondBr(compute.NewICmp(enum.IPredEQ, p, constant.NewNull(i8ptr)), store, parse)
	n := parse.NewCall(atoi, p)
	n2 := parse.NewSelect(parse.NewICmp(enum.IPredSLT, n, constant.NewInt(types.I32, 0)), constant.NewInt(types.I32, 0), n)
	parse.NewBr(store)
	phi := store.NewPhi(ir.NewIncoming(constant.NewInt(types.I32, 0), compute), ir.NewIncoming(n2, parse))
	s := store.NewStore(phi, cache)
	s.Atomic, s.Ordering, s.Align = true, enum.AtomicOrderingMonotonic, 4
	store.NewRet(phi)
	m.numThreads = f
	return f
}
