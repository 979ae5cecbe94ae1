package llvm

import (
	"github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
)

// GOMPSpinCount is the GOMP_SPINCOUNT a compiled module sets when it
// loads libgomp and the user chose no wait policy (see libgomp).
const GOMPSpinCount = "10000"

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
//  1. Unless the user chose a wait policy (OMP_WAIT_POLICY) or a spin
//     count, setenv("GOMP_SPINCOUNT", "10000", 0): a libgomp worker that
//     finishes a parallel region busy-waits about 0.1–0.2 ms for the next
//     one before it sleeps. A model calls its kernels back to back, so the
//     workers stay awake between kernels instead of paying a futex
//     wake-up (≈50 µs measured on this 2-core VM) per parallel region —
//     ResNet-18's 24 kernels ran 10.9 ms with sleeping workers
//     (OMP_WAIT_POLICY=passive) and 10.0 ms with this spin count. The
//     bound keeps what made the old default, spin-forever-ish waiting
//     (libgomp's own 300,000 spins, milliseconds), cost milliseconds on a
//     busy machine from coming back: idle workers sleep after the short
//     spin. libgomp reads the variables once, when it initialises, so
//     this only takes effect when this constructor is what loads libgomp
//     first — which is why libgomp is not a link-time dependency of our
//     objects (then it would be initialised before any code of ours
//     runs). A host that loads libgomp earlier (another library, -lgomp)
//     keeps its policy.
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
	spin := f.NewBlock("spin")
	load := f.NewBlock("load")
	found := f.NewBlock("found")
	done := f.NewBlock("done")
	setenv := m.declare("setenv", types.I32, i8ptr, i8ptr, types.I32)
	getenv := m.declare("getenv", i8ptr, i8ptr)
	dlopen := m.declare("dlopen", i8ptr, i8ptr, types.I32)
	dlsym := m.declare("dlsym", i8ptr, i8ptr, i8ptr)
	policy := entry.NewCall(getenv, m.cstring("OMP_WAIT_POLICY"))
	entry.NewCondBr(entry.NewICmp(enum.IPredEQ, policy, constant.NewNull(i8ptr)), spin, load)
	spin.NewCall(setenv, m.cstring("GOMP_SPINCOUNT"), m.cstring(GOMPSpinCount), constant.NewInt(types.I32, 0))
	spin.NewBr(load)
	h := load.NewCall(dlopen, m.cstring("libgomp.so.1"), constant.NewInt(types.I32, rtldNow|rtldNoDelete))
	load.NewCondBr(load.NewICmp(enum.IPredEQ, h, constant.NewNull(i8ptr)), done, found)
	for _, s := range []struct {
		name string
		g    *ir.Global
	}{{"omp_get_thread_num", fns.threadNum}, {"omp_get_num_threads", fns.numThreads}, {"GOMP_parallel", fns.parallel}} {
		p := found.NewCall(dlsym, h, m.cstring(s.name))
		found.NewStore(found.NewBitCast(p, s.g.ContentType), s.g)
	}
	found.NewBr(done)
	done.NewRet(nil)

	m.structor("llvm.global_ctors", f)
	m.gomp = fns
	return fns
}

// structor registers f in the module's constructor (llvm.global_ctors)
// or destructor (llvm.global_dtors) list, at the default priority 65535:
// a one-element appending array, which the linker concatenates with the
// other objects'.
func (m *mgen) structor(list string, f *ir.Func) {
	entryT := types.NewStruct(types.I32, types.NewPointer(f.Sig), i8ptr)
	entry := constant.NewStruct(entryT, constant.NewInt(types.I32, 65535), f, constant.NewNull(i8ptr))
	g := m.m.NewGlobalDef(list, constant.NewArray(types.NewArray(1, entryT), entry))
	g.Linkage = enum.LinkageAppending
}
