package llvm

import (
	"encoding/binary"
	"fmt"

	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// Host-level statements (tensorir/host.go): kernel calls, constant
// buffers and the memory arena.

// callKernel generates `tir.call @k(bufs...)`: a direct call of k's
// internal function with the buffers' pointers.
func (g *fgen) callKernel(x *tir.CallKernel) error {
	pf := g.m.byName[x.Callee]
	if pf == nil {
		return g.errorf("tir.call: the module has no function @%s", x.Callee)
	}
	k := g.m.funcs[pf]
	if len(x.Args) != len(pf.Params) {
		return g.errorf("tir.call @%s: %d arguments for %d parameters", x.Callee, len(x.Args), len(pf.Params))
	}
	args := make([]value.Value, len(x.Args))
	for i, b := range x.Args {
		if pf.Params[i].Buffer == nil {
			return g.errorf("tir.call @%s: parameter %%%s is a scalar", x.Callee, pf.Params[i].Name())
		}
		p, err := g.bufPtr(b, g.loc)
		if err != nil {
			return err
		}
		if !p.Type().Equal(k.Params[i].Typ) {
			p = g.cur.NewBitCast(p, k.Params[i].Typ)
		}
		args[i] = p
	}
	g.profiledCall(x.Callee, func() { g.cur.NewCall(k, args...) })
	return nil
}

// allocateConst binds a constant buffer to a private unnamed_addr
// constant global (read-only data, .rodata), 64-byte aligned, holding the
// elements in their C layout (little-endian; i1 one byte, f16 binary16
// bits) as an [N x i8] string.
func (g *fgen) allocateConst(x *tir.AllocateConst) error {
	b := x.Buffer
	if x.Elided {
		return g.errorf("constant buffer %%%s cannot be compiled: its data %s", b.Name, tir.ElidedHint)
	}
	st, err := storageType(b.DType)
	if err != nil {
		return g.errorf("constant buffer %%%s: %v", b.Name, err)
	}
	data := x.Raw // already the little-endian storage bytes, shared
	if data == nil {
		data, err = constBytes(b.DType, x.Floats, x.Ints)
	}
	if err != nil {
		return g.errorf("constant buffer %%%s: %v", b.Name, err)
	}
	init := constant.NewCharArray(data)
	glob := g.m.m.NewGlobalDef(symbolSafe(fmt.Sprintf("%s.const.%d.%s", g.f.Name(), g.m.nConsts, b.Name)), init)
	g.m.nConsts++
	if len(data) >= blobBytes {
		g.m.blobs = append(g.m.blobs, glob)
	}
	glob.Linkage = enum.LinkagePrivate
	glob.UnnamedAddr = enum.UnnamedAddrUnnamedAddr
	glob.Immutable = true
	glob.Align = 64
	zero := constant.NewInt(types.I64, 0)
	first := constant.NewGetElementPtr(init.Typ, glob, zero, zero)
	g.bufs[b] = constant.NewBitCast(first, types.NewPointer(st))
	defer delete(g.bufs, b)
	return g.stmt(x.Body)
}

// constBytes encodes constant data in the storage layout of dtype t.
func constBytes(t tir.DType, floats []float64, ints []int64) ([]byte, error) {
	out := make([]byte, 0, (len(floats)+len(ints))*max(1, t.Bits()/8))
	if t.IsFloat() {
		return t.Format().Encode(floats), nil
	}
	switch t.Kind {
	case tir.Bool, tir.I8, tir.UI8:
		for _, v := range ints {
			out = append(out, byte(v))
		}
	case tir.I16, tir.UI16:
		for _, v := range ints {
			out = binary.LittleEndian.AppendUint16(out, uint16(v))
		}
	case tir.I32, tir.UI32:
		for _, v := range ints {
			out = binary.LittleEndian.AppendUint32(out, uint32(v))
		}
	case tir.I64, tir.UI64, tir.Index:
		for _, v := range ints {
			out = binary.LittleEndian.AppendUint64(out, uint64(v))
		}
	default:
		return nil, fmt.Errorf("dtype %v is not supported for constants", t)
	}
	return out, nil
}

// arenaAlloc reserves one arena of x.Size bytes for the execution of the
// statement (not shared between threads: concurrent calls from two
// threads use two arenas) and places each buffer at its byte offset. An
// arena of at most maxStackGlobal bytes is an alloca in the entry block;
// a larger one is the block the statement keeps for the calling thread
// (keptBlock: allocated on the thread's first call, 64-byte aligned).
// Buffers placed at overlapping bytes alias exactly as planned.
func (g *fgen) arenaAlloc(x *tir.ArenaAlloc) error {
	if len(x.Offsets) != len(x.Buffers) {
		return g.errorf("tir.arena: %d buffers but %d offsets", len(x.Buffers), len(x.Offsets))
	}
	size := max(x.Size, 1)
	var base value.Value
	if size <= maxStackGlobal {
		base = g.alloca(types.I8, size)
	} else {
		if g.vec != nil {
			return g.errorf("tir.arena inside a vectorized loop")
		}
		base = g.keptBlock(iconst(size))
	}
	for i, b := range x.Buffers {
		if _, ok := g.bufs[b]; ok {
			return g.errorf("buffer %%%s is allocated twice", b.Name)
		}
		st, err := storageType(b.DType)
		if err != nil {
			return g.errorf("arena buffer %%%s: %v", b.Name, err)
		}
		p := g.cur.NewGetElementPtr(types.I8, base, iconst(x.Offsets[i]))
		g.bufs[b] = g.cur.NewBitCast(p, types.NewPointer(st))
	}
	defer func() {
		for _, b := range x.Buffers {
			delete(g.bufs, b)
		}
	}()
	if err := g.stmt(x.Body); err != nil {
		return err
	}
	return nil
}

// aliasedCallees lists the functions that some tir.call passes
// overlapping memory: the same buffer twice, or two arena buffers whose
// byte ranges intersect. Their buffer parameters are not marked noalias.
func aliasedCallees(mod *tir.Module) map[string]bool {
	type place struct {
		arena     *tir.ArenaAlloc
		off, size int64
	}
	out := map[string]bool{}
	for _, f := range mod.Funcs {
		places := map[*tir.Buffer]place{}
		walkStmt(f.Body, func(s tir.Stmt) {
			switch x := s.(type) {
			case *tir.ArenaAlloc:
				for i, b := range x.Buffers {
					if i < len(x.Offsets) {
						n, _ := tir.BufferBytes(b)
						places[b] = place{x, x.Offsets[i], n}
					}
				}
			case *tir.CallKernel:
				for i, a := range x.Args {
					for _, b := range x.Args[i+1:] {
						pa, oka := places[a]
						pb, okb := places[b]
						if a == b || oka && okb && pa.arena == pb.arena && pa.off < pb.off+pb.size && pb.off < pa.off+pa.size {
							out[x.Callee] = true
						}
					}
				}
			}
		}, nil)
	}
	return out
}
