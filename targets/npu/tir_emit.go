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
// form the tests' tileBlock builds with standard primitives — and emits
// its program by walking the function with the loop variables bound:
//
//   - a cache stage copying a kernel parameter into npu.inp or npu.wgt
//     (the value a load of the parameter, possibly clamped and guarded
//     by a select: the padding the DRAM image holds) is one LOAD of the
//     blocks its instance writes, from the parameter's DRAM image; the
//     scratchpad then holds that region (one part: no virtual threads);
//   - a block writing zero into npu.acc (decompose_reduction's init) is
//     a GEMM reset of the accumulator entries one run of its instances
//     writes, which become the accumulator's region;
//   - a block tensorized with the matrix unit's intrinsic is a micro-op
//     (its accumulator, input and weight entries, from its regions'
//     origins); consecutive ones form one GEMM over their micro-ops;
//   - a copy from npu.acc into a parameter is the STORE of the
//     accumulator's region.
//
// Other blocks (epilogues on the accumulator, host work) are refused. A
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
type tirImage struct {
	Mem                isa.Memory
	DType              isa.DType
	Base, Bytes        int
	Rows, Cols, Stride int
	Swap               bool
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
	env    map[*tir.Var]int64
	held   map[*tir.Buffer]region // a scratchpad buffer's region now in its scratchpad
	run    []isa.Uop              // the GEMM or reset run being gathered
	reset  bool                   // the run is a reset
	resets []accPoint             // the reset run's elements
	uopAt  map[string]int
}

// emitTensorIR emits f's program on datapath dp; images maps f's
// parameter names to their DRAM images. Errors name the block or stage
// the emitter cannot map.
func emitTensorIR(cfg isa.Config, dp isa.Datapath, f *tir.PrimFunc, images map[string]tirImage) (*isa.Program, error) {
	e := &tirEmitter{cfg: cfg, prog: &isa.Program{Datapath: dp}, images: map[*tir.Buffer]tirImage{},
		env: map[*tir.Var]int64{}, held: map[*tir.Buffer]region{}, uopAt: map[string]int{}}
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
		e.env[x.Var] = i
		if err := body(); err != nil {
			return err
		}
	}
	delete(e.env, x.Var)
	return nil
}

func (e *tirEmitter) eval(x tir.Expr) (int64, bool) {
	return tir.EvalInt(x, func(v *tir.Var) (int64, bool) {
		c, ok := e.env[v]
		return c, ok
	})
}

// bind binds r's iteration variables and reports whether its predicate
// holds.
func (e *tirEmitter) bind(r *tir.BlockRealize) (bool, error) {
	for i, iv := range r.Block.IterVars {
		v, ok := e.eval(r.Values[i])
		if !ok {
			return false, fmt.Errorf("block %q: binding %s is not known", r.Block.Name, tir.ExprString(r.Values[i]))
		}
		e.env[iv.Var] = v
	}
	if r.Predicate == nil {
		return true, nil
	}
	p, ok := e.eval(r.Predicate)
	return ok && p != 0, nil
}

