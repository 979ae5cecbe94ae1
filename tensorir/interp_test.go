package tensorir_test

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

func randF32(r *rand.Rand, n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(r.NormFloat64())
	}
	return out
}

func parseFunc(t *testing.T, src string) *tir.PrimFunc {
	t.Helper()
	m := tensorLevel.MustParse(t, src)
	require.Len(t, m.Funcs, 1)
	return m.Funcs[0]
}

// The matmul is exactly the float32 loop a compiler would emit: the
// accumulator rounds to f32 after every multiply and every add.
func TestInterpMatmul(t *testing.T) {
	f := parseFunc(t, matmulText)
	r := rand.New(rand.NewSource(1))
	a, b := randF32(r, 128*64), randF32(r, 64*32)
	c := tir.NewArray(tir.DF32, 128, 32)
	for i := range c.Floats {
		c.Floats[i] = 99 // overwritten by the init
	}
	require.NoError(t, tir.Run(f, map[string]*tir.Array{
		"A": tir.ArrayFromFloat32(a, 128, 64), "B": tir.ArrayFromFloat32(b, 64, 32), "C": c}))
	got := c.Float32s()
	for i := 0; i < 128; i++ {
		for j := 0; j < 32; j++ {
			var acc float32
			for k := 0; k < 64; k++ {
				p := a[i*64+k] * b[k*32+j]
				acc = acc + p
			}
			require.Equal(t, math.Float32bits(acc), math.Float32bits(got[i*32+j]), "C[%d, %d]", i, j)
		}
	}
}

// Accumulation is float32, not a hidden float64: adding 1 to 2^24 in f32
// is lost every time.
func TestInterpFloat32Accumulation(t *testing.T) {
	f := parseFunc(t, `tir.func @acc(out %S: buffer<1xf32>) {
  %S[0] = 16777216.0
  tir.for %i = 0 to 10 {
    %S[0] = %S[0] + 1.0
  }
}
`)
	s := tir.NewArray(tir.DF32, 1)
	require.NoError(t, tir.Run(f, map[string]*tir.Array{"S": s}))
	assert.Equal(t, 16777216.0, s.Floats[0])

	h := parseFunc(t, `tir.func @acc16(out %S: buffer<1xf16>) {
  %S[0] = 2048.0 : f16
  tir.for %i = 0 to 10 {
    %S[0] = %S[0] + 1.0 : f16
  }
  %S[0] = %S[0] + 0.3 : f16 * 3.0 : f16
}
`)
	s = tir.NewArray(tir.DF16, 1)
	require.NoError(t, tir.Run(h, map[string]*tir.Array{"S": s}))
	// 0.3 is 0.30004883 in f16; times 3 rounds to 0.9003906; 2048 + 0.9 rounds to 2048 (ulp 2).
	assert.Equal(t, 2048.0, s.Floats[0])
}

const conv2dText = `tir.func @conv2d(%X: buffer<1x2x6x6xf32>, %W: buffer<3x2x3x3xf32>, out %Y: buffer<1x3x4x4xf32>) {
  tir.for %n = 0 to 1 {
    tir.for %f = 0 to 3 parallel {
      tir.for %y = 0 to 4 {
        tir.for %x = 0 to 4 {
          tir.for %c = 0 to 2 {
            tir.for %ky = 0 to 3 unrolled {
              tir.for %kx = 0 to 3 unrolled {
                tir.block "Y"(%vn = spatial(0:1, %n), %vf = spatial(0:3, %f), %vy = spatial(0:4, %y), %vx = spatial(0:4, %x), %vc = reduce(0:2, %c), %vky = reduce(0:3, %ky), %vkx = reduce(0:3, %kx)) reads(%X[%vn, %vc, %vy + %vky, %vx + %vkx], %W[%vf, %vc, %vky, %vkx]) writes(%Y[%vn, %vf, %vy, %vx]) {
                  tir.init {
                    %Y[%vn, %vf, %vy, %vx] = 0.0
                  }
                  %Y[%vn, %vf, %vy, %vx] = %Y[%vn, %vf, %vy, %vx] + %X[%vn, %vc, %vy + %vky, %vx + %vkx] * %W[%vf, %vc, %vky, %vkx]
                }
              }
            }
          }
        }
      }
    }
  }
}
`

