package tensorir_test

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/tensorir"
)

// hostModule: a kernel that adds its two inputs, and a host function
// that calls it over a constant and arena buffers whose offsets are
// parameters of the test (so a wrong memory plan can be tried).
func hostModule(off1, off2 string) string {
	return `tir.func @add(%A: buffer<3x5xf32>, %B: buffer<3x5xf32>, out %C: buffer<3x5xf32>) attributes {tessera.kernel} {
  tir.for %i = 0 to 3 {
    tir.for %j = 0 to 5 {
      tir.block "add"(%vi = spatial(0:3, %i), %vj = spatial(0:5, %j)) reads(%A[%vi, %vj], %B[%vi, %vj]) writes(%C[%vi, %vj]) {
        %C[%vi, %vj] = %A[%vi, %vj] + %B[%vi, %vj]
      }
    }
  }
}

tir.func @main(%x: buffer<3x5xf32>, out %out0: buffer<3x5xf32>) attributes {tessera.host} {
  tir.constant %w: buffer<3x5xf32> = dense<[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 0.5]> {
    tir.arena 256 (%t0: buffer<3x5xf32> at 0, %t1: buffer<3x5xf32> at ` + off1 + `, %t2: buffer<3x5xf32> at ` + off2 + `) {
      tir.call @add(%x, %w, %t0)
      tir.call @add(%t0, %x, %t1)
      tir.call @add(%t1, %t0, %t2)
      tir.call @add(%t2, %w, %out0)
    }
  }
}
`
}

func runMain(t *testing.T, src string) []float64 {
	t.Helper()
	m := tensorLevel.MustParse(t, src)
	x := tensorir.NewArray(tensorir.DF32, 3, 5)
	for i := range x.Floats {
		x.Floats[i] = float64(i) - 7
	}
	out := tensorir.NewArray(tensorir.DF32, 3, 5)
	require.NoError(t, tensorir.RunModule(m, "main", tensorir.Args{Arrays: map[string]*tensorir.Array{"x": x, "out0": out}}))
	return out.Floats
}

func TestHostRoundTripAndRun(t *testing.T) {
	src := hostModule("64", "128")
	m := tensorLevel.MustParse(t, src)
	assert.Equal(t, src, tensorir.Print(m))
	got := runMain(t, src)
	w := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 0.5}
	for i, g := range got {
		x := float64(i) - 7
		t0 := x + w[i]
		t1 := t0 + x
		t2 := t1 + t0
		assert.Equal(t, t2+w[i], g, "element %d", i)
	}
	// Placing t2 over t0 is harmless here: the elementwise kernel reads
	// t0[i] before it writes t2[i] (an in-place update).
	assert.Equal(t, got, runMain(t, hostModule("64", "0")))
	// A plan placing t1 over t0 while both are live gives wrong results:
	// the interpreter gives buffers exactly the aliasing of the plan.
	assert.NotEqual(t, got, runMain(t, hostModule("0", "128")))
}

