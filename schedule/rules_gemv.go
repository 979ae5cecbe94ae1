package schedule

import (
	tir "github.com/tessera-ml/tessera/tensorir"
)

// GEMV rule: matrix-vector and small-batch contractions (a dense layer at
// batch 1..gemvMaxRows, a 1×1 convolution on a 1×1 image). Such a block
// reads each weight once per call, so it is bound by the bandwidth of the
// cache holding the weights (L2 for the 627 KB of a 784×200 f32 layer)
// — if the loop nest keeps enough loads in flight. The multi-level tiling
// gives it a register tile of one row and one or two vectors: every
// reduction step then waits for the previous add of the same accumulator
// (4 cycles of latency per 16 outputs: 15.6 µs for 784×200 on one core).
// This rule vectorizes along the output instead, with many independent
// accumulators (the layout BLAS GEMV kernels use for y = A·x with A
// stored column-major, e.g. OpenBLAS's sgemv_n micro-kernels):
//
//	for n0 (fused with the other outer spatial loops; parallel unless the cost rule says serial)
//	  acc[M][U·W] = 0                     (cache_write "local", registers)
//	  for k (the reduction loops, in their order)
//	    for m (M rows, unrolled)
//	      for u (U vectors, unrolled)
//	        for l (W lanes, vectorized)
//	          acc[m][u·W+l] += x[m, k] · Wt[k, n0·U·W + u·W + l]
//	  y[m, n0·U·W + ·] = epilogue(acc)    (write-back with bias/relu folded in)
//
// The rewrite-layout step then stores a constant weight as
// [N/(U·W)][K][U·W], so each thread streams one contiguous panel, U·W
// floats per reduction step: U·M accumulators (up to the vector registers
// less the broadcasts, maxVectors) hide the add
// latency and give the load units U independent vector loads per x
// broadcast. N not a multiple of U·W splits with a guarded tail.

// gemvMaxRows bounds the rows (the product of the spatial extents other
// than the output columns) of a block the GEMV rule takes: with 8 rows the
// register tile has 3 vectors per row, which the multi-level tiling's 8×2
// tile already matches.
const gemvMaxRows = 4

// gemvPlan is the analysis of a GEMV-shaped block: its perfect nest, the
// column loop (binding the innermost store index of extent > 1), the
// other spatial loops (rows, product m) and the vector width.
type gemvPlan struct {
	name string
	nest []nestLoop
	col  int
	m    int64
	w    int64
}

// planGEMV matches block name (a tileable block) for the GEMV rule: the
// columns are the spatial loop binding the store's innermost index of
// extent > 1; the other spatial loops multiply to at most gemvMaxRows; the
// value reads one operand indexed by the columns and a reduction variable
// (the weight) and one indexed by a reduction variable but not the
// columns (the vector, broadcast). errNotTileable otherwise.
func planGEMV(s *Schedule, name string, target CPURules) (*gemvPlan, error) {
	blk, nest, w, ok := tilingSubject(s, name, target)
	if !ok {
		return nil, errNotTileable
	}
	store := blk.Body.(*tir.BufferStore)
	col := gemvColumn(store, nest)
	if col < 0 {
		return nil, errNotTileable
	}
	m := spatialSizeBut(nest, col)
	if m > gemvMaxRows || !gemvOperands(store, nest, nest[col].iv.Var) {
		return nil, errNotTileable
	}
	return &gemvPlan{name: name, nest: nest, col: col, m: m, w: w}, nil
}

// gemvColumn is the nest index of the spatial loop binding the store's
// innermost index whose extent exceeds 1 (an NCHW output of a 1×1 image
// is contiguous along its channels), or -1.
func gemvColumn(store *tir.BufferStore, nest []nestLoop) int {
	for d := len(store.Indices) - 1; d >= 0; d-- {
		v, ok := store.Indices[d].(*tir.Var)
		if !ok {
			if c, isConst := constInt(store.Indices[d]); isConst && c == 0 {
				continue
			}
			return -1
		}
		for i, nl := range nest {
			if nl.iv.Var != v || nl.iv.Kind != tir.Spatial {
				continue
			}
			if nl.extent > 1 {
				return i
			}
		}
	}
	return -1
}

// gemvOperands reports whether the store's value loads a weight (indexed
// by col and a reduction variable) and a vector (indexed by a reduction
// variable, not by col).
func gemvOperands(store *tir.BufferStore, nest []nestLoop, col *tir.Var) bool {
	usesReduce := func(ix []tir.Expr) bool {
		for _, nl := range nest {
			if nl.iv.Kind == tir.Reduce && indicesUse(ix, nl.iv.Var) {
				return true
			}
		}
		return false
	}
	weight, vector := false, false
	tir.VisitExpr(store.Value, func(x tir.Expr) bool {
		ld, ok := x.(*tir.BufferLoad)
		if !ok || ld.Buffer == store.Buffer || !usesReduce(ld.Indices) {
			return true
		}
		if indicesUse(ld.Indices, col) {
			weight = true
		} else {
			vector = true
		}
		return true
	})
	return weight && vector
}

