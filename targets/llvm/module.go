package llvm

import (
	"fmt"
	"sort"

	"github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// Entry is one exported entry point of a compiled module: the C symbol
// and the PrimFunc it runs.
type Entry struct {
	Symbol string
	Func   *tir.PrimFunc
}

// Result is a compiled module: the LLVM module (print it with LLVM), its
// exported entry points and whether it launches parallel loops (through
// libgomp, which the module loads itself: see libgomp.go).
type Result struct {
	Module       *ir.Module
	Entries      []Entry
	UsesParallel bool
	// ProfileSites names the callee of each probed tir.call, by site
	// number (Options.Profile; empty otherwise).
	ProfileSites []string
	opts         Options
	// blobs are the constants of at least blobBytes bytes (blob.go).
	blobs []*ir.Global
	// parts, when positive, is the number of parts code generation splits
	// the module into instead of partCount's (split.go; for tests).
	parts int
	// texts holds the compacted functions (compact.go), whose blocks
	// the module no longer has.
	texts map[*ir.Func]funcText
}

// LLVM returns the module as LLVM 16 assembly text (typed pointers).
func (r *Result) LLVM() string { return r.text(r.Module).String() }

// mgen is the state of one module's code generation.
type mgen struct {
	opts         Options
	m            *ir.Module
	funcs        map[*tir.PrimFunc]*ir.Func
	decls        map[string]*ir.Func
	strs         map[string]*ir.Global
	nOutlined    int
	usesParallel bool
	numThreads   *ir.Func
	gomp         *gompFns
	byName       map[string]*tir.PrimFunc
	nConsts      int
	nBlocks      int
	blocks       *ir.Global // the list of kept blocks (codegen_heap.go)
	blobs        []*ir.Global
	// aligned holds the padded strides of buffers that storage_align
	// annotated (tir.AlignedStrides), for allocation and addressing.
	aligned map[*tir.Buffer][]int64
	// device is set for NVPTX kernels (nvptx.go); launch holds the launch
	// extent of each thread axis of the kernel being generated and shared
	// its static shared memory in bytes so far.
	device        bool
	launch        map[string]int64
	shared        int64
	sharedGlobals map[*tir.Buffer]*ir.Global
	// prof is the probe state of a module compiled with Options.Profile.
	prof *profiler
	// argRanges are the ranges of the kernels' buffer parameters at every
	// call (arg_ranges.go); values those of the kernel being generated:
	// what its buffers hold (nil for a kernel without argRanges).
	argRanges map[*tir.PrimFunc]map[*tir.Buffer]tir.ValueRange
	values    *tir.StoredRanges
	// texts are the compacted functions and generated the instruction
	// count of the kernels finished so far (compact.go).
	texts     map[*ir.Func]funcText
	generated int
}

// Compile lowers every PrimFunc of mod to an LLVM function and exports
// the entry points.
//
// Each PrimFunc @f becomes an internal function @f.kernel whose
// parameters are, in order, a pointer to the first element of each buffer
// parameter (float* for f32, i8* for i1 buffers, ...) and each scalar
// parameter by value (i64 for index). A PrimFunc with a global_symbol
// attribute (tensorir.StringAttr) is also exported as
//
//	int32_t <symbol>(T0 *p0, T1 *p1, ..., int64_t n, ...)
//
// in parameter order (inputs and outputs as the PrimFunc lists them),
// returning 0; with Options.Prefix the symbol is <Prefix>_<func name>.
// Buffer parameters are noalias (C restrict, as in TVM): distinct buffer
// parameters must not overlap in memory; a computation in place takes one
// inout buffer, not the same pointer twice. Only a function that some
// tir.call in the module passes overlapping buffers (the same buffer
// twice, or arena buffers sharing bytes) drops noalias.
//
// Host functions (tensorir/host.go) compile like kernels: tir.call is a
// direct call of the callee's internal function, tir.constant data
// becomes a private unnamed_addr constant (.rodata) and tir.arena one
// per-call block of memory (codegen_host.go).
// Compile verifies mod (tensorir.Verify) first; errors are diagnostics
// with source locations for unsupported constructs (thread-bound loops,
// bf16, loops that cannot be vectorized, ...). The CPU target runs its
// post-schedule pass first (compact-buffer-allocation; targets.Build runs
// both): each cache is then allocated where it is used, at the size of
// its tile, so a tile inside a parallel loop is a per-thread stack array
// rather than a full-size heap buffer. Compile itself runs no pass.
func Compile(mod *tir.Module, opts Options) (*Result, error) {
	if err := tir.Verify(mod); err != nil {
		return nil, err
	}
	g := newMgen(opts, TargetTriple, DataLayout, false)
	res := &Result{Module: g.m, opts: opts}
	if opts.Profile {
		g.prof = newProfiler(g.m, opts.Prefix)
	}
	// Declare every kernel first so that functions may call each other.
	aliased := aliasedCallees(mod)
	g.argRanges = argRanges(mod, aliased)
	for _, pf := range mod.Funcs {
		g.byName[pf.Name] = pf
		params, err := llvmParams(pf, 0, !aliased[pf.Name])
		if err != nil {
			return nil, err
		}
		f := g.m.NewFunc(pf.Name+".kernel", types.Void, params...)
		f.Linkage = enum.LinkageInternal
		f.FuncAttrs = append(f.FuncAttrs, enum.FuncAttrNoUnwind)
		g.funcs[pf] = f
	}
	symbols := map[string]bool{}
	for _, pf := range mod.Funcs {
		from := len(g.m.Funcs)
		if err := g.emitKernel(pf); err != nil {
			return nil, err
		}
		g.compactGroup(pf, from)
		sym, ok := pf.Attrs[tir.AttrGlobalSymbol].(tir.StringAttr)
		if !ok {
			continue
		}
		name := string(sym)
		if opts.Prefix != "" {
			name = opts.Prefix + "_" + pf.Name
		}
		if symbols[name] || name == "" {
			return nil, tir.Errorf(pf.Loc, "@%s: exported symbol %q is empty or not unique", pf.Name, name)
		}
		symbols[name] = true
		g.emitEntry(name, pf)
		res.Entries = append(res.Entries, Entry{Symbol: name, Func: pf})
	}
	sort.Slice(res.Entries, func(i, j int) bool { return res.Entries[i].Symbol < res.Entries[j].Symbol })
	res.UsesParallel = g.usesParallel
	res.ProfileSites = g.profileSites()
	res.blobs = g.blobs
	res.texts = g.texts
	return res, nil
}

// llvmParams are pf's parameters as LLVM parameters: buffers as pointers
// into address space addr (noalias when asked), scalars by value.
func llvmParams(pf *tir.PrimFunc, addr types.AddrSpace, noalias bool) ([]*ir.Param, error) {
	params := make([]*ir.Param, len(pf.Params))
	for i, p := range pf.Params {
		t, err := paramType(p)
		if err != nil {
			return nil, tir.Errorf(p.Loc, "parameter %%%s of @%s: %v", p.Name(), pf.Name, err)
		}
		if pt, ok := t.(*types.PointerType); ok && addr != 0 {
			t = &types.PointerType{ElemType: pt.ElemType, AddrSpace: addr}
		}
		params[i] = ir.NewParam(p.Name(), t)
		if p.Buffer != nil && noalias {
			params[i].Attrs = append(params[i].Attrs, enum.ParamAttrNoAlias)
		}
	}
	return params, nil
}

// newMgen starts a module's code generation for a target triple and data
// layout; device selects NVPTX kernels (nvptx.go).
func newMgen(opts Options, triple, layout string, device bool) *mgen {
	g := &mgen{
		opts:   opts,
		m:      ir.NewModule(),
		funcs:  map[*tir.PrimFunc]*ir.Func{},
		decls:  map[string]*ir.Func{},
		strs:   map[string]*ir.Global{},
		byName: map[string]*tir.PrimFunc{},
		device: device,
		texts:  map[*ir.Func]funcText{},
	}
	g.m.SourceFilename = "tessera"
	g.m.TargetTriple = triple
	g.m.DataLayout = layout
	return g
}

// paramType is the LLVM type of a PrimFunc parameter: a pointer to the
// buffer's storage type, or a scalar's register type.
func paramType(p *tir.Param) (types.Type, error) {
	if p.Buffer != nil {
		t, err := storageType(p.Buffer.DType)
		if err != nil {
			return nil, err
		}
		return types.NewPointer(t), nil
	}
	return regType(p.Var.Type)
}

// emitKernel generates the body of pf's internal function.
func (m *mgen) emitKernel(pf *tir.PrimFunc) error {
	f := m.funcs[pf]
	if m.aligned == nil {
		m.aligned = map[*tir.Buffer][]int64{}
	}
	for b, st := range tir.AlignedStrides(pf) {
		m.aligned[b] = st
	}
	m.values = nil
	if r, ok := m.argRanges[pf]; ok {
		m.values = tir.NewStoredRanges(pf.Body, knownInputs(pf, r))
	}
	g := newFgen(m, f)
	for i, p := range pf.Params {
		if p.Buffer != nil {
			g.bufs[p.Buffer] = f.Params[i]
		} else {
			g.vars[p.Var] = f.Params[i]
		}
	}
	if err := g.stmt(pf.Body); err != nil {
		return err
	}
	g.finish(nil)
	return nil
}

// emitEntry emits the exported wrapper int32_t name(params...) that calls
// pf's kernel and returns 0.
func (m *mgen) emitEntry(name string, pf *tir.PrimFunc) {
	k := m.funcs[pf]
	params := make([]*ir.Param, len(k.Params))
	args := make([]value.Value, len(k.Params))
	for i, p := range k.Params {
		params[i] = ir.NewParam(p.Name(), p.Typ)
		args[i] = params[i]
	}
	f := m.m.NewFunc(name, types.I32, params...)
	f.FuncAttrs = append(f.FuncAttrs, enum.FuncAttrNoUnwind)
	b := f.NewBlock("entry")
	b.NewCall(k, args...)
	b.NewRet(constant.NewInt(types.I32, 0))
}

// cstring returns an i8* to a private NUL-terminated string constant.
func (m *mgen) cstring(s string) constant.Constant {
	g, ok := m.strs[s]
	if !ok {
		init := constant.NewCharArrayFromString(s + "\x00")
		g = m.m.NewGlobalDef(fmt.Sprintf(".str.%d", len(m.strs)), init)
		g.Linkage = enum.LinkagePrivate
		g.UnnamedAddr = enum.UnnamedAddrUnnamedAddr
		g.Immutable = true
		m.strs[s] = g
	}
	zero := constant.NewInt(types.I64, 0)
	return constant.NewGetElementPtr(g.ContentType, g, zero, zero)
}

// EmbedData adds symbol, an exported read-only char array holding data
// and a terminating NUL byte, placed in the ELF section section: a reader
// finds it by section name without loading the object
// (runtime.ReadSignature), a C program with dlsym. Errors: the module
// already defines symbol.
func (r *Result) EmbedData(symbol, section string, data []byte) error {
	for _, g := range r.Module.Globals {
		if g.Name() == symbol {
			return fmt.Errorf("cannot embed %s: the module already defines it", symbol)
		}
	}
	for _, f := range r.Module.Funcs {
		if f.Name() == symbol {
			return fmt.Errorf("cannot embed %s: the module already defines it", symbol)
		}
	}
	g := r.Module.NewGlobalDef(symbol, constant.NewCharArrayFromString(string(data)+"\x00"))
	g.Immutable = true
	g.Section = section
	g.Align = 1
	return nil
}
