package tensorir

import "strconv"

// Tensor computations as data, in the manner of TVM's te.compute: an op
// lowering describes what one output element is (a Compute over Operands)
// and Compute.Block turns the description into a loop nest with one block,
// so every op's lowering gets the same block structure (iteration
// variables, init, read and write regions) without building it itself.

// Operand is how a computation reads a tensor: from a buffer, or as a
// splat, an immediate every element equals (a one-value constant).
// Shape is the tensor's shape, DType its element type.
type Operand struct {
	Buffer *Buffer
	Splat  Expr
	Shape  []int64
	DType  DType
}

// At reads the operand at the given indices (one per dimension). A splat
// ignores them and a rank-0 buffer takes none, so a scalar operand can be
// read at any index of a larger result (hlo.select's predicate,
// hlo.clamp's bounds).
func (o *Operand) At(idx ...Expr) Expr {
	switch {
	case o.Splat != nil:
		return o.Splat
	case len(o.Shape) == 0:
		return Load(o.Buffer)
	}
	return Load(o.Buffer, idx...)
}

// Dim is dimension i of the operand as an expression: Shape's constant,
// or where that is symbolic (-1) the buffer's shape expression; nil for a
// symbolic dimension of a splat, which has no buffer.
func (o *Operand) Dim(i int) Expr {
	switch {
	case o.Shape[i] >= 0:
		return Int(o.Shape[i])
	case o.Buffer != nil && i < len(o.Buffer.Shape):
		return o.Buffer.Shape[i]
	}
	return nil
}

// Nest names the iteration variables of a computation's block: one
// spatial variable per output dimension, then one reduce variable per
// reduction extent.
type Nest struct {
	Spatial []*Var
	Reduce  []*Var
	// Extents are the spatial loops' extents (the output's dimensions,
	// Compute.Extents or Shape's constants), for a body that needs the
	// output's symbolic dimensions (a reshape's strides).
	Extents []Expr
}

// Index returns the spatial variables as the output element's indices.
func (n Nest) Index() []Expr {
	out := make([]Expr, len(n.Spatial))
	for i, v := range n.Spatial {
		out[i] = v
	}
	return out
}

// Compute describes one tensor: out[Spatial...] = Body(n, acc) over the
// output Shape. With Init it is a reduction over the Reduce extents:
// the block's init stores Init(n) and Body(n, acc) is the update of the
// accumulator acc (out at the spatial variables). Without Init, Reduce
// must be empty and acc is nil.
//
// Out, when set, gives the indices of out the element at n is stored to
// (default: the spatial variables); it lets a block write a slice of a
// larger buffer (hlo.rnn_scan's step t of Y).
//
// Extents, when set, are the output dimensions as expressions, one per
// Shape entry: a kernel over symbolic dimensions (issue 19) sets them,
// with Shape holding -1 (graphir.Dynamic) where a dimension is an
// expression of the kernel's scalar parameters; the spatial loops then
// run to those extents. ReduceExtents, likewise, are the reduce extents
// as expressions, one per Reduce entry (Reduce holding -1 where one is
// symbolic); Block decomposes a reduction whose domain can be empty
// while its output is not (ReduceEmptiesOutput).
type Compute struct {
	Shape         []int64
	Reduce        []int64
	Init          func(n Nest) Expr
	Body          func(n Nest, acc Expr) Expr
	Out           func(n Nest) []Expr
	Extents       []Expr
	ReduceExtents []Expr
}

// spatialExtents is the extent of each spatial loop: Extents when set,
// else Shape's constants.
func (c *Compute) spatialExtents() []Expr { return extentsOr(c.Extents, c.Shape) }

// extentsOr is exprs when set, else the constants ks as expressions.
func extentsOr(exprs []Expr, ks []int64) []Expr {
	if exprs != nil {
		return exprs
	}
	out := make([]Expr, len(ks))
	for i, d := range ks {
		out[i] = Int(d)
	}
	return out
}

