package npu

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tessera-ml/tessera/schedule"
	"github.com/tessera-ml/tessera/targets/npu/isa"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// Instruction emission from scheduled tensor IR (VTA's lowering passes:
// InjectDMAIntrin, the GEMM intrinsic's lowering and the micro-op
// kernels, CoProcSync — here isa.InsertDeps on the instruction stream).
//
// emitTensorIR reads a contraction scheduled onto the NPU's scopes — the
// form scheduleTIR builds with standard primitives (tir_schedule.go) —
// and emits its program by walking the function with the loop variables
// bound:
//
//   - a cache stage copying a kernel parameter into npu.inp, npu.wgt or
//     npu.acc (an epilogue's operand) — the value a load of the
//     parameter, possibly clamped and guarded by a select: the padding
//     the DRAM image holds — is one LOAD of the blocks its instance
//     writes, from the parameter's DRAM image; the buffer then holds
//     that region in its scratchpad, at entries of its own after the
//     scope's other buffers, in the next of the parts its
//     AttrVirtualThreads splits the scratchpad into (an epilogue
//     operand: in the accumulator's part);
//   - a block writing zero into npu.acc (decompose_reduction's init) is
//     a GEMM reset of the accumulator entries one run of its instances
//     writes, which become the accumulator's region (in the next of its
//     AttrVirtualThreads parts);
//   - a block tensorized with the matrix unit's intrinsic is a micro-op
//     (the accumulator, input and weight entries its implementation's
//     first iteration accesses); consecutive ones form one GEMM;
//   - a copy from npu.acc into a parameter is the STORE of the
//     accumulator's region.
//
// An epilogue block on the accumulator is a chain of ALU instructions
// (tir_emit_alu.go); other blocks (host work) are refused. A
// run's micro-ops are folded into the GEMM's two loop levels where they
// repeat affinely (loopRun), deduplicated and loaded first; then, as for
// the generator's programs, LOADs of data a scratchpad still holds are
// elided (isa.ElideLoads) and the dependency tokens inserted
// (isa.InsertDeps).

// tirImage is a kernel parameter's DRAM image: the scratchpad memory its
// DMAs fill (inp, wgt) or drain (acc), its element type, and its entries
// — entry (r, c) holds the elements [r·Rows, (r+1)·Rows) × [c·Cols,
// (c+1)·Cols) of the scratchpad buffer's coordinates at Base + (r·Stride
// + c)·Bytes bytes. Swap says the scratchpad buffer is the parameter
// transposed (weights [K][N] staged [N][K]).
//
// View, when set, is a gathered image's table (the generator's gather
// tables): the parameter's element (its row-major offset) at scratchpad
// coordinates (r, c) is View[r·ViewCols + c], -1 for a zero (padding), as
// are coordinates beyond the table; the emitter checks every staged
// element against it.
type tirImage struct {
	Mem                isa.Memory
	DType              isa.DType
	Base, Bytes        int
	Rows, Cols, Stride int
	Swap               bool
	View               []int32
	ViewCols           int
}

// region is a box of a scratchpad buffer's elements: rows [r0, r1),
// columns [c0, c1).
type region struct{ r0, r1, c0, c1 int64 }

func (r region) grow(i, j int64) region {
	return region{min(r.r0, i), max(r.r1, i+1), min(r.c0, j), max(r.c1, j+1)}
}

func (r region) size() int64 { return (r.r1 - r.r0) * (r.c1 - r.c0) }

// entries is the region in entries of rows × cols elements, or an error
// when it does not start on an entry boundary.
func (r region) entries(rows, cols int64) (region, error) {
	if r.r0%rows != 0 || r.c0%cols != 0 {
		return region{}, fmt.Errorf("[%d, %d) × [%d, %d) does not start on a %d×%d block", r.r0, r.r1, r.c0, r.c1, rows, cols)
	}
	return region{r.r0 / rows, ceilDiv64(r.r1, rows), r.c0 / cols, ceilDiv64(r.c1, cols)}, nil
}

func ceilDiv64(a, b int64) int64 { return (a + b - 1) / b }

// accPoint is an accumulator buffer's element.
type accPoint struct {
	buf  *tir.Buffer
	i, j int64
}

