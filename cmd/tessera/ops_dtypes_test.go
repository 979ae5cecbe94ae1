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

// Compiled code for the unsigned, i16, f16 and bf16 element types and
// graph.bit_shift, through `tessera run`, against two oracles: Go's own
// integer arithmetic (exact for every value, ui64 included) and the graph
// interpreter (the reference evaluators hold values as float64, exact
// below 2^53). The inputs mix random values over each type's whole range
// with its edges (0, 1, the largest value, 2^(bits-1) and its
// neighbours), so that the signedness of the generated code shows:
// unsigned values of 2^(bits-1) and more are negative as signed integers,
// so sdiv, srem, slt, sext, sitofp or ashr would give wrong results where
// udiv, urem, ult, zext, uitofp and lshr give the right ones. bf16 models
// take and return f32 (.npy has no bfloat16) and cast inside.

func init() {
	// TestEveryGraphOpCompiledMatchesInterpreter's case for graph.bit_shift
	// (f32 in and out; the shifts themselves are checked below).
	opCases = append(opCases, opCase{"bit_shift", []string{"tensor<3x7xf32>", "tensor<7xf32>"}, "tensor<3x7xf32>",
		`%a = graph.abs %arg0 : tensor<3x7xf32>
    %ua = graph.cast %a : (tensor<3x7xf32>) -> tensor<3x7xui8>
    %b = graph.abs %arg1 : tensor<7xf32>
    %ub = graph.cast %b : (tensor<7xf32>) -> tensor<7xui8>
    %s = graph.bit_shift %ua, %ub {direction = "LEFT"} : (tensor<3x7xui8>, tensor<7xui8>) -> tensor<3x7xui8>
    %0 = graph.cast %s : (tensor<3x7xui8>) -> tensor<3x7xf32>`})
}

// intElem is an element type of the integer models.
type intElem interface {
	uint8 | uint16 | uint32 | uint64 | int16
}

// runDTypeModel writes src, runs it on ins with `tessera run` (and the
// extra flags) and returns its outputs.
func runDTypeModel(t *testing.T, src string, ins []*rt.Tensor, nOut int, flags ...string) []*rt.Tensor {
	t.Helper()
	dir := t.TempDir()
	model := filepath.Join(dir, "m.mlir")
	require.NoError(t, os.WriteFile(model, []byte(src), 0o644))
	args := append([]string{"run", model}, flags...)
	for i, x := range ins {
		p := filepath.Join(dir, fmt.Sprintf("x%d.npy", i))
		require.NoError(t, rt.WriteNPY(p, x))
		args = append(args, "--input", p)
	}
	for i := 0; i < nOut; i++ {
		args = append(args, "--output", filepath.Join(dir, fmt.Sprintf("y%d.npy", i)))
	}
	_, stderr, code := tessera(args...)
	require.Equal(t, 0, code, stderr)
	outs := make([]*rt.Tensor, nOut)
	for i := range outs {
		var err error
		outs[i], err = rt.ReadNPY(filepath.Join(dir, fmt.Sprintf("y%d.npy", i)))
		require.NoError(t, err)
	}
	return outs
}

// interpret runs src's @main in the graph interpreter on ins.
func interpret(t *testing.T, src string, ins []*rt.Tensor) []*graphir.Tensor {
	t.Helper()
	m, err := graphir.ParseString("m.mlir", src)
	require.NoError(t, err)
	require.NoError(t, graphir.Verify(m))
	var args []*graphir.Tensor
	for _, x := range ins {
		g, err := graphTensor(x)
		require.NoError(t, err)
		args = append(args, g)
	}
	want, err := graphir.Interpret(m.Funcs[0], args)
	require.NoError(t, err)
	return want
}

