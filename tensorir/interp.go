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
func runFunc(m *Module, f *PrimFunc, args Args) error {
	in := &interp{vals: map[*Var]scalar{}, bufs: map[*Buffer]*boundBuf{}, loc: f.Loc, mod: m}
	for _, p := range f.Params {
		in.loc = p.Loc
		if p.Var != nil {
			if p.Var.Type.IsFloat() {
				v, ok := args.Floats[p.Var.Name]
				if !ok {
					return in.errorf("missing value for scalar parameter %%%s", p.Var.Name)
				}
				in.vals[p.Var] = scalar{f: RoundFloat(p.Var.Type, v)}
			} else {
				v, ok := args.Ints[p.Var.Name]
				if !ok {
					return in.errorf("missing value for scalar parameter %%%s", p.Var.Name)
				}
				in.vals[p.Var] = scalar{i: WrapInt(p.Var.Type, v)}
			}
		}
	}
	for _, p := range f.Params {
		in.loc = p.Loc
		if p.Buffer == nil {
			continue
		}
		arr, ok := args.Arrays[p.Buffer.Name]
		if !ok || arr == nil {
			return in.errorf("missing array for buffer parameter %%%s", p.Buffer.Name)
		}
		if err := in.bind(p.Buffer, arr); err != nil {
			return err
		}
	}
	in.loc = f.Loc
	return in.stmt(f.Body)
}

