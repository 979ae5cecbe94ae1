package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/graphir"
	rt "github.com/tessera-ml/tessera/runtime"
)

// scatterModels cover every reduction and element type (f32, f64, i8,
// i32, i64, i1; i32 and i64 indices) of both scatter ops, a scatter
// feeding an elementwise consumer and a chain of two scatters (two models:
// an entry point takes at most runtime.MaxTensors tensors). indexDims maps
// each index argument to the size of the dims it indexes: its values are
// drawn in [−s−2, s+1], so negative ones wrap and the two at each end are
// out of range (their update is skipped).
var scatterModels = []struct {
	name      string
	src       string
	indexDims map[int]int64
}{
	{"elements", `func.func @main(%x0: tensor<5x4xf32>, %i0: tensor<3x4xi64>, %u0: tensor<3x4xf32>,
    %x1: tensor<3x7xi32>, %i1: tensor<3x9xi32>, %u1: tensor<3x9xi32>,
    %x2: tensor<2x3x4xf64>, %i2: tensor<2x3x5xi64>, %u2: tensor<2x3x5xf64>,
    %x3: tensor<6xi8>, %i3: tensor<8xi64>, %u3: tensor<8xi8>,
    %i4: tensor<4x2xi32>, %u4: tensor<4x2xf32>,
    %x5: tensor<5xi1>, %i5: tensor<6xi64>, %u5: tensor<6xi1>)
    -> (tensor<5x4xf32>, tensor<3x7xi32>, tensor<2x3x4xf64>, tensor<6xi8>, tensor<5x4xf32>, tensor<5xi1>) {
  %0 = graph.scatter_elements %x0, %i0, %u0 : (tensor<5x4xf32>, tensor<3x4xi64>, tensor<3x4xf32>) -> tensor<5x4xf32>
  %1 = graph.scatter_elements %x1, %i1, %u1 {axis = 1, reduction = "add"} : (tensor<3x7xi32>, tensor<3x9xi32>, tensor<3x9xi32>) -> tensor<3x7xi32>
  %2 = graph.scatter_elements %x2, %i2, %u2 {axis = -1, reduction = "mul"} : (tensor<2x3x4xf64>, tensor<2x3x5xi64>, tensor<2x3x5xf64>) -> tensor<2x3x4xf64>
  %3 = graph.scatter_elements %x3, %i3, %u3 {reduction = "max"} : (tensor<6xi8>, tensor<8xi64>, tensor<8xi8>) -> tensor<6xi8>
  %4 = graph.scatter_elements %x0, %i4, %u4 {reduction = "min"} : (tensor<5x4xf32>, tensor<4x2xi32>, tensor<4x2xf32>) -> tensor<5x4xf32>
  %5 = graph.scatter_elements %x5, %i5, %u5 {reduction = "add"} : (tensor<5xi1>, tensor<6xi64>, tensor<6xi1>) -> tensor<5xi1>
  func.return %0, %1, %2, %3, %4, %5 : tensor<5x4xf32>, tensor<3x7xi32>, tensor<2x3x4xf64>, tensor<6xi8>, tensor<5x4xf32>, tensor<5xi1>
}
`, map[int]int64{1: 5, 4: 7, 7: 4, 10: 6, 12: 5, 15: 5}},
	{"nd", `func.func @main(%x0: tensor<5x4xf32>, %i0: tensor<3x4xi64>, %u0: tensor<3x4xf32>,
    %i6: tensor<6x2xi64>, %u6: tensor<6xf32>,
    %x7: tensor<5x3xi64>, %i7: tensor<4x1xi32>, %u7: tensor<4x3xi64>,
    %x8: tensor<3x2x4xf32>, %i8: tensor<2x2x2xi64>, %u8: tensor<2x2x4xf32>,
    %x9: tensor<4x4xi32>, %i9: tensor<3x2xi64>, %u9: tensor<3xi32>,
    %x10: tensor<6xf64>, %i10: tensor<5x1xi64>, %u10: tensor<5xf64>)
    -> (tensor<5x4xf32>, tensor<5x3xi64>, tensor<3x2x4xf32>, tensor<4x4xi32>, tensor<6xf64>) {
  %0 = graph.scatter_elements %x0, %i0, %u0 {reduction = "mul"} : (tensor<5x4xf32>, tensor<3x4xi64>, tensor<3x4xf32>) -> tensor<5x4xf32>
  %6 = graph.scatter_nd %0, %i6, %u6 : (tensor<5x4xf32>, tensor<6x2xi64>, tensor<6xf32>) -> tensor<5x4xf32>
  %s6 = graph.add %6, %x0 : tensor<5x4xf32>
  %7 = graph.scatter_nd %x7, %i7, %u7 {reduction = "add"} : (tensor<5x3xi64>, tensor<4x1xi32>, tensor<4x3xi64>) -> tensor<5x3xi64>
  %8 = graph.scatter_nd %x8, %i8, %u8 {reduction = "mul"} : (tensor<3x2x4xf32>, tensor<2x2x2xi64>, tensor<2x2x4xf32>) -> tensor<3x2x4xf32>
  %9 = graph.scatter_nd %x9, %i9, %u9 {reduction = "max"} : (tensor<4x4xi32>, tensor<3x2xi64>, tensor<3xi32>) -> tensor<4x4xi32>
  %10 = graph.scatter_nd %x10, %i10, %u10 {reduction = "min"} : (tensor<6xf64>, tensor<5x1xi64>, tensor<5xf64>) -> tensor<6xf64>
  func.return %s6, %7, %8, %9, %10 : tensor<5x4xf32>, tensor<5x3xi64>, tensor<3x2x4xf32>, tensor<4x4xi32>, tensor<6xf64>
}
`, map[int]int64{1: 5, 3: 5, 6: 5, 9: 3, 12: 4, 15: 6}},
}

