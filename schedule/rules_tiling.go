package schedule

import (
	"errors"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// errNotTileable makes ApplyDefaultRules fall back to the simple rule.
var errNotTileable = errors.New("not tileable")

// Tile-size heuristic of the multi-level tiling rule (x86-64, f32; the
// sizes scale with the vector width W = VectorBits/32, 16 for AVX-512).
// The generated code multiplies and adds separately (no FMA contraction,
// for results exact against the interpreter), so the register tile must
// hide the add latency with many independent accumulators:
//
//   - register tile (S3) rows × cols: cols = the output's contiguous
//     (innermost written) dimension, whole when it is at most W, else 2·W
//     (or W when that wastes fewer lanes); when that does not divide the
//     dimension, W with a guarded tail: targets/cpu peels the last column
//     tile (a constant lane mask) and versions the reduction loop of the
//     others (whole, unmasked vectors), so the accumulators stay in
//     registers (56 → 3×16 + an 8-lane tail: 0.90 ms against 1.33 ms
//     with 8-lane tiles and 2.4 ms with 32 lanes and a masked tail; a
//     whole 56-lane vector is legalized into 3.5 registers with shuffles
//     and spills). A dimension between W and 2·W that W does not divide
//     but 2 does is two tiles of half of it instead (28 → 2×14: the
//     peeled tail tile's masked accumulators stay in memory, 6.0 against
//     2.7 µs on LeNet-5's first conv at batch 1). rows = min(16, A / vector
//     registers per row), A the accumulator registers (24 of AVX-512's
//     32 zmm, 8 of AVX2's 16 ymm: CPURules.accumulatorRegs), lowered to a
//     divisor of the row dimension when one is at least half of it: 8×32
//     for GEMM 1024 (16 zmm accumulators, plus 2 for B's row and 1
//     broadcast of A, of 32; 4×16 with AVX2), 16×16 for the 56² conv.
//     Two-vector rows that leave a guarded row tail, or half the
//     accumulators one-vector rows would fill, become one-vector rows
//     (AVX2's 7×8 on a 7- or 14-wide row).
//     The rows come from a spatial dimension that does not index the
//     operand the columns index (GEMM's i: A[i,k] is broadcast; conv's
//     output channel: the weight is broadcast and one input vector serves
//     every row). Inner reduction loops of extent ≤ 4 (a 3×3 window) are
//     unrolled as well (1.66 → 1.32 ms on the 56² conv).
//   - reduction inner tile (R1): KC = 256 iterations (the innermost
//     reduction loops whole while they fit, then the largest divisor of
//     the next one that fits): the micro-kernel streams a KC×cols panel
//     of B (32 KB for 256×32 f32, L1-sized) against rows×KC of A (8 KB).
//   - S2 (the tiles each thread iterates between R0 and R1): NC = 4
//     register-tile columns (128 f32) and 64/rows row tiles (64 rows):
//     the 64×256 A block (64 KB) and 256×128 B block (128 KB) stay in
//     L2 across the S2 loops.
//   - S0 (outermost, fused and parallel): what remains, ⌈E / (S2·S3)⌉;
//     S1 is 1 (kept as a level for tuning). Other spatial dimensions
//     (conv's output row) go wholly to S0, except that a channel-
//     vectorized tiling's whole image goes to S2 when it fits the row
//     block (fillBlock).
//
// Factors that do not divide an extent split with a guarded tail
// (split's predicate), so every shape works.
const (
	tileKC      = 256
	tileNCVecs  = 4  // register tiles per S2 column block
	tileMC      = 64 // rows per S2 row block
	tileMaxRows = 16
)

// tileable reports whether the multi-level tiling rule applies to block
// name: at least one reduce and two spatial iteration variables, an
// init, a single store, one loop per iteration variable bound to it
// directly (constant extents from 0, the iteration domain), perfectly
// nested, and no annotated loop yet.
func tileable(s *Schedule, name string) bool {
	r := findBlock(s.Func().Body, name)
	if r == nil || underAnnotated(s, name) {
		return false
	}
	b := r.Block
	if b.Init == nil || len(b.Writes) != 1 {
		return false
	}
	if _, ok := b.Body.(*tir.BufferStore); !ok {
		return false
	}
	if p, ok := constInt(r.Predicate); r.Predicate != nil && !(ok && p == 1) {
		return false
	}
	nS, nR := 0, 0
	for _, iv := range b.IterVars {
		switch iv.Kind {
		case tir.Spatial:
			nS++
		case tir.Reduce:
			nR++
		default:
			return false
		}
	}
	if nS < 2 || nR < 1 {
		return false
	}
	_, ok := nestOf(s, name)
	return ok
}

// nestLoop is one loop of a tileable nest and the iteration variable it
// binds.
type nestLoop struct {
	rv     LoopRV
	extent int64
	iv     *tir.IterVar
}

// reduceSize is the product of nest's reduction extents (the
// multiply-adds per output element of a contraction).
func reduceSize(nest []nestLoop) int64 {
	k := int64(1)
	for _, nl := range nest {
		if nl.iv.Kind == tir.Reduce {
			k *= nl.extent
		}
	}
	return k
}

// spatialSizeBut is the product of nest's spatial extents other than
// loop col's (the output positions per column).
func spatialSizeBut(nest []nestLoop, col int) int64 {
	m := int64(1)
	for i, nl := range nest {
		if i != col && nl.iv.Kind == tir.Spatial {
			m *= nl.extent
		}
	}
	return m
}

// nestOf matches the perfect nest of block name (see tileable).
func nestOf(s *Schedule, name string) ([]nestLoop, bool) {
	r := findBlock(s.Func().Body, name)
	fors, err := s.LoopsOf(BlockRV{name})
	if err != nil || len(fors) != len(r.Block.IterVars) {
		return nil, false
	}
	out := make([]nestLoop, len(fors))
	used := map[int]bool{}
	for li, f := range fors {
		lo, ok1 := constInt(f.Min)
		ext, ok2 := constInt(f.Extent)
		if !ok1 || !ok2 || lo != 0 || ext < 1 || f.Kind != tir.Serial || len(f.Annotations) != 0 {
			return nil, false
		}
		if li+1 < len(fors) && f.Body != tir.Stmt(fors[li+1]) {
			return nil, false
		}
		if li+1 == len(fors) && f.Body != tir.Stmt(r) {
			return nil, false
		}
		found := -1
		for k, v := range r.Values {
			if tir.UsesVar(v, f.Var) {
				if found >= 0 || v != tir.Expr(f.Var) {
					return nil, false
				}
				found = k
			}
		}
		if found < 0 || used[found] {
			return nil, false
		}
		iv := r.Block.IterVars[found]
		dlo, ok1 := constInt(iv.Dom.Min)
		dext, ok2 := constInt(iv.Dom.Extent)
		if !ok1 || !ok2 || dlo != 0 || dext != ext {
			return nil, false
		}
		used[found] = true
		out[li] = nestLoop{rv: LoopRV{f.Var}, extent: ext, iv: iv}
	}
	return out, true
}

// indicesUse reports whether an index mentions v.
func indicesUse(ix []tir.Expr, v *tir.Var) bool {
	for _, e := range ix {
		if tir.UsesVar(e, v) {
			return true
		}
	}
	return false
}

// largestDivisorAtMost is the largest divisor of n that is ≤ cap (≥ 1).
func largestDivisorAtMost(n, limit int64) int64 {
	for d := min(n, limit); d > 1; d-- {
		if n%d == 0 {
			return d
		}
	}
	return 1
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// rowTile is the register tile's rows for a row extent of ext with at
// most limit rows: min(limit, ext), lowered to a divisor of ext when one
// is at least half of it.
func rowTile(ext, limit int64) int64 {
	rows := min(limit, ext)
	if d := largestDivisorAtMost(ext, rows); 2*d >= rows {
		rows = d
	}
	return rows
}

// tilePlan is the analysis of a tileable block shared by the default
// (heuristic) and the sampled multi-level tiling: its perfect nest, the
// column loop (binding the store's innermost index, vectorized in the
// register tile), the row loop (unrolled in the register tile) and the
// vector width.
type tilePlan struct {
	name     string
	nest     []nestLoop
	col, row int
	w        int64
	// accRegs is the vector registers the register tile's accumulators
	// may take (CPURules.accumulatorRegs).
	accRegs int64
	levels  tileLevels // set by tileNest
	// channel: the columns are not the store's innermost dimension
	// (rules_channel.go); finishTile then changes the layouts.
	channel bool
	// oneTiledOperand: one buffer besides the output is read with the row or
	// column variables (pooling's input; a depthwise convolution's, whose
	// weights are the same for every tile of a channel), so no operand
	// panel is reused across the register tiles.
	oneTiledOperand bool
	// panelVars are the variables that index the reads the column loop
	// indexes (the weights of a convolution whose columns are its output
	// channels): a loop without one of them reads the same panel.
	panelVars map[*tir.Var]bool
	// pack changes the layouts after the tiling (the int8 rule's
	// vnniPlan.pack), before the write-back is vectorized.
	pack func(*Schedule) error
}

// tilingSubject is block name of a tileable nest, the nest and the vector
// width (false when the nest does not match).
func tilingSubject(s *Schedule, name string, target CPURules) (*tir.Block, []nestLoop, int64, bool) {
	r := findBlock(s.Func().Body, name)
	nest, ok := nestOf(s, name)
	if r == nil || !ok {
		return nil, nil, 0, false
	}
	return r.Block, nest, lanes(target, r.Block), true
}

// planTiling analyzes block name for multi-level tiling.
func planTiling(s *Schedule, name string, target CPURules) (*tilePlan, error) {
	blk, nest, w, ok := tilingSubject(s, name, target)
	if !ok {
		return nil, errNotTileable
	}
	store := blk.Body.(*tir.BufferStore)
	// The columns: the spatial loop binding the store's last index.
	col := -1
	if last, ok := store.Indices[len(store.Indices)-1].(*tir.Var); ok {
		for i, nl := range nest {
			if nl.iv.Var == last && nl.iv.Kind == tir.Spatial {
				col = i
			}
		}
	}
	if col < 0 {
		return nil, errNotTileable
	}
	colVar := nest[col].iv.Var
	// The rows: a spatial loop whose variable indexes no read the columns
	// index (innermost such), else the spatial loop right before col.
	row := -1
	for i, nl := range nest {
		if i == col || nl.iv.Kind != tir.Spatial {
			continue
		}
		shared := false
		tir.VisitExpr(store.Value, func(x tir.Expr) bool {
			if ld, ok := x.(*tir.BufferLoad); ok && ld.Buffer != store.Buffer && indicesUse(ld.Indices, colVar) && indicesUse(ld.Indices, nl.iv.Var) {
				shared = true
			}
			return true
		})
		if !shared {
			row = i
		}
	}
	if row < 0 {
		for i := col - 1; i >= 0; i-- {
			if nest[i].iv.Kind == tir.Spatial {
				row = i
				break
			}
		}
	}
	if row < 0 {
		return nil, errNotTileable
	}
	rowVar := nest[row].iv.Var
	tiled := map[*tir.Buffer]bool{}
	tir.VisitExpr(store.Value, func(x tir.Expr) bool {
		if ld, ok := x.(*tir.BufferLoad); ok && ld.Buffer != store.Buffer && (indicesUse(ld.Indices, colVar) || indicesUse(ld.Indices, rowVar)) {
			tiled[ld.Buffer] = true
		}
		return true
	})
	return &tilePlan{name: name, nest: nest, col: col, row: row, w: w, accRegs: target.accumulatorRegs(),
		oneTiledOperand: len(tiled) == 1, panelVars: panelVars(store, colVar)}, nil
}

// multiLevelTile applies the int8 rule (rules_vnni.go) or the GEMV rule
// (rules_gemv.go) to block name when it matches, else the SSRSRS rule with the heuristic tile sizes
// (see ApplyDefaultRules and the tile-size heuristic above).
func multiLevelTile(s *Schedule, name string, target CPURules) error {
	return vnniSketch(s, name, target, func(p *vnniPlan) ([2]int64, error) { return p.heuristicShape(), nil }, func() error {
		return gemvSketch(s, name, target, func() bool { return true },
			func(p *gemvPlan) (int64, error) { return p.heuristicVectors(target), nil },
			func() error {
				p, err := planTiling(s, name, target)
				if err != nil {
					return err
				}
				return tileSketch(s, name, target, p, func() bool { return true }, func(p *tilePlan) error { return p.heuristicTile(s, target) })
			})
	})
}

// tileSketch tiles block name (plan p, the row-vectorized sketch) with
// tile, or — when the block has a channel-vectorized plan, p's columns
// waste lanes, read an operand with a stride or need channelGain times the
// channel plan's estimated cycles per output element (outputCycles), and
// pickChannel says so — with that plan, falling back to p when the
// primitives refuse it. On AVX2 a 56-wide row fills 8-lane vectors, but
// its 8×8 tile loads 9 times per 8 multiply-adds against the channel
// tile's 6: ResNet-18's 64-channel 3×3 convolutions (576 multiply-adds
// per output) run 1.05–1.10× faster channel-vectorized.
func tileSketch(s *Schedule, name string, target CPURules, p *tilePlan, pickChannel func() bool, tile func(*tilePlan) error) error {
	cp, err := planChannelTiling(s, name, target)
	if err != nil || !(p.wastesLanes() || p.stridedColumns(s) || cp.outputCycles()*channelGain < p.outputCycles()) || !pickChannel() {
		return tile(p)
	}
	saved := snapshot(s)
	if err := tile(cp); err == nil {
		return nil
	}
	if err := s.restore(s.orig, saved); err != nil {
		return err
	}
	return tile(p)
}

// heuristicTile tiles with the heuristic factors.
func (p *tilePlan) heuristicTile(s *Schedule, target CPURules) error {
	factors := p.heuristicFactors()
	parts := make([][]LoopRV, len(p.nest))
	for i, nl := range p.nest {
		ps, err := s.Split(nl.rv, factors[i])
		if err != nil {
			return err
		}
		parts[i] = ps
	}
	if err := p.tileNest(s, parts, target, true); err != nil {
		return err
	}
	return p.finishTile(s, target, 1)
}

// heuristicFactors returns the split factors per nest loop: [S0, S1, S2,
// S3] or [R0, R1] (the tile-size heuristic above).
func (p *tilePlan) heuristicFactors() [][]int64 {
	nest, col, row := p.nest, p.col, p.row
	colExt, rowExt := nest[col].extent, nest[row].extent
	cols, rows := p.registerTile()
	// Factors per loop: [S0, S1, S2, S3] or [R0, R1].
	factors := make([][]int64, len(nest))
	budget := int64(tileKC)
	for i := len(nest) - 1; i >= 0; i-- {
		nl := nest[i]
		switch {
		case nl.iv.Kind == tir.Reduce:
			inner := int64(1)
			if nl.extent <= budget {
				inner = nl.extent
				budget /= nl.extent
			} else if budget > 1 {
				inner = largestDivisorAtMost(nl.extent, budget)
				if 2*inner < budget {
					inner = budget // guarded tail
				}
				budget = 1
			}
			factors[i] = []int64{-1, inner}
		case i == col:
			tiles := ceilDiv(colExt, cols)
			s2 := largestDivisorAtMost(tiles, min(int64(tileNCVecs), max(1, tiles)))
			if p.oneTiledOperand && tiles <= 2*tileNCVecs {
				// No operand panel to keep in cache (pooling, depthwise
				// convolution): the whole row in one serial loop, which
				// code generation's loop partitioning can split at the
				// padding (ResNet-18's max pooling, 0.36 → 0.27 ms on 2
				// AVX2 cores, minima of 80 calls; MobileNetV2's 56-wide
				// depthwise convolution of 144 channels, 258 → 139 µs).
				s2 = tiles
			}
			factors[i] = []int64{-1, 1, s2, cols}
		case i == row:
			tiles := ceilDiv(rowExt, rows)
			s2 := largestDivisorAtMost(tiles, max(1, tileMC/rows))
			factors[i] = []int64{-1, 1, s2, rows}
		default:
			factors[i] = []int64{-1, 1, 1, 1}
		}
	}
	p.fillBlock(factors)
	return factors
}

// fillBlock gives a tiling's other spatial loop (the image rows of a
// convolution whose columns are its output channels: the channel-
// vectorized tiling of an NCHW one, the row tiling of an NHWC one) an S2
// factor of its whole extent when its rows' S2 block spans a whole image
// row, the other loop reads the same weight panel at each iteration (no
// panel variable) and the whole image fits in tileMC rows (a 7×7 image:
// 49 outputs): each weight panel is then streamed into the cache once
// per call instead of once per image row, as long as S0 keeps
// minParallelTiles iterations — halving the column block's register
// tiles (tileNCVecs) until it does, if need be: ResNet-18's 512-channel
// 3×3 convolutions on 7×7 get 16 blocks of 32 channels instead of 28
// tiles of one image row by 128 channels, which read each 2.4 MB panel
// of the 9.4 MB weight 7 times. On ResNet-50's 7×7 layer (AVX2, 1
// thread, minima of 80 calls) the 3×3 convolutions ran 1.09–1.14× and
// the 1×1 ones 1.01–1.07× faster; filling the block with two of 14 rows
// instead made 14×14 1×1 convolutions up to 14% slower. Without it,
// ResNet-18's NHWC 3×3 convolutions on 7×7 took 2.2× as long.
func (p *tilePlan) fillBlock(factors [][]int64) {
	rows := factors[p.row][2] * factors[p.row][3]
	if p.oneTiledOperand || rows < p.nest[p.row].extent || p.panelVars[p.nest[p.row].iv.Var] {
		return
	}
	j := -1
	for i, nl := range p.nest {
		if i != p.row && i != p.col && nl.iv.Kind == tir.Spatial && nl.extent > 1 {
			j = i
		}
	}
	if j < 0 || p.panelVars[p.nest[j].iv.Var] || rows*p.nest[j].extent > tileMC {
		return
	}
	tiles := func() int64 {
		n := int64(1)
		for i, nl := range p.nest {
			if nl.iv.Kind == tir.Spatial && i != j {
				n *= ceilDiv(nl.extent, factors[i][2]*factors[i][3])
			}
		}
		return n
	}
	// Fewer register tiles per column block leave more column blocks to
	// share among the threads: each still streams its own panel once.
	nc := factors[p.col][2]
	for tiles() < minParallelTiles && factors[p.col][2] > 1 && factors[p.col][2]%2 == 0 {
		factors[p.col][2] /= 2
	}
	if tiles() < minParallelTiles {
		factors[p.col][2] = nc
		return
	}
	factors[j] = []int64{-1, 1, p.nest[j].extent, 1}
}

// panelVars is the set of variables indexing the reads (other than the
// store's buffer) whose indices use col.
func panelVars(store *tir.BufferStore, col *tir.Var) map[*tir.Var]bool {
	vars := map[*tir.Var]bool{}
	tir.VisitExpr(store.Value, func(x tir.Expr) bool {
		ld, ok := x.(*tir.BufferLoad)
		if !ok || ld.Buffer == store.Buffer || !indicesUse(ld.Indices, col) {
			return true
		}
		for _, e := range ld.Indices {
			tir.VisitExpr(e, func(y tir.Expr) bool {
				if v, ok := y.(*tir.Var); ok {
					vars[v] = true
				}
				return true
			})
		}
		return true
	})
	return vars
}

// minParallelTiles is the fewest S0 iterations fillBlock leaves to share
// among the threads.
const minParallelTiles = 16

// registerTile is the heuristic register tile (the tile-size heuristic
// above): its columns (lanes: the whole column extent, or a multiple of
// the vector width) and rows.
func (p *tilePlan) registerTile() (cols, rows int64) {
	w := p.w
	colExt, rowExt := p.nest[p.col].extent, p.nest[p.row].extent
	cols = colExt
	if colExt > w {
		// Whole vectors (a 56-lane vector is legalized into 3.5 registers
		// with shuffles and spills): 2·W unless W wastes fewer lanes.
		cols = 2 * w
		if ceilDiv(colExt, w)*w < ceilDiv(colExt, 2*w)*2*w {
			cols = w
		}
		// Otherwise W with a guarded tail, whose last tile targets/cpu
		// peels and whose whole tiles it runs unmasked (codegen_version.go).
		if colExt%cols != 0 {
			cols = w
		}
		// Between W and 2·W and even: two whole tiles of half the row
		// (LeNet-5's 28-wide conv: 2×14 lanes), since a masked tail tile
		// kept its accumulators in memory (the masked loads and stores
		// of the cache did not become registers): 6.0 → 2.7 µs. Code
		// generation now unmasks such a tail's cache accesses
		// (targets/llvm/codegen_pad.go); this choice predates that.
		if colExt < 2*w && colExt%w != 0 && colExt%2 == 0 {
			cols = colExt / 2
		}
	}
	regsPerRow := ceilDiv(cols, w)
	rows = rowTile(rowExt, min(int64(tileMaxRows), max(1, p.accRegs/regsPerRow)))
	// Two vectors per row whose rows leave a guarded row tail (its
	// predicated rows keep their accumulators in memory) or half the
	// accumulators one-vector rows would use: one vector per row instead,
	// with as many rows as accumulators. With AVX2's 8 accumulators this
	// is 7×8 against 4×16 with a tail on ResNet-18's 7×7 layer (3.7 →
	// 2.2 ms per 3×3 convolution) and against 2×16 on its 14×14 layer;
	// AVX-512's 24 accumulators keep two-vector rows on ResNet's sizes.
	if cols == 2*w {
		r1 := rowTile(rowExt, min(int64(tileMaxRows), p.accRegs))
		if rowExt%r1 == 0 && (rowExt%rows != 0 || r1 > 2*rows) {
			cols, rows = w, r1
		}
	}
	return cols, rows
}

// channelGain is the factor by which the channel-vectorized tiling's
// estimated cycles per output element (outputCycles) must beat the
// row-vectorized one's for a block whose rows fill the lanes.
const channelGain = 1.05

// channelWriteBack is the estimated cost in cycles per output element of
// the channel tiling's write-back, which moves each element of the
// channel-innermost accumulator cache to the row-major output with a
// strided scalar store (the row tiling's write-back stores whole
// vectors). It keeps short reductions on the row tiling: MobileNetV2's
// 1×1 convolutions of 24 input channels at 56×56 ran 15–20% slower
// channel-vectorized on AVX2.
const channelWriteBack = 1.0

// outputCycles estimates the cycles per output element of the plan's
// heuristic register tile: the reduction's multiply-adds (the product of
// the reduce extents) at tileCycles per vector of W lanes, plus the
// channel tiling's write-back.
func (p *tilePlan) outputCycles() float64 {
	c := float64(reduceSize(p.nest)) * p.tileCycles() / float64(p.w)
	if p.channel {
		c += channelWriteBack
	}
	return c
}

// tileCycles estimates the heuristic register tile's cycles per useful
// multiply-add. Each reduction step issues rows·v vector multiply-adds (v
// vectors per row) on two FMA pipes of 4 cycles' latency, so fewer than 8
// accumulators leave them idle, and v + rows loads (the column vectors
// and a broadcast per row) on two load ports; the lanes and rows of
// guarded tails do no useful work.
func (p *tilePlan) tileCycles() float64 {
	cols, rows := p.registerTile()
	v := ceilDiv(cols, p.w)
	acc := float64(rows * v)
	fma := 1 / min(2, acc/4)
	load := float64(v+rows) / acc / 2
	colExt, rowExt := p.nest[p.col].extent, p.nest[p.row].extent
	useful := float64(colExt) / float64(ceilDiv(colExt, cols)*v*p.w) *
		float64(rowExt) / float64(ceilDiv(rowExt, rows)*rows)
	return max(fma, load) / useful
}

// tileNest reorders the split loops (parts[i] are nest loop i's [S0, S1,
// S2, S3] or [R0, R1]) into S0 S1 R0 S2 R1 S3 (columns innermost in each
// spatial level, rows just outside them in S3), fuses S0, vectorizes the
// register tile's columns and unrolls its rows and short inner reduction
// loops. With strict, a register tile that cannot be vectorized refuses
// the tiling (errNotTileable); otherwise it stays serial.
func (p *tilePlan) tileNest(s *Schedule, parts [][]LoopRV, target CPURules, strict bool) error {
	nest, col, row := p.nest, p.col, p.row
	level := func(sp bool, k int) []LoopRV {
		var out, tail []LoopRV
		for i, nl := range nest {
			if (nl.iv.Kind == tir.Spatial) != sp {
				continue
			}
			switch {
			case i == col:
				tail = append(tail, parts[i][k])
			case i == row && k == 3:
				tail = append([]LoopRV{parts[i][k]}, tail...)
			default:
				out = append(out, parts[i][k])
			}
		}
		return append(out, tail...)
	}
	s0, s1, r0, s2, r1, s3 := level(true, 0), level(true, 1), level(false, 0), level(true, 2), level(false, 1), level(true, 3)
	var order []LoopRV
	for _, lv := range [][]LoopRV{s0, s1, r0, s2, r1, s3} {
		order = append(order, lv...)
	}
	if err := s.Reorder(order...); err != nil {
		return err
	}
	// Fuse the outer spatial level.
	outer := s0[0]
	if len(s0) > 1 {
		fused, err := s.Fuse(s0...)
		if err != nil {
			return err
		}
		outer = fused
	}
	p.levels = tileLevels{outer: outer, s1: s1, r0: r0}
	// The register tile: columns vectorized, rows unrolled.
	if !tryVectorize(s, s3[len(s3)-1], target) && strict {
		return errNotTileable
	}
	if err := s.Unroll(s3[len(s3)-2]); err != nil {
		return err
	}
	// Short inner reduction loops (a conv's 3×3 window) unrolled too.
	for _, l := range r1[1:] {
		if f, err := s.FindLoop(l); err == nil {
			if e, ok := constInt(f.Extent); ok && e > 1 && e <= 4 {
				if err := s.Unroll(l); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// tileLevels are the loops tileNest leaves for finishTile.
type tileLevels struct {
	outer LoopRV   // the fused S0 loop
	s1    []LoopRV // the S1 level
	r0    []LoopRV // the R0 level
}

// finishTile caches the accumulator (cache_write "local"), writes it back
// after the loop at writeBack (0: the fused S0 loop, 1: the last S1
// loop), splits the init off the reduction (decompose_reduction) and
// parallelizes the fused outer loop; a channel-vectorized tiling then
// changes the layouts (packChannel, whose refusal is returned).
func (p *tilePlan) finishTile(s *Schedule, target CPURules, writeBack int64) error {
	b := BlockRV{p.name}
	w := p.w
	at := p.levels.outer
	if writeBack == 1 {
		at = p.levels.s1[len(p.levels.s1)-1]
	}
	wb, err := s.CacheWrite(b, 0, "local")
	if err != nil {
		if p.channel {
			return err
		}
		if p.pack != nil {
			return p.pack(s)
		}
		return nil
	}
	placed := s.ReverseComputeAt(wb, at) == nil
	if placed {
		inlineEpilogue(s, wb)
	}
	// The init out of the reduction loops (refused, e.g. for a guarded
	// reduction tail, it stays in the block).
	_, _ = s.DecomposeReduction(b, p.levels.r0[0])
	// Parallel outer tiles (refused only when a cache would be shared;
	// the nest then stays serial), unless the cost rule keeps the kernel
	// serial.
	if !target.serial {
		_ = s.Parallel(p.levels.outer)
	}
	if p.channel {
		if err := p.packChannel(s); err != nil {
			return err
		}
	}
	if p.pack != nil {
		if err := p.pack(s); err != nil {
			return err
		}
	}
	if placed {
		vectorizeWriteBack(s, wb, w, target)
	}
	return nil
}

// vectorizeWriteBack vectorizes the write-back wb of a register tile
// (split by the vector width w when longer): its innermost loop, or,
// when that loop fills at most a quarter of the lanes, the loop that
// walks the accumulator's innermost (contiguous) dimension, moved
// innermost when it is longer: the stores then scatter, and other
// operands of the output's layout are gathered, but the epilogue's
// arithmetic runs on full vectors. The int8 rule's accumulator holds the
// output channels innermost while an NCHW output's innermost loop is the
// tile's 2 columns: its requantization (i64 arithmetic) ran on 2 of 16
// lanes, 23% of a ResNet-18 layer-1 convolution's time (18% on 16 lanes,
// perf samples). An f32 tile of 7 columns of 8 keeps its contiguous
// stores.
func vectorizeWriteBack(s *Schedule, wb BlockRV, w int64, target CPURules) {
	wl, err := s.GetLoops(wb)
	if err != nil || len(wl) == 0 {
		return
	}
	last := wl[len(wl)-1]
	e := loopExtent(s, last)
	if e > 0 && 4*e <= w {
		if c, ok := contiguousLoop(s, wb, wl); ok {
			if ce := loopExtent(s, c); ce > e && reorderInnermost(s, wl, c) {
				last, e = c, ce
			}
		}
	}
	if e > w {
		if ps, err := s.Split(last, []int64{-1, w}); err == nil {
			tryVectorize(s, ps[1], target)
		}
		return
	}
	tryVectorize(s, last, target)
}

// reorderInnermost moves loop c innermost among the loops of wl below
// it (a perfect nest: the write-back's loops under its compute-at
// point), reporting whether reorder accepted it.
func reorderInnermost(s *Schedule, wl []LoopRV, c LoopRV) bool {
	for i, l := range wl {
		if l.Var == c.Var {
			return s.Reorder(append(append([]LoopRV{}, wl[i+1:]...), c)...) == nil
		}
	}
	return false
}

// loopExtent is loop l's constant extent (0 when it is not constant: a
// symbolic write-back loop keeps its place).
func loopExtent(s *Schedule, l LoopRV) int64 {
	if f, err := s.FindLoop(l); err == nil {
		if e, ok := constInt(f.Extent); ok {
			return e
		}
	}
	return 0
}

// contiguousLoop is the loop among wl that steps by one the block
// variable indexing, alone, the innermost dimension of the local
// (register) buffer block wb reads: the accumulator's contiguous
// dimension.
func contiguousLoop(s *Schedule, wb BlockRV, wl []LoopRV) (LoopRV, bool) {
	r := findBlock(s.Func().Body, wb.Name)
	if r == nil {
		return LoopRV{}, false
	}
	st, ok := r.Block.Body.(*tir.BufferStore)
	if !ok {
		return LoopRV{}, false
	}
	var inner tir.Expr
	tir.VisitExpr(st.Value, func(x tir.Expr) bool {
		if ld, ok := x.(*tir.BufferLoad); ok && inner == nil && ld.Buffer.Scope == tir.ScopeLocal && len(ld.Indices) > 0 {
			inner = ld.Indices[len(ld.Indices)-1]
		}
		return inner == nil
	})
	for i, iv := range r.Block.IterVars {
		if inner != tir.Expr(iv.Var) || i >= len(r.Values) {
			continue
		}
		for _, l := range wl {
			if c, lin := tir.LinearCoeff(r.Values[i], l.Var); l.Var != nil && lin && c == 1 {
				return l, true
			}
		}
	}
	return LoopRV{}, false
}

// inlineEpilogue folds the write-back's consumers, one at a time while
// there is exactly one (an elementwise epilogue: bias, residual add,
// relu), into the write-back block (reverse_compute_inline), so each tile
// goes from the accumulator cache to the output in one pass instead of
// through an intermediate buffer that a separate nest reads again
// (MetaSchedule fuses such epilogues into the cache's write-back the same
// way). A consumer the primitive refuses stays a separate nest.
func inlineEpilogue(s *Schedule, wb BlockRV) {
	for {
		cs, err := s.GetConsumers(wb)
		if err != nil || len(cs) != 1 || s.ReverseComputeInline(cs[0]) != nil {
			return
		}
	}
}

// wastesLanes reports whether the register tile's columns leave vector
// lanes idle: the column extent is not a multiple of the vector width.
func (p *tilePlan) wastesLanes() bool { return p.nest[p.col].extent%p.w != 0 }

// stridedColumns reports whether a read's innermost index steps by more
// than one element per column (a strided convolution's input: each vector
// is then two loads and a permute, or a gather), seen through the clamps
// of padding. The channel-vectorized tiling broadcasts that operand
// instead: ResNet-18's 7×7 stride-2 stem alone, 2.06–2.14 → 1.74–1.76 ms
// at 1 thread.
func (p *tilePlan) stridedColumns(s *Schedule) bool {
	r := findBlock(s.Func().Body, p.name)
	if r == nil {
		return false
	}
	st, ok := r.Block.Body.(*tir.BufferStore)
	if !ok {
		return false
	}
	v := p.nest[p.col].iv.Var
	strided := false
	tir.VisitExpr(st.Value, func(x tir.Expr) bool {
		if ld, ok := x.(*tir.BufferLoad); ok && len(ld.Indices) > 0 {
			c, lin := tir.LinearCoeff(tir.Unclamped(ld.Indices[len(ld.Indices)-1]), v)
			strided = strided || !lin || c > 1 || c < -1
		}
		return !strided
	})
	return strided
}
