package graph

import (
	"math"

	"github.com/tessera-ml/tessera/graphir"
)

func init() {
	graphir.RegisterFuncPass("fold-batch-norm", "fold graph.batch_norm into the graph.conv2d (constant weights) that feeds it", func(f *graphir.Func) error { FoldBatchNorm(f); return nil })
}

// FoldBatchNorm rewrites y = batch_norm(conv2d(x, w[, b]), γ, β, mean, var)
// into y = conv2d(x, w', b') with, per output channel o,
//
//	s[o]  = γ[o] / sqrt(var[o] + ε)
//	w'[o] = w[o] · s[o]
//	b'[o] = (b[o] − mean[o]) · s[o] + β[o]      (b = 0 without bias)
//
// It applies when w, b and the four batch_norm parameters are graph.constant
// (data not elided) and the conv2d result has no user other than the
// batch_norm. The folded weights are new constants, rounded to the weight
// element type; the new conv2d keeps the conv's attributes and location.
// Constants and convs left unused are removed. It returns the number of
// batch_norms folded.
func FoldBatchNorm(f *graphir.Func) int { return rewriteEach(f, BatchNormOp, foldOneBatchNorm) }

func foldOneBatchNorm(bn *graphir.Op) bool {
	if bn.Block == nil || bn.NumOperands() != 5 {
		return false
	}
	in := bn.Operand(0)
	conv := in.Def
	if conv == nil || conv.Name != Conv2DOp || len(in.Uses()) != 1 || conv.NumOperands() < 2 {
		return false
	}
	wt := graphir.AsTensor(conv.Operand(1).Type)
	wd := ConstantOf(conv.Operand(1))
	if wt == nil || wd == nil || wt.Rank() != 4 {
		return false
	}
	o := wt.Shape[0]
	var bias []float64
	if conv.NumOperands() == 3 {
		bd := ConstantOf(conv.Operand(2))
		if bd == nil {
			return false
		}
		bias = bd.Values()
	} else {
		bias = make([]float64, o)
	}
	var params [4][]float64
	for i := range params {
		d := ConstantOf(bn.Operand(i + 1))
		if d == nil {
			return false
		}
		params[i] = d.Values()
	}
	gamma, beta, mean, vr := params[0], params[1], params[2], params[3]
	if int64(len(bias)) != o || int64(len(gamma)) != o || int64(len(beta)) != o || int64(len(mean)) != o || int64(len(vr)) != o {
		return false
	}
	eps, err := bn.Float("epsilon")
	if err != nil {
		return false
	}
	w := wd.Values()
	per := int64(len(w)) / max(o, 1)
	nw := &graphir.Tensor{Type: wt, Data: make([]float64, len(w))}
	nb := &graphir.Tensor{Type: graphir.NewTensor(wt.Elem, o), Data: make([]float64, o)}
	for c := int64(0); c < o; c++ {
		s := gamma[c] / math.Sqrt(vr[c]+eps)
		for i := c * per; i < (c+1)*per; i++ {
			nw.Data[i] = w[i] * s
		}
		nb.Data[c] = (bias[c]-mean[c])*s + beta[c]
	}
	nw.Round()
	nb.Round()
	wc := newConstant(nw, conv.Loc)
	bc := newConstant(nb, conv.Loc)
	nconv := graphir.NewOp(Conv2DOp, []*graphir.Value{conv.Operand(0), wc.Results[0], bc.Results[0]},
		[]graphir.Type{bn.Results[0].Type}, append(graphir.DictAttr(nil), conv.Attrs...), conv.Loc)
	if tys, err := inferConv2D(nconv); err != nil || !graphir.TypesEqual(tys, []graphir.Type{bn.Results[0].Type}) {
		nconv.SetOperands(nil)
		return false
	}
	blk := bn.Block
	blk.InsertBefore(bn, wc)
	blk.InsertBefore(bn, bc)
	blk.InsertBefore(bn, nconv)
	bn.Results[0].ReplaceAllUsesWith(nconv.Results[0])
	dead := append([]*graphir.Value(nil), bn.Operands()...)
	dead = append(dead, conv.Operands()[1:]...)
	bn.Erase()
	conv.Erase()
	for _, v := range dead {
		if v.Def != nil && v.Def.Block != nil && v.Def.Name == ConstantOp && v.Def.IsUnused() {
			v.Def.Erase()
		}
	}
	return true
}
