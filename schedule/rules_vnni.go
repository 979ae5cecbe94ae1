package schedule

import (
	tir "github.com/tessera-ml/tessera/tensorir"
)

// The int8 rule: an i32 contraction of a ui8 operand U by an i8 operand S
// (a quantized dense layer, matmul or convolution after fold-qdq:
// activations ui8, weights i8) on a processor with VNNI, or AVX-512BW or
// AVX2, which emulate it exactly (CPURules.Int8Dot), is tiled
// for vpdpbusd, which sums 4 u8·s8 products into each of 16 i32 lanes per
// instruction — four times the multiply-adds of an f32 FMA on the same
// register width. The nest (TVM's x86 dense_vnni schedule, MetaSchedule's
// VNNI tensorization of a 16×4 dot):
//
//	for t (the other spatial loops, the row and column tiles, fused; parallel unless the cost rule says serial;
//	       an S larger than an L2's share: row blocks, column tiles, the block's row tiles — rowBlockTiles)
//	  acc[MR][NR·16] = 0                  (cache_write "local": registers)
//	  for r (the other reduction loops), k0 (K/4)
//	    for i (MR rows, unrolled)
//	      for u (NR column vectors, unrolled)
//	        for j (16 lanes, vectorized)
//	          for q (4)                      acc[i][u·16+j] += i32(U[i, k0·4+q]) · i32(S[k0·4+q, u·16+j])
//	  C = epilogue(acc)                   (write-back, requantization folded in)
//
// rewrite-layout then stores a constant S in the loops' order, [tiles]
// [K/4][NR][16][4]: the 64 bytes one (u, k0) step reads are contiguous,
// and code generation (targets/llvm/codegen_vnni.go) turns each j-q nest
// into one vpdpbusd of U's 4 bytes broadcast by S's 64. The rule needs the
// reduction variable that indexes U's innermost dimension to have an
// extent divisible by 4 (each lane's 4 bytes are one reduction step) and
// at least 16 columns (a convolution's input channel, moved innermost by
// the rule: vnniPlan); a shape it does not take gets the other rules.
// Without the packed layout (S not a constant) the same nest is widened
// as plain vectors, with the same results.

// vnniLanes and vnniDepth are the i32 lanes of one vpdpbusd and the
// 8-bit products each lane sums.
const (
	vnniLanes   = tir.Int8DotLanes
	vnniDepth   = tir.Int8DotDepth
	vnniMaxRows = 16
)

// vnniAccumulators bounds MR·NR, the 16-lane i32 accumulators of the
// register tile: the target's accumulator registers
// (CPURules.accumulatorRegs), each accumulator taking 512/VectorBits of
// them: 24 with AVX-512; 4 with 256-bit vectors (AVX2's emulation,
// AVX-VNNI), two ymm registers each, the rest S's vectors, U's broadcasts
// and the emulation's temporaries. Measured on a GEMM 1024³ by a
// constant weight (--mcpu haswell / alderlake, 2 threads): 12.1 /
// 3.8-4.2 ms with 4, 24-26 / 16-23 ms with 3 or 5 (tiles that do not
// divide 64 vectors, or spills), 17-21 / 12-14 ms with 6 (spills).
func vnniAccumulators(target CPURules) int64 {
	perAcc := max(1, int64(vnniLanes*32/max(target.VectorBits, 1)))
	return max(1, target.accumulatorRegs()/perAcc)
}

// vnniPlan is the analysis of a block the int8 rule takes: its nest and
// the columns (the store's innermost index, or for a convolution the
// output channel), rows (a spatial loop U reads and S does not; -1 when
// there is none) and the reduction loop of U's innermost index (or for a
// convolution its channel). packC and packU are the dimensions of the
// accumulator and of U that the rule moves innermost (-1: none): a
// convolution's NCHW output channel, so the accumulator's 16 lanes are
// contiguous, and its input channel, so the 4 bytes of one step are
// (U is then copied once per call into that layout, as cache_read and
// transform_layout; rules_channel.go moves dimensions the same way).
type vnniPlan struct {
	name          string
	nest          []nestLoop
	col, row, red int
	packC, packU  int
	// accumulators bounds MR·NR (vnniAccumulators).
	accumulators int64
	// blockS and blockU are the row blocks' byte budgets (vnniBlockS,
	// vnniBlockU: rowBlockTiles).
	blockS, blockU int64
}

