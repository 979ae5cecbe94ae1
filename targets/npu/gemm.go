package npu

import (
	"fmt"
	"slices"

	"github.com/tessera-ml/tessera/targets/npu/isa"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// gemmKernel is a kernel the matrix unit runs: a contraction block
//
//	C[s...] = C[s...] + X[...] · W[...]   (init C = 0)
//
// whose spatial iteration variables split into those only X reads (M,
// flattened in block order) and those only W reads (N), over reduce
// variables both read (K) — dense layers, matmuls, 1×1 convolutions and
// anything an einsum of that shape describes — optionally followed by one
// elementwise epilogue block over C (bias, residual, relu, clip, scale)
// that writes the output. Index expressions are arbitrary: the operands'
// element positions are tabulated (gather tables), so reshapes and
// flattens fused into the kernel cost nothing.
type gemmKernel struct {
	M, N, K int
	// X, W and Out are parameter indices; XIdx[m·K+k], WIdx[n·K+k] and
	// OutIdx[m·N+n] are element offsets in those parameters (row-major).
	X, W, Out  int
	XIdx, WIdx []int32
	OutIdx     []int32
	Epilogue   []aluStep
	Block      string // the contraction block's name (schedule annotations)
	// GroupN > 0 marks a block-diagonal product (grouped): GroupN rows of
	// N per (super-)group, GroupK columns of K' per (super-)group.
	GroupN, GroupK int
	// RowW marks a product whose W depends on the row (a depthwise
	// convolution: row m is channel m's taps, W its own image patches):
	// WIdx is [M][N][K] instead of [N][K], and the GEMM steps the weight
	// entry with the row as well as the N block.
	RowW        bool
	ParamShapes [][]int64
	ParamRoles  []tir.Role
	// Win is set when X is a convolution's image that the window layout
	// can fetch (a Tiling with Window set uses it).
	Win *Window
	// DP is the datapath: bf16 for an f32 contraction, int8 for one of
	// 8-bit operands accumulating in i32 (ISA.md, "Datapaths").
	DP isa.Datapath
	// XType and WType are the operands' DRAM element types (bf16; i8 or
	// u8 in the int8 datapath); OutType is the STORE's (f32; i32, i8 or
	// u8). Widen marks an i64 output: the NPU stores the i32 value and
	// the runtime sign-extends it (the kernel's cast<i64> is exact).
	XType, WType, OutType isa.DType
	Widen                 bool
}

// operandKind is where an epilogue step's second operand comes from.
type operandKind uint8

const (
	opConst  operandKind = iota // a scalar constant
	opVector                    // a parameter indexed by N only (bias)
	opTile                      // a parameter indexed by M and N (residual)
	opRow                       // a parameter indexed by M only (a depthwise convolution's bias)
)

// aluStep is one epilogue operation: acc = op(acc, operand).
type aluStep struct {
	Op    string // "add", "sub", "mul", "max", "min"; int8: also "mulq", "shr"
	Kind  operandKind
	Value float64 // opConst (an f32 value, or an int32 one in the int8 datapath)
	Param int     // opVector, opTile, opRow
	Idx   []int32 // opVector: [N]; opTile: [M·N]; opRow: [M] element offsets
	// Shift marks a requantization's shift (after mulq): the runtime
	// refuses values below 1, for which mulq then shr is not exact.
	Shift bool
	// Scale, when not 0, multiplies a loaded operand (vector, tile, row)
	// before op — fold-qdq's integer residual add weighs its addend by
	// its scale, acc + b·kb. An int32 value in the int8 datapath.
	Scale float64
	// Elem is a loaded operand's DRAM element type: the parameter's own
	// (i8, u8 or i32; LOAD acc widens 8-bit values) in the int8 datapath,
	// f32 in bf16.
	Elem isa.DType
}

// notMappable is why a kernel runs on the host.
type notMappable struct{ reason string }

func (e *notMappable) Error() string { return e.reason }

func refuse(format string, args ...any) error { return &notMappable{fmt.Sprintf(format, args...)} }

// analyzeGEMM recognizes f as a gemmKernel. Errors: a *notMappable saying
// why not.
func analyzeGEMM(cfg isa.Config, f *tir.PrimFunc) (*gemmKernel, error) {
	blocks, err := realizedBlocks(f.Body)
	if err != nil {
		return nil, err
	}
	if len(blocks) == 0 || len(blocks) > 2 {
		return nil, refuse("%d blocks (the matrix unit takes a contraction and at most one epilogue)", len(blocks))
	}
	g := &gemmKernel{Block: blocks[0].Name}
	for _, p := range f.Params {
		if p.Buffer == nil {
			return nil, refuse("scalar parameter %%%s", p.Name())
		}
		shape, ok := p.Buffer.ConstShape()
		if !ok || !npuElem(p.Buffer.DType) {
			return nil, refuse("parameter %%%s is not a constant-shape buffer of f32, i8, ui8, i32 or i64", p.Name())
		}
		g.ParamShapes = append(g.ParamShapes, shape)
		g.ParamRoles = append(g.ParamRoles, p.Role)
	}
	c, err := g.contraction(cfg, f, blocks[0])
	if err != nil {
		return nil, err
	}
	if err := g.datapath(f, c.store.buf); err != nil {
		return nil, err
	}
	if len(blocks) == 1 {
		if c.store.out < 0 {
			return nil, refuse("the contraction writes a local buffer nothing reads")
		}
		g.Out = c.store.out
		g.OutIdx = c.tabulateOut(g, c.store)
		return g, g.outType(f, nil)
	}
	return g, g.epilogueOf(f, blocks[1], c)
}

// storeNote is the partition's note on the output's STORE type: the
// datapath and the type when they are not bf16's f32.
func (g *gemmKernel) storeNote() string {
	switch {
	case g.DP == isa.DPInt8:
		return fmt.Sprintf(", int8, stores %s", g.OutType)
	case g.OutType == isa.DTBF16:
		return ", stores bf16"
	}
	return ""
}

// npuElem reports whether a parameter of element type t can live in the
// NPU's DRAM image: f32 (bf16 datapath), i8/ui8 operands, i32 epilogue
// operands and results, i64 results (stored as i32, see Widen).
func npuElem(t tir.DType) bool {
	switch t {
	case tir.DF32, tir.DI8, tir.DUI8, tir.DI32, tir.DI64:
		return true
	}
	return false
}

// datapath picks g's datapath from its operands' element types: f32 for
// bf16, 8-bit (i8 or ui8, the loads widened to i32) for int8. The int8
// datapath has no float ALU, so an f32 parameter (a dequantizing
// epilogue) keeps the kernel on the host.
func (g *gemmKernel) datapath(f *tir.PrimFunc, acc *tir.Buffer) error {
	xt, wt := f.Params[g.X].Buffer.DType, f.Params[g.W].Buffer.DType
	if xt == tir.DF32 && wt == tir.DF32 && acc.DType == tir.DF32 {
		g.DP, g.XType, g.WType = isa.DPBF16, isa.DTBF16, isa.DTBF16
		for _, p := range f.Params {
			if p.Buffer.DType != tir.DF32 {
				return refuse("parameter %%%s is %s in an f32 contraction", p.Name(), p.Buffer.DType)
			}
		}
		return nil
	}
	eight := func(t tir.DType) (isa.DType, bool) {
		switch t {
		case tir.DI8:
			return isa.DTInt8, true
		case tir.DUI8:
			return isa.DTUInt8, true
		}
		return 0, false
	}
	x, okX := eight(xt)
	w, okW := eight(wt)
	if !okX || !okW || acc.DType != tir.DI32 {
		return refuse("the contraction multiplies %s by %s into %s (the matrix unit takes f32 into f32 as bf16, or 8-bit integers into i32)", xt, wt, acc.DType)
	}
	g.DP, g.XType, g.WType = isa.DPInt8, x, w
	for _, p := range f.Params {
		if p.Buffer.DType == tir.DF32 {
			return refuse("parameter %%%s is f32 in an int8 contraction (the int8 datapath has no float ALU; a dequantizing epilogue runs on the host)", p.Name())
		}
	}
	return nil
}

// outType sets the output's STORE type from the output parameter's
// element type, and Widen for an i64 output, whose value cast is the
// epilogue's outermost operation (cast nil: the contraction's own
// result).
func (g *gemmKernel) outType(f *tir.PrimFunc, cast *tir.Cast) error {
	t := f.Params[g.Out].Buffer.DType
	switch {
	case g.DP == isa.DPBF16:
		g.OutType = isa.DTF32
	case t == tir.DI32:
		g.OutType = isa.DTInt32
	case t == tir.DI64 && cast != nil:
		g.OutType, g.Widen = isa.DTInt32, true
	case t == tir.DI8 && cast != nil:
		g.OutType = isa.DTInt8
	case t == tir.DUI8 && cast != nil:
		g.OutType = isa.DTUInt8
	default:
		return refuse("the int8 kernel writes %s", t)
	}
	return nil
}

// realizedBlocks lists the blocks of body in order, refusing predicates,
// non-serial loops and anything but loops, allocations and blocks.
func realizedBlocks(body tir.Stmt) ([]*tir.Block, error) {
	var out []*tir.Block
	var walk func(s tir.Stmt) error
	walk = func(s tir.Stmt) error {
		switch x := s.(type) {
		case *tir.SeqStmt:
			for _, t := range x.Stmts {
				if err := walk(t); err != nil {
					return err
				}
			}
		case *tir.Allocate:
			return walk(x.Body)
		case *tir.For:
			if x.Kind != tir.Serial {
				return refuse("a scheduled loop %%%s (the NPU reads the computation, not a CPU schedule)", x.Var.Name)
			}
			return walk(x.Body)
		case *tir.BlockRealize:
			if x.Predicate != nil {
				return refuse("block %q has a predicate", x.Block.Name)
			}
			for i, v := range x.Values {
				if _, ok := v.(*tir.Var); !ok {
					return refuse("block %q binds %%%s to an expression", x.Block.Name, x.Block.IterVars[i].Var.Name)
				}
			}
			if len(x.Block.Allocs) > 0 {
				return refuse("block %q allocates buffers", x.Block.Name)
			}
			out = append(out, x.Block)
		default:
			return refuse("%T statement", s)
		}
		return nil
	}
	return out, walk(body)
}

// contractionInfo is what the epilogue needs of the contraction block.
type contractionInfo struct {
	spatial []*tir.IterVar // in block order
	mVars   []*tir.IterVar
	nVars   []*tir.IterVar
	store   access // C
}

// access is a buffer access: the parameter index (-1: a local buffer) and
// its index expressions.
type access struct {
	buf *tir.Buffer
	out int
	idx []tir.Expr
}

func paramIndex(f *tir.PrimFunc, b *tir.Buffer) int {
	for i, p := range f.Params {
		if p.Buffer == b {
			return i
		}
	}
	return -1
}

func (g *gemmKernel) contraction(cfg isa.Config, f *tir.PrimFunc, b *tir.Block) (*contractionInfo, error) {
	st, ok := b.Body.(*tir.BufferStore)
	if !ok {
		return nil, refuse("block %q is not a single store", b.Name)
	}
	add, ok := st.Value.(*tir.Binary)
	if !ok || add.Op != tir.OpAdd {
		return nil, refuse("block %q is not an accumulation", b.Name)
	}
	self, prod := add.A, add.B
	if !isLoadOf(self, st) {
		self, prod = prod, self
	}
	mul, ok := prod.(*tir.Binary)
	if !isLoadOf(self, st) || !ok || mul.Op != tir.OpMul {
		return nil, refuse("block %q is not C = C + X·W", b.Name)
	}
	if !isZeroInit(b.Init, st) {
		return nil, refuse("block %q has no zero initialization", b.Name)
	}
	la, okA := asGather(mul.A)
	lb, okB := asGather(mul.B)
	if !okA || !okB {
		return nil, refuse("block %q multiplies expressions, not two loads", b.Name)
	}
	for _, ix := range [][]tir.Expr{la.exprs(), lb.exprs(), st.Indices} {
		if err := checkIndices(ix); err != nil {
			return nil, err
		}
	}
	var spatial, reduce, allSpatial []*tir.IterVar
	reduces := false // a reduce variable, perhaps of extent 1 (a product over one element)
	for _, iv := range b.IterVars {
		if iv.Dom.Min != nil && !isIntConst(iv.Dom.Min, 0) {
			return nil, refuse("iteration variable %%%s does not start at 0", iv.Var.Name)
		}
		if _, ok := iv.Dom.Extent.(*tir.IntImm); !ok {
			return nil, refuse("iteration variable %%%s has a symbolic extent", iv.Var.Name)
		}
		if iv.Kind == tir.Spatial {
			allSpatial = append(allSpatial, iv)
		} else {
			reduces = true
		}
		switch {
		case extent(iv) == 1: // always 0: indexes nothing that matters
		case iv.Kind == tir.Spatial:
			spatial = append(spatial, iv)
		default:
			reduce = append(reduce, iv)
		}
	}
	da, db := usedVars(la.exprs()), usedVars(lb.exprs())
	var sa, sb, shared []*tir.IterVar
	for _, iv := range spatial {
		switch {
		case da[iv.Var] && db[iv.Var]:
			shared = append(shared, iv)
		case da[iv.Var]:
			sa = append(sa, iv)
		case db[iv.Var]:
			sb = append(sb, iv)
		default:
			return nil, refuse("spatial variable %%%s indexes neither operand", iv.Var.Name)
		}
	}
	for _, iv := range reduce {
		if !da[iv.Var] || !db[iv.Var] {
			return nil, refuse("reduce variable %%%s indexes only one operand", iv.Var.Name)
		}
	}
	if !reduces {
		return nil, refuse("no reduction over both operands (not a matrix product)")
	}
	st0 := access{buf: st.Buffer, out: paramIndex(f, st.Buffer), idx: st.Indices}
	if len(shared) > 0 {
		return g.grouped(cfg, f, la, lb, sa, sb, shared, reduce, allSpatial, st0)
	}
	// W is the operand that makes less padded work on the matrix unit (M
	// rounds up to Batch, N to BlockOut); ties: the smaller spatial
	// volume, then the second operand.
	x, w, mv, nv := la, lb, sa, sb
	ka, kb := padded(volume(sa), cfg.Batch)*padded(volume(sb), cfg.BlockOut), padded(volume(sb), cfg.Batch)*padded(volume(sa), cfg.BlockOut)
	if kb < ka || (kb == ka && volume(sa) < volume(sb)) {
		x, w, mv, nv = lb, la, sb, sa
	}
	if win, wx, ww, order, nvars, ok := g.window(cfg, f, la, lb, sa, sb, reduce); ok {
		x, w, mv, nv = wx, ww, order, nvars
		g.Win = win
	}
	g.X, g.W = paramIndex(f, x.load.Buffer), paramIndex(f, w.load.Buffer)
	if g.X < 0 || g.W < 0 {
		return nil, refuse("an operand is a local buffer")
	}
	g.M, g.N, g.K = volume(mv), volume(nv), volume(reduce)
	g.XIdx = tabulate(x, g.ParamShapes[g.X], mv, reduce)
	g.WIdx = tabulate(w, g.ParamShapes[g.W], nv, reduce)
	c := &contractionInfo{spatial: allSpatial, mVars: mv, nVars: nv, store: st0}
	return c, nil
}

// window offers the window layout (Window) when one operand is a
// convolution's image (tried first, then the other) and the matrix unit
// takes one pixel per entry (Batch 1). It returns the window with its
// weight table, the image and weight operands and M's and N's variables.
func (g *gemmKernel) window(cfg isa.Config, f *tir.PrimFunc, la, lb gather, sa, sb, reduce []*tir.IterVar) (*Window, gather, gather, []*tir.IterVar, []*tir.IterVar, bool) {
	if cfg.Batch != 1 {
		return nil, gather{}, gather{}, nil, nil, false
	}
	for _, c := range []struct {
		x, w   gather
		mv, nv []*tir.IterVar
	}{{la, lb, sa, sb}, {lb, la, sb, sa}} {
		xi, wi := paramIndex(f, c.x.load.Buffer), paramIndex(f, c.w.load.Buffer)
		if xi < 0 || wi < 0 {
			continue
		}
		if win, order, kOrder, ok := windowOf(c.x, g.ParamShapes[xi], c.mv, reduce); ok {
			win.WgtIdx = tabulate(c.w, g.ParamShapes[wi], c.nv, kOrder)
			return win, c.x, c.w, order, c.nv, true
		}
	}
	return nil, gather{}, gather{}, nil, nil, false
}

// grouped maps a contraction whose operands share one spatial variable s
// (a grouped or depthwise convolution: s is the output channel, and the
// input channel depends on its group) onto the matrix unit as a
// block-diagonal product: K' = G groups × K (each padded to BlockIn), X'
// row m holds each group's K values, W' row n holds W's values in its
// group's columns and zeros elsewhere; the program visits, per N tile,
// only the K' blocks of the groups the tile covers. The group size is the
// largest divisor of s's extent for which X reads the same elements for
// every s of a group (checked on every point).
func (g *gemmKernel) grouped(cfg isa.Config, f *tir.PrimFunc, la, lb gather, sa, sb, shared, reduce, allSpatial []*tir.IterVar, st access) (*contractionInfo, error) {
	if len(shared) != 1 {
		return nil, refuse("both operands read %d spatial variables (a batched product)", len(shared))
	}
	s := shared[0]
	x, w, mv := la, lb, sa
	if len(sb) > 0 {
		x, w, mv = lb, la, sb
	}
	if len(sa) > 0 && len(sb) > 0 {
		return nil, refuse("both operands read spatial variable %%%s and others of their own (a batched product)", s.Var.Name)
	}
	g.X, g.W = paramIndex(f, x.load.Buffer), paramIndex(f, w.load.Buffer)
	if g.X < 0 || g.W < 0 {
		return nil, refuse("an operand is a local buffer")
	}
	S, M, K := extent(s), volume(mv), volume(reduce)
	full := tabulate(x, g.ParamShapes[g.X], append([]*tir.IterVar{s}, mv...), reduce) // [s][m][k]
	row := M * K
	gsize := 1
	for d := S - 1; d > 1; d-- {
		if S%d == 0 && sameWithinGroups(full, S, row, d) {
			gsize = d
			break
		}
	}
	if gsize == 1 && cfg.Batch == 1 && !sameWithinGroups(full, S, row, S) {
		return g.depthwise(f, x, w, s, mv, reduce, allSpatial, st, full)
	}
	// Super-groups of gs groups fill the matrix unit's BlockOut rows when
	// groups are smaller (depthwise: 16 channels per super-group, whose
	// weight entries are diagonal): K' per super-group is K × gs, ordered
	// (k, group within the super-group), padded to BlockIn.
	groups := S / gsize
	gs := 1
	if gsize < cfg.BlockOut && cfg.BlockOut%gsize == 0 {
		gs = cfg.BlockOut / gsize
	}
	supers, kp := ceilDiv(groups, gs), padded(K*gs, cfg.BlockIn)
	g.M, g.N, g.K, g.GroupN, g.GroupK = M, S, supers*kp, gsize*gs, kp
	g.XIdx = make([]int32, M*g.K)
	for i := range g.XIdx {
		g.XIdx[i] = -1
	}
	for m := 0; m < M; m++ {
		for gi := 0; gi < groups; gi++ {
			j, gl := gi/gs, gi%gs
			for k := 0; k < K; k++ {
				g.XIdx[m*g.K+j*kp+k*gs+gl] = full[(gi*gsize)*row+m*K+k]
			}
		}
	}
	wt := tabulate(w, g.ParamShapes[g.W], []*tir.IterVar{s}, reduce) // [n][k]
	g.WIdx = make([]int32, S*g.K)
	for i := range g.WIdx {
		g.WIdx[i] = -1
	}
	for n := 0; n < S; n++ {
		gi := n / gsize
		j, gl := gi/gs, gi%gs
		for k := 0; k < K; k++ {
			g.WIdx[n*g.K+j*kp+k*gs+gl] = wt[n*K+k]
		}
	}
	return &contractionInfo{spatial: allSpatial, mVars: mv, nVars: []*tir.IterVar{s}, store: st}, nil
}

// depthwise maps a contraction whose every channel s is a group of its
// own (a depthwise convolution) onto the matrix unit with per-row
// weights (RowW): row m = channel s holds its K taps (X := the weight
// operand), and its W is its own image patches, N = the other spatial
// points (W := the image, WIdx [S][N][K] from the gather table full).
// One micro-op step then multiplies BlockIn taps by BlockOut pixels of
// one channel — K/BlockIn of the matrix unit useful, where the
// block-diagonal form (grouped) uses one column in BlockIn. Needs Batch 1
// (the rows of an entry would share a weight entry).
func (g *gemmKernel) depthwise(f *tir.PrimFunc, x, w gather, s *tir.IterVar, mv, reduce, allSpatial []*tir.IterVar, st access, full []int32) (*contractionInfo, error) {
	g.X, g.W = paramIndex(f, w.load.Buffer), paramIndex(f, x.load.Buffer)
	g.M, g.N, g.K, g.RowW = extent(s), volume(mv), volume(reduce), true
	g.XIdx = tabulate(w, g.ParamShapes[g.X], []*tir.IterVar{s}, reduce) // [s][k]
	g.WIdx = full                                                       // [s][n][k]
	return &contractionInfo{spatial: allSpatial, mVars: []*tir.IterVar{s}, nVars: mv, store: st}, nil
}

// sameWithinGroups reports whether rows s and s − s mod d of table (S rows
// of n values) are equal for every s.
func sameWithinGroups(table []int32, S, n, d int) bool {
	for s := 0; s < S; s++ {
		if base := s - s%d; base != s && !slices.Equal(table[s*n:(s+1)*n], table[base*n:(base+1)*n]) {
			return false
		}
	}
	return true
}

// tabulateOut tabulates the output position of every (m, n) for a store.
func (c *contractionInfo) tabulateOut(g *gemmKernel, a access) []int32 {
	return tabulate(gather{load: &tir.BufferLoad{Buffer: a.buf, Indices: a.idx}}, g.ParamShapes[a.out], c.mVars, c.nVars)
}

func isLoadOf(e tir.Expr, st *tir.BufferStore) bool {
	l, ok := e.(*tir.BufferLoad)
	if !ok || l.Buffer != st.Buffer || len(l.Indices) != len(st.Indices) {
		return false
	}
	for i := range l.Indices {
		if !tir.Equal(l.Indices[i], st.Indices[i]) {
			return false
		}
	}
	return true
}

func isZeroInit(init tir.Stmt, st *tir.BufferStore) bool {
	s, ok := init.(*tir.BufferStore)
	if !ok || s.Buffer != st.Buffer {
		return false
	}
	return isZero(s.Value) && isLoadOf(&tir.BufferLoad{Buffer: s.Buffer, Indices: s.Indices}, st)
}

// isZero reports whether e is the constant 0 (float or integer).
func isZero(e tir.Expr) bool {
	switch z := e.(type) {
	case *tir.FloatImm:
		return z.Value == 0
	case *tir.IntImm:
		return z.Value == 0
	}
	return false
}

func isIntConst(e tir.Expr, v int64) bool {
	c, ok := e.(*tir.IntImm)
	return ok && c.Value == v
}

func usedVars(idx []tir.Expr) map[*tir.Var]bool {
	m := map[*tir.Var]bool{}
	for _, e := range idx {
		tir.VisitExpr(e, func(x tir.Expr) bool {
			if v, ok := x.(*tir.Var); ok {
				m[v] = true
			}
			return true
		})
	}
	return m
}

// padded is n rounded up to a multiple of b.
func padded(n, b int) int { return ceilDiv(n, b) * b }

func extent(iv *tir.IterVar) int { return int(iv.Dom.Extent.(*tir.IntImm).Value) }

func volume(ivs []*tir.IterVar) int {
	n := 1
	for _, iv := range ivs {
		n *= extent(iv)
	}
	return n
}

// gather is an operand: a load, read only where cond holds (nil: always)
// and zero elsewhere — how lowering writes a padded convolution's input,
// select(in bounds, X[clamped indices], 0.0).
type gather struct {
	load *tir.BufferLoad
	cond tir.Expr
}

// asGather recognizes a load or select(cond, load, 0), an 8-bit one also
// widened to i32 (cast<i32>, outside or inside the select).
func asGather(e tir.Expr) (gather, bool) {
	switch x := e.(type) {
	case *tir.BufferLoad:
		return gather{load: x}, true
	case *tir.Select:
		if g, ok := asGather(x.T); ok && g.cond == nil && isZero(x.F) {
			return gather{load: g.load, cond: x.Cond}, true
		}
	case *tir.Cast:
		if g, ok := asGather(x.X); ok && x.Type == tir.DI32 && g.load.Buffer.DType.Bits() == 8 {
			return g, true
		}
	}
	return gather{}, false
}

// exprs are the operand's index expressions and condition.
func (g gather) exprs() []tir.Expr {
	if g.cond == nil {
		return g.load.Indices
	}
	return append(slices.Clone(g.load.Indices), g.cond)
}

// tabulate evaluates the operand's row-major element offset for every
// point of outer × inner (each flattened in order, the last variable
// fastest): table[o·|inner| + i], −1 where its condition is false.
func tabulate(op gather, shape []int64, outer, inner []*tir.IterVar) []int32 {
	load := op.load
	vars := append(slices.Clone(outer), inner...)
	n := volume(vars)
	table := make([]int32, n)
	env := map[*tir.Var]int64{}
	vals := make([]int64, len(vars))
	for p := 0; p < n; p++ {
		r := p
		for j := len(vars) - 1; j >= 0; j-- {
			e := extent(vars[j])
			vals[j] = int64(r % e)
			r /= e
			env[vars[j].Var] = vals[j]
		}
		if op.cond != nil && evalIndex(op.cond, env) == 0 {
			table[p] = -1
			continue
		}
		var off int64
		for d, ix := range load.Indices {
			off = off*shape[d] + evalIndex(ix, env)
		}
		table[p] = int32(off)
	}
	return table
}

// evalIndex evaluates an integer index expression with variables bound by
// env (floordiv/floormod round toward −∞, as the IR defines them).
func evalIndex(e tir.Expr, env map[*tir.Var]int64) int64 {
	switch x := e.(type) {
	case *tir.IntImm:
		return x.Value
	case *tir.Var:
		return env[x]
	case *tir.Binary:
		a, b := evalIndex(x.A, env), evalIndex(x.B, env)
		switch x.Op {
		case tir.OpAdd:
			return a + b
		case tir.OpSub:
			return a - b
		case tir.OpMul:
			return a * b
		case tir.OpFloorDiv:
			q := a / b
			if (a%b != 0) && ((a < 0) != (b < 0)) {
				q--
			}
			return q
		case tir.OpFloorMod:
			return a - b*evalIndex(tir.FloorDiv(x.A, x.B), env)
		case tir.OpMin:
			return min(a, b)
		case tir.OpMax:
			return max(a, b)
		case tir.OpEQ:
			return b2i(a == b)
		case tir.OpNE:
			return b2i(a != b)
		case tir.OpLT:
			return b2i(a < b)
		case tir.OpLE:
			return b2i(a <= b)
		case tir.OpGT:
			return b2i(a > b)
		case tir.OpGE:
			return b2i(a >= b)
		case tir.OpAnd:
			return b2i(a != 0 && b != 0)
		case tir.OpOr:
			return b2i(a != 0 || b != 0)
		}
	case *tir.Not:
		return b2i(evalIndex(x.X, env) == 0)
	}
	panic(fmt.Sprintf("npu: cannot evaluate index %s", tir.ExprString(e)))
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// checkIndices refuses index expressions evalIndex cannot evaluate:
// anything but integer constants, variables, + − × floordiv floormod min
// max (a division by a positive constant), comparisons, and, or, not.
func checkIndices(idx []tir.Expr) error {
	var bad tir.Expr
	for _, e := range idx {
		tir.VisitExpr(e, func(x tir.Expr) bool {
			switch y := x.(type) {
			case *tir.IntImm, *tir.Var, *tir.Not:
			case *tir.Binary:
				switch y.Op {
				case tir.OpAdd, tir.OpSub, tir.OpMul, tir.OpMin, tir.OpMax, tir.OpEQ, tir.OpNE, tir.OpLT, tir.OpLE, tir.OpGT, tir.OpGE, tir.OpAnd, tir.OpOr:
				case tir.OpFloorDiv, tir.OpFloorMod:
					if c, ok := y.B.(*tir.IntImm); !ok || c.Value <= 0 {
						bad = x
					}
				default:
					bad = x
				}
			default:
				bad = x
			}
			return bad == nil
		})
	}
	if bad != nil {
		return refuse("index expression %s", tir.ExprString(bad))
	}
	return nil
}

// epilogueOf reads the elementwise block e that follows the contraction:
// it stores, into an output parameter, a chain of operations applied to
// C (each with a constant, a per-N vector or an M×N tile operand).
func (g *gemmKernel) epilogueOf(f *tir.PrimFunc, e *tir.Block, c *contractionInfo) error {
	st, ok := e.Body.(*tir.BufferStore)
	if !ok || e.Init != nil {
		return refuse("epilogue block %q is not a single store", e.Name)
	}
	g.Out = paramIndex(f, st.Buffer)
	if g.Out < 0 || g.ParamRoles[g.Out] == tir.RoleIn {
		return refuse("epilogue block %q does not write an output parameter", e.Name)
	}
	if c.store.out >= 0 {
		return refuse("the contraction writes a parameter that the epilogue reads")
	}
	// map the epilogue's variables onto the contraction's through C's indices
	rename := map[*tir.Var]*tir.IterVar{}
	var cload *tir.BufferLoad
	tir.VisitExpr(st.Value, func(x tir.Expr) bool {
		if l, ok := x.(*tir.BufferLoad); ok && l.Buffer == c.store.buf && cload == nil {
			cload = l
		}
		return true
	})
	if cload == nil {
		return refuse("epilogue block %q does not read the contraction", e.Name)
	}
	for i, ix := range cload.Indices {
		ev, ok1 := ix.(*tir.Var)
		cv, ok2 := c.store.idx[i].(*tir.Var)
		if !ok1 || !ok2 {
			return refuse("the contraction's result is stored or read at computed indices")
		}
		for _, iv := range c.spatial {
			if iv.Var == cv {
				rename[ev] = iv
			}
		}
	}
	for _, iv := range e.IterVars {
		if iv.Kind != tir.Spatial || rename[iv.Var] == nil || extent(rename[iv.Var]) != extent(iv) {
			return refuse("epilogue block %q does not iterate over the contraction's result", e.Name)
		}
	}
	sub := func(idx []tir.Expr) []tir.Expr {
		m := map[*tir.Var]tir.Expr{}
		for ev, iv := range rename {
			m[ev] = iv.Var
		}
		out := make([]tir.Expr, len(idx))
		for i, x := range idx {
			out[i] = tir.Substitute(x, m)
		}
		return out
	}
	if err := checkIndices(st.Indices); err != nil {
		return err
	}
	g.OutIdx = c.tabulateOut(g, access{buf: st.Buffer, out: g.Out, idx: sub(st.Indices)})
	value := st.Value
	cast, _ := value.(*tir.Cast)
	if g.DP != isa.DPInt8 {
		cast = nil
	}
	if err := g.outType(f, cast); err != nil {
		return err
	}
	var steps []aluStep
	var err error
	switch {
	case cast == nil:
		steps, err = g.chain(f, value, cload, c, sub)
	case cast.Type == tir.DI64 && cast.X.DType() == tir.DI32:
		steps, err = g.chain(f, cast.X, cload, c, sub)
	case cast.Type == tir.DI8 || cast.Type == tir.DUI8:
		steps, err = g.requantSteps(f, cast, cload, c, sub)
	default:
		err = refuse("epilogue expression %s", tir.ExprString(value))
	}
	g.Epilogue = steps
	return err
}

// chain turns the epilogue expression into ALU steps applied to C. Its
// innermost value is C, or in the int8 datapath a requantization of C
// read back as i32 (cast<i32>(cast<i8|ui8>(...)), exact as its clamp
// lies within the 8-bit type): an integer residual add after the
// contraction's requantization, requantized again.
func (g *gemmKernel) chain(f *tir.PrimFunc, e tir.Expr, cload *tir.BufferLoad, c *contractionInfo, sub func([]tir.Expr) []tir.Expr) ([]aluStep, error) {
	if l, ok := e.(*tir.BufferLoad); ok && l == cload {
		return nil, nil
	}
	if steps, ok, err := g.requantized(f, e, cload, c, sub); ok {
		return steps, err
	}
	b, ok := e.(*tir.Binary)
	if !ok {
		return nil, refuse("epilogue expression %s", tir.ExprString(e))
	}
	names := map[tir.BinOp]string{tir.OpAdd: "add", tir.OpSub: "sub", tir.OpMul: "mul", tir.OpMax: "max", tir.OpMin: "min"}
	name, ok := names[b.Op]
	if !ok {
		return nil, refuse("epilogue operation %s", tir.ExprString(e))
	}
	inner, other := b.A, b.B
	if !readsLoad(inner, cload) {
		if b.Op == tir.OpSub {
			return nil, refuse("epilogue subtracts the result from a value")
		}
		inner, other = other, inner
	}
	if readsLoad(other, cload) || !readsLoad(inner, cload) {
		return nil, refuse("epilogue expression %s uses the result twice", tir.ExprString(e))
	}
	steps, err := g.chain(f, inner, cload, c, sub)
	if err != nil {
		return nil, err
	}
	s, err := g.operand(f, name, other, c, sub)
	if err != nil {
		return nil, err
	}
	return append(steps, s), nil
}

// requantized recognizes e = cast<i32>(cast<i8|ui8>(q)), q a
// requantization of C in the int8 datapath (ok false otherwise), and
// returns q's steps; the requantization's bounds must lie within the
// 8-bit type, so that the casts do not change the value.
func (g *gemmKernel) requantized(f *tir.PrimFunc, e tir.Expr, cload *tir.BufferLoad, c *contractionInfo, sub func([]tir.Expr) []tir.Expr) ([]aluStep, bool, error) {
	wide, ok := e.(*tir.Cast)
	if !ok || g.DP != isa.DPInt8 || wide.Type != tir.DI32 {
		return nil, false, nil
	}
	narrow, ok := wide.X.(*tir.Cast)
	if !ok || (narrow.Type != tir.DI8 && narrow.Type != tir.DUI8) || !readsLoad(narrow, cload) {
		return nil, false, nil
	}
	tlo, thi := int64(-128), int64(127)
	if narrow.Type == tir.DUI8 {
		tlo, thi = 0, 255
	}
	if _, lo, hi, ok := clampOf(narrow.X); ok && (lo < tlo || hi > thi) {
		return nil, true, refuse("the requantization's bounds [%d, %d] leave %s", lo, hi, narrow.Type)
	}
	steps, err := g.requantSteps(f, narrow, cload, c, sub)
	return steps, true, err
}

// scaled splits e = x·k or k·x, k a nonzero constant of the datapath's
// accumulator type (i32; f32 in bf16), x not a constant.
func (g *gemmKernel) scaled(e tir.Expr) (tir.Expr, float64, bool) {
	b, ok := e.(*tir.Binary)
	if !ok || b.Op != tir.OpMul {
		return nil, 0, false
	}
	for _, p := range [2][2]tir.Expr{{b.A, b.B}, {b.B, b.A}} {
		x, k := p[0], p[1]
		if _, isConst := evalConst(x, nil); isConst {
			continue
		}
		if v, ok := evalConst(k, nil); ok && g.DP == isa.DPInt8 && k.DType() == tir.DI32 && v != 0 {
			return x, float64(v), true
		}
		if v, ok := k.(*tir.FloatImm); ok && g.DP != isa.DPInt8 && v.Value != 0 {
			return x, float64(float32(v.Value)), true
		}
	}
	return nil, 0, false
}

func readsLoad(e tir.Expr, l *tir.BufferLoad) bool {
	found := false
	tir.VisitExpr(e, func(x tir.Expr) bool {
		found = found || x == l
		return !found
	})
	return found
}

// operand classifies an epilogue operand: a constant, or a load of an
// input parameter indexed by N variables only (a vector), by M variables
// only (a row operand) or by M and N (a tile), possibly times a constant
// (Scale) and, in the int8 datapath, an 8-bit one widened to i32.
func (g *gemmKernel) operand(f *tir.PrimFunc, op string, e tir.Expr, c *contractionInfo, sub func([]tir.Expr) []tir.Expr) (aluStep, error) {
	if v, ok := evalConst(e, nil); ok && g.DP == isa.DPInt8 && e.DType() == tir.DI32 {
		return aluStep{Op: op, Kind: opConst, Value: float64(v)}, nil
	}
	if x, k, ok := g.scaled(e); ok {
		s, err := g.operand(f, op, x, c, sub)
		if err == nil && s.Kind == opConst {
			err = refuse("epilogue operand %s", tir.ExprString(e))
		}
		s.Scale = k
		return s, err
	}
	if x, ok := e.(*tir.Cast); ok && g.DP == isa.DPInt8 && x.Type == tir.DI32 && x.X.DType().IsInt() && x.X.DType().Bits() == 8 {
		if _, isLoad := x.X.(*tir.BufferLoad); isLoad {
			e = x.X // LOAD acc widens it
		}
	}
	switch x := e.(type) {
	case *tir.FloatImm:
		if g.DP == isa.DPInt8 {
			break
		}
		return aluStep{Op: op, Kind: opConst, Value: float64(float32(x.Value))}, nil
	case *tir.BufferLoad:
		p := paramIndex(f, x.Buffer)
		if p < 0 || g.ParamRoles[p] != tir.RoleIn {
			return aluStep{}, refuse("epilogue operand %s is not an input parameter", tir.ExprString(e))
		}
		if err := checkIndices(x.Indices); err != nil {
			return aluStep{}, err
		}
		l := &tir.BufferLoad{Buffer: x.Buffer, Indices: sub(x.Indices)}
		elem := g.accType()
		switch x.Buffer.DType {
		case tir.DI8:
			elem = isa.DTInt8
		case tir.DUI8:
			elem = isa.DTUInt8
		}
		used := usedVars(l.Indices)
		reads := func(ivs []*tir.IterVar) bool {
			return slices.ContainsFunc(ivs, func(iv *tir.IterVar) bool { return used[iv.Var] })
		}
		switch m, n := reads(c.mVars), reads(c.nVars); {
		case m && n:
			return aluStep{Op: op, Kind: opTile, Param: p, Idx: tabulate(gather{load: l}, g.ParamShapes[p], c.mVars, c.nVars), Elem: elem}, nil
		case m:
			return aluStep{Op: op, Kind: opRow, Param: p, Idx: tabulate(gather{load: l}, g.ParamShapes[p], c.mVars, nil), Elem: elem}, nil
		}
		return aluStep{Op: op, Kind: opVector, Param: p, Idx: tabulate(gather{load: l}, g.ParamShapes[p], nil, c.nVars), Elem: elem}, nil
	}
	return aluStep{}, refuse("epilogue operand %s", tir.ExprString(e))
}
