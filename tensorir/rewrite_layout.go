package tensorir

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tessera-ml/tessera/internal/registry"
)

// Layout rewriting of constant kernel operands (TVM MetaSchedule's
// RewriteLayout postprocessor over Relay's layout-free placeholders; Ansor,
// Zheng et al., OSDI 2020, §6 "layout rewrite"): a weight that reaches a
// scheduled kernel only as a compile-time constant has no layout anyone
// else depends on, so it is stored in the order the kernel's loop nest
// reads it. The weight of a convolution tiled as
//
//	for o0 (parallel), rc0, o1, rc1, kh, kw, o2 (vectorized): W[kh, kw, rc0*16+rc1, o0*128+o1*32+o2]
//
// becomes a constant of shape [o0, rc0, o1, rc1, kh, kw, o2] read at
// W'[o0, rc0, o1, rc1, kh, kw, o2]: each thread streams one contiguous
// block instead of 512-byte pieces 2 KiB apart, which the hardware
// prefetchers and the TLB follow far better when the weights come from
// DRAM (a model's weights do not stay in the last-level cache between
// inferences).
//
// A kernel parameter is rewritten when every tir.call of the kernel passes
// a constant (tir.constant with data) for it, the kernel only reads it,
// and all its loads sit in one leaf block (no block nested inside) at the
// same indices, each a block iteration variable (or 0 in a dimension of
// extent 1) whose binding is a sum c_j·a_j of loop "digits" a_j — a loop
// variable or a floordiv/floormod of one, ranging over [0, M_j] — whose
// coefficients form a mixed radix: sorted, c_0 = 1 and c_{j+1} =
// c_j·(M_j+1) (what split, tile and fuse produce). The block's iteration
// variable of such a dimension is replaced by one iteration variable per
// digit (bound to the digit, of the same kind, its uses rewritten as
// Σ c_j·v_j), the digits become the new buffer's dimensions in loop
// nesting order (outer loops, and within a loop larger divisors, first),
// and every call site's constant is transposed to that layout at compile
// time (zero padding where the top digit's range overshoots the
// dimension; those elements are never read). Anything else — a store to
// the buffer, loads in several blocks or at different indices, a binding
// that is not such a sum — leaves the parameter as it is. Results are
// bit-identical: only where each weight is stored moves.

// RewriteLayoutPassName is the pass's pipeline name.
const RewriteLayoutPassName = "rewrite-layout"

func init() {
	RegisterPass(&PassInfo{
		Name:    RewriteLayoutPassName,
		Summary: "store every kernel parameter that only receives host constants in the order its loop nest reads it, transposing the constants (TVM MetaSchedule's RewriteLayout)",
		New:     func(map[string]string) (Pass, error) { return &rewriteLayoutPass{}, nil },
	})
}

// rewriteLayoutPass runs RewriteLayoutModule and reports its statistics.
type rewriteLayoutPass struct{ stats LayoutRewriteStats }

func (p *rewriteLayoutPass) Name() string { return RewriteLayoutPassName }

// Run rewrites m, which the pipeline owns: a constant transposed to every
// layout it is used in loses its original data as soon as the last of
// them is made (see rewriteLayout).
func (p *rewriteLayoutPass) Run(m *Module) error {
	p.stats = rewriteLayout(m, true)
	return nil
}

// Statistics are the parameters rewritten and the constants transposed.
func (p *rewriteLayoutPass) Statistics() []registry.Statistic {
	return []registry.Statistic{
		{Name: "params", Help: "constant kernel operands stored in the order their loop nests read them", Value: int64(p.stats.Params)},
		{Name: "constants", Help: "host constants transposed", Value: int64(p.stats.Constants)},
	}
}

// LayoutRewriteStats count what RewriteLayoutModule changed.
type LayoutRewriteStats struct {
	Params    int // kernel parameters given a new layout
	Constants int // host constants transposed (one per distinct constant and layout)
}

// RewriteLayoutModule rewrites, in place, the layout of every kernel
// parameter of m that only ever receives a host constant and whose reads
// follow a loop nest (see above), and transposes those constants. It
// returns what it changed; m's functions are replaced by rewritten copies
// (the originals are not modified). Kernels are the functions without
// AttrHost. The rewrite never fails: a parameter it cannot handle keeps
// its layout.
func RewriteLayoutModule(m *Module) LayoutRewriteStats { return rewriteLayout(m, false) }