// lanes is the vector width of the columns: the column extent N when it
// is at most W; else W when it divides N, or W/2 when that does (200
// outputs: 25 vectors of 8 lanes, no tail, instead of 12 of 16 and a
// masked tail, whose accumulator code generation keeps in memory), or the
// largest divisor of N between W/2 and W (84: 6 vectors of 14 lanes);
// else W with a guarded tail.
func (p *gemvPlan) lanes() int64 {
	n := p.nest[p.col].extent
	switch {
	case n <= p.w || n%p.w == 0:
		return min(n, p.w)
	case p.w >= 8 && n%(p.w/2) == 0:
		return p.w / 2
	}
	if d := largestDivisorAtMost(n, p.w); 2*d >= p.w {
		return d
	}
	return p.w
}

// vectors is the number of column vectors, ⌈N / lanes⌉.
func (p *gemvPlan) vectors() int64 { return ceilDiv(p.nest[p.col].extent, p.lanes()) }

// maxVectors is the most column vectors per tile: the vector registers
// (32 with AVX-512, else 16) less one broadcast per row and one spare,
// shared by the rows' accumulators, and no more than there are.
func (p *gemvPlan) maxVectors(target CPURules) int64 {
	return min(p.vectors(), max(1, (target.vectorRegs()-p.m-1)/p.m))
}

// gemvMinAccumulators is the fewest accumulators (rows × vectors) a tile
// may have for heuristicVectors to prefer it to a guarded tail: two FMA
// pipes of 4 cycles' latency.
const gemvMinAccumulators = 8

// heuristicVectors is the default tile's U: the fewest tiles of at most
// maxVectors vectors (at least 2 per core when the kernel is parallel and
// has that many vectors); among tile counts from there, the first that
// divides the vectors while its tile keeps gemvMinAccumulators
// accumulators (no guarded tail, whose masked accumulators code
// generation keeps in memory: the MLP's 200 outputs at batch 2 take 5
// tiles of 5 vectors of 8 lanes, 9.2 → 6.0 µs, not 13 + 12); else
// balanced tiles with a tail (1000 outputs at batch 1: 3 tiles of 21).
func (p *gemvPlan) heuristicVectors(target CPURules) int64 {
	n := p.vectors()
	least := ceilDiv(n, p.maxVectors(target))
	if !target.serial {
		least = max(least, min(n, 2*int64(target.Cores)))
	}
	for tiles := least; tiles <= n && (n/tiles)*p.m >= gemvMinAccumulators; tiles++ {
		if n%tiles == 0 {
			return n / tiles
		}
	}
	return ceilDiv(n, least)
}

// vectorCandidates are the U the sampled rules draw from: 1, 2, 4, 8, …
// up to maxVectors, and maxVectors itself.
func (p *gemvPlan) vectorCandidates(target CPURules) []int64 {
	top := p.maxVectors(target)
	var out []int64
	for u := int64(1); u < top; u *= 2 {
		out = append(out, u)
	}
	return append(out, top)
}

// tile schedules the block as the GEMV nest above with U = u column
// vectors per tile; errors are the primitives' refusals (or
// errNotTileable when the lanes cannot be vectorized).
func (p *gemvPlan) tile(s *Schedule, target CPURules, u int64) error {
	cols, err := s.Split(p.nest[p.col].rv, []int64{-1, u, p.lanes()})
	if err != nil {
		return err
	}
	var outer, reduce, rows []LoopRV
	for i, nl := range p.nest {
		switch {
		case i == p.col:
		case nl.iv.Kind == tir.Reduce:
			reduce = append(reduce, nl.rv)
		case nl.extent > 1:
			rows = append(rows, nl.rv)
		default:
			outer = append(outer, nl.rv)
		}
	}
	outer = append(outer, cols[0])
	order := append(append(append(append([]LoopRV{}, outer...), reduce...), rows...), cols[1], cols[2])
	if err := s.Reorder(order...); err != nil {
		return err
	}
	fused := outer[0]
	if len(outer) > 1 {
		if fused, err = s.Fuse(outer...); err != nil {
			return err
		}
	}
	if !tryVectorize(s, cols[2], target) {
		return errNotTileable
	}
	for _, l := range append(rows, cols[1]) {
		if err := s.Unroll(l); err != nil {
			return err
		}
	}
	// w = the lanes: the write-back is split like the columns (no tail).
	tp := &tilePlan{name: p.name, nest: p.nest, col: p.col, w: p.lanes(),
		levels: tileLevels{outer: fused, r0: reduce[:1]}}
	return tp.finishTile(s, target, 0)
}

// gemvSketch tiles block name with the GEMV rule when planGEMV matches and
// pick agrees, with U from vectors; when the rule does not match, or the
// primitives refuse it (the schedule is then replayed without the
// attempt), it runs other instead.
func gemvSketch(s *Schedule, name string, target CPURules, pick func() bool, vectors func(*gemvPlan) (int64, error), other func() error) error {
	p, err := planGEMV(s, name, target)
	if err != nil || !pick() {
		return other()
	}
	saved := snapshot(s)
	u, err := vectors(p)
	if err == nil {
		if err = p.tile(s, target, u); err == nil {
			return nil
		}
	}
	if err := s.restore(s.orig, saved); err != nil {
		return err
	}
	return other()
}
