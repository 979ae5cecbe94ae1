package graph

import "github.com/tessera-ml/tessera/graphir"

// MatMulOp is graph.matmul (NumPy matmul, ONNX MatMul): a [..., M, K] ×
// b [..., K, N] → [..., M, N] with the batch dimensions broadcast. A 1-D a
// is treated as [1, K] and a 1-D b as [K, 1]; the inserted dimension is
// removed from the result.
const MatMulOp = "graph.matmul"

// GemmOp is graph.gemm (ONNX Gemm): alpha·A'·B' + beta·C, A' = transA ? Aᵀ : A
// (M×K), B' = transB ? Bᵀ : B (K×N), C optional and unidirectionally
// broadcastable to M×N. Attributes alpha = 1.0, beta = 1.0, transA = false,
// transB = false.
const GemmOp = "graph.gemm"

func init() {
	graphir.RegisterOp(&graphir.OpDef{
		Name:     MatMulOp,
		Summary:  "NumPy matrix product with broadcast batch dimensions (ONNX MatMul)",
		Operands: graphir.Exactly(2),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Infer:    inferMatMul,
		Eval:     evalMatMul,
		Pretty:   true,
	})
	graphir.RegisterOp(&graphir.OpDef{
		Name:     GemmOp,
		Summary:  "alpha * op(A) * op(B) + beta * C (ONNX Gemm)",
		Operands: graphir.Arity{Min: 2, Max: 3},
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Attrs: []graphir.AttrSpec{
			{Name: "alpha", Kind: graphir.KindFloat},
			{Name: "beta", Kind: graphir.KindFloat},
			{Name: "transA", Kind: graphir.KindBool},
			{Name: "transB", Kind: graphir.KindBool},
		},
		Infer:  inferGemm,
		Eval:   evalGemm,
		Pretty: true,
	})
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

func analyseMatMul(op *graphir.Op) (*matmulShapes, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	if len(ts) != 2 {
		return nil, op.Errorf("expects 2 operands, got %d", len(ts))
	}
	if err := sameElem(op, ts); err != nil {
		return nil, err
	}
	a, b := ts[0], ts[1]
	if a.Rank() < 1 || b.Rank() < 1 {
		return nil, op.Errorf("operands must have rank at least 1, got %s and %s", a, b)
	}
	s := &matmulShapes{elem: a.Elem, aType: a, bType: b}
	as, bs := a.Shape, b.Shape
	if len(as) == 1 {
		s.aVec = true
		as = []int64{1, as[0]}
	}
	if len(bs) == 1 {
		s.bVec = true
		bs = []int64{bs[0], 1}
	}
	s.m, s.k = as[len(as)-2], as[len(as)-1]
	kb := bs[len(bs)-2]
	s.n = bs[len(bs)-1]
	if s.k != kb {
		return nil, op.Errorf("contracting dimensions differ: %s has %d, %s has %d", a, s.k, b, kb)
	}
	s.aBatch, s.bBatch = as[:len(as)-2], bs[:len(bs)-2]
	s.batch, err = BroadcastShapes(s.aBatch, s.bBatch)
	if err != nil {
		return nil, op.Errorf("batch dimensions of %s and %s: %v", a, b, err)
	}
	s.resultShape = append([]int64(nil), s.batch...)
	if !s.aVec {
		s.resultShape = append(s.resultShape, s.m)
	}
	if !s.bVec {
		s.resultShape = append(s.resultShape, s.n)
	}
	return s, nil
}

func inferMatMul(op *graphir.Op) ([]graphir.Type, error) {
	s, err := analyseMatMul(op)
	if err != nil {
		return nil, err
	}
	return one(&graphir.TensorType{Shape: s.resultShape, Elem: s.elem}), nil
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

func analyseGemm(op *graphir.Op) (*gemmParams, []*graphir.TensorType, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, nil, err
	}
	if len(ts) < 2 {
		return nil, nil, op.Errorf("expects 2 or 3 operands, got %d", len(ts))
	}
	if err := sameElem(op, ts); err != nil {
		return nil, nil, err
	}
	p := &gemmParams{}
	if p.alpha, err = floatAttr(op, "alpha", 1); err != nil {
		return nil, nil, err
	}
	if p.beta, err = floatAttr(op, "beta", 1); err != nil {
		return nil, nil, err
	}
	if p.transA, err = boolAttr(op, "transA", false); err != nil {
		return nil, nil, err
	}
	if p.transB, err = boolAttr(op, "transB", false); err != nil {
		return nil, nil, err
	}
	a, b := ts[0], ts[1]
	if a.Rank() != 2 || b.Rank() != 2 {
		return nil, nil, op.Errorf("A and B must be rank 2, got %s and %s", a, b)
	}
	p.m, p.k = a.Shape[0], a.Shape[1]
	if p.transA {
		p.m, p.k = p.k, p.m
	}
	kb, n := b.Shape[0], b.Shape[1]
	if p.transB {
		kb, n = n, kb
	}
	p.n = n
	if p.k != kb {
		return nil, nil, op.Errorf("contracting dimensions differ: A' is %d×%d, B' is %d×%d", p.m, p.k, kb, p.n)
	}
	if len(ts) == 3 {
		c := ts[2]
		if c.Rank() > 2 {
			return nil, nil, op.Errorf("C %s is not unidirectionally broadcastable to [%d, %d]", c, p.m, p.n)
		}
		target := []int64{p.m, p.n}[2-c.Rank():]
		for i, d := range c.Shape {
			if d != 1 && d != target[i] {
				return nil, nil, op.Errorf("C %s is not unidirectionally broadcastable to [%d, %d]", c, p.m, p.n)
			}
		}
	}
	return p, ts, nil
}

func inferGemm(op *graphir.Op) ([]graphir.Type, error) {
	p, ts, err := analyseGemm(op)
	if err != nil {
		return nil, err
	}
	return one(graphir.NewTensor(ts[0].Elem, p.m, p.n)), nil
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
