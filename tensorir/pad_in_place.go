package tensorir

import "strconv"

// Padding in place: a kernel that only copies its input into the interior
// of a larger buffer (explicit-conv-padding's kernels, a convolution's
// zero-padded input) costs a full read and write of the tensor, across
// cores when the producer ran on the other thread: about 40 µs for a
// 56×56×64 f32 image between two of ResNet-18's convolutions. Instead,
// the tensor's producer writes straight into the padded buffer's interior
// and its other readers read it there (their accesses shifted by the low
// padding, as TVM's storage_align or oneDNN's padded memory descriptors
// let a producer write into a larger allocation), and the pad kernel
// shrinks to filling the border (the padding value in a few contiguous
// boxes). The arena is then planned again, since the padded buffer now
// lives from the producer's call on.
//
// A pad call is rewritten when its kernel carries AttrPadLow and
// AttrPadValue (lowering marks kernels that only pad their one input by a
// constant), both its buffers lie in the host function's arena (constant
// layout, a body of tir.call statements only), the input has exactly one
// writer, an earlier call whose parameter is an out parameter (not inout),
// and the padded buffer has no writer but the pad call. A kernel called
// from several places is cloned before it is rewritten. Results are
// bit-identical: only where values are stored moves.

const (
	// AttrPadLow marks a kernel that only pads its input by a constant: the
	// low edge padding per dimension (an ArrayAttr of IntAttr, each ≥ 0).
	AttrPadLow = "tessera.pad_low"
	// AttrPadValue is such a kernel's padding value (IntAttr for an
	// integer dtype, FloatAttr for a float one).
	AttrPadValue = "tessera.pad_value"
	// PadInPlacePassName is the pass's pipeline name.
	PadInPlacePassName = "pad-in-place"
)

func init() {
	RegisterModulePass(PadInPlacePassName, "let the producer of a padded tensor write into the padded buffer and its readers read it there; the pad kernel then only fills the border (the arena is planned again)", PadInPlace)
}

// PadInPlace rewrites every host function of m (see above); it returns no
// error today (the signature is a module pass's).
func PadInPlace(m *Module) error {
	p := &padRewriter{m: m, uses: map[string]int{}}
	for _, f := range m.Funcs {
		visitHost(f.Body, func(s Stmt) bool {
			if c, ok := s.(*CallKernel); ok {
				p.uses[c.Callee]++
			}
			return true
		})
	}
	for _, f := range m.Funcs {
		if _, host := f.Attrs[AttrHost]; host {
			f.Body = Mutate(f.Body, func(s Stmt) (Stmt, bool) {
				a, ok := s.(*ArenaAlloc)
				if !ok {
					return nil, false
				}
				return p.arena(a), true
			})
		}
	}
	return nil
}

// padRewriter holds the module and how many calls each kernel has.
type padRewriter struct {
	m    *Module
	uses map[string]int
}

// arena rewrites the pad calls of one arena whose body is calls only.
func (p *padRewriter) arena(a *ArenaAlloc) Stmt {
	calls, ok := flatCalls(a.Body)
	if _, _, static := a.ConstLayout(); !ok || !static {
		return a
	}
	inArena := map[*Buffer]bool{}
	for _, b := range a.Buffers {
		inArena[b] = true
	}
	dropped := map[*Buffer]bool{}
	for i := range calls {
		if x := p.padInPlace(calls, i, inArena); x != nil {
			dropped[x] = true
		}
	}
	if len(dropped) == 0 {
		return a
	}
	return replanArena(a, calls, dropped)
}

// flatCalls lists s's statements when every one is a tir.call.
func flatCalls(s Stmt) ([]*CallKernel, bool) {
	var stmts []Stmt
	switch x := s.(type) {
	case *SeqStmt:
		stmts = x.Stmts
	default:
		stmts = []Stmt{s}
	}
	calls := make([]*CallKernel, len(stmts))
	for i, st := range stmts {
		c, ok := st.(*CallKernel)
		if !ok {
			return nil, false
		}
		calls[i] = c
	}
	return calls, true
}

// padInPlace rewrites calls[i] and the calls of its input when it is a
// pad call that qualifies; it returns the input buffer, no longer used,
// or nil.
func (p *padRewriter) padInPlace(calls []*CallKernel, i int, inArena map[*Buffer]bool) *Buffer {
	c := calls[i]
	k := p.m.Func(c.Callee)
	lo, value, ok := padAttrs(k)
	if !ok || len(c.Args) != 2 || len(c.Scalars) != 0 || !inArena[c.Args[0]] || !inArena[c.Args[1]] {
		return nil
	}
	x, xp := c.Args[0], c.Args[1]
	if !padShapes(k, x, xp, lo) {
		return nil
	}
	writers := p.writers(calls, x)
	if len(writers) != 1 || writers[0] >= i || p.role(calls[writers[0]], x) != RoleOut {
		return nil
	}
	if w := p.writers(calls, xp); len(w) != 1 || w[0] != i {
		return nil
	}
	for j, cj := range calls {
		if j != i && !p.plainParams(cj, x) {
			return nil
		}
	}
	for j, cj := range calls {
		if j != i && argIndex(cj, x) >= 0 {
			p.retarget(cj, x, xp, lo)
		}
	}
	p.borderKernel(c, xp, x, lo, value)
	return x
}