type tirEmitter struct {
	cfg    isa.Config
	prog   *isa.Program
	images map[*tir.Buffer]tirImage
	env    *bindings
	held   map[*tir.Buffer]region // a scratchpad buffer's region now in its scratchpad
	base   map[*tir.Buffer]int64  // its first entry there now
	off    map[*tir.Buffer]int64  // its offset in a part, and its entries
	size   map[*tir.Buffer]int64
	next   map[string]int64     // a scope's first free entry in a part
	staged map[*tir.Buffer]int  // how many times it was staged (its part rotates)
	column map[*tir.Buffer]bool // a 1-D buffer holding a row operand
	accAt  int64                // the accumulator's part's first entry
	acc    *tir.Buffer          // the accumulator: the last reset's buffer
	run    []isa.Uop            // the GEMM or reset run being gathered
	reset  bool                 // the run is a reset
	resets []accPoint           // the reset run's elements
	rparts int                  // the reset block's virtual threads
	alu    *aluRun              // the epilogue run being gathered
	chains map[*tir.Block]*aluChain
	uopAt  map[string]int
}

// emitTensorIR emits f's program on datapath dp; images maps f's
// parameter names to their DRAM images. Errors name the block or stage
// the emitter cannot map.
func emitTensorIR(cfg isa.Config, dp isa.Datapath, f *tir.PrimFunc, images map[string]tirImage) (*isa.Program, error) {
	e := &tirEmitter{cfg: cfg, prog: &isa.Program{Datapath: dp}, images: map[*tir.Buffer]tirImage{},
		env: newBindings(), held: map[*tir.Buffer]region{}, base: map[*tir.Buffer]int64{}, off: map[*tir.Buffer]int64{},
		size: map[*tir.Buffer]int64{}, next: map[string]int64{}, staged: map[*tir.Buffer]int{}, column: map[*tir.Buffer]bool{},
		chains: map[*tir.Block]*aluChain{}, uopAt: map[string]int{}}
	for _, p := range f.Params {
		if img, ok := images[p.Name()]; ok {
			e.images[p.Buffer] = img
		}
	}
	if err := e.stmt(f.Body); err != nil {
		return nil, fmt.Errorf("npu: emitting @%s: %v", f.Name, err)
	}
	if err := e.flush(); err != nil {
		return nil, fmt.Errorf("npu: emitting @%s: %v", f.Name, err)
	}
	e.prog.Insts = append(e.prog.Insts, isa.Inst{Op: isa.OpFinish})
	n := uint32(len(e.prog.Uops))
	uops := isa.Inst{Op: isa.OpLoad, Mem: isa.MemUop, DType: isa.DTInt8, YSize: 1, XSize: n, XStride: n}
	e.prog.Insts = append([]isa.Inst{uops}, e.prog.Insts...)
	if _, err := isa.ElideLoads(cfg, e.prog); err != nil {
		return nil, fmt.Errorf("npu: emitting @%s: %v", f.Name, err)
	}
	if err := isa.InsertDeps(cfg, e.prog); err != nil {
		return nil, fmt.Errorf("npu: emitting @%s: %v", f.Name, err)
	}
	return e.prog, nil
}

func (e *tirEmitter) stmt(st tir.Stmt) error {
	switch x := st.(type) {
	case *tir.SeqStmt:
		for _, s := range x.Stmts {
			if err := e.stmt(s); err != nil {
				return err
			}
		}
		return nil
	case *tir.Allocate:
		return e.stmt(x.Body)
	case *tir.For:
		if r := stageBlock(x); r != nil && e.isStage(r) {
			return e.stage(x, r)
		}
		return e.loop(x, func() error { return e.stmt(x.Body) })
	case *tir.BlockRealize:
		return e.block(x)
	}
	return fmt.Errorf("%s: not a loop, sequence or block", strings.SplitN(tir.PrintStmt(st), "\n", 2)[0])
}

// loop runs body once per iteration of x with x's variable bound.
func (e *tirEmitter) loop(x *tir.For, body func() error) error {
	lo, ok1 := e.eval(x.Min)
	n, ok2 := e.eval(x.Extent)
	if !ok1 || !ok2 {
		return fmt.Errorf("loop %%%s: bounds %s, %s are not known", x.Var.Name, tir.ExprString(x.Min), tir.ExprString(x.Extent))
	}
	for i := lo; i < lo+n; i++ {
		e.env.set(x.Var, i)
		if err := body(); err != nil {
			return err
		}
	}
	e.env.unset(x.Var)
	return nil
}

