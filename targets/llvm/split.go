package llvm

import (
	"fmt"
	"runtime"
	"sort"
	"strings"

	"github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/enum"
)

// splitInstructions is the size in LLVM instructions from which a module
// is split for code generation: opt-16 and llc-16 run on one part per
// splitInstructions instructions, at most one per core, in parallel
// (LLVM's own llvm-split and LTO partitions work the same way). Below
// it, starting a second opt and llc costs more than it saves.
const splitInstructions = 20000

// maxParts bounds the number of parts of a split module.
const maxParts = 8

// partCount is the number of parts the module is compiled in: 1 below
// 2*splitInstructions instructions or on one core.
func (r *Result) partCount() int {
	if r.parts > 0 {
		return r.parts
	}
	total := 0
	for _, f := range r.Module.Funcs {
		total += r.size(f)
	}
	return max(1, min(runtime.NumCPU(), maxParts, total/splitInstructions))
}

// funcSize is the number of instructions of f (0 for a declaration).
func funcSize(f *ir.Func) int {
	n := 0
	for _, b := range f.Blocks {
		n += len(b.Insts) + 1
	}
	return n
}

// kernelGroup is the name of the PrimFunc a generated function belongs
// to: "fused_3" for fused_3.kernel and its outlined parallel bodies
// fused_3.kernel.par2 and fused_3.kernel.par2.loop; the function's own
// name for the others.
func kernelGroup(name string) string {
	if i := strings.Index(name, ".kernel"); i > 0 {
		return name[:i]
	}
	return name
}

// assignParts distributes the defined functions over n parts: the
// functions of one PrimFunc stay together, the entry points' PrimFuncs
// and every function that belongs to none (the libgomp loader, the
// thread count) go to part 0, and the other groups go, largest first, to
// the part with the fewest instructions so far.
func (r *Result) assignParts(n int) map[*ir.Func]int {
	groups := map[string][]*ir.Func{}
	var names []string
	host := map[string]bool{}
	for _, e := range r.Entries {
		host[e.Func.Name] = true
	}
	load := make([]int, n)
	part := map[*ir.Func]int{}
	for _, f := range r.Module.Funcs {
		if !r.defined(f) {
			continue
		}
		g := kernelGroup(f.Name())
		if host[g] || g == f.Name() {
			part[f] = 0
			load[0] += r.size(f)
			continue
		}
		if groups[g] == nil {
			names = append(names, g)
		}
		groups[g] = append(groups[g], f)
	}
	size := map[string]int{}
	for g, fs := range groups {
		for _, f := range fs {
			size[g] += r.size(f)
		}
	}
	sort.SliceStable(names, func(i, j int) bool { return size[names[i]] > size[names[j]] })
	for _, g := range names {
		best := 0
		for p := range load {
			if load[p] < load[best] {
				best = p
			}
		}
		for _, f := range groups[g] {
			part[f] = best
		}
		load[best] += size[g]
	}
	return part
}

// splitModules splits the module into n modules for separate
// compilation (n may be 1: a module with blobs). Each function is
// defined in exactly one part and declared in the others; a function or
// global that was internal becomes an external symbol with hidden
// visibility, so that the parts link to each other but nothing new is
// exported from a shared object (WriteObject makes them local again with
// objcopy --localize-hidden). Small private constants are copied into
// every part (opt drops the unused copies); blobs are declared in every
// part and defined by their own object (blobObject); the module
// constructor list and exported data (EmbedData) are defined in part 0
// only. The parts share no function object, so they may be printed
// concurrently. Call restore when the parts have been printed: it undoes
// the changes to the module.
func (r *Result) splitModules(n int) (parts []*ir.Module, restore func()) {
	restore = r.exposeInternals()
	part := r.assignParts(n)
	parts = make([]*ir.Module, n)
	for p := range parts {
		m := headerOf(r.Module)
		if p == 0 {
			m.ModuleAsms = r.Module.ModuleAsms
		}
		m.Globals = r.partGlobals(p)
		for _, f := range r.Module.Funcs {
			if q, defined := part[f]; q == p && (defined || p == 0) {
				m.Funcs = append(m.Funcs, f)
			} else {
				m.Funcs = append(m.Funcs, declarationOf(f))
			}
		}
		parts[p] = m
	}
	return parts, restore
}

// partGlobals are the globals of part p: part 0 defines them all (blobs
// are declarations while the module is split), the others define the small private
// constants and declare the rest, except the constructor list.
func (r *Result) partGlobals(p int) []*ir.Global {
	var out []*ir.Global
	for _, g := range r.Module.Globals {
		switch {
		case p == 0 || g.Init == nil || g.Linkage == enum.LinkagePrivate:
			out = append(out, g)
		case g.Linkage == enum.LinkageAppending:
		default:
			d := ir.NewGlobal(g.Name(), g.ContentType)
			d.Immutable, d.Visibility, d.Align, d.TLSModel = g.Immutable, g.Visibility, g.Align, g.TLSModel
			d.Linkage = enum.LinkageExternal
			out = append(out, d)
		}
	}
	return out
}

// declarationOf is a new declaration of the function f, with f's
// signature and visibility.
func declarationOf(f *ir.Func) *ir.Func {
	params := make([]*ir.Param, len(f.Params))
	for i, p := range f.Params {
		params[i] = ir.NewParam("", p.Typ)
	}
	d := ir.NewFunc(f.Name(), f.Sig.RetType, params...)
	d.Sig.Variadic = f.Sig.Variadic
	d.Visibility = f.Visibility
	return d
}

// exposeInternals gives every internal or private function, every
// internal or private mutable global and every blob external linkage and
// hidden visibility (blobs become declarations), and returns the
// function that restores them.
func (r *Result) exposeInternals() func() {
	blob := map[*ir.Global]bool{}
	for _, g := range r.blobs {
		blob[g] = true
	}
	var undo []func()
	for _, f := range r.Module.Funcs {
		if len(f.Blocks) > 0 && isLocal(f.Linkage) {
			f, l, v := f, f.Linkage, f.Visibility
			f.Linkage, f.Visibility = enum.LinkageNone, enum.VisibilityHidden
			undo = append(undo, func() { f.Linkage, f.Visibility = l, v })
		}
	}
	for _, g := range r.Module.Globals {
		if !isLocal(g.Linkage) || (g.Immutable && !blob[g]) {
			continue
		}
		g, l, v, u, init := g, g.Linkage, g.Visibility, g.UnnamedAddr, g.Init
		g.Linkage, g.Visibility, g.UnnamedAddr = enum.LinkageNone, enum.VisibilityHidden, enum.UnnamedAddrNone
		if blob[g] {
			g.Linkage, g.Init = enum.LinkageExternal, nil
		}
		undo = append(undo, func() { g.Linkage, g.Visibility, g.UnnamedAddr, g.Init = l, v, u, init })
	}
	return func() {
		for _, u := range undo {
			u()
		}
	}
}

// isLocal reports whether a linkage keeps a symbol inside its module.
func isLocal(l enum.Linkage) bool { return l == enum.LinkageInternal || l == enum.LinkagePrivate }

// partName is the file name of part p's object.
func partName(p int) string { return fmt.Sprintf("part%d.o", p) }