// planVNNI matches block name for the int8 rule (errNotTileable when it
// does not apply).
func planVNNI(s *Schedule, name string, target CPURules) (*vnniPlan, error) {
	if !target.Int8Dot {
		return nil, errNotTileable
	}
	blk, nest, _, ok := tilingSubject(s, name, target)
	if !ok {
		return nil, errNotTileable
	}
	st := blk.Body.(*tir.BufferStore)
	d, ok := tir.Int8Dot(st)
	if !ok {
		return nil, errNotTileable
	}
	p := &vnniPlan{name: name, nest: nest, col: -1, row: -1, red: -1, packC: -1, packU: -1,
		accumulators: vnniAccumulators(target), blockS: vnniBlockS, blockU: vnniBlockU}
	u, sg := d.U.Buffer, d.S.Buffer
	lastC, lastU := len(st.Indices)-1, len(d.U.Indices)-1
	for i, nl := range nest {
		v := nl.iv.Var
		if directDim(st, sg, v) < 0 {
			continue
		}
		switch du, dc := directDim(st, u, v), storeDim(st, v); {
		case nl.iv.Kind == tir.Spatial && du == noUse && dc >= 0 && (p.col < 0 || p.packC >= 0):
			p.col, p.packC = i, dc
		case nl.iv.Kind == tir.Reduce && du >= 0 && (p.red < 0 || p.packU >= 0):
			p.red, p.packU = i, du
		}
	}
	if p.packC == lastC {
		p.packC = -1
	}
	if p.packU == lastU {
		p.packU = -1
	}
	if p.col < 0 || p.red < 0 || nest[p.col].extent < vnniLanes || nest[p.red].extent%vnniDepth != 0 {
		return nil, errNotTileable
	}
	for i, nl := range nest {
		if nl.iv.Kind == tir.Spatial && i != p.col && nl.extent > 1 &&
			indicesUse(d.U.Indices, nl.iv.Var) && !indicesUse(d.S.Indices, nl.iv.Var) {
			p.row = i
		}
	}
	return p, nil
}

// weightsStationary reports whether the column tiles go outermost in the
// fused parallel loop: when the columns outnumber the output positions
// (the other spatial extents' product; ResNet's last convolutions, 512
// channels on 7×7), consecutive tiles then share one slice of S, which
// stays in cache, instead of streaming all of S once per row tile
// (layer 4 of ResNet-18: 2.4 MB of weights for each of 7 output rows).
// Otherwise the row tiles go outermost and one tile of U stays in cache
// across the column tiles.
func (p *vnniPlan) weightsStationary() bool {
	return p.nest[p.col].extent > spatialSizeBut(p.nest, p.col)
}

// The row blocks of a large contraction: when S (reduction × columns
// bytes) exceeds vnniBlockS, more than an L2's share, and the row tiles
// go outermost, the rows are blocked so that each column tile's panel of
// S serves a block of rows before the next: for each block of about
// vnniBlockU bytes of U (at most vnniBlockRows rows), every column tile,
// every row tile of the block (the f32 rule's S2 row block, without its
// reduction blocking: the accumulators hold the whole reduction). A
// 1024³ GEMM otherwise reads its 1 MB weight once per 2-row tile, from L3.
const (
	vnniBlockS    = 256 << 10
	vnniBlockU    = 128 << 10
	vnniBlockRows = 64
)

// rowBlockTiles is the register tiles of mr rows in a row block, a
// divisor of the row tiles (1: no blocking).
func (p *vnniPlan) rowBlockTiles(mr int64) int64 {
	if p.row < 0 || p.weightsStationary() {
		return 1
	}
	k := reduceSize(p.nest)
	if k*p.nest[p.col].extent <= p.blockS {
		return 1
	}
	rows := min(vnniBlockRows, max(mr, p.blockU/k))
	tiles := ceilDiv(p.rows(), mr)
	if f := largestDivisorAtMost(tiles, rows/mr); f < tiles {
		return f
	}
	return 1
}

