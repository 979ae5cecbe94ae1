package npu

import (
	"fmt"

	rt "github.com/tessera-ml/tessera/runtime"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// Plan is the host function as the NPU runtime executes it (the shape of
// TVM's graph executor: buffers and an ordered list of kernel calls): the
// entry's parameters, the constants, the intermediate buffers, and the
// calls, each to an NPU kernel (simulated) or a host kernel (compiled for
// the CPU).
type Plan struct {
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

// planOf reads host function h: nested constants and arenas around a
// sequence of tir.call statements.
func planOf(h *tir.PrimFunc) (*Plan, error) {
	p := &Plan{Entry: h.Name}
	ids := map[*tir.Buffer]int{}
	add := func(b *tir.Buffer) (int, error) {
		shape, ok := b.ConstShape()
		if !ok {
			return 0, fmt.Errorf("npu: buffer %%%s has a symbolic shape", b.Name)
		}
		if _, err := rt.ParseDType(b.DType.String()); err != nil {
			return 0, fmt.Errorf("npu: buffer %%%s: %v", b.Name, err)
		}
		ids[b] = len(p.Bufs)
		p.Bufs = append(p.Bufs, PlanBuf{Name: b.Name, DType: b.DType.String(), Shape: shape})
		return ids[b], nil
	}
	for _, prm := range h.Params {
		if prm.Buffer == nil {
			return nil, fmt.Errorf("npu: entry parameter %%%s is a scalar", prm.Name())
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
			if p.Bufs[id].Const, err = constBytes(x); err != nil {
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
					return fmt.Errorf("npu: tir.call @%s passes %%%s, which is not in scope", x.Callee, a.Name)
				}
				c.Args = append(c.Args, id)
			}
			p.Calls = append(p.Calls, c)
		default:
			return fmt.Errorf("npu: the host function holds a %T; the NPU runtime runs constants, arenas and calls", s)
		}
		return nil
	}
	return p, walk(h.Body)
}

// constBytes is a constant's data as a runtime tensor's bytes.
func constBytes(c *tir.AllocateConst) ([]byte, error) {
	if c.Elided {
		return nil, fmt.Errorf("npu: constant %%%s: its data %s", c.Buffer.Name, tir.ElidedHint)
	}
	dt, _ := rt.ParseDType(c.Buffer.DType.String())
	shape, _ := c.Buffer.ConstShape()
	t, err := rt.NewTensor(dt, shape)
	if err != nil {
		return nil, err
	}
	switch dt {
	case rt.Float32:
		v, _ := t.Float32s()
		for i, f := range c.Floats {
			v[i] = float32(f)
		}
	case rt.Float64:
		v, _ := t.Float64s()
		copy(v, c.Floats)
	case rt.Int32:
		v, _ := t.Int32s()
		for i, n := range c.Ints {
			v[i] = int32(n)
		}
	case rt.Int64:
		v, _ := t.Int64s()
		copy(v, c.Ints)
	default:
		return nil, fmt.Errorf("npu: constant %%%s of dtype %s", c.Buffer.Name, dt)
	}
	return t.Bytes(), nil
}
