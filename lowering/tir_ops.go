package lowering

import (
	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// Index arithmetic of every hlo op as one block (StableHLO semantics, as
// the reference evaluators in dialects/hlo compute them). Reads that may
// fall outside an operand (padding, dilation holes, concatenation pieces)
// load at a clamped index and are discarded by a select, so that every
// load is in bounds and the block stays a single store (inlinable).

// lowerOp emits the block(s) of one op of a fusion region.
func (k *kernel) lowerOp(op *graphir.Op, outFor map[*graphir.Value]*tir.Buffer) error {
	if op.Name == "hlo.constant" {
		return k.constOperand(op)
	}
	if len(op.Results) != 1 {
		return errorAt(op, "'%s' with %d results cannot be lowered", op.Name, len(op.Results))
	}
	ins := make([]*operand, op.NumOperands())
	for i := range ins {
		o, err := k.in(op, i)
		if err != nil {
			return err
		}
		ins[i] = o
	}
	out, rt, err := k.result(op, 0, outFor)
	if err != nil {
		return err
	}
	if isElementwiseOp(op.Name) || extElementwise[op.Name] {
		return k.elementwise(op, ins, out, rt)
	}
	switch op.Name {
	case "hlo.broadcast_in_dim":
		return k.broadcast(op, ins[0], out, rt)
	case "hlo.reshape":
		return k.reshape(op, ins[0], out, rt)
	case "hlo.transpose":
		return k.transpose(op, ins[0], out, rt)
	case "hlo.pad":
		return k.pad(op, ins, out, rt)
	case "hlo.slice":
		return k.slice(op, ins[0], out, rt)
	case "hlo.concatenate":
		return k.concatenate(op, ins, out, rt)
	case "hlo.dot_general":
		return k.dot(op, ins, out, rt)
	case "hlo.convolution":
		return k.convolution(op, ins, out, rt)
	case "hlo.reduce":
		return k.reduce(op, ins, out, rt)
	case "hlo.reduce_window":
		return k.reduceWindow(op, ins, out, rt)
	}
	return errorAt(op, "no tensor IR lowering for '%s'", op.Name)
}

func (k *kernel) elementwise(op *graphir.Op, ins []*operand, out *tir.Buffer, rt *graphir.TensorType) error {
	var ferr error
	k.computeBlock(op, out, rt.Shape, nil, nil, func(n nest, _ tir.Expr) tir.Expr {
		idx := varsOf(n.spatial)
		args := make([]tir.Expr, len(ins))
		for i, o := range ins {
			if len(o.shape) == 0 && o.splat == nil {
				args[i] = o.at() // rank-0 operand (select's predicate)
			} else {
				args[i] = o.at(idx...)
			}
		}
		scalar := scalarOp
		if extElementwise[op.Name] {
			scalar = extScalarOp
		}
		e, err := scalar(op, args, out.DType)
		if err != nil {
			ferr = err
			return tir.IntOf(out.DType, 0)
		}
		return e
	})
	return ferr
}

// clamp is min(max(e, 0), n-1): an always-valid index into a dim of size n.
func clamp(e tir.Expr, n int64) tir.Expr {
	return tir.Min(tir.Max(e, tir.Int(0)), tir.Int(n-1))
}

func and(a, b tir.Expr) tir.Expr {
	if a == nil {
		return b
	}
	return tir.Bin(tir.OpAnd, a, b)
}

func idxConst(v int64) tir.Expr { return tir.Int(v) }

func (k *kernel) broadcast(op *graphir.Op, x *operand, out *tir.Buffer, rt *graphir.TensorType) error {
	dims := op.IntsAttrOr("broadcast_dimensions", nil)
	if len(dims) != len(x.shape) {
		return errorAt(op, "broadcast_dimensions has %d entries for an operand of rank %d", len(dims), len(x.shape))
	}
	for _, d := range dims {
		if d < 0 || int(d) >= len(rt.Shape) {
			return errorAt(op, "broadcast dimension %d out of range", d)
		}
	}
	k.computeBlock(op, out, rt.Shape, nil, nil, func(n nest, _ tir.Expr) tir.Expr {
		idx := make([]tir.Expr, len(x.shape))
		for i, d := range dims {
			if x.shape[i] == 1 && rt.Shape[d] != 1 {
				idx[i] = idxConst(0)
			} else {
				idx[i] = n.spatial[d]
			}
		}
		return x.at(idx...)
	})
	return nil
}

// reshape remaps row-major: the linear index of the result element is
// unravelled over the operand's shape.
func (k *kernel) reshape(op *graphir.Op, x *operand, out *tir.Buffer, rt *graphir.TensorType) error {
	k.computeBlock(op, out, rt.Shape, nil, nil, func(n nest, _ tir.Expr) tir.Expr {
		var lin tir.Expr = idxConst(0)
		st := graphir.Strides(rt.Shape)
		for i, v := range n.spatial {
			lin = tir.Add(lin, tir.Mul(v, idxConst(st[i])))
		}
		ist := graphir.Strides(x.shape)
		idx := make([]tir.Expr, len(x.shape))
		for j := range x.shape {
			e := lin
			if ist[j] != 1 {
				e = tir.FloorDiv(e, idxConst(ist[j]))
			}
			if j > 0 {
				e = tir.FloorMod(e, idxConst(x.shape[j]))
			}
			idx[j] = e
		}
		return x.at(idx...)
	})
	return nil
}

func (k *kernel) transpose(op *graphir.Op, x *operand, out *tir.Buffer, rt *graphir.TensorType) error {
	perm := op.IntsAttrOr("permutation", nil)
	if len(perm) != len(x.shape) || len(perm) != len(rt.Shape) {
		return errorAt(op, "permutation has %d entries for rank %d", len(perm), len(x.shape))
	}
	for _, p := range perm {
		if p < 0 || int(p) >= len(perm) {
			return errorAt(op, "permutation entry %d out of range", p)
		}
	}
	k.computeBlock(op, out, rt.Shape, nil, nil, func(n nest, _ tir.Expr) tir.Expr {
		idx := make([]tir.Expr, len(x.shape))
		for i, p := range perm {
			idx[p] = n.spatial[i]
		}
		return x.at(idx...)
	})
	return nil
}

func hasZero(shape []int64) bool {
	for _, d := range shape {
		if d == 0 {
			return true
		}
	}
	return false
}

// pad: result position v of dim i holds operand element (v - lo) / (p+1)
// when v - lo ≥ 0, divisible by p+1 and the quotient < d; else the
// padding value.
func (k *kernel) pad(op *graphir.Op, ins []*operand, out *tir.Buffer, rt *graphir.TensorType) error {
	if len(ins) != 2 {
		return errorAt(op, "expects 2 operands")
	}
	x, pv := ins[0], ins[1]
	r := len(x.shape)
	lo := op.IntsAttrOr("edge_padding_low", make([]int64, r))
	interior := op.IntsAttrOr("interior_padding", make([]int64, r))
	if len(lo) != r || len(interior) != r || len(rt.Shape) != r {
		return errorAt(op, "padding attributes must have one entry per dimension")
	}
	k.computeBlock(op, out, rt.Shape, nil, nil, func(n nest, _ tir.Expr) tir.Expr {
		padValue := pv.at()
		if hasZero(x.shape) {
			return padValue
		}
		var cond tir.Expr
		idx := make([]tir.Expr, r)
		for i := 0; i < r; i++ {
			p := tir.Sub(n.spatial[i], idxConst(lo[i]))
			q := p
			step := interior[i] + 1
			if step != 1 {
				q = tir.FloorDiv(p, idxConst(step))
				cond = and(cond, tir.Bin(tir.OpEQ, tir.FloorMod(p, idxConst(step)), idxConst(0)))
			}
			cond = and(cond, tir.Bin(tir.OpGE, p, idxConst(0)))
			cond = and(cond, tir.LT(q, idxConst(x.shape[i])))
			idx[i] = clamp(q, x.shape[i])
		}
		if cond == nil {
			return x.at(idx...)
		}
		return &tir.Select{Cond: cond, T: x.at(idx...), F: padValue}
	})
	return nil
}

func (k *kernel) slice(op *graphir.Op, x *operand, out *tir.Buffer, rt *graphir.TensorType) error {
	r := len(x.shape)
	start := op.IntsAttrOr("start_indices", nil)
	strides := op.IntsAttrOr("strides", ones(r))
	if len(start) != r || len(strides) != r {
		return errorAt(op, "slice attributes must have one entry per dimension")
	}
	k.computeBlock(op, out, rt.Shape, nil, nil, func(n nest, _ tir.Expr) tir.Expr {
		idx := make([]tir.Expr, r)
		for i := range idx {
			idx[i] = tir.Add(tir.Mul(n.spatial[i], idxConst(strides[i])), idxConst(start[i]))
		}
		return x.at(idx...)
	})
	return nil
}

func ones(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = 1
	}
	return out
}

