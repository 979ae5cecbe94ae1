package tensorir

// Int8Dot matches a store of the 8-bit dot-product step the int8 schedule
// rule and the CPU code generator's VNNI selection work on:
//
//	C[idx] = C[idx] + cast<i32>(U[..]) * cast<i32>(S[..])
//
// with C i32, U ui8 and S i8 (either order of the sum and of the
// product). It returns the accumulator's load, the unsigned operand and
// the signed operand; ok is false for any other store.
func Int8Dot(st *BufferStore) (acc, u, s *BufferLoad, ok bool) {
	if st == nil || st.Buffer == nil || st.Buffer.DType != DI32 {
		return nil, nil, nil, false
	}
	add, isAdd := st.Value.(*Binary)
	if !isAdd || add.Op != OpAdd {
		return nil, nil, nil, false
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
		x, y := widened8(mul.A), widened8(mul.B)
		if x == nil || y == nil {
			continue
		}
		if x.Buffer.DType != DUI8 {
			x, y = y, x
		}
		if x.Buffer.DType == DUI8 && y.Buffer.DType == DI8 {
			return a, x, y, true
		}
	}
	return nil, nil, nil, false
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