type scalar struct {
	i int64
	f float64
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

type interp struct {
	vals   map[*Var]scalar
	bufs   map[*Buffer]*boundBuf
	blocks []string
	loc    Location
	mod    *Module // resolves tir.call; nil outside RunModule
	depth  int     // tir.call nesting
}

func (in *interp) errorf(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if n := len(in.blocks); n > 0 {
		msg += " in block '" + in.blocks[n-1] + "'"
	}
	return Diagnostics{Errorf(in.loc, "%s", msg)}
}

func shapeText(s []int64) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = strconv.FormatInt(d, 10)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// bind checks arr against b's dtype and shape and records its layout.
func (in *interp) bind(b *Buffer, arr *Array) error {
	if arr.DType != b.DType {
		return in.errorf("array for buffer %%%s has dtype %s, want %s", b.Name, arr.DType, b.DType)
	}
	// Values must be values of the dtype, or the arithmetic would not be
	// that of the dtype.
	for i, v := range arr.Floats {
		if r := RoundFloat(b.DType, v); r != v && !(math.IsNaN(r) && math.IsNaN(v)) {
			return in.errorf("array for buffer %%%s holds %v at element %d, which is not a value of %s", b.Name, v, i, b.DType)
		}
	}
	for i, v := range arr.Ints {
		if WrapInt(b.DType, v) != v {
			return in.errorf("array for buffer %%%s holds %d at element %d, which is not a value of %s", b.Name, v, i, b.DType)
		}
	}
	bb := &boundBuf{arr: arr, shape: make([]int64, len(b.Shape))}
	for i, d := range b.Shape {
		v, err := in.evalInt(d)
		if err != nil {
			return err
		}
		if v < 0 {
			return in.errorf("buffer %%%s: dimension %d is negative (%d)", b.Name, i, v)
		}
		bb.shape[i] = v
	}
	if len(arr.Shape) != len(bb.shape) {
		return in.errorf("array for buffer %%%s has shape %s, want %s", b.Name, shapeText(arr.Shape), shapeText(bb.shape))
	}
	for i := range bb.shape {
		if arr.Shape[i] != bb.shape[i] {
			return in.errorf("array for buffer %%%s has shape %s, want %s", b.Name, shapeText(arr.Shape), shapeText(bb.shape))
		}
	}
	bb.strides = make([]int64, len(bb.shape))
	if b.Strides != nil {
		for i, s := range b.Strides {
			v, err := in.evalInt(s)
			if err != nil {
				return err
			}
			bb.strides[i] = v
		}
	} else {
		st := int64(1)
		for i := len(bb.shape) - 1; i >= 0; i-- {
			bb.strides[i] = st
			st *= bb.shape[i]
		}
	}
	if b.ElemOffset != nil {
		v, err := in.evalInt(b.ElemOffset)
		if err != nil {
			return err
		}
		bb.offset = v
	}
	in.bufs[b] = bb
	return nil
}

// alloc binds a fresh zero-filled dense array to b.
func (in *interp) alloc(b *Buffer) error {
	shape := make([]int64, len(b.Shape))
	n := int64(1)
	for i, d := range b.Shape {
		v, err := in.evalInt(d)
		if err != nil {
			return err
		}
		if v < 0 {
			return in.errorf("buffer %%%s: dimension %d is negative (%d)", b.Name, i, v)
		}
		if v > 0 && n > (1<<31)/v {
			return in.errorf("buffer %%%s: allocation of shape %s is too large for the interpreter", b.Name, shapeText(shape))
		}
		shape[i] = v
		n *= v
	}
	return in.bind(b, NewArray(b.DType, shape...))
}

// address computes the storage offset of an access, checking bounds.
func (in *interp) address(b *Buffer, idx []Expr) (*boundBuf, int, error) {
	bb, ok := in.bufs[b]
	if !ok {
		return nil, 0, in.errorf("buffer %%%s is not bound", b.Name)
	}
	vals := make([]int64, len(idx))
	for i, e := range idx {
		v, err := in.evalInt(e)
		if err != nil {
			return nil, 0, err
		}
		vals[i] = v
	}
	off := bb.offset
	for i, v := range vals {
		if v < 0 || v >= bb.shape[i] {
			return nil, 0, in.errorf("index %s out of bounds of buffer %%%s with shape %s", shapeText(vals), b.Name, shapeText(bb.shape))
		}
		off += v * bb.strides[i]
	}
	if off < 0 || off >= bb.length() {
		return nil, 0, in.errorf("index %s of buffer %%%s addresses element %d outside its %d stored elements", shapeText(vals), b.Name, off, bb.length())
	}
	return bb, int(off), nil
}

func (in *interp) stmt(s Stmt) error {
	if s == nil {
		return nil
	}
	saved := in.loc
	if l := s.Location(); l.Known() {
		in.loc = l
	}
	defer func() { in.loc = saved }()
	switch x := s.(type) {
	case *SeqStmt:
		for _, c := range x.Stmts {
			if err := in.stmt(c); err != nil {
				return err
			}
		}
	case *For:
		lo, err := in.evalInt(x.Min)
		if err != nil {
			return err
		}
		ext, err := in.evalInt(x.Extent)
		if err != nil {
			return err
		}
		for i := int64(0); i < ext; i++ {
			in.vals[x.Var] = scalar{i: WrapInt(x.Var.Type, lo+i)}
			if err := in.stmt(x.Body); err != nil {
				return err
			}
		}
		delete(in.vals, x.Var)
	case *BlockRealize:
		return in.realize(x)
	case *BufferStore:
		bb, off, err := in.address(x.Buffer, x.Indices)
		if err != nil {
			return err
		}
		if bb.readOnly {
			return in.errorf("store to constant buffer %%%s", x.Buffer.Name)
		}
		if x.Buffer.DType.IsFloat() {
			v, err := in.evalFloat(x.Value)
			if err != nil {
				return err
			}
			bb.storeFloat(off, v)
		} else {
			v, err := in.evalInt(x.Value)
			if err != nil {
				return err
			}
			bb.storeInt(off, v)
		}
	case *Allocate:
		if err := in.alloc(x.Buffer); err != nil {
			return err
		}
		err := in.stmt(x.Body)
		delete(in.bufs, x.Buffer)
		return err
	case *IfThenElse:
		c, err := in.evalInt(x.Cond)
		if err != nil {
			return err
		}
		if c != 0 {
			return in.stmt(x.Then)
		}
		return in.stmt(x.Else)
	case *LetStmt:
		v, err := in.eval(x.Value)
		if err != nil {
			return err
		}
		in.vals[x.Var] = v
		err = in.stmt(x.Body)
		delete(in.vals, x.Var)
		return err
	case *Evaluate:
		_, err := in.eval(x.Value)
		return err
	default:
		return in.hostStmt(s)
	}
	return nil
}

func (in *interp) realize(r *BlockRealize) error {
	b := r.Block
	if r.Predicate != nil {
		p, err := in.evalInt(r.Predicate)
		if err != nil {
			return err
		}
		if p == 0 {
			return nil
		}
	}
	vals := make([]int64, len(b.IterVars))
	first := true
	for i, iv := range b.IterVars {
		v, err := in.evalInt(r.Values[i])
		if err != nil {
			return err
		}
		lo, err := in.evalInt(iv.Dom.Min)
		if err != nil {
			return err
		}
		ext, err := in.evalInt(iv.Dom.Extent)
		if err != nil {
			return err
		}
		if v < lo || v-lo >= ext {
			in.blocks = append(in.blocks, b.Name)
			err := in.errorf("iteration variable %%%s = %d is outside its domain [%d, %d)", iv.Var.Name, v, lo, lo+ext)
			in.blocks = in.blocks[:len(in.blocks)-1]
			return err
		}
		vals[i] = v
		if iv.Kind == Reduce && v != lo {
			first = false
		}
	}
	for i, iv := range b.IterVars {
		in.vals[iv.Var] = scalar{i: vals[i]}
	}
	in.blocks = append(in.blocks, b.Name)
	err := in.blockBody(b, first)
	in.blocks = in.blocks[:len(in.blocks)-1]
	for _, iv := range b.IterVars {
		delete(in.vals, iv.Var)
	}
	return err
}

func (in *interp) blockBody(b *Block, first bool) error {
	for _, a := range b.Allocs {
		if err := in.alloc(a); err != nil {
			return err
		}
	}
	defer func() {
		for _, a := range b.Allocs {
			delete(in.bufs, a)
		}
	}()
	if first && b.Init != nil {
		if err := in.stmt(b.Init); err != nil {
			return err
		}
	}
	return in.stmt(b.Body)
}

func (in *interp) eval(e Expr) (scalar, error) {
	if e.DType().IsFloat() {
		f, err := in.evalFloat(e)
		return scalar{f: f}, err
	}
	i, err := in.evalInt(e)
	return scalar{i: i}, err
}

func (in *interp) checkScalar(e Expr) error {
	if t := e.DType(); !t.IsScalar() {
		return in.errorf("vector dtype %s is not executed by the interpreter", t)
	}
	return nil
}

// evalInt evaluates an integer (or i1) expression.
func (in *interp) evalInt(e Expr) (int64, error) {
	if err := in.checkScalar(e); err != nil {
		return 0, err
	}
	switch x := e.(type) {
	case *IntImm:
		return x.Value, nil
	case *Var:
		v, ok := in.vals[x]
		if !ok {
			return 0, in.errorf("variable %%%s has no value", x.Name)
		}
		return v.i, nil
	case *Binary:
		if x.A.DType().IsFloat() {
			a, err := in.evalFloat(x.A)
			if err != nil {
				return 0, err
			}
			b, err := in.evalFloat(x.B)
			if err != nil {
				return 0, err
			}
			return evalFloatCompare(x.Op, a, b), nil
		}
		a, err := in.evalInt(x.A)
		if err != nil {
			return 0, err
		}
		b, err := in.evalInt(x.B)
		if err != nil {
			return 0, err
		}
		v, err := evalIntBinary(x.Op, x.A.DType(), a, b)
		if err != nil {
			return 0, in.errorf("%v in %s", err, ExprString(x))
		}
		return v, nil
	case *Not:
		a, err := in.evalInt(x.X)
		return b2i(a == 0), err
	case *Select:
		c, err := in.evalInt(x.Cond)
		if err != nil {
			return 0, err
		}
		a, err := in.evalInt(x.T)
		if err != nil {
			return 0, err
		}
		b, err := in.evalInt(x.F)
		if err != nil {
			return 0, err
		}
		if c != 0 {
			return a, nil
		}
		return b, nil
	case *Cast:
		if x.X.DType().IsFloat() {
			v, err := in.evalFloat(x.X)
			return castFloatToInt(x.Type, v), err
		}
		v, err := in.evalInt(x.X)
		return WrapInt(x.Type, v), err
	case *Call:
		if x.Name == "abs" && len(x.Args) == 1 {
			v, err := in.evalInt(x.Args[0])
			if v < 0 {
				v = -v
			}
			return WrapInt(x.DType(), v), err
		}
		return 0, in.errorf("intrinsic '%s' on integers", x.Name)
	case *BufferLoad:
		bb, off, err := in.address(x.Buffer, x.Indices)
		if err != nil {
			return 0, err
		}
		return bb.loadInt(off), nil
	}
	return 0, in.errorf("cannot evaluate %T as an integer", e)
}

// evalFloat evaluates a float expression, rounding to its dtype after
// each operation.
func (in *interp) evalFloat(e Expr) (float64, error) {
	if err := in.checkScalar(e); err != nil {
		return 0, err
	}
	t := e.DType()
	switch x := e.(type) {
	case *FloatImm:
		return x.Value, nil
	case *Var:
		v, ok := in.vals[x]
		if !ok {
			return 0, in.errorf("variable %%%s has no value", x.Name)
		}
		return v.f, nil
	case *Binary:
		a, err := in.evalFloat(x.A)
		if err != nil {
			return 0, err
		}
		b, err := in.evalFloat(x.B)
		if err != nil {
			return 0, err
		}
		return evalFloatBinary(x.Op, t, a, b), nil
	case *Select:
		c, err := in.evalInt(x.Cond)
		if err != nil {
			return 0, err
		}
		a, err := in.evalFloat(x.T)
		if err != nil {
			return 0, err
		}
		b, err := in.evalFloat(x.F)
		if err != nil {
			return 0, err
		}
		if c != 0 {
			return a, nil
		}
		return b, nil
	case *Cast:
		if x.X.DType().IsFloat() {
			v, err := in.evalFloat(x.X)
			return RoundFloat(t, v), err
		}
		v, err := in.evalInt(x.X)
		return castIntToFloat(t, v), err
	case *Call:
		intr, ok := Intrinsics[x.Name]
		if !ok {
			return 0, in.errorf("unknown intrinsic '%s'", x.Name)
		}
		args := make([]float64, len(x.Args))
		for i, a := range x.Args {
			v, err := in.evalFloat(a)
			if err != nil {
				return 0, err
			}
			args[i] = v
		}
		return RoundFloat(t, intr.Compute(args)), nil
	case *BufferLoad:
		bb, off, err := in.address(x.Buffer, x.Indices)
		if err != nil {
			return 0, err
		}
		return bb.loadFloat(off), nil
	}
	return math.NaN(), in.errorf("cannot evaluate %T as a float", e)
}
