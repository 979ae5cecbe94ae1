package tensorir

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Array is the data of one buffer for the interpreter: a dtype, a shape
// and the elements in storage order. Float dtypes use Floats (each value
// exactly representable in DType; ArrayFromFloat64 rounds), integer
// dtypes (i1 included) use Ints (each in the dtype's range). Run rejects
// arrays holding other values. For a buffer with
// explicit strides or an element offset, the data is the underlying
// storage, indexed by offset + Σ index·stride.
type Array struct {
	DType  DType
	Shape  []int64
	Floats []float64
	Ints   []int64
}

// NewArray makes a zero-filled dense array.
func NewArray(t DType, shape ...int64) *Array {
	n := int64(1)
	for _, d := range shape {
		n *= d
	}
	a := &Array{DType: t, Shape: append([]int64(nil), shape...)}
	if t.IsFloat() {
		a.Floats = make([]float64, n)
	} else {
		a.Ints = make([]int64, n)
	}
	return a
}

// ArrayFromFloat32 makes an f32 array of the given shape holding data
// (row-major).
func ArrayFromFloat32(data []float32, shape ...int64) *Array {
	a := &Array{DType: DF32, Shape: append([]int64(nil), shape...), Floats: make([]float64, len(data))}
	for i, v := range data {
		a.Floats[i] = float64(v)
	}
	return a
}

// ArrayFromFloat64 makes an array of float dtype t and the given shape
// from data (row-major), rounding each value to t.
func ArrayFromFloat64(t DType, data []float64, shape ...int64) *Array {
	a := &Array{DType: t, Shape: append([]int64(nil), shape...), Floats: make([]float64, len(data))}
	for i, v := range data {
		a.Floats[i] = RoundFloat(t, v)
	}
	return a
}

// ArrayFromInt64 makes an array of integer dtype t and the given shape
// from data (row-major), wrapping each value to t.
func ArrayFromInt64(t DType, data []int64, shape ...int64) *Array {
	a := &Array{DType: t, Shape: append([]int64(nil), shape...), Ints: make([]int64, len(data))}
	for i, v := range data {
		a.Ints[i] = WrapInt(t, v)
	}
	return a
}

// Float32s returns the elements of a float array as float32.
func (a *Array) Float32s() []float32 {
	out := make([]float32, len(a.Floats))
	for i, v := range a.Floats {
		out[i] = float32(v)
	}
	return out
}

// Len is the number of stored elements.
func (a *Array) Len() int {
	if a.DType.IsFloat() {
		return len(a.Floats)
	}
	return len(a.Ints)
}

// Args are the arguments of a run: an array per buffer parameter and a
// value per scalar parameter (integer or float, by the parameter's dtype),
// keyed by parameter name without the '%'.
type Args struct {
	Arrays map[string]*Array
	Ints   map[string]int64
	Floats map[string]float64
}

// Run executes f on the arrays named after its buffer parameters,
// writing results into them; see RunArgs.
func Run(f *PrimFunc, arrays map[string]*Array) error {
	return RunArgs(f, Args{Arrays: arrays})
}

// RunArgs verifies and executes f, the reference semantics of tensor IR
// that every pass and code generator is checked against:
//   - f32 (f16, bf16) arithmetic rounds to the dtype after each operation,
//     exactly as compiled float32 code (no hidden wider accumulator); f64
//     is native; integers are exact and wrap at their width;
//   - intrinsics are computed with Go's math in float64, then rounded;
//   - loops of every kind run serially in order (parallel, vectorized and
//     thread-bound loops mean the same for race-free programs);
//   - a block runs when its predicate holds, with its iteration variables
//     bound to their binding values (an error if outside the domain); its
//     init runs first when every reduce iteration variable is at its
//     domain minimum (TVM semantics); its alloc buffers are fresh and
//     zero-filled on each execution, as are Allocate buffers;
//   - select evaluates both arms;
//   - buffer accesses are bounds-checked.
//
// Errors (never panics) are Diagnostics located at the statement, naming
// the buffer, the indices and the enclosing block: out-of-bounds access,
// integer division by zero, missing or mis-shaped arguments, vector
// dtypes (not executed by the interpreter).
func RunArgs(f *PrimFunc, args Args) (err error) {
	if err := VerifyFunc(f); err != nil {
		return err
	}
	return runFunc(nil, f, args)
}

