package llvm

import (
	"encoding/binary"
	"fmt"
	"math"

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
	args := make([]value.Value, 0, len(pf.Params))
	nb, ns := 0, 0
	for i, prm := range pf.Params {
		var a value.Value
		var err error
		switch {
		case prm.Buffer != nil && nb < len(x.Args):
			a, err = g.bufPtr(x.Args[nb], g.loc)
			nb++
		case prm.Var != nil && ns < len(x.Scalars):
			a, err = g.expr(x.Scalars[ns])
			if err == nil {
				a = g.convertInt(a, k.Params[i].Typ)
			}
			ns++
		default:
			return g.errorf("tir.call @%s: %d buffer and %d scalar arguments do not match its parameters", x.Callee, len(x.Args), len(x.Scalars))
		}
		if err != nil {
			return err
		}
		if !a.Type().Equal(k.Params[i].Typ) {
			a = g.cur.NewBitCast(a, k.Params[i].Typ)
		}
		args = append(args, a)
	}
	if nb != len(x.Args) || ns != len(x.Scalars) {
		return g.errorf("tir.call @%s: %d buffer and %d scalar arguments do not match its parameters", x.Callee, len(x.Args), len(x.Scalars))
	}
	g.profiledCall(x.Callee, func() { g.cur.NewCall(k, args...) })
	return nil
}

// convertInt sign-extends or truncates the integer value v to integer
// type t.
func (g *fgen) convertInt(v value.Value, t types.Type) value.Value {
	it, ok := t.(*types.IntType)
	vt, ok2 := v.Type().(*types.IntType)
	switch {
	case !ok || !ok2 || it.BitSize == vt.BitSize:
		return v
	case it.BitSize > vt.BitSize:
		return g.cur.NewSExt(v, t)
	}
	return g.cur.NewTrunc(v, t)
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
	base, err := g.arenaBase(x.Size)
	if err != nil {
		return err
	}
	for i, b := range x.Buffers {
		if _, ok := g.bufs[b]; ok {
			return g.errorf("buffer %%%s is allocated twice", b.Name)
		}
		st, err := storageType(b.DType)
		if err != nil {
			return g.errorf("arena buffer %%%s: %v", b.Name, err)
		}
		off, err := g.i64Expr(x.Offsets[i])
		if err != nil {
			return err
		}
		p := g.cur.NewGetElementPtr(types.I8, base, off)
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

// arenaBase is the base of an arena of size bytes: a constant size of at
// most maxStackGlobal bytes is an alloca in the entry block; a larger or
// symbolic one (an expression of the host function's scalar parameters)
// is the block the statement keeps for the calling thread, grown when a
// call needs more (keptBlock).
func (g *fgen) arenaBase(size tir.Expr) (value.Value, error) {
	if c, ok := size.(*tir.IntImm); ok && c.Value <= maxStackGlobal {
		return g.alloca(types.I8, max(c.Value, 1)), nil
	}
	if g.vec != nil {
		return nil, g.errorf("tir.arena inside a vectorized loop")
	}
	n, err := g.i64Expr(size)
	if err != nil {
		return nil, err
	}
	return g.keptBlock(n), nil
}

// i64Expr is the integer expression e as an i64 value.
func (g *fgen) i64Expr(e tir.Expr) (value.Value, error) {
	if c, ok := e.(*tir.IntImm); ok {
		return iconst(c.Value), nil
	}
	v, err := g.expr(e)
	if err != nil {
		return nil, err
	}
	return g.toI64(v), nil
}

// aliasedCallees lists the functions that some tir.call passes
// overlapping memory: the same buffer twice, or two arena buffers whose
// byte ranges may intersect (for a symbolic arena, unless the bound
// analysis proves one ends before the other starts). Their buffer
// parameters are not marked noalias.
func aliasedCallees(mod *tir.Module) map[string]bool {
	out := map[string]bool{}
	for _, f := range mod.Funcs {
		places := map[*tir.Buffer]arenaPlace{}
		env := scalarParamBounds(f)
		walkStmt(f.Body, func(s tir.Stmt) {
			switch x := s.(type) {
			case *tir.ArenaAlloc:
				for i, b := range x.Buffers {
					if i < len(x.Offsets) {
						places[b] = arenaPlace{x, x.Offsets[i], bufferBytesExpr(b)}
					}
				}
			case *tir.CallKernel:
				for i, a := range x.Args {
					for _, b := range x.Args[i+1:] {
						pa, oka := places[a]
						pb, okb := places[b]
						if a == b || oka && okb && pa.arena == pb.arena && !pa.disjoint(pb, env) {
							out[x.Callee] = true
						}
					}
				}
			}
		}, nil)
	}
	return out
}

// arenaPlace is where an arena buffer lies: byte offset and size.
type arenaPlace struct {
	arena     *tir.ArenaAlloc
	off, size tir.Expr
}

// disjoint reports whether the bound analysis proves that the byte
// ranges of p and q do not intersect under env.
func (p arenaPlace) disjoint(q arenaPlace, env tir.BoundEnv) bool {
	before := func(a, b arenaPlace) bool { // a ends at or before b starts
		gap := tir.Simplify(tir.Sub(b.off, tir.Add(a.off, a.size)), env)
		return tir.Bound(gap, env).Within(0, math.MaxInt64)
	}
	return before(p, q) || before(q, p)
}

// bufferBytesExpr is the size of a row-major buffer in bytes, as an index
// expression of its shape.
func bufferBytesExpr(b *tir.Buffer) tir.Expr {
	var n tir.Expr = tir.Int(tir.ElemBytes(b.DType))
	for _, d := range b.Shape {
		n = mulIdx(n, asIndex(d))
	}
	return n
}

// scalarParamBounds bounds f's integer scalar parameters (the symbolic
// dimensions of a host function) by [0, 2^31]: a dimension is never
// negative, and a larger one could not be allocated.
func scalarParamBounds(f *tir.PrimFunc) tir.BoundEnv {
	env := tir.BoundEnv{}
	for _, p := range f.Params {
		if p.Var != nil && p.Var.Type.IsInt() {
			env[p.Var] = tir.Interval{Lo: 0, Hi: 1 << 31}
		}
	}
	return env
}
