package schedule

import (
	"errors"
	"fmt"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// Rules are a target's schedule rules (MetaSchedule's rule sets:
// DefaultLLVM for CPUs, DefaultCUDA for GPUs): the schedule of a kernel
// without a tuning record, and the design space the tuner searches. Every
// schedule they make is a trace of primitives that replays on the kernel.
type Rules interface {
	// Default schedules f with the rules' heuristic decisions. Errors: the
	// rules refuse f (then Fallback schedules it).
	Default(f *tir.PrimFunc) (*Schedule, error)
	// Fallback is the schedule of a kernel Default refuses: never fails,
	// at worst the unscheduled kernel.
	Fallback(f *tir.PrimFunc) *Schedule
	// Sample is a point of the design space: the rules with their
	// decisions drawn from seed's random generator.
	Sample(f *tir.PrimFunc, seed int64) (*Schedule, error)
	// Check refuses a scheduled kernel the target's code generation cannot
	// compile (a mutated trace may leave a vectorized loop too wide).
	Check(f *tir.PrimFunc) error
}

// CPURules are the rules of CPU targets: ApplyDefaultRules and
// ApplySampledRules for the SIMD register width in bits (512 for
// AVX-512, 256 for AVX2) and the number of cores. Cores does not change
// the default schedule (the outer tiles give 100+ parallel tasks on the
// benchmark shapes); the sampled rules use it for rfactor.
type CPURules struct {
	VectorBits int
	Cores      int
	// MaxLanes caps the vector width in elements (0: no cap).
	MaxLanes int64
	// CanVectorize reports whether code generation can widen a loop
	// marked vectorized (targets/cpu's CheckVectorizable); nil accepts
	// every loop. The schedule package does not import the targets, so
	// the target supplies it.
	CanVectorize func(*tir.For) error
	// MinParallelWork is the parallelism cost rule's threshold: a kernel
	// whose work (tensorir.EstimateWork, scalar operations) is below it
	// gets no parallel loop and runs in the calling thread, because
	// starting a parallel region would cost more than the second thread
	// saves (targets/cpu sets it from the measured region cost). The
	// sampled rules draw parallel or serial for kernels within a factor
	// of 4 of it, so the tuner decides per kernel. 0: every kernel is
	// parallelized.
	MinParallelWork float64
	// Int8Dot: the processor has an instruction set for 8-bit dot
	// products (VNNI's vpdpbusd on 512- or 256-bit vectors, or its exact
	// emulation on AVX-512BW or AVX2; targets/cpu.Dot8), so contractions
	// of ui8 by i8 operands into i32 take the int8 rule (rules_vnni.go),
	// whose nest code generation turns into those instructions; the
	// register tile's size follows VectorBits.
	Int8Dot bool
	// serial is the cost rule's verdict for the kernel being scheduled.
	serial bool
}

// vectorRegs is the processor's vector registers: 32 zmm with AVX-512,
// else 16 (ymm with AVX2, xmm with SSE).
func (r CPURules) vectorRegs() int64 {
	if r.VectorBits >= 512 {
		return 32
	}
	return 16
}

// accumulatorRegs is the vector registers the multi-level tiling's
// register tile may fill with accumulators, the rest holding the loaded
// and broadcast operands: 24 of AVX-512's 32, 8 of the 16 otherwise.
// Measured with --mcpu haswell on this machine (2 threads, alternating
// rounds): ResNet-18 32.3 ms with 8, 32.2 with 10, 35.1 with 12 and 38.0
// with 24 (spilled accumulators); a GEMM 1024³ 11.2 ms with 8 to 12 (4×16
// tiles), 16.5 with 24.
func (r CPURules) accumulatorRegs() int64 {
	if r.VectorBits >= 512 {
		return 24
	}
	return 8
}

// forKernel is r with the cost rule's verdict for f.
func (r CPURules) forKernel(f *tir.PrimFunc) CPURules {
	r = r.withDefaults()
	r.serial = r.MinParallelWork > 0 && tir.EstimateWork(f) < r.MinParallelWork
	return r
}

// Default is ApplyDefaultRules.
func (r CPURules) Default(f *tir.PrimFunc) (*Schedule, error) { return ApplyDefaultRules(f, r) }

// Sample is ApplySampledRules.
func (r CPURules) Sample(f *tir.PrimFunc, seed int64) (*Schedule, error) {
	return ApplySampledRules(f, r, seed)
}

// Fallback applies the simple rule alone (vectorize the innermost spatial
// loop, parallelize the outermost) to every block the primitives accept,
// and leaves the others serial.
func (r CPURules) Fallback(f *tir.PrimFunc) *Schedule {
	r = r.forKernel(f)
	s := New(f)
	for _, name := range ruleBlocks(s) {
		saved := snapshot(s)
		if simpleRule(s, name, r) != nil {
			if s.restore(f, saved) != nil {
				return New(f)
			}
		}
	}
	return s
}

// Check refuses a vectorized loop with a non-constant extent, more than
// MaxLanes lanes, or one CanVectorize rejects.
func (r CPURules) Check(f *tir.PrimFunc) error {
	var bad error
	tir.VisitStmt(f.Body, func(st tir.Stmt) bool {
		l, ok := st.(*tir.For)
		if !ok || l.Kind != tir.Vectorized || bad != nil {
			return bad == nil
		}
		e, ok := l.Extent.(*tir.IntImm)
		switch {
		case !ok:
			bad = fmt.Errorf("vectorized loop %%%s has a non-constant extent", l.Var.Name)
		case r.MaxLanes > 0 && e.Value > r.MaxLanes:
			bad = fmt.Errorf("vectorized loop %%%s has %d lanes, more than %d", l.Var.Name, e.Value, r.MaxLanes)
		case r.CanVectorize != nil:
			bad = r.CanVectorize(l)
		}
		return bad == nil
	})
	return bad
}

// ApplyDefaultRules schedules f with the default CPU rules, in the shape
// of TVM MetaSchedule's (src/meta_schedule/schedule_rule/): every step is
// a schedule primitive, so the result's Trace replays on f (and an
// autotuner can mutate its decisions). In order:
//
//  1. auto-inline: every block without reduce iteration variables that
//     writes an intermediate buffer is compute_inline'd into its
//     consumers where that is legal (compute_inline refuses the rest,
//     which changes nothing); epilogues (bias, relu) are left to rule 2.
//  2. multi-level tiling (rules_tiling.go): every block with a reduce
//     iteration variable and at least two spatial ones (dot_general,
//     convolution) whose loops are a perfect nest of one loop per
//     iteration variable is tiled SSRSRS, its accumulator cached
//     (cache_write "local", written back per outer tile, with its
//     elementwise consumers folded into the write-back by
//     reverse_compute_inline where legal; the others get rule 3), its init
//     split off (decompose_reduction), the register tile vectorized and
//     unrolled and the outer spatial tiles fused and parallel. A block
//     the tiling rule cannot handle falls back to rule 3 (the schedule is
//     replayed without the failed attempt).
//  3. simple rule, for every other block not yet under a parallel or
//     vectorized loop: the innermost spatial loop is split by the vector
//     width W (guarded tail when W does not divide it; vectorized whole
//     when its extent is at most W) and vectorized, and the outermost
//     spatial loop (or the outer part of the split) is parallel.
//
// A loop is vectorized only when targets/cpu can widen it
// (CPURules.CanVectorize); otherwise it stays serial. f is not modified.
func ApplyDefaultRules(f *tir.PrimFunc, target CPURules) (*Schedule, error) {
	target = target.forKernel(f)
	s := New(f)
	autoInline(s)
	if err := tileAll(s, f, func(name string) error { return multiLevelTile(s, name, target) }); err != nil {
		return nil, err
	}
	for _, name := range ruleBlocks(s) {
		if err := simpleRule(s, name, target); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// tileAll applies tile to every tileable block of s (scheduling f). A
// tiling the primitives refuse (a schedule *Error or errNotTileable) is
// undone by replaying the trace from before it; other errors are
// returned.
func tileAll(s *Schedule, f *tir.PrimFunc, tile func(name string) error) error {
	for _, name := range ruleBlocks(s) {
		if !tileable(s, name) {
			continue
		}
		saved := snapshot(s)
		err := tile(name)
		if err == nil {
			continue
		}
		var se *Error
		if !errors.As(err, &se) && !errors.Is(err, errNotTileable) {
			return err
		}
		if err := s.restore(f, saved); err != nil {
			return fmt.Errorf("rules: replaying after a failed tiling of %q: %w", name, err)
		}
	}
	return nil
}

// restore makes s the replay of saved on f, keeping s's random generator
// where it is (a refused attempt's draws stay drawn).
func (s *Schedule) restore(f *tir.PrimFunc, saved *Trace) error {
	rng := s.rng
	r, err := Replay(f, saved)
	if err != nil {
		return err
	}
	*s = *r
	s.rng = rng
	return nil
}

// snapshot copies the trace so far.
func snapshot(s *Schedule) *Trace {
	t := *s.Trace()
	t.Insts = append([]Instruction(nil), s.Trace().Insts...)
	return &t
}

// ruleBlocks lists the function's blocks in program order.
func ruleBlocks(s *Schedule) []string {
	var names []string
	for _, r := range BlocksUnder(s.Func().Body) {
		names = append(names, r.Block.Name)
	}
	return names
}

// autoInline compute_inlines every spatial-only block whose output is an
// intermediate buffer, repeating until nothing more inlines (refusals
// leave the function and trace unchanged).
func autoInline(s *Schedule) {
	params := map[*tir.Buffer]bool{}
	for _, p := range s.Func().Params {
		if p.Buffer != nil {
			params[p.Buffer] = true
		}
	}
	for changed := true; changed; {
		changed = false
		for _, r := range BlocksUnder(s.Func().Body) {
			b := r.Block
			if b.Init != nil || len(b.Writes) != 1 || params[b.Writes[0].Buffer] || hasReduce(b) {
				continue
			}
			if s.ComputeInline(BlockRV{b.Name}) == nil {
				changed = true
				break
			}
		}
	}
}

func hasReduce(b *tir.Block) bool {
	for _, iv := range b.IterVars {
		if iv.Kind != tir.Spatial {
			return true
		}
	}
	return false
}

// underAnnotated reports whether a loop enclosing block name (or the
// block's own loops) is already parallel, vectorized or unrolled.
func underAnnotated(s *Schedule, name string) bool {
	r := findBlock(s.Func().Body, name)
	if r == nil {
		return true
	}
	for _, st := range PathTo(s.Func().Body, r) {
		if f, ok := st.(*tir.For); ok && f.Kind != tir.Serial {
			return true
		}
	}
	// Loops inside the block (opaque nests) are left alone as well.
	annotated := false
	walkFors(r.Block.Body, func(f *tir.For) {
		if f.Kind != tir.Serial {
			annotated = true
		}
	})
	return annotated
}

func walkFors(st tir.Stmt, fn func(*tir.For)) {
	if st == nil {
		return
	}
	if f, ok := st.(*tir.For); ok {
		fn(f)
	}
	for _, c := range tir.SubStmts(st) {
		walkFors(c, fn)
	}
}

// lanes is the vector width in elements for the widest element a block
// stores: VectorBits / bits, between 2 and target.MaxLanes.
func lanes(target CPURules, b *tir.Block) int64 {
	widest := 8
	for _, w := range b.Writes {
		if bits := w.Buffer.DType.Bits(); bits > widest {
			widest = bits
		}
	}
	n := max(int64(target.VectorBits/widest), 2)
	if target.MaxLanes > 0 {
		n = min(n, target.MaxLanes)
	}
	return n
}

// tryVectorize vectorizes l when the target's code generation can widen
// the result.
func tryVectorize(s *Schedule, l LoopRV, target CPURules) bool {
	f, err := s.FindLoop(l)
	if err != nil {
		return false
	}
	probe := *f
	probe.Kind = tir.Vectorized
	e, ok := constInt(f.Extent)
	if !ok || e < 1 || (target.MaxLanes > 0 && e > target.MaxLanes) {
		return false
	}
	if target.CanVectorize != nil && target.CanVectorize(&probe) != nil {
		return false
	}
	return s.Vectorize(l) == nil
}

// simpleRule: vectorize the innermost spatial loop of the block (split by
// the vector width) and parallelize the outermost spatial loop.
func simpleRule(s *Schedule, name string, target CPURules) error {
	if underAnnotated(s, name) {
		return nil
	}
	b := BlockRV{name}
	r := findBlock(s.Func().Body, name)
	w := lanes(target, r.Block)
	loops, err := s.GetLoops(b)
	if err != nil {
		return err
	}
	// Vectorize: the innermost loop that holds only this block's nest and
	// passes the spatial check.
	for i := len(loops) - 1; i >= 0; i-- {
		f, _ := s.FindLoop(loops[i])
		if f == nil || len(BlocksUnder(f.Body)) != 1 {
			break
		}
		ext, ok := constInt(f.Extent)
		if !ok || ext < 2 || s.checkSpatial("vectorize", loops[i], f) != nil {
			continue
		}
		if ext <= w {
			if tryVectorize(s, loops[i], target) {
				break
			}
			continue
		}
		saved := snapshot(s)
		parts, err := s.Split(loops[i], []int64{-1, w})
		if err != nil {
			continue
		}
		if tryVectorize(s, parts[1], target) {
			loops = append(append(append([]LoopRV{}, loops[:i]...), parts...), loops[i+1:]...)
			break
		}
		// Undo the split.
		rs, rerr := Replay(s.Original(), saved)
		if rerr != nil {
			return rerr
		}
		*s = *rs
		loops, err = s.GetLoops(b)
		if err != nil {
			return err
		}
		break
	}
	// Parallel: the outermost loop with extent > 1 that accepts it
	// (none when the cost rule keeps the kernel serial).
	for _, l := range loops {
		if target.serial {
			break
		}
		f, err := s.FindLoop(l)
		if err != nil || f.Kind != tir.Serial {
			continue
		}
		if ext, ok := constInt(f.Extent); ok && ext <= 1 {
			continue
		}
		if s.Parallel(l) == nil {
			break
		}
		// Loops below a refused one may still be parallel (e.g. a
		// reduction loop outside a spatial one is rare; stop at the first
		// loop feeding a reduce variable).
		if s.checkSpatial("parallel", l, f) != nil {
			break
		}
	}
	return nil
}

// RecurrenceRules is implemented by rules that schedule the recurrence
// kernels (tensorir.AttrRecurrence) themselves, replacing the CPU schedule
// lower-to-tir gave them (ScheduleRecurrence): the GPU rules run them in
// one thread. The default-schedule step calls it.
type RecurrenceRules interface {
	Recurrence(f *tir.PrimFunc) (*tir.PrimFunc, error)
}

// DefaultRepresentative is the size a symbolic dimension is tiled for when
// none is given (RepresentativeDefault's sizes).
const DefaultRepresentative = 8

// RepresentativeSizes is the representative size of each symbolic
// dimension of f (its index-typed scalar parameters): sizes[name], else
// DefaultRepresentative. Nil when f has none.
func RepresentativeSizes(f *tir.PrimFunc, sizes map[string]int64) map[string]int64 {
	var vals map[string]int64
	for _, p := range f.Params {
		if p.Var != nil && p.Var.Type.IsInt() {
			v, ok := sizes[p.Var.Name]
			if !ok {
				v = DefaultRepresentative
			}
			if vals == nil {
				vals = map[string]int64{}
			}
			vals[p.Var.Name] = v
		}
	}
	return vals
}

// RepresentativeDefault schedules a kernel over symbolic dimensions (its
// index-typed scalar parameters) with r's default rules for
// representative sizes (RepresentativeSizes), returning the scheduled
// kernel, correct for every size: the rules schedule f specialized at
// those sizes (tensorir.Specialize) and FromRepresentative carries that
// schedule over to f. Errors: the rules refuse the specialized kernel,
// FromRepresentative's.
func RepresentativeDefault(r Rules, f *tir.PrimFunc, sizes map[string]int64) (*tir.PrimFunc, error) {
	vals := RepresentativeSizes(f, sizes)
	rep, err := r.Default(tir.Specialize(f, vals))
	if err != nil {
		return nil, err
	}
	return FromRepresentative(r, f, vals, rep.Func(), rep.Trace())
}

// FromRepresentative schedules the symbolic kernel f from rep, f
// specialized at the sizes vals and scheduled by the trace tr (the
// default rules', or a tuning record's measured at those sizes),
// returning a kernel correct for every size:
//   - a kernel separable along its one symbol (a batch, separableSymbol)
//     is lifted: rep's kernel runs chunks of B rows (B = vals of the
//     symbol) and the trace replayed on one row (else the rules' schedule
//     of one row) the remaining rows (liftBatch), so every row runs the
//     code a static compile of B rows (or of one) would have;
//   - otherwise tr is replayed on f with ReplayGeneralized
//     (tiles chosen for the representative size, the outermost tile of a
//     symbolic loop inferred and its tail guarded; MetaSchedule tunes a
//     dynamic workload at a representative shape the same way).
//
// Errors: the trace does not replay on f, or r.Check refuses the result.
func FromRepresentative(r Rules, f *tir.PrimFunc, vals map[string]int64, rep *tir.PrimFunc, tr *Trace) (*tir.PrimFunc, error) {
	if sym, why := separableSymbol(f); why == "" {
		if g, err := lifted(r, f, sym, vals[sym.Name], rep, tr); err == nil {
			return g, nil
		}
	}
	s, err := ReplayGeneralizedAt(f, tr, vals)
	if err != nil {
		return nil, err
	}
	if err := r.Check(s.Func()); err != nil {
		return nil, err
	}
	return s.Func(), nil
}

// lifted is the lifted kernel of FromRepresentative: f run by liftBatch
// as chunks of chunk rows scheduled as rep and single rows.
//
// The row is scheduled by rep's trace tr where it replays
// (ReplayGeneralized: the row loops split into ones), so both read the
// weights in the same order and rewrite-layout packs them once for both;
// else by the rules on its own.
func lifted(r Rules, f *tir.PrimFunc, sym *tir.Var, chunk int64, rep *tir.PrimFunc, tr *Trace) (*tir.PrimFunc, error) {
	if chunk < 1 {
		return nil, fmt.Errorf("lifting the batch of @%s: chunk %d", f.Name, chunk)
	}
	var main, one *tir.PrimFunc
	if chunk == 1 {
		one = rep
	} else {
		main = rep
		row := tir.Specialize(f, map[string]int64{sym.Name: 1})
		if o, err := ReplayGeneralized(row, tr); err == nil && r.Check(o.Func()) == nil {
			one = o.Func()
		} else {
			s, err := r.Default(row)
			if err != nil {
				return nil, err
			}
			one = s.Func()
		}
	}
	g, err := liftBatch(f, sym, chunk, main, one)
	if err != nil {
		return nil, err
	}
	return g, r.Check(g)
}
