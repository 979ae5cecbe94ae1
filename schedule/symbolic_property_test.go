package schedule

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// Symbolic-extent variants of the property workloads: a leading extent
// (rows, batch or channels) is a scalar parameter, so loops run to it,
// block domains are (0:%m) and buffer shapes use it. Schedules of them
// are checked at several parameter values (symbolicBindings), including
// values that no small tile factor divides.

// A gemm with symbolic M and N: C[m, n] = A[m, 12] · B[12, n].
const symGemmSrc = `tir.func @gemm_mn(%m: index, %n: index, %A: buffer<(%m)x12xf32>, %B: buffer<12x(%n)xf32>, out %C: buffer<(%m)x(%n)xf32>) attributes {tessera.kernel} {
  tir.for %i = 0 to %m {
    tir.for %j = 0 to %n {
      tir.for %k = 0 to 12 {
        tir.block "C"(%vi = spatial(0:%m, %i), %vj = spatial(0:%n, %j), %vk = reduce(0:12, %k)) reads(%A[%vi, %vk], %B[%vk, %vj]) writes(%C[%vi, %vj]) {
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

// An elementwise chain through an intermediate buffer of %m rows.
const symChainSrc = `tir.func @ew_m(%m: index, %A: buffer<(%m)x14xf32>, %B: buffer<14xf32>, out %D: buffer<(%m)x14xf32>) attributes {tessera.kernel} {
  tir.allocate %T: buffer<(%m)x14xf32, "local"> {
    tir.for %i = 0 to %m {
      tir.for %j = 0 to 14 {
        tir.block "add"(%vi = spatial(0:%m, %i), %vj = spatial(0:14, %j)) reads(%A[%vi, %vj], %B[%vj]) writes(%T[%vi, %vj]) {
          %T[%vi, %vj] = %A[%vi, %vj] + %B[%vj]
        }
      }
    }
    tir.for %i = 0 to %m {
      tir.for %j = 0 to 14 {
        tir.block "relu"(%vi = spatial(0:%m, %i), %vj = spatial(0:14, %j)) reads(%T[%vi, %vj]) writes(%D[%vi, %vj]) {
          %D[%vi, %vj] = max(%T[%vi, %vj], 0.0) * 2.0
        }
      }
    }
  }
}
`

// A direct 3x3 convolution with a symbolic number of output channels.
const symConvSrc = `tir.func @conv_co(%co_n: index, %I: buffer<3x8x8xf32>, %W: buffer<(%co_n)x3x3x3xf32>, out %O: buffer<(%co_n)x6x6xf32>) attributes {tessera.kernel} {
  tir.for %co = 0 to %co_n {
    tir.for %h = 0 to 6 {
      tir.for %w = 0 to 6 {
        tir.for %ci = 0 to 3 {
          tir.for %kh = 0 to 3 {
            tir.for %kw = 0 to 3 {
              tir.block "conv"(%vco = spatial(0:%co_n, %co), %vh = spatial(0:6, %h), %vw = spatial(0:6, %w), %vci = reduce(0:3, %ci), %vkh = reduce(0:3, %kh), %vkw = reduce(0:3, %kw)) reads(%I[%vci, %vh + %vkh, %vw + %vkw], %W[%vco, %vci, %vkh, %vkw]) writes(%O[%vco, %vh, %vw]) {
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

// A 2x2 max pooling with stride 2 over a symbolic number of channels.
const symPoolSrc = `tir.func @pool_c(%c_n: index, %X: buffer<(%c_n)x10x10xf32>, out %P: buffer<(%c_n)x5x5xf32>) attributes {tessera.kernel} {
  tir.for %c = 0 to %c_n {
    tir.for %y = 0 to 5 {
      tir.for %x = 0 to 5 {
        tir.for %ry = 0 to 2 {
          tir.for %rx = 0 to 2 {
            tir.block "pool"(%vc = spatial(0:%c_n, %c), %vy = spatial(0:5, %y), %vx = spatial(0:5, %x), %vry = reduce(0:2, %ry), %vrx = reduce(0:2, %rx)) reads(%X[%vc, %vy * 2 + %vry, %vx * 2 + %vrx]) writes(%P[%vc, %vy, %vx]) {
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

// A row softmax over %m rows: max and sum reductions into local buffers,
// then the normalization.
const symSoftmaxSrc = `tir.func @softmax_m(%m: index, %X: buffer<(%m)x10xf32>, out %Y: buffer<(%m)x10xf32>) attributes {tessera.kernel} {
  tir.allocate %M: buffer<(%m)xf32, "local"> {
    tir.allocate %S: buffer<(%m)xf32, "local"> {
      tir.for %i = 0 to %m {
        tir.for %k = 0 to 10 {
          tir.block "max"(%vi = spatial(0:%m, %i), %vk = reduce(0:10, %k)) reads(%X[%vi, %vk]) writes(%M[%vi]) {
            tir.init {
              %M[%vi] = -1000.0
            }
            %M[%vi] = max(%M[%vi], %X[%vi, %vk])
          }
        }
      }
      tir.for %i = 0 to %m {
        tir.for %k = 0 to 10 {
          tir.block "sum"(%vi = spatial(0:%m, %i), %vk = reduce(0:10, %k)) reads(%X[%vi, %vk], %M[%vi]) writes(%S[%vi]) {
            tir.init {
              %S[%vi] = 0.0
            }
            %S[%vi] = %S[%vi] + exp(%X[%vi, %vk] - %M[%vi])
          }
        }
      }
      tir.for %i = 0 to %m {
        tir.for %j = 0 to 10 {
          tir.block "norm"(%vi = spatial(0:%m, %i), %vj = spatial(0:10, %j)) reads(%X[%vi, %vj], %M[%vi], %S[%vi]) writes(%Y[%vi, %vj]) {
            %Y[%vi, %vj] = exp(%X[%vi, %vj] - %M[%vi]) / %S[%vi]
          }
        }
      }
    }
  }
}
`

// symbolicWorkloads are the symbolic-extent workloads of
// TestRandomSymbolicSchedules and TestRandomSymbolicLocationSchedules.
var symbolicWorkloads = map[string]string{
	"sym_gemm":    symGemmSrc,
	"sym_chain":   symChainSrc,
	"sym_conv":    symConvSrc,
	"sym_pool":    symPoolSrc,
	"sym_softmax": symSoftmaxSrc,
}

// symbolicBindings are the values each symbolic schedule is run at: the
// k-th index parameter of a workload takes the k-th value of a binding
// (1: a single row; 5 and 13: primes that no tile factor above 1 divides;
// 8: a power of two, so exact and guarded tails both occur; 0: every
// symbolic loop empty).
var symbolicBindings = [][]int64{{1, 3}, {5, 10}, {13, 7}, {8, 8}, {0, 4}}

// scalarArgs binds f's index parameters, in order, to vals (cycled).
func scalarArgs(f *tir.PrimFunc, vals []int64) map[string]int64 {
	out := map[string]int64{}
	k := 0
	for _, p := range f.Params {
		if p.Var != nil && p.Var.Type.IsInt() {
			out[p.Var.Name] = vals[k%len(vals)]
			k++
		}
	}
	return out
}

// symbolicSchedulesPerWorkload random schedules of each symbolic workload
// are checked by TestRandomSymbolicSchedules (1,000 in all), and
// symbolicLocationSchedulesPerWorkload by
// TestRandomSymbolicLocationSchedules (600 in all), each at every binding
// of symbolicBindings.
const (
	symbolicSchedulesPerWorkload         = 200
	symbolicLocationSchedulesPerWorkload = 120
)

// symbolicWorkloadNames are the names of symbolicWorkloads, sorted.
func symbolicWorkloadNames() []string {
	var names []string
	for n := range symbolicWorkloads {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// symbolicCase is a symbolic workload with its parameter bindings and the
// unscheduled function's outputs at each.
type symbolicCase struct {
	args  []map[string]int64
	wants []map[string][]float64
}

// newSymbolicCase interprets symbolic workload name at every binding.
func newSymbolicCase(t testing.TB, name string) symbolicCase {
	orig := parseFunc(t, symbolicWorkloads[name])
	var c symbolicCase
	for _, b := range symbolicBindings {
		a := scalarArgs(orig, b)
		c.args = append(c.args, a)
		c.wants = append(c.wants, interpretAt(t, orig, 3, a))
	}
	return c
}

// check checks schedule s of the case: its function verifies and computes
// the unscheduled outputs at every binding, so does its buffer-compacted
// form, and its trace replays to the same IR. It reports whether
// compaction changed the function.
func (c symbolicCase) check(t *testing.T, s *Schedule) bool {
	f := s.Func()
	require.NoError(t, tir.VerifyFunc(f), printed(f))
	cf := tir.CompactBufferAllocation(f)
	require.NoError(t, tir.VerifyFunc(cf), printed(cf))
	compacted := printed(cf) != printed(f)
	for k, a := range c.args {
		msg := fmt.Sprintf("at %v:\n%s\n%s", a, printed(f), s.Trace().String())
		sameOutputs(t, c.wants[k], interpretAt(t, f, 3, a), msg)
		if compacted {
			sameOutputs(t, c.wants[k], interpretAt(t, cf, 3, a), "compacted "+msg+"\n"+printed(cf))
		}
	}
	checkReplay(t, s)
	return compacted
}

// run checks schedule s (of workload name, seed) in a subtest, counting
// in *compacted the schedules compaction changed; it reports whether the
// subtest passed.
func (c symbolicCase) run(t *testing.T, name string, seed int64, s *Schedule, compacted *int) bool {
	return t.Run(fmt.Sprintf("%s/%d", name, seed), func(t *testing.T) {
		if c.check(t, s) {
			*compacted++
		}
	})
}

// hasGuard reports whether a block of f has a predicate or f holds a
// tir.if (a guarded split tail).
func hasGuard(f *tir.PrimFunc) bool {
	found := false
	tir.VisitStmt(f.Body, func(st tir.Stmt) bool {
		switch x := st.(type) {
		case *tir.BlockRealize:
			found = found || x.Predicate != nil
		case *tir.IfThenElse:
			found = true
		}
		return !found
	})
	return found
}

// TestRandomSymbolicSchedules applies random loop primitives (randomStep:
// split with an inferred or constant factors, sampled split, fuse,
// reorder, parallel, vectorize, unroll, annotate) to workloads whose
// leading extents are scalar parameters, and checks each schedule at
// every binding of the parameters (symbolicCase.check). Split, fuse,
// reorder, parallel and annotate must apply to symbolic loops;
// vectorize, unroll and sample_perfect_tile need a constant extent and
// refuse them.
func TestRandomSymbolicSchedules(t *testing.T) {
	start := time.Now()
	applied, onSymbolic := map[string]int{}, map[string]int{}
	checked, guarded, compacted := 0, 0, 0
	for _, name := range symbolicWorkloadNames() {
		c := newSymbolicCase(t, name)
		for i := 0; i < symbolicSchedulesPerWorkload; i++ {
			seed := randomScheduleSeed(name, i)
			rng := newRand(seed)
			s := NewWithSeed(parseFunc(t, symbolicWorkloads[name]), seed)
			steps := 1 + rng.Intn(6)
			for k := 0; k < steps; k++ {
				if op, ok, sym := randomLoopStep(t, s, rng); ok {
					applied[op]++
					if sym {
						onSymbolic[op]++
					}
				}
			}
			if !c.run(t, name, seed, s, &compacted) {
				return
			}
			checked++
			if hasGuard(s.Func()) {
				guarded++
			}
		}
	}
	t.Logf("%d symbolic schedules checked at %d bindings each (%d with guards, %d changed by compaction) in %v; applied: %v; on symbolic loops: %v",
		checked, len(symbolicBindings), guarded, compacted, time.Since(start).Round(time.Millisecond), applied, onSymbolic)
	require.Greater(t, guarded, 100, "too few schedules have a guarded tail")
	for _, op := range []string{"split", "sample+split", "fuse", "reorder", "parallel", "vectorize", "unroll", "annotate"} {
		require.Greater(t, applied[op], 15, "%s applied %d times", op, applied[op])
	}
	for _, op := range []string{"split", "fuse", "reorder", "parallel", "annotate"} {
		require.Greater(t, onSymbolic[op], 15, "%s applied %d times to symbolic loops", op, onSymbolic[op])
	}
}

// TestRandomSymbolicLocationSchedules is TestRandomLocationSchedules on
// the symbolic workloads: random sequences of loop primitives and of
// compute-location, inline, cache and reduction primitives, each schedule
// checked at every binding of the parameters.
func TestRandomSymbolicLocationSchedules(t *testing.T) {
	start := time.Now()
	applied := map[string]int{}
	checked, compacted := 0, 0
	for _, name := range symbolicWorkloadNames() {
		c := newSymbolicCase(t, name)
		for i := 0; i < symbolicLocationSchedulesPerWorkload; i++ {
			seed := locationScheduleSeed(name, i)
			rng := newRand(seed)
			s := NewWithSeed(parseFunc(t, symbolicWorkloads[name]), seed)
			locationSteps(t, s, rng, applied)
			if !c.run(t, name, seed, s, &compacted) {
				return
			}
			checked++
		}
	}
	t.Logf("%d symbolic location schedules checked at %d bindings each (%d changed by compaction) in %v; applied: %v",
		checked, len(symbolicBindings), compacted, time.Since(start).Round(time.Millisecond), applied)
	require.Greater(t, compacted, 50, "buffer compaction changed too few schedules")
	for _, op := range []string{"compute_at", "reverse_compute_at", "sample_compute_location", "compute_inline", "reverse_compute_inline", "cache_read", "cache_write", "set_scope", "decompose_reduction", "rfactor"} {
		require.Greater(t, applied[op], 3, "%s applied %d times", op, applied[op])
	}
}
