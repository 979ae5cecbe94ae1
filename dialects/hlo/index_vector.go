package hlo

import (
	g "github.com/tessera-ml/tessera/graphir"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// indexVector is the index operand of hlo.gather and hlo.scatter
// (StableHLO's start_indices / scatter_indices) with its
// index_vector_dim: the dimension holding the index vectors (rank of the
// operand = a trailing size-1 vector).
type indexVector struct {
	indices        *g.TensorType
	indexVectorDim int
}

// readIndexAttrs reads the integer-array attributes names into dsts and
// index_vector_dim, each required. Errors: a missing or mistyped
// attribute, index_vector_dim outside [0, rank].
func (v *indexVector) readIndexAttrs(op *g.Op, names []string, dsts ...*[]int64) error {
	for i, name := range names {
		if op.Attr(name) == nil {
			return op.Errorf("requires attribute '%s'", name)
		}
		ints, err := op.Ints(name)
		if err != nil {
			return err
		}
		*dsts[i] = ints
	}
	if op.Attr("index_vector_dim") == nil {
		return op.Errorf("requires attribute 'index_vector_dim'")
	}
	ivd, err := op.Int("index_vector_dim")
	if err != nil {
		return err
	}
	if ivd < 0 || ivd > int64(v.indices.Rank()) {
		return op.Errorf("index_vector_dim %d is out of range [0, %d]", ivd, v.indices.Rank())
	}
	v.indexVectorDim = int(ivd)
	return nil
}

// indexVectorSize is the number of index components.
func (v indexVector) indexVectorSize() int64 {
	if v.indexVectorDim == v.indices.Rank() {
		return 1
	}
	return v.indices.Shape[v.indexVectorDim]
}

// batchShape is the indices' shape without index_vector_dim.
func (v indexVector) batchShape() []int64 {
	var s []int64
	for i, d := range v.indices.Shape {
		if i != v.indexVectorDim {
			s = append(s, d)
		}
	}
	return s
}

// indexAt is the indices' index of component k for batch index b.
func (v indexVector) indexAt(b []int64, k int64) []int64 { return insertIndex(v, b, k) }

// indexExprAt is indexAt over tensor IR expressions.
func (v indexVector) indexExprAt(b []tir.Expr, k int64) []tir.Expr {
	return insertIndex(v, b, tir.Expr(tir.Int(k)))
}

func insertIndex[T any](v indexVector, b []T, k T) []T {
	if v.indexVectorDim == v.indices.Rank() {
		return b
	}
	idx := make([]T, 0, len(b)+1)
	idx = append(idx, b[:v.indexVectorDim]...)
	idx = append(idx, k)
	return append(idx, b[v.indexVectorDim:]...)
}
