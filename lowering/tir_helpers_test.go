package lowering

import (
	"math"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// parseExample reads an example model with its 360-image batch cut to
// batch images.
func parseExample(t *testing.T, path string, batch int) *graphir.Module {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	text := strings.ReplaceAll(string(src), "tensor<360x", "tensor<"+strconv.Itoa(batch)+"x")
	m, err := graphir.Parse(path, []byte(text))
	require.NoError(t, err)
	return m
}

// randomTensor fills a tensor of type tt with values of its dtype: floats
// uniform in [lo, hi), integers in [-9, 9], i1 0 or 1.
func randomTensor(rng *rand.Rand, tt *graphir.TensorType, lo, hi float64) *graphir.Tensor {
	x := graphir.NewZeroTensor(tt)
	for i := range x.Data {
		switch {
		case tt.Elem == graphir.I1:
			x.Data[i] = float64(rng.Intn(2))
		case tt.Elem.IsInt():
			x.Data[i] = float64(rng.Intn(19) - 9)
		default:
			x.Data[i] = lo + (hi-lo)*rng.Float64()
		}
	}
	return x.Round()
}

// toArray converts a graphir tensor to an interpreter array.
func toArray(t *testing.T, x *graphir.Tensor) *tir.Array {
	t.Helper()
	dt, ok := hlo.TIRDType(x.Type.Elem)
	require.True(t, ok)
	if dt.IsFloat() {
		return tir.ArrayFromFloat64(dt, x.Data, x.Type.Shape...)
	}
	ints := make([]int64, len(x.Data))
	for i, v := range x.Data {
		ints[i] = graphir.IntBits(x.Type.Elem, v)
	}
	return tir.ArrayFromInt64(dt, ints, x.Type.Shape...)
}

// runHost interprets the host function name of m on args and returns its
// results (one array per out parameter, pre-filled with NaN/garbage so
// that an element left unwritten is caught).
func runHost(t *testing.T, m *tir.Module, name string, args []*graphir.Tensor) []*tir.Array {
	t.Helper()
	return runHostAt(t, m, name, args, nil)
}

// runHostAt is runHost for a host function with symbolic dimensions (its
// scalar parameters), bound by ints.
func runHostAt(t *testing.T, m *tir.Module, name string, args []*graphir.Tensor, ints map[string]int64) []*tir.Array {
	t.Helper()
	f := m.Func(name)
	require.NotNil(t, f, "host function @%s", name)
	bind := map[*tir.Var]tir.Expr{}
	for _, p := range f.Params {
		if p.Var != nil {
			v, ok := ints[p.Var.Name]
			require.True(t, ok, "no value for %%%s", p.Var.Name)
			bind[p.Var] = tir.IntOf(p.Var.Type, v)
		}
	}
	arrays := map[string]*tir.Array{}
	var outs []*tir.Array
	ai := 0
	for _, p := range f.Params {
		switch {
		case p.Buffer == nil:
		case p.Role == tir.RoleIn:
			require.Less(t, ai, len(args))
			arrays[p.Buffer.Name] = toArray(t, args[ai])
			ai++
		default:
			a := garbageArray(t, p.Buffer, bind)
			arrays[p.Buffer.Name] = a
			outs = append(outs, a)
		}
	}
	require.NoError(t, tir.RunModule(m, name, tir.Args{Arrays: arrays, Ints: ints}))
	return outs
}

// garbageArray is an array for buffer b (its shape under bind) holding
// NaN or 77.
func garbageArray(t *testing.T, b *tir.Buffer, bind map[*tir.Var]tir.Expr) *tir.Array {
	shape := make([]int64, len(b.Shape))
	for i, d := range b.Shape {
		c, ok := tir.Simplify(tir.Substitute(d, bind), nil).(*tir.IntImm)
		require.True(t, ok, "dimension %d of %%%s", i, b.Name)
		shape[i] = c.Value
	}
	a := tir.NewArray(b.DType, shape...)
	for i := range a.Floats {
		a.Floats[i] = math.NaN()
	}
	for i := range a.Ints {
		a.Ints[i] = tir.WrapInt(b.DType, 77)
	}
	return a
}

// requireClose compares an interpreter result with a reference tensor:
// integers exactly, floats within rel·(|want| + max|want|) (f32
// accumulation order and precision differ from the float64 reference).
func requireTIRClose(t *testing.T, want *graphir.Tensor, got *tir.Array, rel float64, msg ...any) {
	t.Helper()
	require.Equal(t, len(want.Type.Shape), len(got.Shape), msg...)
	for i, d := range want.Type.Shape {
		require.Equal(t, d, got.Shape[i], msg...)
	}
	if !want.Type.Elem.IsFloat() {
		require.Len(t, got.Ints, len(want.Data), msg...)
		for i, v := range want.Data {
			require.Equal(t, graphir.IntBits(want.Type.Elem, v), got.Ints[i], append([]any{"element %d"}, i)...)
		}
		return
	}
	scale := 0.0
	for _, v := range want.Data {
		if !math.IsInf(v, 0) && !math.IsNaN(v) {
			scale = math.Max(scale, math.Abs(v))
		}
	}
	require.Len(t, got.Floats, len(want.Data), msg...)
	for i, v := range want.Data {
		g := got.Floats[i]
		if math.IsNaN(v) || math.IsInf(v, 0) {
			require.True(t, math.IsNaN(v) && math.IsNaN(g) || v == g, "element %d: want %v got %v %v", i, v, g, msg)
			continue
		}
		require.LessOrEqual(t, math.Abs(g-v), rel*(math.Abs(v)+scale)+1e-30, "element %d: want %v got %v %v", i, v, g, msg)
	}
}

// legalizeModule runs graph.LegalizeFunc on every function of m.
func legalizeModule(m *graphir.Module) error {
	for _, f := range m.Funcs {
		if err := graph.LegalizeFunc(f); err != nil {
			return err
		}
	}
	return nil
}

// must returns v, panicking on err (an attribute accessor in a test).
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