// rewriteLayout is RewriteLayoutModule. With release, the original
// tir.constant of a constant whose every use is rewritten loses its data
// (Raw, Floats, Ints) once its last layout is made: the pass runs on a
// module the pipeline owns, and a model's weights are then not held twice
// while it runs (ResNet-50: 102 MB of weights, the compiler's live heap
// peaked at 197 MB in this pass).
func rewriteLayout(m *Module, release bool) LayoutRewriteStats {
	var st LayoutRewriteStats
	consts, ok := hostConstArgs(m)
	if !ok {
		return st
	}
	plans := map[string]map[int]ParamLayout{} // kernel → buffer argument index → layout
	for i, f := range m.Funcs {
		if _, host := f.Attrs[AttrHost]; host {
			continue
		}
		var params []int
		argOf := map[int]int{}
		for a, p := range BufferParams(f) {
			if consts[callArg{f.Name, a}] {
				params = append(params, p)
				argOf[p] = a
			}
		}
		g, layouts := RewriteParamLayouts(f, params)
		for _, l := range layouts {
			if plans[f.Name] == nil {
				plans[f.Name] = map[int]ParamLayout{}
			}
			plans[f.Name][argOf[l.Param]] = l
			st.Params++
		}
		m.Funcs[i] = g
	}
	if st.Params > 0 {
		st.Constants = rewriteHostConsts(m, plans, release)
	}
	return st
}

// ParamLayout is the layout rewrite-layout stores a kernel parameter in:
// the new buffer's dimensions, outermost first, each a digit of one old
// dimension (the old index in dimension Dim is Σ Coeff·digit over its
// digits). Elements the top digits' ranges add past the old extent are
// padding, zero in a transposed constant and never read.
type ParamLayout struct {
	Param  int           `json:"param"`  // the parameter's index in the kernel
	Shape  []int64       `json:"shape"`  // the parameter's old (row-major) shape
	Digits []LayoutDigit `json:"digits"` // the new dimensions
}

// LayoutDigit is one dimension of a ParamLayout.
type LayoutDigit struct {
	Dim    int   `json:"dim"`    // the old dimension it is a digit of
	Coeff  int64 `json:"coeff"`  // its weight in that dimension's index
	Extent int64 `json:"extent"` // its range [0, Extent)
}

// NewShape is the rewritten buffer's shape.
func (l ParamLayout) NewShape() []int64 {
	out := make([]int64, len(l.Digits))
	for i, d := range l.Digits {
		out[i] = d.Extent
	}
	return out
}

// size is the element count of the new layout.
func (l ParamLayout) size() int64 {
	n := int64(1)
	for _, d := range l.Digits {
		n *= d.Extent
	}
	return n
}

// key identifies the layout (equal keys transpose a constant the same way).
func (l ParamLayout) key() string {
	var sb strings.Builder
	for _, d := range l.Digits {
		fmt.Fprintf(&sb, "%d:%d:%d,", d.Dim, d.Coeff, d.Extent)
	}
	return sb.String()
}

// Permute transposes src, the row-major data of the parameter's old shape
// with elemSize bytes per element, to the new layout (padding zeroed).
func (l ParamLayout) Permute(src []byte, elemSize int) []byte {
	return permutedRaw(src, elemSize, l.size(), l.offsets())
}

// RewriteParamLayouts is rewrite-layout on one kernel: each of f's
// parameters listed in params (indices into f.Params, in increasing order;
// parameters that are not read-only buffers are skipped) whose reads
// follow a loop nest (see above) moves to the layout it is read in. It
// returns the rewritten kernel (f itself when nothing changes; f is not
// modified) and the layout of every parameter it moved, in params order.
// The caller transposes the parameter's data with ParamLayout.Permute.
// The autotuner measures candidates through it, with the model's
// constants' parameters, so a candidate is timed with its weights laid
// out as the compiled model stores them.
func RewriteParamLayouts(f *PrimFunc, params []int) (*PrimFunc, []ParamLayout) {
	var out []ParamLayout
	for _, p := range params {
		if p < 0 || p >= len(f.Params) {
			continue
		}
		prm := f.Params[p]
		if prm.Buffer == nil || prm.Role != RoleIn {
			continue
		}
		plan := planLayout(f, prm.Buffer)
		if plan == nil {
			continue
		}
		f = plan.apply(f, p)
		out = append(out, plan.layout(p))
	}
	return f, out
}

// ConstantParams returns, for every kernel of m, the indices of its
// parameters that every tir.call of it passes a host constant (the
// model's weights), in increasing order; kernels called with no constant
// argument are absent.
func ConstantParams(m *Module) map[string][]int {
	consts, _ := hostConstArgs(m)
	out := map[string][]int{}
	for _, f := range m.Funcs {
		for a, p := range BufferParams(f) {
			if consts[callArg{f.Name, a}] {
				out[f.Name] = append(out[f.Name], p)
			}
		}
	}
	return out
}

