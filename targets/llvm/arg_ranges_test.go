package llvm

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// rangesText: @narrow clamps an i32 input into [0, 100] as ui8 through a
// local copy; @use reads it with a constant weight. The host body is
// substituted for HOST.
const rangesText = `
tir.func @narrow(%in0: buffer<8xi32>, out %out0: buffer<8xui8>) {
  tir.allocate %c: buffer<8xi32, "local"> {
    tir.for %i = 0 to 8 {
      %c[%i] = max(%in0[%i], 0 : i32)
    }
    tir.for %i = 0 to 8 {
      %out0[%i] = cast<ui8>(min(%c[%i], 100 : i32))
    }
  }
}
tir.func @use(%in0: buffer<8xui8>, %in1: buffer<8xi8>, out %out0: buffer<8xi32>) {
  tir.for %i = 0 to 8 {
    %out0[%i] = cast<i32>(%in0[%i]) * cast<i32>(%in1[%i])
  }
}
tir.func @main(%x: buffer<8xi32>, out %y: buffer<8xi32>) attributes {global_symbol = "main", tessera.host} {
  tir.constant %w: buffer<8xi8> = dense<[-3, 1, 2, 3, 4, 5, 6, 7]> {
    tir.arena 16 (%t0: buffer<8xui8> at 0, %t1: buffer<8xui8> at 8) {
HOST
    }
  }
}
`

// rangesOf runs argRanges on rangesText with host as @main's calls and
// returns the ranges of each kernel's parameters by "kernel.param".
func rangesOf(t *testing.T, host string) map[string]tir.ValueRange {
	mod := parseModule(t, strings.Replace(rangesText, "HOST", host, 1))
	out := map[string]tir.ValueRange{}
	for f, ps := range argRanges(mod, aliasedCallees(mod)) {
		for b, r := range ps {
			out[f.Name+"."+b.Name] = r
		}
	}
	return out
}

// TestArgRanges: a kernel's input holds what the kernel called before
// stores into it (a clamp through a local buffer), a constant its
// values, the host's own input its dtype's range; the union over calls.
func TestArgRanges(t *testing.T) {
	r := rangesOf(t, `      tir.call @narrow(%x, %t0)
      tir.call @use(%t0, %w, %y)`)
	assert.Equal(t, tir.ValueRange{Lo: 0, Hi: 100}, r["use.in0"])
	assert.Equal(t, tir.ValueRange{Lo: -3, Hi: 7}, r["use.in1"])
	assert.Equal(t, tir.ValueRange{Lo: -1 << 31, Hi: 1<<31 - 1}, r["narrow.in0"])
	assert.Equal(t, tir.ValueRange{Lo: 0, Hi: 255}, r["narrow.out0"], "on entry, before it is written")

	// A second call on a buffer nothing wrote: the union is ui8's range.
	r = rangesOf(t, `      tir.call @narrow(%x, %t0)
      tir.call @use(%t0, %w, %y)
      tir.call @use(%t1, %w, %y)`)
	assert.Equal(t, tir.ValueRange{Lo: 0, Hi: 255}, r["use.in0"])

	// Read before it is written: the buffer's dtype range.
	r = rangesOf(t, `      tir.call @use(%t0, %w, %y)
      tir.call @narrow(%x, %t0)`)
	assert.Equal(t, tir.ValueRange{Lo: 0, Hi: 255}, r["use.in0"])
}

// TestArgRangesRefused: no ranges for a kernel that is exported, called
// with aliased buffers, or called in a host loop.
func TestArgRangesRefused(t *testing.T) {
	calls := `      tir.call @narrow(%x, %t0)
      tir.call @use(%t0, %w, %y)`
	exported := strings.Replace(rangesText, "tir.func @use(%in0: buffer<8xui8>, %in1: buffer<8xi8>, out %out0: buffer<8xi32>) {",
		`tir.func @use(%in0: buffer<8xui8>, %in1: buffer<8xi8>, out %out0: buffer<8xi32>) attributes {global_symbol = "use"} {`, 1)
	mod := parseModule(t, strings.Replace(exported, "HOST", calls, 1))
	for f := range argRanges(mod, aliasedCallees(mod)) {
		assert.NotEqual(t, "use", f.Name, "exported")
	}
	for name, host := range map[string]string{
		"looped": "      tir.for %n = 0 to 2 {\n" + calls + "\n      }",
		"aliased": `      tir.call @narrow(%x, %t0)
      tir.call @use(%t0, %w, %y)
      tir.call @narrow(%x, %t0)
      tir.call @use(%t0, %w, %t0)`,
	} {
		_, ok := rangesOf(t, host)["use.in0"]
		require.False(t, ok, name)
	}
}
