package tensorir_test

import (
	"math/rand"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// randomArrays makes an array per buffer parameter, filled with random
// values (seeded) exactly representable in its dtype.
func randomArrays(t *testing.T, params []*tir.Param, seed int64) map[string]*tir.Array {
	t.Helper()
	r := rand.New(rand.NewSource(seed))
	arrays := map[string]*tir.Array{}
	for _, p := range params {
		shape, ok := p.Buffer.ConstShape()
		require.True(t, ok)
		a := tir.NewArray(p.Buffer.DType, shape...)
		for i := range a.Floats {
			a.Floats[i] = tir.RoundFloat(p.Buffer.DType, r.Float64()*4-2)
		}
		arrays[p.Buffer.Name] = a
	}
	return arrays
}

// contents are the values of every array.
func contents(arrays map[string]*tir.Array) map[string][]float64 {
	out := map[string][]float64{}
	for name, a := range arrays {
		out[name] = a.Floats
	}
	return out
}

// runOnRandom interprets f on random float inputs (seeded) and returns
// every buffer parameter's contents afterwards.
func runOnRandom(t *testing.T, f *tir.PrimFunc, seed int64) map[string][]float64 {
	t.Helper()
	arrays := randomArrays(t, f.Params, seed)
	require.NoError(t, tir.Run(f, arrays))
	return contents(arrays)
}

// TestCompactBufferAllocation runs every function of the pass's lit test
// before and after compaction on random inputs: the results are
// identical (the pass changes where and how large buffers are, not the
// order of any computation), the result verifies, and a second run
// changes nothing.
func TestCompactBufferAllocation(t *testing.T) {
	src, err := os.ReadFile("../lit/tir/compact-buffer-allocation.tir")
	require.NoError(t, err)
	m, err := tir.Parse("compact-buffer-allocation.tir", src)
	require.NoError(t, err)
	require.NoError(t, tir.Verify(m))
	changed := 0
	for _, f := range m.Funcs {
		c := tir.CompactBufferAllocation(f)
		require.NoError(t, tir.VerifyFunc(c), f.Name)
		before, after := tir.PrintFunc(f, tir.PrintOptions{}), tir.PrintFunc(c, tir.PrintOptions{})
		if before != after {
			changed++
		}
		require.Equal(t, after, tir.PrintFunc(tir.CompactBufferAllocation(c), tir.PrintOptions{}), "not idempotent on @%s", f.Name)
		require.Equal(t, before, tir.PrintFunc(f, tir.PrintOptions{}), "@%s was modified", f.Name)
		for seed := int64(1); seed <= 3; seed++ {
			require.Equal(t, runOnRandom(t, f, seed), runOnRandom(t, c, seed), "@%s:\n%s", f.Name, after)
		}
	}
	require.Equal(t, 4, changed)
}

// TestCompactBufferAllocationSymbolic: a tile whose origin depends on a
// scalar parameter is still compacted (the origin is symbolic, the extent
// constant).
func TestCompactBufferAllocationSymbolic(t *testing.T) {
	f := parseFunc(t, `tir.func @f(%A: buffer<64xf32>, out %B: buffer<8xf32>, %n: index) attributes {tessera.kernel} {
  tir.allocate %t: buffer<64xf32, "local"> {
    tir.for %i = 0 to 8 {
      %t[%n + %i] = %A[%n + %i] * 3.0
    }
    tir.for %i = 0 to 8 {
      %B[%i] = %t[%n + 7 - %i]
    }
  }
}`)
	c := tir.CompactBufferAllocation(f)
	require.NoError(t, tir.VerifyFunc(c))
	out := tir.PrintFunc(c, tir.PrintOptions{})
	require.Contains(t, out, `tir.allocate %t: buffer<8xf32, "local">`)
	require.Contains(t, out, `%t[%i] = %A[%n + %i] * 3.0`)
	for _, n := range []int64{0, 13, 56} {
		run := func(f *tir.PrimFunc) []float64 {
			a := tir.NewArray(tir.DF32, 64)
			for i := range a.Floats {
				a.Floats[i] = float64(i)
			}
			b := tir.NewArray(tir.DF32, 8)
			require.NoError(t, tir.RunArgs(f, tir.Args{Arrays: map[string]*tir.Array{"A": a, "B": b}, Ints: map[string]int64{"n": n}}))
			return b.Floats
		}
		require.Equal(t, run(f), run(c), "n=%d", n)
	}
}

// TestCompactBufferAllocationKeepsCallArguments: a buffer a tir.call
// passes keeps its shape and place (the callee expects all of it), even
// when the caller itself touches one element.
func TestCompactBufferAllocationKeepsCallArguments(t *testing.T) {
	m, err := tir.ParseString("call.tir", `tir.func @k(%X: buffer<8xf32>, out %Y: buffer<8xf32>) attributes {tessera.kernel} {
  tir.for %i = 0 to 8 {
    %Y[%i] = %X[%i] + 1.0
  }
}

tir.func @main(%A: buffer<8xf32>, out %B: buffer<8xf32>) {
  tir.allocate %t: buffer<8xf32> {
    %t[0] = %A[0]
    tir.call @k(%t, %B)
  }
}`)
	require.NoError(t, err)
	require.NoError(t, tir.Verify(m))
	main := m.Func("main")
	require.Equal(t, tir.PrintFunc(main, tir.PrintOptions{}), tir.PrintFunc(tir.CompactBufferAllocation(main), tir.PrintOptions{}))
}