// runFunc executes a verified f; m resolves tir.call (nil: calls fail).
func runFunc(m *Module, f *PrimFunc, args Args) (err error) {
	progs := map[*PrimFunc]*program{}
	p := compileFunc(f)
	progs[f] = p
	fr := p.newFrame(m, 0, progs)
	defer func() {
		if r := recover(); r != nil {
			re, ok := r.(runError)
			if !ok {
				panic(r)
			}
			err = re.err
		}
	}()
	for i, prm := range f.Params {
		if prm.Var == nil {
			continue
		}
		slot := p.paramSlots[i]
		if prm.Var.Type.IsFloat() {
			v, ok := args.Floats[prm.Var.Name]
			if !ok {
				return errAt(prm.Loc, "", "missing value for scalar parameter %%%s", prm.Var.Name)
			}
			fr.vals[slot] = scalar{f: RoundFloat(prm.Var.Type, v)}
		} else {
			v, ok := args.Ints[prm.Var.Name]
			if !ok {
				return errAt(prm.Loc, "", "missing value for scalar parameter %%%s", prm.Var.Name)
			}
			fr.vals[slot] = scalar{i: WrapInt(prm.Var.Type, v)}
		}
	}
	for i, prm := range f.Params {
		if prm.Buffer == nil {
			continue
		}
		arr, ok := args.Arrays[prm.Buffer.Name]
		if !ok || arr == nil {
			return errAt(prm.Loc, "", "missing array for buffer parameter %%%s", prm.Buffer.Name)
		}
		fr.bufs[p.paramSlots[i]] = p.layouts[i].bindArray(fr, arr)
	}
	p.body(fr)
	return nil
}

// The interpreter compiles a function once per run into closures over a
// frame of slots (one per variable and buffer definition, resolved at
// compile time), then runs them: no map look-ups or type switches on the
// hot path. Runtime errors are raised as a runError panic carrying the
// located diagnostic and recovered by runFunc.

type scalar struct {
	i int64
	f float64
}

type (
	intFn   func(fr *frame) int64
	floatFn func(fr *frame) float64
	stmtFn  func(fr *frame)
	addrFn  func(fr *frame) (*boundBuf, int)
)

// runError carries an interpreter error out of the compiled closures.
type runError struct{ err error }

// errAt is the interpreter's diagnostic at loc inside block (if any).
func errAt(loc Location, block string, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if block != "" {
		msg += " in block '" + block + "'"
	}
	return Diagnostics{Errorf(loc, "%s", msg)}
}

// frame is one activation of a compiled function.
type frame struct {
	vals  []scalar
	bufs  []*boundBuf
	mod   *Module
	depth int
	progs map[*PrimFunc]*program // compiled functions of this run
}

// program is a compiled function.
type program struct {
	nvals, nbufs int
	paramSlots   []int        // per parameter: its var or buffer slot
	layouts      []*bufLayout // per buffer parameter
	body         stmtFn
}

func (p *program) newFrame(m *Module, depth int, progs map[*PrimFunc]*program) *frame {
	return &frame{vals: make([]scalar, p.nvals), bufs: make([]*boundBuf, p.nbufs), mod: m, depth: depth, progs: progs}
}

type boundBuf struct {
	arr     *Array
	shape   []int64
	strides []int64
	offset  int64
	// Arena views (tir.arena) have no arr: their elements live in mem
	// from byte base on, n elements of dtype.
	mem      []byte
	base     int64
	n        int64
	dtype    DType
	readOnly bool // tir.constant buffers
}

// compiler resolves variables and buffers to slots, tracking the
// location and block that errors are reported at.
type compiler struct {
	vars         map[*Var]int
	bufs         map[*Buffer]int
	nvals, nbufs int
	loc          Location
	block        string
	// lock holds the lockstep threadIdx loops being compiled, by thread
	// tag (interp_lockstep.go).
	lock map[string]lockCtx
}

