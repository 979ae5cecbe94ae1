package onnx

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tessera-ml/tessera/dialects/graph/onnx/onnxpb"
	"github.com/tessera-ml/tessera/graphir"
)

// Shapes: every graph input must declare a tensor type whose dimensions
// are numbers or named symbols (dim_param). A symbol that Options.FixDims
// pins, or that Options.InputShapes sizes, becomes that number; the others
// stay symbolic (graphir.TensorType.Sym, named by symbolName). From there
// every value's shape follows from the graph ops' own shape inference
// (graphir.Build runs each op's Infer, symbolically where the op takes
// symbols), and shape-computation subgraphs (Shape, Gather, Concat, ...)
// over static shapes fold to constants in fold.go.

// inputType returns the tensor type of a graph input, its symbolic
// dimensions pinned by Options.FixDims or sized from InputShapes.
func (im *importer) inputType(vi *onnxpb.ValueInfoProto) (*graphir.TensorType, error) {
	tt := vi.GetType().GetTensorType()
	if tt == nil {
		return nil, fmt.Errorf("input '%s' is not a tensor (sequence, map and optional inputs are not supported)", vi.GetName())
	}
	dt, err := elemType(tt.GetElemType())
	if err != nil {
		return nil, fmt.Errorf("input '%s': unsupported element type %s", vi.GetName(), dataTypeName(tt.GetElemType()))
	}
	if tt.GetShape() == nil {
		return nil, fmt.Errorf("dynamic shape: input '%s' has no shape; Tessera needs static shapes", vi.GetName())
	}
	dims, err := im.inputDims(vi.GetName(), tt.GetShape())
	if err != nil {
		return nil, err
	}
	return graphir.NewTensorDims(dt, dims...), nil
}

// symbolName is the graph symbol of ONNX dim_param p: p itself when it is
// an identifier (graphir.ValidSymbol), else p with every other character
// replaced by '_' (and a leading '_' before a digit).
func symbolName(p string) string {
	if graphir.ValidSymbol(p) {
		return p
	}
	b := []byte(p)
	for i, c := range b {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
		}
	}
	if len(b) == 0 || b[0] >= '0' && b[0] <= '9' {
		b = append([]byte{'_'}, b...)
	}
	return string(b)
}

func (im *importer) inputDims(name string, s *onnxpb.TensorShapeProto) ([]*graphir.SymExpr, error) {
	dims := make([]*graphir.SymExpr, len(s.GetDim()))
	for i, d := range s.GetDim() {
		switch v := d.GetValue().(type) {
		case *onnxpb.TensorShapeProto_Dimension_DimValue:
			if v.DimValue < 0 {
				return nil, fmt.Errorf("input '%s' dimension %d is negative (%d)", name, i, v.DimValue)
			}
			dims[i] = graphir.SymConst(v.DimValue)
		case *onnxpb.TensorShapeProto_Dimension_DimParam:
			n, ok := im.fix[v.DimParam]
			if !ok {
				var err error
				if n, ok, err = im.symbolFromInput(name, v.DimParam, i, len(s.GetDim())); err != nil {
					return nil, err
				}
			}
			if !ok {
				dims[i] = graphir.Sym(symbolName(v.DimParam))
				continue
			}
			im.fixed[v.DimParam] = true
			dims[i] = graphir.SymConst(n)
		default:
			return nil, fmt.Errorf("dynamic shape: input '%s' dimension %d is unknown (neither a number nor a named symbol); Tessera needs its size or name", name, i)
		}
	}
	return dims, nil
}

// symbolFromInput reads symbol sym at dimension dim of the current graph
// input (of rank rank) from Options.InputShapes: ok false when no shape
// of that rank is given for it; an error naming both inputs when an
// earlier input gave sym another size.
func (im *importer) symbolFromInput(name, sym string, dim, rank int) (int64, bool, error) {
	k := im.curInput
	if k < 0 || k >= len(im.shapes) || len(im.shapes[k]) != rank {
		return 0, false, nil
	}
	n := im.shapes[k][dim]
	if j, seen := im.fromInput[sym]; seen {
		if m := im.shapes[j.index][j.dim]; m != n {
			return 0, false, fmt.Errorf("inconsistent inputs: symbolic dimension '%s' is %d in %s but %d in %s", sym, m, im.inputLabel(j.index, j.name), n, im.inputLabel(k, name))
		}
		return n, true, nil
	}
	im.fromInput[sym] = symbolSource{index: k, dim: dim, name: name}
	return n, true, nil
}