// BufferParams lists the indices of f's buffer parameters in order: entry
// a is the parameter that argument a of a tir.call binds (CallKernel.Args
// skips the scalar parameters).
func BufferParams(f *PrimFunc) []int {
	var out []int
	for i, p := range f.Params {
		if p.Buffer != nil {
			out = append(out, i)
		}
	}
	return out
}

// callArg names buffer argument Index (of CallKernel.Args) of the calls
// of kernel Callee.
type callArg struct {
	Callee string
	Index  int
}

// hostConstArgs reports, for every kernel argument position, whether each
// call passes a constant with data there. ok is false when a kernel is
// called from a non-host function (nothing is rewritten then).
func hostConstArgs(m *Module) (map[callArg]bool, bool) {
	out := map[callArg]bool{}
	ok := true
	for _, f := range m.Funcs {
		_, host := f.Attrs[AttrHost]
		consts := map[*Buffer]bool{}
		visitHost(f.Body, func(s Stmt) bool {
			switch x := s.(type) {
			case *AllocateConst:
				consts[x.Buffer] = !x.Elided
			case *CallKernel:
				if !host {
					ok = false
				}
				for i, a := range x.Args {
					k := callArg{x.Callee, i}
					c, seen := out[k]
					out[k] = consts[a] && (c || !seen)
				}
			}
			return true
		})
	}
	return out, ok
}

// layoutDigit is one dimension of the rewritten buffer: a digit of old
// dimension Dim with Coeff (the old index is Σ Coeff·digit) and Extent.
type layoutDigit struct {
	Dim    int
	Coeff  int64
	Extent int64
	Atom   Expr // its value: an expression of one loop variable
	iter   *IterVar
	key    [2]int64 // nesting order: loop depth, -divisor
}

// layoutPlan is the new layout of one kernel parameter and the block that
// reads it.
type layoutPlan struct {
	buf     *Buffer
	realize *BlockRealize
	digits  []*layoutDigit
	// others are the plans of buf's other readers, in the same layout.
	others []*layoutPlan
}

// layout is the plan's layout of parameter param.
func (p *layoutPlan) layout(param int) ParamLayout {
	shape, _ := p.buf.ConstShape()
	l := ParamLayout{Param: param, Shape: shape}
	for _, d := range p.digits {
		l.Digits = append(l.Digits, LayoutDigit{Dim: d.Dim, Coeff: d.Coeff, Extent: d.Extent})
	}
	return l
}

// Key identifies the layout (equal keys transpose a constant the same way).
func (p *layoutPlan) Key() string { return p.layout(0).key() }

// Shape is the rewritten buffer's shape.
func (p *layoutPlan) Shape() []int64 { return p.layout(0).NewShape() }

// loopInfo is what planLayout knows of a loop: its nesting depth and range.
type loopInfo struct {
	depth int
	lo    int64
	ext   int64
}

// planLayout finds the layout buf is read in by f's loop nest, or nil:
// the layout of its reader's access order, or of all its readers when
// each reads it in the same layout (a kernel holding one loop nest per
// batch chunk size, schedule's batch lifting); nil when they disagree.
func planLayout(f *PrimFunc, buf *Buffer) *layoutPlan {
	shape, ok := buf.ConstShape()
	if !ok || buf.Strides != nil || buf.ElemOffset != nil {
		return nil
	}
	var first *layoutPlan
	for _, r := range readersOf(f.Body, buf) {
		p := readerPlan(r, buf, shape)
		switch {
		case p == nil, first != nil && p.Key() != first.Key():
			return nil
		case first == nil:
			first = p
		default:
			first.others = append(first.others, p)
		}
	}
	if first == nil || first.isIdentity(shape) {
		return nil
	}
	return first
}

// readerPlan is the layout reader r reads buf (of the given shape) in,
// or nil.
func readerPlan(rd reader, buf *Buffer, shape []int64) *layoutPlan {
	r := rd.realize
	idx := loadIndices(r.Block, buf)
	if idx == nil || len(idx) != len(shape) {
		return nil
	}
	p := &layoutPlan{buf: buf, realize: r}
	used := map[int]bool{}
	for k, e := range idx {
		if c, isC := e.(*IntImm); isC && c.Value == 0 && shape[k] == 1 {
			continue
		}
		j := iterIndex(r.Block, e)
		if j < 0 || used[j] {
			return nil
		}
		used[j] = true
		ds := digitsOf(r.Values[j], rd.loops, rd.env, shape[k])
		if ds == nil {
			return nil
		}
		for _, d := range ds {
			d.Dim, d.iter = k, r.Block.IterVars[j]
		}
		p.digits = append(p.digits, ds...)
	}
	sort.SliceStable(p.digits, func(a, b int) bool {
		ka, kb := p.digits[a].key, p.digits[b].key
		return ka[0] < kb[0] || ka[0] == kb[0] && ka[1] < kb[1]
	})
	return p
}