// compileFunc compiles f with its parameters in scope.
func compileFunc(f *PrimFunc) *program {
	c := &compiler{vars: map[*Var]int{}, bufs: map[*Buffer]int{}, loc: f.Loc}
	p := &program{paramSlots: make([]int, len(f.Params)), layouts: make([]*bufLayout, len(f.Params))}
	for i, prm := range f.Params {
		if prm.Var != nil {
			p.paramSlots[i], _ = c.defineVar(prm.Var)
		}
	}
	for i, prm := range f.Params {
		if prm.Buffer != nil {
			c.loc = prm.Loc
			p.layouts[i] = c.layout(prm.Buffer)
			p.paramSlots[i], _ = c.defineBuf(prm.Buffer)
		}
	}
	c.loc = f.Loc
	p.body = c.stmtOrNop(f.Body)
	p.nvals, p.nbufs = c.nvals, c.nbufs
	return p
}

// defineVar gives v a new slot; the returned func restores the outer
// scope.
func (c *compiler) defineVar(v *Var) (int, func()) { return define(c.vars, &c.nvals, v) }

// defineBuf gives b a new slot, like defineVar.
func (c *compiler) defineBuf(b *Buffer) (int, func()) { return define(c.bufs, &c.nbufs, b) }

// define binds k to slot *n (then increments *n) in scope; restore
// brings back the binding k had before.
func define[K comparable](scope map[K]int, n *int, k K) (slot int, restore func()) {
	old, had := scope[k]
	slot = *n
	*n++
	scope[k] = slot
	return slot, func() {
		if had {
			scope[k] = old
		} else {
			delete(scope, k)
		}
	}
}

// raise panics with the interpreter error at the compile-time location.
func raise(loc Location, block string, format string, args ...any) {
	panic(runError{errAt(loc, block, format, args...)})
}

func (c *compiler) failStmt(format string, args ...any) stmtFn {
	err := errAt(c.loc, c.block, format, args...)
	return func(*frame) { panic(runError{err}) }
}

func (c *compiler) failInt(format string, args ...any) intFn {
	err := errAt(c.loc, c.block, format, args...)
	return func(*frame) int64 { panic(runError{err}) }
}

func (c *compiler) failFloat(format string, args ...any) floatFn {
	err := errAt(c.loc, c.block, format, args...)
	return func(*frame) float64 { panic(runError{err}) }
}

func shapeText(s []int64) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = strconv.FormatInt(d, 10)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// bufLayout is a buffer's compiled shape, strides and element offset.
type bufLayout struct {
	b       *Buffer
	shape   []intFn
	strides []intFn // nil: row-major
	offset  intFn   // nil: 0
	loc     Location
	block   string
}

func (c *compiler) layout(b *Buffer) *bufLayout {
	l := &bufLayout{b: b, loc: c.loc, block: c.block}
	for _, d := range b.Shape {
		l.shape = append(l.shape, c.intExpr(d))
	}
	if b.Strides != nil {
		l.strides = make([]intFn, len(b.Strides))
		for i, s := range b.Strides {
			l.strides[i] = c.intExpr(s)
		}
	}
	if b.ElemOffset != nil {
		l.offset = c.intExpr(b.ElemOffset)
	}
	return l
}

// dims evaluates the shape; with limit it also refuses allocations the
// interpreter cannot hold.
func (l *bufLayout) dims(fr *frame, limit bool) []int64 {
	shape := make([]int64, len(l.shape))
	n := int64(1)
	for i, d := range l.shape {
		v := d(fr)
		if v < 0 {
			raise(l.loc, l.block, "buffer %%%s: dimension %d is negative (%d)", l.b.Name, i, v)
		}
		if limit && v > 0 && n > (1<<31)/v {
			raise(l.loc, l.block, "buffer %%%s: allocation of shape %s is too large for the interpreter", l.b.Name, shapeText(shape))
		}
		shape[i] = v
		n *= v
	}
	return shape
}

