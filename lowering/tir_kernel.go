package lowering

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// This file builds one kernel PrimFunc from one hlo.fusion, TE-style: one
// block per hlo op over a full loop nest, each writing its own buffer.
// What each op computes is its registered lowering (hlo.Lower, beside the
// op's definition); this file only lays the blocks out, with their
// buffers and constants.

// tensorOf returns v's tensor type and tensor IR dtype, or a diagnostic at op.
func tensorOf(op *graphir.Op, v *graphir.Value) (*graphir.TensorType, tir.DType, error) {
	if v == nil {
		return nil, tir.DType{}, op.Errorf("has a null operand or result")
	}
	t, ok := v.Type.(*graphir.TensorType)
	if !ok {
		return nil, tir.DType{}, op.Errorf("lower-to-tir: expected a tensor, got %s", v.Type)
	}
	dt, ok := hlo.TIRDType(t.Elem)
	if !ok {
		return nil, tir.DType{}, op.Errorf("lower-to-tir: element type %s has no tensor IR dtype", t.Elem)
	}
	return t, dt, nil
}

// bufferFor makes a global row-major buffer for a tensor type.
func bufferFor(name string, t *graphir.TensorType, dt tir.DType) *tir.Buffer {
	return tir.NewBuffer(name, dt, t.Shape...)
}

// kernel accumulates the PrimFunc of one fusion.
type kernel struct {
	f       *tir.PrimFunc
	vals    map[*graphir.Value]*tir.Operand
	blocks  []tir.Stmt    // block loop nests in program order
	allocs  []*tir.Buffer // intermediate buffers (tir.allocate, local)
	consts  []*tir.AllocateConst
	names   map[string]int // block names used
	bufs    map[string]int // buffer names used
	loc     tir.Location
	current *graphir.Op // op being lowered, for diagnostics
	// syms holds the kernel's symbolic dimensions (its scalar parameters).
	syms *symScope
	// opaque is set when an op with a Kernel lowering built the body; the
	// kernel is then marked tensorir.AttrRecurrence.
	opaque bool
}

func (k *kernel) uniqueBlock(base string) string {
	n := k.names[base]
	k.names[base] = n + 1
	if n == 0 {
		return base
	}
	return base + "_" + strconv.Itoa(n)
}

func (k *kernel) uniqueBuffer(base string) string {
	for {
		n := k.bufs[base]
		k.bufs[base] = n + 1
		name := base + strconv.Itoa(n)
		if k.f.Param(name) == nil {
			return name
		}
	}
}

// blockName is the op name without its dialect ("hlo.add" → "add").
func blockName(op *graphir.Op) string {
	if i := strings.IndexByte(op.Name, '.'); i >= 0 {
		return op.Name[i+1:]
	}
	return op.Name
}

// emit adds the block computing c into out, named after base (made
// unique).
func (k *kernel) emit(base string, loc tir.Location, out *tir.Buffer, c *tir.Compute) {
	c.Extents = extentsOf(out, c)
	if s := c.Block(k.uniqueBlock(base), out, loc); s != nil {
		k.blocks = append(k.blocks, s)
	}
}

// copyBlock copies src into out (named "copy").
func (k *kernel) copyBlock(src *tir.Operand, out *tir.Buffer, loc tir.Location) {
	k.emit("copy", loc, out, &tir.Compute{Shape: src.Shape, Body: func(n tir.Nest, _ tir.Expr) tir.Expr { return src.At(n.Index()...) }})
}