// isIdentity reports whether the plan keeps every element at its
// row-major offset (dimensions only split, in order, without padding).
func (p *layoutPlan) isIdentity(shape []int64) bool {
	cover := make([]int64, len(shape))
	for i := range cover {
		cover[i] = 1
	}
	for i, d := range p.digits {
		cover[d.Dim] *= d.Extent
		if i > 0 {
			prev := p.digits[i-1]
			if d.Dim < prev.Dim || d.Dim == prev.Dim && d.Coeff > prev.Coeff {
				return false
			}
		}
	}
	for k, n := range shape {
		if cover[k] != n {
			return false
		}
	}
	return true
}

// reader is a leaf block realize that loads a buffer, with the loops
// around it and their ranges.
type reader struct {
	realize *BlockRealize
	loops   map[*Var]loopInfo
	env     BoundEnv
}

// readersOf finds the leaf block realizes that load buf (nil when the
// buffer is stored to, loaded outside such a block, or named in the
// regions of a block that does not load it itself: an enclosing block).
func readersOf(body Stmt, buf *Buffer) []reader {
	var found []reader
	bad := false
	loops := map[*Var]loopInfo{}
	var walk func(s Stmt, depth int)
	walk = func(s Stmt, depth int) {
		if bad || s == nil {
			return
		}
		switch x := s.(type) {
		case *For:
			lo, ok1 := x.Min.(*IntImm)
			ext, ok2 := x.Extent.(*IntImm)
			if ok1 && ok2 {
				loops[x.Var] = loopInfo{depth, lo.Value, ext.Value}
			}
			walk(x.Body, depth+1)
			delete(loops, x.Var)
			return
		case *BlockRealize:
			if x.Block == nil {
				return
			}
			mentions := regionsName(x.Block, buf)
			reads := stmtLoads(x.Block, buf)
			nested := false
			VisitStmt(x.Block.Body, func(y Stmt) bool {
				_, isR := y.(*BlockRealize)
				nested = nested || isR
				return !nested
			})
			switch {
			case exprsLoad(x.Values, buf) || exprsLoad([]Expr{x.Predicate}, buf):
				bad = true
			case reads && !nested && !writesTo(x.Block, buf):
				r := reader{realize: x, loops: make(map[*Var]loopInfo, len(loops)), env: BoundEnv{}}
				for v, l := range loops {
					r.loops[v] = l
					if l.ext > 0 {
						r.env[v] = Interval{l.lo, l.lo + l.ext - 1}
					}
				}
				found = append(found, r)
				return
			case mentions || reads:
				bad = true // an enclosing block's regions
			}
			walk(x.Block.Body, depth)
			return
		case *BufferStore:
			if x.Buffer == buf {
				bad = true
			}
		}
		if stmtLoadsShallow(s, buf) {
			bad = true
		}
		for _, c := range SubStmts(s) {
			walk(c, depth)
		}
	}
	walk(body, 0)
	if bad {
		return nil
	}
	return found
}

// regionHas reports whether one of rs is a region of buf.
func regionHas(rs []BufferRegion, buf *Buffer) bool {
	for _, r := range rs {
		if r.Buffer == buf {
			return true
		}
	}
	return false
}

// writesTo reports whether b's write regions name buf.
func writesTo(b *Block, buf *Buffer) bool { return regionHas(b.Writes, buf) }

// regionsName reports whether b's regions or allocations name buf.
func regionsName(b *Block, buf *Buffer) bool {
	if regionHas(b.Reads, buf) || regionHas(b.Writes, buf) {
		return true
	}
	for _, a := range b.Allocs {
		if a == buf {
			return true
		}
	}
	return false
}

// stmtLoads reports whether any expression in b's init or body loads buf.
func stmtLoads(b *Block, buf *Buffer) bool {
	found := false
	for _, s := range []Stmt{b.Init, b.Body} {
		VisitStmt(s, func(y Stmt) bool {
			found = found || stmtLoadsShallow(y, buf)
			return !found
		})
	}
	return found
}

