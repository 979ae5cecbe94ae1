package tensorir_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/tensorir"
)

// symbolicHost is a host function over a symbolic row count %n: a kernel
// taking %n as its scalar parameter is called twice through an arena
// whose size and offsets are expressions of %n.
const symbolicHost = `tir.func @scale(%n: index, %A: buffer<(%n)x4xf32>, out %B: buffer<(%n)x4xf32>) attributes {tessera.kernel} {
  tir.for %i = 0 to %n {
    tir.for %j = 0 to 4 {
      tir.block "scale"(%vi = spatial(0:%n, %i), %vj = spatial(0:4, %j)) reads(%A[%vi, %vj]) writes(%B[%vi, %vj]) {
        %B[%vi, %vj] = %A[%vi, %vj] * 2.0 + 1.0
      }
    }
  }
}

tir.func @main(%n: index, %x: buffer<(%n)x4xf32>, out %out0: buffer<(%n)x4xf32>) attributes {tessera.host} {
  tir.arena (%n * 64) (%t0: buffer<(%n)x4xf32> at 0) {
    tir.call @scale(%n, %x, %t0)
    tir.call @scale(%n, %t0, %out0)
  }
}
`

// TestSymbolicHostRoundTripAndRun: the text of a symbolic host function
// round-trips, and one module runs at several sizes (including 0), the
// arena sized when it runs.
func TestSymbolicHostRoundTripAndRun(t *testing.T) {
	m := tensorLevel.MustParse(t, symbolicHost)
	assert.Equal(t, symbolicHost, tensorir.Print(m))
	for _, n := range []int64{0, 1, 3, 7} {
		x := tensorir.NewArray(tensorir.DF32, n, 4)
		for i := range x.Floats {
			x.Floats[i] = float64(i) - 3
		}
		out := tensorir.NewArray(tensorir.DF32, n, 4)
		args := tensorir.Args{Arrays: map[string]*tensorir.Array{"x": x, "out0": out}, Ints: map[string]int64{"n": n}}
		require.NoError(t, tensorir.RunModule(m, "main", args), "n = %d", n)
		for i, g := range out.Floats {
			assert.Equal(t, (x.Floats[i]*2+1)*2+1, g, "n = %d, element %d", n, i)
		}
	}
}

// TestSymbolicArenaTooSmall: a symbolic arena whose buffer does not fit
// is an error when it runs, naming the buffer.
func TestSymbolicArenaTooSmall(t *testing.T) {
	src := `tir.func @main(%n: index, out %o: buffer<(%n)xf32>) attributes {tessera.host} {
  tir.arena (%n * 2) (%t0: buffer<(%n)xf32> at 0) {
  }
}
`
	m := tensorLevel.MustParse(t, src)
	o := tensorir.NewArray(tensorir.DF32, 3)
	err := tensorir.RunModule(m, "main", tensorir.Args{Arrays: map[string]*tensorir.Array{"o": o}, Ints: map[string]int64{"n": 3}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "tir.arena: buffer %t0 of shape [3] at offset 0 does not lie in the arena's 6 bytes")
}

// TestSpecialize binds the kernel's %n: the parameter goes, its buffers
// get constant shapes, and the kernel computes what it did at that size.
func TestSpecialize(t *testing.T) {
	m := tensorLevel.MustParse(t, symbolicHost)
	k := m.Func("scale")
	g := tensorir.Specialize(k, map[string]int64{"n": 3})
	require.NoError(t, tensorir.VerifyFunc(g))
	assert.Equal(t, `tir.func @scale(%A: buffer<3x4xf32>, out %B: buffer<3x4xf32>) attributes {tessera.kernel} {
  tir.for %i = 0 to 3 {
    tir.for %j = 0 to 4 {
      tir.block "scale"(%vi = spatial(0:3, %i), %vj = spatial(0:4, %j)) reads(%A[%vi, %vj]) writes(%B[%vi, %vj]) {
        %B[%vi, %vj] = %A[%vi, %vj] * 2.0 + 1.0
      }
    }
  }
}
`, tensorir.PrintFunc(g, tensorir.PrintOptions{}))
	assert.Contains(t, tensorir.PrintFunc(k, tensorir.PrintOptions{}), "%n: index", "the original is unchanged")
	a := tensorir.NewArray(tensorir.DF32, 3, 4)
	for i := range a.Floats {
		a.Floats[i] = float64(i)
	}
	b := tensorir.NewArray(tensorir.DF32, 3, 4)
	require.NoError(t, tensorir.Run(g, map[string]*tensorir.Array{"A": a, "B": b}))
	for i, v := range b.Floats {
		assert.Equal(t, float64(i)*2+1, v)
	}
	assert.Same(t, k, tensorir.Specialize(k, map[string]int64{"m": 3}), "nothing to bind")
}

// TestFreshCopy: a copy of a body beside the body itself verifies (new
// variables, buffers and block names).
func TestFreshCopy(t *testing.T) {
	k := tensorLevel.MustParse(t, symbolicHost).Func("scale")
	k.Body = tensorir.Seq(k.Body, tensorir.FreshCopy(k.Body, "_again"))
	require.NoError(t, tensorir.VerifyFunc(k))
	assert.Contains(t, tensorir.PrintFunc(k, tensorir.PrintOptions{}), `tir.block "scale_again"`)
}
