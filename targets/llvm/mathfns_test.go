package llvm

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// ulpErr is |got − want| in units of the last place of want rounded to
// f32 (the spacing of f32 values at want; 2^-149 for subnormals). Equal
// infinities, equal zeros (of either sign) and NaN/NaN count as 0; other
// infinities or NaN mismatches as +Inf.
func ulpErr(got float32, want float64) float64 {
	w := float32(want)
	switch {
	case math.IsNaN(want) || math.IsNaN(float64(got)):
		if math.IsNaN(want) && math.IsNaN(float64(got)) {
			return 0
		}
		return math.Inf(1)
	case math.IsInf(float64(w), 0) || math.IsInf(float64(got), 0):
		if float64(got) == float64(w) {
			return 0
		}
		// A result beyond MaxFloat32 that rounds to Inf.
		return math.Inf(1)
	}
	aw := math.Abs(float64(w))
	ulp := math.Ldexp(1, -149)
	if aw >= math.Ldexp(1, -126) {
		_, e := math.Frexp(aw) // aw = f·2^e, f in [0.5, 1)
		ulp = math.Ldexp(1, e-24)
	}
	return math.Abs(float64(got)-want) / ulp
}

// mathPoints are f32 inputs: every 2^12-th bit pattern (about a million
// points spread over every binade of both signs) plus the edges.
func mathPoints() []float32 {
	var xs []float32
	for b := uint64(0); b < 1<<32; b += 1 << 12 {
		xs = append(xs, math.Float32frombits(uint32(b)+uint32(b>>20)))
	}
	inf := float32(math.Inf(1))
	xs = append(xs, 0, float32(math.Copysign(0, -1)), inf, -inf, float32(math.NaN()),
		88.72283, 88.72284, 89, -87.33654, -87.34, -103.9, -104, -150, 1e-45, -1e-45,
		0.625, -0.625, 0.921875, -0.921875, 3.92, -3.92, 9, -9, 1e-8, -1e-8, math.MaxFloat32, -math.MaxFloat32)
	for len(xs)%16 != 0 {
		xs = append(xs, 1)
	}
	return xs
}

