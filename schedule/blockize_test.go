package schedule

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/targets/llvm"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// An 8x8x12 GEMM: tiles of 4 divide every dimension.
const gemm8Src = `tir.func @gemm8(%A: buffer<8x12xf32>, %B: buffer<12x8xf32>, out %C: buffer<8x8xf32>) attributes {tessera.kernel} {
  tir.for %i = 0 to 8 {
    tir.for %j = 0 to 8 {
      tir.for %k = 0 to 12 {
        tir.block "C"(%vi = spatial(0:8, %i), %vj = spatial(0:8, %j), %vk = reduce(0:12, %k)) reads(%A[%vi, %vk], %B[%vk, %vj]) writes(%C[%vi, %vj]) {
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

func gemm8(t testing.TB) *tir.PrimFunc { return parseFunc(t, gemm8Src) }

// tile4 splits the three loops of gemm8's "C" by 4 and reorders them
// i_0, j_0, k_0, i_1, j_1, k_1; it returns the six loops.
func tile4(t *testing.T, s *Schedule) []LoopRV {
	ls := mustLoops(t, s, "C")
	var outer, inner []LoopRV
	for _, l := range ls {
		p, err := s.Split(l, []int64{-1, 4})
		require.NoError(t, err)
		outer, inner = append(outer, p[0]), append(inner, p[1])
	}
	all := append(outer, inner...)
	require.NoError(t, s.Reorder(all...))
	return all
}

func TestBlockizePrinted(t *testing.T) {
	s := New(parseFunc(t, gemmSrc))
	ls := mustLoops(t, s, "C")
	i, err := s.Split(ls[0], []int64{4, 4})
	require.NoError(t, err)
	k, err := s.Split(ls[2], []int64{3, 4})
	require.NoError(t, err)
	require.NoError(t, s.Reorder(i[0], ls[1], k[0], i[1], k[1]))
	o, err := s.Blockize(i[1])
	require.NoError(t, err)
	assert.Equal(t, BlockRV{Name: "C_o"}, o)
	want := `tir.func @gemm(%A: buffer<16x12xf32>, %B: buffer<12x10xf32>, out %C: buffer<16x10xf32>) attributes {tessera.kernel} {
  tir.for %i_0 = 0 to 4 {
    tir.for %j = 0 to 10 {
      tir.for %k_0 = 0 to 3 {
        tir.block "C_o"(%vi_o = spatial(0:4, %i_0), %vj_o = spatial(0:10, %j), %vk_o = reduce(0:3, %k_0)) reads(%A[%vi_o * 4:%vi_o * 4 + 4, %vk_o * 4:%vk_o * 4 + 4], %B[%vk_o * 4:%vk_o * 4 + 4, %vj_o]) writes(%C[%vi_o * 4:%vi_o * 4 + 4, %vj_o]) annotations {tessera.accumulate} {
          tir.for %i_1 = 0 to 4 {
            tir.for %k_1 = 0 to 4 {
              tir.block "C"(%vi = spatial(0:16, %vi_o * 4 + %i_1), %vj = spatial(0:10, %vj_o), %vk = reduce(0:12, %vk_o * 4 + %k_1)) reads(%A[%vi, %vk], %B[%vk, %vj]) writes(%C[%vi, %vj]) {
                tir.init {
                  %C[%vi, %vj] = 0.0
                }
                %C[%vi, %vj] = %C[%vi, %vj] + %A[%vi, %vk] * %B[%vk, %vj]
              }
            }
          }
        }
      }
    }
  }
}
`
	assert.Equal(t, want, printed(s.Func()))
	checkSame(t, s)
}

func TestTensorizePrinted(t *testing.T) {
	s := New(gemm8(t))
	ls := tile4(t, s)
	_, err := s.DecomposeReduction(block(t, s, "C"), ls[2])
	require.NoError(t, err)
	o, err := s.Tensorize(ls[3], IntrinDot4x4x4F32)
	require.NoError(t, err)
	assert.Equal(t, BlockRV{Name: "C_o"}, o)
	want := `      tir.for %k_0 = 0 to 3 {
        tir.block "C_o"(%vi_o = spatial(0:2, %i_0), %vj_o = spatial(0:2, %j_0), %vk_o = reduce(0:3, %k_0)) reads(%A[%vi_o * 4:%vi_o * 4 + 4, %vk_o * 4:%vk_o * 4 + 4], %B[%vk_o * 4:%vk_o * 4 + 4, %vj_o * 4:%vj_o * 4 + 4]) writes(%C[%vi_o * 4:%vi_o * 4 + 4, %vj_o * 4:%vj_o * 4 + 4]) annotations {tessera.accumulate, tessera.tensorized = "dot_4x4x4_f32"} {
          tir.for %k = 0 to 4 unrolled {
            tir.for %i = 0 to 4 unrolled {
              tir.for %j = 0 to 4 vectorized {
                tir.block "C"(%vi = spatial(0:4, %i), %vj = spatial(0:4, %j), %vk = reduce(0:4, %k)) reads(%C[%vi_o * 4 + %vi, %vj_o * 4 + %vj], %A[%vi_o * 4 + %vi, %vk_o * 4 + %vk], %B[%vk_o * 4 + %vk, %vj_o * 4 + %vj]) writes(%C[%vi_o * 4 + %vi, %vj_o * 4 + %vj]) annotations {tessera.accumulate} {
                  %C[%vi_o * 4 + %vi, %vj_o * 4 + %vj] = %C[%vi_o * 4 + %vi, %vj_o * 4 + %vj] + %A[%vi_o * 4 + %vi, %vk_o * 4 + %vk] * %B[%vk_o * 4 + %vk, %vj_o * 4 + %vj]
                }
              }
            }
          }
        }
      }