func TestHostConstantData(t *testing.T) {
	src := `tir.func @main(out %o: buffer<2x3xf16>, out %p: buffer<4xi8>, out %q: buffer<2xf64>, out %r: buffer<3xi1>) attributes {tessera.host} {
  tir.constant %a: buffer<2x3xf16> = dense<[0.33325195, -0.0, 0x7C00, 0xFC00, 0x7E00, 65504.0]> {
    tir.constant %b: buffer<4xi8> = dense<[-128, 127, 0, -1]> {
      tir.constant %c: buffer<2xf64> = dense<[0.1, 1.0e-300]> {
        tir.constant %d: buffer<3xi1> = dense<[1, 0, 1]> {
          tir.for %i = 0 to 6 {
            %o[floordiv(%i, 3), floormod(%i, 3)] = %a[floordiv(%i, 3), floormod(%i, 3)]
          }
          tir.for %i = 0 to 4 {
            %p[%i] = %b[%i]
          }
          tir.for %i = 0 to 2 {
            %q[%i] = %c[%i]
          }
          tir.for %i = 0 to 3 {
            %r[%i] = %d[%i]
          }
        }
      }
    }
  }
}
`
	m := tensorLevel.MustParse(t, src)
	require.Equal(t, src, tensorir.Print(m))
	o := tensorir.NewArray(tensorir.DF16, 2, 3)
	p := tensorir.NewArray(tensorir.DI8, 4)
	q := tensorir.NewArray(tensorir.DF64, 2)
	r := tensorir.NewArray(tensorir.DBool, 3)
	require.NoError(t, tensorir.RunModule(m, "main", tensorir.Args{Arrays: map[string]*tensorir.Array{"o": o, "p": p, "q": q, "r": r}}))
	assert.Equal(t, 0.333251953125, o.Floats[0])
	assert.True(t, math.Signbit(o.Floats[1]))
	assert.True(t, math.IsInf(o.Floats[2], 1) && math.IsInf(o.Floats[3], -1) && math.IsNaN(o.Floats[4]))
	assert.Equal(t, 65504.0, o.Floats[5])
	assert.Equal(t, []int64{-128, 127, 0, -1}, p.Ints)
	assert.Equal(t, []float64{0.1, 1e-300}, q.Floats)
	assert.Equal(t, []int64{1, 0, 1}, r.Ints)

	// Elided on request; elided data parses back but does not run.
	el := tensorir.PrintWith(m, tensorir.PrintOptions{ElideConstantsLargerThan: 3})
	assert.Contains(t, el, "tir.constant %a: buffer<2x3xf16> = dense_resource<__elided__> {")
	assert.Contains(t, el, "tir.constant %d: buffer<3xi1> = dense<[1, 0, 1]> {")
	me := tensorLevel.MustParse(t, el)
	assert.Equal(t, el, tensorir.Print(me))
	err := tensorir.RunModule(me, "main", tensorir.Args{Arrays: map[string]*tensorir.Array{"o": o, "p": p, "q": q, "r": r}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "test.tir:2:3: error: constant buffer %a: its data was elided when printed")
}

// Arena views store elements in the dtype's byte format: an i8, i1 and
// f16 buffer sharing the arena see each other's bytes.
func TestArenaByteViews(t *testing.T) {
	src := `tir.func @main(out %o: buffer<4xi8>, out %h: buffer<2xf16>) attributes {tessera.host} {
  tir.arena 64 (%a: buffer<4xi8> at 0, %b: buffer<2xf16> at 0, %c: buffer<4xi1> at 0) {
    %b[0] = 1.0 : f16
    %b[1] = -2.0 : f16
    tir.for %i = 0 to 4 {
      %o[%i] = %a[%i]
    }
    %a[1] = 0 : i8
    %a[3] = -64 : i8
    %h[0] = %b[0]
    %h[1] = %b[1]
  }
}
`
	m := tensorLevel.MustParse(t, src)
	o := tensorir.NewArray(tensorir.DI8, 4)
	h := tensorir.NewArray(tensorir.DF16, 2)
	require.NoError(t, tensorir.RunModule(m, "main", tensorir.Args{Arrays: map[string]*tensorir.Array{"o": o, "h": h}}))
	// f16 1.0 = 0x3C00, -2.0 = 0xC000, little-endian bytes 00 3C 00 C0.
	assert.Equal(t, []int64{0, 0x3C, 0, -64}, o.Ints)
	assert.Equal(t, []float64{0, -2}, h.Floats) // 0x0000 and 0xC000
}

func TestHostVerifyErrors(t *testing.T) {
	kernel := "tir.func @k(%A: buffer<4xf32>, out %B: buffer<4xf32>) {\n  tir.evaluate 0\n}\n"
	for _, c := range []verifyCase{
		{"unknown callee", "tir.func @main(%x: buffer<4xf32>) {\n  tir.call @nope(%x)\n}",
			"v.tir:2:3: error: tir.call: no function @nope in the module"},
		{"arity", kernel + "tir.func @main(%x: buffer<4xf32>) {\n  tir.call @k(%x)\n}",
			"v.tir:5:3: error: tir.call @k: 1 buffer and 0 scalar arguments for 2 buffer and 0 scalar parameters"},
		{"dtype", kernel + "tir.func @main(%x: buffer<4xf32>, out %y: buffer<4xf16>) {\n  tir.call @k(%x, %y)\n}",
			"v.tir:5:3: error: tir.call @k: argument %y has dtype f16 but parameter %B has f32"},
		{"shape", kernel + "tir.func @main(%x: buffer<4xf32>, out %y: buffer<2x2xf32>) {\n  tir.call @k(%x, %y)\n}",
			"v.tir:5:3: error: tir.call @k: argument %y has shape [2, 2] but parameter %B has [4]"},
		{"constant as output", kernel + "tir.func @main(%x: buffer<4xf32>) {\n  tir.constant %c: buffer<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]> {\n    tir.call @k(%x, %c)\n  }\n}",
			"v.tir:6:5: error: tir.call @k: constant buffer %c is passed as out parameter %B"},
		{"self call", "tir.func @main(%x: buffer<4xf32>) {\n  tir.call @main(%x)\n}",
			"v.tir:2:3: error: tir.call: @main calls itself"},
		{"scalar param", "tir.func @s(%n: index) {\n  tir.evaluate 0\n}\ntir.func @main() {\n  tir.call @s()\n}",
			"v.tir:5:3: error: tir.call @s: 0 buffer and 0 scalar arguments for 0 buffer and 1 scalar parameters"},
		{"symbolic argument shape", "tir.func @s(%n: index, %a: buffer<(%n + 1)xf32>) {\n  tir.evaluate 0\n}\ntir.func @main(%m: index, %b: buffer<(%m)xf32>) {\n  tir.call @s(%m, %b)\n}",
			"v.tir:5:3: error: tir.call @s: argument %b has shape [%m] but parameter %a has [%m + 1]"},
		{"constant count", "tir.func @main() {\n  tir.constant %c: buffer<2x2xf32> = dense<[1.0, 2.0, 3.0]> {\n  }\n}",
			"v.tir:2:3: error: constant buffer %c of 4 elements of f32 holds 3 float values"},
		{"store to constant", "tir.func @main() {\n  tir.constant %c: buffer<2xi32> = dense<[1, 2]> {\n    %c[0] = 3 : i32\n  }\n}",
			"v.tir:3:5: error: store to constant buffer %c"},
		{"arena overflow", "tir.func @main() {\n  tir.arena 100 (%t: buffer<30xf32> at 0) {\n  }\n}",
			"v.tir:2:3: error: tir.arena: buffer %t of 120 bytes at offset 0 ends at 120, past the arena's 100 bytes"},
		{"arena alignment", "tir.func @main() {\n  tir.arena 1000 (%t: buffer<3xf32> at 32) {\n  }\n}",
			"v.tir:2:3: error: tir.arena: buffer %t at offset 32: offsets must be non-negative multiples of 64"},
		{"arena symbolic", "tir.func @main(%n: index) {\n  tir.arena 1000 (%t: buffer<(%n)xf32> at 0) {\n  }\n}",
			"v.tir:2:3: error: tir.arena: buffer %t must have a constant shape in an arena of constant size"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := tensorir.ParseString("v.tir", c.src)
			require.NoError(t, err)
			err = tensorir.Verify(m)
			require.Error(t, err)
			assert.Equal(t, c.want, strings.SplitN(err.Error(), "\n", 2)[0])
		})
	}
}

func TestHostParseErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"tir.func @s(%n: index, %a: buffer<(%n)xf32>) {\n  tir.evaluate 0\n}\ntir.func @main(%m: index, %b: buffer<(%m)xf32>) {\n  tir.call @s(%b, %m)\n}",
			"p.tir:5:3: error: tir.call @s: scalar argument %m after a buffer argument (scalars come first)"},
		{"tir.func @main() {\n  tir.constant %c: buffer<2xf32> = dense<[1.0, 0.1 : f32]> {\n  }\n}", "p.tir:2:"},
		{"tir.func @main() {\n  tir.constant %c: buffer<2xi8> = dense<[1, 300]> {\n  }\n}", "p.tir:2:45: error: constant element 300 is not a value of i8"},
		{"tir.func @main() {\n  tir.constant %c: buffer<2xf16> = dense<[1.0, 0.1]> {\n  }\n}", "p.tir:2:48: error: constant element 0.1 is not a value of f16"},
		{"tir.func @main() {\n  tir.call @k(%nope)\n}", "p.tir:2:3: error: use of undefined buffer %nope"},
		{"tir.func @main() {\n  tir.arena 64 (%t: buffer<4xf32> at 0, %t: buffer<4xf32> at 0) {\n  }\n}", "p.tir:2:41: error: redefinition of %t"},
		{"tir.func @main() {\n  tir.arena 64 (%t: buffer<4xf32>) {\n  }\n}", "p.tir:2:34: error:"},
	} {
		_, err := tensorir.ParseString("p.tir", c.src)
		require.Error(t, err, c.src)
		assert.Contains(t, err.Error(), c.want, c.src)
	}
}

// Without the module (Run on one function) a call cannot run.
func TestCallNeedsModule(t *testing.T) {
	m := tensorLevel.MustParse(t, hostModule("64", "128"))
	x := tensorir.NewArray(tensorir.DF32, 3, 5)
	out := tensorir.NewArray(tensorir.DF32, 3, 5)
	err := tensorir.Run(m.Func("main"), map[string]*tensorir.Array{"x": x, "out0": out})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "tir.call @add needs the module; run the function with RunModule")
}
