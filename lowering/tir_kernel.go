package lowering

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tessera-ml/tessera/graphir"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// This file builds one kernel PrimFunc from one hlo.fusion, TE-style: one
// block per hlo op over a full loop nest, each writing its own buffer.
// The per-op index arithmetic lives in tir_ops.go, the scalar semantics of
// elementwise ops in tir_scalar.go.

// tirDType maps a graphir element type to the tensor IR dtype.
func tirDType(d graphir.DType) (tir.DType, bool) {
	switch d {
	case graphir.F32:
		return tir.DF32, true
	case graphir.F16:
		return tir.DF16, true
	case graphir.BF16:
		return tir.DBF16, true
	case graphir.F64:
		return tir.DF64, true
	case graphir.I1:
		return tir.DBool, true
	case graphir.I8:
		return tir.DI8, true
	case graphir.I32:
		return tir.DI32, true
	case graphir.I64:
		return tir.DI64, true
	}
	return tir.DType{}, false
}

// tensorOf returns v's tensor type and tensor IR dtype, or a diagnostic at op.
func tensorOf(op *graphir.Op, v *graphir.Value) (*graphir.TensorType, tir.DType, error) {
	if v == nil {
		return nil, tir.DType{}, op.Errorf("has a null operand or result")
	}
	t, ok := v.Type.(*graphir.TensorType)
	if !ok {
		return nil, tir.DType{}, op.Errorf("lower-to-tir: expected a tensor, got %s", v.Type)
	}
	dt, ok := tirDType(t.Elem)
	if !ok {
		return nil, tir.DType{}, op.Errorf("lower-to-tir: element type %s has no tensor IR dtype", t.Elem)
	}
	return t, dt, nil
}

// bufferFor makes a global row-major buffer for a tensor type.
func bufferFor(name string, t *graphir.TensorType, dt tir.DType) *tir.Buffer {
	return tir.NewBuffer(name, dt, t.Shape...)
}

// operand is how a block reads a value of the fusion: a buffer (an input
// parameter, an intermediate or an output) or a splat constant.
type operand struct {
	buf   *tir.Buffer
	splat tir.Expr // the immediate of a one-value constant
	shape []int64
	dt    tir.DType
}

// at reads the operand at the given indices.
func (o *operand) at(idx ...tir.Expr) tir.Expr {
	if o.splat != nil {
		return o.splat
	}
	return tir.Load(o.buf, idx...)
}