// intValues draws n values of T: its edges, then random ones over its
// whole range; nonZero replaces 0 by 1.
func intValues[T intElem](r *rand.Rand, n int, nonZero bool) []T {
	var z T
	bits := int(8 * sizeOf(z))
	signed := ^z < 0
	var edges []T
	if signed {
		edges = []T{0, 1, ^T(0), T(1) << (bits - 1), ^(T(1) << (bits - 1)), 2, 7}
	} else {
		edges = []T{0, 1, ^T(0), ^T(0) - 1, T(1) << (bits - 1), T(1)<<(bits-1) - 1, T(1)<<(bits-1) + 1, 2, 7}
	}
	out := make([]T, n)
	for i := range out {
		if i < len(edges) {
			out[i] = edges[i]
		} else {
			out[i] = T(r.Uint64())
		}
		if nonZero && out[i] == 0 {
			out[i] = 1
		}
	}
	r.Shuffle(n, func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func sizeOf[T intElem](T) uintptr {
	var z T
	switch any(z).(type) {
	case uint8:
		return 1
	case uint16, int16:
		return 2
	case uint32:
		return 4
	}
	return 8
}

// TestIntegerDTypesCompiled: add, sub, mul, div, mod, max, min, less,
// bit_shift (unsigned), casts to f64 and i64 on ui8, ui16, ui32, ui64 and
// i16 tensors of 37 elements (vector bodies and a tail).
func TestIntegerDTypesCompiled(t *testing.T) {
	t.Run("ui8", func(t *testing.T) { checkIntegerDType[uint8](t, "ui8") })
	t.Run("ui16", func(t *testing.T) { checkIntegerDType[uint16](t, "ui16") })
	t.Run("ui32", func(t *testing.T) { checkIntegerDType[uint32](t, "ui32") })
	t.Run("ui64", func(t *testing.T) { checkIntegerDType[uint64](t, "ui64") })
	t.Run("i16", func(t *testing.T) { checkIntegerDType[int16](t, "i16") })
}

func checkIntegerDType[T intElem](t *testing.T, name string) {
	const n = 37
	var z T
	signed := ^z < 0
	bits := 8 * int(sizeOf(z))
	ty := fmt.Sprintf("tensor<%dx%s>", n, name)
	lines := []string{
		fmt.Sprintf("%%0 = graph.add %%a, %%b : %s", ty),
		fmt.Sprintf("%%1 = graph.sub %%a, %%b : %s", ty),
		fmt.Sprintf("%%2 = graph.mul %%a, %%b : %s", ty),
		fmt.Sprintf("%%3 = graph.div %%a, %%b : %s", ty),
		fmt.Sprintf("%%4 = graph.mod %%a, %%b : %s", ty),
		fmt.Sprintf("%%5 = graph.max %%a, %%b : %s", ty),
		fmt.Sprintf("%%6 = graph.min %%a, %%b : %s", ty),
		fmt.Sprintf("%%l = graph.less %%a, %%b : (%s, %s) -> tensor<%dxi1>", ty, ty, n),
		fmt.Sprintf("%%7 = graph.cast %%l : (tensor<%dxi1>) -> %s", n, ty),
		fmt.Sprintf("%%8 = graph.cast %%a : (%s) -> tensor<%dxf64>", ty, n),
		fmt.Sprintf("%%9 = graph.cast %%a : (%s) -> tensor<%dxi64>", ty, n),
	}
	results := []string{ty, ty, ty, ty, ty, ty, ty, ty, fmt.Sprintf("tensor<%dxf64>", n), fmt.Sprintf("tensor<%dxi64>", n)}
	if !signed {
		lines = append(lines,
			fmt.Sprintf("%%10 = graph.bit_shift %%a, %%s {direction = \"LEFT\"} : %s", ty),
			fmt.Sprintf("%%11 = graph.bit_shift %%a, %%s {direction = \"RIGHT\"} : %s", ty))
		results = append(results, ty, ty)
	}
	var rets []string
	for i := range results {
		rets = append(rets, fmt.Sprintf("%%%d", i))
	}
	src := fmt.Sprintf("func.func @main(%%a: %s, %%b: %s, %%s: %s) -> (%s) {\n  %s\n  func.return %s : %s\n}\n",
		ty, ty, ty, strings.Join(results, ", "), strings.Join(lines, "\n  "), strings.Join(rets, ", "), strings.Join(results, ", "))

	r := rand.New(rand.NewPCG(uint64(bits), 5))
	a, b := intValues[T](r, n, false), intValues[T](r, n, true)
	s := make([]T, n)
	for i := range s {
		s[i] = T(r.IntN(bits + 4)) // amounts past the width give 0
	}
	ins := []*rt.Tensor{mustSlice(t, a), mustSlice(t, b), mustSlice(t, s)}
	got := runDTypeModel(t, src, ins, len(results))

	// Go's arithmetic: wraps, truncating division, unsigned comparisons
	// and shifts (by the width or more: 0) for unsigned T.
	want := make([][]T, 8)
	var wantF []float64
	var wantI []int64
	shl, shr := make([]T, n), make([]T, n)
	for i := range a {
		x, y := a[i], b[i]
		m := x % y
		if m != 0 && (m < 0) != (y < 0) {
			m += y // ONNX Mod, fmod = 0: the divisor's sign
		}
		lt := T(0)
		if x < y {
			lt = 1
		}
		for k, v := range []T{x + y, x - y, x * y, x / y, m, max(x, y), min(x, y), lt} {
			want[k] = append(want[k], v)
		}
		wantF = append(wantF, float64(x))
		wantI = append(wantI, int64(x))
		shl[i], shr[i] = x<<s[i], x>>s[i]
	}
	if !signed {
		want = append(want, shl, shr)
	}
	for k, w := range want {
		out := k
		if k >= 8 {
			out = k + 2
		}
		require.Equal(t, mustSlice(t, w).Bytes(), got[out].Bytes(), "result %%%d of %s:\n%s", out, name, src)
	}
	gf, err := got[8].Float64s()
	require.NoError(t, err)
	require.Equal(t, wantF, gf, "cast to f64 (uitofp)")
	gi, err := got[9].Int64s()
	require.NoError(t, err)
	require.Equal(t, wantI, gi, "cast to i64 (zext for unsigned)")

	// The graph interpreter agrees wherever its float64 values are exact.
	if bits == 64 {
		return
	}
	ref := interpret(t, src, ins)
	for k := range ref {
		if k == 2 && bits == 32 {
			continue // ui32 products reach 2^64
		}
		require.Equal(t, ref[k].Data, got[k].Float64Values(), "result %%%d: graph interpreter vs compiled", k)
	}
}

func mustSlice[T rt.Scalar](t *testing.T, v []T) *rt.Tensor {
	t.Helper()
	x, err := rt.FromSlice([]int64{int64(len(v))}, v)
	require.NoError(t, err)
	return x
}

// narrowEdges are mixed into the f16/bf16 inputs: signed zeros,
// infinities, NaN, the largest f16 and a value past it, f16 subnormals,
// values that round to a tie.
var narrowEdges = []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 65504, -70000, 1e-7, -3e-8,
	6.1e-5, 1 + math.Ldexp(1, -11), 1 + 3*math.Ldexp(1, -11), 0.1, 3.3e38, 1e39}

func narrowValues(r *rand.Rand, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		if i < len(narrowEdges) {
			out[i] = narrowEdges[i]
		} else {
			out[i] = 8*r.Float64() - 4
		}
	}
	r.Shuffle(n, func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// nearTies are f64 values 2^-40 off the ties of f16 (and, scaled, of
// bf16), where rounding through f32 first would round the other way.
func nearTies(r *rand.Rand, n int, mantBits int) []float64 {
	out := make([]float64, n)
	for i := range out {
		tie := math.Ldexp(float64(2*r.IntN(1<<mantBits)+1+2<<mantBits), -mantBits-1+r.IntN(6))
		out[i] = tie * (1 + float64(r.IntN(3)-1)*math.Ldexp(1, -40))
		if r.IntN(2) == 0 {
			out[i] = -out[i]
		}
	}
	return out
}

func floatTensor(t *testing.T, dt rt.DType, vals []float64) *rt.Tensor {
	t.Helper()
	x, err := rt.NewTensor(dt, []int64{int64(len(vals))})
	require.NoError(t, err)
	if dt == rt.Float64 {
		v, _ := x.Float64s()
		copy(v, vals)
		return x
	}
	// Through the graph dtype's rounding (once, from f64).
	g, _ := graphir.ParseDType(dt.String())
	r := make([]float64, len(vals))
	for i, v := range vals {
		r[i] = graphir.RoundTo(g, v)
	}
	require.NoError(t, x.SetFloat64Values(r))
	return x
}

// requireSameFloats compares bit-exactly (NaN with NaN); tol > 0 allows
// that relative error instead.
func requireSameFloats(t *testing.T, want, got []float64, tol float64, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i, w := range want {
		g := got[i]
		switch {
		case math.IsNaN(w) || math.IsNaN(g):
			require.True(t, math.IsNaN(w) && math.IsNaN(g), "%s element %d: got %v, want %v", what, i, g, w)
		case tol == 0 || math.IsInf(w, 0):
			require.Equal(t, math.Float64bits(w), math.Float64bits(g), "%s element %d: got %v, want %v", what, i, g, w)
		default:
			require.InDelta(t, w, g, tol*math.Abs(w)+1e-7, "%s element %d", what, i)
		}
	}
}

// TestHalfCompiled: f16 arithmetic (computed in f32, each result rounded
// to f16), comparisons, casts from f64 (rounded once) and to f32/f64, and
// f16 → bf16, against the graph interpreter, bit-exactly.
func TestHalfCompiled(t *testing.T) {
	const n = 45
	h, d := fmt.Sprintf("tensor<%dxf16>", n), fmt.Sprintf("tensor<%dxf64>", n)
	f, bf := fmt.Sprintf("tensor<%dxf32>", n), fmt.Sprintf("tensor<%dxbf16>", n)
	src := fmt.Sprintf(`func.func @main(%%a: %[1]s, %%b: %[1]s, %%d: %[2]s) -> (%[1]s, %[1]s, %[1]s, %[1]s, %[1]s, %[1]s, %[1]s, %[1]s, %[1]s, %[1]s, %[1]s, %[3]s, %[2]s, %[3]s) {
  %%0 = graph.add %%a, %%b : %[1]s
  %%1 = graph.sub %%a, %%b : %[1]s
  %%2 = graph.mul %%a, %%b : %[1]s
  %%3 = graph.div %%a, %%b : %[1]s
  %%4 = graph.max %%a, %%b : %[1]s
  %%5 = graph.min %%a, %%b : %[1]s
  %%6 = graph.neg %%a : %[1]s
  %%abs = graph.abs %%a : %[1]s
  %%7 = graph.sqrt %%abs : %[1]s
  %%8 = graph.cast %%d : (%[2]s) -> %[1]s
  %%l = graph.less %%a, %%b : (%[1]s, %[1]s) -> tensor<%[5]dxi1>
  %%9 = graph.cast %%l : (tensor<%[5]dxi1>) -> %[1]s
  %%10 = graph.mod %%a, %%b {fmod = 1} : %[1]s
  %%11 = graph.cast %%a : (%[1]s) -> %[3]s
  %%12 = graph.cast %%a : (%[1]s) -> %[2]s
  %%ab = graph.cast %%a : (%[1]s) -> %[4]s
  %%13 = graph.cast %%ab : (%[4]s) -> %[3]s
  func.return %%0, %%1, %%2, %%3, %%4, %%5, %%6, %%7, %%8, %%9, %%10, %%11, %%12, %%13 : %[1]s, %[1]s, %[1]s, %[1]s, %[1]s, %[1]s, %[1]s, %[1]s, %[1]s, %[1]s, %[1]s, %[3]s, %[2]s, %[3]s
}
`, h, d, f, bf, n)
	r := rand.New(rand.NewPCG(16, 1))
	ins := []*rt.Tensor{floatTensor(t, rt.Float16, narrowValues(r, n)), floatTensor(t, rt.Float16, narrowValues(r, n)), floatTensor(t, rt.Float64, nearTies(r, n, 10))}
	got := runDTypeModel(t, src, ins, 14)
	want := interpret(t, src, ins)
	for k := range want {
		requireSameFloats(t, want[k].Data, got[k].Float64Values(), 0, fmt.Sprintf("result %%%d", k))
	}
	// numpy: np.float16(1 + 2**-11 + 2**-40) == 1 + 2**-10; through float32 it would be 1.
	one := floatTensor(t, rt.Float64, []float64{1 + math.Ldexp(1, -11) + math.Ldexp(1, -40)})
	src1 := "func.func @main(%d: tensor<1xf64>) -> tensor<1xf16> {\n  %0 = graph.cast %d : (tensor<1xf64>) -> tensor<1xf16>\n  func.return %0 : tensor<1xf16>\n}\n"
	require.Equal(t, []float64{1 + math.Ldexp(1, -10)}, runDTypeModel(t, src1, []*rt.Tensor{one}, 1)[0].Float64Values())
}

// TestBFloat16Compiled: bf16 arithmetic and casts inside a model with f32
// and f64 inputs and f32 outputs, against the graph interpreter,
// bit-exactly (exp within its approximation error).
func TestBFloat16Compiled(t *testing.T) {
	const n = 45
	f, d, b := fmt.Sprintf("tensor<%dxf32>", n), fmt.Sprintf("tensor<%dxf64>", n), fmt.Sprintf("tensor<%dxbf16>", n)
	var lines []string
	var rets []string
	k := 0
	out := func(expr string) {
		lines = append(lines, fmt.Sprintf("%%r%d = %s", k, expr), fmt.Sprintf("%%o%d = graph.cast %%r%d : (%s) -> %s", k, k, b, f))
		rets = append(rets, fmt.Sprintf("%%o%d", k))
		k++
	}
	lines = append(lines, fmt.Sprintf("%%x = graph.cast %%a : (%s) -> %s", f, b), fmt.Sprintf("%%y = graph.cast %%c : (%s) -> %s", f, b))
	for _, op := range []string{"add", "sub", "mul", "div", "max", "min"} {
		out(fmt.Sprintf("graph.%s %%x, %%y : %s", op, b))
	}
	out(fmt.Sprintf("graph.neg %%x : %s", b))
	out(fmt.Sprintf("graph.cast %%d : (%s) -> %s", d, b))
	lines = append(lines, fmt.Sprintf("%%ax = graph.abs %%x : %s", b))
	out(fmt.Sprintf("graph.sqrt %%ax : %s", b))
	out(fmt.Sprintf("graph.exp %%x : %s", b))
	res := strings.Repeat(f+", ", k-1) + f
	src := fmt.Sprintf("func.func @main(%%a: %s, %%c: %s, %%d: %s) -> (%s) {\n  %s\n  func.return %s : %s\n}\n",
		f, f, d, res, strings.Join(lines, "\n  "), strings.Join(rets, ", "), res)
	r := rand.New(rand.NewPCG(8, 2))
	ins := []*rt.Tensor{floatTensor(t, rt.Float32, narrowValues(r, n)), floatTensor(t, rt.Float32, narrowValues(r, n)), floatTensor(t, rt.Float64, nearTies(r, n, 7))}
	got := runDTypeModel(t, src, ins, k)
	want := interpret(t, src, ins)
	for i := range want {
		tol := 0.0
		if i == k-1 {
			tol = 1.0 / 128 // exp: one bf16 ulp
		}
		requireSameFloats(t, want[i].Data, got[i].Float64Values(), tol, fmt.Sprintf("result %%o%d", i))
	}
}

// TestBFloat16RunErrors: .npy files cannot hold bf16, so `tessera run`
// refuses a bf16 model input and a bf16 --output with the reason, and
// summarizes a bf16 result printed without --output.
func TestBFloat16RunErrors(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join(dir, "m.mlir")
	require.NoError(t, os.WriteFile(model, []byte("func.func @main(%a: tensor<2xbf16>) -> tensor<2xbf16> {\n  %0 = graph.neg %a : tensor<2xbf16>\n  func.return %0 : tensor<2xbf16>\n}\n"), 0o644))
	x := floatTensor(t, rt.Float32, []float64{1, 2})
	p := filepath.Join(dir, "x.npy")
	require.NoError(t, rt.WriteNPY(p, x))
	_, stderr, code := tessera("run", model, "--input", p)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "input #0 of the model is arg0: tensor<2xbf16>, which a .npy file cannot hold (NumPy has no bfloat16): give the model an f32 input and graph.cast it to bf16")

	model2 := filepath.Join(dir, "m2.mlir")
	require.NoError(t, os.WriteFile(model2, []byte("func.func @main(%a: tensor<2xf32>) -> tensor<2xbf16> {\n  %0 = graph.cast %a : (tensor<2xf32>) -> tensor<2xbf16>\n  func.return %0 : tensor<2xbf16>\n}\n"), 0o644))
	_, stderr, code = tessera("run", model2, "--input", p, "--output", filepath.Join(dir, "y.npy"))
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "cannot write tensor<2xbf16>: NumPy has no bfloat16 dtype")
	stdout, stderr, code := tessera("run", model2, "--input", p)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "result #0: tensor<2xbf16> min 1 max 2")
}