// point is the element a 2-D access idx names.
func (e *tirEmitter) point(idx []tir.Expr) (i, j int64, err error) {
	if len(idx) != 2 {
		return 0, 0, fmt.Errorf("a scratchpad access of rank %d (want 2)", len(idx))
	}
	i, ok1 := e.eval(idx[0])
	j, ok2 := e.eval(idx[1])
	if !ok1 || !ok2 {
		return 0, 0, fmt.Errorf("index %s, %s is not known", tir.ExprString(idx[0]), tir.ExprString(idx[1]))
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

// copyOf is a copy block's store and the parameter load its value is
// (unclamped; under a padding select), or nil.
func copyOf(b *tir.Block) (*tir.BufferStore, *tir.BufferLoad) {
	st, ok := b.Body.(*tir.BufferStore)
	if !ok {
		return nil, nil
	}
	v := st.Value
	if sel, ok := v.(*tir.Select); ok {
		v = sel.T
	}
	l, _ := v.(*tir.BufferLoad)
	return st, l
}

// isStage reports whether r copies a parameter with an image into a
// scratchpad, or the accumulator into one.
func (e *tirEmitter) isStage(r *tir.BlockRealize) bool {
	st, l := copyOf(r.Block)
	if st == nil || l == nil {
		return false
	}
	_, toImage := e.images[st.Buffer]
	_, fromImage := e.images[l.Buffer]
	return fromImage && (st.Buffer.Scope == ScopeInp || st.Buffer.Scope == ScopeWgt) || toImage && l.Buffer.Scope == ScopeAcc
}

// stage emits the DMA of one instance of the copy nest x around r.
func (e *tirEmitter) stage(x *tir.For, r *tir.BlockRealize) error {
	st, l := copyOf(r.Block)
	scratch, idx := st.Buffer, st.Indices // the scratchpad side and its index
	param, pidx := l.Buffer, l.Indices
	if l.Buffer.Scope == ScopeAcc {
		scratch, idx, param, pidx = l.Buffer, l.Indices, st.Buffer, st.Indices
	}
	if !sameElement(idx, pidx, e.images[param].Swap) {
		return fmt.Errorf("stage %q does not copy %%%s element for element into %%%s (the image's layout)", r.Block.Name, param.Name, scratch.Name)
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
		i, j, err := e.point(idx)
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
		return e.store(r.Block.Name, st.Buffer, box)
	}
	return e.load(r.Block.Name, l.Buffer, scratch, box)
}

// load emits the LOAD of box of scratchpad buffer scratch from param's
// image; the buffer then holds box.
func (e *tirEmitter) load(name string, param, scratch *tir.Buffer, box region) error {
	img := e.images[param]
	ent, err := box.entries(int64(img.Rows), int64(img.Cols))
	if err != nil {
		return fmt.Errorf("stage %q: %v", name, err)
	}
	e.held[scratch] = box
	e.prog.Insts = append(e.prog.Insts, isa.Inst{Op: isa.OpLoad, Mem: img.Mem, DType: img.DType,
		DRAMBase: uint32(img.Base + int(ent.r0*int64(img.Stride)+ent.c0)*img.Bytes),
		YSize:    uint32(ent.r1 - ent.r0), XSize: uint32(ent.c1 - ent.c0), XStride: uint32(img.Stride)})
	return nil
}

// store emits the STORE of the accumulator's region (box, which must be
// the whole region it holds) into param's image.
func (e *tirEmitter) store(name string, param *tir.Buffer, box region) error {
	img := e.images[param]
	acc, err := e.accRegion(name)
	if err != nil {
		return err
	}
	ent, err := box.entries(int64(img.Rows), int64(img.Cols))
	if err != nil {
		return fmt.Errorf("stage %q: %v", name, err)
	}
	held, _ := acc.entries(int64(img.Rows), int64(img.Cols))
	if ent != held {
		return fmt.Errorf("stage %q stores part of the accumulator's region (entries %v of %v)", name, ent, held)
	}
	e.prog.Insts = append(e.prog.Insts, isa.Inst{Op: isa.OpStore, Mem: isa.MemAcc, DType: img.DType,
		DRAMBase: uint32(img.Base + int(ent.r0*int64(img.Stride)+ent.c0)*img.Bytes),
		YSize:    uint32(ent.r1 - ent.r0), XSize: uint32(ent.c1 - ent.c0), XStride: uint32(img.Stride)})
	return nil
}

// accRegion is the accumulator's region (the last reset's).
func (e *tirEmitter) accRegion(name string) (region, error) {
	for b, r := range e.held {
		if b.Scope == ScopeAcc {
			return r, nil
		}
	}
	return region{}, fmt.Errorf("block %q uses the accumulator before any reset", name)
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
		if !e.reset {
			if err := e.flush(); err != nil {
				return err
			}
			e.reset = true
		}
		i, j, err := e.point(st.Indices)
		if err != nil {
			return fmt.Errorf("block %q: %v", b.Name, err)
		}
		e.resets = append(e.resets, accPoint{st.Buffer, i, j})
		return nil
	}
	return fmt.Errorf("block %q is not a cache stage, an accumulator reset or a block tensorized with the matrix unit's intrinsic", b.Name)
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

// gemm adds the micro-op of a tensorized block's instance to the GEMM run.
func (e *tirEmitter) gemm(r *tir.BlockRealize) error {
	if e.reset {
		if err := e.flush(); err != nil {
			return err
		}
	}
	var u isa.Uop
	for _, rg := range append(append([]tir.BufferRegion(nil), r.Block.Reads...), r.Block.Writes...) {
		mins := []tir.Expr{rg.Region[0].Min, rg.Region[1].Min}
		i, j, err := e.point(mins)
		if err != nil {
			return fmt.Errorf("block %q: %v", r.Block.Name, err)
		}
		entry, err := e.entry(rg.Buffer, i, j)
		if err != nil {
			return fmt.Errorf("block %q: %v", r.Block.Name, err)
		}
		switch rg.Buffer.Scope {
		case ScopeInp:
			u.Inp = entry
		case ScopeWgt:
			u.Wgt = entry
		case ScopeAcc:
			u.Acc = entry
		default:
			return fmt.Errorf("block %q reads %%%s outside the scratchpads", r.Block.Name, rg.Buffer.Name)
		}
	}
	e.run = append(e.run, u)
	return nil
}

// entry is the scratchpad entry holding element (i, j) of buffer b.
func (e *tirEmitter) entry(b *tir.Buffer, i, j int64) (uint32, error) {
	rows, cols := int64(e.cfg.Batch), int64(e.cfg.BlockIn)
	switch b.Scope {
	case ScopeWgt:
		rows = int64(e.cfg.BlockOut)
	case ScopeAcc:
		cols = int64(e.cfg.BlockOut)
	}
	box, ok := e.held[b]
	if !ok || i < box.r0 || i >= box.r1 || j < box.c0 || j >= box.c1 {
		return 0, fmt.Errorf("%%%s[%d, %d] is not in its scratchpad (held: %v)", b.Name, i, j, box)
	}
	ent, err := box.entries(rows, cols)
	if err != nil || (i-box.r0)%rows != 0 || (j-box.c0)%cols != 0 {
		return 0, fmt.Errorf("%%%s[%d, %d] is not the origin of a %d×%d block", b.Name, i, j, rows, cols)
	}
	return uint32((i-box.r0)/rows*(ent.c1-ent.c0) + (j-box.c0)/cols), nil
}

// flush emits the gathered run: a reset of the accumulator entries its
// elements cover (they become the accumulator's region), or a GEMM over
// the run's micro-ops.
func (e *tirEmitter) flush() error {
	defer func() { e.run, e.resets, e.reset = nil, nil, false }()
	if e.reset && len(e.resets) > 0 {
		box := region{r0: 1 << 62, c0: 1 << 62}
		for _, p := range e.resets {
			box = box.grow(p.i, p.j)
		}
		if int64(len(e.resets)) != box.size() {
			return fmt.Errorf("a reset of %d elements of %%%s, not the whole box [%d, %d) × [%d, %d)", len(e.resets), e.resets[0].buf.Name, box.r0, box.r1, box.c0, box.c1)
		}
		ent, err := box.entries(int64(e.cfg.Batch), int64(e.cfg.BlockOut))
		if err != nil {
			return fmt.Errorf("a reset of %%%s: %v", e.resets[0].buf.Name, err)
		}
		e.held[e.resets[0].buf] = box
		for n := uint32(0); n < uint32(ent.size()); n++ {
			e.run = append(e.run, isa.Uop{Acc: n})
		}
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
	if len(idx) != 2 || len(pidx) != 2 {
		return false
	}
	a, b := tir.Unclamped(pidx[0]), tir.Unclamped(pidx[1])
	if swap {
		a, b = b, a
	}
	return tir.Equal(idx[0], a) && tir.Equal(idx[1], b)
}
