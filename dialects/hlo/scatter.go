package hlo

import (
	"strconv"

	g "github.com/tessera-ml/tessera/graphir"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// ScatterOp is the op's name.
const ScatterOp = "hlo.scatter"

// hlo.scatter(operand, scatter_indices, updates) ({update_computation})
// {update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims,
// index_vector_dim, indices_are_sorted, unique_indices} (StableHLO
// §scatter with one operand and without the batching dimensions): the
// result is operand with the windows of updates combined into it at start
// positions read from scatter_indices, an integer tensor whose dimension
// index_vector_dim (rank of scatter_indices = a trailing size-1 vector)
// holds the index vectors.
//
//	%r = "hlo.scatter"(%x, %idx, %upd) ({
//	^bb0(%cur: tensor<f32>, %new: tensor<f32>):
//	  %s = hlo.add %cur, %new : tensor<f32>
//	  hlo.return %s : tensor<f32>
//	}) {index_vector_dim = 1, inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], update_window_dims = [1]}
//	  : (tensor<5x3xf32>, tensor<4xi64>, tensor<4x3xf32>) -> tensor<5x3xf32>
//
// Shapes: the dims of updates not in update_window_dims (its scatter
// dims, in order) equal the dims of scatter_indices other than
// index_vector_dim; update_window_dims (sorted) and inserted_window_dims
// (sorted) together have the operand's rank, and the k-th window dim of
// updates walks the k-th operand dim not inserted, with a size no larger
// than that dim; scatter_dims_to_operand_dims has one distinct operand dim
// per index vector component. The result has the operand's type; updates
// share its element type (any: float, integer or i1).
//
// For every update index u in row-major order, with scatter part b and
// window part w:
//
//	start[scatter_dims_to_operand_dims[k]] = scatter_indices[b, k]  (0 elsewhere)
//	result[start + (w scattered over the non-inserted dims)] =
//	    update_computation(result[...], updates[u])
//
// update_computation is a region with two rank-0 arguments of the element
// type (the current value, then the update) returning one, as hlo.reduce's
// body: a body returning its second argument replaces, hlo.add /
// multiply / maximum / minimum combine. Updates are applied one at a time
// in row-major order of updates, so with duplicate start indices the last
// update wins (replace) or every update is combined in that order, and the
// result is deterministic.
//
// Out-of-bounds windows are skipped, as XLA does (StableHLO leaves them
// implementation-defined): an update whose window does not fit, i.e. some
// start[d] outside [0, dim(operand, d) − window size in d], changes
// nothing. The evaluator, the tensor IR interpreter and compiled code agree
// on this.
//
// The op is Opaque: it is a fusion of its own, lowered by Lowering.Kernel
// to a copy of operand into the result followed by one serial block over
// the updates that reads the start indices and stores at them (a
// data-dependent store; see scatterKernel).
type scatterCfg struct {
	indexVector
	operand, updates *g.TensorType
	windowDims       []int64 // update_window_dims
	inserted         []int64 // inserted_window_dims
	toOperand        []int64 // scatter_dims_to_operand_dims
}

// ScatterDims are hlo.scatter's dimension numbers.
type ScatterDims struct {
	UpdateWindowDims, InsertedWindowDims, ScatterDimsToOperandDims []int64
	IndexVectorDim                                                 int64
}

// Attrs returns the dimension numbers as op attributes.
func (d ScatterDims) Attrs() g.DictAttr {
	return g.DictAttr{
		{Name: "index_vector_dim", Value: g.IntAttr(d.IndexVectorDim)},
		{Name: "inserted_window_dims", Value: g.I64Array(d.InsertedWindowDims...)},
		{Name: "scatter_dims_to_operand_dims", Value: g.I64Array(d.ScatterDimsToOperandDims...)},
		{Name: "update_window_dims", Value: g.I64Array(d.UpdateWindowDims...)},
	}
}

func init() {
	register(&g.OpDef{
		Name:     ScatterOp,
		Summary:  "combines windows of updates into operand at start indices read from scatter_indices (StableHLO §scatter)",
		Operands: g.Exactly(3), Results: g.Exactly(1), Regions: 1,
		Traits: g.Pure | g.IsolatedFromAbove | g.Opaque,
		Attrs: []g.AttrSpec{
			{Name: "update_window_dims", Kind: g.KindIntArray, Required: true},
			{Name: "inserted_window_dims", Kind: g.KindIntArray, Required: true},
			{Name: "scatter_dims_to_operand_dims", Kind: g.KindIntArray, Required: true},
			{Name: "index_vector_dim", Kind: g.KindInt, Required: true},
			{Name: "indices_are_sorted", Kind: g.KindBool},
			{Name: "unique_indices", Kind: g.KindBool},
		},
		Infer: func(op *g.Op) ([]g.Type, error) {
			c, err := scatterConfig(op)
			if err != nil {
				return nil, err
			}
			return []g.Type{c.operand}, nil
		},
		Verify: func(op *g.Op) error {
			c, err := scatterConfig(op)
			if err != nil {
				return err
			}
			return verifyBody(op, c.operand.Elem)
		},
		Eval: evalScatter,
	}, Lowering{Kernel: scatterKernel})
}

// Scatter builds a detached hlo.scatter with inferred result type whose
// update_computation applies the binary op bodyOp (AddOp, MultiplyOp,
// MaximumOp, MinimumOp) to the current value and the update, or returns
// the update when bodyOp is "" (replace); or a diagnostic.
func Scatter(operand, indices, updates *g.Value, d ScatterDims, bodyOp string, loc g.Location) (*g.Op, error) {
	op, err := g.Build(ScatterOp, []*g.Value{operand, indices, updates}, d.Attrs(), loc)
	if err != nil {
		return nil, err
	}
	t := g.NewTensor(g.AsTensor(operand.Type).Elem)
	if bodyOp != "" {
		return op, attachBody(op, t, bodyOp, loc)
	}
	b := g.NewBlock(t, t)
	b.Append(g.NewOp(ReturnOp, []*g.Value{b.Args[1]}, nil, nil, loc))
	op.AddRegion(g.NewRegion(b))
	return op, nil
}

func scatterConfig(op *g.Op) (*scatterCfg, error) {
	ts, err := tensorOperands(op)
	if err != nil {
		return nil, err
	}
	c := &scatterCfg{operand: ts[0], indexVector: indexVector{indices: ts[1]}, updates: ts[2]}
	if !c.indices.Elem.IsInt() || c.indices.Elem == g.I1 {
		return nil, op.Errorf("scatter_indices must have an integer element type, got %s", c.indices)
	}
	if c.updates.Elem != c.operand.Elem {
		return nil, op.Errorf("updates must have the operand's element type %s, got %s", c.operand.Elem, c.updates)
	}
	if err := c.readAttrs(op); err != nil {
		return nil, err
	}
	return c, c.check(op)
}

func (c *scatterCfg) readAttrs(op *g.Op) error {
	return c.readIndexAttrs(op, []string{"update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims"}, &c.windowDims, &c.inserted, &c.toOperand)
}

// scatterDims are the dims of updates that are not window dims, in order.
func (c *scatterCfg) scatterDims() []int {
	var out []int
	for d := 0; d < c.updates.Rank(); d++ {
		if !containsDim(c.windowDims, d) {
			out = append(out, d)
		}
	}
	return out
}

// windowOperandDims are the operand dims not inserted, in order: window
// dim k of updates walks operand dim windowOperandDims()[k].
func (c *scatterCfg) windowOperandDims() []int {
	var out []int
	for d := 0; d < c.operand.Rank(); d++ {
		if !containsDim(c.inserted, d) {
			out = append(out, d)
		}
	}
	return out
}

// windowSizes is the window's extent in every operand dim (1 in the
// inserted dims).
func (c *scatterCfg) windowSizes() []int64 {
	ws := make([]int64, c.operand.Rank())
	for d := range ws {
		ws[d] = 1
	}
	for k, d := range c.windowOperandDims() {
		ws[d] = c.updates.Shape[c.windowDims[k]]
	}
	return ws
}

func (c *scatterCfg) check(op *g.Op) error {
	r := c.operand.Rank()
	if err := checkSortedDims(op, "update_window_dims", c.windowDims, c.updates.Rank()); err != nil {
		return err
	}
	if err := checkSortedDims(op, "inserted_window_dims", c.inserted, r); err != nil {
		return err
	}
	if len(c.windowDims)+len(c.inserted) != r {
		return op.Errorf("update_window_dims (%d) and inserted_window_dims (%d) must together have the operand rank %d", len(c.windowDims), len(c.inserted), r)
	}
	if int64(len(c.toOperand)) != c.indexVectorSize() {
		return op.Errorf("scatter_dims_to_operand_dims must have one entry per index vector component (%d), got %d", c.indexVectorSize(), len(c.toOperand))
	}
	if err := checkDims(op, "scatter_dims_to_operand_dims", c.toOperand, r); err != nil {
		return err
	}
	batch, sd := c.batchShape(), c.scatterDims()
	if len(sd) != len(batch) {
		return op.Errorf("updates must have %d scatter dims (the scatter_indices dims other than index_vector_dim) besides its %d window dims, got %s", len(batch), len(c.windowDims), c.updates)
	}
	for i, d := range sd {
		if c.updates.Shape[d] != batch[i] {
			return op.Errorf("updates scatter dim %d has size %d, but scatter_indices has %d there", d, c.updates.Shape[d], batch[i])
		}
	}
	for k, d := range c.windowOperandDims() {
		if s := c.updates.Shape[c.windowDims[k]]; s > c.operand.Shape[d] {
			return op.Errorf("updates window dim %d has size %d, larger than operand dim %d (%d)", c.windowDims[k], s, d, c.operand.Shape[d])
		}
	}
	return nil
}

// scatterCombiner is the update computation as a function: the fast path
// of a body returning its second argument (replace), else combiner's.
func scatterCombiner(op *g.Op, elem g.DType) (func(cur, upd float64) (float64, error), error) {
	if err := verifyBody(op, elem); err != nil {
		return nil, err
	}
	b := op.Regions[0].Blocks[0]
	if b.Len() == 1 && b.Last().Operand(0) == b.Args[1] {
		return func(_, upd float64) (float64, error) { return upd, nil }, nil
	}
	return combiner(op, elem)
}

func evalScatter(op *g.Op, args []*g.Tensor) ([]*g.Tensor, error) {
	if err := checkArgSizes(op, args); err != nil {
		return nil, err
	}
	c, err := scatterConfig(op)
	if err != nil {
		return nil, err
	}
	comb, err := scatterCombiner(op, c.operand.Elem)
	if err != nil {
		return nil, err
	}
	x, ind, upd := args[0], args[1], args[2]
	out := &g.Tensor{Type: c.operand, Data: append([]float64(nil), x.Data...)}
	xs, is := g.Strides(c.operand.Shape), g.Strides(c.indices.Shape)
	sd, wd, ws := c.scatterDims(), c.windowOperandDims(), c.windowSizes()
	ui := make([]int64, c.updates.Rank())
	b := make([]int64, len(sd))
	xi := make([]int64, c.operand.Rank())
	for u, v := range upd.Data {
		unravel(int64(u), c.updates.Shape, ui)
		for j, d := range sd {
			b[j] = ui[d]
		}
		clear(xi)
		inside := true
		for k, d := range c.toOperand {
			s := int64(ind.Data[offset(c.indexAt(b, int64(k)), is)])
			if s < 0 || s > c.operand.Shape[d]-ws[d] {
				inside = false
				break
			}
			xi[d] = s
		}
		if !inside {
			continue
		}
		for k, d := range wd {
			xi[d] += ui[c.windowDims[k]]
		}
		o := offset(xi, xs)
		if out.Data[o], err = comb(out.Data[o], v); err != nil {
			return nil, err
		}
	}
	return []*g.Tensor{out}, nil
}

// scatterKernel lowers hlo.scatter to the body of one kernel:
//
//	block "copy": out[i…] = operand[i…]
//	block "scatter" (no iteration variables; reads the whole of out,
//	  scatter_indices and updates, writes the whole of out):
//	  for u over the updates' shape, row-major (serial loops):
//	    let s_k = cast<index>(scatter_indices[b, k]) for each component k
//	    if 0 <= s_k <= dim − window for every k:
//	      out[start + w] = update_computation(out[start + w], updates[u])
//
// The scatter block's stores are data-dependent and may collide, so its
// loops must run serially in row-major order. They sit inside an opaque
// block (TVM's form for such accesses: no iteration variables, the loops
// in its body), where no schedule primitive reaches them; the kernel
// (Opaque: alone in its fusion, so nothing is inlined into it or fused
// after it) is marked tensorir.AttrRecurrence, which keeps the default
// rules, inlining and the tuner away, and schedule.ScheduleRecurrence
// vectorizes the copy and leaves the scatter block as it is.
func scatterKernel(op *g.Op, ins []*tir.Operand, outs []*tir.Buffer) (tir.Stmt, error) {
	c, err := scatterConfig(op)
	if err != nil {
		return nil, err
	}
	if len(ins) != 3 || len(outs) != 1 {
		return nil, errorAt(op, "'%s' kernel expects 3 inputs and 1 output", op.Name)
	}
	out, dt := outs[0], outs[0].DType
	if _, err := bodyScalar(op, tir.Zero(dt), tir.Zero(dt)); err != nil {
		return nil, err
	}
	x, ind, upd := ins[0], ins[1], ins[2]
	loc := op.Loc
	var stmts []tir.Stmt
	if s := (&tir.Compute{Shape: c.operand.Shape, Body: func(n tir.Nest, _ tir.Expr) tir.Expr {
		return x.At(n.Index()...)
	}}).Block("copy", out, loc); s != nil {
		stmts = append(stmts, s)
	}
	if s := c.scatterBlock(op, out, ind, upd, loc); s != nil {
		stmts = append(stmts, s)
	}
	if len(stmts) == 0 {
		return &tir.SeqStmt{Loc: loc}, nil
	}
	return tir.Seq(stmts...), nil
}

// scatterBlock is the serial update block of scatterKernel, or nil when
// there is no update (an empty updates tensor or operand).
func (c *scatterCfg) scatterBlock(op *g.Op, out *tir.Buffer, ind, upd *tir.Operand, loc tir.Location) tir.Stmt {
	if c.updates.NumElements() == 0 || c.operand.NumElements() == 0 {
		return nil
	}
	blk := &tir.Block{Name: "scatter", Loc: loc}
	loops := make([]*tir.Var, c.updates.Rank())
	ui := make([]tir.Expr, len(loops))
	for i := range loops {
		loops[i] = tir.NewVar("r"+strconv.Itoa(i), tir.DIndex)
		ui[i] = loops[i]
	}
	sd, wd, ws := c.scatterDims(), c.windowOperandDims(), c.windowSizes()
	b := make([]tir.Expr, len(sd))
	for j, d := range sd {
		b[j] = ui[d]
	}
	xi := make([]tir.Expr, c.operand.Rank())
	for d := range xi {
		xi[d] = tir.Int(0)
	}
	var lets []*tir.LetStmt
	var cond tir.Expr
	for k, d := range c.toOperand {
		s := tir.NewVar("s"+strconv.Itoa(k), tir.DIndex)
		lets = append(lets, &tir.LetStmt{Var: s, Value: &tir.Cast{Type: tir.DIndex, X: ind.At(c.indexExprAt(b, int64(k))...)}, Loc: loc})
		in := tir.Bin(tir.OpAnd, tir.Bin(tir.OpGE, s, tir.Int(0)), tir.Bin(tir.OpLE, s, tir.Int(c.operand.Shape[d]-ws[d])))
		if cond == nil {
			cond = in
		} else {
			cond = tir.Bin(tir.OpAnd, cond, in)
		}
		xi[d] = s
	}
	for k, d := range wd {
		xi[d] = tir.Add(xi[d], ui[c.windowDims[k]])
	}
	val, _ := bodyScalar(op, tir.Load(out, xi...), upd.At(ui...))
	var body tir.Stmt = &tir.BufferStore{Buffer: out, Value: val, Indices: xi, Loc: loc}
	if cond != nil {
		body = &tir.IfThenElse{Cond: cond, Then: body, Loc: loc}
	}
	for i := len(lets) - 1; i >= 0; i-- {
		lets[i].Body = body
		body = lets[i]
	}
	for i := len(loops) - 1; i >= 0; i-- {
		body = &tir.For{Var: loops[i], Min: tir.Int(0), Extent: tir.Int(c.updates.Shape[i]), Body: body, Loc: loc}
	}
	blk.Body = body
	blk.Writes = []tir.BufferRegion{tir.WholeRegion(out)}
	blk.Reads = []tir.BufferRegion{tir.WholeRegion(out)}
	for _, o := range []*tir.Operand{ind, upd} {
		if o.Buffer != nil {
			blk.Reads = append(blk.Reads, tir.WholeRegion(o.Buffer))
		}
	}
	return &tir.BlockRealize{Block: blk, Loc: loc}
}
