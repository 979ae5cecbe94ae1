package tensorir

import (
	"fmt"
	"slices"
)

// Host-level statements: what a model's entry function is made of once
// every fused kernel is a PrimFunc of its own. The host function calls the
// kernels (CallKernel) over weights embedded as constant buffers
// (AllocateConst, TVM's tir::AllocateConst) and intermediate tensors
// placed in one planned memory arena (ArenaAlloc, the shape of TVM's
// "workspace" pools and TFLite's arena planner output).

// CallKernel calls the PrimFunc named Callee of the same module with Args,
// one buffer per buffer parameter of the callee in order, and Scalars, one
// integer value per scalar parameter in order (the values of the
// symbolic dimensions a kernel's buffer shapes are written in, TVM's
// T.int64 vars of a dynamic-shape PrimFunc); the callee runs on the
// caller's memory: writes through an out/inout parameter land in the
// argument buffer. Each argument's shape must be the parameter's shape
// with the scalar parameters replaced by Scalars. Printed with the
// scalars first:
//
//	tir.call @fused_0(%a, %w0, %t1)
//	tir.call @fused_1(%batch, %t1, %out0)
type CallKernel struct {
	Callee  string
	Args    []*Buffer
	Scalars []Expr
	Loc     Location
}

// AllocateConst makes Buffer a read-only buffer holding constant Data for
// the duration of Body (weights embedded in the program). The data is
// row-major, in Floats for a float dtype and in Ints for an integer dtype,
// each value exactly representable in the dtype; a float constant may
// hold Raw instead of Floats: its elements as little-endian bytes of the
// dtype's storage format (DType.Format), shared with the graph level's
// attribute, so a model's weights are never widened to float64 on their
// way to the object file. Elided data (printed as
// dense_resource<__elided__> when asked to elide large constants) keeps
// the IR printable but cannot be executed or compiled. Printed as
//
//	tir.constant %w0: buffer<2x3xf32> = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]> { ... }
type AllocateConst struct {
	Buffer *Buffer
	Floats []float64
	Ints   []int64
	Raw    []byte
	Elided bool
	Body   Stmt
	Loc    Location
}

// Len is the number of elements held (in Floats, Ints or Raw).
func (s *AllocateConst) Len() int {
	if s.Raw != nil {
		return len(s.Raw) / max(1, s.Buffer.DType.Format().Size())
	}
	return len(s.Floats) + len(s.Ints)
}

// FloatValues returns a float constant's elements: Floats itself (shared)
// or Raw widened to float64 (a new slice).
func (s *AllocateConst) FloatValues() []float64 {
	if s.Raw == nil {
		return s.Floats
	}
	out := make([]float64, s.Len())
	s.Buffer.DType.Format().Decode(s.Raw, out)
	return out
}

// ArenaAlloc places Buffers at byte Offsets of one arena of Size bytes for
// the duration of Body. Buffers have the default row-major layout; an
// element occupies ElemBytes of its dtype (i1: one byte). Offsets are
// multiples of ArenaAlign and each buffer lies inside the arena. Buffers
// may share bytes (a memory plan reuses the storage of tensors that are no
// longer live); the interpreter gives them exactly that aliasing.
//
// Size, the offsets and the buffers' shapes are integer expressions: in a
// host function with symbolic dimensions (scalar parameters) they are
// expressions of those parameters, evaluated when the statement runs (the
// arena's size is a function of the symbols, issue 19); otherwise
// constants, checked by the verifier. Printed as (non-constant sizes and
// offsets in parentheses)
//
//	tir.arena 4096 (%t0: buffer<8x16xf32> at 0, %t1: buffer<8x16xf32> at 512) { ... }
//	tir.arena (%batch * 1024) (%t0: buffer<?x16xf32, [%batch]> at 0, ...) { ... }
type ArenaAlloc struct {
	Size    Expr
	Buffers []*Buffer
	Offsets []Expr
	Body    Stmt
	Loc     Location
}

