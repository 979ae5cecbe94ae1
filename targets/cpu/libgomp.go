package cpu

import (
	"github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
)

// gompFns are the internal globals holding the libgomp entry points a
// module uses, set by its constructor.
type gompFns struct {
	parallel, threadNum, numThreads *ir.Global
}

// libgomp returns the module's libgomp function pointers, creating them
// and the module constructor tessera.init_libgomp on first use.
//
// The constructor runs when the object is loaded (or, linked into a
// program, before main):
//
//  1. setenv("OMP_WAIT_POLICY", "passive", 0): unless the user chose a
//     policy, idle libgomp workers sleep instead of spinning. libgomp
//     reads the variable once, when it initialises, so this only takes
//     effect when this constructor is what loads libgomp first — which is
//     why libgomp is not a link-time dependency of our objects (then it
//     would be initialised before any code of ours runs). A host that
//     loads libgomp earlier (another library, -lgomp) keeps its policy.
//     Passive waiting costs a futex wake-up per parallel region (µs) but
//     frees the cores between regions: on a busy 2-core machine a
//     spinning worker costs milliseconds.
//  2. dlopen("libgomp.so.1", RTLD_NOW | RTLD_NODELETE) and dlsym
//     GOMP_parallel, omp_get_thread_num, omp_get_num_threads. NODELETE
//     pins libgomp: its worker threads outlive parallel regions, and
//     unmapping it when a process dlcloses our .so (the tuner loads and
//     closes many) would crash them. Our own object stays unloadable.
//
// If libgomp cannot be loaded, the pointers stay null and parallel loops
// run serially on the calling thread.
func (m *mgen) libgomp() *gompFns {
	if m.gomp != nil {
		return m.gomp
	}
	fnT := types.NewPointer(types.NewFunc(types.Void, i8ptr))
	parT := types.NewPointer(types.NewFunc(types.Void, fnT, i8ptr, types.I32, types.I32))
	intT := types.NewPointer(types.NewFunc(types.I32))
	global := func(name string, t *types.PointerType) *ir.Global {
		g := m.m.NewGlobalDef(name, constant.NewNull(t))
		g.Linkage = enum.LinkageInternal
		return g
	}
	fns := &gompFns{
		parallel:   global("tessera.GOMP_parallel", parT),
		threadNum:  global("tessera.omp_get_thread_num", intT),
		numThreads: global("tessera.omp_get_num_threads", intT),
	}

	const rtldNow, rtldNoDelete = 0x2, 0x1000
	f := m.m.NewFunc("tessera.init_libgomp", types.Void)
	f.Linkage = enum.LinkageInternal
	f.FuncAttrs = append(f.FuncAttrs, enum.FuncAttrNoUnwind)
	entry := f.NewBlock("entry")
	found := f.NewBlock("found")
	done := f.NewBlock("done")
	setenv := m.declare("setenv", types.I32, i8ptr, i8ptr, types.I32)
	dlopen := m.declare("dlopen", i8ptr, i8ptr, types.I32)
	dlsym := m.declare("dlsym", i8ptr, i8ptr, i8ptr)
	entry.NewCall(setenv, m.cstring("OMP_WAIT_POLICY"), m.cstring("passive"), constant.NewInt(types.I32, 0))
	h := entry.NewCall(dlopen, m.cstring("libgomp.so.1"), constant.NewInt(types.I32, rtldNow|rtldNoDelete))
	entry.NewCondBr(entry.NewICmp(enum.IPredEQ, h, constant.NewNull(i8ptr)), done, found)
	for _, s := range []struct {
		name string
		g    *ir.Global
	}{{"omp_get_thread_num", fns.threadNum}, {"omp_get_num_threads", fns.numThreads}, {"GOMP_parallel", fns.parallel}} {
		p := found.NewCall(dlsym, h, m.cstring(s.name))
		found.NewStore(found.NewBitCast(p, s.g.ContentType), s.g)
	}
	found.NewBr(done)
	done.NewRet(nil)

	entryT := types.NewStruct(types.I32, types.NewPointer(f.Sig), i8ptr)
	ctor := constant.NewStruct(entryT, constant.NewInt(types.I32, 65535), f, constant.NewNull(i8ptr))
	ctors := m.m.NewGlobalDef("llvm.global_ctors", constant.NewArray(types.NewArray(1, entryT), ctor))
	ctors.Linkage = enum.LinkageAppending
	m.gomp = fns
	return fns
}
