package schedule

import (
	"fmt"
	"math/rand/v2"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// GPU multi-level tiling (MetaSchedule's MultiLevelTiling for CUDA, tile
// structure "SSSRRSRS"; Ansor §4.1): each spatial loop of a reduction
// block is split into 5 levels (block, virtual thread, thread, and two
// per-thread levels) and each reduce loop into 3, ordered
//
//	S0 S1 S2 R0 R1 S3 R2 S4
//
// The S0 loops are fused and bound to blockIdx.x, S1 to vthread and S2
// to threadIdx.x. Each input is staged in shared memory at the last R0
// loop (cache_read + compute_at): its copy loops are fused, split by the
// block's thread count and bound to threadIdx.x (cooperative fetching; the
// copy's thread loop and the compute's are the same threads, TVM's merged
// binding), so a tile of the inputs is read from global memory once per
// block and reduction step. The output accumulates in registers (a local
// cache_write) and is written back under the thread loop. The thread-sync
// pass then puts barriers between the fetches and the reads of the tiles.

// gpuTile is one tiling decision: per nest loop, its split factors (5 for
// a spatial loop, 3 for a reduce loop; the first level is inferred).
type gpuTile struct {
	factors [][]int64
	// unroll is the tir.PragmaAutoUnrollMaxStep of the threadIdx loop: the
	// serial loops inside whose nest takes at most that many steps (the
	// register tile and a reduction step) are unrolled, so the
	// accumulators live in registers; 0 leaves the loops as they are.
	unroll int64
	// prefetch asks for the register prefetch of the next reduction
	// step's shared tiles (tir.AttrPrefetchShared on the step loop).
	prefetch bool
}

// gpuUnrollSteps are the unroll budgets the sampled tiling draws from
// (MetaSchedule's DefaultCUDA: unroll_max_steps 0, 16, 64, 512, 1024).
var gpuUnrollSteps = []int64{0, 16, 64, 512, 1024}

// defaultGPUUnroll is the default tiling's unroll budget.
const defaultGPUUnroll = 512

// gpuTileable reports whether the tiling applies to block name: the CPU
// rule's conditions (a perfect nest of constant loops over one store with
// an init, at least two spatial and one reduce variable).
func gpuTileable(s *Schedule, name string) bool { return tileable(s, name) }

// defaultGPUTile chooses factors for nest: threads (at most maxThreads,
// powers of two) go to the spatial loops from the innermost out, each
// thread computes a register tile on the innermost two spatial loops
// (gpuRegisterTile), and the first reduce loop (a GEMM's k, a
// convolution's input channels) is read from shared memory in steps of
// its largest divisor up to gpuReduceStep (gpuWideReduceStep with 8-wide
// register tiles), the later reduce loops (a convolution's window) whole:
// the summation order is the unscheduled one. The register tile and a
// step are unrolled (budget 512).
func defaultGPUTile(nest []nestLoop, maxThreads int64) gpuTile {
	t := gpuTile{factors: make([][]int64, len(nest))}
	budget := maxThreads
	spatialSeen, firstReduce := 0, -1
	outputs, wide := int64(1), 0 // spatial points; spatial loops longer than 1
	maxReg := int64(1)
	for i, l := range nest {
		if l.iv.Kind == tir.Reduce && firstReduce < 0 {
			firstReduce = i
		}
		if l.iv.Kind != tir.Reduce {
			outputs *= l.extent
			if l.extent > 1 {
				wide++
			}
		}
	}
	for i := len(nest) - 1; i >= 0; i-- {
		l := nest[i]
		if l.iv.Kind == tir.Reduce {
			t.factors[i] = []int64{-1, l.extent, 1}
			continue
		}
		reg, maxTh := gpuRegisterTile(l.extent, outputs, spatialSeen, wide)
		spatialSeen++
		per := ceilDiv(l.extent, reg)
		th := min(largestPow2AtMost(per), budget, maxTh)
		budget /= th
		t.factors[i] = []int64{-1, 1, th, 1, reg}
		maxReg = max(maxReg, reg)
	}
	if firstReduce >= 0 {
		step := int64(gpuReduceStep)
		if maxReg >= 8 {
			step = gpuWideReduceStep
		}
		t.factors[firstReduce][1] = largestDivisorAtMost(nest[firstReduce].extent, step)
	}
	t.unroll = defaultGPUUnroll
	t.prefetch = true
	return t
}

// Reduction steps of the default GPU tiling (the reduce extent staged in
// shared memory per step): 16, and 8 with 8×8 register tiles (128×128
// block tiles). With the next step prefetched into registers
// (prefetch-shared), an 8-deep step keeps a thread under 128 registers
// (two blocks per SM) and its compute fully unrolled: measured on an
// H200, GEMM 4096³ 3.63 ms (32-deep steps, no prefetch), 3.98 (32,
// prefetch: 145 registers), 3.65 (16, prefetch), 3.17 (8, prefetch);
// GEMM 1024³ (4×4 tiles, 16-deep steps) 0.089 → 0.081 ms with prefetch.
const (
	gpuReduceStep     = 16
	gpuWideReduceStep = 8
)

// Register tiles of the default GPU tiling. A kernel whose outputs are
// one short row (a batch-1 dense layer: a few thousand points) needs every
// point in a thread of its own, and all the threads of a block on that
// loop, to keep the GPU busy, so it gets no register tile (measured on an
// H200: MobileNetV2's classifier 0.78 → 0.24 ms; 7×7 convolutions, whose
// threads then repeat their shared-memory reads, got twice as slow without
// theirs, so only a single wide loop qualifies). Otherwise the two
// innermost spatial loops get 2 per thread, 4 (16×16 threads, 64×64 tiles)
// where the loop is 128 or longer, and 8 (128×128 tiles, the classic
// SGEMM kernel's) where it is 2048 or longer, whose grid still has a
// thousand blocks.
const (
	gpuFewOutputs   = 1 << 16
	gpuManyOutputs  = 1 << 22
	gpuLongLoop     = 128
	gpuVeryLongLoop = 2048
)

// gpuRegisterTile is the register tile of a spatial loop of the given
// extent (the spatial loop seen-th from the innermost of a nest with
// outputs points and wide spatial loops longer than 1) and the most
// threads it gets.
func gpuRegisterTile(extent, outputs int64, seen, wide int) (reg, maxThreads int64) {
	switch {
	case wide <= 1 && outputs < gpuFewOutputs:
		return 1, 1024 // one short row: every thread of the block on it
	case seen >= 2 || extent < 4:
		return 1, 32
	case extent >= gpuVeryLongLoop && outputs >= gpuManyOutputs:
		return 8, 16
	case extent >= gpuLongLoop:
		return 4, 16
	}
	return 2, 32
}

// sampleGPUTile draws factors: threads per block among 32 … 1024 spread
// over the spatial loops, register tiles of 1, 2, 4 or 8, an unroll budget
// of gpuUnrollSteps, reduction steps of gpuSampledSteps.
func sampleGPUTile(nest []nestLoop, rng *rand.Rand) gpuTile {
	t := gpuTile{factors: make([][]int64, len(nest))}
	budget := gpuBlockSizes[rng.IntN(len(gpuBlockSizes))]
	lastReduce := -1
	for i, l := range nest {
		if l.iv.Kind == tir.Reduce {
			lastReduce = i
		}
	}
	for i := len(nest) - 1; i >= 0; i-- {
		l := nest[i]
		if l.iv.Kind == tir.Reduce {
			inner := l.extent
			if i == lastReduce || rng.IntN(2) == 0 {
				inner = min(l.extent, gpuSampledSteps[rng.IntN(len(gpuSampledSteps))])
			}
			t.factors[i] = []int64{-1, inner, 1}
			continue
		}
		reg := min(l.extent, []int64{1, 2, 4, 8}[rng.IntN(4)])
		per := ceilDiv(l.extent, reg)
		th := min(largestPow2AtMost(per), budget)
		if rng.IntN(3) == 0 {
			th = max(th/2, 1)
		}
		budget /= th
		t.factors[i] = []int64{-1, 1, th, 1, reg}
	}
	t.unroll = gpuUnrollSteps[rng.IntN(len(gpuUnrollSteps))]
	t.prefetch = rng.IntN(2) == 0
	return t
}

// gpuSampledSteps are the reduction steps the sampled tiling draws from.
var gpuSampledSteps = []int64{1, 2, 4, 8, 16, 32}

func largestPow2AtMost(n int64) int64 {
	p := int64(1)
	for p*2 <= n {
		p *= 2
	}
	return p
}

// gpuMultiLevelTile tiles block name with t and returns its threadIdx
// loop. Errors: a primitive's refusal (the schedule is then partly
// changed: callers snapshot and restore).
func gpuMultiLevelTile(s *Schedule, name string, t gpuTile) (LoopRV, error) {
	b := BlockRV{name}
	nest, ok := nestOf(s, name)
	if !ok {
		return LoopRV{}, fmt.Errorf("gpu tiling: block %q is not a perfect nest", name)
	}
	blk := findBlock(s.Func().Body, name).Block
	out := blk.Writes[0].Buffer
	var wb *BlockRV
	if isParam(s.Func(), out) {
		w, err := s.CacheWrite(b, 0, tir.ScopeLocal)
		if err != nil {
			return LoopRV{}, err
		}
		wb = &w
	}
	levels := map[string][]LoopRV{}
	var spatialN int
	for i, l := range nest {
		parts, err := s.Split(l.rv, t.factors[i])
		if err != nil {
			return LoopRV{}, err
		}
		if l.iv.Kind == tir.Reduce {
			for k, p := range parts {
				key := fmt.Sprintf("R%d", k)
				levels[key] = append(levels[key], p)
			}
			continue
		}
		spatialN++
		for k, p := range parts {
			key := fmt.Sprintf("S%d", k)
			levels[key] = append(levels[key], p)
		}
	}
	if err := warpShape(s, levels, nest, t); err != nil {
		return LoopRV{}, err
	}
	var order []LoopRV
	for _, key := range []string{"S0", "S1", "S2", "R0", "R1", "S3", "R2", "S4"} {
		order = append(order, levels[key]...)
	}
	if err := s.Reorder(order...); err != nil {
		return LoopRV{}, err
	}
	var bound [3]LoopRV
	for k, tag := range []string{"blockIdx.x", "vthread", "threadIdx.x"} {
		l, err := fuseAll(s, levels[fmt.Sprintf("S%d", k)])
		if err != nil {
			return LoopRV{}, err
		}
		if err := s.Bind(l, tag); err != nil {
			return LoopRV{}, err
		}
		bound[k] = l
	}
	tx := bound[2]
	threads := int64(1)
	for i, l := range nest {
		if l.iv.Kind != tir.Reduce {
			threads *= t.factors[i][2]
		}
	}
	r0 := levels["R0"]
	at := r0[len(r0)-1]
	reads := len(blk.Reads)
	tiles := threadTiles(nest, t)
	for i := 0; i < reads; i++ {
		layout := sharedTileLayout(blk, blk.Reads[i].Buffer, tiles)
		if err := stageShared(s, b, i, at, threads, layout); err != nil {
			return LoopRV{}, err
		}
	}
	if t.prefetch {
		if err := s.Annotate(at, tir.AttrPrefetchShared, tir.IntAttr(1)); err != nil {
			return LoopRV{}, err
		}
	}
	if wb != nil {
		if err := s.ReverseComputeAt(*wb, tx); err != nil {
			return LoopRV{}, err
		}
	}
	// The init out of the reduction loops, as MetaSchedule's
	// RewriteReductionBlock does (refused, e.g. for a guarded tail, it
	// stays in the block), and the register tile unrolled.
	_, _ = s.DecomposeReduction(b, r0[0])
	if t.unroll > 0 {
		if err := s.Annotate(tx, tir.PragmaAutoUnrollMaxStep, tir.IntAttr(t.unroll)); err != nil {
			return LoopRV{}, err
		}
	}
	return tx, nil
}

// warpLanesInner is the number of a warp's 32 threads that warpShape
// puts on the innermost spatial loop.
const warpLanesInner = 8

// warpShape makes each warp's threads a 4×8 patch of the two innermost
// spatial loops instead of 32 threads along the innermost one (CUTLASS's
// and the "warp tiling" SGEMM kernels' arrangement): where more than 8
// threads are on the innermost loop and 4 or more on the next, the
// innermost thread level is split into an outer part, placed before the
// other thread levels, and 8 threads placed last. A warp then reads 8
// distinct runs of a shared tile along the innermost loop and 4 along
// the next (one 128-byte shared-memory wavefront each with 4-wide reads)
// instead of 16 and 2. Only the thread numbering changes: levels["S2"]
// is rewritten with the new loops in fusion order.
func warpShape(s *Schedule, levels map[string][]LoopRV, nest []nestLoop, t gpuTile) error {
	var spatial []int
	for i, l := range nest {
		if l.iv.Kind != tir.Reduce {
			spatial = append(spatial, i)
		}
	}
	if len(spatial) < 2 {
		return nil
	}
	tj := t.factors[spatial[len(spatial)-1]][2]
	ti := t.factors[spatial[len(spatial)-2]][2]
	if tj <= warpLanesInner || tj%warpLanesInner != 0 || ti*warpLanesInner < 32 {
		return nil
	}
	s2 := levels["S2"]
	parts, err := s.Split(s2[len(s2)-1], []int64{tj / warpLanesInner, warpLanesInner})
	if err != nil {
		return err
	}
	levels["S2"] = append(append([]LoopRV{parts[0]}, s2[:len(s2)-1]...), parts[1])
	return nil
}

// stageShared caches read region i of block b in shared memory at loop
// at, binds the copy cooperatively to the block's threads and gives the
// shared tile the layout (nil: the operand's own).
func stageShared(s *Schedule, b BlockRV, i int, at LoopRV, threads int64, layout *IndexMap) error {
	r := findBlock(s.Func().Body, b.Name)
	if i >= len(r.Block.Reads) || r.Block.Reads[i].Buffer.Scope == tir.ScopeLocal {
		return nil
	}
	// The output's own read (the accumulator) is not staged.
	for _, w := range r.Block.Writes {
		if w.Buffer == r.Block.Reads[i].Buffer {
			return nil
		}
	}
	cb, err := s.CacheRead(b, i, tir.ScopeShared)
	if err != nil {
		return err
	}
	if err := s.ComputeAt(cb, at); err != nil {
		return err
	}
	loops, err := s.GetLoops(cb)
	if err != nil {
		return err
	}
	atLoop, _ := s.FindLoop(at)
	var own []LoopRV
	inside := false
	for _, l := range loops {
		if inside {
			own = append(own, l)
		}
		if f, _ := s.FindLoop(l); f == atLoop {
			inside = true
		}
	}
	if len(own) == 0 {
		return nil
	}
	vec := int64(1)
	if last, err := s.FindLoop(own[len(own)-1]); err == nil {
		if e, ok := constInt(last.Extent); ok {
			vec = largestDivisorAtMost(e, 4)
			if vec == 3 {
				vec = 1
			}
		}
	}
	fused, err := fuseAll(s, own)
	if err != nil {
		return err
	}
	f, err := s.FindLoop(fused)
	if err != nil {
		return err
	}
	ext, ok := constInt(f.Extent)
	if !ok {
		return fmt.Errorf("gpu tiling: the copy of read %d of %q has a non-constant extent", i, b.Name)
	}
	if vec == 1 {
		parts, err := s.Split(fused, []int64{-1, min(threads, ext)})
		if err != nil {
			return err
		}
		if err := s.Bind(parts[1], "threadIdx.x"); err != nil {
			return err
		}
	} else {
		// Each thread copies vec consecutive elements of the innermost
		// dimension: one 2- or 4-wide access where the offsets are aligned.
		parts, err := s.Split(fused, []int64{-1, min(threads, ext/vec), vec})
		if err != nil {
			return err
		}
		if err := s.Bind(parts[1], "threadIdx.x"); err != nil {
			return err
		}
		if err := s.Vectorize(parts[2]); err != nil {
			return err
		}
	}
	if layout == nil {
		return nil
	}
	return s.TransformLayout(cb, 0, "write", *layout)
}

// fuseAll fuses loops (one loop is returned as is).
func fuseAll(s *Schedule, loops []LoopRV) (LoopRV, error) {
	if len(loops) == 1 {
		return loops[0], nil
	}
	return s.Fuse(loops...)
}
