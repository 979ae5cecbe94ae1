package tensorir_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// reverseKernel reverses each 32-element half of A through a shared tile:
// a cooperative fetch (a threadIdx loop nested in the block's, TVM's
// merged binding), then each thread reads another thread's element. The
// statements between are spliced in: the barriers, a register kept across
// one (the fetch in two steps through a local buffer), or a loop around
// them.
func reverseKernel(fetch, between string) string {
	return fmt.Sprintf(`tir.func @rev(%%A: buffer<64xf32>, out %%B: buffer<64xf32>) {
  tir.for %%bx = 0 to 2 thread_binding("blockIdx.x") {
    tir.for %%tx = 0 to 32 thread_binding("threadIdx.x") {
      tir.allocate %%S: buffer<32xf32, "shared"> {
        tir.allocate %%R: buffer<1xf32, "local"> {
          %s
          %s
          %%B[%%bx * 32 + %%tx] = %%S[31 - %%tx] * 2.0
        }
      }
    }
  }
}
`, fetch, between)
}

const directFetch = `tir.for %c = 0 to 32 thread_binding("threadIdx.x") {
            %S[%c] = %A[%bx * 32 + %c]
          }`

// registerFetch loads into a thread's register, then (after a barrier)
// stores it to the tile: correct only when each thread keeps its own R.
const registerFetch = `tir.for %c = 0 to 32 thread_binding("threadIdx.x") {
            %R[0] = %A[%bx * 32 + %c]
          }
          tir.barrier
          tir.for %c = 0 to 32 thread_binding("threadIdx.x") {
            %S[%c] = %R[0]
          }`

func runReverse(t *testing.T, src string) ([]float32, error) {
	f := parseFunc(t, src)
	a := make([]float32, 64)
	for i := range a {
		a[i] = float32(i)
	}
	b := tir.NewArray(tir.DF32, 64)
	err := tir.Run(f, map[string]*tir.Array{"A": tir.ArrayFromFloat32(a, 64), "B": b})
	return b.Float32s(), err
}

// TestInterpLockstep: a kernel with barriers runs its threadIdx loop as
// threads in lockstep (GPU semantics): with the barrier after the fetch it
// reverses; without it (the barrier elsewhere) threads read the tile
// before others have written it and the result is wrong, which the serial
// semantics of a kernel without barriers would hide; a register kept
// across a barrier is per thread; a barrier under a non-uniform condition
// is an error naming it.
func TestInterpLockstep(t *testing.T) {
	want := make([]float32, 64)
	for i := range want {
		want[i] = float32(2 * (i/32*32 + 31 - i%32))
	}
	for _, c := range []struct {
		name, fetch, between string
		ok                   bool
	}{
		{"no barriers (serial semantics)", directFetch, "", true},
		{"barrier after the fetch", directFetch, "tir.barrier", true},
		{"barrier before the fetch", "tir.barrier\n" + directFetch, "", false},
		{"register fetch", registerFetch, "tir.barrier", true},
		{"register fetch, barrier missing", registerFetch, "", false},
		{"uniform loop", "tir.for %it = 0 to 3 {\n" + directFetch + "\ntir.barrier\n}", "", true},
	} {
		got, err := runReverse(t, reverseKernel(c.fetch, c.between))
		require.NoError(t, err, c.name)
		if c.ok {
			assert.Equal(t, want, got, c.name)
		} else {
			assert.NotEqual(t, want, got, c.name)
		}
	}
	_, err := runReverse(t, reverseKernel(directFetch, "tir.if %tx < 16 {\ntir.barrier\n}"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "condition around a barrier differs between threads")

	big := strings.Replace(reverseKernel(directFetch, "tir.barrier"), "tir.for %tx = 0 to 32", "tir.for %tx = 0 to 4096", 1)
	_, err = runReverse(t, big)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a thread block has at most 1024 threads")
}