// bind records arr's layout for a buffer of the given shape.
func (l *bufLayout) bind(fr *frame, arr *Array, shape []int64) *boundBuf {
	bb := &boundBuf{arr: arr, shape: shape, strides: make([]int64, len(shape))}
	if l.strides != nil {
		for i, s := range l.strides {
			bb.strides[i] = s(fr)
		}
	} else {
		st := int64(1)
		for i := len(shape) - 1; i >= 0; i-- {
			bb.strides[i] = st
			st *= shape[i]
		}
	}
	if l.offset != nil {
		bb.offset = l.offset(fr)
	}
	return bb
}

// bindArray checks arr against the buffer's dtype and shape and binds
// it.
func (l *bufLayout) bindArray(fr *frame, arr *Array) *boundBuf {
	b := l.b
	if arr.DType != b.DType {
		raise(l.loc, l.block, "array for buffer %%%s has dtype %s, want %s", b.Name, arr.DType, b.DType)
	}
	// Values must be values of the dtype, or the arithmetic would not be
	// that of the dtype.
	for i, v := range arr.Floats {
		if r := RoundFloat(b.DType, v); r != v && !(math.IsNaN(r) && math.IsNaN(v)) {
			raise(l.loc, l.block, "array for buffer %%%s holds %v at element %d, which is not a value of %s", b.Name, v, i, b.DType)
		}
	}
	for i, v := range arr.Ints {
		if WrapInt(b.DType, v) != v {
			raise(l.loc, l.block, "array for buffer %%%s holds %d at element %d, which is not a value of %s", b.Name, v, i, b.DType)
		}
	}
	shape := l.dims(fr, false)
	if len(arr.Shape) != len(shape) {
		raise(l.loc, l.block, "array for buffer %%%s has shape %s, want %s", b.Name, shapeText(arr.Shape), shapeText(shape))
	}
	for i := range shape {
		if arr.Shape[i] != shape[i] {
			raise(l.loc, l.block, "array for buffer %%%s has shape %s, want %s", b.Name, shapeText(arr.Shape), shapeText(shape))
		}
	}
	return l.bind(fr, arr, shape)
}

// alloc makes a fresh zero-filled dense array for the buffer.
func (l *bufLayout) alloc(fr *frame) *boundBuf {
	shape := l.dims(fr, true)
	return l.bind(fr, NewArray(l.b.DType, shape...), shape)
}

// address compiles the storage offset of an access, checking bounds.
func (c *compiler) address(b *Buffer, idx []Expr) addrFn {
	slot, ok := c.bufs[b]
	if !ok {
		err := errAt(c.loc, c.block, "buffer %%%s is not bound", b.Name)
		return func(*frame) (*boundBuf, int) { panic(runError{err}) }
	}
	// An index that is a variable (the common case) is read from its
	// slot directly, without a closure call.
	fns := make([]intFn, len(idx))
	vars := make([]int, len(idx))
	for i, e := range idx {
		vars[i] = -1
		if v, ok := e.(*Var); ok && v.Type.IsScalar() {
			if s, ok := c.vars[v]; ok {
				vars[i] = s
				continue
			}
		}
		fns[i] = c.intExpr(e)
	}
	loc, block := c.loc, c.block
	return func(fr *frame) (*boundBuf, int) {
		bb := fr.bufs[slot]
		var small [4]int64
		vals := small[:0]
		if len(fns) > len(small) {
			vals = make([]int64, 0, len(fns))
		}
		for i, s := range vars {
			if s >= 0 {
				vals = append(vals, fr.vals[s].i)
			} else {
				vals = append(vals, fns[i](fr))
			}
		}
		off := bb.offset
		for i, v := range vals {
			if v < 0 || v >= bb.shape[i] {
				raise(loc, block, "index %s out of bounds of buffer %%%s with shape %s", shapeText(vals), b.Name, shapeText(bb.shape))
			}
			off += v * bb.strides[i]
		}
		if off < 0 || off >= bb.length() {
			raise(loc, block, "index %s of buffer %%%s addresses element %d outside its %d stored elements", shapeText(vals), b.Name, off, bb.length())
		}
		return bb, int(off)
	}
}