// padShapes reports whether pad kernel k takes x (read-only) and writes
// xp, constant shapes of one rank with xp holding x at lo.
func padShapes(k *PrimFunc, x, xp *Buffer, lo []int64) bool {
	params := BufferParams(k)
	if len(params) != 2 || k.Params[params[0]].Role != RoleIn || k.Params[params[1]].Role != RoleOut {
		return false
	}
	in, ok1 := x.ConstShape()
	out, ok2 := xp.ConstShape()
	if !ok1 || !ok2 || len(in) != len(lo) || len(out) != len(lo) {
		return false
	}
	for d := range lo {
		if out[d]-lo[d]-in[d] < 0 {
			return false
		}
	}
	return true
}

// padAttrs reads a pad kernel's attributes (ok false on any other kernel).
func padAttrs(k *PrimFunc) ([]int64, Attr, bool) {
	if k == nil {
		return nil, nil, false
	}
	arr, ok := k.Attrs[AttrPadLow].(ArrayAttr)
	value := k.Attrs[AttrPadValue]
	switch value.(type) {
	case IntAttr, FloatAttr:
	default:
		return nil, nil, false
	}
	if !ok {
		return nil, nil, false
	}
	lo := make([]int64, len(arr))
	for d, a := range arr {
		n, isInt := a.(IntAttr)
		if !isInt || n < 0 {
			return nil, nil, false
		}
		lo[d] = int64(n)
	}
	return lo, value, true
}

// writers are the indices of the calls passing b for a parameter that is
// not read-only.
func (p *padRewriter) writers(calls []*CallKernel, b *Buffer) []int {
	var out []int
	for j, c := range calls {
		if argIndex(c, b) >= 0 && p.role(c, b) != RoleIn {
			out = append(out, j)
		}
	}
	return out
}

// role is the most writing role of the parameters c passes b for.
func (p *padRewriter) role(c *CallKernel, b *Buffer) Role {
	k := p.m.Func(c.Callee)
	r := RoleIn
	for i, a := range c.Args {
		if a == b && k != nil {
			r = max(r, k.Params[BufferParams(k)[i]].Role)
		}
	}
	return r
}

// plainParams reports whether every parameter c passes b for is a plain
// row-major buffer (no strides, no element offset), which retarget can
// give another shape.
func (p *padRewriter) plainParams(c *CallKernel, b *Buffer) bool {
	k := p.m.Func(c.Callee)
	for i, a := range c.Args {
		if a != b {
			continue
		}
		prm := k.Params[BufferParams(k)[i]].Buffer
		if prm.Strides != nil || (prm.ElemOffset != nil && !isZeroExpr(prm.ElemOffset)) {
			return false
		}
	}
	return true
}

// isZeroExpr reports whether e is the integer constant 0.
func isZeroExpr(e Expr) bool {
	c, ok := e.(*IntImm)
	return ok && c.Value == 0
}

// argIndex is the first position of b in c's buffer arguments, or -1.
func argIndex(c *CallKernel, b *Buffer) int {
	for i, a := range c.Args {
		if a == b {
			return i
		}
	}
	return -1
}

// owned returns c's kernel for rewriting: itself when c is its only call,
// else a copy under a new name that c then calls.
func (p *padRewriter) owned(c *CallKernel) *PrimFunc {
	k := p.m.Func(c.Callee)
	if p.uses[c.Callee] == 1 {
		return k
	}
	p.uses[c.Callee]--
	cp := *k
	cp.Attrs = Attrs{}
	for n, v := range k.Attrs {
		cp.Attrs[n] = v
	}
	cp.Params = append([]*Param(nil), k.Params...)
	for n := 1; ; n++ {
		name := k.Name + "_" + strconv.Itoa(n)
		if p.m.Func(name) == nil {
			cp.Name = name
			break
		}
	}
	p.m.Funcs = append(p.m.Funcs, &cp)
	p.uses[cp.Name] = 1
	c.Callee = cp.Name
	return &cp
}