// lowerOp emits the block of one op of a fusion region (a constant
// becomes an immediate or a tir.constant instead).
func (k *kernel) lowerOp(op *graphir.Op, outFor map[*graphir.Value]*tir.Buffer) error {
	if op.Name == hlo.ConstantOp {
		return k.constOperand(op)
	}
	if syms := graphir.OpSymbols(op); syms != nil && !hlo.LowersSymbolic(op.Name) {
		return errorAt(op, "'%s' %s", op.Name, graphir.NotSymbolicYet(syms))
	}
	if low, ok := hlo.LoweringOf(op.Name); ok && low.Kernel != nil {
		return k.lowerKernelOp(op, low, outFor)
	}
	if len(op.Results) != 1 {
		return errorAt(op, "'%s' with %d results cannot be lowered", op.Name, len(op.Results))
	}
	ins := make([]*tir.Operand, op.NumOperands())
	for i := range ins {
		o, err := k.in(op, i)
		if err != nil {
			return err
		}
		ins[i] = o
	}
	out, _, err := k.result(op, 0, outFor)
	if err != nil {
		return err
	}
	c, err := hlo.Lower(op, ins, out.DType)
	if err != nil {
		return err
	}
	if err := checkSymbolicReduce(op, c); err != nil {
		return err
	}
	k.emit(blockName(op), op.Loc, out, c)
	return nil
}

// checkSymbolicReduce refuses a computation that reduces over a symbolic
// dimension without giving its extent (Compute.ReduceExtents).
func checkSymbolicReduce(op *graphir.Op, c *tir.Compute) error {
	if c.ReduceExtents != nil {
		return nil
	}
	for _, r := range c.Reduce {
		if r < 0 {
			return errorAt(op, "a reduction over a symbolic dimension does not lower to tensor IR yet; pin its symbols with --fix-dim")
		}
	}
	return nil
}

// extentsOf is the spatial extents a computation c into out runs over:
// c.Extents, else out's shape when it is symbolic (nil: c.Shape's
// constants).
func extentsOf(out *tir.Buffer, c *tir.Compute) []tir.Expr {
	if _, static := out.ConstShape(); !static && c.Extents == nil && c.Out == nil {
		return out.Shape
	}
	return c.Extents
}

// lowerFusion builds the kernel of one hlo.fusion named name.
func lowerFusion(op *graphir.Op, name string) (*tir.PrimFunc, error) {
	if len(op.Regions) != 1 || len(op.Regions[0].Blocks) != 1 {
		return nil, op.Errorf("lower-to-tir: fusion must have one region with one block")
	}
	body := op.Regions[0].Blocks[0]
	loc := op.Loc
	k := &kernel{
		f:     &tir.PrimFunc{Name: name, Attrs: tir.Attrs{tir.AttrKernel: tir.UnitAttr{}}, Loc: loc},
		vals:  map[*graphir.Value]*tir.Operand{},
		names: map[string]int{}, bufs: map[string]int{}, loc: loc,
		syms: newSymScope(),
	}
	k.syms.valueSymbols(body)
	k.f.Params = k.syms.params(loc)
	for i, a := range body.Args {
		t, dt, err := tensorOf(op, a)
		if err != nil {
			return nil, err
		}
		b := k.syms.buffer("in"+strconv.Itoa(i), t, dt)
		b.Loc = loc
		k.f.Params = append(k.f.Params, &tir.Param{Buffer: b, Role: tir.RoleIn, Loc: loc})
		k.vals[a] = &tir.Operand{Buffer: b, Shape: t.Shape, DType: dt}
	}
	ret := body.Last()
	if ret == nil || ret.Name != hlo.ReturnOp {
		return nil, op.Errorf("lower-to-tir: fusion region must end with hlo.return")
	}
	// Output parameters; an op whose result is returned writes straight
	// into its output (the first time the value is returned).
	outFor := map[*graphir.Value]*tir.Buffer{}
	var outs []*tir.Buffer
	for i, v := range ret.Operands() {
		t, dt, err := tensorOf(ret, v)
		if err != nil {
			return nil, err
		}
		b := k.syms.buffer("out"+strconv.Itoa(i), t, dt)
		b.Loc = loc
		k.f.Params = append(k.f.Params, &tir.Param{Buffer: b, Role: tir.RoleOut, Loc: loc})
		outs = append(outs, b)
		if _, done := outFor[v]; !done && v.Def != nil && v.Def.Block == body && v.Def.Name != hlo.ConstantOp {
			outFor[v] = b
		}
	}
	for o := body.First(); o != nil && o != ret; o = o.Next() {
		k.current = o
		if err := k.lowerOp(o, outFor); err != nil {
			return nil, err
		}
	}
	// Results that are not written by their producer: copies.
	for i, v := range ret.Operands() {
		if outFor[v] == outs[i] {
			continue
		}
		src, ok := k.vals[v]
		if !ok {
			return nil, ret.Errorf("lower-to-tir: returned value #%d is not defined in the fusion", i)
		}
		k.copyBlock(src, outs[i], ret.Loc)
	}
	k.f.Body = k.assemble()
	k.f = tir.SimplifyFunc(k.f)
	if err := tir.VerifyFunc(k.f); err != nil {
		return nil, op.Errorf("lower-to-tir: internal error: generated kernel @%s does not verify: %v", name, err)
	}
	if k.opaque {
		k.f.Attrs[tir.AttrRecurrence] = tir.UnitAttr{}
	}
	markPad(k.f, body)
	return k.f, nil
}