// stmtOrNop compiles s (nil: a no-op).
func (c *compiler) stmtOrNop(s Stmt) stmtFn {
	if s == nil {
		return func(*frame) {}
	}
	return c.stmt(s)
}

func (c *compiler) stmt(s Stmt) stmtFn {
	saved := c.loc
	if l := s.Location(); l.Known() {
		c.loc = l
	}
	defer func() { c.loc = saved }()
	switch x := s.(type) {
	case *SeqStmt:
		fns := make([]stmtFn, 0, len(x.Stmts))
		for _, st := range x.Stmts {
			if st != nil {
				fns = append(fns, c.stmt(st))
			}
		}
		return func(fr *frame) {
			for _, f := range fns {
				f(fr)
			}
		}
	case *For:
		return c.forStmt(x)
	case *BlockRealize:
		return c.realize(x)
	case *BufferStore:
		return c.store(x)
	case *Allocate:
		l := c.layout(x.Buffer)
		slot, restore := c.defineBuf(x.Buffer)
		body := c.stmtOrNop(x.Body)
		restore()
		return func(fr *frame) {
			fr.bufs[slot] = l.alloc(fr)
			body(fr)
			fr.bufs[slot] = nil
		}
	case *IfThenElse:
		cond, then, els := c.intExpr(x.Cond), c.stmtOrNop(x.Then), c.stmtOrNop(x.Else)
		return func(fr *frame) {
			if cond(fr) != 0 {
				then(fr)
			} else {
				els(fr)
			}
		}
	case *LetStmt:
		val := c.scalarExpr(x.Value)
		slot, restore := c.defineVar(x.Var)
		body := c.stmtOrNop(x.Body)
		restore()
		return func(fr *frame) {
			fr.vals[slot] = val(fr)
			body(fr)
		}
	case *Evaluate:
		val := c.scalarExpr(x.Value)
		return func(fr *frame) { val(fr) }
	case *Barrier:
		return func(*frame) {}
	}
	return c.hostStmt(s)
}

func (c *compiler) forStmt(x *For) stmtFn {
	if x.Kind == ThreadBinding && strings.HasPrefix(x.Thread, "threadIdx") {
		if outer, ok := c.lock[x.Thread]; ok {
			return c.ownIteration(x, outer)
		}
		if holdsBarrier(x.Body) {
			return c.lockstepLoop(x)
		}
	}
	lo, ext := c.intExpr(x.Min), c.intExpr(x.Extent)
	slot, restore := c.defineVar(x.Var)
	body := c.stmtOrNop(x.Body)
	restore()
	t := x.Var.Type
	return func(fr *frame) {
		l, n := lo(fr), ext(fr)
		for i := int64(0); i < n; i++ {
			fr.vals[slot] = scalar{i: WrapInt(t, l+i)}
			body(fr)
		}
	}
}

func (c *compiler) store(x *BufferStore) stmtFn {
	addr := c.address(x.Buffer, x.Indices)
	loc, block, name := c.loc, c.block, x.Buffer.Name
	readOnly := func(bb *boundBuf) {
		if bb.readOnly {
			raise(loc, block, "store to constant buffer %%%s", name)
		}
	}
	if x.Buffer.DType.IsFloat() {
		val := c.floatExpr(x.Value)
		return func(fr *frame) {
			bb, off := addr(fr)
			readOnly(bb)
			bb.storeFloat(off, val(fr))
		}
	}
	val := c.intExpr(x.Value)
	return func(fr *frame) {
		bb, off := addr(fr)
		readOnly(bb)
		bb.storeInt(off, val(fr))
	}
}

// iterCheck is a block iteration variable's compiled binding and domain.
type iterCheck struct {
	value, lo, ext intFn
	reduce         bool
	slot           int
	name           string
}