// concatenate selects the piece holding the result position along the
// concatenated dimension (pieces of size 0 are skipped).
func (k *kernel) concatenate(op *graphir.Op, ins []*operand, out *tir.Buffer, rt *graphir.TensorType) error {
	dim := op.IntAttrOr("dimension", 0)
	if dim < 0 || int(dim) >= len(rt.Shape) {
		return errorAt(op, "dimension %d out of range", dim)
	}
	k.computeBlock(op, out, rt.Shape, nil, nil, func(n nest, _ tir.Expr) tir.Expr {
		var pieces []*operand
		var offsets []int64
		off := int64(0)
		for _, o := range ins {
			if len(o.shape) != len(rt.Shape) {
				continue
			}
			if o.shape[dim] > 0 {
				pieces = append(pieces, o)
				offsets = append(offsets, off)
			}
			off += o.shape[dim]
		}
		var e tir.Expr
		for p := len(pieces) - 1; p >= 0; p-- {
			o := pieces[p]
			idx := varsOf(n.spatial)
			pos := tir.Sub(n.spatial[dim], idxConst(offsets[p]))
			if len(pieces) > 1 {
				idx[dim] = clamp(pos, o.shape[dim])
			} else {
				idx[dim] = pos
			}
			v := o.at(idx...)
			if e == nil {
				e = v
			} else {
				e = &tir.Select{Cond: tir.LT(n.spatial[dim], idxConst(offsets[p+1])), T: v, F: e}
			}
		}
		return e
	})
	return nil
}

