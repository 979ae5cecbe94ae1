package cuda

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tessera-ml/tessera/targets"
	"github.com/tessera-ml/tessera/targets/llvm"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// The C ABI of a CUDA model (--emit obj, -o model.o): an x86-64 object
// holding the PTX, the weights and two entry points that call the CUDA
// driver API (link with -lcuda):
//
//	int32_t <prefix>_main(const float *in0, ..., float *out0);
//	int32_t <prefix>_main_device(uint64_t in0, ..., uint64_t out0, void *stream);
//
// <prefix>_main_device takes device pointers (CUdeviceptr) and a CUstream
// and enqueues the kernels on the stream without waiting;
// <prefix>_main takes host pointers, as the CPU target's entry point does:
// it copies the inputs to the device, runs <prefix>_main_device on the
// default stream, waits (cuCtxSynchronize) and copies the outputs back,
// using the current context or, when none is current, device 0's primary
// context. The first call of either loads the PTX into the current
// context (cuModuleLoadData), uploads the weights and allocates the
// intermediate buffers, all kept for later calls: calls must come from
// that context and must not overlap (the intermediates are shared). The
// return value is 0 or the first failing CUresult.
//
// The object is generated as LLVM assembly text (a fixed stub around the
// plan: a sequence of driver calls, each checked) and compiled by llc-16.

// writeObject writes the object and, beside it, its header.
func (a *Artifact) writeObject(path string) error {
	if a.Prefix == "" {
		return fmt.Errorf("cuda: --emit obj needs a symbol prefix (--name or the output file's name)")
	}
	if len(a.Plans) != 1 {
		return fmt.Errorf("cuda: --emit obj needs a model with one entry point (this one has %d)", len(a.Plans))
	}
	var sym string
	var plan *targets.HostPlan
	for s, p := range a.Plans {
		sym, plan = s, p
	}
	ptx, err := a.Device.PTX()
	if err != nil {
		return err
	}
	text, err := hostStub(sym, plan, ptx, a.launches())
	if err != nil {
		return err
	}
	if err := llvm.CompileObject(text, path); err != nil {
		return err
	}
	return a.writeHeader(strings.TrimSuffix(path, filepath.Ext(path))+".h", sym, plan)
}

// entryFunc is the host function (or exported kernel) named name.
func (a *Artifact) entryFunc(name string) *tir.PrimFunc {
	for _, f := range a.Host {
		if f.Name == name {
			return f
		}
	}
	return a.kernels.Func(name)
}