func (c *compiler) realize(r *BlockRealize) stmtFn {
	b := r.Block
	var pred intFn
	if r.Predicate != nil {
		pred = c.intExpr(r.Predicate)
	}
	its := make([]iterCheck, len(b.IterVars))
	for i, iv := range b.IterVars {
		its[i] = iterCheck{value: c.intExpr(r.Values[i]), lo: c.intExpr(iv.Dom.Min), ext: c.intExpr(iv.Dom.Extent), reduce: iv.Kind == Reduce, name: iv.Var.Name}
	}
	var restores []func()
	for i, iv := range b.IterVars {
		var restore func()
		its[i].slot, restore = c.defineVar(iv.Var)
		restores = append(restores, restore)
	}
	outer := c.block
	c.block = b.Name
	loc := c.loc
	allocs := make([]*bufLayout, len(b.Allocs))
	allocSlots := make([]int, len(b.Allocs))
	for i, a := range b.Allocs {
		allocs[i] = c.layout(a)
		var restore func()
		allocSlots[i], restore = c.defineBuf(a)
		restores = append(restores, restore)
	}
	var init stmtFn
	if b.Init != nil {
		init = c.stmt(b.Init)
	}
	body := c.stmtOrNop(b.Body)
	c.block = outer
	for i := len(restores) - 1; i >= 0; i-- {
		restores[i]()
	}
	return func(fr *frame) {
		if pred != nil && pred(fr) == 0 {
			return
		}
		var small [8]int64
		vals := small[:0]
		if len(its) > len(small) {
			vals = make([]int64, 0, len(its))
		}
		first := true
		for i := range its {
			it := &its[i]
			v, lo, ext := it.value(fr), it.lo(fr), it.ext(fr)
			if v < lo || v-lo >= ext {
				raise(loc, b.Name, "iteration variable %%%s = %d is outside its domain [%d, %d)", it.name, v, lo, lo+ext)
			}
			vals = append(vals, v)
			if it.reduce && v != lo {
				first = false
			}
		}
		for i := range its {
			fr.vals[its[i].slot] = scalar{i: vals[i]}
		}
		for i, l := range allocs {
			fr.bufs[allocSlots[i]] = l.alloc(fr)
		}
		if first && init != nil {
			init(fr)
		}
		body(fr)
		for _, s := range allocSlots {
			fr.bufs[s] = nil
		}
	}
}

// scalarExpr compiles an expression of any scalar dtype.
func (c *compiler) scalarExpr(e Expr) func(fr *frame) scalar {
	if e.DType().IsFloat() {
		f := c.floatExpr(e)
		return func(fr *frame) scalar { return scalar{f: f(fr)} }
	}
	i := c.intExpr(e)
	return func(fr *frame) scalar { return scalar{i: i(fr)} }
}

// intExpr compiles an integer (or i1) expression.
func (c *compiler) intExpr(e Expr) intFn {
	if t := e.DType(); !t.IsScalar() {
		return c.failInt("vector dtype %s is not executed by the interpreter", t)
	}
	switch x := e.(type) {
	case *IntImm:
		v := x.Value
		return func(*frame) int64 { return v }
	case *Var:
		slot, ok := c.vars[x]
		if !ok {
			return c.failInt("variable %%%s has no value", x.Name)
		}
		return func(fr *frame) int64 { return fr.vals[slot].i }
	case *Binary:
		return c.intBinary(x)
	case *Not:
		a := c.intExpr(x.X)
		return func(fr *frame) int64 { return b2i(a(fr) == 0) }
	case *Select:
		cond, a, b := c.intExpr(x.Cond), c.intExpr(x.T), c.intExpr(x.F)
		return func(fr *frame) int64 {
			cv, av, bv := cond(fr), a(fr), b(fr)
			if cv != 0 {
				return av
			}
			return bv
		}
	case *Cast:
		t := x.Type
		if x.X.DType().IsFloat() {
			v := c.floatExpr(x.X)
			return func(fr *frame) int64 { return castFloatToInt(t, v(fr)) }
		}
		v := c.intExpr(x.X)
		return func(fr *frame) int64 { return WrapInt(t, v(fr)) }
	case *Call:
		if x.Name == "abs" && len(x.Args) == 1 {
			v, t := c.intExpr(x.Args[0]), x.DType()
			if t.IsUnsigned() {
				return v
			}
			return func(fr *frame) int64 {
				a := v(fr)
				if a < 0 {
					a = -a
				}
				return WrapInt(t, a)
			}
		}
		return c.failInt("intrinsic '%s' on integers", x.Name)
	case *BufferLoad:
		addr := c.address(x.Buffer, x.Indices)
		return func(fr *frame) int64 {
			bb, off := addr(fr)
			return bb.loadInt(off)
		}
	}
	return c.failInt("cannot evaluate %T as an integer", e)
}

