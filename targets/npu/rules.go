package npu

import (
	"fmt"
	"sync"

	"github.com/tessera-ml/tessera/schedule"
	"github.com/tessera-ml/tessera/targets/npu/isa"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// AttrHostReason annotates the first block of a kernel the NPU rules left
// to the host with the reason (a string), so that code generation can say
// why after the host's schedule has changed the kernel.
const AttrHostReason = "npu.host"

// AttrTile is the contraction block's annotation holding its NPU tiling
// (Tiling): [Mt, Nt, Kt, layout, threads, order, dma] in scratchpad
// entries, layout 0 for the gather layout and 1 for the window layout,
// threads the virtual threads (1 to 4), order 0 for the N tiles of each
// M tile and 1 for the M tiles of each N tile (NOuter), dma the shared
// operand's DMA granularity, 0 per reduction step and 1 its whole
// reduction once per run of tiles (Resident). Dma 0 may be left out,
// then order 0; with 2 threads, order 0 and dma 0 it is written
// [Mt, Nt, Kt] (gather) or [Mt, Nt, Kt, 1] (window). Kernels without it
// get defaultTiling.
const AttrTile = "npu.tile"

// Rules are the NPU target's schedule rules. A kernel the matrix unit
// runs keeps its loop nest (the NPU code generation reads the
// computation) and gets its tiling as an annotation: the default rule
// picks the tiling with the lowest closed-form cycle estimate, the
// sampled rule draws one among those that fit the scratchpads. Every
// other kernel runs on the host and gets the host's rules.
type Rules struct {
	Config isa.Config
	Host   schedule.Rules
	// memo, when set, keeps the last kernel's analysis (NewRules).
	memo *analysisMemo
}

// NewRules returns the rules of cfg with host's for host kernels. They
// remember the last kernel they analyzed: the tuner samples one task's
// kernel thousands of times, and recognizing a kernel as a GEMM
// tabulates every index of its iteration domain.
func NewRules(cfg isa.Config, host schedule.Rules) Rules {
	return Rules{Config: cfg, Host: host, memo: &analysisMemo{}}
}

// analysisMemo is the last analyzed kernel (kernels are not mutated in
// place: schedules copy them) and its analysis.
type analysisMemo struct {
	mu  sync.Mutex
	f   *tir.PrimFunc
	g   *gemmKernel
	err error
}

// analyze is analyzeGEMM(r.Config, f), remembered for the last f.
func (r Rules) analyze(f *tir.PrimFunc) (*gemmKernel, error) {
	if r.memo == nil {
		return analyzeGEMM(r.Config, f)
	}
	r.memo.mu.Lock()
	defer r.memo.mu.Unlock()
	if r.memo.f != f {
		r.memo.g, r.memo.err = analyzeGEMM(r.Config, f)
		r.memo.f = f
	}
	return r.memo.g, r.memo.err
}

// Default annotates an NPU kernel with its default tiling, or schedules a
// host kernel with the host's rules.
func (r Rules) Default(f *tir.PrimFunc) (*schedule.Schedule, error) {
	g, err := r.analyze(f)
	var t Tiling
	if err == nil {
		t, err = defaultTiling(r.Config, g)
	}
	if err != nil {
		s, herr := r.Host.Default(f)
		return hostReason(s, f, err), herr
	}
	return annotateTiling(schedule.New(f), g, t)
}

// hostReason annotates s's copy of f's first block with why f runs on
// the host (nothing when s is nil or the block is gone).
func hostReason(s *schedule.Schedule, f *tir.PrimFunc, why error) *schedule.Schedule {
	if s == nil {
		return s
	}
	var first string
	tir.VisitStmt(f.Body, func(st tir.Stmt) bool {
		if br, ok := st.(*tir.BlockRealize); ok && first == "" {
			first = br.Block.Name
		}
		return first == ""
	})
	if b, err := s.GetBlock(first); err == nil {
		s.Annotate(b, AttrHostReason, tir.StringAttr(why.Error()))
	}
	return s
}

// Fallback leaves an NPU kernel unscheduled (default tiling at code
// generation) and falls back to the host's rules for a host kernel.
func (r Rules) Fallback(f *tir.PrimFunc) *schedule.Schedule {
	g, err := r.analyze(f)
	if err == nil {
		if _, err = defaultTiling(r.Config, g); err == nil {
			return schedule.New(f)
		}
	}
	return hostReason(r.Host.Fallback(f), f, err)
}

// Sample draws a tiling uniformly among the candidate tilings that fit
// (powers of two and the full extents) for an NPU kernel; the host's
// sampled rules for a host kernel.
func (r Rules) Sample(f *tir.PrimFunc, seed int64) (*schedule.Schedule, error) {
	g, err := r.analyze(f)
	if err != nil {
		s, herr := r.Host.Sample(f, seed)
		return hostReason(s, f, err), herr
	}
	fit := tilings(r.Config, g)
	if len(fit) == 0 {
		s, herr := r.Host.Sample(f, seed)
		return hostReason(s, f, refuse("no tiling fits the scratchpads")), herr
	}
	s := schedule.NewWithSeed(f, seed)
	return annotateTiling(s, g, fit[s.Rand().Intn(len(fit))])
}

// Check refuses an NPU kernel whose tiling annotation does not fit the
// scratchpads; host kernels go to the host's check.
func (r Rules) Check(f *tir.PrimFunc) error {
	g, err := r.analyze(f)
	if err != nil {
		return r.Host.Check(f)
	}
	t, ok, err := tilingOf(f, g)
	if err != nil || !ok {
		return err
	}
	if !fits(r.Config, g, t) {
		return fmt.Errorf("npu: tiling %v of block %q does not fit the scratchpads of config %q", t, g.Block, r.Config.Name)
	}
	return nil
}

func annotateTiling(s *schedule.Schedule, g *gemmKernel, t Tiling) (*schedule.Schedule, error) {
	b, err := s.GetBlock(g.Block)
	if err != nil {
		return nil, err
	}
	v := tir.ArrayAttr{tir.IntAttr(t.Mt), tir.IntAttr(t.Nt), tir.IntAttr(t.Kt)}
	switch {
	case t.Threads != 2 || t.NOuter || t.Resident:
		v = append(v, tir.IntAttr(b2i(t.Window)), tir.IntAttr(t.Threads))
		if t.NOuter || t.Resident {
			v = append(v, tir.IntAttr(b2i(t.NOuter)))
		}
		if t.Resident {
			v = append(v, tir.IntAttr(1))
		}
	case t.Window:
		v = append(v, tir.IntAttr(1))
	}
	return s, s.Annotate(b, AttrTile, v)
}

// tilingOf reads the contraction block's npu.tile annotation (ok false
// when absent). Errors: a malformed annotation.
func tilingOf(f *tir.PrimFunc, g *gemmKernel) (Tiling, bool, error) {
	blocks, _ := realizedBlocks(f.Body)
	for _, b := range blocks {
		if b.Name != g.Block {
			continue
		}
		a, ok := b.Annotations[AttrTile]
		if !ok {
			return Tiling{}, false, nil
		}
		t, ok := parseTiling(a)
		if !ok {
			return Tiling{}, false, fmt.Errorf("npu: block %q: %s must be [Mt, Nt, Kt, layout, threads, order, dma] (positive integers, layout 0 gather or 1 window, 1 to %d threads, order 0 M outer or 1 N outer, dma 0 per step or 1 resident), [Mt, Nt, Kt, layout, threads, order], [Mt, Nt, Kt, layout, threads], [Mt, Nt, Kt] or [Mt, Nt, Kt, 1]", g.Block, AttrTile, maxThreads)
		}
		if t.Window && g.Win == nil {
			return Tiling{}, false, fmt.Errorf("npu: block %q: %s asks for the window layout, but the kernel is not a convolution the window layout fetches", g.Block, AttrTile)
		}
		return t, true, nil
	}
	return Tiling{}, false, nil
}

// parseTiling reads an npu.tile value (AttrTile's forms).
func parseTiling(a tir.Attr) (Tiling, bool) {
	arr, ok := a.(tir.ArrayAttr)
	if !ok || len(arr) < 3 || len(arr) > 7 {
		return Tiling{}, false
	}
	v := [7]int{3: 0, 4: 2}
	for i, x := range arr {
		n, isInt := x.(tir.IntAttr)
		if !isInt || n < 0 || n >= 1<<20 {
			return Tiling{}, false
		}
		v[i] = int(n)
	}
	layoutOK := v[3] == 1 || (v[3] == 0 && len(arr) >= 5)
	if v[0] < 1 || v[1] < 1 || v[2] < 1 || (len(arr) > 3 && !layoutOK) || v[4] < 1 || v[4] > maxThreads || v[5] > 1 || v[6] > 1 {
		return Tiling{}, false
	}
	return Tiling{Mt: v[0], Nt: v[1], Kt: v[2], Window: v[3] == 1, Threads: v[4], NOuter: v[5] == 1, Resident: v[6] == 1}, true
}