// writeHeader declares both entry points.
func (a *Artifact) writeHeader(path, sym string, plan *targets.HostPlan) error {
	f := a.entryFunc(plan.Entry)
	if f == nil {
		return fmt.Errorf("cuda: the artifact has no function @%s", plan.Entry)
	}
	doc, decl, names := llvm.HeaderParams(llvm.SignatureOf(f, false))
	dev := make([]string, len(names))
	for i, n := range names {
		dev[i] = "uint64_t " + n
	}
	var b strings.Builder
	fmt.Fprintf(&b, "/* %s runs @%s on the GPU and returns 0 or the first failing CUresult.\n", sym, plan.Entry)
	b.WriteString(doc)
	b.WriteString(" * It copies the inputs to the device, runs the kernels on the default stream,\n")
	b.WriteString(" * waits and copies the outputs back, in the current CUDA context (device 0's\n")
	b.WriteString(" * primary context when none is current).\n")
	fmt.Fprintf(&b, " * %s_device takes device pointers (CUdeviceptr) instead and a CUstream, and\n", sym)
	b.WriteString(" * enqueues the kernels without waiting.\n")
	b.WriteString(" * The first call loads the PTX into the current context, uploads the weights and\n")
	b.WriteString(" * allocates the intermediate buffers, kept for later calls: call from that\n")
	b.WriteString(" * context, one call at a time. Link with -lcuda.\n */\n")
	fmt.Fprintf(&b, "int32_t %s(%s);\n", sym, strings.Join(decl, ", "))
	fmt.Fprintf(&b, "int32_t %s_device(%s);\n", sym, strings.Join(append(dev, "void *stream"), ", "))
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := llvm.WriteHeaderFile(out, a.Prefix, b.String()); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// cudaDecls are the driver entry points the stub calls (the _v2 ABI).
const cudaDecls = `declare i32 @cuInit(i32)
declare i32 @cuDeviceGet(ptr, i32)
declare i32 @cuDevicePrimaryCtxRetain(ptr, i32)
declare i32 @cuCtxGetCurrent(ptr)
declare i32 @cuCtxSetCurrent(ptr)
declare i32 @cuCtxSynchronize()
declare i32 @cuModuleLoadData(ptr, ptr)
declare i32 @cuModuleGetFunction(ptr, ptr, ptr)
declare i32 @cuMemAlloc_v2(ptr, i64)
declare i32 @cuMemFree_v2(i64)
declare i32 @cuMemcpyHtoD_v2(i64, ptr, i64)
declare i32 @cuMemcpyDtoH_v2(ptr, i64, i64)
declare i32 @cuLaunchKernel(ptr, i32, i32, i32, i32, i32, i32, i32, ptr, ptr, ptr)
`

// irGen writes one function's instructions, numbering values and
// labels, with checked driver calls: a failing call returns (or jumps to
// a cleanup label with) its status.
type irGen struct {
	b    strings.Builder
	n    int
	fail string // label taken on a failing call ("": return the status)
	st   string // the status slot the cleanup returns
}

func (g *irGen) val() string { g.n++; return fmt.Sprintf("%%v%d", g.n) }

func (g *irGen) emit(format string, args ...any) { fmt.Fprintf(&g.b, "  "+format+"\n", args...) }

// check calls the driver and continues only on CUDA_SUCCESS.
func (g *irGen) check(call string) {
	s := g.val()
	g.emit("%s = call i32 %s", s, call)
	c := g.val()
	g.emit("%s = icmp ne i32 %s, 0", c, s)
	g.when(c, func(string) {
		if g.fail == "" {
			g.emit("ret i32 %s", s)
		} else {
			g.emit("store i32 %s, ptr %s", s, g.st)
			g.emit("br label %%%s", g.fail)
		}
	})
}

// when emits then (which must end its block, returning or branching to
// the label it is given) in a block taken when i1 value cond holds; code
// continues at that label.
func (g *irGen) when(cond string, then func(cont string)) {
	g.n++
	yes, no := fmt.Sprintf("then%d", g.n), fmt.Sprintf("else%d", g.n)
	g.emit("br i1 %s, label %%%s, label %%%s", cond, yes, no)
	fmt.Fprintf(&g.b, "%s:\n", yes)
	then(no)
	fmt.Fprintf(&g.b, "%s:\n", no)
}

// hostStub is the LLVM assembly of the object (see above).
func hostStub(sym string, plan *targets.HostPlan, ptx []byte, kernels map[string]launch) (string, error) {
	var m strings.Builder
	fmt.Fprintf(&m, "target triple = %q\ntarget datalayout = %q\n\n", llvm.TargetTriple, llvm.DataLayout)
	fmt.Fprintf(&m, "@ptx = private unnamed_addr constant [%d x i8] c\"%s\\00\", align 1\n", len(ptx)+1, irBytes(ptx))
	m.WriteString("@module = internal global ptr null\n@ready = internal global i1 false\n")
	fnIndex := map[string]int{}
	var order []string
	for _, c := range plan.Calls {
		if _, ok := kernels[c.Kernel]; !ok {
			return "", fmt.Errorf("cuda: the plan calls @%s, which the module does not hold", c.Kernel)
		}
		if _, ok := fnIndex[c.Kernel]; !ok {
			fnIndex[c.Kernel] = len(order)
			order = append(order, c.Kernel)
			fmt.Fprintf(&m, "@kname%d = private unnamed_addr constant [%d x i8] c\"%s\\00\", align 1\n", len(order)-1, len(c.Kernel)+1, irBytes([]byte(c.Kernel)))
			fmt.Fprintf(&m, "@fn%d = internal global ptr null\n", len(order)-1)
		}
	}
	param := map[int]int{} // buffer id → entry parameter position
	for i, id := range plan.Params {
		param[id] = i
	}
	sizes := make([]int64, len(plan.Bufs))
	for id, b := range plan.Bufs {
		n, err := bufBytes(b)
		if err != nil {
			return "", err
		}
		sizes[id] = max(n, 1)
		if _, ok := param[id]; ok {
			continue
		}
		fmt.Fprintf(&m, "@dev%d = internal global i64 0\n", id)
		if b.Const != nil {
			fmt.Fprintf(&m, "@const%d = private unnamed_addr constant [%d x i8] c\"%s\", align 16\n", id, len(b.Const), irBytes(b.Const))
		}
	}
	m.WriteString("\n" + cudaDecls + "\n")
	m.WriteString(initFunc(sym, plan, param, sizes, order))
	m.WriteString(deviceFunc(sym, plan, param, fnIndex, kernels))
	m.WriteString(hostFunc(sym, plan, sizes))
	return m.String(), nil
}

// initFunc loads the module, finds the kernels, allocates the buffers
// that are not parameters and uploads the constants, once.
func initFunc(sym string, plan *targets.HostPlan, param map[int]int, sizes []int64, order []string) string {
	g := &irGen{}
	fmt.Fprintf(&g.b, "define internal i32 @%s_init() {\nentry:\n", sym)
	g.emit("%%r = load i1, ptr @ready")
	g.emit("br i1 %%r, label %%done, label %%load")
	g.b.WriteString("load:\n")
	g.check("@cuModuleLoadData(ptr @module, ptr @ptx)")
	mod := g.val()
	g.emit("%s = load ptr, ptr @module", mod)
	for i := range order {
		g.check(fmt.Sprintf("@cuModuleGetFunction(ptr @fn%d, ptr %s, ptr @kname%d)", i, mod, i))
	}
	for id, b := range plan.Bufs {
		if _, ok := param[id]; ok {
			continue
		}
		g.check(fmt.Sprintf("@cuMemAlloc_v2(ptr @dev%d, i64 %d)", id, sizes[id]))
		if b.Const != nil {
			p := g.val()
			g.emit("%s = load i64, ptr @dev%d", p, id)
			g.check(fmt.Sprintf("@cuMemcpyHtoD_v2(i64 %s, ptr @const%d, i64 %d)", p, id, len(b.Const)))
		}
	}
	g.emit("store i1 true, ptr @ready")
	g.emit("br label %%done")
	g.b.WriteString("done:\n  ret i32 0\n}\n\n")
	return g.b.String()
}

// deviceFunc is <sym>_device: the launches in plan order on the stream.
func deviceFunc(sym string, plan *targets.HostPlan, param map[int]int, fnIndex map[string]int, kernels map[string]launch) string {
	g := &irGen{}
	args := make([]string, len(plan.Params))
	for i := range plan.Params {
		args[i] = fmt.Sprintf("i64 %%p%d", i)
	}
	fmt.Fprintf(&g.b, "define i32 @%s_device(%s) {\nentry:\n", sym, strings.Join(append(args, "ptr %stream"), ", "))
	g.check(fmt.Sprintf("@%s_init()", sym))
	for _, c := range plan.Calls {
		n := len(c.Args)
		vals, ptrs := g.val(), g.val()
		g.emit("%s = alloca [%d x i64]", vals, max(n, 1))
		g.emit("%s = alloca [%d x ptr]", ptrs, max(n, 1))
		for j, id := range c.Args {
			v := fmt.Sprintf("%%p%d", param[id])
			if _, ok := param[id]; !ok {
				v = g.val()
				g.emit("%s = load i64, ptr @dev%d", v, id)
			}
			slot, ref := g.val(), g.val()
			g.emit("%s = getelementptr [%d x i64], ptr %s, i64 0, i64 %d", slot, n, vals, j)
			g.emit("store i64 %s, ptr %s", v, slot)
			g.emit("%s = getelementptr [%d x ptr], ptr %s, i64 0, i64 %d", ref, n, ptrs, j)
			g.emit("store ptr %s, ptr %s", slot, ref)
		}
		f := g.val()
		g.emit("%s = load ptr, ptr @fn%d", f, fnIndex[c.Kernel])
		k := kernels[c.Kernel]
		g.check(fmt.Sprintf("@cuLaunchKernel(ptr %s, i32 %d, i32 %d, i32 %d, i32 %d, i32 %d, i32 %d, i32 %d, ptr %%stream, ptr %s, ptr null)",
			f, k.Grid[0], k.Grid[1], k.Grid[2], k.Block[0], k.Block[1], k.Block[2], k.SharedBytes, ptrs))
	}
	g.b.WriteString("  ret i32 0\n}\n\n")
	return g.b.String()
}

// hostFunc is <sym>: device copies of the parameters around a
// synchronous <sym>_device call; a failure frees what was allocated and
// returns its status.
func hostFunc(sym string, plan *targets.HostPlan, sizes []int64) string {
	g := &irGen{fail: "cleanup", st: "%st"}
	args := make([]string, len(plan.Params))
	for i := range plan.Params {
		args[i] = fmt.Sprintf("ptr %%h%d", i)
	}
	fmt.Fprintf(&g.b, "define i32 @%s(%s) {\nentry:\n", sym, strings.Join(args, ", "))
	g.emit("%%st = alloca i32")
	g.emit("store i32 0, ptr %%st")
	for i := range plan.Params {
		g.emit("%%d%d = alloca i64", i)
		g.emit("store i64 0, ptr %%d%d", i)
	}
	g.emit("%%ctx = alloca ptr")
	g.emit("%%dev = alloca i32")
	// cuInit first: every other call fails with
	// CUDA_ERROR_NOT_INITIALIZED before it (repeating it is harmless).
	g.check("@cuInit(i32 0)")
	g.check("@cuCtxGetCurrent(ptr %ctx)")
	cur := g.val()
	g.emit("%s = load ptr, ptr %%ctx", cur)
	none := g.val()
	g.emit("%s = icmp eq ptr %s, null", none, cur)
	g.emit("br i1 %s, label %%primary, label %%copyin", none)
	g.b.WriteString("primary:\n")
	g.check("@cuDeviceGet(ptr %dev, i32 0)")
	d := g.val()
	g.emit("%s = load i32, ptr %%dev", d)
	g.check(fmt.Sprintf("@cuDevicePrimaryCtxRetain(ptr %%ctx, i32 %s)", d))
	c := g.val()
	g.emit("%s = load ptr, ptr %%ctx", c)
	g.check(fmt.Sprintf("@cuCtxSetCurrent(ptr %s)", c))
	g.emit("br label %%copyin")
	g.b.WriteString("copyin:\n")
	devArgs := make([]string, len(plan.Params))
	for i, id := range plan.Params {
		g.check(fmt.Sprintf("@cuMemAlloc_v2(ptr %%d%d, i64 %d)", i, sizes[id]))
		v := g.val()
		g.emit("%s = load i64, ptr %%d%d", v, i)
		devArgs[i] = "i64 " + v
		if plan.Bufs[id].Role != tir.RoleOut {
			g.check(fmt.Sprintf("@cuMemcpyHtoD_v2(i64 %s, ptr %%h%d, i64 %d)", v, i, sizes[id]))
		}
	}
	g.check(fmt.Sprintf("@%s_device(%s)", sym, strings.Join(append(devArgs, "ptr null"), ", ")))
	g.check("@cuCtxSynchronize()")
	for i, id := range plan.Params {
		if plan.Bufs[id].Role == tir.RoleIn {
			continue
		}
		v := g.val()
		g.emit("%s = load i64, ptr %%d%d", v, i)
		g.check(fmt.Sprintf("@cuMemcpyDtoH_v2(ptr %%h%d, i64 %s, i64 %d)", i, v, sizes[id]))
	}
	g.emit("br label %%cleanup")
	g.b.WriteString("cleanup:\n")
	for i := range plan.Params {
		v := g.val()
		g.emit("%s = load i64, ptr %%d%d", v, i)
		nz := g.val()
		g.emit("%s = icmp ne i64 %s, 0", nz, v)
		g.when(nz, func(cont string) {
			g.emit("call i32 @cuMemFree_v2(i64 %s)", v)
			g.emit("br label %%%s", cont)
		})
	}
	r := g.val()
	g.emit("%s = load i32, ptr %%st", r)
	g.emit("ret i32 %s", r)
	g.b.WriteString("}\n")
	return g.b.String()
}

// irBytes escapes b for an LLVM c"..." string: printable ASCII other than
// '"' and '\' as is, every other byte as \XX.
func irBytes(b []byte) string {
	var s strings.Builder
	s.Grow(len(b) * 2)
	const hex = "0123456789ABCDEF"
	for _, c := range b {
		if c >= 0x20 && c < 0x7f && c != '"' && c != '\\' {
			s.WriteByte(c)
			continue
		}
		s.WriteByte('\\')
		s.WriteByte(hex[c>>4])
		s.WriteByte(hex[c&15])
	}
	return s.String()
}
