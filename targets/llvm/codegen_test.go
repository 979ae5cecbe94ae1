package llvm

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

const matmulText = `tir.func @matmul(%A: buffer<37x29xf32>, %B: buffer<29x45xf32>, out %C: buffer<37x45xf32>) {
  tir.for %i = 0 to 37 {
    tir.for %j = 0 to 45 {
      tir.for %k = 0 to 29 {
        tir.block "C"(%vi = spatial(0:37, %i), %vj = spatial(0:45, %j), %vk = reduce(0:29, %k)) reads(%A[%vi, %vk], %B[%vk, %vj]) writes(%C[%vi, %vj]) {
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

// The compiled code does the same f32 operations in the same order as the
// interpreter (no fast-math, no contraction): results are bit-identical.
func TestMatmulSerialExact(t *testing.T) {
	checkAgainstInterp(t, parseModule(t, matmulText), "matmul", Options{}, 1, 0)
}

// A vectorized j loop (16 lanes) around the reduction loop: B and C are
// contiguous vector accesses, A[i, k] a broadcast scalar; the non-dividing
// tail (45 = 2·16 + 13) is a separate serial loop.
const matmulVecText = `tir.func @matmul(%A: buffer<37x29xf32>, %B: buffer<29x45xf32>, out %C: buffer<37x45xf32>) {
  tir.for %i = 0 to 37 parallel {
    tir.for %jo = 0 to 2 {
      tir.for %ji = 0 to 16 vectorized {
        tir.for %k = 0 to 29 {
          tir.block "C"(%vi = spatial(0:37, %i), %vj = spatial(0:45, %jo * 16 + %ji), %vk = reduce(0:29, %k)) reads(%A[%vi, %vk], %B[%vk, %vj]) writes(%C[%vi, %vj]) {
            tir.init {
              %C[%vi, %vj] = 0.0
            }
            %C[%vi, %vj] = %C[%vi, %vj] + %A[%vi, %vk] * %B[%vk, %vj]
          }
        }
      }
    }
    tir.for %jt = 0 to 13 {
      tir.for %k = 0 to 29 {
        tir.block "Ct"(%vi = spatial(0:37, %i), %vj = spatial(0:45, 32 + %jt), %vk = reduce(0:29, %k)) reads(%A[%vi, %vk], %B[%vk, %vj]) writes(%C[%vi, %vj]) {
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

func TestMatmulVectorParallelExact(t *testing.T) {
	res, report := checkAgainstInterp(t, parseModule(t, matmulVecText), "matmul", Options{}, 2, 0)
	assert.True(t, res.UsesParallel)
	assert.Contains(t, res.LLVM(), "load <16 x float>")
	assert.Contains(t, res.LLVM(), "store <16 x float>")
	assert.Contains(t, res.LLVM(), "@llvm.global_ctors")
	assert.Equal(t, "rc=0 gomp=1 wait=unset spin="+GOMPSpinCount, report)
}

// A cooperative-fetch copy (a fused loop split by threads and 4 lanes):
// floordiv and floormod of t·4 + lane by 16 do not cross an aligned group
// of 4 lanes, so the rows are lane-independent and the columns contiguous
// (vector loads and stores); by 6 they do, and stay per-lane accesses.
// Both match the interpreter.
const fusedCopyText = `tir.func @copy(%A: buffer<8x16xf32>, %B: buffer<6x12xf32>, out %C: buffer<16x8xf32>, out %D: buffer<12x6xf32>) {
  tir.for %t = 0 to 32 {
    tir.for %v = 0 to 4 vectorized {
      tir.block "C"(%r = spatial(0:8, floordiv(%t * 4 + %v, 16)), %c = spatial(0:16, floormod(%t * 4 + %v, 16))) reads(%A[%r, %c]) writes(%C[%c, %r]) {
        %C[%c, %r] = %A[%r, %c] * 2.0
      }
    }
  }
  tir.for %t = 0 to 18 {
    tir.for %v = 0 to 4 vectorized {
      tir.block "D"(%r = spatial(0:12, floordiv(%t * 4 + %v, 6)), %c = spatial(0:6, floormod(%t * 4 + %v, 6))) reads(%B[%c, %r]) writes(%D[%r, %c]) {
        %D[%r, %c] = %B[%c, %r] + 1.0
      }
    }
  }
}
`

func TestVectorFusedIndex(t *testing.T) {
	res, _ := checkAgainstInterp(t, parseModule(t, fusedCopyText), "copy", Options{}, 3, 0)
	ll := res.LLVM()
	assert.Contains(t, ll, "load <4 x float>")
	assert.Equal(t, 1, strings.Count(ll, "load <4 x float>"), "only %%A's read is contiguous")
}

const conv2dText = `tir.func @conv2d(%X: buffer<2x3x9x9xf32>, %W: buffer<4x3x3x3xf32>, out %Y: buffer<2x4x7x7xf32>) {
  tir.for %n = 0 to 2 parallel {
    tir.for %f = 0 to 4 parallel {
      tir.for %y = 0 to 7 {
        tir.for %x = 0 to 7 {
          tir.for %c = 0 to 3 {
            tir.for %ky = 0 to 3 unrolled {
              tir.for %kx = 0 to 3 unrolled {
                tir.block "Y"(%vn = spatial(0:2, %n), %vf = spatial(0:4, %f), %vy = spatial(0:7, %y), %vx = spatial(0:7, %x), %vc = reduce(0:3, %c), %vky = reduce(0:3, %ky), %vkx = reduce(0:3, %kx)) reads(%X[%vn, %vc, %vy + %vky, %vx + %vkx], %W[%vf, %vc, %vky, %vkx]) writes(%Y[%vn, %vf, %vy, %vx]) {
                  tir.init {
                    %Y[%vn, %vf, %vy, %vx] = 0.0
                  }
                  %Y[%vn, %vf, %vy, %vx] = %Y[%vn, %vf, %vy, %vx] + %X[%vn, %vc, %vy + %vky, %vx + %vkx] * %W[%vf, %vc, %vky, %vkx]
                }
              }
            }
          }
        }
      }
    }
  }
}
`

// Nested parallel loops: only the outer one is outlined, for 1, 2 and 3
// threads (the last does not divide the extent), and with the thread
// count from OMP_NUM_THREADS or all cores. The module's constructor
// loads libgomp and sets GOMP_SPINCOUNT unless the user chose a wait policy.
func TestConv2dParallelThreads(t *testing.T) {
	for _, env := range [][]string{
		{"TESSERA_NUM_THREADS=1"}, {"TESSERA_NUM_THREADS=2"}, {"TESSERA_NUM_THREADS=3", "OMP_NUM_THREADS=1"},
		{"OMP_NUM_THREADS=3"}, {}, {"OMP_WAIT_POLICY=active"},
	} {
		t.Run(strings.Join(env, ","), func(t *testing.T) {
			res, report := checkAgainstInterp(t, parseModule(t, conv2dText), "conv2d", Options{}, 3, 0, env...)
			assert.Equal(t, 1, countOf(res.LLVM(), "(i8* %data)"))
			want := "wait=unset spin=" + GOMPSpinCount
			if len(env) == 1 && env[0] == "OMP_WAIT_POLICY=active" {
				want = "wait=active spin=unset"
			}
			assert.Equal(t, "rc=0 gomp=1 "+want, report)
		})
	}
}

func countOf(s, sub string) int {
	n := 0
	for i := 0; ; {
		j := indexFrom(s, sub, i)
		if j < 0 {
			return n
		}
		n++
		i = j + len(sub)
	}
}

func indexFrom(s, sub string, i int) int {
	for k := i; k+len(sub) <= len(s); k++ {
		if s[k:k+len(sub)] == sub {
			return k
		}
	}
	return -1
}

// Integer floordiv/floormod with negative operands and divisors (scalar
// and vectorized, i32 and index), min/max and comparisons.
const intText = `tir.func @intops(%A: buffer<64xi32>, %B: buffer<64xi32>, out %Q: buffer<64xi32>, out %R: buffer<64xi32>, out %S: buffer<64xi32>, out %T: buffer<64xi64>) {
  tir.for %i = 0 to 64 {
    %Q[%i] = floordiv(%A[%i], select(%B[%i] == 0 : i32, 7 : i32, %B[%i]))
    %R[%i] = floormod(%A[%i], select(%B[%i] == 0 : i32, -7 : i32, %B[%i]))
  }
  tir.for %io = 0 to 4 {
    tir.for %ii = 0 to 16 vectorized {
      %S[%io * 16 + %ii] = floordiv(%A[%io * 16 + %ii], 5 : i32) * 100 : i32 + floormod(%A[%io * 16 + %ii], -3 : i32) + min(%A[%io * 16 + %ii], %B[%io * 16 + %ii]) * max(%A[%io * 16 + %ii], -1 : i32) + abs(%B[%io * 16 + %ii])
      %T[%io * 16 + %ii] = cast<i64>(floordiv(%io * 16 + %ii - 30, -4) * 1000 + floormod(%io * 16 + %ii - 30, 4))
    }
  }
}
`

func TestIntegerOpsExact(t *testing.T) {
	checkAgainstInterp(t, parseModule(t, intText), "intops", Options{}, 4, 0)
}

// A local scratch buffer (stack) and a global one above the stack limit
// (malloc/free), let bindings, if/else and casts.
const allocText = `tir.func @alloc(%A: buffer<8x40xf32>, out %B: buffer<8x40xf32>, out %N: buffer<8xi32>) {
  tir.for %i = 0 to 8 {
    tir.allocate %L: buffer<40xf32, "local"> {
      tir.allocate %G: buffer<20000xf32, "global"> {
        tir.for %j = 0 to 40 {
          tir.let %x = %A[%i, %j] * 3.0 {
            %L[39 - %j] = %x
            %G[%j * 500] = %x + 1.0
          }
        }
        %N[%i] = 0 : i32
        tir.for %j = 0 to 40 {
          tir.if %L[%j] > 0.0 {
            %B[%i, %j] = %L[%j] + %G[(39 - %j) * 500]
            %N[%i] = %N[%i] + 1 : i32
          } else {
            %B[%i, %j] = cast<f32>(cast<i32>(%L[%j] * 10.0))
          }
        }
      }
    }
  }
}
`

func TestAllocateLetIfCast(t *testing.T) {
	res, report := checkAgainstInterp(t, parseModule(t, allocText), "alloc", Options{}, 5, 0)
	assert.Equal(t, "rc=0 gomp=0 wait=unset spin=unset", report, "no parallel loop: libgomp is not loaded")
	assert.Contains(t, res.LLVM(), "alloca [40 x float]")
	assert.Contains(t, res.LLVM(), "@tessera.block.0.ptr = internal thread_local global i8* null", "the heap buffer is a kept block")
	assert.Contains(t, res.LLVM(), "@aligned_alloc")
}

// A cache_write-style local buffer of the whole output (512 KiB: above
// the stack limit) used one row per iteration of a parallel loop: Compile
// compacts it (tensorir.CompactBufferAllocation) to one row allocated in
// the parallel body, a per-thread stack array, instead of a shared heap
// buffer.
const rowCacheText = `tir.func @rowcache(%A: buffer<1024x128xf32>, out %B: buffer<1024x128xf32>) {
  tir.allocate %T: buffer<1024x128xf32, "local"> {
    tir.for %i = 0 to 1024 parallel {
      tir.for %j = 0 to 128 vectorized {
        %T[%i, %j] = %A[%i, %j] * 2.0
      }
      tir.for %j = 0 to 128 {
        %B[%i, %j] = %T[%i, 127 - %j] + %T[%i, %j]
      }
    }
  }
}
`

func TestCompactedCacheOnStack(t *testing.T) {
	m := parseModule(t, rowCacheText)
	tir.CompactBufferAllocationModule(m) // the CPU target's post-schedule pass
	res, _ := checkAgainstInterp(t, m, "rowcache", Options{}, 3, 0)
	assert.NotContains(t, res.LLVM(), "@malloc")
	assert.Contains(t, res.LLVM(), "alloca [128 x float]")
}

// Elementwise math, vectorized with a gather (strided load) and a
// broadcast, compared with Go's math within the stated bounds.
const mathText = `tir.func @ew(%A: buffer<4x32xf32>, out %E: buffer<4x32xf32>, out %T: buffer<4x32xf32>, out %S: buffer<4x32xf32>, out %R: buffer<4x32xf32>, out %M: buffer<4x32xf32>) {
  tir.for %i = 0 to 4 parallel {
    tir.for %j = 0 to 32 vectorized {
      %E[%i, %j] = exp(%A[%i, %j] * 10.0)
      %T[%i, %j] = tanh(%A[%i, %j] * 3.0)
      %S[%i, %j] = sigmoid(%A[%i, %j] * 20.0) + erf(%A[3 - %i, 31 - %j])
      %R[%i, %j] = sqrt(abs(%A[%i, %j])) + rsqrt(abs(%A[%i, %j]) + 1.0) + log(abs(%A[%i, %j]) + 0.5) + pow(abs(%A[%i, %j]), 1.5)
      %M[%i, %j] = max(min(%A[%i, %j], 0.5), -0.5) + fma(%A[%i, %j], %A[%i, 0], 1.0) + select(%A[%i, %j] < 0.0, 1.0, 2.0)
    }
  }
}
`

func TestElementwiseMathVector(t *testing.T) {
	checkAgainstInterp(t, parseModule(t, mathText), "ew", Options{}, 6, 1e-5)
}

// The same kernel with serial loops uses the same polynomials.
func TestElementwiseMathScalar(t *testing.T) {
	src := replaceAll(replaceAll(mathText, " vectorized", ""), " parallel", "")
	checkAgainstInterp(t, parseModule(t, src), "ew", Options{}, 7, 1e-5)
}

func replaceAll(s, old, new string) string {
	out := ""
	for {
		i := indexFrom(s, old, 0)
		if i < 0 {
			return out + s
		}
		out += s[:i] + new
		s = s[i+len(old):]
	}
}

// A block predicate guards a tail inside a vectorized loop's sibling, and
// f64, i8 and i1 buffers round-trip.
const dtypeText = `tir.func @dtypes(%A: buffer<20xf64>, %C: buffer<20xi8>, out %B: buffer<20xf64>, out %D: buffer<20xi1>, out %E: buffer<20xi8>) {
  tir.for %i = 0 to 24 {
    tir.block "B"(%vi = spatial(0:20, %i)) where(%i < 20) reads(%A[%vi]) writes(%B[%vi]) {
      %B[%vi] = exp(%A[%vi]) + tanh(%A[%vi]) + sigmoid(%A[%vi]) + erf(%A[%vi])
    }
  }
  tir.for %i = 0 to 20 vectorized {
    %D[%i] = %C[%i] > 0 : i8
    %E[%i] = %C[%i] * 3 : i8
  }
}
`

func TestDTypesAndPredicate(t *testing.T) {
	checkAgainstInterp(t, parseModule(t, dtypeText), "dtypes", Options{}, 8, 1e-12)
}

func TestRefusals(t *testing.T) {
	for name, src := range map[string]string{
		"lane-dependent loop bound": `tir.func @f(%A: buffer<16x16xf32>, out %B: buffer<16x16xf32>) {
  tir.for %i = 0 to 16 vectorized {
    tir.for %j = 0 to %i {
      %B[%i, %j] = %A[%i, %j]
    }
  }
}
`,
		"allocation": `tir.func @f(%A: buffer<16xf32>, out %B: buffer<16xf32>) {
  tir.for %i = 0 to 16 vectorized {
    tir.allocate %L: buffer<1xf32, "local"> {
      %L[0] = %A[%i]
      %B[%i] = %L[0]
    }
  }
}
`,
		"reduction across lanes": `tir.func @f(%A: buffer<16xf32>, out %B: buffer<1xf32>) {
  tir.for %i = 0 to 16 vectorized {
    %B[0] = %B[0] + %A[%i]
  }
}
`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Compile(parseModule(t, src), Options{})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "cannot vectorize loop %i")
		})
	}
	_, err := Compile(parseModule(t, `tir.func @f(%A: buffer<16xf32>, out %B: buffer<16xf32>) {
  tir.for %i = 0 to 16 thread_binding("threadIdx.x") {
    %B[%i] = %A[%i]
  }
}
`), Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "thread bindings are GPU constructs")
}

// Symbolic shapes: a scalar index parameter sizes the buffers and a
// heap-allocated scratch buffer; only the function with a global_symbol
// is exported.
func TestSymbolicShapeAndExports(t *testing.T) {
	m := parseModule(t, `tir.func @sym(%n: index, %A: buffer<(%n)xf32>, out %B: buffer<(%n)xf32>) attributes {global_symbol = "sym_entry"} {
  tir.allocate %T: buffer<(%n)xf32> {
    tir.for %i = 0 to %n {
      %T[%n - 1 - %i] = %A[%i] * 2.0
    }
    tir.for %i = 0 to %n parallel {
      %B[%i] = %T[%i] + cast<f32>(%n)
    }
  }
}
tir.func @helper(%A: buffer<4xf32>, out %B: buffer<4xf32>) {
  tir.for %i = 0 to 4 {
    %B[%i] = %A[%i]
  }
}
`)
	so, res := buildShared(t, m, Options{})
	require.Len(t, res.Entries, 1)
	assert.Equal(t, "sym_entry", res.Entries[0].Symbol)
	assert.Contains(t, res.LLVM(), "define internal void @helper.kernel(")
	assert.Contains(t, res.LLVM(), "define i32 @sym_entry(i64 %n, float* %A, float* %B)")
	assert.Contains(t, res.LLVM(), "thread_local global i8* null")
	f := m.Func("sym")
	for _, n := range []int64{1, 7, 100} {
		a := tir.NewArray(tir.DF32, n)
		for i := range a.Floats {
			a.Floats[i] = float64(i) * 0.5
		}
		args := tir.Args{Arrays: map[string]*tir.Array{"A": a, "B": tir.NewArray(tir.DF32, n)}, Ints: map[string]int64{"n": n}}
		want := cloneArgs(args)
		require.NoError(t, tir.RunArgs(f, want))
		runShared(t, so, "sym_entry", f, args, "TESSERA_NUM_THREADS=2")
		assertClose(t, want, args, 0)
	}
}

// Inside a vectorized loop: a lane-dependent let used in an index
// (contiguous through the let), a reversed load (gather), a strided
// store (scatter), a lane-independent load (broadcast), an inner serial
// loop and a lane-independent if.
const vecAccessText = `tir.func @vacc(%A: buffer<3x16xf32>, %K: buffer<4xf32>, out %B: buffer<3x32xf32>, out %C: buffer<3x16xf32>) {
  tir.for %i = 0 to 3 {
    tir.for %j = 0 to 16 vectorized {
      tir.let %x = %j + 1 {
        %C[%i, %x - 1] = %A[%i, 15 - %j] * %K[%i]
        %B[%i, %j * 2] = %A[%i, %j]
        %B[%i, %j * 2 + 1] = 0.0
        tir.for %r = 0 to 4 {
          tir.if %i < 2 {
            %C[%i, %x - 1] = %C[%i, %x - 1] + %K[%r] * cast<f32>(%x)
          }
        }
      }
    }
  }
}
`

func TestVectorAccessPatterns(t *testing.T) {
	res, _ := checkAgainstInterp(t, parseModule(t, vecAccessText), "vacc", Options{}, 9, 0)
	ll := res.LLVM()
	assert.Contains(t, ll, "store <16 x float>", "contiguous store through the let")
	assert.Contains(t, ll, "extractelement <16 x i64>", "gather/scatter addresses")
}

// Lane-dependent conditions are predicated: the tail of a 10-element loop
// in 4-lane vectors uses masked loads and stores (the driver's canaries
// catch stores out of bounds), masked gathers and scatters, an integer
// division whose inactive lanes would divide by zero, an else arm and a
// lane-dependent block predicate.
const predText = `tir.func @pred(%A: buffer<10xi32>, %D: buffer<10xi32>, %F: buffer<10xf32>, out %B: buffer<10xi32>, out %C: buffer<12xf32>, out %G: buffer<20xf32>, out %E: buffer<10xf32>) {
  tir.for %io = 0 to 3 {
    tir.for %ii = 0 to 4 vectorized {
      tir.if %io * 4 + %ii < 10 {
        tir.let %x = %A[%io * 4 + %ii] {
          %B[%io * 4 + %ii] = %x * %x - floordiv(%x, %D[%io * 4 + %ii]) + floormod(%x, %D[%io * 4 + %ii])
          %C[%io * 4 + %ii] = %F[9 - (%io * 4 + %ii)]
          %G[(%io * 4 + %ii) * 2] = %F[%io * 4 + %ii] + 1.0
          %G[(%io * 4 + %ii) * 2 + 1] = 0.0
        }
      } else {
        %C[%io * 4 + %ii] = -1.0
      }
    }
  }
  tir.for %jo = 0 to 3 {
    tir.for %ji = 0 to 4 vectorized {
      tir.block "P"(%v = spatial(0:10, %jo * 4 + %ji)) where(%jo * 4 + %ji < 10) reads(%F[%v]) writes(%E[%v]) {
        %E[%v] = %F[%v] * 2.0
      }
    }
  }
}
`

func TestPredicatedVectorTail(t *testing.T) {
	m := parseModule(t, predText)
	exportAll(m)
	so, res := buildShared(t, m, Options{})
	ll := res.LLVM()
	assert.Contains(t, ll, "@llvm.masked.load.v4i32.p0v4i32")
	assert.Contains(t, ll, "@llvm.masked.store.v4f32.p0v4f32")
	f := m.Func("pred")
	for seed := int64(0); seed < 3; seed++ {
		args := randomArgs(f, rand.New(rand.NewSource(seed)))
		for i, d := range args.Arrays["D"].Ints {
			if d == 0 {
				args.Arrays["D"].Ints[i] = -7
			}
		}
		want := cloneArgs(args)
		require.NoError(t, tir.RunArgs(f, want))
		runShared(t, so, "pred", f, args)
		assertClose(t, want, args, 0)
	}
}

// Loops with i32 variables (built in Go): a parallel loop (its i64 range
// truncated in the outlined body) around a vectorized one, on f16 data
// (half arithmetic, exp computed in f32 and rounded).
func TestI32LoopVarsAndF16(t *testing.T) {
	a := tir.NewBuffer("A", tir.DF16, 6, 8)
	b := tir.NewBuffer("B", tir.DF16, 6, 8)
	i := tir.NewVar("i", tir.DI32)
	j := tir.NewVar("j", tir.DI32)
	idx := []tir.Expr{&tir.Cast{Type: tir.DIndex, X: i}, &tir.Cast{Type: tir.DIndex, X: j}}
	val := tir.Add(&tir.Call{Name: "exp", Args: []tir.Expr{tir.Load(a, idx...)}}, tir.Mul(tir.Load(a, idx...), tir.Float(tir.DF16, 0.5)))
	inner := &tir.For{Var: j, Min: tir.IntOf(tir.DI32, 0), Extent: tir.IntOf(tir.DI32, 8), Kind: tir.Vectorized,
		Body: &tir.BufferStore{Buffer: b, Value: val, Indices: idx}}
	outer := &tir.For{Var: i, Min: tir.IntOf(tir.DI32, 0), Extent: tir.IntOf(tir.DI32, 6), Kind: tir.Parallel, Body: inner}
	f := &tir.PrimFunc{Name: "h", Params: []*tir.Param{{Buffer: a, Role: tir.RoleIn}, {Buffer: b, Role: tir.RoleOut}}, Body: outer,
		Attrs: tir.Attrs{tir.AttrGlobalSymbol: tir.StringAttr("h")}}
	m := &tir.Module{Funcs: []*tir.PrimFunc{f}}
	res, report := checkAgainstInterp(t, m, "h", Options{}, 10, 1e-3, "TESSERA_NUM_THREADS=2")
	assert.Contains(t, res.LLVM(), "<8 x half>")
	assert.Equal(t, "rc=0 gomp=1 wait=unset spin="+GOMPSpinCount, report)
}

// Integer edge values: MinInt32 divided by -1 wraps, as in the
// interpreter; divisors of both signs.
func TestIntegerEdges(t *testing.T) {
	m := parseModule(t, intText)
	exportAll(m)
	so, _ := buildShared(t, m, Options{})
	f := m.Func("intops")
	args := randomArgs(f, rand.New(rand.NewSource(15)))
	edgesA := []int64{-2147483648, 2147483647, -1, 0, 1, -7, 7, -2147483648, 13, -13, 6, -6}
	edgesB := []int64{-1, -1, -1, 5, -5, 2, -2, 1, 4, 4, -4, -4}
	copy(args.Arrays["A"].Ints, edgesA)
	copy(args.Arrays["B"].Ints, edgesB)
	want := cloneArgs(args)
	require.NoError(t, tir.RunArgs(f, want))
	runShared(t, so, "intops", f, args)
	assertClose(t, want, args, 0)
}