func TestInterpConv2d(t *testing.T) {
	f := parseFunc(t, conv2dText)
	r := rand.New(rand.NewSource(2))
	x, w := randF32(r, 2*6*6), randF32(r, 3*2*3*3)
	y := tir.NewArray(tir.DF32, 1, 3, 4, 4)
	require.NoError(t, tir.Run(f, map[string]*tir.Array{
		"X": tir.ArrayFromFloat32(x, 1, 2, 6, 6), "W": tir.ArrayFromFloat32(w, 3, 2, 3, 3), "Y": y}))
	got := y.Float32s()
	for fo := 0; fo < 3; fo++ {
		for yy := 0; yy < 4; yy++ {
			for xx := 0; xx < 4; xx++ {
				var acc float32
				for c := 0; c < 2; c++ {
					for ky := 0; ky < 3; ky++ {
						for kx := 0; kx < 3; kx++ {
							acc += x[c*36+(yy+ky)*6+xx+kx] * w[fo*18+c*9+ky*3+kx]
						}
					}
				}
				require.Equal(t, acc, got[fo*16+yy*4+xx], "Y[0, %d, %d, %d]", fo, yy, xx)
			}
		}
	}
}

// A row maximum with an init of -inf; the init runs once per row even
// though the reduce loop is outermost.
func TestInterpReductionInit(t *testing.T) {
	f := parseFunc(t, `tir.func @rowmax(%A: buffer<5x7xf32>, out %M: buffer<5xf32>) {
  tir.for %k = 0 to 7 {
    tir.for %i = 0 to 5 {
      tir.block "M"(%vi = spatial(0:5, %i), %vk = reduce(0:7, %k)) reads(%A[%vi, %vk]) writes(%M[%vi]) {
        tir.init {
          %M[%vi] = 0xFF800000 : f32
        }
        %M[%vi] = max(%M[%vi], %A[%vi, %vk])
      }
    }
  }
}
`)
	r := rand.New(rand.NewSource(3))
	a := randF32(r, 35)
	m := tir.NewArray(tir.DF32, 5)
	require.NoError(t, tir.Run(f, map[string]*tir.Array{"A": tir.ArrayFromFloat32(a, 5, 7), "M": m}))
	for i := 0; i < 5; i++ {
		want := float32(math.Inf(-1))
		for k := 0; k < 7; k++ {
			want = max(want, a[i*7+k])
		}
		assert.Equal(t, want, float32(m.Floats[i]))
	}
}

// A loop of 10 split into 3×4 with a guard for the tail, once as an
// IfThenElse and once as a block predicate; plus a local Allocate and a
// let, and an integer buffer.
func TestInterpGuardedTailAndAllocate(t *testing.T) {
	f := parseFunc(t, `tir.func @tail(%A: buffer<10xi32>, out %B: buffer<10xi32>, out %C: buffer<10xi32>) {
  tir.for %io = 0 to 3 {
    tir.allocate %L: buffer<4xi32, "local"> {
      tir.for %ii = 0 to 4 vectorized {
        tir.if %io * 4 + %ii < 10 {
          tir.let %x = %A[%io * 4 + %ii] {
            %L[%ii] = %x * %x - floordiv(%x, 3 : i32)
          }
        } else {
          %L[%ii] = -1 : i32
        }
      }
      tir.for %ii = 0 to 4 unrolled {
        tir.if %io * 4 + %ii < 10 {
          %B[%io * 4 + %ii] = %L[%ii] + %L[3 - %ii]
        }
      }
    }
  }
  tir.for %io = 0 to 3 parallel {
    tir.for %ii = 0 to 4 {
      tir.block "C"(%v = spatial(0:10, %io * 4 + %ii)) where(%io * 4 + %ii < 10) reads(%A[%v]) writes(%C[%v]) {
        %C[%v] = floormod(%A[%v], -3 : i32)
      }
    }
  }
}
`)
	a := tir.NewArray(tir.DI32, 10)
	for i := range a.Ints {
		a.Ints[i] = int64(i*7 - 30)
	}
	b, c := tir.NewArray(tir.DI32, 10), tir.NewArray(tir.DI32, 10)
	require.NoError(t, tir.Run(f, map[string]*tir.Array{"A": a, "B": b, "C": c}))
	floorDiv := func(x, y int64) int64 { return int64(math.Floor(float64(x) / float64(y))) }
	l := func(i int64) int64 {
		if i >= 10 {
			return -1
		}
		x := a.Ints[i]
		return x*x - floorDiv(x, 3)
	}
	for i := int64(0); i < 10; i++ {
		io, ii := i/4, i%4
		assert.Equal(t, l(i)+l(io*4+3-ii), b.Ints[i], "B[%d]", i)
		x := a.Ints[i]
		assert.Equal(t, x-(-3)*floorDiv(x, -3), c.Ints[i], "C[%d]", i)
	}
}

