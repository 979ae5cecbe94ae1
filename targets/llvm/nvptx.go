package llvm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/metadata"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// NVPTX code generation (the CUDA target's device code; targets/cuda).
//
// A GPU kernel is a PrimFunc whose loops are bound to thread axes (the
// bind primitive). It becomes an external LLVM function of the
// nvptx64-nvidia-cuda triple, marked as a kernel in !nvvm.annotations
// (with its block size as maxntid), whose buffer parameters are pointers
// into global memory (address space 1). A loop bound to blockIdx.x/y/z or
// threadIdx.x/y/z is not a loop: its variable is the special register
// (llvm.nvvm.read.ptx.sreg.ctaid.* / tid.*) plus the loop's min, and the
// launch extent of the axis is the largest extent bound to it in the
// kernel; a loop of a smaller extent is guarded by "register < extent"
// (TVM's convention). vthread loops run serially in the thread. An
// Allocate of scope shared is a static array in shared memory (address
// space 3, one per allocation); scope local is a per-thread alloca;
// global-scope allocation inside a kernel is refused (the host allocates
// device memory). Host statements (tir.call, tir.constant, tir.arena) are
// refused: they run on the host, not in a kernel.
//
// The device has no libm: intrinsics the CPU target takes from libm (every
// f64 transcendental: exp, log, pow, sin, ..., atanh) are refused with the
// name of the intrinsic. In f32, exp, tanh, sigmoid, erf, log, pow, atan,
// asin, acos, sinh, cosh, asinh, acosh and atanh are Tessera's own code
// (mathfns.go, mathfns_log.go: their stated ulp bounds); f32 sin, cos and
// tan are refused as well for now, since their path for |x| > 2^27 calls
// libm's double sin/cos/tan (mathfns_trig.go). sqrt, fabs, fma, floor and
// ceil are LLVM intrinsics that NVPTX selects to single instructions
// (sqrt.rn.f32, ...).

// NVPTX target triple and data layout (LLVM 16's NVPTX backend, 64-bit).
const (
	NVPTXTriple     = "nvptx64-nvidia-cuda"
	NVPTXDataLayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
)

// Address spaces of NVPTX (LLVM NVPTX backend: 1 global, 3 shared).
const (
	addrGlobal = 1
	addrShared = 3
)

// threadAxes are the bound thread tags with their special registers.
var threadAxes = map[string]string{
	"blockIdx.x": "ctaid.x", "blockIdx.y": "ctaid.y", "blockIdx.z": "ctaid.z",
	"threadIdx.x": "tid.x", "threadIdx.y": "tid.y", "threadIdx.z": "tid.z",
}

// DeviceKernel is a compiled GPU kernel and its launch configuration.
type DeviceKernel struct {
	// Name is the kernel's PTX entry name (the PrimFunc's name).
	Name string
	Func *tir.PrimFunc
	// Grid and Block are the launch extents along x, y, z (1 where no
	// loop is bound to the axis).
	Grid, Block [3]int64
	// SharedBytes is the static shared memory of the kernel in bytes.
	SharedBytes int64
}

// Threads is the number of threads per block.
func (k DeviceKernel) Threads() int64 { return k.Block[0] * k.Block[1] * k.Block[2] }

// DeviceResult is an NVPTX module: its LLVM module and kernels.
type DeviceResult struct {
	Module  *ir.Module
	Kernels []DeviceKernel
	opts    Options
}

// LLVM returns the module as LLVM 16 assembly text.
func (r *DeviceResult) LLVM() string { return r.Module.String() }

// LaunchExtents returns the launch extent of each thread axis of f bound
// in it: the largest constant extent of the loops bound to the axis.
// Errors: a bound loop whose extent is not a constant, or an unknown tag.
func LaunchExtents(f *tir.PrimFunc) (map[string]int64, error) {
	ext := map[string]int64{}
	var bad error
	tir.VisitStmt(f.Body, func(s tir.Stmt) bool {
		l, ok := s.(*tir.For)
		if !ok || l.Kind != tir.ThreadBinding || bad != nil {
			return bad == nil
		}
		if l.Thread == "vthread" {
			return true
		}
		if _, known := threadAxes[l.Thread]; !known {
			bad = tir.Errorf(l.Loc, "loop %%%s: unknown thread tag %q", l.Var.Name, l.Thread)
			return false
		}
		c, ok := l.Extent.(*tir.IntImm)
		if !ok {
			bad = tir.Errorf(l.Loc, "loop %%%s bound to %s has a non-constant extent %s", l.Var.Name, l.Thread, tir.ExprString(l.Extent))
			return false
		}
		ext[l.Thread] = max(ext[l.Thread], c.Value)
		return true
	})
	return ext, bad
}