// TestMathULP compiles exp, tanh, sigmoid and erf over a million points,
// as a vectorized (16 lanes) and as a serial loop, and checks the maximum
// error against Go's float64 math within the stated bounds.
func TestMathULP(t *testing.T) {
	xs := mathPoints()
	n := len(xs)
	refs := map[string]func(float64) float64{
		"exp":     math.Exp,
		"tanh":    math.Tanh,
		"sigmoid": func(x float64) float64 { return 1 / (1 + math.Exp(-x)) },
		"erf":     math.Erf,
	}
	bounds := map[string]float64{"exp": ExpMaxULP, "tanh": TanhMaxULP, "sigmoid": SigmoidMaxULP, "erf": ErfMaxULP}
	for _, kind := range []string{"vectorized", "serial"} {
		t.Run(kind, func(t *testing.T) {
			inner := fmt.Sprintf(`tir.for %%jo = 0 to %d {
    tir.for %%ji = 0 to 16 %s {
      %%E[%%jo * 16 + %%ji] = exp(%%X[%%jo * 16 + %%ji])
      %%T[%%jo * 16 + %%ji] = tanh(%%X[%%jo * 16 + %%ji])
      %%S[%%jo * 16 + %%ji] = sigmoid(%%X[%%jo * 16 + %%ji])
      %%R[%%jo * 16 + %%ji] = erf(%%X[%%jo * 16 + %%ji])
    }
  }`, n/16, map[string]string{"vectorized": "vectorized", "serial": ""}[kind])
			src := fmt.Sprintf("tir.func @m(%%X: buffer<%[1]dxf32>, out %%E: buffer<%[1]dxf32>, out %%T: buffer<%[1]dxf32>, out %%S: buffer<%[1]dxf32>, out %%R: buffer<%[1]dxf32>) {\n  %[2]s\n}\n", n, inner)
			m := parseModule(t, src)
			exportAll(m)
			so, res := buildShared(t, m, Options{})
			if kind == "vectorized" {
				require.Contains(t, res.LLVM(), "<16 x float>")
			}
			f := m.Func("m")
			args := tir.Args{Arrays: map[string]*tir.Array{"X": tir.ArrayFromFloat32(xs, int64(n))}}
			for _, b := range []string{"E", "T", "S", "R"} {
				args.Arrays[b] = tir.NewArray(tir.DF32, int64(n))
			}
			runShared(t, so, "m", f, args)
			for buf, name := range map[string]string{"E": "exp", "T": "tanh", "S": "sigmoid", "R": "erf"} {
				got := args.Arrays[buf].Float32s()
				worst, at := 0.0, float32(0)
				for i, x := range xs {
					e := ulpErr(got[i], refs[name](float64(x)))
					if e > worst || math.IsNaN(e) {
						worst, at = e, x
					}
				}
				t.Logf("%s %s: max error %.3g ulp at x = %g", kind, name, worst, at)
				assert.LessOrEqual(t, worst, bounds[name], "%s: max error %.3g ulp at x = %g (%g, want %g)", name, worst, at, got[0], refs[name](float64(at)))
			}
			// Exact edge values.
			at := func(buf string, x float32) float32 {
				for i, v := range xs {
					if math.Float32bits(v) == math.Float32bits(x) {
						return args.Arrays[buf].Float32s()[i]
					}
				}
				t.Fatalf("point %v missing", x)
				return 0
			}
			inf := float32(math.Inf(1))
			negZero := float32(math.Copysign(0, -1))
			assert.Equal(t, float32(1), at("E", 0))
			assert.Equal(t, inf, at("E", inf))
			assert.Equal(t, float32(0), at("E", -inf))
			assert.Equal(t, inf, at("E", 89))
			assert.True(t, math.IsNaN(float64(at("E", float32(math.NaN())))))
			assert.Equal(t, math.Float32bits(negZero), math.Float32bits(at("T", negZero)))
			assert.Equal(t, float32(1), at("T", inf))
			assert.Equal(t, float32(-1), at("T", -inf))
			assert.True(t, math.IsNaN(float64(at("T", float32(math.NaN())))))
			assert.Equal(t, float32(0.5), at("S", 0))
			assert.Equal(t, float32(1), at("S", inf))
			assert.Equal(t, float32(0), at("S", -inf))
			assert.True(t, math.IsNaN(float64(at("S", float32(math.NaN())))))
			assert.Equal(t, math.Float32bits(negZero), math.Float32bits(at("R", negZero)))
			assert.Equal(t, float32(1), at("R", inf))
			assert.Equal(t, float32(-1), at("R", -inf))
			assert.True(t, math.IsNaN(float64(at("R", float32(math.NaN())))))
		})
	}
}

// runUnaryF32 compiles R[i] = name(X[i]) over xs (a multiple of 16
// points) as a vectorized (16 lanes) or serial loop, runs it and returns R.
func runUnaryF32(t *testing.T, name, kind string, xs []float32) []float32 {
	t.Helper()
	n := len(xs)
	src := fmt.Sprintf(`tir.func @m(%%X: buffer<%[1]dxf32>, out %%R: buffer<%[1]dxf32>) {
  tir.for %%jo = 0 to %[2]d {
    tir.for %%ji = 0 to 16 %[3]s {
      %%R[%%jo * 16 + %%ji] = %[4]s(%%X[%%jo * 16 + %%ji])
    }
  }
}
`, n, n/16, strings.TrimSuffix(kind, "serial"), name)
	m := parseModule(t, src)
	exportAll(m)
	so, _ := buildShared(t, m, Options{})
	args := tir.Args{Arrays: map[string]*tir.Array{"X": tir.ArrayFromFloat32(xs, int64(n)), "R": tir.NewArray(tir.DF32, int64(n))}}
	runShared(t, so, "m", m.Func("m"), args)
	return args.Arrays["R"].Float32s()
}