// A block-scoped alloc buffer with a symbolic shape, and scalar parameters.
func TestInterpSymbolicAndScalars(t *testing.T) {
	f := parseFunc(t, `tir.func @scale(%n: index, %alpha: f32, %X: buffer<(%n)xf32>, out %Y: buffer<(%n)xf32>) {
  tir.block "root"() alloc(%T: buffer<(%n)xf32, "local">) {
    tir.for %i = 0 to %n {
      %T[%i] = %X[%i] * %alpha
    }
    tir.for %i = 0 to %n {
      %Y[%i] = %T[%n - 1 - %i] + sigmoid(%X[%i])
    }
  }
}
`)
	x := []float32{0.5, -1, 2, 3, -4, 5.5}
	y := tir.NewArray(tir.DF32, 6)
	require.NoError(t, tir.RunArgs(f, tir.Args{
		Arrays: map[string]*tir.Array{"X": tir.ArrayFromFloat32(x, 6), "Y": y},
		Ints:   map[string]int64{"n": 6}, Floats: map[string]float64{"alpha": 1.5}}))
	for i := range x {
		sig := float32(1 / (1 + math.Exp(-float64(x[i]))))
		assert.Equal(t, x[5-i]*1.5+sig, float32(y.Floats[i]), "Y[%d]", i)
	}
}

// Strided buffers with an element offset address the underlying storage.
func TestInterpStrides(t *testing.T) {
	f := parseFunc(t, `tir.func @t(%A: buffer<2x3xf32, strides = [1, 2], offset = 1>, out %B: buffer<2x3xf32>) {
  tir.for %i = 0 to 2 {
    tir.for %j = 0 to 3 {
      %B[%i, %j] = %A[%i, %j]
    }
  }
}
`)
	store := []float32{-1, 10, 20, 11, 21, 12, 22}
	a := &tir.Array{DType: tir.DF32, Shape: []int64{2, 3}}
	for _, v := range store {
		a.Floats = append(a.Floats, float64(v))
	}
	b := tir.NewArray(tir.DF32, 2, 3)
	require.NoError(t, tir.Run(f, map[string]*tir.Array{"A": a, "B": b}))
	assert.Equal(t, []float32{10, 11, 12, 20, 21, 22}, b.Float32s())
}