// CompileNVPTX compiles every PrimFunc of mod as a GPU kernel for
// opts.MCPU (an sm_XX name). mod must hold kernels only (the host
// function stays on the host). Errors: located diagnostics for what a
// kernel cannot hold (host statements, global allocations, libm
// intrinsics, non-constant thread extents, ...).
func CompileNVPTX(mod *tir.Module, opts Options) (*DeviceResult, error) {
	if err := tir.Verify(mod); err != nil {
		return nil, err
	}
	g := newMgen(opts, NVPTXTriple, NVPTXDataLayout, true)
	res := &DeviceResult{Module: g.m, opts: opts}
	annotations := &metadata.NamedDef{Name: "nvvm.annotations"}
	for _, pf := range mod.Funcs {
		k, err := g.emitDeviceKernel(pf)
		if err != nil {
			return nil, err
		}
		res.Kernels = append(res.Kernels, k)
		annotations.Nodes = append(annotations.Nodes, g.kernelAnnotations(g.funcs[pf], k)...)
	}
	g.m.NamedMetadataDefs[annotations.Name] = annotations
	sort.Slice(res.Kernels, func(i, j int) bool { return res.Kernels[i].Name < res.Kernels[j].Name })
	return res, nil
}

// emitDeviceKernel declares and generates pf as a kernel.
func (m *mgen) emitDeviceKernel(pf *tir.PrimFunc) (DeviceKernel, error) {
	k := DeviceKernel{Name: pf.Name, Func: pf, Grid: [3]int64{1, 1, 1}, Block: [3]int64{1, 1, 1}}
	ext, err := LaunchExtents(pf)
	if err != nil {
		return k, err
	}
	for tag, n := range ext {
		axis := int(tag[len(tag)-1] - 'x')
		if strings.HasPrefix(tag, "blockIdx") {
			k.Grid[axis] = n
		} else {
			k.Block[axis] = n
		}
	}
	params, err := llvmParams(pf, addrGlobal, true)
	if err != nil {
		return k, err
	}
	f := m.m.NewFunc(pf.Name, types.Void, params...)
	f.FuncAttrs = append(f.FuncAttrs, enum.FuncAttrNoUnwind)
	m.funcs[pf] = f
	m.launch = ext
	m.shared = 0
	m.sharedGlobals = map[*tir.Buffer]*ir.Global{}
	defer func() { m.launch = nil }()
	if err := m.emitKernel(pf); err != nil {
		return k, err
	}
	k.SharedBytes = m.shared
	return k, nil
}

// kernelAnnotations are the kernel's !nvvm.annotations entries: "kernel"
// and its block size as maxntidx/y/z.
func (m *mgen) kernelAnnotations(f *ir.Func, k DeviceKernel) []metadata.Node {
	entry := func(key string, v int64) metadata.Node {
		t := &metadata.Tuple{MetadataID: -1, Fields: []metadata.Field{
			f, &metadata.String{Value: key}, constant.NewInt(types.I32, v)}}
		m.m.MetadataDefs = append(m.m.MetadataDefs, t)
		return t
	}
	return []metadata.Node{entry("kernel", 1), entry("maxntidx", k.Block[0]), entry("maxntidy", k.Block[1]), entry("maxntidz", k.Block[2])}
}

// boundLoop generates a loop bound to a thread axis: the variable is the
// axis register plus the loop's min, guarded when the loop's extent is
// below the launch extent of the axis. vthread loops run serially.
func (g *fgen) boundLoop(x *tir.For) error {
	if !g.m.device {
		return g.errorf("loop %%%s is bound to %s: thread bindings are GPU constructs, not supported by the CPU target", x.Var.Name, x.Thread)
	}
	if x.Thread == "vthread" {
		return g.serialLoop(x)
	}
	if g.vec != nil {
		return g.errorf("loop %%%s bound to %s is inside a vectorized loop", x.Var.Name, x.Thread)
	}
	if outer, dup := g.boundAxes[x.Thread]; dup && (!strings.HasPrefix(x.Thread, "threadIdx") || tir.StmtUsesVar(x, outer)) {
		return g.errorf("loop %%%s is bound to %s inside another loop bound to %s and depends on it", x.Var.Name, x.Thread, x.Thread)
	}
	lo, ext, err := g.bounds(x)
	if err != nil {
		return err
	}
	reg := g.cur.NewCall(g.m.declare("llvm.nvvm.read.ptx.sreg."+threadAxes[x.Thread], types.I32))
	vt, err := regType(x.Var.Type)
	if err != nil {
		return g.errorf("loop %%%s: %v", x.Var.Name, err)
	}
	var idx value.Value = reg
	if it, ok := vt.(*types.IntType); ok && it.BitSize > 32 {
		idx = g.cur.NewZExt(reg, vt)
	}
	v := g.cur.NewAdd(lo, idx)
	body := func() error {
		saved, had := g.boundAxes[x.Thread]
		g.boundAxes[x.Thread] = x.Var
		defer func() {
			if had {
				g.boundAxes[x.Thread] = saved
			} else {
				delete(g.boundAxes, x.Thread)
			}
		}()
		return g.bind(x.Var, nil, v, func() error { return g.stmt(x.Body) })
	}
	if c, ok := x.Extent.(*tir.IntImm); ok && c.Value >= g.m.launch[x.Thread] {
		return body()
	}
	return g.ifThen(g.cur.NewICmp(enum.IPredSLT, idx, ext), body, nil)
}