// kernel accumulates the PrimFunc of one fusion.
type kernel struct {
	f       *tir.PrimFunc
	vals    map[*graphir.Value]*operand
	blocks  []tir.Stmt    // block loop nests in program order
	allocs  []*tir.Buffer // intermediate buffers (tir.allocate, local)
	consts  []*tir.AllocateConst
	names   map[string]int // block names used
	bufs    map[string]int // buffer names used
	loc     tir.Location
	current *graphir.Op // op being lowered, for diagnostics
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

// nest describes the loops of one block: spatial loops over the output
// shape, then reduce loops.
type nest struct {
	spatial []*tir.Var // block iteration variables, one per output dim
	reduce  []*tir.Var
}

// computeBlock emits the loop nest and block computing out over its whole
// shape. body gets the iteration variables and the accumulator and
// returns the stored value. With an init (a reduction), the block's init
// stores init and body's value is the update of the accumulator (out at
// the spatial variables); without reduce variables the accumulator is
// init itself, and a reduction over an empty domain stores init. Without
// an init the accumulator is nil. A zero-sized output emits nothing.
func (k *kernel) computeBlock(op *graphir.Op, out *tir.Buffer, shape, redExtents []int64,
	init func(n nest) tir.Expr, body func(n nest, acc tir.Expr) tir.Expr) {
	k.computeNamed(blockName(op), op.Loc, out, shape, redExtents, init, body)
}

// copyBlock copies src into out (named "copy").
func (k *kernel) copyBlock(src *operand, out *tir.Buffer, loc tir.Location) {
	k.computeNamed("copy", loc, out, src.shape, nil, nil, func(n nest, _ tir.Expr) tir.Expr { return src.at(varsOf(n.spatial)...) })
}

// computeNamed is computeBlock for a block name (made unique) and location.
func (k *kernel) computeNamed(base string, loc tir.Location, out *tir.Buffer, shape, redExtents []int64,
	init func(n nest) tir.Expr, body func(n nest, acc tir.Expr) tir.Expr) {
	for _, d := range shape {
		if d == 0 {
			return
		}
	}
	update := body
	if init != nil {
		zero := false
		for _, e := range redExtents {
			zero = zero || e == 0
		}
		init0 := init
		switch {
		case zero: // nothing to reduce: the result is init
			update = func(n nest, _ tir.Expr) tir.Expr { return init0(n) }
			redExtents, init = nil, nil
		case len(redExtents) == 0: // one element: body(init, x)
			update = func(n nest, _ tir.Expr) tir.Expr { return body(n, init0(n)) }
			init = nil
		}
	}
	name := k.uniqueBlock(base)
	var n nest
	var loops []*tir.Var
	blk := &tir.Block{Name: name, Loc: loc}
	var values []tir.Expr
	for i, d := range shape {
		lv := tir.NewVar("i"+strconv.Itoa(i), tir.DIndex)
		iv := tir.NewVar("v"+strconv.Itoa(i), tir.DIndex)
		loops = append(loops, lv)
		n.spatial = append(n.spatial, iv)
		blk.IterVars = append(blk.IterVars, &tir.IterVar{Var: iv, Dom: tir.RangeOf(0, d), Kind: tir.Spatial})
		values = append(values, lv)
	}
	for i, e := range redExtents {
		lv := tir.NewVar("r"+strconv.Itoa(i), tir.DIndex)
		iv := tir.NewVar("k"+strconv.Itoa(i), tir.DIndex)
		loops = append(loops, lv)
		n.reduce = append(n.reduce, iv)
		blk.IterVars = append(blk.IterVars, &tir.IterVar{Var: iv, Dom: tir.RangeOf(0, e), Kind: tir.Reduce})
		values = append(values, lv)
	}
	idx := make([]tir.Expr, len(n.spatial))
	for i, v := range n.spatial {
		idx[i] = v
	}
	var acc tir.Expr
	if init != nil {
		acc = tir.Load(out, idx...)
	}
	val := update(n, acc)
	blk.Body = &tir.BufferStore{Buffer: out, Value: val, Indices: idx, Loc: loc}
	if init != nil && len(redExtents) > 0 {
		blk.Init = &tir.BufferStore{Buffer: out, Value: init(n), Indices: idx, Loc: loc}
	}
	blk.Writes = []tir.BufferRegion{pointRegion(out, idx)}
	blk.Reads = readRegions(out, len(redExtents) > 0, val)
	var s tir.Stmt = &tir.BlockRealize{Values: values, Block: blk, Loc: loc}
	all := append(append([]int64(nil), shape...), redExtents...)
	for i := len(loops) - 1; i >= 0; i-- {
		s = &tir.For{Var: loops[i], Min: tir.Int(0), Extent: tir.Int(all[i]), Body: s, Loc: loc}
	}
	k.blocks = append(k.blocks, s)
}

func pointRegion(b *tir.Buffer, idx []tir.Expr) tir.BufferRegion {
	r := tir.BufferRegion{Buffer: b, Region: make([]tir.Range, len(idx))}
	for i, e := range idx {
		r.Region[i] = tir.Range{Min: e, Extent: tir.Int(1)}
	}
	return r
}

// fullRegion is the whole buffer.
func fullRegion(b *tir.Buffer) tir.BufferRegion {
	r := tir.BufferRegion{Buffer: b, Region: make([]tir.Range, len(b.Shape))}
	for i, d := range b.Shape {
		r.Region[i] = tir.Range{Min: tir.Int(0), Extent: d}
	}
	return r
}

// readRegions lists the buffers loaded by e as whole-buffer regions (a
// sound over-approximation of the exact regions), in first-load order;
// out is included when a reduction reads its accumulator.
func readRegions(out *tir.Buffer, readsOut bool, e tir.Expr) []tir.BufferRegion {
	var rs []tir.BufferRegion
	seen := map[*tir.Buffer]bool{}
	if !readsOut {
		seen[out] = true
	}
	tir.VisitExpr(e, func(x tir.Expr) bool {
		if l, ok := x.(*tir.BufferLoad); ok && !seen[l.Buffer] {
			seen[l.Buffer] = true
			rs = append(rs, fullRegion(l.Buffer))
		}
		return true
	})
	return rs
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
		vals:  map[*graphir.Value]*operand{},
		names: map[string]int{}, bufs: map[string]int{}, loc: loc,
	}
	for i, a := range body.Args {
		t, dt, err := tensorOf(op, a)
		if err != nil {
			return nil, err
		}
		b := bufferFor("in"+strconv.Itoa(i), t, dt)
		b.Loc = loc
		k.f.Params = append(k.f.Params, &tir.Param{Buffer: b, Role: tir.RoleIn, Loc: loc})
		k.vals[a] = &operand{buf: b, shape: t.Shape, dt: dt}
	}
	ret := body.Last()
	if ret == nil || ret.Name != "hlo.return" {
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
		b := bufferFor("out"+strconv.Itoa(i), t, dt)
		b.Loc = loc
		k.f.Params = append(k.f.Params, &tir.Param{Buffer: b, Role: tir.RoleOut, Loc: loc})
		outs = append(outs, b)
		if _, done := outFor[v]; !done && v.Def != nil && v.Def.Block == body && v.Def.Name != "hlo.constant" {
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
	return k.f, nil
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

func varsOf(vs []*tir.Var) []tir.Expr {
	out := make([]tir.Expr, len(vs))
	for i, v := range vs {
		out[i] = v
	}
	return out
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
		b = bufferFor(k.uniqueBuffer("t"), t, dt)
		b.Scope = tir.ScopeLocal
		b.Loc = op.Loc
		k.allocs = append(k.allocs, b)
	}
	k.vals[v] = &operand{buf: b, shape: t.Shape, dt: dt}
	return b, t, nil
}

// in returns the operand for op's operand i.
func (k *kernel) in(op *graphir.Op, i int) (*operand, error) {
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
		return op.Errorf("lower-to-tir: constant data was elided when printed; reprint with --print-large-constants")
	}
	vals := d.Values()
	if len(vals) == 0 && t.NumElements() > 0 {
		return op.Errorf("lower-to-tir: constant has no data")
	}
	if d.IsSplat() || len(vals) == 1 {
		k.vals[op.Results[0]] = &operand{splat: immediate(dt, vals[0]), shape: t.Shape, dt: dt}
		return nil
	}
	c, err := constStmt(op, k.uniqueBuffer("c"), t, dt, d)
	if err != nil {
		return err
	}
	k.consts = append(k.consts, c)
	k.vals[op.Results[0]] = &operand{buf: c.Buffer, shape: t.Shape, dt: dt}
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
	if dt.IsFloat() {
		c.Floats = make([]float64, n)
		for i, v := range vals {
			c.Floats[i] = tir.RoundFloat(dt, v)
		}
	} else {
		c.Ints = make([]int64, n)
		for i, v := range vals {
			c.Ints[i] = tir.WrapInt(dt, int64(v))
		}
	}
	return c, nil
}

// maxConstElements bounds the data of one embedded constant (1 GiB of
// f32).
const maxConstElements = 1 << 28

// immediate is the constant v of dtype dt.
func immediate(dt tir.DType, v float64) tir.Expr {
	if dt.IsFloat() {
		return tir.Float(dt, v)
	}
	return tir.IntOf(dt, int64(v))
}

func errorAt(op *graphir.Op, format string, args ...any) error {
	return op.Errorf("lower-to-tir: %s", fmt.Sprintf(format, args...))
}