// maxULP is the largest ulpErr of got against ref over xs, and where.
func maxULP(xs, got []float32, ref func(float64) float64) (worst float64, at float32) {
	for i, x := range xs {
		if e := ulpErr(got[i], ref(float64(x))); e > worst || math.IsNaN(e) {
			worst, at = e, x
		}
	}
	return worst, at
}

// ownMathPoints are the points of TestMathULP plus where log, atan, asin,
// acos, sinh, cosh, asinh, acosh and atanh are delicate: every 2^6-th f32
// in [½, 2] (log and acosh near 1), the 2^14 f32 below 1 (asin, acos and
// atanh near ±1) and above 1, the subnormals, and each branch threshold
// with its neighbours, both signs.
func ownMathPoints() []float32 {
	xs := mathPoints()
	for b := math.Float32bits(0.5); b <= math.Float32bits(2); b += 1 << 6 {
		xs = append(xs, math.Float32frombits(b), -math.Float32frombits(b))
	}
	for i := uint32(1); i <= 1<<14; i++ {
		below, above := math.Float32frombits(math.Float32bits(1)-i), math.Float32frombits(math.Float32bits(1)+i)
		xs = append(xs, below, -below, above, -above)
	}
	for b := uint32(1); b < 1<<23; b += 997 {
		xs = append(xs, math.Float32frombits(b), -math.Float32frombits(b))
	}
	for _, t := range []float32{0.5, 1, 2, 0x1p-12, 0x1p12, 0.41421357, 2.4142137, 0x1p-126, 89.41599, 89.415985, 88.72283, 0x1p25} {
		for _, v := range []float32{t, math.Nextafter32(t, 0), math.Nextafter32(t, float32(math.Inf(1)))} {
			xs = append(xs, v, -v)
		}
	}
	for len(xs)%16 != 0 {
		xs = append(xs, 1)
	}
	return xs
}

// TestOwnMathULP compiles Tessera's own f32 log, atan, asin, acos, sinh,
// cosh, asinh, acosh and atanh (mathfns_log.go) over ownMathPoints,
// vectorized and serial, bounds their error against Go's float64 math by
// the stated *MaxULP and checks the special values: ±0, ±Inf, NaN and ±1
// map exactly (sign of zero included) wherever the result is 0, ±Inf or
// NaN, and to the f32 π/2, π/4, π where the result is one of those.
func TestOwnMathULP(t *testing.T) {
	xs := ownMathPoints()
	inf, nan, negZero := float32(math.Inf(1)), float32(math.NaN()), float32(math.Copysign(0, -1))
	specials := []float32{0, negZero, inf, -inf, nan, 1, -1, 2, -2, 0.5, -0.5}
	exact := map[float32]bool{0: true, float32(math.Pi / 2): true, float32(math.Pi / 4): true, float32(math.Pi): true}
	for _, c := range []struct {
		name string
		ref  func(float64) float64
		ulp  float64
	}{
		{"log", math.Log, LogMaxULP},
		{"atan", math.Atan, WideMathMaxULP},
		{"asin", math.Asin, WideMathMaxULP},
		{"acos", math.Acos, WideMathMaxULP},
		{"sinh", math.Sinh, WideMathMaxULP},
		{"cosh", math.Cosh, WideMathMaxULP},
		{"asinh", math.Asinh, WideMathMaxULP},
		{"acosh", math.Acosh, WideMathMaxULP},
		{"atanh", math.Atanh, WideMathMaxULP},
	} {
		for _, kind := range []string{"vectorized", "serial"} {
			worst, at := maxULP(xs, runUnaryF32(t, c.name, kind, xs), c.ref)
			t.Logf("%s %s: max error %.6g ulp at x = %g", c.name, kind, worst, at)
			assert.LessOrEqual(t, worst, c.ulp, "%s %s: max error %.6g ulp at x = %g", c.name, kind, worst, at)
			in := append(append([]float32{}, specials...), 1, 1, 1, 1, 1)
			out := runUnaryF32(t, c.name, kind, in)
			for i, x := range specials {
				want := float32(c.ref(float64(x)))
				switch {
				case math.IsNaN(float64(want)):
					assert.True(t, math.IsNaN(float64(out[i])), "%s(%v) = %v, want NaN", c.name, x, out[i])
				case math.IsInf(float64(want), 0) || exact[float32(math.Abs(float64(want)))]:
					assert.Equal(t, math.Float32bits(want), math.Float32bits(out[i]), "%s(%v) = %v, want %v", c.name, x, out[i], want)
				}
			}
		}
	}
}

