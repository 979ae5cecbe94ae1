package schedule

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// A TE-style kernel: pad → exp → reduction → add → relu chain, with
// intermediates of odd sizes.
const chain = `tir.func @k(%A: buffer<5x7xf32>, %B: buffer<7xf32>, out %C: buffer<5xf32>, out %D: buffer<5x9xf32>) attributes {tessera.kernel} {
  tir.allocate %P: buffer<5x9xf32, "local"> {
    tir.allocate %E: buffer<5x9xf32, "local"> {
      tir.allocate %S: buffer<5xf32, "local"> {
        tir.allocate %T: buffer<5xf32, "local"> {
          tir.for %i = 0 to 5 {
            tir.for %j = 0 to 9 {
              tir.block "pad"(%vi = spatial(0:5, %i), %vj = spatial(0:9, %j)) reads(%A[0:5, 0:7]) writes(%P[%vi, %vj]) {
                %P[%vi, %vj] = select(%vj >= 1 && %vj < 8, %A[%vi, min(max(%vj - 1, 0), 6)], 0.0)
              }
            }
          }
          tir.for %i = 0 to 5 {
            tir.for %j = 0 to 9 {
              tir.block "exp"(%vi = spatial(0:5, %i), %vj = spatial(0:9, %j)) reads(%P[0:5, 0:9]) writes(%E[%vi, %vj]) {
                %E[%vi, %vj] = exp(%P[%vi, %vj])
              }
            }
          }
          tir.for %i = 0 to 5 {
            tir.for %k = 0 to 9 {
              tir.block "sum"(%vi = spatial(0:5, %i), %vk = reduce(0:9, %k)) reads(%S[0:5], %E[0:5, 0:9]) writes(%S[%vi]) {
                tir.init {
                  %S[%vi] = 0.0
                }
                %S[%vi] = %S[%vi] + %E[%vi, %vk]
              }
            }
          }
          tir.for %i = 0 to 5 {
            tir.block "add"(%vi = spatial(0:5, %i)) reads(%S[0:5], %B[0:7]) writes(%T[%vi]) {
              %T[%vi] = %S[%vi] + %B[%vi + 2]
            }
          }
          tir.for %i = 0 to 5 {
            tir.block "relu"(%vi = spatial(0:5, %i)) reads(%T[0:5]) writes(%C[%vi]) {
              %C[%vi] = max(%T[%vi], 0.0) + %T[%vi] * 0.5
            }
          }
          tir.for %i = 0 to 5 {
            tir.for %j = 0 to 9 {
              tir.block "copy"(%vi = spatial(0:5, %i), %vj = spatial(0:9, %j)) reads(%E[0:5, 0:9]) writes(%D[%vi, %vj]) {
                %D[%vi, %vj] = %E[%vi, %vj]
              }
            }
          }
        }
      }
    }
  }
}
`

func parseKernel(t *testing.T, src string) *tir.PrimFunc {
	t.Helper()
	m, err := tir.ParseString("k.tir", src)
	require.NoError(t, err)
	require.NoError(t, tir.Verify(m))
	return m.Funcs[0]
}

// run interprets f on fixed random inputs and returns the outputs.
func run(t *testing.T, f *tir.PrimFunc) map[string][]float64 {
	t.Helper()
	rng := rand.New(rand.NewSource(5))
	arrays := map[string]*tir.Array{}
	outs := map[string][]float64{}
	for _, p := range f.Params {
		shape, ok := p.Buffer.ConstShape()
		require.True(t, ok)
		a := tir.NewArray(p.Buffer.DType, shape...)
		for i := range a.Floats {
			a.Floats[i] = tir.RoundFloat(p.Buffer.DType, rng.Float64()*4-2)
		}
		arrays[p.Buffer.Name] = a
	}
	require.NoError(t, tir.Run(f, arrays))
	for _, p := range f.Params {
		if p.Role == tir.RoleOut {
			outs[p.Buffer.Name] = arrays[p.Buffer.Name].Floats
		}
	}
	return outs
}

func TestComputeInlineMatchesInterpreter(t *testing.T) {
	want := run(t, parseKernel(t, chain))
	for _, block := range []string{"pad", "exp", "add"} {
		f := parseKernel(t, chain)
		require.NoError(t, ComputeInline(f, block))
		require.NoError(t, tir.VerifyFunc(f), tir.PrintFunc(f, tir.PrintOptions{}))
		text := tir.PrintFunc(f, tir.PrintOptions{})
		assert.NotContains(t, text, `tir.block "`+block+`"`)
		assert.Equal(t, want, run(t, f), "after inlining %s:\n%s", block, text)
	}
}

func TestInlineElementwise(t *testing.T) {
	f := parseKernel(t, chain)
	want := run(t, f)
	done, err := InlineElementwiseBlocks(f)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"pad", "exp", "add"}, done)
	require.NoError(t, tir.VerifyFunc(f))
	assert.Equal(t, want, run(t, f))
	text := tir.PrintFunc(f, tir.PrintOptions{})
	// The inlined buffers' allocations are gone; the reduction's stays.
	assert.NotContains(t, text, "tir.allocate %P")
	assert.NotContains(t, text, "tir.allocate %E")
	assert.NotContains(t, text, "tir.allocate %T")
	assert.Contains(t, text, "tir.allocate %S")
	// The consumers read the producers' inputs now.
	assert.Contains(t, text, `%C[%vi] = max(%S[%vi] + %B[%vi + 2], 0.0) + (%S[%vi] + %B[%vi + 2]) * 0.5`)
	assert.Contains(t, text, `reads(%S[0:5], %A[0:5, 0:7])`)
	// Nothing is left to inline.
	done, err = InlineElementwiseBlocks(f)
	require.NoError(t, err)
	assert.Empty(t, done)
}