// TestScatterCompiledMatchesInterpreter compiles each scatter model once
// to a shared object and runs it on three random draws: every result
// equals the graph interpreter's exactly (duplicates applied in row-major
// order, out-of-range indices skipped, each reduction and element type).
func TestScatterCompiledMatchesInterpreter(t *testing.T) {
	for _, sm := range scatterModels {
		t.Run(sm.name, func(t *testing.T) {
			dir := t.TempDir()
			model := filepath.Join(dir, "scatter.mlir")
			require.NoError(t, os.WriteFile(model, []byte(sm.src), 0o644))
			m, err := graphir.ParseString(model, sm.src)
			require.NoError(t, err)
			require.NoError(t, graphir.Verify(m))
			f := m.Funcs[0]
			so := filepath.Join(dir, "scatter.so")
			_, stderr, code := tessera("compile", model, "-o", so)
			require.Equal(t, 0, code, stderr)
			skipped := 0
			for draw := uint64(0); draw < 3; draw++ {
				r := rand.New(rand.NewPCG(draw, 19))
				args := []string{"run", so}
				var ins []*graphir.Tensor
				for i, ty := range f.Type.Inputs {
					tt := graphir.AsTensor(ty)
					gt := graphir.NewZeroTensor(tt)
					for j := range gt.Data {
						switch s, isIndex := sm.indexDims[i]; {
						case isIndex:
							gt.Data[j] = float64(r.Int64N(2*s+4) - s - 2)
							if gt.Data[j] < float64(-s) || gt.Data[j] >= float64(s) {
								skipped++
							}
						case tt.Elem == graphir.I1:
							gt.Data[j] = float64(r.IntN(2))
						case tt.Elem.IsInt():
							gt.Data[j] = float64(r.IntN(19) - 9)
						default:
							gt.Data[j] = r.Float64()*4 - 2
						}
					}
					gt = gt.Round()
					ins = append(ins, gt)
					p := filepath.Join(dir, fmt.Sprintf("x%d.npy", i))
					require.NoError(t, rt.WriteNPY(p, toRuntime(t, gt)))
					args = append(args, "--input", p)
				}
				for k := range f.Type.Results {
					args = append(args, "--output", filepath.Join(dir, fmt.Sprintf("y%d.npy", k)))
				}
				want, err := graphir.Interpret(f, ins)
				require.NoError(t, err)
				_, stderr, code := tessera(args...)
				require.Equal(t, 0, code, stderr)
				for k, w := range want {
					got := readAny(t, filepath.Join(dir, fmt.Sprintf("y%d.npy", k)))
					require.Equal(t, w.Data, got, "draw %d, result %d (%s)", draw, k, w.Type)
				}
			}
			require.Positive(t, skipped)
		})
	}
}

// toRuntime converts an interpreter tensor to a runtime tensor of its
// element type.
func toRuntime(t *testing.T, x *graphir.Tensor) *rt.Tensor {
	t.Helper()
	var out *rt.Tensor
	var err error
	switch x.Type.Elem {
	case graphir.F32:
		out, err = rt.FromSlice(x.Type.Shape, convertSlice[float32](x.Data))
	case graphir.F64:
		out, err = rt.FromSlice(x.Type.Shape, append([]float64(nil), x.Data...))
	case graphir.I8:
		v := make([]int8, len(x.Data))
		for i, d := range x.Data {
			v[i] = int8(d)
		}
		out, err = rt.FromSlice(x.Type.Shape, v)
	case graphir.I32:
		out, err = rt.FromSlice(x.Type.Shape, convertSlice[int32](x.Data))
	case graphir.I64:
		out, err = rt.FromSlice(x.Type.Shape, convertSlice[int64](x.Data))
	case graphir.I1:
		v := make([]bool, len(x.Data))
		for i, d := range x.Data {
			v[i] = d != 0
		}
		out, err = rt.FromSlice(x.Type.Shape, v)
	default:
		t.Fatalf("no runtime type for %s", x.Type)
	}
	require.NoError(t, err)
	return out
}