func (e *tirEmitter) eval(x tir.Expr) (int64, bool) { return e.env.eval(x, false) }

// bindings are the values of the loop and iteration variables the walk
// is inside, and the integer expressions it evaluates, each compiled once
// (tir.CompileInt): a stage evaluates the same indices for every element.
type bindings struct {
	slot  map[*tir.Var]int
	vals  []int64
	known []bool
	all   []bool // every slot known: unbound variables read 0
	fns   map[tir.Expr]tir.IntFn
}

func newBindings() *bindings {
	return &bindings{slot: map[*tir.Var]int{}, fns: map[tir.Expr]tir.IntFn{}}
}

func (b *bindings) slotOf(v *tir.Var) int {
	i, ok := b.slot[v]
	if !ok {
		i = len(b.vals)
		b.slot[v] = i
		b.vals, b.known, b.all = append(b.vals, 0), append(b.known, false), append(b.all, true)
	}
	return i
}

// fn is x compiled against the bindings' slots.
func (b *bindings) fn(x tir.Expr) tir.IntFn {
	f, ok := b.fns[x]
	if !ok {
		f = tir.CompileInt(x, b.slotOf)
		b.fns[x] = f
	}
	return f
}

func (b *bindings) set(v *tir.Var, x int64) {
	i := b.slotOf(v)
	b.vals[i], b.known[i] = x, true
}

func (b *bindings) unset(v *tir.Var) {
	i := b.slotOf(v)
	b.vals[i], b.known[i] = 0, false
}

// eval is x's value; ok is false when x reads a variable not bound,
// unless zero is set: then such a variable reads 0 (the intrinsic
// implementation's loops at their first iteration).
func (b *bindings) eval(x tir.Expr, zero bool) (int64, bool) {
	f := b.fn(x)
	if zero {
		return f(b.vals, b.all)
	}
	return f(b.vals, b.known)
}

// bind binds r's iteration variables and reports whether its predicate
// holds.
func (e *tirEmitter) bind(r *tir.BlockRealize) (bool, error) {
	for i, iv := range r.Block.IterVars {
		v, ok := e.eval(r.Values[i])
		if !ok {
			return false, fmt.Errorf("block %q: binding %s is not known", r.Block.Name, tir.ExprString(r.Values[i]))
		}
		e.env.set(iv.Var, v)
	}
	if r.Predicate == nil {
		return true, nil
	}
	p, ok := e.eval(r.Predicate)
	return ok && p != 0, nil
}

// point is the element a 2-D access idx of buffer b names; a 1-D one is
// a vector's: a row of N values (row 0), or a column of M values (column
// 0) when b holds a row operand (one value per row).
func (e *tirEmitter) point(b *tir.Buffer, idx []tir.Expr) (i, j int64, err error) {
	ok1, ok2 := true, true
	switch {
	case len(idx) == 1 && e.column[b]:
		i, ok1 = e.eval(idx[0])
	case len(idx) == 1:
		j, ok2 = e.eval(idx[0])
	case len(idx) == 2:
		i, ok1 = e.eval(idx[0])
		j, ok2 = e.eval(idx[1])
	default:
		return 0, 0, fmt.Errorf("a scratchpad access of rank %d (want 1 or 2)", len(idx))
	}
	if !ok1 || !ok2 {
		return 0, 0, fmt.Errorf("index %s is not known", exprList(idx))
	}
	return i, j, nil
}

// stageBlock is the block at the bottom of the perfect loop nest x, or nil.
func stageBlock(x *tir.For) *tir.BlockRealize {
	var st tir.Stmt = x
	for {
		switch y := st.(type) {
		case *tir.For:
			st = y.Body
		case *tir.BlockRealize:
			return y
		default:
			return nil
		}
	}
}

// copyOf is a copy block's store and the load its value is, or nil: the
// load possibly under selects of a constant (padding) whose conditions
// are guards.
func copyOf(b *tir.Block) (st *tir.BufferStore, l *tir.BufferLoad, guards []tir.Expr) {
	st, ok := b.Body.(*tir.BufferStore)
	if !ok {
		return nil, nil, nil
	}
	v := st.Value
	for {
		sel, ok := v.(*tir.Select)
		if !ok {
			break
		}
		if !isConst(sel.F) {
			return st, nil, nil
		}
		guards, v = append(guards, sel.Cond), sel.T
	}
	l, _ = v.(*tir.BufferLoad)
	return st, l, guards
}

