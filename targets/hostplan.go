package targets

import (
	"fmt"

	rt "github.com/tessera-ml/tessera/runtime"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// HostPlan is a host function as a runtime executes it (the shape of
// TVM's graph executor: buffers and an ordered list of kernel calls): the
// entry's parameters, the constants, the intermediate buffers, and the
// calls. The NPU runtime runs NPU kernels on its simulator and the others
// on the CPU; the CUDA runtime launches every call on the GPU. Arena
// buffers become buffers of their own (no storage sharing).
type HostPlan struct {
	Entry  string
	Bufs   []PlanBuf
	Params []int // buffer ids of the entry's parameters, in order
	Calls  []PlanCall
}

// PlanBuf is one buffer: its name, dtype ("f32", ...), shape, its role
// when it is an entry parameter, and the data of a constant.
type PlanBuf struct {
	Name  string
	DType string
	Shape []int64
	Role  tir.Role
	Param bool
	Const []byte // row-major, native byte order (nil: not a constant)
}

// PlanCall calls Kernel on buffers Args (one per kernel parameter).
type PlanCall struct {
	Kernel string
	Args   []int
}

// PlanOf reads host function h: nested constants and arenas around a
// sequence of tir.call statements.
func PlanOf(h *tir.PrimFunc) (*HostPlan, error) {
	p := &HostPlan{Entry: h.Name}
	ids := map[*tir.Buffer]int{}
	add := func(b *tir.Buffer) (int, error) {
		shape, ok := b.ConstShape()
		if !ok {
			return 0, fmt.Errorf("buffer %%%s has a symbolic shape", b.Name)
		}
		if _, err := rt.ParseDType(b.DType.String()); err != nil {
			return 0, fmt.Errorf("buffer %%%s: %v", b.Name, err)
		}
		ids[b] = len(p.Bufs)
		p.Bufs = append(p.Bufs, PlanBuf{Name: b.Name, DType: b.DType.String(), Shape: shape})
		return ids[b], nil
	}
	for _, prm := range h.Params {
		if prm.Buffer == nil {
			return nil, fmt.Errorf("entry parameter %%%s is a scalar", prm.Name())
		}
		id, err := add(prm.Buffer)
		if err != nil {
			return nil, err
		}
		p.Bufs[id].Param, p.Bufs[id].Role = true, prm.Role
		p.Params = append(p.Params, id)
	}
	var walk func(s tir.Stmt) error
	walk = func(s tir.Stmt) error {
		switch x := s.(type) {
		case nil:
		case *tir.SeqStmt:
			for _, t := range x.Stmts {
				if err := walk(t); err != nil {
					return err
				}
			}
		case *tir.AllocateConst:
			id, err := add(x.Buffer)
			if err != nil {
				return err
			}
			if p.Bufs[id].Const, err = ConstBytes(x); err != nil {
				return err
			}
			return walk(x.Body)
		case *tir.ArenaAlloc:
			for _, b := range x.Buffers {
				if _, err := add(b); err != nil {
					return err
				}
			}
			return walk(x.Body)
		case *tir.CallKernel:
			c := PlanCall{Kernel: x.Callee}
			for _, a := range x.Args {
				id, ok := ids[a]
				if !ok {
					return fmt.Errorf("tir.call @%s passes %%%s, which is not in scope", x.Callee, a.Name)
				}
				c.Args = append(c.Args, id)
			}
			p.Calls = append(p.Calls, c)
		default:
			return fmt.Errorf("the host function holds a %T; a runtime runs constants, arenas and calls", s)
		}
		return nil
	}
	return p, walk(h.Body)
}

// ConstBytes is a constant's data as a runtime tensor's bytes
// (little-endian, the byte order of every host Tessera runs on): Raw
// itself when the constant holds raw data (shared, not copied). Errors:
// elided data, a dtype the runtime has no tensor for.
func ConstBytes(c *tir.AllocateConst) ([]byte, error) {
	if c.Elided {
		return nil, fmt.Errorf("constant %%%s: its data %s", c.Buffer.Name, tir.ElidedHint)
	}
	if c.Raw != nil {
		return c.Raw, nil
	}
	dt, err := rt.ParseDType(c.Buffer.DType.String())
	if err != nil {
		return nil, fmt.Errorf("constant %%%s: %v", c.Buffer.Name, err)
	}
	shape, _ := c.Buffer.ConstShape()
	t, err := rt.NewTensor(dt, shape)
	if err != nil {
		return nil, err
	}
	vals := c.Floats
	if vals == nil {
		vals = make([]float64, len(c.Ints))
		for i, n := range c.Ints {
			vals[i] = float64(n)
		}
	}
	if err := t.SetFloat64Values(vals); err != nil {
		return nil, fmt.Errorf("constant %%%s: %v", c.Buffer.Name, err)
	}
	return t.Bytes(), nil
}

// KernelPlan is the plan of an exported kernel: one call on its
// parameters.
func KernelPlan(f *tir.PrimFunc) (*HostPlan, error) {
	p := &HostPlan{Entry: f.Name}
	c := PlanCall{Kernel: f.Name}
	for i, prm := range f.Params {
		spec, err := SpecOf(prm)
		if err != nil {
			return nil, fmt.Errorf("kernel @%s: %v", f.Name, err)
		}
		p.Bufs = append(p.Bufs, PlanBuf{Name: prm.Name(), DType: prm.Buffer.DType.String(), Shape: spec.Shape, Role: prm.Role, Param: true})
		p.Params = append(p.Params, i)
		c.Args = append(c.Args, i)
	}
	p.Calls = []PlanCall{c}
	return p, nil
}

// EntrySignatureOf is the signature of exported function f under symbol:
// its tensors, inputs then outputs (in-out buffers count as outputs, as
// for the call); false when a parameter has no spec or the runtime cannot
// call the entry (runtime.EntrySignature.Validate).
func EntrySignatureOf(f *tir.PrimFunc, symbol string) (rt.EntrySignature, bool) {
	es := rt.EntrySignature{Func: f.Name, Symbol: symbol}
	for _, p := range f.Params {
		spec, err := SpecOf(p)
		if err != nil {
			return rt.EntrySignature{}, false
		}
		if p.Role == tir.RoleIn {
			es.Inputs = append(es.Inputs, spec)
		} else {
			es.Outputs = append(es.Outputs, spec)
		}
	}
	return es, es.Validate() == nil
}
