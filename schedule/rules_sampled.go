package schedule

import (
	"fmt"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// Sampled rules: the design space of the autotuner. ApplySampledRules is
// ApplyDefaultRules with the tile sizes and the accumulator's write-back
// level drawn by sampling instructions instead of the heuristic, so its
// trace is a sketch with decisions (Ansor, Zheng et al., OSDI 2020;
// MetaSchedule's MultiLevelTiling with sample_perfect_tile, Shao et al.,
// NeurIPS 2022): a search changes the decisions and replays the trace.

// Register-tile candidates of the sampled tiling, in vectors of W lanes
// (columns) and rows; each splits its loop with a guarded tail when it
// does not divide the extent.
var (
	sampledColVecs = []int64{1, 2, 3, 4} // columns = k·W
	sampledRows    = []int64{1, 2, 3, 4, 6, 8, 12, 16}
)

// sampledMaxReduceInner caps the inner reduction tile (R1).
const sampledMaxReduceInner = 1024

// ApplySampledRules schedules f like ApplyDefaultRules, except that every
// multi-level-tiled block draws its tiles from s's random generator
// (seed): the register tile's columns (k·W, or the whole column extent
// when it is at most W) and rows with sample_categorical, the S0/S1/S2
// split of the remaining column and row tiles and of the other spatial
// loops with sample_perfect_tile (three levels; the other spatial loops
// keep S3 = 1), each reduction loop's R0/R1 split with sample_perfect_tile
// (R1 ≤ 1024), and the level the accumulator cache is written back at
// (the fused S0 loop or the last S1 loop) with sample_categorical, and
// the auto-unroll budget of every loop nest (sampleUnroll); reductions
// with little spatial parallelism may be rfactored (sampledRFactor).
// Replaying the trace with other decisions gives another point of the
// same design space; a decision the primitives refuse fails the replay.
// Errors: as ApplyDefaultRules.
func ApplySampledRules(f *tir.PrimFunc, target CPURules, seed int64) (*Schedule, error) {
	target = target.forKernel(f)
	s := NewWithSeed(f, seed)
	if err := sampleSerial(s, f, &target); err != nil {
		return nil, err
	}
	autoInline(s)
	if err := tileAll(s, f, func(name string) error { return sampledTile(s, name, target) }); err != nil {
		return nil, err
	}
	for _, name := range ruleBlocks(s) {
		if err := sampledRFactor(s, f, name, target); err != nil {
			return nil, err
		}
	}
	for _, name := range ruleBlocks(s) {
		if err := simpleRule(s, name, target); err != nil {
			return nil, err
		}
	}
	if err := sampleUnroll(s); err != nil {
		return nil, err
	}
	return s, nil
}

// sampleSerial lets the tuner decide the cost rule for a kernel near its
// threshold: within a factor of 4 of MinParallelWork either way, a
// sample_categorical draws serial (0) or parallel (1).
func sampleSerial(s *Schedule, f *tir.PrimFunc, target *CPURules) error {
	if target.MinParallelWork <= 0 {
		return nil
	}
	w := tir.EstimateWork(f)
	if w < target.MinParallelWork/4 || w >= 4*target.MinParallelWork {
		return nil
	}
	v, err := s.SampleCategorical([]int64{0, 1}, []float64{1, 1})
	target.serial = v == 0
	return err
}

// autoUnrollSteps are the unroll budgets sampled per loop nest
// (MetaSchedule's ParallelVectorizeUnroll for CPU: unroll_max_steps).
var autoUnrollSteps = []int64{0, 16, 64, 512}

// sampleUnroll annotates the outermost loop of every block's nest with a
// tir.PragmaAutoUnrollMaxStep drawn by sample_categorical (one per
// loop, for the blocks in order): code generation then unrolls the
// serial loops inside whose nest takes at most that many steps.
func sampleUnroll(s *Schedule) error {
	done := map[*tir.For]bool{}
	for _, name := range ruleBlocks(s) {
		loops, err := s.GetLoops(BlockRV{name})
		if err != nil || len(loops) == 0 {
			continue
		}
		f, err := s.FindLoop(loops[0])
		if err != nil || done[f] {
			continue
		}
		if _, has := f.Annotations[tir.PragmaAutoUnrollMaxStep]; has {
			continue
		}
		v, err := s.SampleCategorical(autoUnrollSteps, uniform(len(autoUnrollSteps)))
		if err != nil {
			return err
		}
		if err := s.Annotate(loops[0], tir.PragmaAutoUnrollMaxStep, tir.IntAttr(v)); err != nil {
			return err
		}
		f, _ = s.FindLoop(loops[0])
		done[f] = true
	}
	return nil
}

// withDefaults fills a zero vector width (128 bits) and core count (1).
func (t CPURules) withDefaults() CPURules {
	if t.VectorBits <= 0 {
		t.VectorBits = 128
	}
	if t.Cores <= 0 {
		t.Cores = 1
	}
	return t
}

// uniform returns n equal probabilities.
func uniform(n int) []float64 {
	p := make([]float64, n)
	for i := range p {
		p[i] = 1
	}
	return p
}

// sampleRegisterTile samples the register-tile size of a loop of extent
// ext from cands (sizes larger than ext are dropped; ext itself is the
// only candidate when every size exceeds it).
func sampleRegisterTile(s *Schedule, ext int64, cands []int64) (int64, error) {
	var ok []int64
	for _, c := range cands {
		if c <= ext {
			ok = append(ok, c)
		}
	}
	if len(ok) == 0 {
		ok = []int64{ext}
	}
	return s.SampleCategorical(ok, uniform(len(ok)))
}

// sampledTile is multiLevelTile with sampled tile sizes: a block the GEMV
// rule matches takes its sketch in half of the draws (unrecorded, like the
// channel sketch below), with U drawn by sample_categorical from
// gemvPlan.vectorCandidates. When the
// register tile's columns would waste vector lanes and the block has a
// channel-vectorized plan (rules_channel.go), the sketch is chosen at
// random (from s's generator, not recorded: each sketch is its own trace
// shape, as MetaSchedule's design-space generation makes one trace per
// sketch); a channel tiling the primitives refuse falls back to the
// other.
func sampledTile(s *Schedule, name string, target CPURules) error {
	return vnniSketch(s, name, target, func(p *vnniPlan) ([2]int64, error) { return p.sampledShape(s) }, func() error {
		return gemvSketch(s, name, target, func() bool { return s.rng.Intn(2) == 0 },
			func(p *gemvPlan) (int64, error) {
				cands := p.vectorCandidates(target)
				return s.SampleCategorical(cands, uniform(len(cands)))
			},
			func() error {
				p, err := planTiling(s, name, target)
				if err != nil {
					return err
				}
				return tileSketch(s, name, target, p, func() bool { return s.rng.Intn(2) == 0 }, func(p *tilePlan) error { return p.sampledTileWith(s, target) })
			})
	})
}

// sampledTileWith tiles plan p with sampled tile sizes.
func (p *tilePlan) sampledTileWith(s *Schedule, target CPURules) error {
	parts := make([][]LoopRV, len(p.nest))
	for i, nl := range p.nest {
		var err error
		switch {
		case nl.iv.Kind == tir.Reduce:
			parts[i], err = sampleSplit(s, nl.rv, 2, min(sampledMaxReduceInner, nl.extent))
		case i == p.col || i == p.row:
			cands := sampledRows
			if i == p.col {
				cands = nil
				for _, k := range sampledColVecs {
					cands = append(cands, k*p.w)
				}
				if nl.extent <= p.w {
					cands = []int64{nl.extent}
				}
			}
			parts[i], err = registerTileSplit(s, nl.rv, nl.extent, cands)
		default:
			parts[i], err = sampleSplit(s, nl.rv, 4, 1)
		}
		if err != nil {
			return err
		}
	}
	if err := p.tileNest(s, parts, target, true); err != nil {
		return err
	}
	at, err := s.SampleCategorical([]int64{0, 1}, []float64{1, 1})
	if err != nil {
		return err
	}
	return p.finishTile(s, target, at)
}

// sampleSplit splits l into n loops with sample_perfect_tile factors.
func sampleSplit(s *Schedule, l LoopRV, n int, maxInner int64) ([]LoopRV, error) {
	fs, err := s.SamplePerfectTile(l, n, maxInner)
	if err != nil {
		return nil, err
	}
	return s.Split(l, fs)
}

// registerTileSplit splits l (extent ext) into [S0, S1, S2, S3]: S3 a
// sampled register-tile size (guarded tail when it does not divide ext),
// the outer part split by a sampled perfect tiling.
func registerTileSplit(s *Schedule, l LoopRV, ext int64, cands []int64) ([]LoopRV, error) {
	reg, err := sampleRegisterTile(s, ext, cands)
	if err != nil {
		return nil, err
	}
	two, err := s.Split(l, []int64{-1, reg})
	if err != nil {
		return nil, err
	}
	outer, err := sampleSplit(s, two[0], 3, 0)
	if err != nil {
		return nil, err
	}
	return append(outer, two[1]), nil
}

// rfactorTasksPerCore bounds the parallel tasks a reduction's spatial
// loops may give for sampledRFactor to consider it (MetaSchedule's
// AddRFactor uses max_jobs_per_core = 16 the same way).
const rfactorTasksPerCore = 16

// sampledRFactor is the AddRFactor rule of the design space: a reduction
// block (not multi-level tiled) in a perfect nest whose spatial loops give
// fewer than rfactorTasksPerCore tasks per core, and whose outermost
// reduction loop has at least two iterations per core, is — in half of
// the sketches (the seed's random generator picks, unrecorded: a sketch
// is a trace shape that mutation keeps) — rfactored: that loop is split
// by sample_perfect_tile (inner tile ≤ extent/cores), its outer part is
// reordered outermost and becomes the spatial axis 0 of a "<X>_rf"
// buffer of partial results, which the simple rule then parallelizes. A refused rfactor leaves the schedule as it was.
// Errors: only a failure to replay the schedule after a refusal.
func sampledRFactor(s *Schedule, f *tir.PrimFunc, name string, target CPURules) error {
	r := findBlock(s.Func().Body, name)
	if r == nil || r.Block.Init == nil || underAnnotated(s, name) {
		return nil
	}
	nest, ok := nestOf(s, name)
	if !ok {
		return nil
	}
	spatial := int64(1)
	var red *nestLoop
	for i := range nest {
		if nest[i].iv.Kind == tir.Reduce {
			if red == nil {
				red = &nest[i]
			}
			continue
		}
		spatial *= nest[i].extent
	}
	cores := int64(target.Cores)
	if red == nil || spatial >= rfactorTasksPerCore*cores || red.extent < 2*cores || s.rng.Intn(2) == 0 {
		return nil
	}
	saved := snapshot(s)
	// The inner tile is at most extent/cores, so the factor axis has at
	// least one iteration per core; it moves outermost, where the simple
	// rule makes it parallel.
	parts, err := sampleSplit(s, red.rv, 2, red.extent/cores)
	if err == nil {
		var outer []LoopRV
		for _, nl := range nest {
			if nl.iv == red.iv {
				break
			}
			outer = append(outer, nl.rv)
		}
		if len(outer) > 0 {
			err = s.Reorder(append([]LoopRV{parts[0]}, outer...)...)
		}
	}
	if err == nil {
		_, err = s.RFactor(parts[0], 0)
	}
	if err == nil {
		return nil
	}
	if err := s.restore(f, saved); err != nil {
		return fmt.Errorf("sampled rules: replaying after a refused rfactor of %q: %w", name, err)
	}
	return nil
}