func isConst(x tir.Expr) bool {
	switch x.(type) {
	case *tir.IntImm, *tir.FloatImm:
		return true
	}
	return false
}

// isStage reports whether r copies a parameter with an image into a
// scratchpad (an epilogue's operand into npu.acc too), or the
// accumulator into one.
func (e *tirEmitter) isStage(r *tir.BlockRealize) bool {
	st, l, _ := copyOf(r.Block)
	if st == nil || l == nil {
		return false
	}
	_, toImage := e.images[st.Buffer]
	_, fromImage := e.images[l.Buffer]
	onChip := st.Buffer.Scope == ScopeInp || st.Buffer.Scope == ScopeWgt || st.Buffer.Scope == ScopeAcc
	return fromImage && onChip || toImage && l.Buffer.Scope == ScopeAcc
}

// stage emits the DMA of one instance of the copy nest x around r.
func (e *tirEmitter) stage(x *tir.For, r *tir.BlockRealize) error {
	st, l, guards := copyOf(r.Block)
	scratch, idx := st.Buffer, st.Indices // the scratchpad side and its index
	param, pidx := l.Buffer, l.Indices
	if l.Buffer.Scope == ScopeAcc {
		scratch, idx, param, pidx = l.Buffer, l.Indices, st.Buffer, st.Indices
	}
	img := e.images[param]
	e.column[scratch] = len(idx) == 1 && img.Cols == 1
	if img.View == nil && !sameElement(idx, pidx, img.Swap) {
		return fmt.Errorf("stage %q does not copy %%%s element for element into %%%s (the image's layout)", r.Block.Name, param.Name, scratch.Name)
	}
	var view *stageView
	if img.View != nil {
		var err error
		if view, err = e.newStageView(img, param, pidx, guards); err != nil {
			return fmt.Errorf("stage %q: %v", r.Block.Name, err)
		}
	}
	box := region{r0: 1 << 62, c0: 1 << 62}
	var count int64
	var walk func(s tir.Stmt) error
	walk = func(s tir.Stmt) error {
		if f, ok := s.(*tir.For); ok {
			return e.loop(f, func() error { return walk(f.Body) })
		}
		if ok, err := e.bind(r); err != nil || !ok {
			return err
		}
		i, j, err := e.point(scratch, idx)
		if err == nil && view != nil {
			err = view.check(e.env, i, j)
		}
		if err != nil {
			return fmt.Errorf("stage %q: %v", r.Block.Name, err)
		}
		box, count = box.grow(i, j), count+1
		return nil
	}
	if err := walk(x); err != nil {
		return err
	}
	if count == 0 {
		return nil
	}
	if count != box.size() {
		return fmt.Errorf("stage %q copies %d elements, not the whole box [%d, %d) × [%d, %d)", r.Block.Name, count, box.r0, box.r1, box.c0, box.c1)
	}
	if err := e.flush(); err != nil {
		return err
	}
	if l.Buffer.Scope == ScopeAcc {
		return e.store(r.Block.Name, st.Buffer, scratch, box)
	}
	return e.load(r.Block, l.Buffer, scratch, box)
}

// load emits the LOAD of box of scratchpad buffer scratch from param's
// image; the buffer then holds box.
func (e *tirEmitter) load(stage *tir.Block, param, scratch *tir.Buffer, box region) error {
	name := stage.Name
	img := e.images[param]
	ent, err := box.entries(int64(img.Rows), int64(img.Cols))
	if err != nil {
		return fmt.Errorf("stage %q: %v", name, err)
	}
	var at int64
	if scratch.Scope == ScopeAcc { // an epilogue operand: in the accumulator's part
		at, err = e.placeAt(scratch, ent.size(), e.accAt, int64(e.cfg.Depth(isa.MemAcc, e.prog.Datapath)/max(e.rparts, 1)))
	} else {
		at, err = e.rotate(scratch, ent.size(), img.Mem, virtualThreads(stage))
	}
	if err != nil {
		return fmt.Errorf("stage %q: %v", name, err)
	}
	e.held[scratch] = box
	e.prog.Insts = append(e.prog.Insts, isa.Inst{Op: isa.OpLoad, Mem: img.Mem, DType: img.DType, SRAMBase: uint32(at),
		DRAMBase: uint32(img.Base + int(ent.r0*int64(img.Stride)+ent.c0)*img.Bytes),
		YSize:    uint32(ent.r1 - ent.r0), XSize: uint32(ent.c1 - ent.c0), XStride: uint32(img.Stride)})
	return nil
}

