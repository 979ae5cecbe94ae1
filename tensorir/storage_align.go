package tensorir

// AttrBufferDimAlign is the block annotation of TVM's storage_align
// (attr::buffer_dim_align): a list of [buffer_index, axis, factor,
// offset], each asking that the stride of dimension axis of the block's
// write buffer buffer_index be factor·k + offset.
const AttrBufferDimAlign = "buffer_dim_align"

// AlignedStrides returns, for every buffer of f that a block's
// AttrBufferDimAlign annotation names and that has a constant shape, the
// padded strides code generation allocates it with (elements,
// outermost first). The rule is TVM's (storage_flatten.cc): walking the
// dimensions innermost first, the running stride of an aligned
// dimension is rounded up to the next factor·k + offset, then multiplied
// by the dimension's extent for the next one. Buffers without an
// annotation are not in the map (dense row-major).
func AlignedStrides(f *PrimFunc) map[*Buffer][]int64 {
	out := map[*Buffer][]int64{}
	VisitStmt(f.Body, func(s Stmt) bool {
		r, ok := s.(*BlockRealize)
		if !ok {
			return true
		}
		list, ok := r.Block.Annotations[AttrBufferDimAlign].(ArrayAttr)
		if !ok {
			return true
		}
		aligns := map[*Buffer]map[int][2]int64{}
		for _, e := range list {
			a, ok := e.(ArrayAttr)
			if !ok || len(a) != 4 {
				continue
			}
			idx, ok1 := a[0].(IntAttr)
			axis, ok2 := a[1].(IntAttr)
			factor, ok3 := a[2].(IntAttr)
			offset, ok4 := a[3].(IntAttr)
			if !ok1 || !ok2 || !ok3 || !ok4 || int(idx) < 0 || int(idx) >= len(r.Block.Writes) || factor <= 0 {
				continue
			}
			b := r.Block.Writes[idx].Buffer
			if aligns[b] == nil {
				aligns[b] = map[int][2]int64{}
			}
			aligns[b][int(axis)] = [2]int64{int64(factor), int64(offset)}
		}
		for b, dims := range aligns {
			if st, ok := alignStrides(b, dims); ok {
				out[b] = st
			}
		}
		return true
	})
	return out
}

// alignStrides pads the row-major strides of b per dims (axis → factor,
// offset); ok is false for a symbolic shape or an axis out of range.
func alignStrides(b *Buffer, dims map[int][2]int64) ([]int64, bool) {
	shape, ok := b.ConstShape()
	if !ok || b.Strides != nil || b.ElemOffset != nil {
		return nil, false
	}
	strides := make([]int64, len(shape))
	stride := int64(1)
	for d := len(shape) - 1; d >= 0; d-- {
		if fo, ok := dims[d]; ok {
			f, o := fo[0], fo[1]
			stride += ((f+o-stride%f)%f + f) % f
		}
		strides[d] = stride
		stride *= shape[d]
	}
	for axis := range dims {
		if axis < 0 || axis >= len(shape) {
			return nil, false
		}
	}
	return strides, true
}