// rows is the row extent (1 without a row loop); vectors the column
// vectors, ⌈N/16⌉.
func (p *vnniPlan) rows() int64 {
	if p.row < 0 {
		return 1
	}
	return p.nest[p.row].extent
}

func (p *vnniPlan) vectors() int64 { return ceilDiv(p.nest[p.col].extent, vnniLanes) }

// tileShapes lists the register tiles (MR, NR) of at most
// p.accumulators accumulators, MR ≤ rows and NR ≤ vectors, and at
// least 8 of them (enough to cover vpdpbusd's latency) where the shape
// allows. When 16 does not divide the columns, the last column vector is
// a guarded tail, and code generation runs the other tiles unguarded only
// when the guard names the lanes and loops outside the reduction
// (codegen_version.go): so NR is 1 (no unrolled column loop in the guard)
// and MR divides the rows (no row guard beside it).
func (p *vnniPlan) tileShapes() [][2]int64 {
	colTail := p.nest[p.col].extent%vnniLanes != 0
	fits := func(mr, nr int64) bool { return !colTail || nr == 1 && p.rows()%mr == 0 }
	var all [][2]int64
	most := int64(1)
	for mr := int64(1); mr <= min(p.rows(), vnniMaxRows); mr++ {
		for nr := int64(1); nr <= min(p.vectors(), p.accumulators/mr); nr++ {
			if fits(mr, nr) {
				all = append(all, [2]int64{mr, nr})
				most = max(most, mr*nr)
			}
		}
	}
	var out [][2]int64
	for _, t := range all {
		if t[0]*t[1] >= min(8, most) {
			out = append(out, t)
		}
	}
	return out
}

// vnniCover is the accumulators that keep both vpdpbusd pipes busy (5
// cycles of latency, 2 per cycle).
const vnniCover = 12

// vnniL1 is the L1 data cache the int8 rule assumes, the smallest of
// the processors with these instructions (32 KB: Intel Skylake to Ice
// Lake, AMD Zen 2 and 3; Zen 4 and 5 have 48 KB).
const vnniL1 = 32 << 10

// heuristicShape is the default register tile, among the tiles without a
// guarded tail (MR divides the rows, NR the vectors; any tile when no
// such tile is larger than 1×1): of those with at least vnniCover
// accumulators, the fewest loads per vpdpbusd ((MR+w·NR)/(MR·NR): each
// step loads NR vectors of S and broadcasts MR words of U), then the
// most accumulators; with none that large, the most accumulators. A
// load of S counts w = 2 broadcasts when one column vector's panel of S
// (the reduction × 16 lanes bytes) exceeds vnniL1: S then streams from
// L2 on every row tile, and a tile of more rows reads it fewer times. 4×4
// for a 1024² GEMM, 7×2 for ResNet's 512 channels on 7×7 (1×16 would
// load a vector of S per instruction), 7×2 for its 256 channels on 14×14
// (2×8, which counts fewer loads with w = 1, reads each column vector's
// 36 KB panel once per 2 rows instead of 7: 300 against 175 µs per
// int8 convolution on a Zen 5, 2 threads),
// 1×16 at batch 1 with 1024 columns.
func (p *vnniPlan) heuristicShape() [2]int64 {
	best, bestTail := [2]int64{1, 1}, [2]int64{1, 1}
	w := int64(1)
	if reduceSize(p.nest)*vnniLanes > vnniL1 {
		w = 2
	}
	better := func(a, b [2]int64) bool {
		pa, pb := a[0]*a[1], b[0]*b[1]
		if (pa >= vnniCover) != (pb >= vnniCover) {
			return pa >= vnniCover
		}
		if la, lb := (a[0]+w*a[1])*pb, (b[0]+w*b[1])*pa; pa >= vnniCover && la != lb {
			return la < lb
		}
		if pa != pb {
			return pa > pb
		}
		return a[0]+a[1] < b[0]+b[1]
	}
	for _, t := range p.tileShapes() {
		if better(t, bestTail) {
			bestTail = t
		}
		if p.rows()%t[0] == 0 && p.vectors()%t[1] == 0 && better(t, best) {
			best = t
		}
	}
	if best[0]*best[1] == 1 {
		return bestTail
	}
	return best
}

