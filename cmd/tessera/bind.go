package main

import (
	"fmt"
	"strconv"
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

// parseFixDims parses --fix-dim NAME=N flags (N ≥ 1): symbolic input
// dimensions of an ONNX model pinned to a size (onnx.Options.FixDims).
func parseFixDims(flags []string) (map[string]int64, error) { return parseDimFlags("fix-dim", flags) }

// parseDimFlags reads the NAME=N values of the repeatable flag --flag
// (--fix-dim, --bind-dim). Errors: a malformed value, N < 1, a name given
// twice.
func parseDimFlags(flag string, flags []string) (map[string]int64, error) {
	out := map[string]int64{}
	for _, f := range flags {
		name, size, ok := strings.Cut(f, "=")
		n, err := strconv.ParseInt(size, 10, 64)
		if !ok || name == "" || err != nil || n < 1 {
			return nil, fmt.Errorf("--%s %q: expected NAME=N, N a positive integer", flag, f)
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("--%s: dimension '%s' is given twice", flag, name)
		}
		out[name] = n
	}
	return out, nil
}

// graphTensor converts a runtime tensor to a graph-level constant (every
// dtype the runtime has: f32, f64, f16, bf16, i8 ... i64, ui8 ... ui64,
// i1; integers are exact below 2^53, as graph constants hold them).
func graphTensor(t *rt.Tensor) (*graphir.Tensor, error) {
	dt, ok := graphir.ParseDType(t.DType().String())
	if !ok {
		return nil, fmt.Errorf("dtype %s has no graph-dialect type", t.DType())
	}
	return &graphir.Tensor{Type: graphir.NewTensor(dt, t.Shape()...), Data: t.Float64Values()}, nil
}