// runPowF32 compiles R[i] = pow(X[i], Y[i]) (a multiple of 16 points) as a
// vectorized (16 lanes) or serial loop, runs it and returns R.
func runPowF32(t *testing.T, kind string, xs, ys []float32) []float32 {
	t.Helper()
	n := len(xs)
	src := fmt.Sprintf(`tir.func @m(%%X: buffer<%[1]dxf32>, %%Y: buffer<%[1]dxf32>, out %%R: buffer<%[1]dxf32>) {
  tir.for %%jo = 0 to %[2]d {
    tir.for %%ji = 0 to 16 %[3]s {
      %%R[%%jo * 16 + %%ji] = pow(%%X[%%jo * 16 + %%ji], %%Y[%%jo * 16 + %%ji])
    }
  }
}
`, n, n/16, strings.TrimSuffix(kind, "serial"))
	m := parseModule(t, src)
	exportAll(m)
	so, _ := buildShared(t, m, Options{})
	args := tir.Args{Arrays: map[string]*tir.Array{"X": tir.ArrayFromFloat32(xs, int64(n)), "Y": tir.ArrayFromFloat32(ys, int64(n)), "R": tir.NewArray(tir.DF32, int64(n))}}
	runShared(t, so, "m", m.Func("m"), args)
	return args.Arrays["R"].Float32s()
}

// powPoints are pow's test pairs: every pair of an edge set (±0, ±1, ±Inf,
// NaN, subnormal and largest bases; odd, even, huge, tiny and
// non-integer exponents), about 10^6 random pairs whose result spans the
// whole f32 range (y = t/log2|x| for a uniform t ∈ [−160, 135] and x of
// every binade and both signs, and small integers y for negative x), and
// exponents near the overflow and underflow thresholds.
func powPoints() (xs, ys []float32) {
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	ex := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 2, -2, 0.5, -0.5, 3, -3, 10, -10, inf, -inf, nan,
		1e-45, -1e-45, 0x1p-126, math.MaxFloat32, -math.MaxFloat32, 1.0000001, 0.99999994, -0.99999994}
	ey := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 2, -2, 3, -3, 0.5, -0.5, 1.5, -1.5, inf, -inf, nan,
		0x1p24, 0x1p24 + 2, -0x1p24 - 2, 0x1p25, 16777215, -16777215, 1e-45, -1e-45, 1e10, -1e10, 127, 128, -149, -150, 100.5, 0x1p30, -0x1p30}
	for _, x := range ex {
		for _, y := range ey {
			xs, ys = append(xs, x), append(ys, y)
		}
	}
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 1<<20; i++ {
		x := math.Float32frombits(rng.Uint32()&^(0xff<<23) | uint32(rng.Intn(255))<<23)
		if x == 1 || x == -1 {
			continue
		}
		var y float32
		if i%4 == 0 {
			y = float32(rng.Intn(81) - 40)
		} else {
			y = float32((rng.Float64()*295 - 160) / math.Log2(math.Abs(float64(x))))
		}
		xs, ys = append(xs, x), append(ys, y)
	}
	for i := 0; i < 1<<14; i++ {
		d := float32(i) / (1 << 14)
		for _, c := range [][2]float32{{2, 127 + d}, {2, -151 + 2*d}, {-2, -149 - d}, {10, 38 + d}, {0.1, 44 + 2*d}} {
			xs, ys = append(xs, c[0]), append(ys, c[1])
		}
	}
	for len(xs)%16 != 0 {
		xs, ys = append(xs, 1), append(ys, 1)
	}
	return xs, ys
}