// barrier generates a thread-block barrier (llvm.nvvm.barrier0, PTX
// bar.sync 0); the CPU target refuses it.
func (g *fgen) barrier() error {
	if !g.m.device {
		return g.errorf("tir.barrier is a GPU construct, not supported by the CPU target")
	}
	if g.vec != nil {
		return g.errorf("tir.barrier inside a vectorized loop")
	}
	g.cur.NewCall(g.m.declare("llvm.nvvm.barrier0", types.Void))
	return nil
}

// DeviceBufferAlign is the alignment in bytes NVPTX kernels assume for
// every buffer they receive or allocate (cuMemAlloc returns 256-byte
// aligned memory; shared arrays are 16-aligned; the arena places buffers
// at multiples of 64): the widest vector access, ld.global.v4.f32, needs
// 16.
const DeviceBufferAlign = 16

// vectorAlign is the alignment of a contiguous vector access in a GPU
// kernel: the vector's size when the lane-0 element offset is provably a
// multiple of the lane count (then NVPTX emits one ld/st.v2 or .v4),
// else elem, the element's; CPU code keeps elem.
func (g *fgen) vectorAlign(a *access, elem ir.Align) ir.Align {
	lanes := int64(g.vec.lanes)
	bytes := lanes * tir.ElemBytes(a.buf.DType)
	if !g.m.device || bytes > DeviceBufferAlign || bytes&(bytes-1) != 0 {
		return elem
	}
	lane0 := tir.Substitute(g.vec.expand(a.flat), map[*tir.Var]tir.Expr{g.vec.v: g.vec.min})
	if multipleOf(tir.Simplify(lane0, nil), lanes) {
		return ir.Align(bytes)
	}
	return elem
}

// multipleOf reports whether integer expression e is a multiple of k for
// every value of its variables: a constant multiple, a sum or difference
// of multiples, a product with a multiple factor (casts see through).
func multipleOf(e tir.Expr, k int64) bool {
	switch x := e.(type) {
	case *tir.IntImm:
		return x.Value%k == 0
	case *tir.Cast:
		return x.Type.IsInt() && multipleOf(x.X, k)
	case *tir.Binary:
		switch x.Op {
		case tir.OpAdd, tir.OpSub:
			return multipleOf(x.A, k) && multipleOf(x.B, k)
		case tir.OpMul:
			return multipleOf(x.A, k) || multipleOf(x.B, k)
		case tir.OpFloorMod: // a − m·q: a multiple when a and m are
			return multipleOf(x.A, k) && multipleOf(x.B, k)
		}
	}
	return false
}

// sharedAlloc gives a shared-scope buffer of constant size a static array
// in shared memory (address space 3) for the duration of body.
func (g *fgen) sharedAlloc(buf *tir.Buffer, st types.Type, n tir.Expr, body func() error) error {
	c, ok := n.(*tir.IntImm)
	if !ok {
		return g.errorf("shared buffer %%%s has a non-constant size %s (dynamic shared memory is not supported yet)", buf.Name, tir.ExprString(n))
	}
	arr := types.NewArray(uint64(max(c.Value, 1)), st)
	// One array per buffer: code generated twice (a versioned loop) shares
	// it, as the block's threads must.
	glob, ok := g.m.sharedGlobals[buf]
	if !ok {
		glob = g.m.m.NewGlobalDef(fmt.Sprintf("%s.%s.shared.%d", g.f.Name(), buf.Name, len(g.m.sharedGlobals)), constant.NewUndef(arr))
		glob.Linkage = enum.LinkageInternal
		glob.Align = 16
		glob.AddrSpace = addrShared
		glob.Typ = &types.PointerType{ElemType: arr, AddrSpace: addrShared}
		g.m.sharedGlobals[buf] = glob
		g.m.shared += c.Value * tir.ElemBytes(buf.DType)
	}
	g.bufs[buf] = constant.NewGetElementPtr(arr, glob, iconst(0), iconst(0))
	defer delete(g.bufs, buf)
	return body()
}

// ptrTo is a pointer to t in the address space of p's pointer type.
func ptrTo(t types.Type, p value.Value) *types.PointerType {
	if pt, ok := p.Type().(*types.PointerType); ok {
		return &types.PointerType{ElemType: t, AddrSpace: pt.AddrSpace}
	}
	return types.NewPointer(t)
}