// stmtLoadsShallow reports whether the expressions of s itself (not of its
// children) load buf, or s passes buf to a kernel.
func stmtLoadsShallow(s Stmt, buf *Buffer) bool {
	if x, ok := s.(*CallKernel); ok {
		for _, a := range x.Args {
			if a == buf {
				return true
			}
		}
	}
	return exprsLoad(stmtExprs(s), buf)
}

// exprsLoad reports whether one of es loads buf.
func exprsLoad(es []Expr, buf *Buffer) bool {
	found := false
	for _, e := range es {
		if e == nil {
			continue
		}
		VisitExpr(e, func(x Expr) bool {
			if l, ok := x.(*BufferLoad); ok && l.Buffer == buf {
				found = true
			}
			return !found
		})
	}
	return found
}

// loadIndices returns the indices of b's loads of buf when they are all
// equal (nil otherwise).
func loadIndices(b *Block, buf *Buffer) []Expr {
	var idx []Expr
	same := true
	visit := func(e Expr) {
		VisitExpr(e, func(x Expr) bool {
			if l, ok := x.(*BufferLoad); ok && l.Buffer == buf {
				if idx == nil {
					idx = l.Indices
				} else if !equalList(idx, l.Indices) {
					same = false
				}
			}
			return true
		})
	}
	for _, s := range []Stmt{b.Init, b.Body} {
		VisitStmt(s, func(y Stmt) bool {
			for _, e := range stmtExprs(y) {
				if e != nil {
					visit(e)
				}
			}
			return true
		})
	}
	if !same {
		return nil
	}
	return idx
}

// stmtExprs are the expressions of s itself.
func stmtExprs(s Stmt) []Expr {
	switch x := s.(type) {
	case *For:
		return []Expr{x.Min, x.Extent}
	case *BufferStore:
		return append([]Expr{x.Value}, x.Indices...)
	case *IfThenElse:
		return []Expr{x.Cond}
	case *LetStmt:
		return []Expr{x.Value}
	case *Evaluate:
		return []Expr{x.Value}
	}
	return nil
}

// iterIndex is the index of the iteration variable e of b, or -1.
func iterIndex(b *Block, e Expr) int {
	v, ok := e.(*Var)
	if !ok {
		return -1
	}
	for i, iv := range b.IterVars {
		if iv.Var == v {
			return i
		}
	}
	return -1
}

// digitKey is the nesting order of a loop digit (a loop variable, or
// floordiv/floormod by positive constants of one): its loop's depth and
// minus its divisor; ok is false for any other expression.
func digitKey(e Expr, loops map[*Var]loopInfo) (key [2]int64, ok bool) {
	div := int64(1)
	for {
		switch x := e.(type) {
		case *Var:
			l, found := loops[x]
			return [2]int64{int64(l.depth), -div}, found
		case *Binary:
			c, isC := x.B.(*IntImm)
			if !isC || c.Value <= 0 || x.Op != OpFloorDiv && x.Op != OpFloorMod {
				return key, false
			}
			if x.Op == OpFloorDiv {
				div *= c.Value
			}
			e = x.A
		default:
			return key, false
		}
	}
}

// digitsOf decomposes binding e of an index into dimension of size n into
// mixed-radix loop digits (nil when it is not such a sum). The top digit's
// extent is raised to cover n when the loops cover less.
func digitsOf(e Expr, loops map[*Var]loopInfo, env BoundEnv, n int64) []*layoutDigit {
	lin := (&simplifier{env: env}).linear(e)
	if lin.c != 0 {
		return nil
	}
	var ds []*layoutDigit
	for _, t := range lin.terms {
		if t.coeff == 0 {
			continue
		}
		key, ok := digitKey(t.atom, loops)
		b := Bound(t.atom, env)
		if !ok || t.coeff < 0 || b.IsFull() || b.Lo < 0 {
			return nil
		}
		if b.Hi > 0 {
			ds = append(ds, &layoutDigit{Coeff: t.coeff, Extent: b.Hi + 1, Atom: t.atom, key: key})
		}
	}
	if len(ds) == 0 {
		if n == 1 {
			return []*layoutDigit{}
		}
		return nil
	}
	sort.Slice(ds, func(a, b int) bool { return ds[a].Coeff < ds[b].Coeff })
	next := int64(1)
	for i, d := range ds {
		if d.Coeff != next || d.Extent > n {
			return nil
		}
		if i == len(ds)-1 {
			if top := (n + d.Coeff - 1) / d.Coeff; top > d.Extent {
				d.Extent = top
			}
		}
		next = d.Coeff * d.Extent
	}
	return ds
}

