package schedule

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/targets/llvm"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// Workloads of the schedule tests.
const gemmSrc = `tir.func @gemm(%A: buffer<16x12xf32>, %B: buffer<12x10xf32>, out %C: buffer<16x10xf32>) attributes {tessera.kernel} {
  tir.for %i = 0 to 16 {
    tir.for %j = 0 to 10 {
      tir.for %k = 0 to 12 {
        tir.block "C"(%vi = spatial(0:16, %i), %vj = spatial(0:10, %j), %vk = reduce(0:12, %k)) reads(%A[%vi, %vk], %B[%vk, %vj]) writes(%C[%vi, %vj]) {
          tir.init {
            %C[%vi, %vj] = 0.0
          }
          %C[%vi, %vj] = %C[%vi, %vj] + %A[%vi, %vk] * %B[%vk, %vj]
        }
      }
    }
  }
}
`

// A direct 3x3 convolution: O[co, h, w] = sum over ci, kh, kw.
const convSrc = `tir.func @conv(%I: buffer<3x8x8xf32>, %W: buffer<4x3x3x3xf32>, out %O: buffer<4x6x6xf32>) attributes {tessera.kernel} {
  tir.for %co = 0 to 4 {
    tir.for %h = 0 to 6 {
      tir.for %w = 0 to 6 {
        tir.for %ci = 0 to 3 {
          tir.for %kh = 0 to 3 {
            tir.for %kw = 0 to 3 {
              tir.block "conv"(%vco = spatial(0:4, %co), %vh = spatial(0:6, %h), %vw = spatial(0:6, %w), %vci = reduce(0:3, %ci), %vkh = reduce(0:3, %kh), %vkw = reduce(0:3, %kw)) reads(%I[%vci, %vh + %vkh, %vw + %vkw], %W[%vco, %vci, %vkh, %vkw]) writes(%O[%vco, %vh, %vw]) {
                tir.init {
                  %O[%vco, %vh, %vw] = 0.0
                }
                %O[%vco, %vh, %vw] = %O[%vco, %vh, %vw] + %I[%vci, %vh + %vkh, %vw + %vkw] * %W[%vco, %vci, %vkh, %vkw]
              }
            }
          }
        }
      }
    }
  }
}
`

// An elementwise chain through an intermediate buffer.
const chainSrc = `tir.func @ew(%A: buffer<6x14xf32>, %B: buffer<14xf32>, out %D: buffer<6x14xf32>) attributes {tessera.kernel} {
  tir.allocate %T: buffer<6x14xf32, "local"> {
    tir.for %i = 0 to 6 {
      tir.for %j = 0 to 14 {
        tir.block "add"(%vi = spatial(0:6, %i), %vj = spatial(0:14, %j)) reads(%A[%vi, %vj], %B[%vj]) writes(%T[%vi, %vj]) {
          %T[%vi, %vj] = %A[%vi, %vj] + %B[%vj]
        }
      }
    }
    tir.for %i = 0 to 6 {
      tir.for %j = 0 to 14 {
        tir.block "relu"(%vi = spatial(0:6, %i), %vj = spatial(0:14, %j)) reads(%T[%vi, %vj]) writes(%D[%vi, %vj]) {
          %D[%vi, %vj] = max(%T[%vi, %vj], 0.0) * 2.0
        }
      }
    }
  }
}
`

// A 2x2 max pooling with stride 2 over 2 channels.
const poolSrc = `tir.func @pool(%X: buffer<2x10x10xf32>, out %P: buffer<2x5x5xf32>) attributes {tessera.kernel} {
  tir.for %c = 0 to 2 {
    tir.for %y = 0 to 5 {
      tir.for %x = 0 to 5 {
        tir.for %ry = 0 to 2 {
          tir.for %rx = 0 to 2 {
            tir.block "pool"(%vc = spatial(0:2, %c), %vy = spatial(0:5, %y), %vx = spatial(0:5, %x), %vry = reduce(0:2, %ry), %vrx = reduce(0:2, %rx)) reads(%X[%vc, %vy * 2 + %vry, %vx * 2 + %vrx]) writes(%P[%vc, %vy, %vx]) {
              tir.init {
                %P[%vc, %vy, %vx] = -1000.0
              }
              %P[%vc, %vy, %vx] = max(%P[%vc, %vy, %vx], %X[%vc, %vy * 2 + %vry, %vx * 2 + %vrx])
            }
          }
        }
      }
    }
  }
}
`