func TestInterpErrors(t *testing.T) {
	oob := parseFunc(t, `tir.func @oob(%A: buffer<4x4xf32>, out %B: buffer<4xf32>) {
  tir.for %i = 0 to 4 {
    tir.block "copy"(%vi = spatial(0:4, %i)) reads(%A[%vi, 0:5]) writes(%B[%vi]) {
      %B[%vi] = %A[%vi, %vi + 1]
    }
  }
}
`)
	args := map[string]*tir.Array{"A": tir.NewArray(tir.DF32, 4, 4), "B": tir.NewArray(tir.DF32, 4)}
	err := tir.Run(oob, args)
	require.Error(t, err)
	assert.Equal(t, "test.tir:4:7: error: index [3, 4] out of bounds of buffer %A with shape [4, 4] in block 'copy'", err.Error())

	div := parseFunc(t, `tir.func @div(%A: buffer<4xi32>, out %B: buffer<4xi32>) {
  tir.for %i = 0 to 4 {
    %B[%i] = floordiv(7 : i32, %A[%i])
  }
}
`)
	err = tir.Run(div, map[string]*tir.Array{"A": tir.NewArray(tir.DI32, 4), "B": tir.NewArray(tir.DI32, 4)})
	require.Error(t, err)
	assert.Equal(t, "test.tir:3:5: error: integer division by zero in floordiv(7 : i32, %A[%i])", err.Error())

	err = tir.Run(div, map[string]*tir.Array{"A": tir.NewArray(tir.DI32, 5), "B": tir.NewArray(tir.DI32, 4)})
	require.Error(t, err)
	assert.Equal(t, "test.tir:1:15: error: array for buffer %A has shape [5], want [4]", err.Error())

	err = tir.Run(div, map[string]*tir.Array{"A": tir.NewArray(tir.DF32, 4), "B": tir.NewArray(tir.DI32, 4)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "array for buffer %A has dtype f32, want i32")

	err = tir.Run(div, map[string]*tir.Array{"A": tir.NewArray(tir.DI32, 4)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "missing array for buffer parameter %B")

	err = tir.Run(div, map[string]*tir.Array{"A": tir.ArrayFromInt64(tir.DI64, []int64{1, 2, 3, 4}, 4), "B": tir.NewArray(tir.DI32, 4)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "array for buffer %A has dtype i64, want i32")
	err = tir.Run(div, map[string]*tir.Array{"A": {DType: tir.DI32, Shape: []int64{4}, Ints: []int64{1, 1 << 40, 1, 1}}, "B": tir.NewArray(tir.DI32, 4)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "array for buffer %A holds 1099511627776 at element 1, which is not a value of i32")
	err = tir.Run(parseFunc(t, conv2dText), map[string]*tir.Array{"X": {DType: tir.DF32, Shape: []int64{1, 2, 6, 6}, Floats: make([]float64, 72)},
		"W": tir.ArrayFromFloat64(tir.DF32, append([]float64{0.1}, make([]float64, 53)...), 3, 2, 3, 3), "Y": tir.NewArray(tir.DF32, 1, 3, 4, 4)})
	require.NoError(t, err, "ArrayFromFloat64 rounds to f32")
	w := &tir.Array{DType: tir.DF32, Shape: []int64{3, 2, 3, 3}, Floats: append([]float64{0.1}, make([]float64, 53)...)}
	err = tir.Run(parseFunc(t, conv2dText), map[string]*tir.Array{"X": tir.NewArray(tir.DF32, 1, 2, 6, 6), "W": w, "Y": tir.NewArray(tir.DF32, 1, 3, 4, 4)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "array for buffer %W holds 0.1 at element 0, which is not a value of f32")

	// A short data slice is an error, not a panic.
	err = tir.Run(div, map[string]*tir.Array{"A": {DType: tir.DI32, Shape: []int64{4}}, "B": tir.NewArray(tir.DI32, 4)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "outside its 0 stored elements")

	dom := parseFunc(t, `tir.func @dom(out %B: buffer<8xf32>) {
  tir.for %i = 0 to 2 {
    tir.for %j = 0 to 4 {
      tir.block "b"(%v = spatial(0:7, %i * 4 + %j)) where(%j < 4) writes(%B[%v]) {
        %B[%v] = 1.0
      }
    }
  }
}
`)
	err = tir.Run(dom, map[string]*tir.Array{"B": tir.NewArray(tir.DF32, 8)})
	require.Error(t, err)
	assert.Equal(t, "test.tir:4:7: error: iteration variable %v = 7 is outside its domain [0, 7) in block 'b'", err.Error())

	// Unverified IR is rejected before it runs.
	bad := parseFunc(t, "tir.func @ok(out %B: buffer<4xf32>) {\n}\n")
	bad.Body = &tir.BufferStore{Buffer: bad.Params[0].Buffer, Indices: []tir.Expr{tir.Int(0)}, Value: tir.Int(1)}
	err = tir.Run(bad, map[string]*tir.Array{"B": tir.NewArray(tir.DF32, 4)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "store to buffer %B of f32: value has dtype index")
}

// EvalInt computes what the interpreter computes for integer
// expressions and refuses what it cannot evaluate without a run.
func TestEvalInt(t *testing.T) {
	i, j := tir.NewVar("i", tir.DIndex), tir.NewVar("j", tir.DIndex)
	env := func(v *tir.Var) (int64, bool) {
		switch v {
		case i:
			return -7, true
		case j:
			return 3, true
		}
		return 0, false
	}
	buf := tir.NewBuffer("A", tir.DF32, 4)
	cases := []struct {
		e    tir.Expr
		want int64
		ok   bool
	}{
		{tir.Add(tir.Mul(i, j), tir.Int(2)), -19, true},
		{tir.FloorDiv(i, j), -3, true},
		{tir.FloorMod(i, j), 2, true},
		{tir.Min(i, j), -7, true},
		{tir.LT(i, j), 1, true},
		{&tir.Not{X: tir.LT(i, j)}, 0, true},
		{&tir.Select{Cond: tir.LT(j, i), T: i, F: j}, 3, true},
		{&tir.Cast{Type: tir.DI8, X: tir.Mul(j, tir.Int(100))}, 44, true},
		{tir.FloorDiv(i, tir.Sub(j, tir.Int(3))), 0, false},
		{tir.Add(i, tir.NewVar("k", tir.DIndex)), 0, false},
		{&tir.Cast{Type: tir.DIndex, X: tir.Load(buf, i)}, 0, false},
	}
	for _, c := range cases {
		got, ok := tir.EvalInt(c.e, env)
		require.Equal(t, c.ok, ok, tir.ExprString(c.e))
		if ok {
			require.Equal(t, c.want, got, tir.ExprString(c.e))
		}
	}
}

// AutoUnrollSteps counts the statements of a fully unrolled nest, and
// AutoUnrolls compares them with the budget.
func TestAutoUnrollSteps(t *testing.T) {
	f := parseFunc(t, `tir.func @k(%A: buffer<8x8xf32>, out %B: buffer<8x8xf32>) {
  tir.for %i = 0 to 8 parallel {
    tir.for %j = 0 to 2 {
      tir.for %k = 0 to 4 {
        %B[%i, %k] = %A[%i, %k]
        %B[%i, %k + 4] = %A[%i, %k + 4]
      }
      tir.for %v = 0 to 8 vectorized {
        %B[%i, %v] = %A[%i, %v] * 2.0
      }
    }
  }
}
`)
	outer := f.Body.(*tir.For)
	_, ok := tir.AutoUnrollSteps(outer)
	require.False(t, ok, "a parallel loop is never unrolled")
	j := outer.Body.(*tir.For)
	steps, ok := tir.AutoUnrollSteps(j)
	require.True(t, ok)
	require.Equal(t, int64(2*(4*2+1)), steps, "k: 4×2 stores, the vector loop once")
	require.True(t, tir.AutoUnrolls(j, 18))
	require.False(t, tir.AutoUnrolls(j, 17))
	require.False(t, tir.AutoUnrolls(j, 0))
	budget, has := tir.AutoUnrollBudget(j)
	require.False(t, has)
	require.Zero(t, budget)
}

// Unsigned dtypes compare, divide, take min/max, shift and convert as
// unsigned; signed shifts are arithmetic; amounts of the width or more
// give 0 (or the sign fill).
func TestInterpUnsignedAndShifts(t *testing.T) {
	f := parseFunc(t, `tir.func @u(%A: buffer<4xui8>, %B: buffer<4xui8>, %W: buffer<2xui64>, %S: buffer<2xi16>, out %Q: buffer<4xui8>, out %R: buffer<4xui8>, out %L: buffer<4xi1>, out %M: buffer<4xui8>, out %SL: buffer<4xui8>, out %SR: buffer<4xui8>, out %F: buffer<4xf32>, out %X: buffer<4xi32>, out %WF: buffer<2xf64>, out %WL: buffer<2xi1>, out %WD: buffer<2xui64>, out %SS: buffer<2xi16>, out %C: buffer<4xui8>) {
  tir.for %i = 0 to 4 {
    %Q[%i] = floordiv(%A[%i], %B[%i])
    %R[%i] = floormod(%A[%i], %B[%i])
    %L[%i] = %A[%i] < %B[%i]
    %M[%i] = max(%A[%i], %B[%i]) - min(%A[%i], %B[%i])
    %SL[%i] = shl(%A[%i], %B[%i])
    %SR[%i] = shr(%A[%i], %B[%i])
    %F[%i] = cast<f32>(%A[%i])
    %X[%i] = cast<i32>(%A[%i]) + cast<i32>(cast<i8>(%A[%i]))
    %C[%i] = cast<ui8>(cast<f32>(%A[%i]) * 2.0 - 300.0)
  }
  tir.for %j = 0 to 2 {
    %WF[%j] = cast<f64>(%W[%j])
    %WL[%j] = %W[%j] > 5 : ui64
    %WD[%j] = floordiv(%W[%j], 3 : ui64)
    %SS[%j] = shr(%S[%j], 20 : i16) + shr(%S[%j], 1 : i16)
  }
}`)
	arr := func(t tir.DType, v ...int64) *tir.Array { return tir.ArrayFromInt64(t, v, int64(len(v))) }
	args := map[string]*tir.Array{
		"A": arr(tir.DUI8, 200, 7, 255, 1), "B": arr(tir.DUI8, 3, 9, 8, 1),
		"W": arr(tir.DUI64, -1, 4), "S": arr(tir.DI16, -8, 8),
		"Q": tir.NewArray(tir.DUI8, 4), "R": tir.NewArray(tir.DUI8, 4), "L": tir.NewArray(tir.DBool, 4),
		"M": tir.NewArray(tir.DUI8, 4), "SL": tir.NewArray(tir.DUI8, 4), "SR": tir.NewArray(tir.DUI8, 4),
		"F": tir.NewArray(tir.DF32, 4), "X": tir.NewArray(tir.DI32, 4), "WF": tir.NewArray(tir.DF64, 2),
		"WL": tir.NewArray(tir.DBool, 2), "WD": tir.NewArray(tir.DUI64, 2), "SS": tir.NewArray(tir.DI16, 2),
		"C": tir.NewArray(tir.DUI8, 4),
	}
	require.NoError(t, tir.Run(f, args))
	assert.Equal(t, []int64{66, 0, 31, 1}, args["Q"].Ints)
	assert.Equal(t, []int64{2, 7, 7, 0}, args["R"].Ints)
	assert.Equal(t, []int64{0, 1, 0, 0}, args["L"].Ints, "200 < 3 is false unsigned")
	assert.Equal(t, []int64{197, 2, 247, 0}, args["M"].Ints)
	assert.Equal(t, []int64{64, 0, 0, 2}, args["SL"].Ints, "200<<3 wraps; shifts by ≥ 8 give 0")
	assert.Equal(t, []int64{25, 0, 0, 0}, args["SR"].Ints)
	assert.Equal(t, []float64{200, 7, 255, 1}, args["F"].Floats)
	assert.Equal(t, []int64{200 - 56, 14, 255 - 1, 2}, args["X"].Ints, "zero-extended, then through i8 sign-extended")
	assert.Equal(t, []int64{100, 0, 210, 0}, args["C"].Ints, "float → ui8 saturates at 0 and 255")
	assert.Equal(t, []float64{math.Ldexp(1, 64), 4}, args["WF"].Floats)
	assert.Equal(t, []int64{1, 0}, args["WL"].Ints)
	assert.Equal(t, []int64{int64(uint64(math.MaxUint64) / 3), 1}, args["WD"].Ints)
	assert.Equal(t, []int64{-1 + -4, 0 + 4}, args["SS"].Ints, "arithmetic shift; ≥ 16 gives the sign fill")
}

// Casts to f16 and bf16 round once from f64 (not through float32), and
// f16/bf16 arithmetic rounds after every operation.
func TestInterpNarrowFloats(t *testing.T) {
	f := parseFunc(t, `tir.func @n(%D: buffer<2xf64>, out %H: buffer<2xf16>, out %B: buffer<2xbf16>, out %S: buffer<1xf16>) {
  tir.for %i = 0 to 2 {
    %H[%i] = cast<f16>(%D[%i])
    %B[%i] = cast<bf16>(%D[%i])
  }
  %S[0] = cast<f16>(%D[0]) + 0.00048828125 : f16
}`)
	d := []float64{1 + math.Ldexp(1, -11) + math.Ldexp(1, -40), 1 + math.Ldexp(1, -8) + math.Ldexp(1, -40)}
	args := map[string]*tir.Array{"D": tir.ArrayFromFloat64(tir.DF64, d, 2), "H": tir.NewArray(tir.DF16, 2),
		"B": tir.NewArray(tir.DBF16, 2), "S": tir.NewArray(tir.DF16, 1)}
	require.NoError(t, tir.Run(f, args))
	assert.Equal(t, 1+math.Ldexp(1, -10), args["H"].Floats[0], "above the tie: rounds up, as numpy")
	assert.Equal(t, 1+math.Ldexp(1, -8), args["H"].Floats[1])
	assert.Equal(t, 1+math.Ldexp(1, -7), args["B"].Floats[1])
	assert.Equal(t, 1+math.Ldexp(1, -9), args["S"].Floats[0], "(1+2^-10) + 2^-11 ties to even")
}