// ConstLayout returns the arena's size and offsets when all are
// constants.
func (s *ArenaAlloc) ConstLayout() (size int64, offsets []int64, ok bool) {
	c, ok := s.Size.(*IntImm)
	if !ok {
		return 0, nil, false
	}
	offsets = make([]int64, len(s.Offsets))
	for i, o := range s.Offsets {
		oc, ok := o.(*IntImm)
		if !ok {
			return 0, nil, false
		}
		offsets[i] = oc.Value
	}
	return c.Value, offsets, true
}

// ArenaAlign is the byte alignment of every buffer placed in an arena (a
// cache line, and what AVX-512 loads want).
const ArenaAlign = 64

// AttrHost marks a function as a host function: it calls kernels with
// tir.call and holds the model's constants and arena (a UnitAttr).
const AttrHost = "tessera.host"

func (s *CallKernel) Location() Location    { return s.Loc }
func (s *AllocateConst) Location() Location { return s.Loc }
func (s *ArenaAlloc) Location() Location    { return s.Loc }

func (*CallKernel) stmtNode()    {}
func (*AllocateConst) stmtNode() {}
func (*ArenaAlloc) stmtNode()    {}

// ElemBytes is the storage size of one element of scalar dtype t in
// bytes (i1 takes a whole byte, index is 8).
func ElemBytes(t DType) int64 {
	if t.Kind == Bool {
		return int64(t.Lanes)
	}
	return int64(t.Bits()/8) * int64(t.Lanes)
}

// BufferBytes is the size of a dense buffer with a constant shape in
// bytes; ok is false when the shape is not constant or the size does not
// fit in an int64.
func BufferBytes(b *Buffer) (int64, bool) {
	shape, ok := b.ConstShape()
	if !ok {
		return 0, false
	}
	n := ElemBytes(b.DType)
	for _, d := range shape {
		if d < 0 || d > 0 && n > (1<<62)/d {
			return 0, false
		}
		n *= d
	}
	return n, true
}

// numElements is the element count of a constant shape, or -1.
func numElements(b *Buffer) int64 {
	shape, ok := b.ConstShape()
	if !ok {
		return -1
	}
	n := int64(1)
	for _, d := range shape {
		if d < 0 || d > 0 && n > (1<<62)/d {
			return -1
		}
		n *= d
	}
	return n
}

// RunModule verifies m and executes its function named name on args (see
// RunArgs); tir.call statements run their callees from m on the same
// memory.
func RunModule(m *Module, name string, args Args) error {
	if err := Verify(m); err != nil {
		return err
	}
	f := m.Func(name)
	if f == nil {
		return Diagnostics{Errorf(Location{}, "module has no function @%s", name)}
	}
	return runFunc(m, f, args)
}

// hostStmt checks the host-level statements (called by the
// verifier's statement switch).
func (v *verifier) hostStmt(s Stmt, blk *blockCtx) {
	switch x := s.(type) {
	case *CallKernel:
		v.call(x)
	case *AllocateConst:
		b := x.Buffer
		if b == nil {
			v.errorf("tir.constant without a buffer")
			return
		}
		v.bufferDecl(b)
		n := numElements(b)
		switch {
		case n < 0:
			v.errorf("constant buffer %%%s must have a constant shape", b.Name)
		case b.Strides != nil || b.ElemOffset != nil:
			v.errorf("constant buffer %%%s must have the default row-major layout", b.Name)
		case x.Elided:
		case x.Raw != nil:
			if !b.DType.IsFloat() || x.Floats != nil || x.Ints != nil || int64(len(x.Raw)) != n*int64(b.DType.Format().Size()) {
				v.errorf("constant buffer %%%s of %d elements of %s holds %d raw bytes", b.Name, n, b.DType, len(x.Raw))
			}
		case b.DType.IsFloat():
			if x.Ints != nil || int64(len(x.Floats)) != n {
				v.errorf("constant buffer %%%s of %d elements of %s holds %d float values", b.Name, n, b.DType, len(x.Floats))
				break
			}
			for i, f := range x.Floats {
				if r := RoundFloat(b.DType, f); r != f && r == r {
					v.errorf("constant buffer %%%s: element %d (%v) is not a value of %s", b.Name, i, f, b.DType)
					break
				}
			}
		default:
			if x.Floats != nil || int64(len(x.Ints)) != n {
				v.errorf("constant buffer %%%s of %d elements of %s holds %d integer values", b.Name, n, b.DType, len(x.Ints))
				break
			}
			for i, k := range x.Ints {
				if WrapInt(b.DType, k) != k {
					v.errorf("constant buffer %%%s: element %d (%d) is out of range for %s", b.Name, i, k, b.DType)
					break
				}
			}
		}
		if v.bufs[b] {
			v.errorf("buffer %%%s is allocated twice", b.Name)
		}
		v.bufs[b] = true
		v.consts[b] = true
		v.stmt(x.Body, blk)
		delete(v.bufs, b)
		delete(v.consts, b)
	case *ArenaAlloc:
		v.arena(x, blk)
	}
}