func (c *compiler) intBinary(x *Binary) intFn {
	if x.A.DType().IsFloat() {
		a, b, op := c.floatExpr(x.A), c.floatExpr(x.B), x.Op
		return func(fr *frame) int64 { return evalFloatCompare(op, a(fr), b(fr)) }
	}
	a, b, op, t := c.intExpr(x.A), c.intExpr(x.B), x.Op, x.A.DType()
	switch op {
	case OpAdd:
		return func(fr *frame) int64 { return WrapInt(t, a(fr)+b(fr)) }
	case OpSub:
		return func(fr *frame) int64 { return WrapInt(t, a(fr)-b(fr)) }
	case OpMul:
		return func(fr *frame) int64 { return WrapInt(t, a(fr)*b(fr)) }
	case OpLT:
		if t.Kind != UI64 {
			return func(fr *frame) int64 { return b2i(a(fr) < b(fr)) }
		}
	}
	loc, block := c.loc, c.block
	return func(fr *frame) int64 {
		v, err := evalIntBinary(op, t, a(fr), b(fr))
		if err != nil {
			raise(loc, block, "%v in %s", err, ExprString(x))
		}
		return v
	}
}

// floatExpr compiles a float expression, rounding to its dtype after
// each operation.
func (c *compiler) floatExpr(e Expr) floatFn {
	t := e.DType()
	if !t.IsScalar() {
		return c.failFloat("vector dtype %s is not executed by the interpreter", t)
	}
	switch x := e.(type) {
	case *FloatImm:
		v := x.Value
		return func(*frame) float64 { return v }
	case *Var:
		slot, ok := c.vars[x]
		if !ok {
			return c.failFloat("variable %%%s has no value", x.Name)
		}
		return func(fr *frame) float64 { return fr.vals[slot].f }
	case *Binary:
		a, b, op := c.floatExpr(x.A), c.floatExpr(x.B), x.Op
		switch op {
		case OpAdd:
			return func(fr *frame) float64 { return RoundFloat(t, a(fr)+b(fr)) }
		case OpMul:
			return func(fr *frame) float64 { return RoundFloat(t, a(fr)*b(fr)) }
		}
		return func(fr *frame) float64 { return evalFloatBinary(op, t, a(fr), b(fr)) }
	case *Select:
		cond, a, b := c.intExpr(x.Cond), c.floatExpr(x.T), c.floatExpr(x.F)
		return func(fr *frame) float64 {
			cv, av, bv := cond(fr), a(fr), b(fr)
			if cv != 0 {
				return av
			}
			return bv
		}
	case *Cast:
		if x.X.DType().IsFloat() {
			v := c.floatExpr(x.X)
			return func(fr *frame) float64 { return RoundFloat(t, v(fr)) }
		}
		v := c.intExpr(x.X)
		from := x.X.DType()
		return func(fr *frame) float64 { return castIntToFloat(from, t, v(fr)) }
	case *Call:
		intr, ok := Intrinsics[x.Name]
		if !ok {
			return c.failFloat("unknown intrinsic '%s'", x.Name)
		}
		args := make([]floatFn, len(x.Args))
		for i, a := range x.Args {
			args[i] = c.floatExpr(a)
		}
		return func(fr *frame) float64 {
			vals := make([]float64, len(args))
			for i, a := range args {
				vals[i] = a(fr)
			}
			return RoundFloat(t, intr.Compute(vals))
		}
	case *BufferLoad:
		addr := c.address(x.Buffer, x.Indices)
		return func(fr *frame) float64 {
			bb, off := addr(fr)
			return bb.loadFloat(off)
		}
	}
	return c.failFloat("cannot evaluate %T as a float", e)
}