// zeroOf is the additive identity of dt.
func zeroOf(dt tir.DType) tir.Expr {
	if dt.IsFloat() {
		return tir.Float(dt, 0)
	}
	return tir.IntOf(dt, 0)
}

// accumulate is acc + a*b (or acc || (a && b) on i1).
func accumulate(acc, a, b tir.Expr, dt tir.DType) tir.Expr {
	if dt.IsBool() {
		return tir.Bin(tir.OpOr, acc, tir.Bin(tir.OpAnd, a, b))
	}
	return tir.Add(acc, tir.Mul(a, b))
}

// dot: result dims are batch ++ lhs free ++ rhs free; one reduce
// variable per contracting pair.
func (k *kernel) dot(op *graphir.Op, ins []*operand, out *tir.Buffer, rt *graphir.TensorType) error {
	if len(ins) != 2 {
		return errorAt(op, "expects 2 operands")
	}
	l, r := ins[0], ins[1]
	lb := op.IntsAttrOr("lhs_batching_dimensions", nil)
	rb := op.IntsAttrOr("rhs_batching_dimensions", nil)
	lc := op.IntsAttrOr("lhs_contracting_dimensions", nil)
	rc := op.IntsAttrOr("rhs_contracting_dimensions", nil)
	if len(lb) != len(rb) || len(lc) != len(rc) {
		return errorAt(op, "batching and contracting dimension lists must pair up")
	}
	// role of each operand dim: 'b' batch #, 'c' contracting #, 'f' free #
	type role struct {
		kind byte
		pos  int
	}
	roles := func(rank int, batch, contract []int64) ([]role, int, error) {
		rs := make([]role, rank)
		for i := range rs {
			rs[i].kind = 'f'
		}
		for p, d := range batch {
			if d < 0 || int(d) >= rank {
				return nil, 0, errorAt(op, "batching dimension %d out of range", d)
			}
			rs[d] = role{'b', p}
		}
		for p, d := range contract {
			if d < 0 || int(d) >= rank {
				return nil, 0, errorAt(op, "contracting dimension %d out of range", d)
			}
			rs[d] = role{'c', p}
		}
		free := 0
		for i := range rs {
			if rs[i].kind == 'f' {
				rs[i].pos = free
				free++
			}
		}
		return rs, free, nil
	}
	lr, lfree, err := roles(len(l.shape), lb, lc)
	if err != nil {
		return err
	}
	rr, _, err := roles(len(r.shape), rb, rc)
	if err != nil {
		return err
	}
	red := make([]int64, len(lc))
	for i, d := range lc {
		red[i] = l.shape[d]
	}
	nb := len(lb)
	index := func(rs []role, n nest, freeBase int) []tir.Expr {
		idx := make([]tir.Expr, len(rs))
		for i, ro := range rs {
			switch ro.kind {
			case 'b':
				idx[i] = n.spatial[ro.pos]
			case 'c':
				idx[i] = n.reduce[ro.pos]
			default:
				idx[i] = n.spatial[freeBase+ro.pos]
			}
		}
		return idx
	}
	k.computeBlock(op, out, rt.Shape, red,
		func(n nest) tir.Expr { return zeroOf(out.DType) },
		func(n nest, acc tir.Expr) tir.Expr {
			return accumulate(acc, l.at(index(lr, n, nb)...), r.at(index(rr, n, nb+lfree)...), out.DType)
		})
	return nil
}

