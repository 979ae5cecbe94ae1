package llvm

import (
	"math"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// argRanges finds, for the kernels of mod, the range of the values each
// buffer parameter holds on entry at every call: the union over the
// module's tir.call sites of the argument's range there. A host
// function's buffers get their ranges from what the kernels called before
// store into them (tir.StoredRanges over the callee with its own
// arguments' ranges) and from their constant data; its own parameters
// and anything not yet written hold their dtype's range. The code
// generation reads them to pick instruction sequences that are exact only
// on a subrange (an 8-bit operand below 128 for AVX2's vpmaddubsw,
// codegen_vnni.go).
//
// It relies on tensor IR's contract for an out parameter: the kernel
// writes every element (a reader of an arena buffer reads what its
// writers stored, not an earlier tenant of the same bytes).
//
// A kernel gets no ranges (it is absent from the result) when something
// outside the module may call it (an exported symbol), when a call passes
// it overlapping buffers (aliased: an input may change while it runs),
// or when a host function calls kernels inside a loop (program order is
// then not the order of the data).
func argRanges(mod *tir.Module, aliased map[string]bool) map[*tir.PrimFunc]map[*tir.Buffer]tir.ValueRange {
	byName := map[string]*tir.PrimFunc{}
	for _, f := range mod.Funcs {
		byName[f.Name] = f
	}
	a := &rangeProp{byName: byName, sites: map[*tir.PrimFunc]map[*tir.Buffer]tir.ValueRange{}, poisoned: map[*tir.PrimFunc]bool{}}
	for name := range aliased {
		if f := byName[name]; f != nil {
			a.poisoned[f] = true
		}
	}
	for _, f := range mod.Funcs {
		if _, ok := f.Attrs[tir.AttrGlobalSymbol]; ok {
			a.poisoned[f] = true
		}
	}
	for _, f := range mod.Funcs {
		a.host(f)
	}
	for f := range a.poisoned {
		delete(a.sites, f)
	}
	return a.sites
}

// rangeProp is argRanges' state: the ranges found per callee and the
// callees that get none.
type rangeProp struct {
	byName   map[string]*tir.PrimFunc
	sites    map[*tir.PrimFunc]map[*tir.Buffer]tir.ValueRange
	poisoned map[*tir.PrimFunc]bool
}

// host follows f's calls in program order (nothing when f calls no
// kernel).
func (a *rangeProp) host(f *tir.PrimFunc) {
	var calls []*tir.CallKernel
	held := map[*tir.Buffer]tir.ValueRange{} // f's buffers written so far, and constants
	walkStmt(f.Body, func(s tir.Stmt) {
		switch x := s.(type) {
		case *tir.CallKernel:
			calls = append(calls, x)
		case *tir.AllocateConst:
			held[x.Buffer] = constRange(x)
		}
	}, nil)
	if len(calls) == 0 {
		return
	}
	if callsInLoop(f) {
		for _, c := range calls {
			a.poison(c)
		}
		return
	}
	own := map[*tir.Buffer]bool{}
	for _, p := range f.Params {
		own[p.Buffer] = p.Buffer != nil
	}
	for _, c := range calls {
		a.call(c, held, own)
	}
}

// callsInLoop reports whether some tir.call of host function f sits in a
// loop.
func callsInLoop(f *tir.PrimFunc) bool {
	looped := false
	walkStmt(f.Body, func(s tir.Stmt) {
		if x, ok := s.(*tir.For); ok && !looped {
			walkStmt(x.Body, func(s tir.Stmt) {
				if _, ok := s.(*tir.CallKernel); ok {
					looped = true
				}
			}, nil)
		}
	}, nil)
	return looped
}

// poison marks c's callee as getting no ranges.
func (a *rangeProp) poison(c *tir.CallKernel) {
	if k := a.byName[c.Callee]; k != nil {
		a.poisoned[k] = true
	}
}

// call records the ranges of c's arguments for its callee and updates
// held with what the callee stores into its outputs (not into the host's
// own parameters, which the caller owns).
func (a *rangeProp) call(c *tir.CallKernel, held map[*tir.Buffer]tir.ValueRange, own map[*tir.Buffer]bool) {
	k := a.byName[c.Callee]
	if k == nil {
		return
	}
	at := a.sites[k]
	if at == nil {
		at = map[*tir.Buffer]tir.ValueRange{}
		a.sites[k] = at
	}
	params := tir.BufferParams(k)
	if len(params) != len(c.Args) {
		a.poisoned[k] = true
		return
	}
	now := map[*tir.Buffer]tir.ValueRange{} // this call's
	for i, pi := range params {
		p, arg := k.Params[pi], c.Args[i]
		r, ok := held[arg]
		if !ok || own[arg] {
			r = tir.TypeRange(arg.DType)
		}
		now[p.Buffer] = r
		unionInto(at, p.Buffer, r)
	}
	stored := tir.NewStoredRanges(k.Body, knownInputs(k, now))
	for i, pi := range params {
		if p := k.Params[pi]; p.Role != tir.RoleIn {
			unionInto(held, c.Args[i], stored.Of(p.Buffer))
		}
	}
}

// unionInto widens m[b] by r (sets it to r when absent).
func unionInto(m map[*tir.Buffer]tir.ValueRange, b *tir.Buffer, r tir.ValueRange) {
	if prev, ok := m[b]; ok {
		r = prev.Union(r)
	}
	m[b] = r
}

// knownInputs are the ranges a kernel's body reads its parameters with,
// given the ranges r of their contents on entry: its inputs', and its
// inout parameters' dtype range (their prior contents are read along
// with what the body stores). Outputs are left out: what the body reads
// of them is what it stores.
func knownInputs(k *tir.PrimFunc, r map[*tir.Buffer]tir.ValueRange) map[*tir.Buffer]tir.ValueRange {
	out := map[*tir.Buffer]tir.ValueRange{}
	for _, p := range k.Params {
		if p.Buffer == nil {
			continue
		}
		switch p.Role {
		case tir.RoleIn:
			if v, ok := r[p.Buffer]; ok {
				out[p.Buffer] = v
			} else {
				out[p.Buffer] = tir.TypeRange(p.Buffer.DType)
			}
		case tir.RoleInOut:
			out[p.Buffer] = tir.TypeRange(p.Buffer.DType)
		}
	}
	return out
}

// constRange is the range of an integer constant's elements (a float
// constant's dtype range: not needed so far).
func constRange(x *tir.AllocateConst) tir.ValueRange {
	if !x.Buffer.DType.IsInt() || len(x.Ints) == 0 {
		return tir.TypeRange(x.Buffer.DType)
	}
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, v := range x.Ints {
		lo, hi = min(lo, v), max(hi, v)
	}
	if lo < -1<<53 || hi > 1<<53 {
		return tir.TypeRange(x.Buffer.DType)
	}
	return tir.ValueRange{Lo: float64(lo), Hi: float64(hi)}
}