// TestPowULP compiles pow (Tessera's own, in f64) over powPoints,
// vectorized and serial, and requires every result within PowMaxULP of
// Go's math.Pow and, where math.Pow gives 0, ±Inf or NaN (the C99 special
// cases included), the same value, sign of zero included.
func TestPowULP(t *testing.T) {
	xs, ys := powPoints()
	for _, kind := range []string{"vectorized", "serial"} {
		got := runPowF32(t, kind, xs, ys)
		worst, at := 0.0, 0
		for i := range xs {
			want := math.Pow(float64(xs[i]), float64(ys[i]))
			w := float32(want)
			if w == 0 || math.IsInf(float64(w), 0) {
				require.Equal(t, math.Float32bits(w), math.Float32bits(got[i]), "pow(%g, %g) = %g, want %g", xs[i], ys[i], got[i], w)
			}
			if e := ulpErr(got[i], want); e > worst || math.IsNaN(e) {
				worst, at = e, i
			}
		}
		t.Logf("pow %s: max error %.6g ulp at pow(%g, %g) over %d points", kind, worst, xs[at], ys[at], len(xs))
		assert.LessOrEqual(t, worst, PowMaxULP, "pow %s: max error %.4g ulp at pow(%g, %g) = %g, want %g", kind, worst, xs[at], ys[at], got[at], math.Pow(float64(xs[at]), float64(ys[at])))
	}
}

// trigPoints are the points of TestMathULP (every binade, up to
// ±MaxFloat32: the large-argument path), 2^20 points evenly spread over
// [−2π·10^4, 2π·10^4], and the f32 values nearest to k·π/2 (and their
// neighbours) for k up to 2^20 and around 2^27, where the reduction
// cancels most.
func trigPoints() []float32 {
	xs := mathPoints()
	for i := 0; i < 1<<20; i++ {
		xs = append(xs, float32((float64(i)/(1<<19)-1)*2*math.Pi*1e4))
	}
	near := func(k float64) {
		v := float32(k * math.Pi / 2)
		xs = append(xs, v, math.Nextafter32(v, 0), math.Nextafter32(v, float32(math.Inf(1))), -v)
	}
	for k := 1.0; k < 1<<20; k = math.Ceil(k * 1.01) {
		near(k)
	}
	for k := 0.0; k < 4096; k++ {
		near(TrigMaxFastArg/(math.Pi/2) - 2048 + k)
	}
	xs = append(xs, TrigMaxFastArg, -TrigMaxFastArg, math.Nextafter32(TrigMaxFastArg, 1<<30))
	for len(xs)%16 != 0 {
		xs = append(xs, 1)
	}
	return xs
}