// Block returns the loop nest (one loop per iteration variable, spatial
// loops outermost, all from 0 with the constant extents) around one block
// named name that stores the computation into out at loc. Degenerate
// reductions need no reduce loop: over an empty domain the result is
// Init, over zero reduce dimensions Body(n, Init(n)). A zero-sized output
// gives nil (nothing to compute). The block reads the whole of every
// buffer its value loads (a sound over-approximation) and writes one
// element of out.
//
// A reduction over a symbolic extent whose domain can be empty while its
// output is not (ReduceEmptiesOutput false: a sum over a symbolic
// dimension the result does not have) is decomposed, as TVM's
// decompose_reduction does: a spatial block named name_init stores Init,
// then the reduce block, without an init and annotated AttrAccumulate,
// updates it, so an empty reduction leaves Init.
func (c *Compute) Block(name string, out *Buffer, loc Location) Stmt {
	if c.Init != nil && !c.ReduceEmptiesOutput() {
		ic := &Compute{Shape: c.Shape, Extents: c.Extents, Out: c.Out, Body: func(n Nest, _ Expr) Expr { return c.Init(n) }}
		update := *c
		update.Init = nil
		return Seq(ic.Block(name+"_init", out, loc), update.block(name, out, loc, true))
	}
	return c.block(name, out, loc, false)
}

// block is Block without the decomposition; accumulate makes the block a
// reduction over c's reduce extents without an init (c.Init is nil),
// reading its accumulator, annotated AttrAccumulate.
func (c *Compute) block(name string, out *Buffer, loc Location, accumulate bool) Stmt {
	extents := c.spatialExtents()
	for _, d := range extents {
		if k, ok := d.(*IntImm); ok && k.Value == 0 {
			return nil
		}
	}
	init, body, reduce := c.normalized()
	if accumulate {
		body, reduce = c.Body, c.reduceExtents()
	}
	var n Nest
	var loops []*Var
	blk := &Block{Name: name, Loc: loc}
	var values []Expr
	addLoop := func(kind IterKind, extent Expr, i int) *Var {
		prefix, ivPrefix := "i", "v"
		if kind == Reduce {
			prefix, ivPrefix = "r", "k"
		}
		lv := NewVar(prefix+strconv.Itoa(i), DIndex)
		iv := NewVar(ivPrefix+strconv.Itoa(i), DIndex)
		loops = append(loops, lv)
		blk.IterVars = append(blk.IterVars, &IterVar{Var: iv, Dom: Range{Min: Int(0), Extent: extent}, Kind: kind})
		values = append(values, lv)
		return iv
	}
	n.Extents = extents
	for i, d := range extents {
		n.Spatial = append(n.Spatial, addLoop(Spatial, d, i))
	}
	for i, e := range reduce {
		n.Reduce = append(n.Reduce, addLoop(Reduce, e, i))
	}
	idx := n.Index()
	if c.Out != nil {
		idx = c.Out(n)
	}
	var acc Expr
	if init != nil || accumulate {
		acc = Load(out, idx...)
	}
	if accumulate {
		blk.Annotations = Attrs{AttrAccumulate: UnitAttr{}}
	}
	val := body(n, acc)
	blk.Body = &BufferStore{Buffer: out, Value: val, Indices: idx, Loc: loc}
	if init != nil {
		blk.Init = &BufferStore{Buffer: out, Value: init(n), Indices: idx, Loc: loc}
	}
	blk.Writes = []BufferRegion{pointRegion(out, idx)}
	blk.Reads = wholeReads(out, init != nil || accumulate, val)
	var s Stmt = &BlockRealize{Values: values, Block: blk, Loc: loc}
	for i := len(loops) - 1; i >= 0; i-- {
		s = &For{Var: loops[i], Min: Int(0), Extent: blk.IterVars[i].Dom.Extent, Body: s, Loc: loc}
	}
	return s
}

// normalized returns the init, body and reduce extents of the block
// Block builds: a reduction over an empty domain (a constant extent 0) is
// its init alone, one over no reduce dimensions is one application of the
// body (both without an init in the block).
func (c *Compute) normalized() (init func(Nest) Expr, body func(Nest, Expr) Expr, reduce []Expr) {
	if c.Init == nil {
		return nil, c.Body, nil
	}
	reduce = c.reduceExtents()
	empty := false
	for _, e := range reduce {
		k, ok := e.(*IntImm)
		empty = empty || ok && k.Value == 0
	}
	switch {
	case empty:
		return nil, func(n Nest, _ Expr) Expr { return c.Init(n) }, nil
	case len(reduce) == 0:
		return nil, func(n Nest, _ Expr) Expr { return c.Body(n, c.Init(n)) }, nil
	}
	return c.Init, c.Body, reduce
}