// TestUnsignedStructuralCompiled: data movement, max pooling (padding is
// the identity 0 of ui8's maximum, not -1 or 255), reduce_max/min over
// values ≥ 128, where and a broadcast add on ui8 and ui16, against the
// graph interpreter and exactly.
func TestUnsignedStructuralCompiled(t *testing.T) {
	src := `func.func @main(%x: tensor<1x2x5x6xui8>, %y: tensor<6x5xui16>, %c: tensor<6x5xi1>) -> (tensor<2x1x6x5xui8>, tensor<1x2x3x3xui8>, tensor<1x2x3xui8>, tensor<1x6xui16>, tensor<6x5xui16>, tensor<5x5xui16>, tensor<1x2x5x3xui8>, tensor<6x5xui16>) {
  %0 = graph.transpose %x {perm = [1, 0, 3, 2]} : (tensor<1x2x5x6xui8>) -> tensor<2x1x6x5xui8>
  %1 = graph.max_pool2d %x {kernel = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x2x5x6xui8>) -> tensor<1x2x3x3xui8>
  %2 = graph.reduce_max %x {axes = [3, 2], keepdims = false} : (tensor<1x2x5x6xui8>) -> tensor<1x2xui8>
  %r = graph.reshape %2 {shape = [1, 2, 1]} : (tensor<1x2xui8>) -> tensor<1x2x1xui8>
  %m = graph.reduce_min %x {axes = [2], keepdims = false} : (tensor<1x2x5x6xui8>) -> tensor<1x2x6xui8>
  %ms = graph.slice %m {axes = [2], ends = [6], starts = [0], steps = [3]} : (tensor<1x2x6xui8>) -> tensor<1x2x2xui8>
  %3 = graph.concat %r, %ms {axis = 2} : (tensor<1x2x1xui8>, tensor<1x2x2xui8>) -> tensor<1x2x3xui8>
  %4 = graph.reduce_min %y {axes = [1]} : (tensor<6x5xui16>) -> tensor<6x1xui16>
  %5 = graph.reshape %4 {shape = [1, 6]} : (tensor<6x1xui16>) -> tensor<1x6xui16>
  %z = graph.constant {value = dense<65535> : tensor<ui16>} : tensor<ui16>
  %6 = graph.where %c, %y, %z : (tensor<6x5xi1>, tensor<6x5xui16>, tensor<ui16>) -> tensor<6x5xui16>
  %7 = graph.slice %y {axes = [0], ends = [-100], starts = [100], steps = [-1]} : (tensor<6x5xui16>) -> tensor<6x5xui16>
  %8 = graph.slice %7 {axes = [0], ends = [5], starts = [0]} : (tensor<6x5xui16>) -> tensor<5x5xui16>
  %9 = graph.slice %x {axes = [3], ends = [6], starts = [0], steps = [2]} : (tensor<1x2x5x6xui8>) -> tensor<1x2x5x3xui8>
  %one = graph.constant {value = dense<[1, 2, 3, 4, 65535]> : tensor<5xui16>} : tensor<5xui16>
  %10 = graph.add %y, %one : (tensor<6x5xui16>, tensor<5xui16>) -> tensor<6x5xui16>
  func.return %0, %1, %3, %5, %6, %8, %9, %10 : tensor<2x1x6x5xui8>, tensor<1x2x3x3xui8>, tensor<1x2x3xui8>, tensor<1x6xui16>, tensor<6x5xui16>, tensor<5x5xui16>, tensor<1x2x5x3xui8>, tensor<6x5xui16>
}
`
	r := rand.New(rand.NewPCG(3, 3))
	xs := make([]uint8, 60)
	for i := range xs {
		xs[i] = uint8(r.IntN(256))
	}
	ys := intValues[uint16](r, 30, false)
	cs := make([]bool, 30)
	for i := range cs {
		cs[i] = r.IntN(2) == 0
	}
	x, err := rt.FromSlice([]int64{1, 2, 5, 6}, xs)
	require.NoError(t, err)
	y, err := rt.FromSlice([]int64{6, 5}, ys)
	require.NoError(t, err)
	c, err := rt.FromSlice([]int64{6, 5}, cs)
	require.NoError(t, err)
	ins := []*rt.Tensor{x, y, c}
	got := runDTypeModel(t, src, ins, 8)
	want := interpret(t, src, ins)
	for k := range want {
		require.Equal(t, want[k].Data, got[k].Float64Values(), "result %d", k)
	}
}