// readAny reads a .npy result of any element type toRuntime writes as
// float64 values.
func readAny(t *testing.T, path string) []float64 {
	t.Helper()
	tn, err := rt.ReadNPY(path)
	require.NoError(t, err)
	var out []float64
	add := func(v float64) { out = append(out, v) }
	switch dt := tn.DType(); dt {
	case rt.Float32:
		v, err := rt.View[float32](tn)
		require.NoError(t, err)
		for _, x := range v {
			add(float64(x))
		}
	case rt.Float64:
		v, err := rt.View[float64](tn)
		require.NoError(t, err)
		out = append(out, v...)
	case rt.Int8:
		v, err := rt.View[int8](tn)
		require.NoError(t, err)
		for _, x := range v {
			add(float64(x))
		}
	case rt.Int32:
		v, err := rt.View[int32](tn)
		require.NoError(t, err)
		for _, x := range v {
			add(float64(x))
		}
	case rt.Int64:
		v, err := rt.View[int64](tn)
		require.NoError(t, err)
		for _, x := range v {
			add(float64(x))
		}
	case rt.Bool:
		v, err := rt.View[bool](tn)
		require.NoError(t, err)
		for _, x := range v {
			if x {
				add(1)
			} else {
				add(0)
			}
		}
	default:
		t.Fatalf("%s: unexpected element type %s", path, strings.ToLower(dt.String()))
	}
	return out
}

// TestScatterCompiledEdgeValues: max and min scatters over ±0, ±inf and
// NaN, compiled and interpreted, agree bit for bit (NaN propagates, also
// next to ±inf) — with duplicate indices, so values meet values scattered
// before them.
func TestScatterCompiledEdgeValues(t *testing.T) {
	inf, nan, negz := float32(math.Inf(1)), float32(math.NaN()), float32(math.Copysign(0, -1))
	data := []float32{1, nan, inf, -inf, negz, 0}
	upd := []float32{nan, 1, nan, inf, -inf, nan, 0, negz, -inf, inf, 5, nan}
	idx := []int64{0, 1, 2, 2, 3, 3, 4, 5, 0, 1, 4, 5}
	src := `func.func @main(%x: tensor<6xf32>, %i: tensor<12xi64>, %u: tensor<12xf32>) -> (tensor<6xf32>, tensor<6xf32>) {
    %0 = graph.scatter_elements %x, %i, %u {reduction = "max"} : (tensor<6xf32>, tensor<12xi64>, tensor<12xf32>) -> tensor<6xf32>
    %1 = graph.scatter_elements %x, %i, %u {reduction = "min"} : (tensor<6xf32>, tensor<12xi64>, tensor<12xf32>) -> tensor<6xf32>
    func.return %0, %1 : tensor<6xf32>, tensor<6xf32>
}
`
	dir := t.TempDir()
	model := filepath.Join(dir, "edges.mlir")
	require.NoError(t, os.WriteFile(model, []byte(src), 0o644))
	m, err := graphir.ParseString(model, src)
	require.NoError(t, err)
	args := []string{"run", model}
	var ins []*graphir.Tensor
	for k, v := range []any{data, idx, upd} {
		var x *rt.Tensor
		g := graphir.NewZeroTensor(graphir.AsTensor(m.Funcs[0].Type.Inputs[k]))
		switch v := v.(type) {
		case []float32:
			x, err = rt.FromSlice([]int64{int64(len(v))}, v)
			for j, e := range v {
				g.Data[j] = float64(e)
			}
		case []int64:
			x, err = rt.FromSlice([]int64{int64(len(v))}, v)
			for j, e := range v {
				g.Data[j] = float64(e)
			}
		}
		require.NoError(t, err)
		p := filepath.Join(dir, fmt.Sprintf("x%d.npy", k))
		require.NoError(t, rt.WriteNPY(p, x))
		args = append(args, "--input", p)
		ins = append(ins, g)
	}
	want, err := graphir.Interpret(m.Funcs[0], ins)
	require.NoError(t, err)
	for k := range want {
		args = append(args, "--output", filepath.Join(dir, fmt.Sprintf("y%d.npy", k)))
	}
	_, stderr, code := tessera(args...)
	require.Equal(t, 0, code, stderr)
	require.True(t, math.IsNaN(want[0].Data[2]) && math.IsNaN(want[1].Data[2]), "max/min(+inf, NaN) is NaN")
	for k, w := range want {
		got := readAny(t, filepath.Join(dir, fmt.Sprintf("y%d.npy", k)))
		for j, wv := range w.Data {
			same := math.Float64bits(wv) == math.Float64bits(got[j]) || math.IsNaN(wv) && math.IsNaN(got[j])
			require.True(t, same, "result %d element %d: want %v, got %v", k, j, wv, got[j])
		}
	}
}