// TestTrigULP compiles sin, cos and tan (our own f32 code, with its libm
// large-argument path) over trigPoints, vectorized and serial, bounds
// their error against Go's float64 math by TrigMaxULP and checks the
// special values.
func TestTrigULP(t *testing.T) {
	xs := trigPoints()
	inf, nan, negZero := float32(math.Inf(1)), float32(math.NaN()), float32(math.Copysign(0, -1))
	for _, c := range []struct {
		name string
		ref  func(float64) float64
	}{{"sin", math.Sin}, {"cos", math.Cos}, {"tan", math.Tan}} {
		for _, kind := range []string{"vectorized", "serial"} {
			got := runUnaryF32(t, c.name, kind, xs)
			worst, at := maxULP(xs, got, c.ref)
			t.Logf("%s %s: max error %.6g ulp at x = %g", c.name, kind, worst, at)
			assert.LessOrEqual(t, worst, TrigMaxULP, "%s %s: max error %.6g ulp at x = %g", c.name, kind, worst, at)
			specials := []float32{0, negZero, inf, -inf, nan}
			in := append(append([]float32{}, specials...), 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1)
			out := runUnaryF32(t, c.name, kind, in)
			for i, x := range specials {
				want := float32(c.ref(float64(x)))
				if math.IsNaN(float64(want)) {
					assert.True(t, math.IsNaN(float64(out[i])), "%s(%v) = %v, want NaN", c.name, x, out[i])
				} else {
					assert.Equal(t, math.Float32bits(want), math.Float32bits(out[i]), "%s(%v) = %v, want %v", c.name, x, out[i], want)
				}
			}
		}
	}
}

// TestEveryIntrinsicHasACPUImplementation: each intrinsic of the tensor
// IR (tensorir.Intrinsics) has a row in mathImpls, with an implementation
// for every float dtype.
func TestEveryIntrinsicHasACPUImplementation(t *testing.T) {
	for name := range tir.Intrinsics {
		impl, ok := mathImpls[name]
		if assert.True(t, ok, "intrinsic %q has no CPU implementation", name) {
			assert.True(t, impl.any != nil || (impl.f32 != nil && impl.f64 != nil), "intrinsic %q lacks an f32 or f64 implementation", name)
		}
	}
}

// TestFmodExact compiles fmod(X, Y) (vectorized) on random f32 pairs of
// both signs and mixed magnitudes plus the edge values, and requires C
// fmod's exact result: math.Mod's bits, ±0 and NaN included.
func TestFmodExact(t *testing.T) {
	edges := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 3, 2.5, 1e-40, 3e38, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	var xs, ys []float32
	for _, a := range edges {
		for _, b := range edges {
			xs, ys = append(xs, a), append(ys, b)
		}
	}
	for i := 0; len(xs)%16 != 0 || i < 4096; i++ {
		a := math.Float32frombits(uint32(i*2654435761) ^ 0x5bd1e995)
		b := math.Float32frombits(uint32(i*40503+12345) * 2246822519)
		xs, ys = append(xs, a), append(ys, b)
	}
	n := len(xs)
	src := fmt.Sprintf(`tir.func @m(%%X: buffer<%[1]dxf32>, %%Y: buffer<%[1]dxf32>, out %%R: buffer<%[1]dxf32>) {
  tir.for %%jo = 0 to %[2]d {
    tir.for %%ji = 0 to 16 vectorized {
      %%R[%%jo * 16 + %%ji] = fmod(%%X[%%jo * 16 + %%ji], %%Y[%%jo * 16 + %%ji])
    }
  }
}
`, n, n/16)
	m := parseModule(t, src)
	exportAll(m)
	so, _ := buildShared(t, m, Options{})
	args := tir.Args{Arrays: map[string]*tir.Array{"X": tir.ArrayFromFloat32(xs, int64(n)), "Y": tir.ArrayFromFloat32(ys, int64(n)), "R": tir.NewArray(tir.DF32, int64(n))}}
	runShared(t, so, "m", m.Func("m"), args)
	for i, g := range args.Arrays["R"].Float32s() {
		want := float32(math.Mod(float64(xs[i]), float64(ys[i])))
		if math.IsNaN(float64(want)) {
			require.True(t, math.IsNaN(float64(g)), "fmod(%g, %g) = %g, want NaN", xs[i], ys[i], g)
			continue
		}
		require.Equal(t, math.Float32bits(want), math.Float32bits(g), "fmod(%g, %g) = %g, want %g", xs[i], ys[i], g, want)
	}
}