// store emits the STORE of box of accumulator buffer src (the whole
// region it holds) into param's image.
func (e *tirEmitter) store(name string, param, src *tir.Buffer, box region) error {
	img := e.images[param]
	held, ok := e.held[src]
	if !ok {
		return fmt.Errorf("stage %q stores %%%s, which the accumulator does not hold", name, src.Name)
	}
	ent, err := box.entries(int64(img.Rows), int64(img.Cols))
	if err != nil {
		return fmt.Errorf("stage %q: %v", name, err)
	}
	whole, _ := held.entries(int64(img.Rows), int64(img.Cols))
	if ent != whole {
		return fmt.Errorf("stage %q stores part of the accumulator's region (entries %v of %v)", name, ent, whole)
	}
	e.prog.Insts = append(e.prog.Insts, isa.Inst{Op: isa.OpStore, Mem: isa.MemAcc, DType: img.DType, SRAMBase: uint32(e.base[src]),
		DRAMBase: uint32(img.Base + int(ent.r0*int64(img.Stride)+ent.c0)*img.Bytes),
		YSize:    uint32(ent.r1 - ent.r0), XSize: uint32(ent.c1 - ent.c0), XStride: uint32(img.Stride)})
	return nil
}

// AttrVirtualThreads annotates a cache stage or an accumulator reset
// (decompose_reduction's init) with its buffer's virtual threads (VTA's):
// the scratchpad is split into that many equal parts and the buffer's
// successive stagings (resets) take them in turn, so a DMA can fill one
// part while the matrix unit reads another. Unset: one part.
const AttrVirtualThreads = "npu.virtual_threads"

// virtualThreads is block b's AttrVirtualThreads, 1 when unset.
func virtualThreads(b *tir.Block) int {
	if v, ok := b.Annotations[AttrVirtualThreads].(tir.IntAttr); ok && v > 1 {
		return int(v)
	}
	return 1
}

// rotate places buffer b's n entries in the next of its memory's parts
// parts (its stagings so far modulo parts) and returns the first.
func (e *tirEmitter) rotate(b *tir.Buffer, n int64, mem isa.Memory, parts int) (int64, error) {
	part := int64(e.staged[b] % parts)
	e.staged[b]++
	stride := int64(e.cfg.Depth(mem, e.prog.Datapath) / parts)
	return e.placeAt(b, n, part*stride, stride)
}

// placeAt places buffer b's n entries in the part of stride entries from
// entry part: at its offset there (the first placement's, after the
// scope's other buffers; its size the most it may hold).
func (e *tirEmitter) placeAt(b *tir.Buffer, n, part, stride int64) (int64, error) {
	off, ok := e.off[b]
	if !ok {
		off = e.next[b.Scope]
		e.off[b], e.size[b], e.next[b.Scope] = off, n, off+n
	}
	if n > e.size[b] {
		return 0, fmt.Errorf("%%%s needs %d entries, more than the %d of its first region", b.Name, n, e.size[b])
	}
	if off+n > stride {
		return 0, fmt.Errorf("%%%s's %d entries at %d overflow its part of %d entries", b.Name, n, off, stride)
	}
	e.base[b] = part + off
	return part + off, nil
}

