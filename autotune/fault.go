package autotune

import (
	"fmt"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// Fault kinds a test injects into a candidate (Options.InjectFault) to
// check that the tuner survives faulty code: the builder rewrites the
// scheduled kernel before code generation.
const (
	FaultSegfault = "segfault" // the first output store writes 2^40 elements past its buffer
	FaultHang     = "hang"     // the body repeats 2^50 times (never finishes in practice)
	FaultWrong    = "wrong"    // the first output store adds 1 to its value
	FaultBuild    = "build"    // the builder reports a build error
)

// injectFault rewrites f to misbehave as kind says ("" leaves it alone).
func injectFault(f *tir.PrimFunc, kind string) (*tir.PrimFunc, error) {
	if kind == "" {
		return f, nil
	}
	out := map[*tir.Buffer]bool{}
	for _, p := range f.Params {
		if p.Buffer != nil && p.Role != tir.RoleIn {
			out[p.Buffer] = true
		}
	}
	cp := *f
	switch kind {
	case FaultBuild:
		return nil, fmt.Errorf("injected build fault")
	case FaultHang:
		v := tir.NewVar("injected_hang", tir.DIndex)
		cp.Body = &tir.For{Var: v, Min: tir.IntOf(tir.DIndex, 0), Extent: tir.IntOf(tir.DIndex, 1<<50), Body: f.Body}
		return &cp, nil
	case FaultSegfault, FaultWrong:
		done := false
		cp.Body = tir.Mutate(f.Body, func(s tir.Stmt) (tir.Stmt, bool) {
			st, ok := s.(*tir.BufferStore)
			if !ok || done || !out[st.Buffer] || !st.Buffer.DType.IsFloat() {
				return nil, false
			}
			done = true
			c := *st
			if kind == FaultWrong {
				c.Value = tir.Add(st.Value, tir.Float(st.Value.DType(), 1))
			} else {
				c.Indices = append([]tir.Expr(nil), st.Indices...)
				c.Indices[0] = tir.Add(st.Indices[0], tir.IntOf(st.Indices[0].DType(), 1<<40))
			}
			return &c, true
		})
		if !done {
			return nil, fmt.Errorf("inject %s: the kernel has no float output store", kind)
		}
		return &cp, nil
	}
	return nil, fmt.Errorf("unknown fault kind %q", kind)
}