// pairAttr reads a [[lo, hi], ...] attribute (default zeros).
func pairAttr(op *graphir.Op, name string, n int) ([]int64, []int64, error) {
	lo, hi := make([]int64, n), make([]int64, n)
	a := op.Attr(name)
	if a == nil {
		return lo, hi, nil
	}
	arr, ok := a.(graphir.ArrayAttr)
	if !ok || len(arr) != n {
		return nil, nil, errorAt(op, "'%s' must have %d [lo, hi] pairs", name, n)
	}
	for i, e := range arr {
		p, ok := e.(graphir.ArrayAttr)
		if !ok || len(p) != 2 {
			return nil, nil, errorAt(op, "'%s' must have %d [lo, hi] pairs", name, n)
		}
		x, ok1 := p[0].(*graphir.IntegerAttr)
		y, ok2 := p[1].(*graphir.IntegerAttr)
		if !ok1 || !ok2 {
			return nil, nil, errorAt(op, "'%s' must have integer pairs", name)
		}
		lo[i], hi[i] = x.Value, y.Value
	}
	return lo, hi, nil
}

func intsLen(op *graphir.Op, name string, n int, fill int64) ([]int64, error) {
	def := make([]int64, n)
	for i := range def {
		def[i] = fill
	}
	v := op.IntsAttrOr(name, def)
	if len(v) != n {
		return nil, errorAt(op, "'%s' must have %d entries", name, n)
	}
	return v, nil
}

// windowRead is the guarded read of x at position pos (in the padded,
// base-dilated input) along each dim: the condition that every position
// is a real element, and the clamped operand indices.
func windowRead(pos []tir.Expr, dil, size []int64) (tir.Expr, []tir.Expr) {
	var cond tir.Expr
	idx := make([]tir.Expr, len(pos))
	for j, p := range pos {
		q := p
		if dil[j] != 1 {
			q = tir.FloorDiv(p, idxConst(dil[j]))
			cond = and(cond, tir.Bin(tir.OpEQ, tir.FloorMod(p, idxConst(dil[j])), idxConst(0)))
		}
		cond = and(cond, tir.Bin(tir.OpGE, p, idxConst(0)))
		cond = and(cond, tir.LT(q, idxConst(size[j])))
		idx[j] = clamp(q, size[j])
	}
	return cond, idx
}