// arena checks a tir.arena: integer size and offsets over the variables
// in scope, and for a constant layout, offsets aligned and every buffer
// inside the arena (a symbolic layout is checked when it runs).
func (v *verifier) arena(x *ArenaAlloc, blk *blockCtx) {
	v.intExpr(x.Size, "tir.arena: size")
	if len(x.Offsets) != len(x.Buffers) {
		v.errorf("tir.arena: %d buffers but %d offsets", len(x.Buffers), len(x.Offsets))
		return
	}
	size, offsets, constant := x.ConstLayout()
	if constant && size < 0 {
		v.errorf("tir.arena: negative size %d", size)
	}
	for i, b := range x.Buffers {
		if b == nil {
			v.errorf("tir.arena: buffer #%d is missing", i)
			return
		}
		v.bufferDecl(b)
		v.intExpr(x.Offsets[i], fmt.Sprintf("tir.arena: offset of %%%s", b.Name))
		if b.Strides != nil || b.ElemOffset != nil {
			v.errorf("tir.arena: buffer %%%s must have the default row-major layout", b.Name)
		}
		if constant {
			v.arenaPlace(b, offsets[i], size)
		}
		if v.bufs[b] {
			v.errorf("buffer %%%s is allocated twice", b.Name)
		}
		v.bufs[b] = true
	}
	v.stmt(x.Body, blk)
	for _, b := range x.Buffers {
		delete(v.bufs, b)
	}
}

// arenaPlace checks buffer b at constant offset off of an arena of size
// bytes.
func (v *verifier) arenaPlace(b *Buffer, off, size int64) {
	n, ok := BufferBytes(b)
	switch {
	case !ok:
		v.errorf("tir.arena: buffer %%%s must have a constant shape in an arena of constant size", b.Name)
	case off < 0 || off%ArenaAlign != 0:
		v.errorf("tir.arena: buffer %%%s at offset %d: offsets must be non-negative multiples of %d", b.Name, off, ArenaAlign)
	case off > size-n:
		v.errorf("tir.arena: buffer %%%s of %d bytes at offset %d ends at %d, past the arena's %d bytes", b.Name, n, off, off+n, size)
	}
}

