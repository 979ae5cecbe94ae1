package tensorir

// Int8DotLanes and Int8DotDepth are the shape of one 8-bit dot-product
// step on 512-bit vectors (AVX-512 VNNI's vpdpbusd): 16 i32 lanes, each
// summing 4 u8·s8 products.
const (
	Int8DotLanes = 16
	Int8DotDepth = 4
)

// Int8DotMatch is a store of the 8-bit dot-product step the int8
// schedule rule and the CPU code generator's VNNI selection work on (see
// Int8Dot).
type Int8DotMatch struct {
	Acc, U, S *BufferLoad
	// Guard is the condition under which U is read (a convolution's
	// padding reads 0 elsewhere); nil when U is always read.
	Guard Expr
}

// Int8Dot matches
//
//	C[idx] = C[idx] + cast<i32>(U[..]) * cast<i32>(S[..])
//
// with C i32, U ui8 and S i8 (either order of the sum and of the
// product); U's factor may also be select(guard, cast<i32>(U[..]), 0), as
// a padded convolution reads its input. ok is false for any other store.
func Int8Dot(st *BufferStore) (m Int8DotMatch, ok bool) {
	if st == nil || st.Buffer == nil || st.Buffer.DType != DI32 {
		return m, false
	}
	add, isAdd := st.Value.(*Binary)
	if !isAdd || add.Op != OpAdd {
		return m, false
	}
	for _, p := range [][2]Expr{{add.A, add.B}, {add.B, add.A}} {
		a, isLoad := p[0].(*BufferLoad)
		if !isLoad || a.Buffer != st.Buffer || !equalList(a.Indices, st.Indices) {
			continue
		}
		mul, isMul := p[1].(*Binary)
		if !isMul || mul.Op != OpMul {
			continue
		}
		for _, f := range [][2]Expr{{mul.A, mul.B}, {mul.B, mul.A}} {
			u, guard := guarded8(f[0])
			s := widened8(f[1])
			if u != nil && s != nil && u.Buffer.DType == DUI8 && s.Buffer.DType == DI8 {
				return Int8DotMatch{Acc: a, U: u, S: s, Guard: guard}, true
			}
		}
	}
	return m, false
}

// guarded8 reads e as cast<i32>(U) or select(guard, cast<i32>(U), 0).
func guarded8(e Expr) (*BufferLoad, Expr) {
	if sel, ok := e.(*Select); ok {
		if z, isZ := sel.F.(*IntImm); !isZ || z.Value != 0 {
			return nil, nil
		}
		return widened8(sel.T), sel.Cond
	}
	return widened8(e), nil
}

// widened8 is the ui8 or i8 load e casts to i32, or nil.
func widened8(e Expr) *BufferLoad {
	c, ok := e.(*Cast)
	if !ok || c.Type != DI32 {
		return nil
	}
	ld, ok := c.X.(*BufferLoad)
	if !ok || ld.Buffer == nil || ld.Buffer.DType != DUI8 && ld.Buffer.DType != DI8 {
		return nil
	}
	return ld
}