// convolution (lhs N×C×S…, rhs O×(C/G)×K… in the layout of the kernel
// dimension numbers): out[n, o, r…] = Σ over ci, k… of
// lhs[n, g·C/G + ci, q…] · rhs[o, ci, k…] with g = o / (O/G) and
// q_j = (r_j·stride_j + k_j·rhs_dil_j − lo_j) / lhs_dil_j where that is an
// element of the input (padding and dilation holes read 0).
func (k *kernel) convolution(op *graphir.Op, ins []*operand, out *tir.Buffer, rt *graphir.TensorType) error {
	if len(ins) != 2 {
		return errorAt(op, "expects 2 operands")
	}
	l, r := ins[0], ins[1]
	ns := len(l.shape) - 2
	if ns < 1 || len(r.shape) != ns+2 || len(rt.Shape) != ns+2 {
		return errorAt(op, "operands must be N×C×spatial and O×I×spatial")
	}
	strides, err := intsLen(op, "window_strides", ns, 1)
	if err != nil {
		return err
	}
	ldil, err := intsLen(op, "lhs_dilation", ns, 1)
	if err != nil {
		return err
	}
	rdil, err := intsLen(op, "rhs_dilation", ns, 1)
	if err != nil {
		return err
	}
	lo, _, err := pairAttr(op, "padding", ns)
	if err != nil {
		return err
	}
	groups := op.IntAttrOr("feature_group_count", 1)
	kd, err := hlo.KernelDimsOf(op, len(r.shape))
	if err != nil {
		return err
	}
	O, CG := r.shape[kd.OutputFeature], r.shape[kd.InputFeature]
	if groups <= 0 || O%groups != 0 {
		return errorAt(op, "feature_group_count %d does not divide %d output features", groups, O)
	}
	red := []int64{CG}
	for _, d := range kd.Spatial {
		red = append(red, r.shape[d])
	}
	k.computeBlock(op, out, rt.Shape, red,
		func(n nest) tir.Expr { return zeroOf(out.DType) },
		func(n nest, acc tir.Expr) tir.Expr {
			ci := n.reduce[0]
			var c tir.Expr = ci
			if groups != 1 {
				g := tir.FloorDiv(n.spatial[1], idxConst(O/groups))
				c = tir.Add(tir.Mul(g, idxConst(CG)), ci)
			}
			pos := make([]tir.Expr, ns)
			for j := 0; j < ns; j++ {
				pos[j] = tir.Sub(tir.Add(tir.Mul(n.spatial[2+j], idxConst(strides[j])), tir.Mul(n.reduce[1+j], idxConst(rdil[j]))), idxConst(lo[j]))
			}
			cond, sp := windowRead(pos, ldil, l.shape[2:])
			x := l.at(append([]tir.Expr{n.spatial[0], c}, sp...)...)
			xv := tir.Expr(&tir.Select{Cond: cond, T: x, F: zeroOf(out.DType)})
			widx := make([]tir.Expr, len(r.shape))
			widx[kd.OutputFeature], widx[kd.InputFeature] = n.spatial[1], ci
			for j, d := range kd.Spatial {
				widx[d] = n.reduce[1+j]
			}
			w := r.at(widx...)
			return accumulate(acc, xv, w, out.DType)
		})
	return nil
}

// initValue is the rank-0 init operand as an expression.
func initValue(o *operand) tir.Expr { return o.at() }

// reduce: one reduce variable per reduced dim (in increasing dim order,
// the reference's row-major fold order); the body is translated to a
// scalar expression of the accumulator and the element.
func (k *kernel) reduce(op *graphir.Op, ins []*operand, out *tir.Buffer, rt *graphir.TensorType) error {
	if len(ins) != 2 {
		return errorAt(op, "lower-to-tir supports reduce with one input and one init")
	}
	x, init := ins[0], ins[1]
	dims := op.IntsAttrOr("dimensions", nil)
	isRed := make([]bool, len(x.shape))
	for _, d := range dims {
		if d < 0 || int(d) >= len(x.shape) {
			return errorAt(op, "dimension %d out of range", d)
		}
		isRed[d] = true
	}
	var red []int64
	for d, r := range isRed {
		if r {
			red = append(red, x.shape[d])
		}
	}
	// Check the body once, outside the block builder.
	if _, err := regionScalar(op, zeroOf(out.DType), zeroOf(out.DType)); err != nil {
		return err
	}
	k.computeBlock(op, out, rt.Shape, red,
		func(n nest) tir.Expr { return initValue(init) },
		func(n nest, acc tir.Expr) tir.Expr {
			idx := make([]tir.Expr, len(x.shape))
			si, ri := 0, 0
			for d := range idx {
				if isRed[d] {
					idx[d] = n.reduce[ri]
					ri++
				} else {
					idx[d] = n.spatial[si]
					si++
				}
			}
			e, _ := regionScalar(op, acc, x.at(idx...))
			return e
		})
	return nil
}