func (v *verifier) call(x *CallKernel) {
	for i, a := range x.Args {
		if a == nil {
			v.errorf("tir.call @%s: argument #%d is missing", x.Callee, i)
			return
		}
		if !v.bufs[a] {
			v.errorf("tir.call @%s: argument %%%s is not a parameter or allocated in scope", x.Callee, a.Name)
		}
	}
	for i, e := range x.Scalars {
		v.intExpr(e, fmt.Sprintf("tir.call @%s: scalar argument #%d", x.Callee, i))
	}
	if v.mod == nil {
		return // VerifyFunc alone cannot resolve callees; Verify(m) does.
	}
	callee := v.mod.Func(x.Callee)
	if callee == nil {
		v.errorf("tir.call: no function @%s in the module", x.Callee)
		return
	}
	if callee == v.f {
		v.errorf("tir.call: @%s calls itself", x.Callee)
		return
	}
	bufs, scalars := splitParams(callee)
	if len(x.Args) != len(bufs) || len(x.Scalars) != len(scalars) {
		v.errorf("tir.call @%s: %d buffer and %d scalar arguments for %d buffer and %d scalar parameters", x.Callee, len(x.Args), len(x.Scalars), len(bufs), len(scalars))
		return
	}
	bind := callBinding(scalars, x.Scalars)
	for i, p := range bufs {
		a := x.Args[i]
		if a.DType != p.Buffer.DType {
			v.errorf("tir.call @%s: argument %%%s has dtype %s but parameter %%%s has %s", x.Callee, a.Name, a.DType, p.Buffer.Name, p.Buffer.DType)
		}
		if want := substShape(p.Buffer.Shape, bind); !sameShape(a.Shape, want) {
			v.errorf("tir.call @%s: argument %%%s has shape %s but parameter %%%s has %s", x.Callee, a.Name, shapeString(a.Shape), p.Buffer.Name, shapeString(want))
		}
		if p.Role != RoleIn && v.consts[a] {
			v.errorf("tir.call @%s: constant buffer %%%s is passed as %s parameter %%%s", x.Callee, a.Name, p.Role, p.Buffer.Name)
		}
	}
}

// splitParams returns f's buffer and scalar parameters, each in order.
func splitParams(f *PrimFunc) (bufs, scalars []*Param) {
	for _, p := range f.Params {
		if p.Buffer != nil {
			bufs = append(bufs, p)
		} else {
			scalars = append(scalars, p)
		}
	}
	return bufs, scalars
}

// callBinding maps a callee's scalar parameters to a call's values.
func callBinding(scalars []*Param, values []Expr) map[*Var]Expr {
	m := make(map[*Var]Expr, len(scalars))
	for i, p := range scalars {
		if p.Var != nil && i < len(values) {
			m[p.Var] = values[i]
		}
	}
	return m
}

// substShape is shape with bind's variables replaced (shape itself when
// bind is empty).
func substShape(shape []Expr, bind map[*Var]Expr) []Expr {
	if len(bind) == 0 {
		return shape
	}
	out := make([]Expr, len(shape))
	for i, d := range shape {
		out[i] = Simplify(Substitute(d, bind), nil)
	}
	return out
}

// sameShape reports whether two shapes are the same: equal constants,
// or structurally equal expressions once simplified.
func sameShape(a, b []Expr) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, ok1 := a[i].(*IntImm)
		y, ok2 := b[i].(*IntImm)
		switch {
		case ok1 && ok2:
			if x.Value != y.Value {
				return false
			}
		case ok1 || ok2:
			return false
		case !Equal(Simplify(a[i], nil), Simplify(b[i], nil)):
			return false
		}
	}
	return true
}

func shapeString(s []Expr) string {
	out := "["
	for i, d := range s {
		if i > 0 {
			out += ", "
		}
		out += ExprString(d)
	}
	return out + "]"
}

// hostStmt compiles the host-level statements.
func (c *compiler) hostStmt(s Stmt) stmtFn {
	switch x := s.(type) {
	case *CallKernel:
		return c.callKernel(x)
	case *AllocateConst:
		if x.Elided {
			return c.failStmt("constant buffer %%%s: its data %s", x.Buffer.Name, ElidedHint)
		}
		l := c.layout(x.Buffer)
		slot, restore := c.defineBuf(x.Buffer)
		body := c.stmtOrNop(x.Body)
		restore()
		shape, _ := x.Buffer.ConstShape()
		return func(fr *frame) {
			arr := &Array{DType: x.Buffer.DType, Shape: shape}
			if arr.DType.IsFloat() {
				arr.Floats = append([]float64(nil), x.FloatValues()...)
			} else {
				arr.Ints = append([]int64(nil), x.Ints...)
			}
			bb := l.bindArray(fr, arr)
			bb.readOnly = true
			fr.bufs[slot] = bb
			body(fr)
			fr.bufs[slot] = nil
		}
	case *ArenaAlloc:
		return c.arena(x)
	}
	return c.failStmt("cannot execute %T", s)
}