// addrSuffix is the pointer part of an overloaded memory intrinsic's name
// (".p0", ".p1", ...) for pointer p.
func addrSuffix(p value.Value) string {
	if pt, ok := p.Type().(*types.PointerType); ok {
		return fmt.Sprintf(".p%d", pt.AddrSpace)
	}
	return ".p0"
}

// PTX optimises the module with opt-16 -O3 and compiles it with llc-16
// -march=nvptx64 -mcpu=<sm> to PTX assembly (fp contraction as for the
// CPU: fast unless Options.StrictFP). Where opt-16 or llc-16 is missing
// but clang-16 exists (a machine with only the compiler installed), clang
// runs the same two steps (--target=nvptx64-nvidia-cuda -march=<sm>).
// Errors: the toolchain's, with its output.
func (r *DeviceResult) PTX() ([]byte, error) {
	dir, err := os.MkdirTemp("", "tessera-ptx-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "module.ll")
	if err := writeText(in, r.Module); err != nil {
		return nil, err
	}
	optTool, optErr := findTool("opt-16", "llvm-16")
	llc, llcErr := findTool("llc-16", "llvm-16")
	var ptx []byte
	if optErr == nil && llcErr == nil {
		ptx, err = r.ptxWithLLC(optTool, llc, in)
	} else {
		clang, cerr := findTool("clang-16", "clang-16")
		if cerr != nil {
			return nil, errors.Join(optErr, llcErr)
		}
		ptx, err = r.ptxWithClang(clang, in)
	}
	if err != nil {
		return nil, err
	}
	return fixSignedBFE(ptx), nil
}

// unsignedBFE matches a PTX bit-field extract: bfe.u32/u64 d, a, pos, len.
var unsignedBFE = regexp.MustCompile(`bfe\.u(32|64)(\s+)(%\w+),\s*(%\w+),\s*(\d+),\s*(\d+);`)

// fixSignedBFE works around a miscompilation of LLVM 16's NVPTX backend
// (fixed in LLVM 21, llvm/llvm-project#130862): it selects an unsigned
// bfe for (and (sra x, pos), 2^len − 1) even where the field extends past
// the most significant bit, whose copies the arithmetic shift puts there
// and the unsigned extract replaces with zeros (a signed extract would
// sign-extend the field instead). Index arithmetic such as
// floordiv(t, 4)*6 + floormod(floordiv(t, 2), 2)*3 becomes exactly that.
// A field past the msb comes only from an arithmetic shift (a logical
// one's mask is narrowed to the bits that exist first), so such an
// extract is replaced by the shift and the mask it stands for.
func fixSignedBFE(ptx []byte) []byte {
	return unsignedBFE.ReplaceAllFunc(ptx, func(m []byte) []byte {
		g := unsignedBFE.FindSubmatch(m)
		width, _ := strconv.Atoi(string(g[1]))
		pos, _ := strconv.Atoi(string(g[5]))
		n, _ := strconv.Atoi(string(g[6]))
		if pos+n <= width {
			return m
		}
		w, d, a := string(g[1]), string(g[3]), string(g[4])
		return []byte(fmt.Sprintf("shr.s%s%s%s, %s, %d;\n\tand.b%s%s%s, %s, %d;", w, g[2], d, a, pos, w, g[2], d, d, uint64(1)<<n-1))
	})
}

// ptxWithLLC compiles the IR file in with opt-16 and llc-16.
func (r *DeviceResult) ptxWithLLC(optTool, llc, in string) ([]byte, error) {
	bc, out := in+".bc", in+".ptx"
	mcpu := "-mcpu=" + r.opts.MCPU
	if err := runTool(optTool, "-O3", mcpu, in, "-o", bc); err != nil {
		return nil, err
	}
	if err := runTool(llc, "-O3", "-march=nvptx64", mcpu, r.opts.fpContract(), bc, "-o", out); err != nil {
		return nil, err
	}
	return os.ReadFile(out)
}

// ptxWithClang compiles the IR file in with clang-16 in the same two steps.
func (r *DeviceResult) ptxWithClang(clang, in string) ([]byte, error) {
	bc, out := in+".bc", in+".ptx"
	nvptx := []string{"--target=nvptx64-nvidia-cuda", "-march=" + r.opts.MCPU, "-O3", "-x", "ir"}
	if err := runTool(clang, append(nvptx, "-c", "-emit-llvm", in, "-o", bc)...); err != nil {
		return nil, err
	}
	if err := runTool(clang, append(nvptx, "-S", "-f"+strings.TrimPrefix(r.opts.fpContract(), "-"), bc, "-o", out)...); err != nil {
		return nil, err
	}
	return os.ReadFile(out)
}