// A row softmax: max and sum reductions into local buffers, then the
// normalization.
const softmaxSrc = `tir.func @softmax(%X: buffer<4x10xf32>, out %Y: buffer<4x10xf32>) attributes {tessera.kernel} {
  tir.allocate %M: buffer<4xf32, "local"> {
    tir.allocate %S: buffer<4xf32, "local"> {
      tir.for %i = 0 to 4 {
        tir.for %k = 0 to 10 {
          tir.block "max"(%vi = spatial(0:4, %i), %vk = reduce(0:10, %k)) reads(%X[%vi, %vk]) writes(%M[%vi]) {
            tir.init {
              %M[%vi] = -1000.0
            }
            %M[%vi] = max(%M[%vi], %X[%vi, %vk])
          }
        }
      }
      tir.for %i = 0 to 4 {
        tir.for %k = 0 to 10 {
          tir.block "sum"(%vi = spatial(0:4, %i), %vk = reduce(0:10, %k)) reads(%X[%vi, %vk], %M[%vi]) writes(%S[%vi]) {
            tir.init {
              %S[%vi] = 0.0
            }
            %S[%vi] = %S[%vi] + exp(%X[%vi, %vk] - %M[%vi])
          }
        }
      }
      tir.for %i = 0 to 4 {
        tir.for %j = 0 to 10 {
          tir.block "norm"(%vi = spatial(0:4, %i), %vj = spatial(0:10, %j)) reads(%X[%vi, %vj], %M[%vi], %S[%vi]) writes(%Y[%vi, %vj]) {
            %Y[%vi, %vj] = exp(%X[%vi, %vj] - %M[%vi]) / %S[%vi]
          }
        }
      }
    }
  }
}
`

// A fused conv + bias + relu: the convolution into a local buffer, then
// the epilogue.
const convBiasReluSrc = `tir.func @cbr(%I: buffer<2x7x7xf32>, %W: buffer<3x2x3x3xf32>, %Bias: buffer<3xf32>, out %O: buffer<3x5x5xf32>) attributes {tessera.kernel} {
  tir.allocate %T: buffer<3x5x5xf32, "local"> {
    tir.for %co = 0 to 3 {
      tir.for %h = 0 to 5 {
        tir.for %w = 0 to 5 {
          tir.for %ci = 0 to 2 {
            tir.for %kh = 0 to 3 {
              tir.for %kw = 0 to 3 {
                tir.block "conv"(%vco = spatial(0:3, %co), %vh = spatial(0:5, %h), %vw = spatial(0:5, %w), %vci = reduce(0:2, %ci), %vkh = reduce(0:3, %kh), %vkw = reduce(0:3, %kw)) reads(%I[%vci, %vh + %vkh, %vw + %vkw], %W[%vco, %vci, %vkh, %vkw]) writes(%T[%vco, %vh, %vw]) {
                  tir.init {
                    %T[%vco, %vh, %vw] = 0.0
                  }
                  %T[%vco, %vh, %vw] = %T[%vco, %vh, %vw] + %I[%vci, %vh + %vkh, %vw + %vkw] * %W[%vco, %vci, %vkh, %vkw]
                }
              }
            }
          }
        }
      }
    }
    tir.for %co = 0 to 3 {
      tir.for %h = 0 to 5 {
        tir.for %w = 0 to 5 {
          tir.block "bias_relu"(%vco = spatial(0:3, %co), %vh = spatial(0:5, %h), %vw = spatial(0:5, %w)) reads(%T[%vco, %vh, %vw], %Bias[%vco]) writes(%O[%vco, %vh, %vw]) {
            %O[%vco, %vh, %vw] = max(%T[%vco, %vh, %vw] + %Bias[%vco], 0.0)
          }
        }
      }
    }
  }
}
`

var workloads = map[string]string{"gemm": gemmSrc, "conv": convSrc, "chain": chainSrc, "pool": poolSrc}

// propertyExtra are further workloads of the random-schedule tests.
var propertyExtra = map[string]string{"prop_softmax": softmaxSrc, "prop_conv_bias_relu": convBiasReluSrc}

// workloadSrc is the source of a workload of either map.
func workloadSrc(name string) string {
	if src, ok := workloads[name]; ok {
		return src
	}
	return propertyExtra[name]
}

func parseFunc(t testing.TB, src string) *tir.PrimFunc {
	t.Helper()
	m, err := tir.ParseString("w.tir", src)
	require.NoError(t, err)
	require.NoError(t, tir.Verify(m))
	return m.Funcs[0]
}

// interpret runs f on random inputs (seeded) and returns its outputs.
func interpret(t testing.TB, f *tir.PrimFunc, seed int64) map[string][]float64 {
	t.Helper()
	return interpretAt(t, f, seed, nil)
}