// apply returns f with parameter p (the plan's buffer) in the new layout:
// the reading block gets one iteration variable per digit.
func (p *layoutPlan) apply(f *PrimFunc, param int) *PrimFunc {
	old := p.buf
	nb := &Buffer{Name: old.Name, DType: old.DType, Align: old.Align, Scope: old.Scope, Loc: old.Loc}
	for _, d := range p.Shape() {
		nb.Shape = append(nb.Shape, Int(d))
	}
	names := usedNames(f)
	repl := map[Stmt]Stmt{}
	for _, q := range append([]*layoutPlan{p}, p.others...) {
		repl[q.realize] = q.rewritten(nb, names)
	}
	out := *f
	out.Params = append([]*Param(nil), f.Params...)
	np := *f.Params[param]
	np.Buffer = nb
	out.Params[param] = &np
	out.Body = Mutate(f.Body, func(s Stmt) (Stmt, bool) {
		if r, ok := repl[s]; ok {
			return r, true
		}
		return nil, false
	})
	return &out
}

// rewritten is the plan's reader reading nb, the buffer in the new
// layout, its iteration variables split into the layout's digits (new
// variable names drawn from names).
func (p *layoutPlan) rewritten(nb *Buffer, names map[string]bool) *BlockRealize {
	old := p.buf
	b := p.realize.Block
	nr := *p.realize
	nblk := *b
	nr.Block = &nblk
	nblk.IterVars, nr.Values = nil, nil
	sub := map[*Var]Expr{}
	digitVar := map[*layoutDigit]*Var{}
	for j, iv := range b.IterVars {
		var mine []*layoutDigit
		for _, d := range p.digits {
			if d.iter == iv {
				mine = append(mine, d)
			}
		}
		if len(mine) == 0 {
			nblk.IterVars = append(nblk.IterVars, iv)
			nr.Values = append(nr.Values, p.realize.Values[j])
			continue
		}
		sort.SliceStable(mine, func(a, c int) bool { return mine[a].Coeff > mine[c].Coeff })
		t := iv.Var.Type
		var sum Expr
		for n, d := range mine {
			v := NewVar(freshName(names, fmt.Sprintf("%s_%d", iv.Var.Name, n)), t)
			digitVar[d] = v
			nblk.IterVars = append(nblk.IterVars, &IterVar{Var: v, Kind: iv.Kind, Dom: Range{Min: IntOf(t, 0), Extent: IntOf(t, d.Extent)}})
			nr.Values = append(nr.Values, d.Atom)
			term := Expr(v)
			if d.Coeff != 1 {
				term = Mul(v, IntOf(t, d.Coeff))
			}
			if sum == nil {
				sum = term
			} else {
				sum = Add(sum, term)
			}
		}
		sub[iv.Var] = sum
	}
	idx := make([]Expr, len(p.digits))
	point := make([]Range, len(p.digits))
	for i, d := range p.digits {
		idx[i] = digitVar[d]
		point[i] = Range{Min: idx[i], Extent: IntOf(idx[i].DType(), 1)}
	}
	ex := func(e Expr) Expr {
		if e == nil {
			return nil
		}
		return MapExpr(e, func(v *Var) Expr {
			if r, ok := sub[v]; ok {
				return r
			}
			return v
		}, func(buf *Buffer, is []Expr) Expr {
			if buf == old {
				return &BufferLoad{Buffer: nb, Indices: idx}
			}
			return &BufferLoad{Buffer: buf, Indices: is}
		})
	}
	regions := func(rs []BufferRegion) []BufferRegion {
		out := make([]BufferRegion, len(rs))
		for i, r := range rs {
			if r.Buffer == old {
				out[i] = BufferRegion{Buffer: nb, Region: point}
				continue
			}
			out[i] = BufferRegion{Buffer: r.Buffer, Region: make([]Range, len(r.Region))}
			for k, rg := range r.Region {
				out[i].Region[k] = Range{Min: ex(rg.Min), Extent: ex(rg.Extent)}
			}
		}
		return out
	}
	nblk.Reads, nblk.Writes = regions(b.Reads), regions(b.Writes)
	nblk.Init, nblk.Body = mapStmtExprs(b.Init, ex), mapStmtExprs(b.Body, ex)
	return &nr
}

