package main

import (
	"fmt"
	"strings"

	"github.com/tessera-ml/tessera/graphir"
	rt "github.com/tessera-ml/tessera/runtime"
)

// parseBindings reads --bind-input NAME=FILE.npy flags into constant
// values for onnx.Options.Bind. Errors: a flag without '=', a repeated
// name, an unreadable .npy or a dtype the graph dialect has no type for.
func parseBindings(flags []string) (map[string]*graphir.Tensor, error) {
	out := map[string]*graphir.Tensor{}
	for _, f := range flags {
		name, path, ok := strings.Cut(f, "=")
		if !ok || name == "" || path == "" {
			return nil, fmt.Errorf("--bind-input %q: expected NAME=FILE.npy", f)
		}
		if out[name] != nil {
			return nil, fmt.Errorf("--bind-input: input '%s' is bound twice", name)
		}
		t, err := rt.ReadNPY(path)
		if err != nil {
			return nil, fmt.Errorf("--bind-input %s: %v", name, err)
		}
		if out[name], err = graphTensor(t); err != nil {
			return nil, fmt.Errorf("--bind-input %s (%s): %v", name, path, err)
		}
	}
	return out, nil
}

// graphTensor converts a runtime tensor of a dtype the graph dialect has
// (f32, f64, i8, i32, i64, i1) to a graph-level constant.
func graphTensor(t *rt.Tensor) (*graphir.Tensor, error) {
	dt, ok := graphir.ParseDType(t.DType().String())
	if !ok {
		return nil, fmt.Errorf("dtype %s has no graph-dialect type", t.DType())
	}
	var data []float64
	switch t.DType() {
	case rt.Float32:
		data = widen(rt.View[float32](t))
	case rt.Float64:
		data = widen(rt.View[float64](t))
	case rt.Int32:
		data = widen(rt.View[int32](t))
	case rt.Int64:
		data = widen(rt.View[int64](t))
	case rt.Int8:
		data = widen(rt.View[int8](t))
	case rt.Bool:
		bs, _ := rt.View[bool](t)
		data = make([]float64, len(bs))
		for i, b := range bs {
			if b {
				data[i] = 1
			}
		}
	default:
		return nil, fmt.Errorf("dtype %s cannot be bound (f32, f64, i8, i32, i64 or i1)", t.DType())
	}
	return &graphir.Tensor{Type: graphir.NewTensor(dt, t.Shape()...), Data: data}, nil
}

func widen[T float32 | float64 | int8 | int32 | int64](xs []T, err error) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = float64(x)
	}
	return out
}