// TestBindInputDTypes: --bind-input reads .npy files of every dtype the
// graph dialect has into constants of that type.
func TestBindInputDTypes(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, x *rt.Tensor) string {
		p := filepath.Join(dir, name+".npy")
		require.NoError(t, rt.WriteNPY(p, x))
		return name + "=" + p
	}
	u8 := write("u8", mustSlice(t, []uint8{0, 200, 255}))
	u64 := write("u64", mustSlice(t, []uint64{1 << 40, 7}))
	i16 := write("i16", mustSlice(t, []int16{-32768, 5}))
	h := write("h", floatTensor(t, rt.Float16, []float64{0.5, -65504}))
	got, err := parseBindings([]string{u8, u64, i16, h})
	require.NoError(t, err)
	require.Equal(t, "tensor<3xui8>", got["u8"].Type.String())
	require.Equal(t, []float64{0, 200, 255}, got["u8"].Data)
	require.Equal(t, "tensor<2xui64>", got["u64"].Type.String())
	require.Equal(t, []float64{1 << 40, 7}, got["u64"].Data)
	require.Equal(t, []float64{-32768, 5}, got["i16"].Data)
	require.Equal(t, "tensor<2xf16>", got["h"].Type.String())
	require.Equal(t, []float64{0.5, -65504}, got["h"].Data)
}