// markPad gives a kernel that only pads its one input with a constant
// (an hlo.pad of the fusion's argument by a scalar hlo.constant, edge
// padding ≥ 0, no interior padding, static shapes: explicit-conv-padding's
// kernels) the attributes tir.AttrPadLow and tir.AttrPadValue, which
// pad-in-place reads.
func markPad(f *tir.PrimFunc, body *graphir.Block) {
	ret := body.Last()
	if len(body.Args) != 1 || len(ret.Operands()) != 1 {
		return
	}
	pad := ret.Operand(0).Def
	if pad == nil || pad.Name != hlo.PadOp || pad.Operand(0) != body.Args[0] {
		return
	}
	in, ok := body.Args[0].Type.(*graphir.TensorType)
	if !ok || !in.IsStatic() {
		return
	}
	value, ok := padValue(pad.Operand(1))
	if !ok {
		return
	}
	for o := body.First(); o != ret; o = o.Next() {
		if o != pad && o != pad.Operand(1).Def {
			return
		}
	}
	lo, hi, interior, err := hlo.PadAmounts(pad)
	if err != nil {
		return
	}
	low := make(tir.ArrayAttr, len(lo))
	for d := range lo {
		if lo[d] < 0 || hi[d] < 0 || interior[d] != 0 {
			return
		}
		low[d] = tir.IntAttr(lo[d])
	}
	f.Attrs[tir.AttrPadLow] = low
	f.Attrs[tir.AttrPadValue] = value
}

// padValue is the value of a scalar hlo.constant: an IntAttr for an
// integer one, a FloatAttr for a float one.
func padValue(v *graphir.Value) (tir.Attr, bool) {
	c := v.Def
	if c == nil || c.Name != hlo.ConstantOp {
		return nil, false
	}
	d, ok := c.Attr("value").(*graphir.DenseElementsAttr)
	if !ok || d.Len() != 1 {
		return nil, false
	}
	if d.Ints != nil {
		return tir.IntAttr(d.Ints[0]), true
	}
	return tir.FloatAttr(d.At(0)), true
}

// assemble nests the block loop nests in the intermediate allocations and
// constants.
func (k *kernel) assemble() tir.Stmt {
	var s tir.Stmt = tir.Seq(k.blocks...)
	if len(k.blocks) == 0 {
		s = &tir.SeqStmt{Loc: k.loc}
	}
	for i := len(k.allocs) - 1; i >= 0; i-- {
		s = &tir.Allocate{Buffer: k.allocs[i], Body: s, Loc: k.allocs[i].Loc}
	}
	for i := len(k.consts) - 1; i >= 0; i-- {
		c := k.consts[i]
		c.Body = s
		s = c
	}
	return s
}

// result gives the buffer op's result i is written to: its output
// parameter when returned, else a new local intermediate.
func (k *kernel) result(op *graphir.Op, i int, outFor map[*graphir.Value]*tir.Buffer) (*tir.Buffer, *graphir.TensorType, error) {
	v := op.Results[i]
	t, dt, err := tensorOf(op, v)
	if err != nil {
		return nil, nil, err
	}
	b := outFor[v]
	if b == nil {
		b = k.syms.buffer(k.uniqueBuffer("t"), t, dt)
		b.Scope = tir.ScopeLocal
		b.Loc = op.Loc
		k.allocs = append(k.allocs, b)
	}
	k.vals[v] = &tir.Operand{Buffer: b, Shape: t.Shape, DType: dt}
	return b, t, nil
}