// mapStmtExprs rebuilds the statements of a leaf block's init or body with
// every expression mapped by ex.
func mapStmtExprs(st Stmt, ex func(Expr) Expr) Stmt {
	var rec func(s Stmt) Stmt
	rec = func(s Stmt) Stmt {
		return Mutate(s, func(y Stmt) (Stmt, bool) {
			switch x := y.(type) {
			case *For:
				c := *x
				c.Min, c.Extent, c.Body = ex(x.Min), ex(x.Extent), rec(x.Body)
				return &c, true
			case *BufferStore:
				c := *x
				c.Value = ex(x.Value)
				c.Indices = make([]Expr, len(x.Indices))
				for i, a := range x.Indices {
					c.Indices[i] = ex(a)
				}
				return &c, true
			case *IfThenElse:
				c := *x
				c.Cond, c.Then, c.Else = ex(x.Cond), rec(x.Then), rec(x.Else)
				return &c, true
			case *LetStmt:
				c := *x
				c.Value, c.Body = ex(x.Value), rec(x.Body)
				return &c, true
			case *Evaluate:
				c := *x
				c.Value = ex(x.Value)
				return &c, true
			}
			return nil, false
		})
	}
	return rec(st)
}

// usedNames are the names of f's parameters and of its loop, block and
// let variables.
func usedNames(f *PrimFunc) map[string]bool {
	names := map[string]bool{}
	for _, p := range f.Params {
		names[p.Name()] = true
	}
	VisitStmt(f.Body, func(s Stmt) bool {
		switch x := s.(type) {
		case *For:
			names[x.Var.Name] = true
		case *Block:
			for _, iv := range x.IterVars {
				names[iv.Var.Name] = true
			}
		case *LetStmt:
			names[x.Var.Name] = true
		case *Allocate:
			names[x.Buffer.Name] = true
		}
		return true
	})
	return names
}

// freshName is base, or base with a numeric suffix, not in names (which
// it is added to).
func freshName(names map[string]bool, base string) string {
	name := base
	for i := 1; names[name]; i++ {
		name = fmt.Sprintf("%s_%d", base, i)
	}
	names[name] = true
	return name
}

// rewriteHostConsts transposes, in every host function, the constants
// passed for rewritten parameters and returns how many it made.
func rewriteHostConsts(m *Module, plans map[string]map[int]ParamLayout, release bool) int {
	made := 0
	for i, f := range m.Funcs {
		if _, host := f.Attrs[AttrHost]; !host {
			continue
		}
		h := &hostRewrite{plans: plans, names: usedNames(f), consts: map[*Buffer]*AllocateConst{}, made: map[constLayout]*AllocateConst{}, byOld: map[*Buffer][]*AllocateConst{}}
		visitHost(f.Body, func(s Stmt) bool {
			if x, ok := s.(*AllocateConst); ok {
				h.consts[x.Buffer] = x
				h.names[x.Buffer.Name] = true
			}
			return true
		})
		if release {
			h.pending = h.pendingLayouts(f.Body)
		}
		out := *f
		out.Body = h.rewrite(f.Body)
		m.Funcs[i] = &out
		made += len(h.made)
	}
	return made
}

// hostRewrite is the state of rewriteHostConsts in one host function.
type hostRewrite struct {
	plans  map[string]map[int]ParamLayout
	names  map[string]bool
	consts map[*Buffer]*AllocateConst
	made   map[constLayout]*AllocateConst // transposed constants
	byOld  map[*Buffer][]*AllocateConst   // in creation order
	// pending counts the layouts still to be made of each constant whose
	// data is released after the last (nil: nothing is released).
	pending map[*Buffer]int
}

// pendingLayouts maps each constant of the host body st that is used
// only as an argument of rewritten parameters to the number of distinct
// layouts it is transposed to. A constant that any statement uses
// otherwise (an argument of a parameter that keeps its layout, a load, a
// store) is absent: its data stays.
func (h *hostRewrite) pendingLayouts(st Stmt) map[*Buffer]int {
	layouts := map[*Buffer]map[string]bool{}
	plain := map[*Buffer]bool{}
	visitHost(st, func(s Stmt) bool {
		if x, ok := s.(*CallKernel); ok {
			for i, a := range x.Args {
				if plan, ok := h.plans[x.Callee][i]; ok {
					if layouts[a] == nil {
						layouts[a] = map[string]bool{}
					}
					layouts[a][plan.key()] = true
				} else {
					plain[a] = true
				}
			}
		}
		if x, ok := s.(*BufferStore); ok {
			plain[x.Buffer] = true
		}
		for _, e := range stmtExprs(s) {
			if e != nil {
				VisitExpr(e, func(x Expr) bool {
					if l, ok := x.(*BufferLoad); ok {
						plain[l.Buffer] = true
					}
					return true
				})
			}
		}
		return true
	})
	out := map[*Buffer]int{}
	for b, keys := range layouts {
		if h.consts[b] != nil && !plain[b] {
			out[b] = len(keys)
		}
	}
	return out
}

