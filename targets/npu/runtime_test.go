package npu

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// onlyNPUTIR calls dense.tir's NPU kernel twice and nothing on the host.
const onlyNPUTIR = `
tir.func @main(%x: buffer<5x1x4x5xf32>, %w: buffer<37x20xf32>, %b: buffer<37xf32>, out %y: buffer<5x37xf32>) attributes {tessera.host, global_symbol = "main"} {
  tir.call @dense(%x, %w, %b, %y)
  tir.call @dense(%x, %w, %b, %y)
}
`

// A plan of NPU kernels only takes the same simulated time on every run:
// BenchEach reports one repeat, the last Call's time, or runs once when
// nothing has run. A plan with host kernels is run minRepeats times.
func TestBenchEachSimulatesOnce(t *testing.T) {
	e, in, out := denseEntry(t, onlyNPUTIR)
	tm, err := e.BenchEach(in, out, 1, 5, 0, nil)
	require.NoError(t, err)
	require.Len(t, tm.Seconds, 1)
	require.NotNil(t, e.Report())
	want := e.Report().Seconds
	require.Greater(t, want, 0.0)
	require.Equal(t, []float64{want}, tm.Seconds)
	require.Equal(t, want, tm.Median)
	require.NoError(t, e.Call(in, out))
	tm, err = e.BenchEach(in, out, 1, 5, 0, nil)
	require.NoError(t, err)
	require.Equal(t, []float64{want}, tm.Seconds, "the same program, the same cycles")

	h, in, out := profiledEntry(t)
	calls := 0
	tm, err = h.BenchEach(in, out, 1, 4, 0, func() { calls++ })
	require.NoError(t, err)
	require.Len(t, tm.Seconds, 4)
	require.Equal(t, 4, calls)
}