// arena compiles a tir.arena: its size, offsets and buffer shapes are
// evaluated when it runs, and every buffer must lie inside it.
func (c *compiler) arena(x *ArenaAlloc) stmtFn {
	loc, block := c.loc, c.block
	size := c.intExpr(x.Size)
	offs := make([]intFn, len(x.Offsets))
	for i, o := range x.Offsets {
		offs[i] = c.intExpr(o)
	}
	slots := make([]int, len(x.Buffers))
	layouts := make([]*bufLayout, len(x.Buffers))
	var restores []func()
	for i, b := range x.Buffers {
		var restore func()
		layouts[i] = c.layout(b)
		slots[i], restore = c.defineBuf(b)
		restores = append(restores, restore)
	}
	body := c.stmtOrNop(x.Body)
	for i := len(restores) - 1; i >= 0; i-- {
		restores[i]()
	}
	return func(fr *frame) {
		n := size(fr)
		if n < 0 || n > 1<<31 {
			raise(loc, block, "tir.arena of %d bytes: negative or too large for the interpreter", n)
		}
		mem := make([]byte, n)
		for i, b := range x.Buffers {
			shape := layouts[i].dims(fr, true)
			off := offs[i](fr)
			view := arenaView(b, shape, mem, off)
			if end := off + view.n*ElemBytes(b.DType); off < 0 || off%ArenaAlign != 0 || end > n {
				raise(loc, block, "tir.arena: buffer %%%s of shape %s at offset %d does not lie in the arena's %d bytes at an offset aligned to %d", b.Name, shapeText(shape), off, n, ArenaAlign)
			}
			fr.bufs[slots[i]] = view
		}
		body(fr)
		for _, s := range slots {
			fr.bufs[s] = nil
		}
	}
}

// arenaView is buffer b of the given shape placed at byte offset base of
// mem (row-major).
func arenaView(b *Buffer, shape []int64, mem []byte, base int64) *boundBuf {
	bb := &boundBuf{shape: shape, strides: make([]int64, len(shape)), mem: mem, base: base, dtype: b.DType}
	st := int64(1)
	for j := len(shape) - 1; j >= 0; j-- {
		bb.strides[j] = st
		st *= shape[j]
	}
	bb.n = st
	return bb
}

// callKernel compiles a tir.call: the callee runs (compiled once per run)
// in a frame of its own on the caller's buffers.
func (c *compiler) callKernel(x *CallKernel) stmtFn {
	loc, block := c.loc, c.block
	args := make([]int, len(x.Args))
	for i, a := range x.Args {
		slot, ok := c.bufs[a]
		if !ok {
			slot = -1
		}
		args[i] = slot
	}
	scalars := make([]intFn, len(x.Scalars))
	for i, e := range x.Scalars {
		scalars[i] = c.intExpr(e)
	}
	return func(fr *frame) {
		if fr.mod == nil {
			raise(loc, block, "tir.call @%s needs the module; run the function with RunModule", x.Callee)
		}
		callee := fr.mod.Func(x.Callee)
		if callee == nil {
			raise(loc, block, "tir.call: no function @%s in the module", x.Callee)
		}
		if fr.depth >= maxCallDepth {
			raise(loc, block, "tir.call @%s: calls nested more than %d deep", x.Callee, maxCallDepth)
		}
		bufs, scalarParams := splitParams(callee)
		if len(x.Args) != len(bufs) || len(x.Scalars) != len(scalarParams) {
			raise(loc, block, "tir.call @%s: %d buffer and %d scalar arguments for %d buffer and %d scalar parameters", x.Callee, len(x.Args), len(x.Scalars), len(bufs), len(scalarParams))
		}
		p := fr.progs[callee]
		if p == nil {
			p = compileFunc(callee)
			fr.progs[callee] = p
		}
		sub := p.newFrame(fr.mod, fr.depth+1, fr.progs)
		nb, ns := 0, 0
		for i, prm := range callee.Params {
			if prm.Var != nil {
				sub.vals[p.paramSlots[i]] = scalar{i: WrapInt(prm.Var.Type, scalars[ns](fr))}
				ns++
			}
		}
		for i, prm := range callee.Params {
			if prm.Buffer == nil {
				continue
			}
			if args[nb] < 0 {
				raise(loc, block, "tir.call @%s: argument #%d is not bound to a buffer", x.Callee, nb)
			}
			bb := fr.bufs[args[nb]]
			if prm.Buffer.Strides != nil || prm.Buffer.ElemOffset != nil {
				raise(loc, block, "tir.call @%s: parameter %%%s needs the default layout", x.Callee, prm.Buffer.Name)
			}
			shape := p.layouts[i].dims(sub, false)
			if !slices.Equal(shape, bb.shape) {
				raise(loc, block, "tir.call @%s: argument %%%s has shape %s but parameter %%%s has %s", x.Callee, x.Args[nb].Name, shapeText(bb.shape), prm.Buffer.Name, shapeText(shape))
			}
			if prm.Role != RoleIn && bb.readOnly {
				raise(loc, block, "tir.call @%s: constant buffer %%%s passed as %s parameter", x.Callee, x.Args[nb].Name, prm.Role)
			}
			sub.bufs[p.paramSlots[i]] = bb
			nb++
		}
		p.body(sub)
	}
}

