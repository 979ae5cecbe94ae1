package npu

import (
	"fmt"
	"strings"

	"github.com/tessera-ml/tessera/schedule"
	"github.com/tessera-ml/tessera/targets/npu/isa"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// An NPU tiling in tensor IR: the standard schedule primitives lay a
// contraction onto the scratchpad scopes and the matrix unit's intrinsic
// (VTA's schedules), for emitTensorIR to read.

// tirStages names a tiled kernel's cache stages (the npu.inp, npu.wgt
// and npu.acc copies; acc "" when the output is an epilogue's input) and
// its inner tile loop.
type tirStages struct {
	inp, wgt, acc string
	tile          schedule.LoopRV
}

// tileContraction schedules the contraction block name of s (iteration
// variables (M, N, K) in that order) as tiling tl lays it on the NPU,
// with the standard primitives in the order VTA's schedules use them:
// reindex the operands not indexed by the variables alone (a gather);
// pad_einsum to whole Batch × BlockOut × BlockIn blocks; split M, N and K
// into tiles (Mt·Batch rows, Nt·BlockOut columns, Kt·BlockIn of the
// reduction per step) and blocks; reorder into (M tile, N tile, step,
// blocks), the tile loops swapped in the N-outer order; cache_read the
// inputs into npu.inp and the weights into npu.wgt (laid out [N][K], the
// weight buffer's) at the step loop — a resident operand's at its tile
// loop instead, where one copy serves the run; the output's tile in
// npu.acc copied out at the inner tile loop (the STORE): cache_write a
// parameter, or set_scope a padded or reindexed output and move its
// copy back there — an intermediate output (an epilogue's input) stays
// in npu.acc (set_scope, as VTA's schedules do) for the epilogue;
// decompose_reduction (the reset); tensorize the block nest with the
// matrix unit's intrinsic for operand types x and w; annotate the
// stages and the reset with their virtual threads. A tail tile's guard
// moves to the tensorized block (blockize lifts it). Errors are the
// primitives' refusals.
func tileContraction(cfg isa.Config, s *schedule.Schedule, name string, tl Tiling, x, w tir.DType) (tirStages, error) {
	var st tirStages
	b, err := s.GetBlock(name)
	if err != nil {
		return st, err
	}
	if err := reindexOperands(s, b); err != nil {
		return st, err
	}
	if err := padToBlocks(cfg, s, b); err != nil {
		return st, err
	}
	ia, ib, kn, err := operands(s, b)
	if err != nil {
		return st, err
	}
	l, err := s.GetLoops(b)
	if err != nil {
		return st, err
	}
	var loops [3][]schedule.LoopRV
	for d, f := range [3][2]int{{tl.Mt, cfg.Batch}, {tl.Nt, cfg.BlockOut}, {tl.Kt, cfg.BlockIn}} {
		if loops[d], err = s.Split(l[d], []int64{-1, int64(f[0]), int64(f[1])}); err != nil {
			return st, err
		}
	}
	i, j, k := loops[0], loops[1], loops[2]
	outer, inner := i[0], j[0] // the tile loops
	if tl.NOuter {
		outer, inner = j[0], i[0]
	}
	if err := s.Reorder(outer, inner, k[0], i[1], j[1], k[1], i[2], j[2], k[2]); err != nil {
		return st, err
	}
	at := map[bool]schedule.LoopRV{false: k[0], true: outer} // by residence
	xb, err := stageAt(s, b, ia, ScopeInp, at[tl.Resident && !tl.NOuter])
	if err != nil {
		return st, err
	}
	wb, err := stageAt(s, b, ib, ScopeWgt, at[tl.Resident && tl.NOuter])
	if err != nil {
		return st, err
	}
	if kn {
		if err := s.TransformLayout(wb, 0, "write", schedule.MustParseIndexMap("(k, n) -> (n, k)")); err != nil {
			return st, err
		}
	}
	st = tirStages{inp: xb.Name, wgt: wb.Name, tile: inner}
	if st.acc, err = accumulate(s, b, inner); err != nil {
		return st, err
	}
	init, err := s.DecomposeReduction(b, k[0])
	if err != nil {
		return st, err
	}
	if _, err := s.Tensorize(i[2], GEMMIntrinName(cfg, x, w)); err != nil {
		return st, err
	}
	return st, annotateThreads(s, tl, xb, wb, init)
}

// padToBlocks pads block b's (M, N, K) to whole Batch × BlockOut ×
// BlockIn blocks (pad_einsum) unless they are already.
func padToBlocks(cfg isa.Config, s *schedule.Schedule, b schedule.BlockRV) error {
	r, err := s.FindBlock(b)
	if err != nil {
		return err
	}
	block := []int64{int64(cfg.Batch), int64(cfg.BlockOut), int64(cfg.BlockIn)}
	for d, iv := range r.Block.IterVars {
		if e, ok := iv.Dom.Extent.(*tir.IntImm); !ok || e.Value%block[d] != 0 {
			return s.PadEinsum(b, block)
		}
	}
	return nil
}

// stageAt caches block b's read i in scope and computes the copy at loop.
func stageAt(s *schedule.Schedule, b schedule.BlockRV, i int, scope string, at schedule.LoopRV) (schedule.BlockRV, error) {
	cb, err := s.CacheRead(b, i, scope)
	if err != nil {
		return cb, err
	}
	return cb, s.ComputeAt(cb, at)
}

// accumulate puts block b's output in npu.acc and returns its copy out
// at the tile loop (the STORE), "" for an epilogue's input.
func accumulate(s *schedule.Schedule, b schedule.BlockRV, tile schedule.LoopRV) (string, error) {
	r, err := s.FindBlock(b)
	if err != nil {
		return "", err
	}
	out := r.Block.Writes[0].Buffer
	if isParamOf(s.Func(), out) {
		cb, err := s.CacheWrite(b, 0, ScopeAcc)
		if err != nil {
			return "", err
		}
		return cb.Name, s.ReverseComputeAt(cb, tile)
	}
	if err := s.SetScope(b, 0, ScopeAcc); err != nil {
		return "", err
	}
	return copyOut(s, out, tile)
}

// annotateThreads annotates the input and weight stages and the
// accumulator's reset with their virtual threads (AttrVirtualThreads):
// the tiling's, or for a resident operand two regions when it is staged
// more than once, as the generator splits the scratchpads.
func annotateThreads(s *schedule.Schedule, tl Tiling, xb, wb, init schedule.BlockRV) error {
	resident := map[bool]schedule.BlockRV{false: xb, true: wb}[tl.NOuter]
	for _, b := range []schedule.BlockRV{xb, wb, init} {
		v := tl.Threads
		if tl.Resident && b == resident {
			v = min(2, stageRunsOf(s.Func(), b.Name))
		}
		if err := s.Annotate(b, AttrVirtualThreads, tir.IntAttr(max(v, 1))); err != nil {
			return err
		}
	}
	return nil
}

// copyOut moves the copies of the accumulator's buffer out to a
// parameter — pad_einsum's "<O>_unpad", then reindex's "<O>_reindex"
// write-back, the first inlined into the second — to the tile loop and
// returns the one left (the STORE), or "" when the buffer is an
// intermediate an epilogue reads.
func copyOut(s *schedule.Schedule, out *tir.Buffer, tile schedule.LoopRV) (string, error) {
	cp, err := s.GetBlock(strings.TrimSuffix(out.Name, "_pad") + "_unpad")
	if err != nil {
		if cp, err = s.GetBlock(out.Name); err != nil { // reindex's write-back
			return "", nil
		}
	}
	r, err := s.FindBlock(cp)
	if err != nil {
		return "", err
	}
	if mid := r.Block.Writes[0].Buffer; !isParamOf(s.Func(), mid) {
		next, err := s.GetBlock(mid.Name)
		if err != nil {
			return "", nil
		}
		if err := s.ComputeInline(cp); err != nil {
			return "", err
		}
		cp = next
		if r, err = s.FindBlock(cp); err != nil {
			return "", err
		}
		if !isParamOf(s.Func(), r.Block.Writes[0].Buffer) { // the epilogue's input
			return "", nil
		}
	}
	return cp.Name, s.ReverseComputeAt(cp, tile)
}

// isParamOf reports whether x is a parameter of f.
func isParamOf(f *tir.PrimFunc, x *tir.Buffer) bool {
	p := f.Param(x.Name)
	return p != nil && p.Buffer == x
}

// operands are the read indices of block b's inputs (loaded with its M
// variable first) and weights (with its N or, laid out [K][N], its K
// variable first), and whether the weights are laid out [K][N].
func operands(s *schedule.Schedule, b schedule.BlockRV) (ia, ib int, kn bool, err error) {
	r, err := s.FindBlock(b)
	if err != nil {
		return 0, 0, false, err
	}
	ivs := r.Block.IterVars
	ia, ib = -1, -1
	for i, rd := range r.Block.Reads {
		for _, idx := range blockLoads(r.Block, rd.Buffer) {
			switch {
			case len(idx) == 0 || rd.Buffer == r.Block.Writes[0].Buffer:
			case tir.Equal(idx[0], ivs[0].Var):
				ia = i
			case tir.Equal(idx[0], ivs[1].Var):
				ib = i
			case tir.Equal(idx[0], ivs[2].Var):
				ib, kn = i, true
			}
		}
	}
	if ia < 0 || ib < 0 {
		return 0, 0, false, fmt.Errorf("block %q: no [M][K] input or [N][K] / [K][N] weight operand", b.Name)
	}
	return ia, ib, kn, nil
}

// blockLoads are the index lists of block b's loads of buffer x.
func blockLoads(b *tir.Block, x *tir.Buffer) [][]tir.Expr {
	var out [][]tir.Expr
	tir.VisitStmt(b.Body, func(st tir.Stmt) bool {
		if bs, ok := st.(*tir.BufferStore); ok {
			tir.VisitExpr(bs.Value, func(e tir.Expr) bool {
				if l, ok := e.(*tir.BufferLoad); ok && l.Buffer == x {
					out = append(out, l.Indices)
				}
				return true
			})
		}
		return true
	})
	return out
}

// reindexOperands reindexes each access of block b that is not indexed
// by iteration variables alone in their order (a gather: a flattened
// map's or a convolution's fused index expressions; a transposed
// operand or output), so that pad_einsum and tensorize see [M][K],
// [N][K] (or [K][N]) and [M][N].
func reindexOperands(s *schedule.Schedule, b schedule.BlockRV) error {
	r, err := s.FindBlock(b)
	if err != nil {
		return err
	}
	st, ok := r.Block.Body.(*tir.BufferStore)
	if !ok {
		return fmt.Errorf("block %q: not a single store", b.Name)
	}
	ivs := r.Block.IterVars
	for i, rd := range r.Block.Reads {
		for _, idx := range blockLoads(r.Block, rd.Buffer) {
			if rd.Buffer != st.Buffer && rd.Buffer.Scope != ScopeAcc && !inBlockOrder(idx, ivs) {
				if _, err := s.ReIndex(b, i, "read"); err != nil {
					return err
				}
				break
			}
		}
	}
	if !inBlockOrder(st.Indices, ivs) {
		_, err := s.ReIndex(b, 0, "write")
		return err
	}
	return nil
}

// inBlockOrder reports whether idx is iteration variables of ivs in
// their order — reindex's layout, [M][K], [N][K] and [M][N] for a
// contraction's (M, N, K) — or a weight laid out [K][N].
func inBlockOrder(idx []tir.Expr, ivs []*tir.IterVar) bool {
	if !plainIndex(idx) {
		return false
	}
	if len(ivs) == 3 && len(idx) == 2 && idx[0] == tir.Expr(ivs[2].Var) && idx[1] == tir.Expr(ivs[1].Var) {
		return true
	}
	last := -1
	for _, e := range idx {
		at := -1
		for i, iv := range ivs {
			if e == tir.Expr(iv.Var) {
				at = i
			}
		}
		if at <= last {
			return false
		}
		last = at
	}
	return true
}

// plainIndex reports whether every index is a variable.
func plainIndex(idx []tir.Expr) bool {
	for _, e := range idx {
		if _, v := e.(*tir.Var); !v {
			return false
		}
	}
	return true
}

// stageRunsOf is how many times block name's nest runs in f: the product
// of the extents of the loops around the perfect nest of copy loops that
// holds it; -1 when f has no such nest.
func stageRunsOf(f *tir.PrimFunc, name string) int {
	runs := -1
	var walk func(st tir.Stmt, trips int)
	walk = func(st tir.Stmt, trips int) {
		switch x := st.(type) {
		case *tir.For:
			if nestOf(x) == name {
				runs = trips
				return
			}
			if e, ok := x.Extent.(*tir.IntImm); ok {
				walk(x.Body, trips*int(e.Value))
			}
		case *tir.SeqStmt:
			for _, y := range x.Stmts {
				walk(y, trips)
			}
		case *tir.Allocate:
			walk(x.Body, trips)
		case *tir.BlockRealize:
			walk(x.Block.Body, trips)
		}
	}
	walk(f.Body, 1)
	return runs
}

// nestOf is the name of the block at the bottom of the perfect loop nest
// st, or "".
func nestOf(st tir.Stmt) string {
	if x, ok := st.(*tir.For); ok {
		if r := stageBlock(x); r != nil {
			return r.Block.Name
		}
	}
	return ""
}

// scheduleTIR schedules NPU kernel f (analysed as g) under tiling tl in
// tensor IR: a convolution's iteration variables fused into (M, N, K)
// (transform_block_layout: M the spatial variables the weights do not
// use, N those they do, K the reduction, each row-major in the block's
// order, as the generator tabulates them), the contraction tiled
// (tileContraction), the epilogue computed on the accumulator tile at the
// tile loop (its operands cache_read into npu.acc, its output
// cache_written there and copied out: VTA's ALU stages), and the reindex
// and padding copies inlined into the DMA stages. Refused (notMappable):
// the window layout, grouped and depthwise contractions.
func scheduleTIR(cfg isa.Config, f *tir.PrimFunc, g *gemmKernel, tl Tiling) (*schedule.Schedule, error) {
	switch {
	case tl.Window:
		return nil, refuse("the window layout is not expressed in tensor IR yet")
	case g.RowW || g.GroupN > 0:
		return nil, refuse("grouped and depthwise contractions are not expressed in tensor IR yet")
	}
	s := schedule.New(f)
	b, err := s.GetBlock(g.Block)
	if err != nil {
		return nil, err
	}
	if err := fuseToGEMM(s, b, f.Params[g.W].Buffer); err != nil {
		return nil, err
	}
	st, err := tileContraction(cfg, s, g.Block, tl, f.Params[g.X].Buffer.DType, f.Params[g.W].Buffer.DType)
	if err != nil {
		return nil, err
	}
	stages := []string{st.inp, st.wgt}
	if st.acc == "" {
		ops, err := scheduleEpilogue(s, f.Params[g.Out].Buffer, st.tile)
		if err != nil {
			return nil, err
		}
		stages = append(stages, ops...)
	}
	for _, name := range stages {
		if err := inlineSources(s, name); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// fuseToGEMM fuses contraction block b's iteration variables into
// (M, N, K), w the weights (the buffer whose loads tell N from M).
func fuseToGEMM(s *schedule.Schedule, b schedule.BlockRV, w *tir.Buffer) error {
	r, err := s.FindBlock(b)
	if err != nil {
		return err
	}
	byW := map[*tir.Var]bool{}
	for _, idx := range blockLoads(r.Block, w) {
		for _, e := range idx {
			tir.VisitExpr(e, func(x tir.Expr) bool {
				if v, ok := x.(*tir.Var); ok {
					byW[v] = true
				}
				return true
			})
		}
	}
	var groups [3][]*tir.IterVar // M, N, K
	var names []string
	for _, iv := range r.Block.IterVars {
		g := 0
		switch {
		case iv.Kind == tir.Reduce:
			g = 2
		case byW[iv.Var]:
			g = 1
		}
		groups[g] = append(groups[g], iv)
		names = append(names, iv.Var.Name)
	}
	if len(groups[0]) == 0 || len(groups[1]) == 0 || len(groups[2]) == 0 {
		return refuse("block %q is not a contraction of M, N and K variables", b.Name)
	}
	if len(r.Block.IterVars) == 3 && groups[0][0] == r.Block.IterVars[0] && groups[1][0] == r.Block.IterVars[1] {
		return nil // already (M, N, K)
	}
	return fuseBlock(s, b, names, groups[:])
}

// fuseBlock transforms block b's iteration variables (named names) into
// one per group, each the group's variables row-major.
func fuseBlock(s *schedule.Schedule, b schedule.BlockRV, names []string, groups [][]*tir.IterVar) error {
	results := make([]string, len(groups))
	for d, vars := range groups {
		stride := int64(1)
		terms := make([]string, len(vars))
		for i := len(vars) - 1; i >= 0; i-- {
			terms[i] = fmt.Sprintf("%s*%d", vars[i].Var.Name, stride)
			ext, ok := vars[i].Dom.Extent.(*tir.IntImm)
			if !ok {
				return refuse("block %q: %%%s has a symbolic extent", b.Name, vars[i].Var.Name)
			}
			stride *= ext.Value
		}
		results[d] = strings.Join(terms, " + ")
	}
	m, err := schedule.ParseIndexMap("(" + strings.Join(names, ", ") + ") -> (" + strings.Join(results, ", ") + ")")
	if err != nil {
		return err
	}
	return s.TransformBlockLayout(b, m)
}

// scheduleEpilogue computes the block writing out (the epilogue) on the
// accumulator tile at the tile loop: the copies between the accumulator
// and its input inlined, its iteration variables fused into (M, N) and
// its other accesses reindexed to [M][N] (or a bias's [N]) when they are
// not already, its loaded operands cache_read into npu.acc at the tile
// loop, its output put in npu.acc (set_scope of the reindexed output, or
// cache_write) and copied out there. It returns the operands' stages.
func scheduleEpilogue(s *schedule.Schedule, out *tir.Buffer, tile schedule.LoopRV) ([]string, error) {
	epi, err := writerOf(s, out)
	if err != nil {
		return nil, err
	}
	if epi, err = inlineAccCopies(s, epi); err != nil {
		return nil, err
	}
	if err := fuseEpilogue(s, epi); err != nil {
		return nil, err
	}
	if err := reindexOperands(s, epi); err != nil {
		return nil, err
	}
	if err := s.ReverseComputeAt(epi, tile); err != nil {
		return nil, err
	}
	var stages []string
	r, err := s.FindBlock(epi)
	if err != nil {
		return nil, err
	}
	for i, rd := range r.Block.Reads {
		if rd.Buffer.Scope == ScopeAcc || rd.Buffer == r.Block.Writes[0].Buffer {
			continue
		}
		cb, err := stageAt(s, epi, i, ScopeAcc, tile)
		if err != nil {
			return nil, err
		}
		stages = append(stages, cb.Name)
	}
	cp, err := accumulate(s, epi, tile)
	if err != nil {
		return nil, err
	}
	if cp == "" {
		return nil, fmt.Errorf("block %q: no copy of its output to %%%s", epi.Name, out.Name)
	}
	return stages, nil
}

// inlineAccCopies inlines the copies (pad_einsum's unpad, reindex's
// write-back) between the accumulator and epilogue block epi's input:
// into epi, or epi into a copy whose store is not at its own variables
// (reindex's write-back: reverse_compute_inline, which leaves the
// epilogue in the copy's fused (M, N) iteration space). It returns the
// epilogue's block.
func inlineAccCopies(s *schedule.Schedule, epi schedule.BlockRV) (schedule.BlockRV, error) {
	for {
		r, err := s.FindBlock(epi)
		if err != nil {
			return epi, err
		}
		copied := false
		for _, rd := range r.Block.Reads {
			if rd.Buffer.Scope == ScopeAcc || isParamOf(s.Func(), rd.Buffer) {
				continue
			}
			p, err := writerOf(s, rd.Buffer)
			if err != nil {
				return epi, err
			}
			if err := s.ComputeInline(p); err != nil {
				if err := s.ReverseComputeInline(epi); err != nil {
					return epi, err
				}
				epi = p
			}
			copied = true
			break
		}
		if !copied {
			return epi, nil
		}
	}
}

// fuseEpilogue fuses epilogue block epi's iteration variables into
// (M, N), N those the accumulator's column index uses, each row-major in
// the block's order as the contraction's were.
func fuseEpilogue(s *schedule.Schedule, epi schedule.BlockRV) error {
	r, err := s.FindBlock(epi)
	if err != nil {
		return err
	}
	st, ok := r.Block.Body.(*tir.BufferStore)
	if !ok {
		return refuse("block %q is not a single store", epi.Name)
	}
	var acc *tir.BufferLoad
	tir.VisitExpr(st.Value, func(x tir.Expr) bool {
		if l, ok := x.(*tir.BufferLoad); ok && l.Buffer.Scope == ScopeAcc && acc == nil {
			acc = l
		}
		return acc == nil
	})
	if acc == nil || len(acc.Indices) != 2 {
		return refuse("block %q does not read the accumulator as [M][N]", epi.Name)
	}
	if len(r.Block.IterVars) == 2 && plainIndex(acc.Indices) {
		return nil
	}
	col := map[*tir.Var]bool{}
	tir.VisitExpr(acc.Indices[1], func(x tir.Expr) bool {
		if v, ok := x.(*tir.Var); ok {
			col[v] = true
		}
		return true
	})
	var groups [2][]*tir.IterVar
	var names []string
	for _, iv := range r.Block.IterVars {
		g := 0
		if col[iv.Var] {
			g = 1
		}
		groups[g] = append(groups[g], iv)
		names = append(names, iv.Var.Name)
	}
	return fuseBlock(s, epi, names, groups[:])
}

// writerOf is the block that stores x.
func writerOf(s *schedule.Schedule, x *tir.Buffer) (schedule.BlockRV, error) {
	for _, r := range schedule.BlocksUnder(s.Func().Body) {
		if st, ok := r.Block.Body.(*tir.BufferStore); ok && st.Buffer == x {
			return schedule.BlockRV{Name: r.Block.Name}, nil
		}
	}
	return schedule.BlockRV{}, fmt.Errorf("no block writes %%%s", x.Name)
}

// inlineSources inlines the copies (reindex, padding) stage reads
// through until it reads a parameter.
func inlineSources(s *schedule.Schedule, stage string) error {
	for {
		r, err := s.FindBlock(schedule.BlockRV{Name: stage})
		if err != nil {
			return err
		}
		_, l, _ := copyOf(r.Block)
		if l == nil || isParamOf(s.Func(), l.Buffer) {
			return nil
		}
		p, err := writerOf(s, l.Buffer)
		if err != nil {
			return err
		}
		if err := s.ComputeInline(p); err != nil {
			return err
		}
	}
}

// compileTIR compiles NPU kernel f (analysed as g) under tiling tl
// through tensor IR: scheduleTIR, then emitTensorIR on the generator's
// DRAM image (compileGEMM lays it out and its runtime packs it). Errors:
// scheduleTIR's and emitTensorIR's refusals.
func compileTIR(cfg isa.Config, f *tir.PrimFunc, g *gemmKernel, tl Tiling) (*gemmProgram, error) {
	gp, err := compileGEMM(cfg, g, tl)
	if err != nil {
		return nil, err
	}
	s, err := scheduleTIR(cfg, f, g, tl)
	if err != nil {
		return nil, err
	}
	prog, err := emitTensorIR(cfg, g.DP, s.Func(), tirImages(gp, f))
	if err != nil {
		return nil, err
	}
	gp.prog = prog
	return gp, nil
}

// tirImages are the DRAM images of gp's kernel f as the generator lays
// them out, its gather tables as views: the inputs, the weights, the
// output and the epilogue's loaded operands (bias vectors, row operands
// and tiles).
func tirImages(gp *gemmProgram, f *tir.PrimFunc) map[string]tirImage {
	c, g := gp.cfg, gp.g
	images := map[string]tirImage{
		f.Params[g.X].Name(): {Mem: isa.MemInp, DType: g.XType, Base: gp.xOff, Bytes: gp.eInp, Rows: c.Batch, Cols: c.BlockIn, Stride: gp.kb, View: g.XIdx, ViewCols: g.K},
		f.Params[g.W].Name(): {Mem: isa.MemWgt, DType: g.WType, Base: gp.wOff, Bytes: gp.eWgt, Rows: c.BlockOut, Cols: c.BlockIn, Stride: gp.kb, View: g.WIdx, ViewCols: g.K},
		f.Params[g.Out].Name(): {Mem: isa.MemAcc, DType: g.OutType, Base: gp.outOff, Bytes: gp.eOut, Rows: c.Batch, Cols: c.BlockOut, Stride: gp.nb,
			View: g.OutIdx, ViewCols: g.N},
	}
	for i, st := range g.Epilogue {
		img := tirImage{Mem: isa.MemAcc, DType: st.Elem, Base: gp.stepOff[i], Bytes: gp.operandEntry(st),
			Rows: c.Batch, Cols: c.BlockOut, Stride: gp.nb, View: st.Idx, ViewCols: g.N}
		switch st.Kind {
		case opVector: // one row of N values per entry
			img.Rows = 1
		case opRow: // Mb entries, each row's value repeated: a column of M values
			img.Cols, img.Stride, img.ViewCols = 1, 1, 1
		case opTile:
		default:
			continue
		}
		images[f.Params[st.Param].Name()] = img
	}
	return images
}
