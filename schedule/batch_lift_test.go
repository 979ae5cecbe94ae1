package schedule

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// TestRepresentativeDefault schedules every symbolic workload with the
// CPU default rules at a representative size of 4, and of 1, and checks
// the result against the unscheduled kernel at every binding (0, 1, 5, 8,
// 13): the kernels over one symbol that is a batch (separable) are
// lifted, chunks of 4 rows then single rows (at 1: single rows only); the
// gemm over two symbols is scheduled by the generalized replay of its
// representative trace where it replays.
func TestRepresentativeDefault(t *testing.T) {
	rules := CPURules{VectorBits: 512, Cores: 2}
	for name, lifted := range map[string]bool{"sym_chain": true, "sym_conv": true, "sym_pool": true, "sym_softmax": true, "sym_gemm": false} {
		for _, rep := range []int64{4, 1} {
			t.Run(fmt.Sprintf("%s/%d", name, rep), func(t *testing.T) {
				c := newSymbolicCase(t, name)
				f := parseFunc(t, symbolicWorkloads[name])
				sizes := map[string]int64{}
				for _, p := range f.Params {
					if p.Var != nil {
						sizes[p.Var.Name] = rep
					}
				}
				g, err := RepresentativeDefault(rules, f, sizes)
				if !lifted && err != nil {
					// A trace made at a degenerate size may not replay on
					// the symbolic kernel (the pipeline then schedules it
					// without a representative size).
					assert.Contains(t, err.Error(), "replay: ")
					return
				}
				require.NoError(t, err)
				require.NoError(t, tir.VerifyFunc(g), printed(g))
				text := printed(g)
				chunked := strings.Contains(text, "tir.for %chunk = 0 to floordiv(") && strings.Contains(text, "tir.for %row = floordiv(")
				rows := strings.Contains(text, "tir.for %row = 0 to %")
				assert.Equal(t, lifted, rep > 1 && chunked || rep == 1 && rows, text)
				for k, a := range c.args {
					sameOutputs(t, c.wants[k], interpretAt(t, g, 3, a), fmt.Sprintf("at %v:\n%s", a, text))
				}
			})
		}
	}
}

// TestSeparableSymbol: what keeps a kernel from being lifted is named.
func TestSeparableSymbol(t *testing.T) {
	for _, c := range []struct{ name, src, why string }{
		{"two symbols", symGemmSrc, "more than one symbolic dimension"},
		{"row indexes a static buffer", replaceFirst(symChainSrc, "%A[%vi, %vj] + %B[%vj]", "%A[%vi, %vj] + %B[%vi]"),
			`block "add" uses its row variable %vi other than as a batched buffer's row`},
		{"row not leading", `tir.func @k(%m: index, %A: buffer<4x(%m)xf32>, out %B: buffer<4x(%m)xf32>) attributes {tessera.kernel} {
  tir.for %i = 0 to 4 {
    tir.for %j = 0 to %m {
      tir.block "copy"(%vi = spatial(0:4, %i), %vj = spatial(0:%m, %j)) reads(%A[%vi, %vj]) writes(%B[%vi, %vj]) {
        %B[%vi, %vj] = %A[%vi, %vj]
      }
    }
  }
}
`, "buffer %A is not %m rows of a constant shape"},
		{"rows shifted", `tir.func @k(%m: index, %A: buffer<(%m)x4xf32>, out %B: buffer<(%m)x4xf32>) attributes {tessera.kernel} {
  tir.for %i = 0 to %m {
    tir.for %j = 0 to 4 {
      tir.block "rev"(%vi = spatial(0:%m, %i), %vj = spatial(0:4, %j)) reads(%A[0:%m, %vj]) writes(%B[%vi, %vj]) {
        %B[%vi, %vj] = %A[%m - 1 - %vi, %vj]
      }
    }
  }
}
`, `block "rev" indexes the rows of %A with %m - 1 - %vi, not an iteration variable`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, why := separableSymbol(parseFunc(t, c.src))
			assert.Equal(t, c.why, why)
		})
	}
	sym, why := separableSymbol(parseFunc(t, symChainSrc))
	require.Equal(t, "", why)
	assert.Equal(t, "m", sym.Name)
}

// symDenseReluSrc is a dense layer with a bias-and-relu epilogue over two
// symbolic row dimensions %b and %s ([b, s, 24] × [24, 40]): not
// batch-separable, so its schedule is the representative one generalized.
const symDenseReluSrc = `tir.func @dense_relu(%b: index, %s: index, %X: buffer<(%b)x(%s)x24xf32>, %W: buffer<24x40xf32>, %B: buffer<40xf32>, out %Y: buffer<(%b)x(%s)x40xf32>) attributes {tessera.kernel} {
  tir.allocate %T: buffer<(%b)x(%s)x40xf32, "local"> {
    tir.for %i = 0 to %b {
      tir.for %j = 0 to %s {
        tir.for %n = 0 to 40 {
          tir.for %k = 0 to 24 {
            tir.block "dot"(%vi = spatial(0:%b, %i), %vj = spatial(0:%s, %j), %vn = spatial(0:40, %n), %vk = reduce(0:24, %k)) reads(%X[%vi, %vj, %vk], %W[%vk, %vn]) writes(%T[%vi, %vj, %vn]) {
              tir.init {
                %T[%vi, %vj, %vn] = 0.0
              }
              %T[%vi, %vj, %vn] = %T[%vi, %vj, %vn] + %X[%vi, %vj, %vk] * %W[%vk, %vn]
            }
          }
        }
      }
    }
    tir.for %i = 0 to %b {
      tir.for %j = 0 to %s {
        tir.for %n = 0 to 40 {
          tir.block "relu"(%vi = spatial(0:%b, %i), %vj = spatial(0:%s, %j), %vn = spatial(0:40, %n)) reads(%T[%vi, %vj, %vn], %B[%vn]) writes(%Y[%vi, %vj, %vn]) {
            %Y[%vi, %vj, %vn] = max(%T[%vi, %vj, %vn] + %B[%vn], 0.0)
          }
        }
      }
    }
  }
}
`

// TestRepresentativeDefaultTwoSymbols: the default rules' schedule of a
// contraction with an epilogue over two symbolic row dimensions, made at
// the representative sizes (8, 8), carries over to the symbolic kernel
// (the tiles' tail guards reach the write-back block that
// reverse_compute_inline takes, and a compute_at region loop of one
// iteration at (8, 8) is not one at every size), and the result computes
// the kernel at sizes that the tiles do not divide, and at 0.
func TestRepresentativeDefaultTwoSymbols(t *testing.T) {
	rules := CPURules{VectorBits: 512, Cores: 2, MaxLanes: 64}
	f := parseFunc(t, symDenseReluSrc)
	g, err := RepresentativeDefault(rules, f, nil)
	require.NoError(t, err)
	text := printed(g)
	assert.Contains(t, text, "parallel", "the representative tiling, not the serial fallback")
	for _, a := range []map[string]int64{{"b": 1, "s": 1}, {"b": 3, "s": 5}, {"b": 8, "s": 8}, {"b": 2, "s": 13}, {"b": 0, "s": 4}} {
		sameOutputs(t, interpretAt(t, f, 3, a), interpretAt(t, g, 3, a), fmt.Sprintf("at %v:\n%s", a, text))
	}
}
