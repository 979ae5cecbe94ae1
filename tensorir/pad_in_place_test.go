package tensorir_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/tensorir"
)

// padKernels: a producer (@scale), a pad kernel marked as lowering marks
// them (low padding [1, 0], high [1, 1], value 0.5) and a consumer of the
// padded tensor and of another 2×3 tensor (@sum2).
const padKernels = `tir.func @scale(%A: buffer<2x3xf32>, out %B: buffer<2x3xf32>) attributes {tessera.kernel} {
  tir.for %i = 0 to 2 {
    tir.for %j = 0 to 3 {
      tir.block "scale"(%vi = spatial(0:2, %i), %vj = spatial(0:3, %j)) reads(%A[%vi, %vj]) writes(%B[%vi, %vj]) {
        %B[%vi, %vj] = %A[%vi, %vj] * 2.0
      }
    }
  }
}

tir.func @pad(%in0: buffer<2x3xf32>, out %out0: buffer<4x4xf32>) attributes {tessera.kernel, tessera.pad_low = [1, 0], tessera.pad_value = 0.5} {
  tir.for %i = 0 to 4 {
    tir.for %j = 0 to 4 {
      tir.block "pad"(%vi = spatial(0:4, %i), %vj = spatial(0:4, %j)) reads(%in0[0:2, 0:3]) writes(%out0[%vi, %vj]) {
        %out0[%vi, %vj] = select(%vi - 1 >= 0 && %vi - 1 < 2 && %vj < 3, %in0[min(max(%vi - 1, 0), 1), min(%vj, 2)], 0.5)
      }
    }
  }
}

tir.func @sum2(%P: buffer<4x4xf32>, %A: buffer<2x3xf32>, out %C: buffer<4x4xf32>) attributes {tessera.kernel} {
  tir.for %i = 0 to 4 {
    tir.for %j = 0 to 4 {
      tir.block "sum2"(%vi = spatial(0:4, %i), %vj = spatial(0:4, %j)) reads(%P[%vi, %vj], %A[0:2, 0:3]) writes(%C[%vi, %vj]) {
        %C[%vi, %vj] = %P[%vi, %vj] + %A[min(%vi, 1), min(%vj, 2)] * 10.0
      }
    }
  }
}
`

// padHost: the producer and the consumer are each called twice, once
// on the padded tensor's input t0 (so both are cloned), and t0 has a
// reader besides the pad kernel.
const padHost = `
tir.func @main(%x: buffer<2x3xf32>, out %out0: buffer<4x4xf32>, out %out1: buffer<4x4xf32>) attributes {tessera.host} {
  tir.arena 256 (%t0: buffer<2x3xf32> at 0, %t1: buffer<4x4xf32> at 64, %t2: buffer<2x3xf32> at 128) {
    tir.call @scale(%x, %t0)
    tir.call @scale(%x, %t2)
    tir.call @pad(%t0, %t1)
    tir.call @sum2(%t1, %t2, %out0)
    tir.call @sum2(%t1, %t0, %out1)
  }
}
`

func runPadHost(t *testing.T, m *tensorir.Module) ([]float64, []float64) {
	t.Helper()
	x := tensorir.NewArray(tensorir.DF32, 2, 3)
	for i := range x.Floats {
		x.Floats[i] = float64(i) - 2.5
	}
	o0, o1 := tensorir.NewArray(tensorir.DF32, 4, 4), tensorir.NewArray(tensorir.DF32, 4, 4)
	require.NoError(t, tensorir.RunModule(m, "main", tensorir.Args{Arrays: map[string]*tensorir.Array{"x": x, "out0": o0, "out1": o1}}))
	return o0.Floats, o1.Floats
}

func TestPadInPlace(t *testing.T) {
	m := tensorLevel.MustParse(t, padKernels+padHost)
	want0, want1 := runPadHost(t, m)
	// The reference values: the border holds 0.5.
	assert.Equal(t, 0.5+(-5)*10, want0[0])

	require.NoError(t, tensorir.PadInPlace(m))
	require.NoError(t, tensorir.Verify(m))
	got0, got1 := runPadHost(t, m)
	assert.Equal(t, want0, got0)
	assert.Equal(t, want1, got1)

	text := tensorir.Print(m)
	// t0 is gone from the arena; the producer's and the second
	// consumer's clones take the padded buffer, shifted by the low padding.
	assert.Contains(t, text, "tir.arena 128 (%t1: buffer<4x4xf32> at 0, %t2: buffer<2x3xf32> at 64)")
	assert.Contains(t, text, "tir.call @scale_1(%x, %t1)\n    tir.call @scale(%x, %t2)\n    tir.call @pad(%t1)\n    tir.call @sum2(%t1, %t2, %out0)\n    tir.call @sum2_1(%t1, %t1, %out1)")
	assert.Contains(t, text, "tir.func @scale_1(%A: buffer<2x3xf32>, out %B: buffer<4x4xf32>)")
	assert.Contains(t, text, "%B[%vi + 1, %vj] = %A[%vi, %vj] * 2.0")
	assert.Contains(t, text, "%A[min(%vi, 1) + 1, min(%vj, 2)]")
	// The pad kernel fills the border only: rows 0 and 3, then column 3
	// of rows 1 and 2.
	pad := m.Func("pad")
	require.NotNil(t, pad)
	assert.NotContains(t, pad.Attrs, tensorir.AttrPadLow)
	padText := tensorir.Print(&tensorir.Module{Funcs: []*tensorir.PrimFunc{pad}})
	assert.Equal(t, 3, strings.Count(padText, "tir.block"), padText)
	assert.NotContains(t, padText, "%in0")

	// Idempotent: a second run changes nothing.
	require.NoError(t, tensorir.PadInPlace(m))
	assert.Equal(t, text, tensorir.Print(m))
}

// TestPadInPlaceLeaves: pads whose input is not an arena tensor with one
// out-parameter writer stay as they are.
func TestPadInPlaceLeaves(t *testing.T) {
	for name, host := range map[string]string{
		"host parameter": `
tir.func @main(%x: buffer<2x3xf32>, out %out0: buffer<4x4xf32>) attributes {tessera.host} {
  tir.arena 64 (%t1: buffer<4x4xf32> at 0) {
    tir.call @pad(%x, %t1)
    tir.call @sum2(%t1, %x, %out0)
  }
}
`,
		"two writers": `
tir.func @main(%x: buffer<2x3xf32>, out %out0: buffer<4x4xf32>) attributes {tessera.host} {
  tir.arena 256 (%t0: buffer<2x3xf32> at 0, %t1: buffer<4x4xf32> at 64) {
    tir.call @scale(%x, %t0)
    tir.call @scale(%t0, %t0)
    tir.call @pad(%t0, %t1)
    tir.call @sum2(%t1, %x, %out0)
  }
}
`,
		"written after the pad": `
tir.func @main(%x: buffer<2x3xf32>, out %out0: buffer<4x4xf32>) attributes {tessera.host} {
  tir.arena 256 (%t0: buffer<2x3xf32> at 0, %t1: buffer<4x4xf32> at 64) {
    tir.call @pad(%t0, %t1)
    tir.call @scale(%x, %t0)
    tir.call @sum2(%t1, %t0, %out0)
  }
}
`,
	} {
		t.Run(name, func(t *testing.T) {
			m := tensorLevel.MustParse(t, padKernels+host)
			before := tensorir.Print(m)
			require.NoError(t, tensorir.PadInPlace(m))
			assert.Equal(t, before, tensorir.Print(m))
		})
	}
}
