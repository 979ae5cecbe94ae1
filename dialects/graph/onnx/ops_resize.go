package onnx

import (
	"math"

	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
)

// Resize (opsets 10–17) and Upsample (7–9) become graph.resize with the
// roi, scales and sizes inputs (constants) as attributes.

func init() {
	register(convertResize, "Resize")
	register(convertUpsample, "Upsample")
}

// resizeAttrs are the attributes graph.resize shares with ONNX Resize.
var resizeAttrs = []string{"mode", "coordinate_transformation_mode", "nearest_mode", "cubic_coeff_a", "exclude_outside", "extrapolation_value"}

// convertResize: opset 10 has inputs (X, scales) and asymmetric
// coordinates with floor rounding (Upsample's); from 11 the inputs are
// (X, roi, scales, sizes) with exactly one of scales and sizes (an empty
// tensor counts as absent).
func convertResize(n *node) ([]*value, error) {
	if err := n.need(1, 4); err != nil {
		return nil, err
	}
	if err := n.onlyAttrs(resizeAttrs...); err != nil {
		return nil, err
	}
	a := graphir.DictAttr{}
	for _, name := range resizeAttrs {
		v, err := n.resizeAttr(name)
		if err != nil {
			return nil, err
		}
		if v != nil {
			a = a.Set(name, v)
		}
	}
	scalesAt, sizesAt := 2, 3
	if n.opset < 11 {
		scalesAt, sizesAt = 1, -1
		a = a.Set("coordinate_transformation_mode", graphir.StringAttr("asymmetric")).Set("nearest_mode", graphir.StringAttr("floor"))
	} else if roi := n.in(1); roi != nil && n.in(1).typ().NumElements() > 0 {
		t, err := n.constInput(1, "roi")
		if err != nil {
			return nil, err
		}
		a = a.Set("roi", f64Array(t.Data))
	}
	a, err := n.resizeShape(a, scalesAt, sizesAt)
	if err != nil {
		return nil, err
	}
	return n.emit(graph.ResizeOp, list(n.in(0)), a)
}

// convertUpsample: scales an attribute (opset 7) or an input (9); mode
// nearest or linear ("bilinear" in opset 7 is linear), asymmetric
// coordinates, nearest rounds down.
func convertUpsample(n *node) ([]*value, error) {
	if err := n.need(1, 2); err != nil {
		return nil, err
	}
	if err := n.onlyAttrs("mode", "scales", "height_scale", "width_scale"); err != nil {
		return nil, err
	}
	mode, err := n.stringAttr("mode", "nearest")
	if err != nil {
		return nil, err
	}
	if mode == "bilinear" {
		mode = "linear"
	}
	a := graphir.DictAttr{}.Set("mode", graphir.StringAttr(mode)).
		Set("coordinate_transformation_mode", graphir.StringAttr("asymmetric")).Set("nearest_mode", graphir.StringAttr("floor"))
	if n.in(1) == nil {
		scales, err := n.floatsAttr("scales")
		if err != nil {
			return nil, err
		}
		return n.emitResize(a, scales)
	}
	a, err = n.resizeShape(a, 1, -1)
	if err != nil {
		return nil, err
	}
	return n.emit(graph.ResizeOp, list(n.in(0)), a)
}

// resizeShape sets graph.resize's sizes and scales from the scales input
// at scalesAt or the sizes input at sizesAt (−1: none).
func (n *node) resizeShape(a graphir.DictAttr, scalesAt, sizesAt int) (graphir.DictAttr, error) {
	present := func(i int) bool { return i >= 0 && n.in(i) != nil && n.in(i).typ().NumElements() > 0 }
	switch {
	case present(scalesAt) && present(sizesAt):
		return nil, n.errorf("takes scales or sizes, not both")
	case present(sizesAt):
		sizes, err := n.constInts(sizesAt, "sizes")
		if err != nil {
			return nil, err
		}
		if len(sizes) != n.in(0).typ().Rank() {
			return nil, n.errorf("sizes has %d entries for a rank-%d input", len(sizes), n.in(0).typ().Rank())
		}
		return a.Set("sizes", graphir.I64Array(sizes...)), nil
	case present(scalesAt):
		t, err := n.constInput(scalesAt, "scales")
		if err != nil {
			return nil, err
		}
		return n.scaledSizes(a, t.Data)
	}
	return nil, n.errorf("needs scales or sizes")
}

// emitResize emits graph.resize with sizes ⌊dim · scale⌋.
func (n *node) emitResize(a graphir.DictAttr, scales []float64) ([]*value, error) {
	a, err := n.scaledSizes(a, scales)
	if err != nil {
		return nil, err
	}
	return n.emit(graph.ResizeOp, list(n.in(0)), a)
}

// scaledSizes sets scales and the sizes ⌊dim · scale⌋ they imply.
func (n *node) scaledSizes(a graphir.DictAttr, scales []float64) (graphir.DictAttr, error) {
	shape := n.in(0).typ().Shape
	if len(scales) != len(shape) {
		return nil, n.errorf("scales has %d entries for a rank-%d input", len(scales), len(shape))
	}
	sizes := make([]int64, len(shape))
	for i, s := range scales {
		if !(s > 0) || math.IsInf(s, 0) {
			return nil, n.errorf("scales[%d] = %g must be positive and finite", i, s)
		}
		sizes[i] = int64(math.Floor(float64(shape[i]) * s))
	}
	return a.Set("sizes", graphir.I64Array(sizes...)).Set("scales", f64Array(scales)), nil
}

// resizeAttr converts ONNX attribute name to graph.resize's kind, or nil
// when absent.
func (n *node) resizeAttr(name string) (graphir.Attribute, error) {
	a := n.attr(name)
	if a == nil {
		return nil, nil
	}
	return n.graphAttr(a, graphir.LookupOp(graph.ResizeOp).Spec(name).Kind)
}

// floatsAttr reads a required float-list attribute.
func (n *node) floatsAttr(name string) ([]float64, error) {
	a := n.attr(name)
	if a == nil {
		return nil, n.errorf("attribute '%s' is required", name)
	}
	out := make([]float64, len(a.GetFloats()))
	for i, f := range a.GetFloats() {
		out[i] = float64(f)
	}
	return out, nil
}

// onlyAttrs refuses an attribute not in names as unsupported.
func (n *node) onlyAttrs(names ...string) error {
	for _, a := range n.p.GetAttribute() {
		ok := false
		for _, name := range names {
			ok = ok || a.GetName() == name
		}
		if !ok {
			return n.errorf("unsupported attribute '%s'", a.GetName())
		}
	}
	return nil
}

// f64Array is an array of f64 float attributes (exact for f32 values).
func f64Array(vs []float64) graphir.ArrayAttr {
	out := make(graphir.ArrayAttr, len(vs))
	for i, v := range vs {
		out[i] = &graphir.FloatAttr{Value: v, Type: &graphir.ScalarType{DType: graphir.F64}}
	}
	return out
}