// symbolSource is the input dimension a symbol took its size from.
type symbolSource struct {
	index, dim int
	name       string
}

// inputLabel names graph input k (ONNX name name) in a diagnostic, with
// the file its shape came from when the caller said.
func (im *importer) inputLabel(k int, name string) string {
	if k < len(im.shapeNames) && im.shapeNames[k] != "" {
		return fmt.Sprintf("input '%s' (%s)", name, im.shapeNames[k])
	}
	return fmt.Sprintf("input '%s'", name)
}

// unusedFixes refuses a pinned symbol that no graph input's dimension
// names, listing the symbols the inputs have.
func (im *importer) unusedFixes(g *onnxpb.GraphProto) error {
	var unused []string
	for name := range im.fix {
		if !im.fixed[name] {
			unused = append(unused, name)
		}
	}
	if len(unused) == 0 {
		return nil
	}
	sort.Strings(unused)
	have := map[string]bool{}
	for _, in := range g.GetInput() {
		for _, d := range in.GetType().GetTensorType().GetShape().GetDim() {
			if p := d.GetDimParam(); p != "" {
				have[p] = true
			}
		}
	}
	names := make([]string, 0, len(have))
	for p := range have {
		names = append(names, "'"+p+"'")
	}
	sort.Strings(names)
	list := "none"
	if len(names) > 0 {
		list = strings.Join(names, ", ")
	}
	return fmt.Errorf("cannot fix dimension '%s': no input dimension of the model is named so (its symbolic dimensions: %s)", unused[0], list)
}

// checkOutputType compares a graph output's declared type (where it
// declares one) with the inferred type t.
func checkOutputType(vi *onnxpb.ValueInfoProto, t *graphir.TensorType) error {
	tt := vi.GetType().GetTensorType()
	if tt == nil {
		return nil
	}
	if et := tt.GetElemType(); et != 0 {
		dt, err := elemType(et)
		if err != nil {
			return fmt.Errorf("output '%s': unsupported element type %s", vi.GetName(), dataTypeName(et))
		}
		if dt != t.Elem {
			return fmt.Errorf("output '%s' is declared %s but computes %s", vi.GetName(), dataTypeName(et), t)
		}
	}
	s := tt.GetShape()
	if s == nil {
		return nil
	}
	if len(s.GetDim()) != t.Rank() {
		return fmt.Errorf("output '%s' is declared with rank %d but computes %s", vi.GetName(), len(s.GetDim()), t)
	}
	for i, d := range s.GetDim() {
		if v, ok := d.GetValue().(*onnxpb.TensorShapeProto_Dimension_DimValue); ok && v.DimValue != t.Shape[i] {
			return fmt.Errorf("output '%s' dimension %d is declared %d but computes %s", vi.GetName(), i, v.DimValue, t)
		}
	}
	return nil
}

// normAxis maps a possibly negative axis into [0, rank).
func (n *node) normAxis(axis int64, rank int) (int, error) {
	if axis < -int64(rank) || axis >= int64(rank) {
		return 0, n.errorf("axis %d is out of range for rank %d", axis, rank)
	}
	if axis < 0 {
		axis += int64(rank)
	}
	return int(axis), nil
}

// broadcastShapes is NumPy (multidirectional) broadcasting.
func broadcastShapes(a, b []int64) ([]int64, bool) {
	r := len(a)
	if len(b) > r {
		r = len(b)
	}
	out := make([]int64, r)
	for i := 0; i < r; i++ {
		da, db := int64(1), int64(1)
		if j := i - (r - len(a)); j >= 0 {
			da = a[j]
		}
		if j := i - (r - len(b)); j >= 0 {
			db = b[j]
		}
		switch {
		case da == db || db == 1:
			out[i] = da
		case da == 1:
			out[i] = db
		default:
			return nil, false
		}
	}
	return out, true
}
