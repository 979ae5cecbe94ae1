// Package graph is Tessera's model-level dialect: ONNX-like ops on
// statically shaped tensors (NCHW images, OIHW convolution weights), each
// with a verifier, shape inference and a plain-Go reference evaluator, plus
// the graph-level passes constant-fold and fold-batch-norm and the
// canonicalization patterns consumed by the generic canonicalize pass.
package graph

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tessera-ml/tessera/dialects/hlo"

	"github.com/tessera-ml/tessera/graphir"
)

// shapeString renders a shape as [d0, d1, ...] for diagnostics.
func shapeString(s []int64) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, d := range s {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.FormatInt(d, 10))
	}
	b.WriteByte(']')
	return b.String()
}

// operandTensors returns the tensor types of all operands, or a diagnostic
// naming the first operand that is not a tensor.
func operandTensors(op *graphir.Op) ([]*graphir.TensorType, error) {
	ts := make([]*graphir.TensorType, op.NumOperands())
	for i := range ts {
		if op.Operand(i) == nil {
			return nil, op.Errorf("operand #%d is null", i)
		}
		t, err := op.TensorOperand(i)
		if err != nil {
			return nil, err
		}
		if err := checkShape(op, i, t); err != nil {
			return nil, err
		}
		ts[i] = t
	}
	return ts, nil
}

// sameElem checks that every operand has the element type of operand 0.
func sameElem(op *graphir.Op, ts []*graphir.TensorType) error {
	for i := 1; i < len(ts); i++ {
		if ts[i].Elem != ts[0].Elem {
			return op.Errorf("operand #%d has element type %s, but operand #0 has %s", i, ts[i].Elem, ts[0].Elem)
		}
	}
	return nil
}

// contractionElem is the element type of a contraction of operands ts:
// their shared element type, or i32 when every operand is 8-bit (i8 or
// ui8, mixed allowed): the integer contraction of ONNX MatMulInteger
// without zero points, XLA's s8 dot with preferred_element_type s32 —
// products of 8-bit values summed exactly in 32 bits, what VNNI's
// vpdpbusd computes (u8 × s8 → s32).
func contractionElem(op *graphir.Op, ts []*graphir.TensorType) (graphir.DType, error) {
	all8 := true
	for _, t := range ts {
		all8 = all8 && hlo.Is8Bit(t.Elem)
	}
	if all8 && len(ts) > 0 {
		return graphir.I32, nil
	}
	if err := sameElem(op, ts); err != nil {
		return 0, err
	}
	return ts[0].Elem, nil
}

// requireFloat checks that t has a floating-point element type.
func requireFloat(op *graphir.Op, t *graphir.TensorType) error {
	if !t.Elem.IsFloat() {
		return op.Errorf("requires a floating-point element type, got %s", t)
	}
	return nil
}

// intsOr is integer-array attribute name, or def when absent (for
// defaults that depend on the operands, which the schema cannot state).
// Errors: as graphir.Op.Ints.
func intsOr(op *graphir.Op, name string, def []int64) ([]int64, error) {
	if op.Attr(name) == nil {
		return def, nil
	}
	return op.Ints(name)
}

// normAxis maps axis in [-rank, rank-1] to [0, rank-1].
func normAxis(op *graphir.Op, axis int64, rank int) (int, error) {
	r := int64(rank)
	if axis < -r || axis >= r {
		return 0, op.Errorf("axis %d is out of range for rank %d (expected [%d, %d])", axis, rank, -r, r-1)
	}
	if axis < 0 {
		axis += r
	}
	return int(axis), nil
}

// one wraps a single type as an Infer result.
func one(t graphir.Type) []graphir.Type { return []graphir.Type{t} }

// inferOne runs op's Infer and returns its single tensor result type.
func inferOne(op *graphir.Op) (*graphir.TensorType, error) {
	tys, err := op.Def.InferTypes(op)
	if err != nil {
		return nil, err
	}
	t := graphir.AsTensor(tys[0])
	if t == nil {
		return nil, op.Errorf("result is not a tensor")
	}
	return t, nil
}

// checkArgs checks that evaluator inputs match the op's operand types, so
// evaluators can index without bounds surprises.
func checkArgs(op *graphir.Op, args []*graphir.Tensor) error {
	if len(args) != op.NumOperands() {
		return op.Errorf("evaluator got %d inputs for %d operands", len(args), op.NumOperands())
	}
	for i, a := range args {
		if a == nil || a.Type == nil {
			return op.Errorf("evaluator input #%d is missing", i)
		}
		if !a.Type.Equal(op.Operand(i).Type) {
			return op.Errorf("evaluator input #%d has type %s, operand type is %s", i, a.Type, op.Operand(i).Type)
		}
		if int64(len(a.Data)) != a.Type.NumElements() {
			return op.Errorf("evaluator input #%d holds %d elements, %s has %d", i, len(a.Data), a.Type, a.Type.NumElements())
		}
	}
	return nil
}

// evalPrologue checks the inputs and allocates the zeroed result tensor of
// the type Infer gives.
func evalPrologue(op *graphir.Op, args []*graphir.Tensor) (*graphir.Tensor, error) {
	if err := checkArgs(op, args); err != nil {
		return nil, err
	}
	t, err := inferOne(op)
	if err != nil {
		return nil, err
	}
	return graphir.NewZeroTensor(t), nil
}

// product multiplies dims.
func product(dims []int64) int64 {
	p := int64(1)
	for _, d := range dims {
		p *= d
	}
	return p
}

// checkShape rejects negative dimensions (types built in Go code may
// carry them; the parser never does).
func checkShape(op *graphir.Op, i int, t *graphir.TensorType) error {
	for k, d := range t.Shape {
		if d < 0 && (t.Sym == nil || t.Sym[k] == nil) {
			return op.Errorf("operand #%d has a negative dimension: %s", i, t)
		}
	}
	return nil
}

// errorf makes a plain error; callers wrap it into an op diagnostic.
func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// unravelInto writes the row-major multi-index of linear index i over
// shape into idx.
func unravelInto(i int64, shape, idx []int64) {
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 0 {
			idx[d] = i % shape[d]
			i /= shape[d]
		}
	}
}

// rewriteEach calls rewrite on every op of f named name (collected
// first: a rewrite may erase ops) and returns how many it rewrote.
func rewriteEach(f *graphir.Func, name string, rewrite func(*graphir.Op) bool) int {
	var ops []*graphir.Op
	f.Walk(func(op *graphir.Op) {
		if op.Name == name {
			ops = append(ops, op)
		}
	})
	n := 0
	for _, op := range ops {
		if op.Block != nil && rewrite(op) {
			n++
		}
	}
	return n
}