// reduceExtents is the extent of each reduce loop: ReduceExtents when
// set, else Reduce's constants.
func (c *Compute) reduceExtents() []Expr { return extentsOr(c.ReduceExtents, c.Reduce) }

// ReduceEmptiesOutput reports whether c's reduce domain can be empty only
// when its output is empty too, for every value of the symbols (taken
// non-negative, as dimensions are): each symbolic reduce extent is a
// positive constant times a product of scalar variables, and each of
// those variables, at 0, makes some output extent 0. A block's init runs
// at its first reduce iteration, so a reduction over an empty domain
// with a non-empty output would leave the output unwritten. Constant
// extents always qualify (Block handles a constant 0).
func (c *Compute) ReduceEmptiesOutput() bool {
	if c.Init == nil {
		return true
	}
	outs := c.spatialExtents()
	for _, e := range c.reduceExtents() {
		if _, ok := e.(*IntImm); ok {
			continue
		}
		vars, ok := monomialVars(e)
		if !ok {
			return false
		}
		for _, v := range vars {
			if !vanishesAt(outs, v) {
				return false
			}
		}
	}
	return true
}

// monomialVars returns the variables of e when e is a product of
// variables and positive constants.
func monomialVars(e Expr) ([]*Var, bool) {
	switch x := e.(type) {
	case *Var:
		return []*Var{x}, true
	case *IntImm:
		return nil, x.Value > 0
	case *Binary:
		if x.Op != OpMul {
			return nil, false
		}
		a, okA := monomialVars(x.A)
		b, okB := monomialVars(x.B)
		return append(a, b...), okA && okB
	}
	return nil, false
}

// vanishesAt reports whether one of extents is 0 when v is 0.
func vanishesAt(extents []Expr, v *Var) bool {
	zero := map[*Var]Expr{v: IntOf(v.Type, 0)}
	for _, e := range extents {
		if k, ok := Simplify(Substitute(e, zero), nil).(*IntImm); ok && k.Value == 0 {
			return true
		}
	}
	return false
}

// pointRegion is the one element of b at idx.
func pointRegion(b *Buffer, idx []Expr) BufferRegion {
	r := BufferRegion{Buffer: b, Region: make([]Range, len(idx))}
	for i, e := range idx {
		r.Region[i] = Range{Min: e, Extent: Int(1)}
	}
	return r
}

// WholeRegion is all of b.
func WholeRegion(b *Buffer) BufferRegion {
	r := BufferRegion{Buffer: b, Region: make([]Range, len(b.Shape))}
	for i, d := range b.Shape {
		r.Region[i] = Range{Min: Int(0), Extent: d}
	}
	return r
}

// wholeReads lists the buffers loaded by e as whole-buffer regions, in
// first-load order; out is included only when the block reads its
// accumulator (readsOut).
func wholeReads(out *Buffer, readsOut bool, e Expr) []BufferRegion {
	var rs []BufferRegion
	seen := map[*Buffer]bool{}
	if !readsOut {
		seen[out] = true
	}
	VisitExpr(e, func(x Expr) bool {
		if l, ok := x.(*BufferLoad); ok && !seen[l.Buffer] {
			seen[l.Buffer] = true
			rs = append(rs, WholeRegion(l.Buffer))
		}
		return true
	})
	return rs
}

// Imm is the constant v of dtype dt: a FloatImm for float dtypes, else an
// IntImm of v truncated toward zero and wrapped to dt.
func Imm(dt DType, v float64) Expr {
	if dt.IsFloat() {
		return Float(dt, v)
	}
	return IntOf(dt, int64(v))
}

// Zero is the additive identity of dt (false for bool).
func Zero(dt DType) Expr { return Imm(dt, 0) }
