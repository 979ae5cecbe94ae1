package lowering

import "github.com/tessera-ml/tessera/graphir"

// Matrix products.
//
// graph.matmul(a, b) (NumPy matmul) → hlo.dot_general:
//   - 1-D operands contract directly (a [K] contracts dim 0; b [K] contracts
//     dim 0), so the dot_general result already has NumPy's shape with the
//     promoted dimension removed: [K]·[K] → rank 0, [K]·[...,K,N] → [...,N],
//     [...,M,K]·[K] → [...,M];
//   - a rank-r a with a 2-D b needs no batching: contracting a's last dim
//     with b's dim 0 gives a's leading dims ++ [M] ++ [N];
//   - otherwise both operands are broadcast (hlo.broadcast_in_dim) to the
//     common batch shape and the leading dims become batching dimensions.
//
// graph.gemm(A, B[, C]) {alpha, beta, transA, transB} (ONNX Gemm) →
// hlo.dot_general contracting A's dim transA?0:1 with B's dim transB?1:0
// (no explicit transpose); alpha ≠ 1 multiplies the product by a splat
// constant; C is scaled by beta (when beta ≠ 1) at its own shape, broadcast
// to M×N and added.
func init() {
	registerLegalization("graph.matmul", legalizeMatmul)
	registerLegalization("graph.gemm", legalizeGemm)
}

// dotGeneralAttrs builds the dimension attributes of hlo.dot_general;
// empty batching lists are left out (their default).
func dotGeneralAttrs(lb, rb, lc, rc []int64) graphir.DictAttr {
	d := graphir.DictAttr{}.
		Set("lhs_contracting_dimensions", graphir.I64Array(lc...)).
		Set("rhs_contracting_dimensions", graphir.I64Array(rc...))
	if len(lb) > 0 {
		d = d.Set("lhs_batching_dimensions", graphir.I64Array(lb...)).
			Set("rhs_batching_dimensions", graphir.I64Array(rb...))
	}
	return d
}

func legalizeMatmul(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	if op.NumOperands() != 2 {
		return nil, op.Errorf("expects 2 operands, got %d", op.NumOperands())
	}
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	lhs, rhs := op.Operand(0), op.Operand(1)
	at, err := b.tensorOf(lhs, "lhs")
	if err != nil {
		return nil, err
	}
	bt, err := b.tensorOf(rhs, "rhs")
	if err != nil {
		return nil, err
	}
	ra, rb := at.Rank(), bt.Rank()
	if ra < 1 || rb < 1 {
		return nil, op.Errorf("operands must have rank >= 1, got %s and %s", at, bt)
	}
	if at.Elem != bt.Elem || at.Elem != rt.Elem {
		return nil, op.Errorf("element types differ: %s, %s -> %s", at.Elem, bt.Elem, rt.Elem)
	}
	ka := at.Shape[ra-1]
	kbDim := 0
	if rb >= 2 {
		kbDim = rb - 2
	}
	if ka != bt.Shape[kbDim] {
		return nil, op.Errorf("contracting dimensions differ: %s and %s", at, bt)
	}
	dot := func(x, y *graphir.Value, attrs graphir.DictAttr) ([]*graphir.Value, error) {
		r, err := b.create("hlo.dot_general", []*graphir.Value{x, y}, rt, attrs)
		if err != nil {
			return nil, err
		}
		return []*graphir.Value{r}, nil
	}
	// 1-D operands and 2-D rhs: plain contraction, no batching.
	if ra == 1 || rb <= 2 {
		return dot(lhs, rhs, dotGeneralAttrs(nil, nil, []int64{int64(ra - 1)}, []int64{int64(kbDim)}))
	}
	// Both batched (ra ≥ 2, rb ≥ 3): broadcast batch dims to the common shape.
	batch, ok := broadcastShapes(at.Shape[:ra-2], bt.Shape[:rb-2])
	if !ok {
		return nil, op.Errorf("batch dimensions of %s and %s do not broadcast", at, bt)
	}
	nb := len(batch)
	x, err := b.broadcastTo(lhs, append(append([]int64(nil), batch...), at.Shape[ra-2:]...))
	if err != nil {
		return nil, err
	}
	y, err := b.broadcastTo(rhs, append(append([]int64(nil), batch...), bt.Shape[rb-2:]...))
	if err != nil {
		return nil, err
	}
	bd := iota64(0, nb)
	return dot(x, y, dotGeneralAttrs(bd, bd, []int64{int64(nb + 1)}, []int64{int64(nb)}))
}

func legalizeGemm(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	if n := op.NumOperands(); n < 2 || n > 3 {
		return nil, op.Errorf("expects 2 or 3 operands, got %d", n)
	}
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	at, err := b.tensorOf(op.Operand(0), "A")
	if err != nil {
		return nil, err
	}
	bt, err := b.tensorOf(op.Operand(1), "B")
	if err != nil {
		return nil, err
	}
	if at.Rank() != 2 || bt.Rank() != 2 || rt.Rank() != 2 {
		return nil, op.Errorf("expects 2-D A, B and result, got %s, %s -> %s", at, bt, rt)
	}
	transA, transB := op.BoolAttrOr("transA", false), op.BoolAttrOr("transB", false)
	lc, rc := int64(1), int64(0)
	if transA {
		lc = 0
	}
	if transB {
		rc = 1
	}
	if at.Shape[lc] != bt.Shape[rc] {
		return nil, op.Errorf("inner dimensions differ: A %s (transA=%v), B %s (transB=%v)", at, transA, bt, transB)
	}
	y, err := b.create("hlo.dot_general", []*graphir.Value{op.Operand(0), op.Operand(1)}, rt,
		dotGeneralAttrs(nil, nil, []int64{lc}, []int64{rc}))
	if err != nil {
		return nil, err
	}
	if alpha := op.FloatAttrOr("alpha", 1); alpha != 1 {
		k, err := b.splat(rt, alpha)
		if err != nil {
			return nil, err
		}
		if y, err = b.binary("hlo.multiply", y, k); err != nil {
			return nil, err
		}
	}
	c := optionalOperand(op, 2)
	if c == nil {
		return []*graphir.Value{y}, nil
	}
	ct, err := b.tensorOf(c, "C")
	if err != nil {
		return nil, err
	}
	if ct.Elem != rt.Elem {
		return nil, op.Errorf("C has element type %s, result has %s", ct.Elem, rt.Elem)
	}
	if beta := op.FloatAttrOr("beta", 1); beta != 1 {
		k, err := b.splat(ct, beta)
		if err != nil {
			return nil, err
		}
		if c, err = b.binary("hlo.multiply", c, k); err != nil {
			return nil, err
		}
	}
	if s, ok := broadcastShapes(ct.Shape, rt.Shape); !ok || !shapeEqual(s, rt.Shape) {
		return nil, op.Errorf("C %s is not unidirectionally broadcastable to %s", ct, rt)
	}
	cb, err := b.broadcastTo(c, rt.Shape)
	if err != nil {
		return nil, err
	}
	r, err := b.binary("hlo.add", y, cb)
	if err != nil {
		return nil, err
	}
	return []*graphir.Value{r}, nil
}