// in returns the operand for op's operand i.
func (k *kernel) in(op *graphir.Op, i int) (*tir.Operand, error) {
	if i >= op.NumOperands() {
		return nil, op.Errorf("lower-to-tir: expects operand #%d", i)
	}
	o, ok := k.vals[op.Operand(i)]
	if !ok {
		return nil, op.Errorf("lower-to-tir: operand #%d is defined outside the fusion", i)
	}
	return o, nil
}

// constOperand lowers an hlo.constant inside a fusion: a splat becomes an
// immediate, other data a tir.constant buffer of the kernel.
func (k *kernel) constOperand(op *graphir.Op) error {
	d, ok := op.Attr("value").(*graphir.DenseElementsAttr)
	if !ok {
		return op.Errorf("lower-to-tir: constant without a dense value")
	}
	t, dt, err := tensorOf(op, op.Results[0])
	if err != nil {
		return err
	}
	if d.Elided {
		return op.Errorf("lower-to-tir: constant data %s", graphir.ElidedHint)
	}
	if d.Len() == 0 && t.NumElements() > 0 {
		return op.Errorf("lower-to-tir: constant has no data")
	}
	if d.IsSplat() || t.NumElements() == 1 {
		k.vals[op.Results[0]] = &tir.Operand{Splat: tir.Imm(dt, d.At(0)), Shape: t.Shape, DType: dt}
		return nil
	}
	c, err := constStmt(op, k.uniqueBuffer("c"), t, dt, d)
	if err != nil {
		return err
	}
	k.consts = append(k.consts, c)
	k.vals[op.Results[0]] = &tir.Operand{Buffer: c.Buffer, Shape: t.Shape, DType: dt}
	return nil
}

// constStmt makes a tir.constant (its body is set by the caller) holding
// d's data row-major.
func constStmt(op *graphir.Op, name string, t *graphir.TensorType, dt tir.DType, d *graphir.DenseElementsAttr) (*tir.AllocateConst, error) {
	b := bufferFor(name, t, dt)
	b.Loc = op.Loc
	c := &tir.AllocateConst{Buffer: b, Loc: op.Loc}
	if d.Elided {
		c.Elided = true
		return c, nil
	}
	n := t.NumElements()
	if n > maxConstElements {
		return nil, op.Errorf("lower-to-tir: constant of %d elements is too large to embed (at most %d)", n, int64(maxConstElements))
	}
	if dt.IsFloat() && int64(len(d.Floats)) == n && rounded(dt, d.Floats) {
		c.Floats = d.Floats // shared, not copied: constant data is never changed in place
		return c, nil
	}
	if d.Raw != nil && int64(d.Len()) == n && dt.Format() == d.Type.Elem.Format() {
		c.Raw = d.Raw // shared too: the same storage bytes at both levels
		return c, nil
	}
	vals := d.Values()
	if int64(len(vals)) != n {
		if len(vals) != 1 {
			return nil, op.Errorf("lower-to-tir: constant has %d values for %d elements", len(vals), n)
		}
		splat := vals[0]
		vals = make([]float64, n)
		for i := range vals {
			vals[i] = splat
		}
	}
	if dt.IsFloat() { // vals is a fresh slice (Values copies): round it in place
		for i, v := range vals {
			vals[i] = tir.RoundFloat(dt, v)
		}
		c.Floats = vals
	} else {
		c.Ints = make([]int64, n)
		for i, v := range vals {
			c.Ints[i] = tir.WrapInt(dt, int64(v))
		}
	}
	return c, nil
}

// rounded reports whether every value is exactly representable in dt.
func rounded(dt tir.DType, vals []float64) bool {
	for _, v := range vals {
		if r := tir.RoundFloat(dt, v); r != v && r == r {
			return false
		}
	}
	return true
}

// maxConstElements bounds the data of one embedded constant (1 GiB of
// f32).
const maxConstElements = 1 << 28

func errorAt(op *graphir.Op, format string, args ...any) error {
	return op.Errorf("lower-to-tir: %s", fmt.Sprintf(format, args...))
}