`
	assert.Contains(t, printed(s.Func()), want)
	data, err := s.Trace().JSON()
	require.NoError(t, err)
	assert.Contains(t, string(data), `{"kind":"tensorize","inputs":["l5"],"attrs":{"intrin":"dot_4x4x4_f32"},"outputs":["b12"]}`)
	checkSame(t, s)
}

var blockizeScenarios = []scenario{
	{"blockize gemm tile", "gemm", func(t *testing.T, s *Schedule) {
		ls := mustLoops(t, s, "C")
		_, err := s.Blockize(ls[1])
		require.NoError(t, err)
	}},
	{"blockize guarded tail", "gemm", func(t *testing.T, s *Schedule) {
		ls := mustLoops(t, s, "C")
		j, err := s.Split(ls[1], []int64{-1, 4})
		require.NoError(t, err)
		_, err = s.Blockize(j[1])
		require.NoError(t, err)
	}},
	{"blockize whole nest", "conv", func(t *testing.T, s *Schedule) {
		_, err := s.Blockize(mustLoops(t, s, "conv")[0])
		require.NoError(t, err)
	}},
	{"blockize conv window then parallel", "conv", func(t *testing.T, s *Schedule) {
		ls := mustLoops(t, s, "conv")
		require.NoError(t, s.Parallel(ls[0]))
		_, err := s.Blockize(ls[3])
		require.NoError(t, err)
	}},
	{"blockize pooling window", "pool", func(t *testing.T, s *Schedule) {
		ls := mustLoops(t, s, "pool")
		y, err := s.Split(ls[1], []int64{-1, 2})
		require.NoError(t, err)
		require.NoError(t, s.Reorder(y[1], ls[2]))
		_, err = s.Blockize(ls[2])
		require.NoError(t, err)
	}},
	{"blockize twice", "gemm", func(t *testing.T, s *Schedule) {
		ls := mustLoops(t, s, "C")
		_, err := s.Blockize(ls[2])
		require.NoError(t, err)
		_, err = s.Blockize(ls[0])
		require.NoError(t, err)
	}},
	{"blockize elementwise", "chain", func(t *testing.T, s *Schedule) {
		ls := mustLoops(t, s, "relu")
		j, err := s.Split(ls[1], []int64{2, 7})
		require.NoError(t, err)
		_, err = s.Blockize(j[1])
		require.NoError(t, err)
	}},
}

func TestBlockizeNumerics(t *testing.T) {
	for _, sc := range blockizeScenarios {
		t.Run(sc.name, func(t *testing.T) {
			s := New(locWorkload(t, sc.workload))
			sc.apply(t, s)
			require.Contains(t, s.Trace().String(), "blockize")
			checkSame(t, s)
		})
	}
}

func TestTensorizeNumerics(t *testing.T) {
	for name, apply := range map[string]func(t *testing.T, s *Schedule){
		"tiled": func(t *testing.T, s *Schedule) {
			ls := tile4(t, s)
			_, err := s.DecomposeReduction(block(t, s, "C"), ls[2])
			require.NoError(t, err)
			_, err = s.Tensorize(ls[3], IntrinDot4x4x4F32)
			require.NoError(t, err)
		},
		"parallel outer, init at the top": func(t *testing.T, s *Schedule) {
			ls := tile4(t, s)
			_, err := s.DecomposeReduction(block(t, s, "C"), ls[0])
			require.NoError(t, err)
			require.NoError(t, s.Parallel(ls[0]))
			_, err = s.Tensorize(ls[3], IntrinDot4x4x4F32)
			require.NoError(t, err)
		},
		"tail tiles, guards lifted": func(t *testing.T, s *Schedule) {
			// tiles of 3·4 rows over 8 and of 2·4 over the reduction's 12:
			// the guards ... + i_2 < 8 and ... + k_2 < 12 move to the
			// tensorized block without their inner loops' terms
			ls := mustLoops(t, s, "C")
			i, err := s.Split(ls[0], []int64{-1, 3, 4})
			require.NoError(t, err)
			j, err := s.Split(ls[1], []int64{-1, 4})
			require.NoError(t, err)
			k, err := s.Split(ls[2], []int64{-1, 2, 4})
			require.NoError(t, err)
			require.NoError(t, s.Reorder(i[0], j[0], k[0], i[1], k[1], i[2], j[1], k[2]))
			_, err = s.DecomposeReduction(block(t, s, "C"), k[0])
			require.NoError(t, err)
			_, err = s.Tensorize(i[2], IntrinDot4x4x4F32)
			require.NoError(t, err)
			require.Contains(t, printed(s.Func()), "tir.block \"C_o\"")
			require.Contains(t, printed(s.Func()), "where(%k_0 * 8 + %k_1 * 4 < 12 && %i_0 * 12 + %i_1 * 4 < 8)")
		},
		"cached A": func(t *testing.T, s *Schedule) {
			ls := tile4(t, s)
			_, err := s.DecomposeReduction(block(t, s, "C"), ls[2])
			require.NoError(t, err)
			_, err = s.CacheRead(block(t, s, "C"), 0, "local")
			require.NoError(t, err)
			_, err = s.Tensorize(ls[3], IntrinDot4x4x4F32)
			require.NoError(t, err)
		},
	} {
		t.Run(name, func(t *testing.T) {
			s := New(gemm8(t))
			apply(t, s)
			require.Contains(t, printed(s.Func()), `tessera.tensorized = "dot_4x4x4_f32"`)
			checkSame(t, s)
		})
	}
}

// TestTensorizeCommuted: the operands of a commutative operator match
// the description's in either order (B·A, and the accumulator added
// last), whatever binds first; a non-commutative one does not.
func TestTensorizeCommuted(t *testing.T) {
	for _, body := range []string{
		"%C[%vi, %vj] = %C[%vi, %vj] + %B[%vk, %vj] * %A[%vi, %vk]",
		"%C[%vi, %vj] = %B[%vk, %vj] * %A[%vi, %vk] + %C[%vi, %vj]",
		"%C[%vi, %vj] = %A[%vi, %vk] * %B[%vk, %vj] + %C[%vi, %vj]",
	} {
		t.Run(body, func(t *testing.T) {
			src := strings.Replace(gemm8Src, "%C[%vi, %vj] = %C[%vi, %vj] + %A[%vi, %vk] * %B[%vk, %vj]", body, 1)
			require.NotEqual(t, gemm8Src, src)
			s := New(parseFunc(t, src))
			ls := tile4(t, s)
			_, err := s.DecomposeReduction(block(t, s, "C"), ls[2])
			require.NoError(t, err)
			_, err = s.Tensorize(ls[3], IntrinDot4x4x4F32)
			require.NoError(t, err)
			checkSame(t, s)
		})
	}
	src := strings.Replace(gemm8Src, "%C[%vi, %vj] + %A[%vi, %vk] * %B[%vk, %vj]", "%A[%vi, %vk] * %B[%vk, %vj] - %C[%vi, %vj]", 1)
	s := New(parseFunc(t, src))
	ls := tile4(t, s)
	_, err := s.DecomposeReduction(block(t, s, "C"), ls[2])
	require.NoError(t, err)
	_, err = s.Tensorize(ls[3], IntrinDot4x4x4F32)
	require.ErrorContains(t, err, "differs from the description's")
}

func TestTensorizeReplayEditedIntrin(t *testing.T) {
	s := New(gemm8(t))
	ls := tile4(t, s)
	_, err := s.DecomposeReduction(block(t, s, "C"), ls[2])
	require.NoError(t, err)
	_, err = s.Tensorize(ls[3], IntrinDot4x4x4F32)
	require.NoError(t, err)
	data, err := s.Trace().JSON()
	require.NoError(t, err)
	tr, err := ParseTrace([]byte(strings.Replace(string(data), `"intrin":"dot_4x4x4_f32"`, `"intrin":"nope"`, 1)))
	require.NoError(t, err)
	_, err = Replay(s.Original(), tr)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `tensorize: block "C", loop %i_1: no tensor intrinsic "nope" is registered (registered: [dot_4x4x4_f32`)
}

func TestRegisterTensorIntrin(t *testing.T) {
	assert.Contains(t, TensorIntrinNames(), IntrinDot4x4x4F32)
	in := LookupTensorIntrin(IntrinDot4x4x4F32)
	require.NotNil(t, in)
	assert.PanicsWithValue(t, `RegisterTensorIntrin("dot_4x4x4_f32"): already registered`, func() {
		RegisterTensorIntrin(IntrinDot4x4x4F32, in.Desc, in.Impl)
	})
	g := gemm8(t)
	assert.PanicsWithValue(t, `RegisterTensorIntrin("bad"): parameter 0: %A and %A differ in shape, dtype or role`, func() {
		RegisterTensorIntrin("bad", g, in.Impl)
	})
	// The implementation computes what the description computes.
	sameOutputs(t, interpretInOut(t, in.Desc), interpretInOut(t, in.Impl), "dot_4x4x4_f32")
}

// interpretInOut runs f on seeded random values of every buffer and
// returns the contents of its written parameters.
func interpretInOut(t *testing.T, f *tir.PrimFunc) map[string][]float64 {
	return interpret(t, f, 11)
}

func TestBlockizeTensorizeRefusals(t *testing.T) {
	cases := []struct {
		name  string
		src   string
		apply func(t *testing.T, s *Schedule) error
		want  string
		ir    string
	}{
		{"blockize sequence", chainSrc, func(t *testing.T, s *Schedule) error {
			ls := mustLoops(t, s, "relu")
			require.NoError(t, s.ComputeAt(block(t, s, "add"), ls[0]))
			_, err := s.Blockize(ls[0])
			return err
		}, `blockize: block "add", loop %i: the nest holds a sequence of 2 statements, not one block`, `tir.for %i = 0 to 6 {`},
		{"blockize fused binding", gemmSrc, func(t *testing.T, s *Schedule) error {
			ls := mustLoops(t, s, "C")
			f, err := s.Fuse(ls[0], ls[1])
			require.NoError(t, err)
			p, err := s.Split(f, []int64{-1, 8})
			require.NoError(t, err)
			_, err = s.Blockize(p[1])
			return err
		}, `blockize: block "C", loop %i_j_fused_1: the binding floordiv(%i_j_fused_0 * 8 + %i_j_fused_1, 10) of %vi is not divisible into an outer part and an inner part over [0, E) (outer loops + loops at or below %i_j_fused_1)`,
			`tir.for %i_j_fused_1 = 0 to 8 {`},
		{"blockize no loop", gemmSrc, func(t *testing.T, s *Schedule) error {
			_, err := s.Blockize(LoopRV{Var: tir.NewVar("x", tir.DIndex)})
			return err
		}, `blockize: loop %x: no such loop in @gemm`, ``},
		{"tensorize unknown", gemm8Src, func(t *testing.T, s *Schedule) error {
			_, err := s.Tensorize(mustLoops(t, s, "C")[0], "mma")
			return err
		}, `tensorize: block "C", loop %i: no tensor intrinsic "mma" is registered (registered: [dot_4x4x4_f32])`, `tir.for %i = 0 to 8 {`},
		{"tensorize init", gemm8Src, func(t *testing.T, s *Schedule) error {
			_, err := s.Tensorize(tile4(t, s)[3], IntrinDot4x4x4F32)
			return err
		}, `tensorize: block "C", loop %i_1: does not match intrinsic "dot_4x4x4_f32": the block has an init, the description accumulates (decompose_reduction first)`,
			`tir.for %i_1 = 0 to 4 {`},
		{"tensorize loop count", gemm8Src, func(t *testing.T, s *Schedule) error {
			ls := tile4(t, s)
			_, err := s.DecomposeReduction(block(t, s, "C"), ls[2])
			require.NoError(t, err)
			_, err = s.Tensorize(ls[4], IntrinDot4x4x4F32)
			return err
		}, `tensorize: block "C", loop %j_1: does not match intrinsic "dot_4x4x4_f32": the nest has 2 loops, the description 3`,
			`tir.for %j_1 = 0 to 4 {`},
		{"tensorize extent", gemm8Src, func(t *testing.T, s *Schedule) error {
			ls := mustLoops(t, s, "C")
			_, err := s.DecomposeReduction(block(t, s, "C"), ls[0])
			require.NoError(t, err)
			_, err = s.Tensorize(ls[0], IntrinDot4x4x4F32)
			return err
		}, `tensorize: block "C", loop %i: does not match intrinsic "dot_4x4x4_f32": loop %i runs over [0, 0 + 8), the description's loop %i over [0, 4)`,
			`tir.for %i = 0 to 8 {`},
		{"tensorize order", gemm8Src, func(t *testing.T, s *Schedule) error {
			ls := tile4(t, s)
			_, err := s.DecomposeReduction(block(t, s, "C"), ls[2])
			require.NoError(t, err)
			require.NoError(t, s.Reorder(ls[4], ls[3]))
			_, err = s.Tensorize(ls[4], IntrinDot4x4x4F32)
			return err
		}, `tensorize: block "C", loop %j_1: does not match intrinsic "dot_4x4x4_f32": %vi is bound to %i_1, the description's %vi to %j_1`,
			`tir.for %j_1 = 0 to 4 {`},
		{"tensorize tail", gemmSrc, func(t *testing.T, s *Schedule) error {
			ls := mustLoops(t, s, "C")
			var in []LoopRV
			var out []LoopRV
			for _, l := range ls {
				p, err := s.Split(l, []int64{-1, 4})
				require.NoError(t, err)
				out, in = append(out, p[0]), append(in, p[1])
			}
			require.NoError(t, s.Reorder(append(out, in...)...))
			_, err := s.DecomposeReduction(block(t, s, "C"), out[2])
			require.NoError(t, err)
			_, err = s.Tensorize(in[0], IntrinDot4x4x4F32)
			return err
		}, `tensorize: block "C", loop %i_1: does not match intrinsic "dot_4x4x4_f32": the block has a predicate %j_0 * 4 + %j_1 < 10 (a guarded tail); the intrinsic computes whole tiles`,
			`tir.for %i_1 = 0 to 4 {`},
		{"tensorize operator", strings.Replace(gemm8Src, "] + %A[", "] - %A[", 1), func(t *testing.T, s *Schedule) error {
			ls := tile4(t, s)
			_, err := s.DecomposeReduction(block(t, s, "C"), ls[2])
			require.NoError(t, err)
			_, err = s.Tensorize(ls[3], IntrinDot4x4x4F32)
			return err
		}, `tensorize: block "C", loop %i_1: does not match intrinsic "dot_4x4x4_f32": the stored value %C[%vi, %vj] - %A[%vi, %vk] * %B[%vk, %vj] differs from the description's %C[%vi, %vj] + %A[%vi, %vk] * %B[%vk, %vj]`,
			`tir.for %i_1 = 0 to 4 {`},
		{"tensorize transposed access", strings.ReplaceAll(strings.ReplaceAll(gemm8Src, "%B[%vk, %vj]", "%B[%vj, %vk]"), "buffer<12x8xf32>", "buffer<8x12xf32>"), func(t *testing.T, s *Schedule) error {
			ls := tile4(t, s)
			_, err := s.DecomposeReduction(block(t, s, "C"), ls[2])
			require.NoError(t, err)
			_, err = s.Tensorize(ls[3], IntrinDot4x4x4F32)
			return err
		}, `tensorize: block "C", loop %i_1: does not match intrinsic "dot_4x4x4_f32": the stored value %C[%vi, %vj] + %A[%vi, %vk] * %B[%vj, %vk] differs from the description's %C[%vi, %vj] + %A[%vi, %vk] * %B[%vk, %vj]`,
			`tir.for %i_1 = 0 to 4 {`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New(parseFunc(t, c.src))
			err := c.apply(t, s)
			require.Error(t, err)
			var se *Error
			require.True(t, errors.As(err, &se), "%T", err)
			lines := strings.Split(err.Error(), "\n")
			assert.Equal(t, c.want, lines[0])
			if c.ir != "" {
				require.Greater(t, len(lines), 1, "no IR rendered")
				assert.Equal(t, "  "+c.ir, lines[1])
			}
			assert.NotContains(t, err.Error(), "not rendered")
			checkSame(t, s)
		})
	}
}

// TestBlockizeLayoutPadCompiled compiles the blockize, tensorize,
// transform_layout and pad_einsum scenarios with targets/cpu into one
// shared object and runs each through the C driver against the
// interpreter on the unscheduled function.
func TestBlockizeLayoutPadCompiled(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles with llc/lld")
	}
	type named struct {
		name string
		s    *Schedule
	}
	var all []named
	for _, group := range [][]scenario{blockizeScenarios, layoutScenarios, padEinsumScenarios} {
		for _, sc := range group {
			s := New(locWorkload(t, sc.workload))
			sc.apply(t, s)
			all = append(all, named{sc.name, s})
		}
	}
	s := New(gemm8(t))
	ls := tile4(t, s)
	_, err := s.DecomposeReduction(block(t, s, "C"), ls[2])
	require.NoError(t, err)
	require.NoError(t, s.Parallel(ls[0]))
	_, err = s.Tensorize(ls[3], IntrinDot4x4x4F32)
	require.NoError(t, err)
	all = append(all, named{"tensorize gemm8", s})

	dir, drv := buildDriver(t, driverSrc)
	m := &tir.Module{}
	var fs []*tir.PrimFunc
	for i, n := range all {
		f := *n.s.Func()
		f.Name = fmt.Sprintf("sched_%d", i)
		f.Attrs = copyAttrs(f.Attrs)
		f.Attrs[tir.AttrGlobalSymbol] = tir.StringAttr(f.Name)
		require.NoError(t, m.Add(&f))
		fs = append(fs, &f)
	}
	res, err := compileCPU(m, llvm.Options{})
	require.NoError(t, err)
	so := filepath.Join(dir, "k.so")
	require.NoError(t, res.WriteShared(so))
	for i, f := range fs {
		want := interpret(t, all[i].s.Original(), 9)
		inputs := randomInputs(t, f, 9)
		var files []string
		for _, p := range f.Params {
			path := filepath.Join(dir, f.Name+"_"+p.Buffer.Name+".bin")
			require.NoError(t, os.WriteFile(path, f32bytes(inputs[p.Buffer.Name]), 0o644))
			files = append(files, path)
		}
		out, err := exec.Command(drv, append([]string{so, f.Name}, files...)...).CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "rc=0")
		got := map[string][]float64{}
		for j, p := range f.Params {
			if p.Role == tir.RoleIn {
				continue
			}
			b, err := os.ReadFile(files[j])
			require.NoError(t, err)
			got[p.Buffer.Name] = fromF32bytes(b)
		}
		sameOutputs(t, want, got, all[i].name+"\n"+printed(f))
	}
}
