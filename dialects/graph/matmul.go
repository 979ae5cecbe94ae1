package graph

import (
	"slices"

	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// MatMulOp is graph.matmul (NumPy matmul, ONNX MatMul): a [..., M, K] ×
// b [..., K, N] → [..., M, N] with the batch dimensions broadcast. A 1-D a
// is treated as [1, K] and a 1-D b as [K, 1]; the inserted dimension is
// removed from the result. Operands share an element type, which is the
// result's, except 8-bit integer operands (i8 or ui8, mixed allowed),
// whose products accumulate in an i32 result (ONNX MatMulInteger without
// zero points).
const MatMulOp = "graph.matmul"

// GemmOp is graph.gemm (ONNX Gemm): alpha·A'·B' + beta·C, A' = transA ? Aᵀ : A
// (M×K), B' = transB ? Bᵀ : B (K×N), C optional and unidirectionally
// broadcastable to M×N. Attributes alpha = 1.0, beta = 1.0, transA = false,
// transB = false.
const GemmOp = "graph.gemm"

func init() {
	register(&graphir.OpDef{
		Name:     MatMulOp,
		Summary:  "NumPy matrix product with broadcast batch dimensions (ONNX MatMul)",
		Operands: graphir.Exactly(2),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Symbolic: true,
		Infer:    inferMatMul,
		Eval:     evalMatMul,
		Pretty:   true,
	}, Conversions{Legalize: legalizeMatMul, Symbolic: true})
	register(&graphir.OpDef{
		Name:     GemmOp,
		Summary:  "alpha * op(A) * op(B) + beta * C (ONNX Gemm)",
		Operands: graphir.Arity{Min: 2, Max: 3},
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Attrs: []graphir.AttrSpec{
			{Name: "alpha", Kind: graphir.KindFloat, Default: graphir.F32Attr(1)},
			{Name: "beta", Kind: graphir.KindFloat, Default: graphir.F32Attr(1)},
			{Name: "transA", Kind: graphir.KindBool, Default: graphir.BoolAttr(false)},
			{Name: "transB", Kind: graphir.KindBool, Default: graphir.BoolAttr(false)},
		},
		Symbolic: true,
		Infer:    inferGemm,
		Eval:     evalGemm,
		Pretty:   true,
	}, Conversions{Legalize: legalizeGemm, Symbolic: true})
}

// matmulShapes holds the analysed shapes of a matmul.
type matmulShapes struct {
	batch        []int64 // broadcast batch shape
	aBatch       []int64 // a's batch dims
	bBatch       []int64
	m, k, n      int64
	aVec, bVec   bool // 1-D operands
	resultShape  []int64
	elem         graphir.DType
	aType, bType *graphir.TensorType
}

// analyseMatMul is inferMatMul's validation, then the static sizes the
// evaluator and the legalization read.
func analyseMatMul(op *graphir.Op) (*matmulShapes, error) {
	tys, err := inferMatMul(op)
	if err != nil {
		return nil, err
	}
	a, b := graphir.AsTensor(op.Operand(0).Type), graphir.AsTensor(op.Operand(1).Type)
	rt := graphir.AsTensor(tys[0])
	s := &matmulShapes{elem: rt.Elem, aType: a, bType: b, resultShape: rt.Shape}
	as, bs := a.Shape, b.Shape
	if len(as) == 1 {
		s.aVec = true
		as = []int64{1, as[0]}
	}
	if len(bs) == 1 {
		s.bVec = true
		bs = []int64{bs[0], 1}
	}
	s.m, s.k, s.n = as[len(as)-2], as[len(as)-1], bs[len(bs)-1]
	s.aBatch, s.bBatch = as[:len(as)-2], bs[:len(bs)-2]
	s.batch, err = BroadcastShapes(s.aBatch, s.bBatch)
	return s, err
}

func evalMatMul(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	s, err := analyseMatMul(op)
	if err != nil {
		return nil, err
	}
	ia := broadcastIndex(s.aBatch, s.batch)
	ib := broadcastIndex(s.bBatch, s.batch)
	mk, kn, mn := s.m*s.k, s.k*s.n, s.m*s.n
	a, b := args[0].Data, args[1].Data
	for bi := range ia {
		ao, bo, oo := ia[bi]*mk, ib[bi]*kn, int64(bi)*mn
		for i := int64(0); i < s.m; i++ {
			for j := int64(0); j < s.n; j++ {
				acc := 0.0
				for k := int64(0); k < s.k; k++ {
					acc += a[ao+i*s.k+k] * b[bo+k*s.n+j]
				}
				out.Data[oo+i*s.n+j] = acc
			}
		}
	}
	return []*graphir.Tensor{out.Round()}, nil
}

// gemmParams are the validated attributes and sizes of a gemm.
type gemmParams struct {
	alpha, beta    float64
	transA, transB bool
	m, k, n        int64
}

// analyseGemm is inferGemm's validation, then the attributes and static
// sizes the evaluator and the legalization read.
func analyseGemm(op *graphir.Op) (*gemmParams, []*graphir.TensorType, error) {
	tys, err := inferGemm(op)
	if err != nil {
		return nil, nil, err
	}
	ts, _ := operandTensors(op)
	p := &gemmParams{}
	if p.alpha, err = op.Float("alpha"); err != nil {
		return nil, nil, err
	}
	if p.beta, err = op.Float("beta"); err != nil {
		return nil, nil, err
	}
	p.transA, _ = op.Bool("transA")
	p.transB, _ = op.Bool("transB")
	rt := graphir.AsTensor(tys[0])
	p.m, p.n, p.k = rt.Shape[0], rt.Shape[1], ts[0].Shape[1]
	if p.transA {
		p.k = ts[0].Shape[0]
	}
	return p, ts, nil
}

func evalGemm(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	p, _, err := analyseGemm(op)
	if err != nil {
		return nil, err
	}
	a, b := args[0], args[1]
	as, bs := a.Shape()[1], b.Shape()[1]
	var ic []int64
	if len(args) == 3 {
		ic = broadcastIndex(args[2].Shape(), out.Shape())
	}
	for i := int64(0); i < p.m; i++ {
		for j := int64(0); j < p.n; j++ {
			acc := 0.0
			for k := int64(0); k < p.k; k++ {
				var av, bv float64
				if p.transA {
					av = a.Data[k*as+i]
				} else {
					av = a.Data[i*as+k]
				}
				if p.transB {
					bv = b.Data[j*bs+k]
				} else {
					bv = b.Data[k*bs+j]
				}
				acc += av * bv
			}
			r := p.alpha * acc
			if ic != nil {
				r += p.beta * args[2].Data[ic[i*p.n+j]]
			}
			out.Data[i*p.n+j] = r
		}
	}
	return []*graphir.Tensor{out.Round()}, nil
}

// Legalization:
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

func legalizeMatMul(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	lhs, rhs := op.Operand(0), op.Operand(1)
	at, bt := graphir.AsTensor(lhs.Type), graphir.AsTensor(rhs.Type)
	ra, rb := at.Rank(), bt.Rank()
	kbDim := int64(0)
	if rb >= 2 {
		kbDim = int64(rb - 2)
	}
	// 1-D operands and 2-D rhs: plain contraction, no batching.
	if ra == 1 || rb <= 2 {
		dims := hlo.DotDims{LhsContracting: []int64{int64(ra - 1)}, RhsContracting: []int64{kbDim}}
		r, err := b.insert(hlo.DotGeneral(lhs, rhs, dims, op.Loc))
		return []*graphir.Value{r}, err
	}
	// Both batched (ra ≥ 2, rb ≥ 3): broadcast batch dims to the common
	// shape, the result's leading dimensions.
	nb := rt.Rank() - 2
	batch := rt.Dims()[:nb]
	x, err := b.broadcastToDims(lhs, append(slices.Clone(batch), at.Dims()[ra-2:]...))
	if err != nil {
		return nil, err
	}
	y, err := b.broadcastToDims(rhs, append(slices.Clone(batch), bt.Dims()[rb-2:]...))
	if err != nil {
		return nil, err
	}
	bd := iota64(0, nb)
	dims := hlo.DotDims{LhsBatch: bd, RhsBatch: bd, LhsContracting: []int64{int64(nb + 1)}, RhsContracting: []int64{int64(nb)}}
	r, err := b.insert(hlo.DotGeneral(x, y, dims, op.Loc))
	return []*graphir.Value{r}, err
}

func legalizeGemm(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	p, _, err := analyseGemm(op)
	if err != nil {
		return nil, err
	}
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	lc, rc := int64(1), int64(0)
	if p.transA {
		lc = 0
	}
	if p.transB {
		rc = 1
	}
	c := &chain{b: b, t: rt}
	y := c.do(func() (*graphir.Value, error) {
		return b.insert(hlo.DotGeneral(op.Operand(0), op.Operand(1), hlo.DotDims{LhsContracting: []int64{lc}, RhsContracting: []int64{rc}}, op.Loc))
	})
	if p.alpha != 1 {
		y = c.op(hlo.MultiplyOp, y, c.splat(p.alpha))
	}
	cv := optionalOperand(op, 2)
	if cv == nil {
		return c.done(y)
	}
	if p.beta != 1 {
		cc := &chain{b: b, t: graphir.AsTensor(cv.Type)}
		cv = cc.op(hlo.MultiplyOp, cv, cc.splat(p.beta))
		if cc.err != nil {
			return nil, cc.err
		}
	}
	cb := c.do(func() (*graphir.Value, error) { return b.broadcastToDims(cv, rt.Dims()) })
	return c.done(c.op(hlo.AddOp, y, cb))
}

// inferMatMul is NumPy matmul's shape rule over dimension expressions
// (constants included): 1-D operands are promoted, the contracting
// dimensions must be equal expressions, the batch dimensions broadcast
// (BroadcastDims).
func inferMatMul(op *graphir.Op) ([]graphir.Type, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	if len(ts) != 2 {
		return nil, op.Errorf("expects 2 operands, got %d", len(ts))
	}
	elem, err := contractionElem(op, ts)
	if err != nil {
		return nil, err
	}
	a, b := ts[0], ts[1]
	if a.Rank() < 1 || b.Rank() < 1 {
		return nil, op.Errorf("operands must have rank at least 1, got %s and %s", a, b)
	}
	as, bs := a.Dims(), b.Dims()
	aVec, bVec := len(as) == 1, len(bs) == 1
	if aVec {
		as = []*graphir.SymExpr{graphir.SymConst(1), as[0]}
	}
	if bVec {
		bs = []*graphir.SymExpr{bs[0], graphir.SymConst(1)}
	}
	m, k := as[len(as)-2], as[len(as)-1]
	kb, n := bs[len(bs)-2], bs[len(bs)-1]
	if !k.Equal(kb) {
		return nil, op.Errorf("contracting dimensions differ: %s has %s, %s has %s", a, k, b, kb)
	}
	batch, err := BroadcastDims(graphir.NewTensorDims(elem, as[:len(as)-2]...), graphir.NewTensorDims(elem, bs[:len(bs)-2]...))
	if err != nil {
		return nil, op.Errorf("batch dimensions of %s and %s: %v", a, b, err)
	}
	if !aVec {
		batch = append(batch, m)
	}
	if !bVec {
		batch = append(batch, n)
	}
	return one(graphir.NewTensorDims(elem, batch...)), nil
}

// inferGemm is Gemm's shape rule over dimension expressions (constants
// included): A' = op(A) is M×K, B' = op(B) is K×N, C broadcasts
// unidirectionally to M×N.
func inferGemm(op *graphir.Op) ([]graphir.Type, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	if len(ts) < 2 {
		return nil, op.Errorf("expects 2 or 3 operands, got %d", len(ts))
	}
	if err := sameElem(op, ts); err != nil {
		return nil, err
	}
	transA, err := op.Bool("transA")
	if err != nil {
		return nil, err
	}
	transB, err := op.Bool("transB")
	if err != nil {
		return nil, err
	}
	a, b := ts[0], ts[1]
	if a.Rank() != 2 || b.Rank() != 2 {
		return nil, op.Errorf("A and B must be rank 2, got %s and %s", a, b)
	}
	m, k := a.Dim(0), a.Dim(1)
	if transA {
		m, k = k, m
	}
	kb, n := b.Dim(0), b.Dim(1)
	if transB {
		kb, n = n, kb
	}
	if !k.Equal(kb) {
		return nil, op.Errorf("contracting dimensions differ: A' is %s×%s, B' is %s×%s", m, k, kb, n)
	}
	if len(ts) == 3 {
		c := ts[2]
		target := []*graphir.SymExpr{m, n}
		if c.Rank() > 2 {
			return nil, op.Errorf("C %s is not unidirectionally broadcastable to [%s, %s]", c, m, n)
		}
		target = target[2-c.Rank():]
		for i, d := range c.Dims() {
			if v, ok := d.Const(); !(ok && v == 1) && !d.Equal(target[i]) {
				return nil, op.Errorf("C %s is not unidirectionally broadcastable to [%s, %s]", c, m, n)
			}
		}
	}
	return one(graphir.NewTensorDims(ts[0].Elem, m, n)), nil
}
