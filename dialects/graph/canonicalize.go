package graph

import (
	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// Canonicalization patterns of the graph dialect, attached to the ops'
// OpDef.Canonicalize and applied by the generic canonicalize pass:
//
//	reshape/flatten x with the type of x         → x
//	reshape/flatten(reshape/flatten(x))          → reshape(x) to the outer result shape
//	transpose x with the identity perm           → x
//	transpose(transpose(x))                      → transpose(x) with the composed perm (or x)
//	concat of a single operand                   → the operand
//	relu(relu(x))                                → relu(x)

// dropIdentity replaces a shape op whose result type equals its operand's
// type (reshape and flatten keep the row-major order, so this is a no-op).
func dropIdentity(name string) *graphir.Pattern {
	return &graphir.Pattern{
		Name: name + "-identity",
		Root: name,
		Rewrite: func(op *graphir.Op, rw *graphir.Rewriter) bool {
			in := op.Operand(0)
			if in == nil || !in.Type.Equal(op.Results[0].Type) {
				return false
			}
			rw.ReplaceOp(op, in)
			return true
		},
	}
}

// isReshapeLike reports whether op only reinterprets the row-major data.
func isReshapeLike(op *graphir.Op) bool {
	return op != nil && (op.Name == ReshapeOp || op.Name == FlattenOp)
}

// foldReshapeChain replaces reshape-like(reshape-like(x)) with a single
// reshape of x to the outer result shape. The new shape attribute is
// written out in full; shapes containing 0 are skipped, since a 0 in the
// attribute would mean "copy the input dimension".
func foldReshapeChain(name string) *graphir.Pattern {
	return &graphir.Pattern{
		Name:    name + "-fold-chain",
		Root:    name,
		Benefit: 1,
		Rewrite: func(op *graphir.Op, rw *graphir.Rewriter) bool {
			in := op.Operand(0)
			if in == nil || !isReshapeLike(in.Def) || in.Def.Operand(0) == nil {
				return false
			}
			rt := graphir.AsTensor(op.Results[0].Type)
			if rt == nil {
				return false
			}
			for _, d := range rt.Shape {
				if d == 0 {
					return false
				}
			}
			src := in.Def.Operand(0)
			if src.Type.Equal(rt) {
				rw.ReplaceOp(op, src)
				return true
			}
			nop, err := rw.Create(op, ReshapeOp, []*graphir.Value{src}, graphir.DictAttr{}.Set("shape", graphir.I64Array(rt.Shape...)))
			if err != nil || !nop.Results[0].Type.Equal(rt) {
				if nop != nil {
					rw.EraseOp(nop)
				}
				return false
			}
			rw.ReplaceOp(op, nop.Results[0])
			return true
		},
	}
}

// dropIdentityTranspose replaces a transpose with the identity perm by its operand.
func dropIdentityTranspose() *graphir.Pattern {
	return &graphir.Pattern{
		Name: "graph.transpose-identity",
		Root: TransposeOp,
		Rewrite: func(op *graphir.Op, rw *graphir.Rewriter) bool {
			t, err := op.TensorOperand(0)
			if err != nil {
				return false
			}
			perm, err := transposePerm(op, t.Rank())
			if err != nil || !hlo.IsIdentityPermutation(perm) {
				return false
			}
			rw.ReplaceOp(op, op.Operand(0))
			return true
		},
	}
}

// foldTransposeChain composes transpose(transpose(x, p1), p2) into
// transpose(x, q) with q[i] = p1[p2[i]], or x when q is the identity.
func foldTransposeChain() *graphir.Pattern {
	return &graphir.Pattern{
		Name:    "graph.transpose-fold-chain",
		Root:    TransposeOp,
		Benefit: 1,
		Rewrite: func(op *graphir.Op, rw *graphir.Rewriter) bool {
			in := op.Operand(0)
			if in == nil || in.Def == nil || in.Def.Name != TransposeOp {
				return false
			}
			inner := in.Def
			xt, err := inner.TensorOperand(0)
			if err != nil {
				return false
			}
			p1, err := transposePerm(inner, xt.Rank())
			if err != nil {
				return false
			}
			p2, err := transposePerm(op, len(p1))
			if err != nil {
				return false
			}
			q := hlo.ComposePermutations(p1, p2)
			x := inner.Operand(0)
			if hlo.IsIdentityPermutation(q) {
				rw.ReplaceOp(op, x)
				return true
			}
			nop, err := rw.Create(op, TransposeOp, []*graphir.Value{x}, graphir.DictAttr{}.Set("perm", graphir.I64Array(q...)))
			if err != nil {
				return false
			}
			rw.ReplaceOp(op, nop.Results[0])
			return true
		},
	}
}

// concatSingle replaces a concat of one operand by that operand.
func concatSingle() *graphir.Pattern {
	return &graphir.Pattern{
		Name: "graph.concat-single",
		Root: ConcatOp,
		Rewrite: func(op *graphir.Op, rw *graphir.Rewriter) bool {
			if op.NumOperands() != 1 || !op.Operand(0).Type.Equal(op.Results[0].Type) {
				return false
			}
			rw.ReplaceOp(op, op.Operand(0))
			return true
		},
	}
}