// reduceWindow: one reduce variable per input dim over the window;
// positions in the padding or in base-dilation holes contribute init, as
// in the reference.
func (k *kernel) reduceWindow(op *graphir.Op, ins []*operand, out *tir.Buffer, rt *graphir.TensorType) error {
	if len(ins) != 2 {
		return errorAt(op, "lower-to-tir supports reduce_window with one input and one init")
	}
	x, init := ins[0], ins[1]
	r := len(x.shape)
	win, err := intsLen(op, "window_dimensions", r, 1)
	if err != nil {
		return err
	}
	strides, err := intsLen(op, "window_strides", r, 1)
	if err != nil {
		return err
	}
	bdil, err := intsLen(op, "base_dilations", r, 1)
	if err != nil {
		return err
	}
	wdil, err := intsLen(op, "window_dilations", r, 1)
	if err != nil {
		return err
	}
	lo, _, err := pairAttr(op, "padding", r)
	if err != nil {
		return err
	}
	if _, err := regionScalar(op, zeroOf(out.DType), zeroOf(out.DType)); err != nil {
		return err
	}
	k.computeBlock(op, out, rt.Shape, win,
		func(n nest) tir.Expr { return initValue(init) },
		func(n nest, acc tir.Expr) tir.Expr {
			var elem tir.Expr
			if hasZero(x.shape) {
				elem = initValue(init)
			} else {
				pos := make([]tir.Expr, r)
				for j := 0; j < r; j++ {
					pos[j] = tir.Sub(tir.Add(tir.Mul(n.spatial[j], idxConst(strides[j])), tir.Mul(n.reduce[j], idxConst(wdil[j]))), idxConst(lo[j]))
				}
				cond, idx := windowRead(pos, bdil, x.shape)
				elem = &tir.Select{Cond: cond, T: x.at(idx...), F: initValue(init)}
			}
			e, _ := regionScalar(op, acc, elem)
			return e
		})
	return nil
}

// Scalar semantics of the hlo ops of dialects/hlo/elementwise_ext.go, as
// their reference evaluators compute them:
//   - erf, floor, ceil are the intrinsics of the same name (floats);
//   - sign is select(x > 0, 1, select(x < 0, -1, x)): NaN and ±0 pass through;
//   - clamp(lo, x, hi) is min(max(x, lo), hi) (NaN propagates; a rank-0
//     bound is read at []);
//   - and / or / not on i1 are &&, || and !.
var extElementwise = map[string]bool{
	"hlo.erf": true, "hlo.floor": true, "hlo.ceil": true, "hlo.sign": true,
	"hlo.clamp": true, "hlo.and": true, "hlo.or": true, "hlo.not": true,
}

func extScalarOp(op *graphir.Op, args []tir.Expr, res tir.DType) (tir.Expr, error) {
	want := map[string]int{"hlo.clamp": 3, "hlo.and": 2, "hlo.or": 2}[op.Name]
	if want == 0 {
		want = 1
	}
	if len(args) != want {
		return nil, errorAt(op, "expects %d operands, got %d", want, len(args))
	}
	switch op.Name {
	case "hlo.erf", "hlo.floor", "hlo.ceil":
		if !res.IsFloat() {
			return nil, errorAt(op, "'%s' does not take %s", op.Name, res)
		}
		return &tir.Call{Name: op.Name[len("hlo."):], Args: []tir.Expr{args[0]}}, nil
	case "hlo.sign":
		if res.IsBool() {
			return nil, errorAt(op, "'%s' does not take %s", op.Name, res)
		}
		x := args[0]
		var zero, one, minus tir.Expr
		if res.IsFloat() {
			zero, one, minus = tir.Float(res, 0), tir.Float(res, 1), tir.Float(res, -1)
		} else {
			zero, one, minus = tir.IntOf(res, 0), tir.IntOf(res, 1), tir.IntOf(res, -1)
		}
		neg := &tir.Select{Cond: tir.LT(x, zero), T: minus, F: x}
		return &tir.Select{Cond: tir.Bin(tir.OpGT, x, zero), T: one, F: neg}, nil
	case "hlo.clamp":
		if res.IsBool() {
			return nil, errorAt(op, "'%s' does not take %s", op.Name, res)
		}
		return tir.Min(tir.Max(args[1], args[0]), args[2]), nil
	case "hlo.and", "hlo.or", "hlo.not":
		if !res.IsBool() {
			return nil, errorAt(op, "'%s' takes i1, got %s", op.Name, res)
		}
		switch op.Name {
		case "hlo.and":
			return tir.Bin(tir.OpAnd, args[0], args[1]), nil
		case "hlo.or":
			return tir.Bin(tir.OpOr, args[0], args[1]), nil
		}
		return &tir.Not{X: args[0]}, nil
	}
	return nil, errorAt(op, "'%s' is not an elementwise op", op.Name)
}