// maxCallDepth bounds tir.call nesting in the interpreter.
const maxCallDepth = 64

// Byte-backed (arena) storage of a bound buffer: elements are stored
// little-endian in the dtype's storage format (f16/bf16 bit patterns, i1
// as one byte).

func (bb *boundBuf) loadFloat(off int) float64 {
	if bb.mem == nil {
		return bb.arr.Floats[off]
	}
	p := bb.base + int64(off)*ElemBytes(bb.dtype)
	switch bb.dtype.Kind {
	case F16:
		return F16Value(uint16(le(bb.mem[p:], 2)))
	case BF16:
		return float64(BF16ToFloat32(uint16(le(bb.mem[p:], 2))))
	case F32:
		return floatFromBits(DF32, le(bb.mem[p:], 4))
	}
	return floatFromBits(DF64, le(bb.mem[p:], 8))
}

func (bb *boundBuf) storeFloat(off int, v float64) {
	if bb.mem == nil {
		bb.arr.Floats[off] = v
		return
	}
	p := bb.base + int64(off)*ElemBytes(bb.dtype)
	switch bb.dtype.Kind {
	case F16:
		putLE(bb.mem[p:], 2, uint64(F16Bits(v)))
	case BF16:
		putLE(bb.mem[p:], 2, uint64(BF16Bits(v)))
	case F32:
		putLE(bb.mem[p:], 4, floatToBits(DF32, v))
	default:
		putLE(bb.mem[p:], 8, floatToBits(DF64, v))
	}
}

func (bb *boundBuf) loadInt(off int) int64 {
	if bb.mem == nil {
		return bb.arr.Ints[off]
	}
	w := ElemBytes(bb.dtype)
	u := le(bb.mem[bb.base+int64(off)*w:], int(w))
	if bb.dtype.Kind == Bool {
		return int64(u & 1)
	}
	return WrapInt(bb.dtype.Element(), int64(u)) // sign- or zero-extends
}

func (bb *boundBuf) storeInt(off int, v int64) {
	if bb.mem == nil {
		bb.arr.Ints[off] = v
		return
	}
	w := ElemBytes(bb.dtype)
	putLE(bb.mem[bb.base+int64(off)*w:], int(w), uint64(v))
}

// length is the number of elements the storage holds.
func (bb *boundBuf) length() int64 {
	if bb.mem == nil {
		return int64(bb.arr.Len())
	}
	return bb.n
}

func le(b []byte, n int) uint64 {
	var u uint64
	for i := n - 1; i >= 0; i-- {
		u = u<<8 | uint64(b[i])
	}
	return u
}

func putLE(b []byte, n int, u uint64) {
	for i := 0; i < n; i++ {
		b[i] = byte(u >> (8 * i))
	}
}
