package graph

import (
	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// Scatters whose indices are a runtime tensor (an operand of any integer
// type), legalized to hlo.scatter (ONNX ScatterElements, ScatterND and the
// deprecated Scatter, which the importer maps to scatter_elements):
//
//	graph.scatter_elements(data, indices, updates) {axis = 0, reduction = "none"}
//	  (ONNX ScatterElements): indices and updates have one shape, of data's
//	  rank, with dims no larger than data's except along axis; the result
//	  (data's type) is data with, for every position i of updates,
//	  result[i with i[axis] = indices[i]] = f(result[...], updates[i]).
//	graph.scatter_nd(data, indices, updates) {reduction = "none"} (ONNX
//	  ScatterND): the last dim k ≤ rank(data) of indices holds index
//	  vectors into data's first k dims; updates has shape
//	  indices.shape[:-1] ++ data.shape[k:]; for every index vector
//	  position b, result[indices[b], …] = f(result[indices[b], …], updates[b, …])
//	  over the whole slice.
//
// reduction is "none" (f(old, new) = new), "add", "mul", "max" or "min"
// (ONNX opset 16's reduction; max and min are opset 18's). data and
// updates share any element type (float, integer or i1; on i1 add and max
// are or, mul and min are and); max and min propagate NaN.
//
// Updates are applied one at a time in row-major order of updates (of
// the index vectors for scatter_nd), each result rounded to the element
// type: with duplicate indices and reduction "none" the last update wins
// (ONNX leaves that undefined; this makes it deterministic), with a
// reduction every duplicate is combined in that order.
//
// Indices in [−s, s−1] (s the indexed dim's size) are valid, negative ones
// counting from the end (ONNX). An update whose index lies outside that
// range is skipped, changing nothing (XLA's scatter semantics; ONNX calls
// such indices an error): the reference evaluator, the hlo and tensor IR
// levels and compiled code all skip it, so no store is out of bounds.
const (
	ScatterElementsOp = "graph.scatter_elements"
	ScatterNDOp       = "graph.scatter_nd"
)

// ScatterReductions are the values of the scatter ops' reduction attribute.
var ScatterReductions = []string{"none", "add", "mul", "max", "min"}

func init() {
	register(&graphir.OpDef{
		Name:     ScatterElementsOp,
		Summary:  "combine updates into data at per-element runtime indices along one axis (ONNX ScatterElements)",
		Operands: graphir.Exactly(3),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Attrs: []graphir.AttrSpec{
			{Name: "axis", Kind: graphir.KindInt, Default: graphir.IntAttr(0)},
			{Name: "reduction", Kind: graphir.KindEnum, Enum: ScatterReductions, Default: graphir.StringAttr("none")},
		},
		Infer:  func(op *graphir.Op) ([]graphir.Type, error) { return inferScatter(op, scatterElementsConfig) },
		Eval:   evalScatterElements,
		Pretty: true,
	}, Conversions{Legalize: legalizeScatterElements, ONNX: "ScatterElements"})
	register(&graphir.OpDef{
		Name:     ScatterNDOp,
		Summary:  "combine slices of updates into data at runtime index vectors (ONNX ScatterND)",
		Operands: graphir.Exactly(3),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Attrs: []graphir.AttrSpec{
			{Name: "reduction", Kind: graphir.KindEnum, Enum: ScatterReductions, Default: graphir.StringAttr("none")},
		},
		Infer:  func(op *graphir.Op) ([]graphir.Type, error) { return inferScatter(op, scatterNDConfig) },
		Eval:   evalScatterND,
		Pretty: true,
	}, Conversions{Legalize: legalizeScatterND, ONNX: "ScatterND"})
}

// scatterCfg is what both scatter ops' checks establish.
type scatterCfg struct {
	x, ind, upd *graphir.TensorType
	axis        int // scatter_elements
	k           int // scatter_nd: index vector length
	reduction   string
}

func inferScatter(op *graphir.Op, config func(*graphir.Op) (*scatterCfg, error)) ([]graphir.Type, error) {
	c, err := config(op)
	if err != nil {
		return nil, err
	}
	return one(c.x), nil
}

// scatterOperands checks the operands common to both ops: data of rank
// ≥ 1, integer indices, updates of data's element type, and the reduction.
func scatterOperands(op *graphir.Op) (*scatterCfg, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	if len(ts) != 3 {
		return nil, op.Errorf("expects 3 operands (data, indices, updates), got %d", len(ts))
	}
	c := &scatterCfg{x: ts[0], ind: ts[1], upd: ts[2]}
	if c.x.Rank() == 0 {
		return nil, op.Errorf("data must have rank at least 1")
	}
	if !c.ind.Elem.IsInt() || c.ind.Elem == graphir.I1 {
		return nil, op.Errorf("indices must have an integer element type, got %s", c.ind)
	}
	if c.upd.Elem != c.x.Elem {
		return nil, op.Errorf("updates must have the data's element type %s, got %s", c.x.Elem, c.upd)
	}
	if c.reduction, err = op.Str("reduction"); err != nil {
		return nil, err
	}
	if scatterBody(c.reduction) == "?" {
		return nil, op.Errorf("attribute 'reduction' must be one of %q, got %q", ScatterReductions, c.reduction)
	}
	return c, nil
}

func scatterElementsConfig(op *graphir.Op) (*scatterCfg, error) {
	c, err := scatterOperands(op)
	if err != nil {
		return nil, err
	}
	axis, err := op.Int("axis")
	if err != nil {
		return nil, err
	}
	if c.axis, err = normAxis(op, axis, c.x.Rank()); err != nil {
		return nil, err
	}
	if c.ind.Rank() != c.x.Rank() {
		return nil, op.Errorf("indices must have the data's rank %d, got %s", c.x.Rank(), c.ind)
	}
	if !shapeEq(c.upd.Shape, c.ind.Shape) {
		return nil, op.Errorf("updates must have the indices' shape %s, got %s", shapeString(c.ind.Shape), c.upd)
	}
	for d := range c.x.Shape {
		if d != c.axis && c.ind.Shape[d] > c.x.Shape[d] {
			return nil, op.Errorf("indices dimension %d has size %d, larger than the data's %d", d, c.ind.Shape[d], c.x.Shape[d])
		}
	}
	return c, nil
}

func scatterNDConfig(op *graphir.Op) (*scatterCfg, error) {
	c, err := scatterOperands(op)
	if err != nil {
		return nil, err
	}
	q := c.ind.Rank()
	if q < 1 {
		return nil, op.Errorf("indices must have rank at least 1, got %s", c.ind)
	}
	c.k = int(c.ind.Shape[q-1])
	if c.k > c.x.Rank() {
		return nil, op.Errorf("index vectors of length %d exceed the data's rank %d", c.k, c.x.Rank())
	}
	want := append(append([]int64(nil), c.ind.Shape[:q-1]...), c.x.Shape[c.k:]...)
	if !shapeEq(c.upd.Shape, want) {
		return nil, op.Errorf("updates must have shape %s (indices.shape[:-1] ++ data.shape[%d:]), got %s", shapeString(want), c.k, c.upd)
	}
	return c, nil
}

// scatterBody is the hlo op combining the current value with an update
// ("" for none: the update replaces it; "?" for an unknown reduction).
func scatterBody(reduction string) string {
	switch reduction {
	case "none":
		return ""
	case "add":
		return hlo.AddOp
	case "mul":
		return hlo.MultiplyOp
	case "max":
		return hlo.MaximumOp
	case "min":
		return hlo.MinimumOp
	}
	return "?"
}

// combine applies the reduction to the current value a and the update b,
// rounded to dt (as hlo.scatter's evaluator does).
func (c *scatterCfg) combine(dt graphir.DType, a, b float64) float64 {
	var v float64
	switch c.reduction {
	case "add":
		v = a + b
	case "mul":
		v = a * b
	case "max":
		v = hlo.FMax(a, b)
	case "min":
		v = hlo.FMin(a, b)
	default:
		v = b
	}
	return graphir.RoundTo(dt, v)
}

// scatterIndex wraps index v of a dim of size s, reporting false when it
// lies outside [−s, s−1] (the update is skipped).
func scatterIndex(v float64, s int64) (int64, bool) {
	i := int64(v)
	if i < -s || i >= s {
		return 0, false
	}
	if i < 0 {
		i += s
	}
	return i, true
}

func evalScatterElements(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	if err := checkArgs(op, args); err != nil {
		return nil, err
	}
	c, err := scatterElementsConfig(op)
	if err != nil {
		return nil, err
	}
	out := &graphir.Tensor{Type: c.x, Data: append([]float64(nil), args[0].Data...)}
	ind, upd := args[1], args[2]
	idx := make([]int64, c.ind.Rank())
	for u, v := range upd.Data {
		i, ok := scatterIndex(ind.Data[u], c.x.Shape[c.axis])
		if !ok {
			continue
		}
		unravelInto(int64(u), c.ind.Shape, idx)
		idx[c.axis] = i
		o := offsetOf(idx, c.x.Shape)
		out.Data[o] = c.combine(c.x.Elem, out.Data[o], v)
	}
	return []*graphir.Tensor{out}, nil
}

func evalScatterND(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	if err := checkArgs(op, args); err != nil {
		return nil, err
	}
	c, err := scatterNDConfig(op)
	if err != nil {
		return nil, err
	}
	out := &graphir.Tensor{Type: c.x, Data: append([]float64(nil), args[0].Data...)}
	ind, upd := args[1], args[2]
	slice := product(c.x.Shape[c.k:])
	strides := graphir.Strides(c.x.Shape)
	rows := product(c.ind.Shape[:c.ind.Rank()-1])
rows:
	for b := int64(0); b < rows; b++ {
		base := int64(0)
		for j := 0; j < c.k; j++ {
			i, ok := scatterIndex(ind.Data[b*int64(c.k)+int64(j)], c.x.Shape[j])
			if !ok {
				continue rows
			}
			base += i * strides[j]
		}
		for t := int64(0); t < slice; t++ {
			out.Data[base+t] = c.combine(c.x.Elem, out.Data[base+t], upd.Data[b*slice+t])
		}
	}
	return []*graphir.Tensor{out}, nil
}

// legalizeScatterElements: index vectors (iota, ..., wrapped indices at
// axis, ..., iota; for rank 1 the wrapped indices alone) and an
// hlo.scatter of single elements.
func legalizeScatterElements(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	c, err := scatterElementsConfig(op)
	if err != nil {
		return nil, err
	}
	x, ind, upd := op.Operand(0), op.Operand(1), op.Operand(2)
	if c.ind.NumElements() == 0 || c.x.NumElements() == 0 {
		return []*graphir.Value{x}, nil
	}
	r := c.x.Rank()
	var vec *graphir.Value
	if r == 1 {
		vec, err = b.wrapIndices(ind, []int64{c.x.Shape[0]}, -1)
	} else {
		parts := make([]*graphir.Value, r)
		for d := range parts {
			if d == c.axis {
				parts[d], err = b.wrapIndices(ind, []int64{c.x.Shape[d]}, -1)
			} else {
				parts[d], err = b.iotaAlong(c.ind, d)
			}
			if err != nil {
				return nil, err
			}
		}
		vec, err = b.indexVectors(parts)
	}
	if err != nil {
		return nil, err
	}
	ivd := int64(r)
	if r == 1 {
		ivd = 1
	}
	return oneValue(b.insert(hlo.Scatter(x, vec, upd, hlo.ScatterDims{
		InsertedWindowDims: iota64(0, r), ScatterDimsToOperandDims: iota64(0, r), IndexVectorDim: ivd,
	}, scatterBody(c.reduction), op.Loc)))
}

// legalizeScatterND: the index vectors wrapped component by component,
// and an hlo.scatter inserting the k indexed dims with windows of the
// trailing data dims.
func legalizeScatterND(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	c, err := scatterNDConfig(op)
	if err != nil {
		return nil, err
	}
	x, ind, upd := op.Operand(0), op.Operand(1), op.Operand(2)
	if c.upd.NumElements() == 0 || c.x.NumElements() == 0 {
		return []*graphir.Value{x}, nil
	}
	q, r := c.ind.Rank(), c.x.Rank()
	if c.k > 0 {
		if ind, err = b.wrapIndices(ind, c.x.Shape[:c.k], q-1); err != nil {
			return nil, err
		}
	}
	return oneValue(b.insert(hlo.Scatter(x, ind, upd, hlo.ScatterDims{
		UpdateWindowDims: iota64(q-1, q-1+r-c.k), InsertedWindowDims: iota64(0, c.k),
		ScatterDimsToOperandDims: iota64(0, c.k), IndexVectorDim: int64(q - 1),
	}, scatterBody(c.reduction), op.Loc)))
}
