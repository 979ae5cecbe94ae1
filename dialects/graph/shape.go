package graph

import (
	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// Shape-manipulation op names.
//
//	graph.flatten(x) {axis = 1}: ONNX Flatten, → [prod(dims[:axis]), prod(dims[axis:])],
//	  axis in [-rank, rank].
//	graph.reshape(x) {shape = [...] (required)}: ONNX Reshape (allowzero = 0):
//	  0 copies the input dimension at that index, one -1 is inferred.
//	graph.transpose(x) {perm = [...]}: ONNX Transpose, result dim i = input
//	  dim perm[i]; default reverses the dimensions.
//	graph.concat(xs...) {axis (required)}: ONNX Concat, axis in [-rank, rank-1].
const (
	FlattenOp   = "graph.flatten"
	ReshapeOp   = "graph.reshape"
	TransposeOp = "graph.transpose"
	ConcatOp    = "graph.concat"
)

func init() {
	register(&graphir.OpDef{
		Name:         FlattenOp,
		Summary:      "flatten to 2-D at axis (ONNX Flatten)",
		Operands:     graphir.Exactly(1),
		Results:      graphir.Exactly(1),
		Traits:       graphir.Pure,
		Attrs:        []graphir.AttrSpec{{Name: "axis", Kind: graphir.KindInt, Default: graphir.IntAttr(1)}},
		Symbolic:     true,
		Infer:        inferFlatten,
		Eval:         evalCopy,
		Pretty:       true,
		Canonicalize: []*graphir.Pattern{dropIdentity(FlattenOp), foldReshapeChain(FlattenOp)},
	}, Conversions{Legalize: legalizeReshape, Symbolic: true})
	register(&graphir.OpDef{
		Name:         ReshapeOp,
		Summary:      "reshape to a static shape; 0 copies a dim, one -1 is inferred (ONNX Reshape)",
		Operands:     graphir.Exactly(1),
		Results:      graphir.Exactly(1),
		Traits:       graphir.Pure,
		Attrs:        []graphir.AttrSpec{{Name: "shape", Kind: graphir.KindIntArray, Required: true}},
		Symbolic:     true,
		Infer:        inferReshape,
		Eval:         evalCopy,
		Pretty:       true,
		Canonicalize: []*graphir.Pattern{dropIdentity(ReshapeOp), foldReshapeChain(ReshapeOp)},
	}, Conversions{Legalize: legalizeReshape, Symbolic: true})
	register(&graphir.OpDef{
		Name:         TransposeOp,
		Summary:      "permute dimensions: result dim i = input dim perm[i] (ONNX Transpose)",
		Operands:     graphir.Exactly(1),
		Results:      graphir.Exactly(1),
		Traits:       graphir.Pure,
		Attrs:        []graphir.AttrSpec{{Name: "perm", Kind: graphir.KindIntArray}},
		Symbolic:     true,
		Infer:        inferTranspose,
		Eval:         evalTranspose,
		Pretty:       true,
		Canonicalize: []*graphir.Pattern{dropIdentityTranspose(), foldTransposeChain()},
	}, Conversions{Legalize: legalizeTranspose, Symbolic: true})
	register(&graphir.OpDef{
		Name:         ConcatOp,
		Summary:      "concatenate along axis (ONNX Concat)",
		Operands:     graphir.AtLeast(1),
		Results:      graphir.Exactly(1),
		Traits:       graphir.Pure,
		Attrs:        []graphir.AttrSpec{{Name: "axis", Kind: graphir.KindInt, Required: true}},
		Symbolic:     true,
		Infer:        inferConcat,
		Eval:         evalConcat,
		Pretty:       true,
		Canonicalize: []*graphir.Pattern{concatSingle()},
	}, Conversions{Legalize: legalizeConcat, Symbolic: true})
}

func inferFlatten(op *graphir.Op) ([]graphir.Type, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	axis, err := op.Int("axis")
	if err != nil {
		return nil, err
	}
	r := int64(ts[0].Rank())
	if axis < -r || axis > r {
		return nil, op.Errorf("axis %d is out of range for rank %d (expected [%d, %d])", axis, r, -r, r)
	}
	if axis < 0 {
		axis += r
	}
	dims := ts[0].Dims()
	return one(graphir.NewTensorDims(ts[0].Elem, productDims(dims[:axis]), productDims(dims[axis:]))), nil
}

// ReshapeShape resolves an ONNX Reshape target (allowzero = 0) against the
// input shape: 0 copies the input dimension at the same index, a single -1
// takes the remaining element count. It errors on other negative entries,
// more than one -1, a 0 past the input rank, an ambiguous -1 (other
// dimensions with product 0) and an element count mismatch.
func ReshapeShape(in, target []int64) ([]int64, error) {
	dims, err := reshapeDims(graphir.NewTensor(graphir.F32, in...).Dims(), target)
	if err != nil {
		return nil, err
	}
	return graphir.NewTensorDims(graphir.F32, dims...).Shape, nil
}

// reshapeDims is ReshapeShape over dimension expressions: a 0 copies the
// input's expression, and the -1 is the input's element count divided by
// the other dimensions' product, which must divide it for every value of
// the symbols (graphir.SymExpr.DivExactBy).
func reshapeDims(in []*graphir.SymExpr, target []int64) ([]*graphir.SymExpr, error) {
	out := make([]*graphir.SymExpr, len(target))
	infer := -1
	known := graphir.SymConst(1)
	for i, d := range target {
		switch {
		case d == -1:
			if infer >= 0 {
				return nil, errorf("shape %s has more than one -1", shapeString(target))
			}
			infer = i
			continue
		case d == 0:
			if i >= len(in) {
				return nil, errorf("shape %s copies dimension %d (0) but the input %s has rank %d", shapeString(target), i, dimsString(in), len(in))
			}
			out[i] = in[i]
		case d < 0:
			return nil, errorf("shape %s has invalid dimension %d", shapeString(target), d)
		default:
			out[i] = graphir.SymConst(d)
		}
		known = known.Mul(out[i])
	}
	total := productDims(in)
	if infer >= 0 {
		q, ok := total.DivExactBy(known)
		if !ok {
			if _, static := total.Const(); static {
				return nil, errorf("cannot infer -1 in shape %s for input %s (%s elements)", shapeString(target), dimsString(in), total)
			}
			return nil, errorf("cannot infer -1 in shape %s for input %s: %s elements are not a multiple of %s for every value of the symbols", shapeString(target), dimsString(in), total, known)
		}
		out[infer] = q
		known = total
	}
	if !known.Equal(total) {
		return nil, errorf("shape %s has %s elements, input %s has %s", dimsString(out), known, dimsString(in), total)
	}
	return out, nil
}

func inferReshape(op *graphir.Op) ([]graphir.Type, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	if op.Attr("shape") == nil {
		return nil, op.Errorf("requires attribute 'shape'")
	}
	target, err := op.Ints("shape")
	if err != nil {
		return nil, err
	}
	if countOf(target, -1) > 1 {
		return reshapeToWritten(op, ts[0], target)
	}
	dims, err := reshapeDims(ts[0].Dims(), target)
	if err != nil {
		return nil, op.Errorf("%v", err)
	}
	return one(graphir.NewTensorDims(ts[0].Elem, dims...)), nil
}

// reshapeToWritten infers a reshape whose shape attribute has more than
// one −1: each −1 is the written result type's dimension (a reshape over
// symbolic dimensions that splits one into several, [b*s, 256] to
// [s, b, 256], which the attribute alone cannot say; the importer writes
// the type). The element counts must be equal for every value of the
// symbols. Errors: no written result, a 0 past the input's rank, element
// counts that differ.
func reshapeToWritten(op *graphir.Op, in *graphir.TensorType, target []int64) ([]graphir.Type, error) {
	var rt *graphir.TensorType
	if len(op.Results) == 1 {
		rt = graphir.AsTensor(op.Results[0].Type)
	}
	if rt == nil || rt.Rank() != len(target) {
		return nil, op.Errorf("shape %s has more than one -1, which only a written result type of rank %d resolves", shapeString(target), len(target))
	}
	dims := make([]*graphir.SymExpr, len(target))
	for i, d := range target {
		switch {
		case d == -1:
			dims[i] = rt.Dim(i)
		case d == 0 && i < in.Rank():
			dims[i] = in.Dim(i)
		case d < 0 || d == 0:
			return nil, op.Errorf("shape %s has invalid dimension %d at %d for input %s", shapeString(target), d, i, in)
		default:
			dims[i] = graphir.SymConst(d)
		}
	}
	if a, b := productDims(in.Dims()), productDims(dims); !a.Equal(b) {
		return nil, op.Errorf("shape %s resolved by the result type %s has %s elements, input %s has %s", shapeString(target), rt, b, in, a)
	}
	return one(graphir.NewTensorDims(in.Elem, dims...)), nil
}

// evalCopy evaluates ops that keep the row-major data (reshape, flatten).
func evalCopy(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	copy(out.Data, args[0].Data)
	return []*graphir.Tensor{out.Round()}, nil
}

// transposePerm returns the validated permutation of op for an input of rank r.
func transposePerm(op *graphir.Op, r int) ([]int64, error) {
	def := make([]int64, r)
	for i := range def {
		def[i] = int64(r - 1 - i)
	}
	perm, err := intsOr(op, "perm", def)
	if err != nil {
		return nil, err
	}
	if len(perm) != r {
		return nil, op.Errorf("perm %s must have %d entries (the input rank)", shapeString(perm), r)
	}
	seen := make([]bool, r)
	for _, p := range perm {
		if p < 0 || p >= int64(r) || seen[p] {
			return nil, op.Errorf("perm %s is not a permutation of [0, %d)", shapeString(perm), r)
		}
		seen[p] = true
	}
	return perm, nil
}

func inferTranspose(op *graphir.Op) ([]graphir.Type, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	perm, err := transposePerm(op, ts[0].Rank())
	if err != nil {
		return nil, err
	}
	dims := make([]*graphir.SymExpr, len(perm))
	for i, p := range perm {
		dims[i] = ts[0].Dim(int(p))
	}
	return one(graphir.NewTensorDims(ts[0].Elem, dims...)), nil
}

func evalTranspose(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	x := args[0]
	perm, err := transposePerm(op, x.Type.Rank())
	if err != nil {
		return nil, err
	}
	permute(x.Data, x.Shape(), perm, out.Data)
	return []*graphir.Tensor{out.Round()}, nil
}

// permute writes into out the elements of data (row-major, of shape) in
// the order of its dimensions permuted by perm: out's dimension i is
// data's dimension perm[i].
func permute(data []float64, shape, perm []int64, out []float64) {
	inStrides := graphir.Strides(shape)
	// st[i] is the input stride of output dimension i.
	st := make([]int64, len(perm))
	oshape := make([]int64, len(perm))
	for i, p := range perm {
		st[i], oshape[i] = inStrides[p], shape[p]
	}
	pos := make([]int64, len(oshape))
	off := int64(0)
	for k := range out {
		out[k] = data[off]
		for d := len(oshape) - 1; d >= 0; d-- {
			pos[d]++
			off += st[d]
			if pos[d] < oshape[d] {
				break
			}
			off -= st[d] * pos[d]
			pos[d] = 0
		}
	}
}

func inferConcat(op *graphir.Op) ([]graphir.Type, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	if len(ts) == 0 {
		return nil, op.Errorf("expects at least 1 operand")
	}
	if err := sameElem(op, ts); err != nil {
		return nil, err
	}
	if op.Attr("axis") == nil {
		return nil, op.Errorf("requires attribute 'axis'")
	}
	axis, err := op.Int("axis")
	if err != nil {
		return nil, err
	}
	r := ts[0].Rank()
	if r == 0 {
		return nil, op.Errorf("operands must have rank at least 1, got %s", ts[0])
	}
	ax, err := normAxis(op, axis, r)
	if err != nil {
		return nil, err
	}
	dims := ts[0].Dims()
	for i := 1; i < len(ts); i++ {
		t := ts[i]
		if t.Rank() != r {
			return nil, op.Errorf("operand #%d %s has rank %d, operand #0 %s has rank %d", i, t, t.Rank(), ts[0], r)
		}
		for d := range t.Shape {
			if d != ax && !t.Dim(d).Equal(dims[d]) {
				return nil, op.Errorf("operand #%d %s differs from operand #0 %s in dimension %d (concatenating along %d)", i, t, ts[0], d, ax)
			}
		}
		dims[ax] = dims[ax].Add(t.Dim(ax))
	}
	return one(graphir.NewTensorDims(ts[0].Elem, dims...)), nil
}

func evalConcat(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	axis, _ := op.Int("axis")
	ax, err := normAxis(op, axis, out.Type.Rank())
	if err != nil {
		return nil, err
	}
	shape := out.Shape()
	outer, inner := product(shape[:ax]), product(shape[ax+1:])
	rowOut := shape[ax] * inner
	at := int64(0) // offset of the current operand's slab within an output row
	for _, a := range args {
		rowIn := a.Shape()[ax] * inner
		for o := int64(0); o < outer; o++ {
			copy(out.Data[o*rowOut+at:o*rowOut+at+rowIn], a.Data[o*rowIn:(o+1)*rowIn])
		}
		at += rowIn
	}
	return []*graphir.Tensor{out.Round()}, nil
}

// Legalization:
//
//	graph.flatten, graph.reshape → hlo.reshape to the result type (the -1
//	    and 0 entries of reshape are already resolved in it); nothing
//	    when the types are equal
//	graph.transpose(x) {perm} → hlo.transpose {permutation = perm}
//	    (reversed dimensions when perm is absent)
//	graph.concat(xs...) {axis} → hlo.concatenate {dimension = axis}, a
//	    negative axis normalized against the rank

func legalizeReshape(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	r, err := b.reshapeDims(op.Operand(0), rt.Dims())
	return []*graphir.Value{r}, err
}

func legalizeTranspose(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x := op.Operand(0)
	perm, err := transposePerm(op, graphir.AsTensor(x.Type).Rank())
	if err != nil {
		return nil, err
	}
	r, err := b.insert(hlo.Transpose(x, perm, op.Loc))
	return []*graphir.Value{r}, err
}

func legalizeConcat(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	rt, err := b.resultTensor()
	if err != nil {
		return nil, err
	}
	axis, err := op.Int("axis")
	if err != nil {
		return nil, err
	}
	ax, err := normAxis(op, axis, rt.Rank())
	if err != nil {
		return nil, err
	}
	r, err := b.insert(hlo.Concatenate(op.Operands(), int64(ax), op.Loc))
	return []*graphir.Value{r}, err
}

// countOf returns how many entries of xs are v.
func countOf(xs []int64, v int64) int {
	n := 0
	for _, x := range xs {
		if x == v {
			n++
		}
	}
	return n
}