// block emits a reset element or a tensorized block's micro-op.
func (e *tirEmitter) block(r *tir.BlockRealize) error {
	b := r.Block
	ok, err := e.bind(r)
	if err != nil || !ok {
		return err
	}
	if _, tensorized := b.Annotations[schedule.AttrTensorized]; tensorized {
		return e.gemm(r)
	}
	if st, isStore := b.Body.(*tir.BufferStore); isStore && st.Buffer.Scope == ScopeAcc && len(b.Reads) == 0 && isZeroConst(st.Value) {
		if !e.reset || e.resets != nil && e.resets[0].buf != st.Buffer {
			if err := e.flush(); err != nil {
				return err
			}
			e.reset = true
		}
		i, j, err := e.point(st.Buffer, st.Indices)
		if err != nil {
			return fmt.Errorf("block %q: %v", b.Name, err)
		}
		e.resets, e.rparts = append(e.resets, accPoint{st.Buffer, i, j}), virtualThreads(b)
		return nil
	}
	if e.isEpilogue(b) {
		return e.epilogue(r)
	}
	return fmt.Errorf("block %q is not a cache stage, an accumulator reset, a block tensorized with the matrix unit's intrinsic or an epilogue on the accumulator", b.Name)
}

func isZeroConst(x tir.Expr) bool {
	switch c := x.(type) {
	case *tir.IntImm:
		return c.Value == 0
	case *tir.FloatImm:
		return c.Value == 0
	}
	return false
}

// gemm adds the micro-op of a tensorized block's instance to the GEMM
// run: the entries its implementation's first iteration accesses (the
// accumulator, input and weight blocks' origins).
func (e *tirEmitter) gemm(r *tir.BlockRealize) error {
	if e.reset || e.alu != nil {
		if err := e.flush(); err != nil {
			return err
		}
	}
	var u isa.Uop
	var bad error
	origin := func(b *tir.Buffer, idx []tir.Expr) {
		if bad != nil {
			return
		}
		if len(idx) != 2 {
			bad = fmt.Errorf("block %q: an access of %%%s of rank %d (want 2)", r.Block.Name, b.Name, len(idx))
			return
		}
		i, ok1 := e.evalAtOrigin(idx[0])
		j, ok2 := e.evalAtOrigin(idx[1])
		if !ok1 || !ok2 {
			bad = fmt.Errorf("block %q: an access of %%%s the emitter cannot place", r.Block.Name, b.Name)
			return
		}
		entry, err := e.entry(b, i, j)
		if err != nil {
			bad = fmt.Errorf("block %q: %v", r.Block.Name, err)
			return
		}
		switch b.Scope {
		case ScopeInp:
			u.Inp = entry
		case ScopeWgt:
			u.Wgt = entry
		case ScopeAcc:
			u.Acc = entry
		default:
			bad = fmt.Errorf("block %q accesses %%%s outside the scratchpads", r.Block.Name, b.Name)
		}
	}
	tir.VisitStmt(r.Block.Body, func(st tir.Stmt) bool {
		switch x := st.(type) {
		case *tir.BufferStore:
			origin(x.Buffer, x.Indices)
			tir.VisitExpr(x.Value, func(v tir.Expr) bool {
				if l, ok := v.(*tir.BufferLoad); ok {
					origin(l.Buffer, l.Indices)
				}
				return true
			})
		case *tir.BlockRealize:
			for i, iv := range x.Block.IterVars {
				if v, ok := e.evalAtOrigin(x.Values[i]); ok {
					e.env.set(iv.Var, v)
				}
			}
		}
		return bad == nil
	})
	if bad != nil {
		return bad
	}
	e.run = append(e.run, u)
	return nil
}

// evalAtOrigin evaluates x with the loops not bound (the intrinsic
// implementation's) at 0.
func (e *tirEmitter) evalAtOrigin(x tir.Expr) (int64, bool) { return e.env.eval(x, true) }

// exprList is idx as text, comma-separated.
func exprList(idx []tir.Expr) string {
	parts := make([]string, len(idx))
	for i, x := range idx {
		parts[i] = tir.ExprString(x)
	}
	return strings.Join(parts, ", ")
}

// entry is the scratchpad entry whose first element is (i, j) of
// buffer b.
func (e *tirEmitter) entry(b *tir.Buffer, i, j int64) (uint32, error) {
	at, ri, ci, err := e.locate(b, i, j)
	if err == nil && (ri != 0 || ci != 0) {
		err = fmt.Errorf("%%%s[%d, %d] is not the first element of an entry", b.Name, i, j)
	}
	return at, err
}