// tile schedules the block as the nest above with an MR×NR register tile.
func (p *vnniPlan) tile(s *Schedule, target CPURules, mr, nr int64) error {
	colFactors := []int64{-1, nr, vnniLanes}
	if nr == 1 { // no unit loop: a column tail's guard then names only the lanes and the tiles
		colFactors = []int64{-1, vnniLanes}
	}
	cols, err := s.Split(p.nest[p.col].rv, colFactors)
	if err != nil {
		return err
	}
	lanes := cols[len(cols)-1]
	red, err := s.Split(p.nest[p.red].rv, []int64{-1, vnniDepth})
	if err != nil {
		return err
	}
	var rows []LoopRV
	if p.row >= 0 {
		if rows, err = s.Split(p.nest[p.row].rv, []int64{-1, mr}); err != nil {
			return err
		}
	}
	var outer, reduce []LoopRV
	for i, nl := range p.nest {
		switch {
		case i == p.col || i == p.row || i == p.red:
		case nl.iv.Kind == tir.Reduce:
			reduce = append(reduce, nl.rv)
		default:
			outer = append(outer, nl.rv)
		}
	}
	// The row tiles inside a row block go after the column tiles
	// (rowBlockTiles is 1 without a row loop).
	var rowTiles []LoopRV
	if f := p.rowBlockTiles(mr); f > 1 {
		rb, err := s.Split(rows[0], []int64{-1, f})
		if err != nil {
			return err
		}
		rows[0], rowTiles = rb[0], rb[1:]
	}
	if rows != nil {
		outer = append(outer, rows[0])
	}
	if p.weightsStationary() {
		outer = append([]LoopRV{cols[0]}, outer...)
	} else {
		outer = append(append(outer, cols[0]), rowTiles...)
	}
	reduce = append(reduce, red[0])
	inner := append(append([]LoopRV{}, cols[1:]...), red[1])
	if rows != nil {
		inner = append([]LoopRV{rows[1]}, inner...)
	}
	if err := s.Reorder(append(append(append([]LoopRV{}, outer...), reduce...), inner...)...); err != nil {
		return err
	}
	fused := outer[0]
	if len(outer) > 1 {
		if fused, err = s.Fuse(outer...); err != nil {
			return err
		}
	}
	if !tryVectorize(s, lanes, target) {
		return errNotTileable
	}
	unroll := cols[1 : len(cols)-1]
	if rows != nil {
		unroll = append(unroll, rows[1])
	}
	for _, l := range unroll {
		if err := s.Unroll(l); err != nil {
			return err
		}
	}
	tp := &tilePlan{name: p.name, nest: p.nest, col: p.col, w: vnniLanes,
		levels: tileLevels{outer: fused, r0: reduce[:1]}, pack: p.pack}
	if err := tp.finishTile(s, target, 0); err != nil {
		return err
	}
	if p.nest[p.col].extent%vnniLanes != 0 {
		guardInit(s, p.name)
	}
	return nil
}

// pack moves the accumulator's column dimension and U's reduction
// dimension innermost (packC, packU): transform_layout of the
// accumulator cache, and of a cache_read copy of U made once per call.
func (p *vnniPlan) pack(s *Schedule) error {
	b := BlockRV{p.name}
	if p.packC >= 0 {
		r := findBlock(s.Func().Body, p.name)
		st, ok := r.Block.Body.(*tir.BufferStore)
		if !ok || st.Buffer.Scope != tir.ScopeLocal {
			return errNotTileable
		}
		if err := s.TransformLayout(b, 0, "write", innermostMap(len(st.Indices), p.packC)); err != nil {
			return err
		}
	}
	if p.packU < 0 {
		return nil
	}
	r := findBlock(s.Func().Body, p.name)
	d, _ := tir.Int8Dot(r.Block.Body.(*tir.BufferStore))
	idx := -1
	for i, rd := range r.Block.Reads {
		if rd.Buffer == d.U.Buffer {
			idx = i
		}
	}
	if idx < 0 {
		return errNotTileable
	}
	cb, err := s.CacheRead(b, idx, tir.ScopeLocal)
	if err != nil {
		return err
	}
	if err := s.TransformLayout(b, readIndexOf(s, p.name, cb.Name), "read", innermostMap(len(d.U.Indices), p.packU)); err != nil {
		return err
	}
	return channelInnermost(s, cb, p.packU)
}