// retarget makes c pass xp where it passed x: each such parameter of its
// kernel gets xp's shape, its accesses shifted by lo.
func (p *padRewriter) retarget(c *CallKernel, x, xp *Buffer, lo []int64) {
	k := p.owned(c)
	params := BufferParams(k)
	repl := map[*Buffer]*Buffer{}
	off := map[*Buffer][]Expr{}
	for i, a := range c.Args {
		if a != x {
			continue
		}
		old := k.Params[params[i]].Buffer
		nb := *old
		nb.Shape = append([]Expr(nil), xp.Shape...)
		repl[old], off[old] = &nb, negated(lo)
		c.Args[i] = xp
	}
	for j, prm := range k.Params {
		if nb := repl[prm.Buffer]; nb != nil {
			cp := *prm
			cp.Buffer = nb
			k.Params[j] = &cp
		}
	}
	k.Body = ReplaceBuffers(k.Body, repl, off)
}

// negated is -lo as index expressions (ReplaceBuffers subtracts its
// offsets).
func negated(lo []int64) []Expr {
	out := make([]Expr, len(lo))
	for d, v := range lo {
		out[d] = Int(-v)
	}
	return out
}

// borderKernel makes c call a kernel that stores value on xp's border:
// the elements outside the box [lo, lo + x's shape).
func (p *padRewriter) borderKernel(c *CallKernel, xp, x *Buffer, lo []int64, value Attr) {
	k := p.owned(c)
	out := &Buffer{Name: "out0", DType: xp.DType, Shape: append([]Expr(nil), xp.Shape...), Scope: ScopeGlobal, Loc: k.Loc}
	shape, _ := out.ConstShape()
	inner, _ := x.ConstShape()
	val := padImm(out.DType, value)
	var nests []Stmt
	for _, box := range borderBoxes(shape, inner, lo) {
		cmp := &Compute{Shape: box.extent, Body: func(Nest, Expr) Expr { return val }}
		min := box.min
		cmp.Out = func(n Nest) []Expr {
			idx := make([]Expr, len(n.Spatial))
			for d, v := range n.Spatial {
				idx[d] = Simplify(Add(v, Int(min[d])), nil)
			}
			return idx
		}
		nests = append(nests, cmp.Block("pad_border"+strconv.Itoa(len(nests)), out, k.Loc))
	}
	k.Params = []*Param{{Buffer: out, Role: RoleOut, Loc: k.Loc}}
	k.Body = Seq(nests...)
	if k.Body == nil {
		k.Body = &SeqStmt{Loc: k.Loc}
	}
	delete(k.Attrs, AttrPadLow)
	delete(k.Attrs, AttrPadValue)
	c.Args = []*Buffer{xp}
}

// padImm is the padding value (an IntAttr or FloatAttr: padAttrs) as a
// constant of dtype dt.
func padImm(dt DType, v Attr) Expr {
	if x, ok := v.(IntAttr); ok {
		return Imm(dt, float64(x))
	}
	return Imm(dt, float64(v.(FloatAttr)))
}

// box is a rectangular region: its first element and its extents.
type box struct{ min, extent []int64 }

// borderBoxes are disjoint boxes covering the elements of a buffer of
// shape outside the interior box [lo, lo+inner): for each dimension d,
// the slabs below and above the interior in d, over the interior of the
// dimensions before d and the whole of those after it.
func borderBoxes(shape, inner, lo []int64) []box {
	var out []box
	for d := range shape {
		for _, side := range [2][2]int64{{0, lo[d]}, {lo[d] + inner[d], shape[d] - lo[d] - inner[d]}} {
			if side[1] <= 0 {
				continue
			}
			b := box{min: make([]int64, len(shape)), extent: make([]int64, len(shape))}
			for e := range shape {
				switch {
				case e < d:
					b.min[e], b.extent[e] = lo[e], inner[e]
				case e == d:
					b.min[e], b.extent[e] = side[0], side[1]
				default:
					b.extent[e] = shape[e]
				}
			}
			out = append(out, b) // an empty box gives no loop nest (Compute.Block)
		}
	}
	return out
}

// replanArena returns a without the dropped buffers, its others placed
// again (PlanMemory) over the lifetimes the calls give them: from the
// first call passing a buffer to the last.
func replanArena(a *ArenaAlloc, calls []*CallKernel, dropped map[*Buffer]bool) *ArenaAlloc {
	out := &ArenaAlloc{Body: a.Body, Loc: a.Loc}
	var bufs []PlanBuffer
	for _, b := range a.Buffers {
		if dropped[b] {
			continue
		}
		live := Lifetime{First: -1, Last: -1}
		for j, c := range calls {
			if argIndex(c, b) >= 0 {
				if live.First < 0 {
					live.First = j
				}
				live.Last = j
			}
		}
		bufs = append(bufs, PlanBuffer{Name: b.Name, Size: numElements(b) * ElemBytes(b.DType), Live: live})
		out.Buffers = append(out.Buffers, b)
	}
	offsets, stats := PlanMemory(bufs)
	for _, o := range offsets {
		out.Offsets = append(out.Offsets, Int(o))
	}
	out.Size = Int(stats.ArenaBytes)
	return out
}