// locate is the scratchpad entry holding element (i, j) of buffer b and
// the element's row and column in it.
func (e *tirEmitter) locate(b *tir.Buffer, i, j int64) (at uint32, ri, ci int64, err error) {
	rows, cols := e.entryShape(b.Scope)
	box, ok := e.held[b]
	if !ok || i < box.r0 || i >= box.r1 || j < box.c0 || j >= box.c1 {
		return 0, 0, 0, fmt.Errorf("%%%s[%d, %d] is not in its scratchpad (held: %v)", b.Name, i, j, box)
	}
	ent, err := box.entries(rows, cols)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("%%%s: %v", b.Name, err)
	}
	n := (i-box.r0)/rows*(ent.c1-ent.c0) + (j-box.c0)/cols
	return uint32(e.base[b] + n), (i - box.r0) % rows, (j - box.c0) % cols, nil
}

// entryShape is the rows × columns of elements of an entry of scope's
// scratchpad.
func (e *tirEmitter) entryShape(scope string) (rows, cols int64) {
	switch scope {
	case ScopeWgt:
		return int64(e.cfg.BlockOut), int64(e.cfg.BlockIn)
	case ScopeAcc:
		return int64(e.cfg.Batch), int64(e.cfg.BlockOut)
	}
	return int64(e.cfg.Batch), int64(e.cfg.BlockIn)
}

// flush emits the gathered run: a reset of the accumulator entries its
// elements cover (they become the accumulator's region), or a GEMM over
// the run's micro-ops.
func (e *tirEmitter) flush() error {
	defer func() { e.run, e.resets, e.reset, e.alu = nil, nil, false, nil }()
	if e.reset && len(e.resets) > 0 {
		box := region{r0: 1 << 62, c0: 1 << 62}
		for _, p := range e.resets {
			box = box.grow(p.i, p.j)
		}
		if int64(len(e.resets)) != box.size() {
			return fmt.Errorf("a reset of %d elements of %%%s, not the whole box [%d, %d) × [%d, %d)", len(e.resets), e.resets[0].buf.Name, box.r0, box.r1, box.c0, box.c1)
		}
		acc := e.resets[0].buf
		ent, err := box.entries(int64(e.cfg.Batch), int64(e.cfg.BlockOut))
		if err != nil {
			return fmt.Errorf("a reset of %%%s: %v", acc.Name, err)
		}
		at, err := e.rotate(acc, ent.size(), isa.MemAcc, e.rparts)
		if err != nil {
			return err
		}
		e.held[acc], e.acc, e.accAt = box, acc, at-e.off[acc]
		for n := uint32(0); n < uint32(ent.size()); n++ {
			e.run = append(e.run, isa.Uop{Acc: uint32(at) + n})
		}
	}
	if e.alu != nil {
		return e.flushALU()
	}
	if len(e.run) > 0 {
		in := loopRun(e.run)
		at := e.uopRange(e.run[:in.UopEnd])
		in.Reset, in.UopBegin, in.UopEnd = e.reset, uint32(at), uint32(at)+in.UopEnd
		e.prog.Insts = append(e.prog.Insts, in)
	}
	return nil
}

// loopRun is the GEMM that runs the micro-op list run with the fewest
// micro-ops: its two loop levels (IterOut × IterIn repetitions of the
// first UopEnd micro-ops, each entry advanced by the levels' factors:
// ISA.md's micro-op loop nest), found by trying every factorization of
// the run's length. The instruction's UopBegin is left 0.
func loopRun(run []isa.Uop) isa.Inst {
	n := len(run)
	best := isa.Inst{Op: isa.OpGEMM, IterOut: 1, IterIn: 1, UopEnd: uint32(n)}
	for out := 1; out <= n; out++ {
		for in := 1; out*in <= n; in++ {
			l := n / (out * in)
			if out*in*l != n || uint32(l) >= best.UopEnd {
				continue
			}
			if g, ok := loopFactors(run, out, in, l); ok {
				best = g
			}
		}
	}
	return best
}

