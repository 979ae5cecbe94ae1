package llvm

import (
	"github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// access is a resolved buffer access: the storage type, the base pointer
// and the flat element index as a tensor IR expression.
type access struct {
	buf  *tir.Buffer
	st   types.Type
	base value.Value
	flat tir.Expr
}

func (g *fgen) access(buf *tir.Buffer, indices []tir.Expr) (*access, error) {
	p, err := g.bufPtr(buf, g.loc)
	if err != nil {
		return nil, err
	}
	st, err := storageType(buf.DType)
	if err != nil {
		return nil, g.errorf("buffer %%%s: %v", buf.Name, err)
	}
	if len(indices) != len(buf.Shape) {
		return nil, g.errorf("buffer %%%s has %d dimensions, accessed with %d indices", buf.Name, len(buf.Shape), len(indices))
	}
	flat := g.flatIndex(buf, indices)
	if g.vec != nil && !g.lane0 {
		flat = g.vec.normalize(flat)
	}
	return &access{buf: buf, st: st, base: p, flat: flat}, nil
}

// accessMode classifies a buffer access inside a widened loop body.
type accessMode uint8

const (
	accessScalar     accessMode = iota // index independent of the lanes
	accessContiguous                   // index = lane-0 index + lane
	accessGather                       // any other lane-dependent index
)

func (g *fgen) mode(a *access) accessMode {
	if g.vec == nil || g.lane0 || !g.vec.isVarying(a.flat) {
		return accessScalar
	}
	if c, ok := g.vec.coeff(a.flat); ok && c == 1 {
		return accessContiguous
	}
	return accessGather
}

// elemPtr is &base[idx] for a scalar i64 idx.
func (g *fgen) elemPtr(a *access, idx value.Value) value.Value {
	return g.cur.NewGetElementPtr(a.st, a.base, idx)
}

// scalarIndex generates the flat index for lane 0 (or the only lane).
func (g *fgen) scalarIndex(a *access) (value.Value, error) {
	saved := g.lane0
	g.lane0 = g.vec != nil
	defer func() { g.lane0 = saved }()
	idx, err := g.expr(a.flat)
	if err != nil {
		return nil, err
	}
	return g.toI64(idx), nil
}

// fromStorage converts a loaded value to its register type (i8 → i1,
// bf16 bits → float).
func (g *fgen) fromStorage(a *access, v value.Value) value.Value {
	switch a.buf.DType.Kind {
	case tir.Bool:
		return g.cur.NewTrunc(v, withLanes(types.I1, lanesOf(v)))
	case tir.BF16:
		return g.bf16ToFloat(v)
	}
	return v
}

// toStorage converts a value to its storage type (i1 → i8, float holding
// a bf16 value → its bits).
func (g *fgen) toStorage(a *access, v value.Value) value.Value {
	switch a.buf.DType.Kind {
	case tir.Bool:
		return g.cur.NewZExt(v, withLanes(types.I8, lanesOf(v)))
	case tir.BF16:
		return g.floatToBF16Bits(v)
	}
	return v
}

// load generates a BufferLoad: a scalar load, or inside a widened body a
// vector load (contiguous index) or a gather of per-lane scalar loads;
// under a lane mask, inactive lanes do not touch memory (masked load) or
// read element 0 (gather) and their value is unspecified.
func (g *fgen) load(x *tir.BufferLoad) (value.Value, error) {
	x = g.declamped(x) // codegen_guard.go
	a, err := g.access(x.Buffer, x.Indices)
	if err != nil {
		return nil, err
	}
	align := ir.Align(tir.ElemBytes(x.Buffer.DType))
	if g.mode(a) == accessGather {
		if v, ok, err := g.clampedLoad(x); ok || err != nil {
			return v, err
		}
		if v, ok, err := g.stridedLoad(a, align); ok || err != nil {
			return v, err
		}
	}
	switch g.mode(a) {
	case accessContiguous:
		ptr, err := g.lane0Ptr(a)
		if err != nil {
			return nil, err
		}
		vt := types.NewVector(uint64(g.vec.lanes), a.st)
		p := g.cur.NewBitCast(ptr, ptrTo(vt, ptr))
		if m := g.vec.mask; m != nil && !g.unmasked(x.Buffer, x.Indices, false) {
			// Inactive lanes are not read (they may be out of bounds) and
			// read as zero.
			return g.fromStorage(a, g.maskedLoad(vt, p, align, m)), nil
		}
		ld := g.cur.NewLoad(vt, p)
		ld.Align = g.vectorAlign(a, align)
		return g.fromStorage(a, ld), nil
	case accessGather:
		idx, err := g.expr(a.flat)
		if err != nil {
			return nil, err
		}
		idx = g.toI64(idx)
		if m := g.vec.mask; m != nil {
			// Inactive lanes read element 0, which exists.
			idx = g.cur.NewSelect(m, idx, constOf(idx.Type(), 0))
		}
		var vec value.Value = constant.NewUndef(types.NewVector(uint64(g.vec.lanes), a.st))
		for l := 0; l < g.vec.lanes; l++ {
			li := g.cur.NewExtractElement(idx, constant.NewInt(types.I32, int64(l)))
			ld := g.cur.NewLoad(a.st, g.elemPtr(a, li))
			ld.Align = align
			vec = g.cur.NewInsertElement(vec, ld, constant.NewInt(types.I32, int64(l)))
		}
		return g.fromStorage(a, vec), nil
	}
	idx, err := g.scalarIndex(a)
	if err != nil {
		return nil, err
	}
	ld := g.cur.NewLoad(a.st, g.elemPtr(a, idx))
	ld.Align = align
	return g.fromStorage(a, ld), nil
}

// store generates a BufferStore (vector store or scatter inside a
// widened body, masked under lane-dependent conditions; CheckVectorizable
// has refused stores whose index does not depend on the lanes).
func (g *fgen) store(s *tir.BufferStore) error {
	a, err := g.access(s.Buffer, s.Indices)
	if err != nil {
		return err
	}
	v, err := g.expr(s.Value)
	if err != nil {
		return err
	}
	align := ir.Align(tir.ElemBytes(s.Buffer.DType))
	switch g.mode(a) {
	case accessContiguous:
		ptr, err := g.lane0Ptr(a)
		if err != nil {
			return err
		}
		v = g.toStorage(a, g.splat(v, g.vec.lanes))
		vt := types.NewVector(uint64(g.vec.lanes), a.st)
		p := g.cur.NewBitCast(ptr, ptrTo(vt, ptr))
		if m := g.vec.mask; m != nil && !g.unmasked(s.Buffer, s.Indices, true) {
			g.maskedStore(v, p, align, m)
			return nil
		}
		st := g.cur.NewStore(v, p)
		st.Align = g.vectorAlign(a, align)
		return nil
	case accessGather:
		idx, err := g.expr(a.flat)
		if err != nil {
			return err
		}
		idx = g.toI64(idx)
		v = g.toStorage(a, g.splat(v, g.vec.lanes))
		mask := g.vec.mask
		for l := 0; l < g.vec.lanes; l++ {
			lc := constant.NewInt(types.I32, int64(l))
			scatter := func() error {
				li := g.cur.NewExtractElement(idx, lc)
				st := g.cur.NewStore(g.cur.NewExtractElement(v, lc), g.elemPtr(a, li))
				st.Align = align
				return nil
			}
			if mask == nil {
				_ = scatter()
				continue
			}
			if err := g.ifThen(g.cur.NewExtractElement(mask, lc), scatter, nil); err != nil {
				return err
			}
		}
		return nil
	}
	if lanesOf(v) > 1 && s.Buffer.DType.Lanes == 1 {
		return g.errorf("store to %%%s: a lane-dependent value stored at a lane-independent index", s.Buffer.Name)
	}
	idx, err := g.scalarIndex(a)
	if err != nil {
		return err
	}
	st := g.cur.NewStore(g.toStorage(a, v), g.elemPtr(a, idx))
	st.Align = align
	return nil
}

// maxLoadStride is the largest constant lane stride stridedLoad handles
// (strided convolutions and pooling use 2).
const maxLoadStride = 4

// stridedLoad loads lanes whose index advances by a constant stride s
// (2 ≤ s ≤ maxLoadStride) per lane as one masked load of lanes·s
// contiguous elements, of which only every s-th (and, under a lane mask,
// only the active lanes') touches memory, and a shuffle that picks those
// elements: no per-lane address arithmetic, and LLVM lowers it to masked
// vector loads and permutes instead of a scalar load per lane. ok is
// false for other strides.
func (g *fgen) stridedLoad(a *access, align ir.Align) (v value.Value, ok bool, err error) {
	c, isLinear := g.vec.coeff(a.flat)
	if !isLinear || c < 2 || c > maxLoadStride {
		return nil, false, nil
	}
	ptr, err := g.lane0Ptr(a)
	if err != nil {
		return nil, false, err
	}
	var mask value.Value = g.splat(constant.True, g.vec.lanes)
	if g.vec.mask != nil {
		mask = g.vec.mask
	}
	return g.fromStorage(a, g.stridedMaskedLoad(ptr, a.st, int(c), mask, align)), true, nil
}

// maskedLoad loads a vector of type vt from p where mask holds (other
// lanes read as zero and touch no memory).
func (g *fgen) maskedLoad(vt types.Type, p value.Value, align ir.Align, mask value.Value) value.Value {
	f := g.m.declare("llvm.masked.load."+llvmSuffix(vt)+addrSuffix(p)+llvmSuffix(vt), vt, p.Type(), types.I32, mask.Type(), vt)
	return g.cur.NewCall(f, p, constant.NewInt(types.I32, int64(align)), mask, constant.NewZeroInitializer(vt))
}

// maskedStore stores vector v to p where mask holds.
func (g *fgen) maskedStore(v, p value.Value, align ir.Align, mask value.Value) {
	f := g.m.declare("llvm.masked.store."+llvmSuffix(v.Type())+addrSuffix(p)+llvmSuffix(v.Type()), types.Void, v.Type(), p.Type(), types.I32, mask.Type())
	g.cur.NewCall(f, v, p, constant.NewInt(types.I32, int64(align)), mask)
}
