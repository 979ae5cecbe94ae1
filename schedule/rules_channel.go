package schedule

import (
	"strconv"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// Channel-vectorized tiling: the second sketch of the multi-level tiling
// rule, for blocks like a convolution whose output's innermost dimension
// (the image width: 56, 28, 14, 7 in ResNet) wastes vector lanes while
// another output dimension (the output channel) is long and indexes only
// some operands (the weights, not the input). The register tile
// vectorizes that dimension instead, as oneDNN's and TVM's NCHWc x86
// convolutions do (TVM's topi/x86/conv2d_avx_common.py), with the layout
// changes kept inside the kernel:
//
//   - columns: the channel loop (vectorized, k·W lanes); rows: the loop
//     binding the store's innermost index (unrolled). Each reduction step
//     loads k weight vectors and broadcasts one input element per row,
//     whatever the convolution's stride.
//   - the accumulator cache (cache_write "local") is transformed so the
//     channel dimension is innermost: the register tile's stores are
//     contiguous (the write-back reads it with a stride).
//   - an operand indexed by the channel in another than its innermost
//     dimension is cached (cache_read "local", once per call) with that
//     dimension moved innermost (transform_layout). Constant convolution
//     kernels need no copy: the conv-kernel-layout pass has already made
//     them HWIO at compile time.
//
// After CompactBufferAllocation (code generation) the accumulator cache is
// a tile allocated inside the parallel loop.

// planChannelTiling analyzes block name for the channel-vectorized
// tiling: the columns are a spatial loop that binds a store index other
// than the innermost directly, is indexed directly by some read and not
// used at all by another (the broadcast operand), and whose extent is at
// least the vector width; the innermost such loop wins. The rows are the
// loop binding the store's innermost index. errNotTileable when there is
// none, or when an operand would have to be copied into a channel-
// innermost layout: measured on 3×3 convolutions with weight arguments,
// the per-call copy costs more than the tiling gains (28²: 216 against
// 265 GFLOP/s; 14²: 114 against 289), while constant kernels are HWIO
// already (conv-kernel-layout) and need none.
func planChannelTiling(s *Schedule, name string, target CPURules) (*tilePlan, error) {
	blk, nest, w, ok := tilingSubject(s, name, target)
	if !ok {
		return nil, errNotTileable
	}
	store := blk.Body.(*tir.BufferStore)
	last := len(store.Indices) - 1
	row := -1
	if v, ok := store.Indices[last].(*tir.Var); ok {
		for i, nl := range nest {
			if nl.iv.Var == v && nl.iv.Kind == tir.Spatial {
				row = i
			}
		}
	}
	if row < 0 {
		return nil, errNotTileable
	}
	col := -1
	for i, nl := range nest {
		d := storeDim(store, nl.iv.Var)
		if i == row || nl.iv.Kind != tir.Spatial || nl.extent < w || d < 0 || d == last {
			continue
		}
		if channelOperands(blk, store, nl.iv.Var) {
			col = i
		}
	}
	if col < 0 || copiedElems(blk, store, nest[col].iv.Var) > 0 {
		return nil, errNotTileable
	}
	return &tilePlan{name: name, nest: nest, col: col, row: row, w: w, accRegs: target.accumulatorRegs(), channel: true,
		panelVars: panelVars(store, nest[col].iv.Var)}, nil
}

// copiedElems counts the elements of the reads that index v elsewhere
// than innermost (packChannel copies them).
func copiedElems(blk *tir.Block, store *tir.BufferStore, v *tir.Var) int64 {
	var n int64
	for _, rd := range blk.Reads {
		if rd.Buffer == store.Buffer {
			continue
		}
		if d := directDim(store, rd.Buffer, v); d >= 0 && d != len(rd.Buffer.Shape)-1 {
			shape, ok := rd.Buffer.ConstShape()
			if !ok {
				return 1 << 62
			}
			size := int64(1)
			for _, e := range shape {
				size *= e
			}
			n += size
		}
	}
	return n
}

// channelOperands reports whether, among the reads of the block other
// than the stored buffer, some index v directly in one dimension (they
// will be vector loads) and some do not use v at all (broadcasts), and
// none uses v otherwise.
func channelOperands(blk *tir.Block, store *tir.BufferStore, v *tir.Var) bool {
	packed, broadcast := false, false
	for _, rd := range blk.Reads {
		if rd.Buffer == store.Buffer {
			continue
		}
		switch d := directDim(store, rd.Buffer, v); {
		case d >= 0:
			packed = true
		case d == noUse:
			broadcast = true
		default:
			return false
		}
	}
	return packed && broadcast
}

// storeDim is the dimension of the store that v indexes directly (the
// index is v itself), or -1.
func storeDim(st *tir.BufferStore, v *tir.Var) int {
	for d, e := range st.Indices {
		if e == tir.Expr(v) {
			return d
		}
	}
	return -1
}

// directDim's answers besides a dimension: noUse for a buffer whose loads
// never mention v, mixedUse for one that uses v other than as one whole
// index.
const (
	noUse    = -1
	mixedUse = -2
)

// directDim is the dimension of buf that every load of it in the store's
// value indexes by v itself (the same one in each load, and v in no
// other index), noUse when no load of buf mentions v, else mixedUse.
func directDim(store *tir.BufferStore, buf *tir.Buffer, v *tir.Var) int {
	dim, seen := noUse, false
	tir.VisitExpr(store.Value, func(x tir.Expr) bool {
		ld, ok := x.(*tir.BufferLoad)
		if !ok || ld.Buffer != buf || dim == mixedUse {
			return true
		}
		d := noUse
		for i, e := range ld.Indices {
			switch {
			case e == tir.Expr(v) && d == noUse:
				d = i
			case tir.UsesVar(e, v):
				d = mixedUse
			}
		}
		if seen && d != dim {
			d = mixedUse
		}
		dim, seen = d, true
		return true
	})
	return dim
}

// innermostMap is the index map of a rank-n buffer that moves dimension d
// last (a permutation).
func innermostMap(n, d int) IndexMap {
	m := IndexMap{}
	for i := 0; i < n; i++ {
		m.Params = append(m.Params, tir.NewVar("i"+strconv.Itoa(i), tir.DIndex))
	}
	for i := 0; i < n; i++ {
		if i != d {
			m.Results = append(m.Results, m.Params[i])
		}
	}
	m.Results = append(m.Results, m.Params[d])
	return m
}

// packChannel completes the channel-vectorized tiling after finishTile:
// the accumulator cache gets the channel dimension innermost, and each
// operand indexed by the channel elsewhere than innermost is cached with
// that dimension innermost. Errors: a step the primitives refuse (the
// caller undoes the tiling).
func (p *tilePlan) packChannel(s *Schedule) error {
	b := BlockRV{p.name}
	v := p.nest[p.col].iv.Var
	r := findBlock(s.Func().Body, p.name)
	if r == nil {
		return errNotTileable
	}
	store, ok := r.Block.Body.(*tir.BufferStore)
	if !ok || store.Buffer.Scope != tir.ScopeLocal {
		return errNotTileable
	}
	if d := storeDim(store, v); d >= 0 && d != len(store.Indices)-1 {
		if err := s.TransformLayout(b, 0, "write", innermostMap(len(store.Indices), d)); err != nil {
			return err
		}
	}
	for {
		r = findBlock(s.Func().Body, p.name)
		store = r.Block.Body.(*tir.BufferStore)
		idx, dim, rank := -1, -1, 0
		for i, rd := range r.Block.Reads {
			rank = len(rd.Buffer.Shape)
			if rd.Buffer.Scope == tir.ScopeLocal || rd.Buffer == store.Buffer {
				continue
			}
			if d := directDim(store, rd.Buffer, v); d >= 0 && d != rank-1 {
				idx, dim = i, d
				break
			}
		}
		if idx < 0 {
			return nil
		}
		cb, err := s.CacheRead(b, idx, tir.ScopeLocal)
		if err != nil {
			return err
		}
		if err := s.TransformLayout(b, readIndexOf(s, p.name, cb.Name), "read", innermostMap(rank, dim)); err != nil {
			return err
		}
	}
}

// readIndexOf is the index of the read region of block name whose buffer
// the block cache writes (-1 when there is none).
func readIndexOf(s *Schedule, name, cache string) int {
	r := findBlock(s.Func().Body, name)
	c := findBlock(s.Func().Body, cache)
	if r == nil || c == nil || len(c.Block.Writes) == 0 {
		return -1
	}
	for i, rd := range r.Block.Reads {
		if rd.Buffer == c.Block.Writes[0].Buffer {
			return i
		}
	}
	return -1
}