// loopFactors is the GEMM repeating run's first l micro-ops out × in
// times, when the run is that affine repetition.
func loopFactors(run []isa.Uop, out, in, l int) (isa.Inst, bool) {
	step := func(at int) (d [3]int64) {
		if at >= len(run) {
			return d
		}
		a, b := run[at], run[0]
		return [3]int64{int64(a.Acc) - int64(b.Acc), int64(a.Inp) - int64(b.Inp), int64(a.Wgt) - int64(b.Wgt)}
	}
	fo, fi := step(in*l), step(l)
	for _, f := range append(fo[:], fi[:]...) {
		if f < 0 {
			return isa.Inst{}, false
		}
	}
	for o := 0; o < out; o++ {
		for i := 0; i < in; i++ {
			for k := 0; k < l; k++ {
				u, base := run[(o*in+i)*l+k], run[k]
				if int64(u.Acc) != int64(base.Acc)+int64(o)*fo[0]+int64(i)*fi[0] ||
					int64(u.Inp) != int64(base.Inp)+int64(o)*fo[1]+int64(i)*fi[1] ||
					int64(u.Wgt) != int64(base.Wgt)+int64(o)*fo[2]+int64(i)*fi[2] {
					return isa.Inst{}, false
				}
			}
		}
	}
	return isa.Inst{Op: isa.OpGEMM, IterOut: uint32(out), IterIn: uint32(in), UopEnd: uint32(l),
		DstFactor: [2]uint32{uint32(fo[0]), uint32(fi[0])}, SrcFactor: [2]uint32{uint32(fo[1]), uint32(fi[1])},
		WgtFactor: [2]uint32{uint32(fo[2]), uint32(fi[2])}}, true
}

// uopRange is the first micro-op of a copy of run in the program's
// micro-ops, appended when it is not there yet.
func (e *tirEmitter) uopRange(run []isa.Uop) int {
	var key strings.Builder
	for _, u := range run {
		key.WriteString(strconv.Itoa(int(u.Acc)) + "," + strconv.Itoa(int(u.Inp)) + "," + strconv.Itoa(int(u.Wgt)) + ";")
	}
	if at, ok := e.uopAt[key.String()]; ok {
		return at
	}
	at := len(e.prog.Uops)
	e.prog.Uops = append(e.prog.Uops, run...)
	e.uopAt[key.String()] = at
	return at
}

// sameElement reports whether the scratchpad index idx and the
// parameter's pidx (clamps removed) name the same element, pidx swapped
// when swap is set.
func sameElement(idx, pidx []tir.Expr, swap bool) bool {
	if len(idx) == 1 && len(pidx) == 1 {
		return tir.Equal(idx[0], tir.Unclamped(pidx[0]))
	}
	if len(idx) != 2 || len(pidx) != 2 {
		return false
	}
	a, b := tir.Unclamped(pidx[0]), tir.Unclamped(pidx[1])
	if swap {
		a, b = b, a
	}
	return tir.Equal(idx[0], a) && tir.Equal(idx[1], b)
}

// stageView is a gathered stage's check against its image's table: the
// parameter's shape, its index and the stage's guards, compiled once.
type stageView struct {
	img    tirImage
	param  *tir.Buffer
	shape  []int64
	pidx   []tir.IntFn
	guards []tir.IntFn
}

func (e *tirEmitter) newStageView(img tirImage, param *tir.Buffer, pidx, guards []tir.Expr) (*stageView, error) {
	shape, ok := param.ConstShape()
	if !ok || len(shape) != len(pidx) {
		return nil, fmt.Errorf("%%%s has no constant shape", param.Name)
	}
	v := &stageView{img: img, param: param, shape: shape}
	for _, x := range pidx {
		v.pidx = append(v.pidx, e.env.fn(x))
	}
	for _, g := range guards {
		v.guards = append(v.guards, e.env.fn(g))
	}
	return v, nil
}

// check checks that the staged element (i, j), param[pidx] where all
// guards hold and zero elsewhere, is the one the image's table puts
// there.
func (v *stageView) check(b *bindings, i, j int64) error {
	want := int64(-1)
	if at := i*int64(v.img.ViewCols) + j; j < int64(v.img.ViewCols) && at < int64(len(v.img.View)) {
		want = int64(v.img.View[at])
	}
	got := int64(-1)
	on := true
	for _, g := range v.guards {
		c, ok := g(b.vals, b.known)
		on = on && ok && c != 0
	}
	if on {
		got = 0
		for d, f := range v.pidx {
			x, ok := f(b.vals, b.known)
			if !ok {
				return fmt.Errorf("an index of %%%s is not known", v.param.Name)
			}
			got = got*v.shape[d] + x
		}
	}
	if got != want {
		return fmt.Errorf("[%d, %d] is %%%s's element %d, the image holds %d there", i, j, v.param.Name, got, want)
	}
	return nil
}