func TestComputeInlineRefusals(t *testing.T) {
	for _, c := range []struct{ block, want string }{
		{"sum", "compute_inline: block 'sum' is a reduction (reduce iteration variable %vk); only spatial blocks can be inlined"},
		{"relu", "compute_inline: block 'relu' writes the output buffer %C (a parameter of @k)"},
		{"nope", "compute_inline: block 'nope' not found in @k"},
	} {
		f := parseKernel(t, chain)
		before := tir.PrintFunc(f, tir.PrintOptions{})
		err := ComputeInline(f, c.block)
		require.Error(t, err)
		assert.Equal(t, c.want, err.Error())
		assert.Equal(t, before, tir.PrintFunc(f, tir.PrintOptions{}), "a refused primitive changes nothing")
	}
	other := map[string]string{
		"transposed store": `tir.func @k(%A: buffer<3x4xf32>, out %C: buffer<4x3xf32>) {
  tir.allocate %T: buffer<4x3xf32, "local"> {
    tir.for %i = 0 to 3 {
      tir.for %j = 0 to 4 {
        tir.block "t"(%vi = spatial(0:3, %i), %vj = spatial(0:4, %j)) writes(%T[%vj, %vi]) {
          %T[%vj, %vi] = %A[%vi, %vj]
        }
      }
    }
    tir.for %i = 0 to 4 {
      tir.for %j = 0 to 3 {
        tir.block "c"(%vi = spatial(0:4, %i), %vj = spatial(0:3, %j)) {
          %C[%vi, %vj] = %T[%vi, %vj]
        }
      }
    }
  }
}`,
		"two stores": `tir.func @k(%A: buffer<3xf32>, out %C: buffer<3xf32>) {
  tir.allocate %T: buffer<3xf32, "local"> {
    tir.for %i = 0 to 3 {
      tir.block "t"(%vi = spatial(0:3, %i)) {
        %T[%vi] = %A[%vi]
        %C[%vi] = %A[%vi]
      }
    }
  }
}`,
		"partial": `tir.func @k(%A: buffer<3xf32>, out %C: buffer<3xf32>) {
  tir.allocate %T: buffer<3xf32, "local"> {
    tir.for %i = 0 to 2 {
      tir.block "t"(%vi = spatial(0:2, %i)) {
        %T[%vi] = %A[%vi]
      }
    }
  }
}`,
	}
	other["input overwritten later"] = `tir.func @k(inout %A: buffer<3xf32>, out %C: buffer<3xf32>) {
  tir.allocate %T: buffer<3xf32, "local"> {
    tir.for %i = 0 to 3 {
      tir.block "t"(%vi = spatial(0:3, %i)) {
        %T[%vi] = %A[%vi] + 1.0
      }
    }
    tir.for %i = 0 to 3 {
      %A[%i] = 0.0
    }
    tir.for %i = 0 to 3 {
      %C[%i] = %T[%i]
    }
  }
}`
	other["read before written"] = `tir.func @k(%A: buffer<3xf32>, out %C: buffer<3xf32>) {
  tir.allocate %T: buffer<3xf32, "local"> {
    tir.for %i = 0 to 3 {
      %C[%i] = %T[%i]
    }
    tir.for %i = 0 to 3 {
      tir.block "t"(%vi = spatial(0:3, %i)) {
        %T[%vi] = %A[%vi] + 1.0
      }
    }
  }
}`
	other["reduction"] = `tir.func @k(%A: buffer<3x4xf32>, out %C: buffer<3xf32>) {
  tir.allocate %T: buffer<3xf32, "local"> {
    tir.for %i = 0 to 3 {
      tir.for %j = 0 to 4 {
        tir.block "t"(%vi = spatial(0:3, %i), %vj = reduce(0:4, %j)) {
          tir.init {
            %T[%vi] = 0.0
          }
          %T[%vi] = %T[%vi] + %A[%vi, %vj]
        }
      }
    }
  }
}`
	wants := map[string]string{
		"input overwritten later": "compute_inline: block 't' reads buffer %A, which is written after the block; inlining would read the new values",
		"read before written":     "compute_inline: block 't' writes buffer %T, which is read before the block runs",
		"reduction":               "compute_inline: block 't' is a reduction (reduce iteration variable %vj); only spatial blocks can be inlined",
		"transposed store":        "compute_inline: block 't' has store indices that are not exactly its iteration variables",
		"two stores":              "compute_inline: block 't' is not a single store",
		"partial":                 "compute_inline: block 't' does not cover buffer %T (iteration domain of %vi is not the dimension's extent)",
	}
	for name, src := range other {
		f := parseKernel(t, src)
		err := ComputeInline(f, "t")
		require.Error(t, err, name)
		assert.Equal(t, wants[name], err.Error(), name)
	}
}