// channelInnermost reorders the loops of copy block cb so the loop of
// the source's dimension dim (the channel) is innermost: the copy then
// writes whole runs of the channel-innermost buffer, and the threads the
// simple rule later gives its outer loop write disjoint cache lines (with
// the channel loop outermost and parallel, both threads would write every
// 64-byte line of channels, and a ResNet-18 layer-1 convolution ran
// slower on two threads than on one). A copy whose loops do not map one
// to one stays as it is.
func channelInnermost(s *Schedule, cb BlockRV, dim int) error {
	r := findBlock(s.Func().Body, cb.Name)
	ls, err := s.GetLoops(cb)
	if err != nil || r == nil || len(r.Block.Reads) != 1 || dim >= len(r.Block.Reads[0].Region) {
		return nil
	}
	src := r.Block.Reads[0].Region[dim].Min
	var ch LoopRV
	var others []LoopRV
	for _, l := range ls {
		f, err := s.FindLoop(l)
		if err != nil {
			return nil
		}
		uses := false
		for i, v := range r.Values {
			if tir.UsesVar(v, f.Var) && tir.UsesVar(src, r.Block.IterVars[i].Var) {
				uses = true
			}
		}
		if uses {
			ch = l
		} else {
			others = append(others, l)
		}
	}
	if ch == (LoopRV{}) || len(others) == 0 {
		return nil
	}
	return s.Reorder(append(others, ch)...)
}

// guardInit wraps the register tile's init (decompose_reduction's
// "<name>_init", under unrolled and vectorized loops only) in a unit loop
// (add_unit_loop): code generation versions a serial loop on a column
// tail's guard (codegen_version.go), so the init of every whole tile
// stores unmasked vectors and the accumulators stay in registers; with
// the guard under no serial loop, the init's masked stores would keep
// them in memory. Nothing changes when the init is not there.
func guardInit(s *Schedule, name string) {
	ls, err := s.GetLoops(BlockRV{name + "_init"})
	if err != nil {
		return
	}
	for _, l := range ls {
		if f, err := s.FindLoop(l); err == nil && (f.Kind == tir.Unrolled || f.Kind == tir.Vectorized) {
			_, _ = s.AddUnitLoop(l)
			return
		}
	}
}

// vnniSketch tiles block name with the int8 rule when planVNNI matches,
// with the register tile from shape; when the rule does not match, or
// the primitives refuse it (the schedule is then replayed without the
// attempt), it runs other instead.
func vnniSketch(s *Schedule, name string, target CPURules, shape func(*vnniPlan) ([2]int64, error), other func() error) error {
	p, err := planVNNI(s, name, target)
	if err != nil {
		return other()
	}
	saved := snapshot(s)
	t, err := shape(p)
	if err == nil {
		if err = p.tile(s, target, t[0], t[1]); err == nil {
			return nil
		}
	}
	if err := s.restore(s.orig, saved); err != nil {
		return err
	}
	return other()
}

// sampledShape draws the register tile: MR and NR with
// sample_categorical among the shapes of at most p.accumulators
// accumulators (so the trace records them and the tuner mutates them).
func (p *vnniPlan) sampledShape(s *Schedule) ([2]int64, error) {
	shapes := p.tileShapes()
	idx := make([]int64, len(shapes))
	for i := range idx {
		idx[i] = int64(i)
	}
	i, err := s.SampleCategorical(idx, uniform(len(idx)))
	if err != nil {
		return [2]int64{}, err
	}
	return shapes[i], nil
}