// constLayout is a host constant in a layout (ParamLayout.key).
type constLayout struct {
	buf    *Buffer
	layout string
}

// rewrite replaces the constant arguments of rewritten parameters in st
// and places each transposed constant just inside its original (dropped
// when nothing uses it any more).
func (h *hostRewrite) rewrite(st Stmt) Stmt {
	return Mutate(st, func(s Stmt) (Stmt, bool) {
		switch x := s.(type) {
		case *CallKernel:
			ps := h.plans[x.Callee]
			if len(ps) == 0 {
				return nil, false
			}
			c := *x
			c.Args = append([]*Buffer(nil), x.Args...)
			for p, plan := range ps {
				c.Args[p] = h.transposed(x.Args[p], plan).Buffer
			}
			return &c, true
		case *AllocateConst:
			body := h.rewrite(x.Body)
			for _, n := range h.byOld[x.Buffer] {
				nc := *n
				nc.Body = body
				body = &nc
			}
			if !usesBuffer(body, x.Buffer) {
				return body, true
			}
			c := *x
			c.Body = body
			return &c, true
		}
		return nil, false
	})
}

// transposed is the constant of buffer a in plan's layout (made once).
func (h *hostRewrite) transposed(a *Buffer, plan ParamLayout) *AllocateConst {
	key := constLayout{a, plan.key()}
	if c, ok := h.made[key]; ok {
		return c
	}
	src := h.consts[a]
	nb := &Buffer{Name: freshName(h.names, a.Name+"_packed"), DType: a.DType, Align: a.Align, Scope: a.Scope, Loc: a.Loc}
	for _, d := range plan.NewShape() {
		nb.Shape = append(nb.Shape, Int(d))
	}
	perm := plan.offsets()
	c := &AllocateConst{Buffer: nb, Floats: permuted(src.Floats, plan.size(), perm), Ints: permuted(src.Ints, plan.size(), perm), Raw: permutedRaw(src.Raw, a.DType.Format().Size(), plan.size(), perm), Loc: src.Loc}
	h.made[key] = c
	h.byOld[a] = append(h.byOld[a], c)
	if n, ok := h.pending[a]; ok {
		if h.pending[a] = n - 1; n == 1 {
			src.Raw, src.Floats, src.Ints = nil, nil, nil
		}
	}
	return c
}

// permuted places src[i] at perm(i) of a zeroed slice of n elements (nil
// for a nil src).
func permuted[T any](src []T, n int64, perm func(int) int) []T {
	if src == nil {
		return nil
	}
	out := make([]T, n)
	for i, v := range src {
		out[perm(i)] = v
	}
	return out
}

// permutedRaw is permuted for raw data of size bytes per element.
func permutedRaw(src []byte, size int, n int64, perm func(int) int) []byte {
	if src == nil {
		return nil
	}
	out := make([]byte, n*int64(size))
	for i := 0; i*size < len(src); i++ {
		j := perm(i) * size
		copy(out[j:j+size], src[i*size:(i+1)*size])
	}
	return out
}

// offsets returns the map from an element's row-major offset in the old
// layout to its offset in the new one.
func (l ParamLayout) offsets() func(int) int {
	shape := l.Shape
	newShape := l.NewShape()
	stride := make([]int64, len(newShape))
	s := int64(1)
	for i := len(newShape) - 1; i >= 0; i-- {
		stride[i] = s
		s *= newShape[i]
	}
	tables := make([][]int64, len(shape))
	for k, n := range shape {
		tables[k] = make([]int64, n)
	}
	for i, d := range l.Digits {
		for x := range tables[d.Dim] {
			tables[d.Dim][x] += (int64(x) / d.Coeff) % d.Extent * stride[i]
		}
	}
	return func(off int) int {
		o := int64(off)
		out := int64(0)
		for k := len(shape) - 1; k >= 0; k-- {
			out += tables[k][o%shape[k]]
			o /= shape[k]
		}
		return int(out)
	}
}

// visitHost is VisitStmt through host statements too (constants, arenas).
func visitHost(s Stmt, fn func(Stmt) bool) {
	if s == nil || !fn(s) {
		return
	}
	for _, c := range SubStmts(s) {
		visitHost(c, fn)
	}
}

// usesBuffer reports whether st calls a kernel with buf or accesses it.
func usesBuffer(st Stmt, buf *Buffer) bool {
	found := false
	visitHost(st, func(s Stmt) bool {
		if x, ok := s.(*BufferStore); ok && x.Buffer == buf {
			found = true
		}
		found = found || stmtLoadsShallow(s, buf)
		return !found
	})
	return found
}