// interpretAt runs f as interpret does, with its scalar parameters bound
// to ints (keyed by name without the '%'; every parameter needs a value);
// each buffer parameter takes the shape its dimension expressions
// evaluate to there (symbolic shapes such as (%m)x12).
func interpretAt(t testing.TB, f *tir.PrimFunc, seed int64, ints map[string]int64) map[string][]float64 {
	t.Helper()
	rng := newRand(seed)
	sub := map[*tir.Var]tir.Expr{}
	for _, p := range f.Params {
		if p.Var != nil {
			v, ok := ints[p.Var.Name]
			require.True(t, ok, "no value for %%%s", p.Var.Name)
			sub[p.Var] = tir.IntOf(p.Var.Type, v)
		}
	}
	arrays := map[string]*tir.Array{}
	outs := map[string][]float64{}
	for _, p := range f.Params {
		if p.Buffer == nil {
			continue
		}
		shape := make([]int64, len(p.Buffer.Shape))
		for i, d := range p.Buffer.Shape {
			c, ok := constInt(tir.Simplify(tir.Substitute(d, sub), nil))
			require.True(t, ok, "dimension %d of %%%s", i, p.Buffer.Name)
			shape[i] = c
		}
		a := tir.NewArray(p.Buffer.DType, shape...)
		for i := range a.Floats {
			a.Floats[i] = tir.RoundFloat(p.Buffer.DType, rng.Float64()*4-2)
		}
		arrays[p.Buffer.Name] = a
	}
	require.NoError(t, tir.RunArgs(f, tir.Args{Arrays: arrays, Ints: ints}), tir.PrintFunc(f, tir.PrintOptions{}))
	for _, p := range f.Params {
		if p.Buffer != nil && p.Role != tir.RoleIn {
			outs[p.Buffer.Name] = arrays[p.Buffer.Name].Floats
		}
	}
	return outs
}

// sameOutputs compares outputs: exactly for spatial schedules, within a
// float32 rounding tolerance where a reduction's summation order changed.
func sameOutputs(t testing.TB, want, got map[string][]float64, msg string) {
	t.Helper()
	require.Equal(t, len(want), len(got))
	for name, w := range want {
		g := got[name]
		require.Len(t, g, len(w), name)
		for i := range w {
			if math.Abs(w[i]-g[i]) > 1e-5*(1+math.Abs(w[i])) {
				require.Failf(t, "outputs differ", "%s[%d]: want %v, got %v\n%s", name, i, w[i], g[i], msg)
			}
		}
	}
}

func printed(f *tir.PrimFunc) string { return tir.PrintFunc(f, tir.PrintOptions{}) }

// checkSame checks that s's function verifies, computes what the original
// computes, and that its trace round-trips through JSON and replays to the
// same printed IR.
func checkSame(t testing.TB, s *Schedule) {
	t.Helper()
	f := s.Func()
	require.NoError(t, tir.VerifyFunc(f), printed(f))
	sameOutputs(t, interpret(t, s.Original(), 3), interpret(t, f, 3), printed(f))
	checkReplay(t, s)
}

// checkReplay checks that s's trace round-trips through JSON and replays
// on the original to the same printed IR and the same trace.
func checkReplay(t testing.TB, s *Schedule) {
	t.Helper()
	f := s.Func()
	data, err := s.Trace().JSON()
	require.NoError(t, err)
	tr, err := ParseTrace(data)
	require.NoError(t, err)
	data2, err := tr.JSON()
	require.NoError(t, err)
	require.Equal(t, string(data), string(data2))
	r, err := Replay(s.Original(), tr)
	require.NoError(t, err, string(data))
	require.Equal(t, printed(f), printed(r.Func()), string(data))
	data3, err := r.Trace().JSON()
	require.NoError(t, err)
	require.Equal(t, string(data), string(data3))
}

func mustLoops(t testing.TB, s *Schedule, block string) []LoopRV {
	t.Helper()
	b, err := s.GetBlock(block)
	require.NoError(t, err)
	ls, err := s.GetLoops(b)
	require.NoError(t, err)
	return ls
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(s, "\n", "\n"+pre)
}

func replaceFirst(s, old, repl string) string { return strings.Replace(s, old, repl, 1) }

func newRand(seed int64) *rand.Rand { return rand.New(rand.NewSource(seed)) }

// compileCPU compiles a scheduled module as the CPU target does: its
// post-schedule pass (compact-buffer-allocation, which gives each thread
// its own cache tiles), then LLVM code generation. (The schedule tests
// cannot import targets/cpu, which imports this package.)
func compileCPU(m *tir.Module, opts llvm.Options) (*llvm.Result, error) {
	tir.CompactBufferAllocationModule(m)
	return llvm.Compile(m, opts)
}
