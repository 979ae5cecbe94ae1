package schedule

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

func TestSplitNonDividingPrintsGuard(t *testing.T) {
	s := New(parseFunc(t, chainSrc))
	ls := mustLoops(t, s, "relu")
	out, err := s.Split(ls[1], []int64{-1, 4})
	require.NoError(t, err)
	require.Len(t, out, 2)
	assert.Equal(t, "j_0", out[0].Name())
	assert.Equal(t, "j_1", out[1].Name())
	assert.Equal(t, `tir.func @ew(%A: buffer<6x14xf32>, %B: buffer<14xf32>, out %D: buffer<6x14xf32>) attributes {tessera.kernel} {
  tir.allocate %T: buffer<6x14xf32, "local"> {
    tir.for %i = 0 to 6 {
      tir.for %j = 0 to 14 {
        tir.block "add"(%vi = spatial(0:6, %i), %vj = spatial(0:14, %j)) reads(%A[%vi, %vj], %B[%vj]) writes(%T[%vi, %vj]) {
          %T[%vi, %vj] = %A[%vi, %vj] + %B[%vj]
        }
      }
    }
    tir.for %i = 0 to 6 {
      tir.for %j_0 = 0 to 4 {
        tir.for %j_1 = 0 to 4 {
          tir.block "relu"(%vi = spatial(0:6, %i), %vj = spatial(0:14, %j_0 * 4 + %j_1)) where(%j_0 * 4 + %j_1 < 14) reads(%T[%vi, %vj]) writes(%D[%vi, %vj]) {
            %D[%vi, %vj] = max(%T[%vi, %vj], 0.0) * 2.0
          }
        }
      }
    }
  }
}
`, printed(s.Func()))
	// The loop of "add" is untouched: its handle still resolves.
	_, err = s.FindLoop(mustLoops(t, s, "add")[1])
	require.NoError(t, err)
	checkSame(t, s)
}

func TestSplitDividingHasNoGuard(t *testing.T) {
	s := New(parseFunc(t, chainSrc))
	ls := mustLoops(t, s, "add")
	out, err := s.Split(ls[1], []int64{7, 2})
	require.NoError(t, err)
	text := printed(s.Func())
	assert.Contains(t, text, "tir.for %j_0 = 0 to 7 {\n        tir.for %j_1 = 0 to 2 {\n          tir.block \"add\"(%vi = spatial(0:6, %i), %vj = spatial(0:14, %j_0 * 2 + %j_1)) reads(")
	assert.NotContains(t, text, "where(")
	// A three-way split of an inner piece, with one inferred factor.
	_, err = s.Split(out[0], []int64{2, -1, 2})
	require.NoError(t, err)
	text = printed(s.Func())
	assert.Contains(t, text, `%vj = spatial(0:14, %j_0_0 * 8 + %j_0_1 * 4 + %j_0_2 * 2 + %j_1)) where(%j_0_0 * 4 + %j_0_1 * 2 + %j_0_2 < 7)`)
	checkSame(t, s)
}

func TestFusePrintedIR(t *testing.T) {
	s := New(parseFunc(t, chainSrc))
	l, err := s.Fuse(mustLoops(t, s, "add")...)
	require.NoError(t, err)
	assert.Equal(t, "i_j_fused", l.Name())
	assert.Equal(t, `tir.func @ew(%A: buffer<6x14xf32>, %B: buffer<14xf32>, out %D: buffer<6x14xf32>) attributes {tessera.kernel} {
  tir.allocate %T: buffer<6x14xf32, "local"> {
    tir.for %i_j_fused = 0 to 84 {
      tir.block "add"(%vi = spatial(0:6, floordiv(%i_j_fused, 14)), %vj = spatial(0:14, floormod(%i_j_fused, 14))) reads(%A[%vi, %vj], %B[%vj]) writes(%T[%vi, %vj]) {
        %T[%vi, %vj] = %A[%vi, %vj] + %B[%vj]
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
`, printed(s.Func()))
	checkSame(t, s)
}

func TestFuseThreeLoopsOfConv(t *testing.T) {
	s := New(parseFunc(t, convSrc))
	ls := mustLoops(t, s, "conv")
	f, err := s.Fuse(ls[0], ls[1], ls[2])
	require.NoError(t, err)
	assert.Contains(t, printed(s.Func()), "tir.for %co_h_w_fused = 0 to 144 {")
	assert.Contains(t, printed(s.Func()), `%vco = spatial(0:4, floordiv(%co_h_w_fused, 36)), %vh = spatial(0:6, floormod(floordiv(%co_h_w_fused, 6), 6)), %vw = spatial(0:6, floormod(%co_h_w_fused, 6))`)
	r, err := s.Fuse(ls[3], ls[4], ls[5])
	require.NoError(t, err)
	assert.Equal(t, "ci_kh_kw_fused", r.Name())
	require.NoError(t, s.Parallel(f))
	checkSame(t, s)
}

func TestReorderPrintedIR(t *testing.T) {
	s := New(parseFunc(t, chainSrc))
	ls := mustLoops(t, s, "add")
	require.NoError(t, s.Reorder(ls[1], ls[0]))
	assert.Equal(t, `tir.func @ew(%A: buffer<6x14xf32>, %B: buffer<14xf32>, out %D: buffer<6x14xf32>) attributes {tessera.kernel} {
  tir.allocate %T: buffer<6x14xf32, "local"> {
    tir.for %j = 0 to 14 {
      tir.for %i = 0 to 6 {
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
`, printed(s.Func()))
	checkSame(t, s)
}

func TestReorderKeepsLoopsNotGiven(t *testing.T) {
	s := New(parseFunc(t, convSrc))
	ls := mustLoops(t, s, "conv")
	// co h w ci kh kw → kw h w ci kh co: the given loops swap places,
	// h w ci kh stay.
	require.NoError(t, s.Reorder(ls[5], ls[0]))
	got := mustLoops(t, s, "conv")
	names := []string{}
	for _, l := range got {
		names = append(names, l.Name())
	}
	assert.Equal(t, []string{"kw", "h", "w", "ci", "kh", "co"}, names)
	// Loop kinds and annotations travel with their loops.
	require.NoError(t, s.Parallel(got[1]))
	require.NoError(t, s.Annotate(got[2], "pragma", tir.IntAttr(4)))
	require.NoError(t, s.Reorder(got[2], got[1]))
	assert.Contains(t, printed(s.Func()), "tir.for %w = 0 to 6 annotations {pragma = 4} {\n      tir.for %h = 0 to 6 parallel {")
	checkSame(t, s)
}

func TestTileGEMM(t *testing.T) {
	s := New(parseFunc(t, gemmSrc))
	ls := mustLoops(t, s, "C")
	tiled, err := s.Tile(ls, [][]int64{{4, 4}, {-1, 5}, {3, 4}})
	require.NoError(t, err)
	require.Len(t, tiled, 6)
	assert.Equal(t, `tir.func @gemm(%A: buffer<16x12xf32>, %B: buffer<12x10xf32>, out %C: buffer<16x10xf32>) attributes {tessera.kernel} {
  tir.for %i_0 = 0 to 4 {
    tir.for %j_0 = 0 to 2 {
      tir.for %k_0 = 0 to 3 {
        tir.for %i_1 = 0 to 4 {
          tir.for %j_1 = 0 to 5 {
            tir.for %k_1 = 0 to 4 {
              tir.block "C"(%vi = spatial(0:16, %i_0 * 4 + %i_1), %vj = spatial(0:10, %j_0 * 5 + %j_1), %vk = reduce(0:12, %k_0 * 4 + %k_1)) reads(%A[%vi, %vk], %B[%vk, %vj]) writes(%C[%vi, %vj]) {
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
`, printed(s.Func()))
	assert.Equal(t, `b0 = get_block(name="C")
l1, l2, l3 = get_loops(b0)
l4, l5 = split(l1, factors=[4,4])
l6, l7 = split(l2, factors=[-1,5])
l8, l9 = split(l3, factors=[3,4])
reorder(l4, l6, l8, l5, l7, l9)
`, s.Trace().String())
	checkSame(t, s)
}

func TestSplitFuseReorderNumerics(t *testing.T) {
	for name, src := range workloads {
		t.Run(name, func(t *testing.T) {
			for _, fs := range [][]int64{{-1, 3}, {2, -1}, {4, 1, -1}, {1, -1}, {-1, 1}, {5, 5}} {
				s := New(parseFunc(t, src))
				blk := firstBlock(s.Func().Body)
				ls := mustLoops(t, s, blk)
				out2, err := s.Split(ls[0], []int64{-1, 4})
				require.NoError(t, err)
				fused, err := s.Fuse(out2...)
				require.NoError(t, err)
				out, err := s.Split(ls[len(ls)-1], fs)
				require.NoError(t, err)
				if len(ls) > 2 {
					require.NoError(t, s.Reorder(out[0], fused))
				}
				checkSame(t, s)
			}
		})
	}
}

func TestLoopErrors(t *testing.T) {
	chainAdd := `  tir.for %j = 0 to 14 {
    tir.block "add"(%vi = spatial(0:6, %i), %vj = spatial(0:14, %j)) reads(%A[%vi, %vj], %B[%vj]) writes(%T[%vi, %vj]) {
      %T[%vi, %vj] = %A[%vi, %vj] + %B[%vj]
    }
  }`
	chainAddI := `  tir.for %i = 0 to 6 {
    tir.for %j = 0 to 14 {
      tir.block "add"(%vi = spatial(0:6, %i), %vj = spatial(0:14, %j)) reads(%A[%vi, %vj], %B[%vj]) writes(%T[%vi, %vj]) {
        %T[%vi, %vj] = %A[%vi, %vj] + %B[%vj]
      }
    }
  }`
	cases := []struct {
		name string
		do   func(s *Schedule, add, relu []LoopRV) error
		want string
	}{
		{"split/short", func(s *Schedule, add, _ []LoopRV) error {
			_, err := s.Split(add[1], []int64{2, 3})
			return err
		}, "split: block \"add\", loop %j: factors [2, 3] multiply to 6, less than the extent 14\n" + chainAdd},
		{"split/zero", func(s *Schedule, add, _ []LoopRV) error {
			_, err := s.Split(add[1], []int64{0, 3})
			return err
		}, "split: block \"add\", loop %j: factors [0, 3]: factor 0 is not positive\n" + chainAdd},
		{"split/negative", func(s *Schedule, add, _ []LoopRV) error {
			_, err := s.Split(add[1], []int64{-2, 3})
			return err
		}, "split: block \"add\", loop %j: factors [-2, 3]: factor -2 is not positive\n" + chainAdd},
		{"split/two-inferred", func(s *Schedule, add, _ []LoopRV) error {
			_, err := s.Split(add[1], []int64{-1, -1})
			return err
		}, "split: block \"add\", loop %j: factors [-1, -1]: only one factor can be inferred (-1)\n" + chainAdd},
		{"split/one-factor", func(s *Schedule, add, _ []LoopRV) error {
			_, err := s.Split(add[1], []int64{7})
			return err
		}, "split: block \"add\", loop %j: needs at least two factors, have [7]\n" + chainAdd},
		{"split/unknown", func(s *Schedule, _, _ []LoopRV) error {
			_, err := s.Split(LoopRV{Var: tir.NewVar("zz", tir.DIndex)}, []int64{7, 2})
			return err
		}, "split: loop %zz: no such loop in @ew"},
		{"fuse/not-adjacent", func(s *Schedule, add, relu []LoopRV) error {
			_, err := s.Fuse(add[0], relu[1])
			return err
		}, "fuse: block \"add\", loop %i: loop %j is not the only statement in the body of loop %i (loops must be consecutive and perfectly nested)\n" + chainAddI},
		{"fuse/wrong-order", func(s *Schedule, add, _ []LoopRV) error {
			_, err := s.Fuse(add[1], add[0])
			return err
		}, "fuse: block \"add\", loop %j: loop %i is not the only statement in the body of loop %j (loops must be consecutive and perfectly nested)\n" + chainAdd},
		{"fuse/one", func(s *Schedule, add, _ []LoopRV) error {
			_, err := s.Fuse(add[0])
			return err
		}, "fuse: needs at least two loops, have 1"},
		{"reorder/different-nests", func(s *Schedule, add, relu []LoopRV) error {
			return s.Reorder(add[0], relu[1])
		}, "reorder: block \"add\", loop %i: the loops %i, %j are not nested in one another\n" + chainAddI},
		{"reorder/duplicate", func(s *Schedule, add, _ []LoopRV) error {
			return s.Reorder(add[0], add[0])
		}, "reorder: block \"add\", loop %i: loop %i is given twice\n" + chainAddI},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New(parseFunc(t, chainSrc))
			add, relu := mustLoops(t, s, "add"), mustLoops(t, s, "relu")
			before := printed(s.Func())
			n := len(s.Trace().Insts)
			err := c.do(s, add, relu)
			require.Error(t, err)
			var se *Error
			require.ErrorAs(t, err, &se)
			assert.Equal(t, c.want, err.Error())
			// A refusal changes nothing.
			assert.Equal(t, before, printed(s.Func()))
			assert.Len(t, s.Trace().Insts, n)
		})
	}
}

func TestImperfectNestErrors(t *testing.T) {
	src := `tir.func @f(%A: buffer<4x6xf32>, out %B: buffer<4x6xf32>, out %S: buffer<4xf32>) {
  tir.for %i = 0 to 4 {
    tir.block "zero"(%vi = spatial(0:4, %i)) writes(%S[%vi]) {
      %S[%vi] = 0.0
    }
    tir.for %j = 0 to 6 {
      tir.block "copy"(%vi = spatial(0:4, %i), %vj = spatial(0:6, %j)) reads(%A[%vi, %vj]) writes(%B[%vi, %vj]) {
        %B[%vi, %vj] = %A[%vi, %vj]
      }
    }
  }
  tir.for %t = 1 to 3 {
    tir.for %u = 0 to 2 {
      tir.block "tri"(%vt = spatial(0:4, %t), %vu = spatial(0:6, %u)) writes(%B[%vt, %vu]) {
        %B[%vt, %vu] = 1.0
      }
    }
  }
}
`
	s := New(parseFunc(t, src))
	ls := mustLoops(t, s, "copy")
	err := s.Reorder(ls[1], ls[0])
	require.Error(t, err)
	assert.Equal(t, `reorder: block "zero", loop %i: loop %i holds more than loop %j (the loops between %i and %j are not perfectly nested)
  tir.for %i = 0 to 4 {
    tir.block "zero"(%vi = spatial(0:4, %i)) writes(%S[%vi]) {
      %S[%vi] = 0.0
    }
    tir.for %j = 0 to 6 {
      tir.block "copy"(%vi = spatial(0:4, %i), %vj = spatial(0:6, %j)) reads(%A[%vi, %vj]) writes(%B[%vi, %vj]) {
        %B[%vi, %vj] = %A[%vi, %vj]
      }
    }
  }`, err.Error())
	_, err = s.Fuse(ls...)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `fuse: block "zero", loop %i: loop %j is not the only statement in the body of loop %i (loops must be consecutive and perfectly nested)`)
	tri := mustLoops(t, s, "tri")
	_, err = s.Fuse(tri...)
	require.Error(t, err)
	assert.Equal(t, `fuse: block "tri", loop %t: the loop starts at 1, not 0
  tir.for %t = 1 to 3 {
    tir.for %u = 0 to 2 {
      tir.block "tri"(%vt = spatial(0:4, %t), %vu = spatial(0:6, %u)) writes(%B[%vt, %vu]) {
        %B[%vt, %vu] = 1.0
      }
    }
  }`, err.Error())
	// A loop with a non-zero minimum splits around its minimum.
	_, err = s.Split(tri[0], []int64{-1, 3})
	require.NoError(t, err)
	assert.Contains(t, printed(s.Func()), `%vt = spatial(0:4, %t_0 * 3 + %t_1 + 1), %vu = spatial(0:6, %u)) where(%t_0 * 3 + %t_1 < 2)`)
	checkSame(t, s)
}

func TestReorderDependentBounds(t *testing.T) {
	src := `tir.func @f(out %B: buffer<4x4xf32>) {
  tir.for %i = 0 to 4 {
    tir.for %j = 0 to %i + 1 {
      tir.block "lower"(%vi = spatial(0:4, %i), %vj = spatial(0:4, %j)) writes(%B[%vi, %vj]) {
        %B[%vi, %vj] = 1.0
      }
    }
  }
}
`
	s := New(parseFunc(t, src))
	ls := mustLoops(t, s, "lower")
	err := s.Reorder(ls[1], ls[0])
	require.Error(t, err)
	assert.Equal(t, `reorder: block "lower", loop %j: the bounds of loop %j depend on loop %i, which would be moved inside it
  tir.for %i = 0 to 4 {
    tir.for %j = 0 to %i + 1 {
      tir.block "lower"(%vi = spatial(0:4, %i), %vj = spatial(0:4, %j)) writes(%B[%vi, %vj]) {
        %B[%vi, %vj] = 1.0
      }
    }
  }`, err.Error())
	_, err = s.Fuse(ls...)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `fuse: block "lower", loop %j: the extent %i + 1 depends on the fused loop %i`)
	// The extent %i + 1 is at most 4: constant factors must cover that.
	_, err = s.Split(ls[1], []int64{1, 3})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `split: block "lower", loop %j: factors [1, 3] multiply to 3, which is not proven at least the extent %i + 1 (give one factor as -1 to infer it)`)
	_, err = s.Split(ls[1], []int64{2, 2})
	require.NoError(t, err)
	assert.Contains(t, printed(s.Func()), `where(%j_0 * 2 + %j_1 < %i + 1)`)
	checkSame(t, s)
}

func TestFuseSpatialReduceRefused(t *testing.T) {
	s := New(parseFunc(t, gemmSrc))
	ls := mustLoops(t, s, "C")
	_, err := s.Fuse(ls[1], ls[2])
	require.Error(t, err)
	assert.Equal(t, `fuse: block "C", loop %j: loop %j feeds a spatial and loop %k a reduce iteration variable of the block; they cannot be fused
  tir.for %j = 0 to 10 {
    tir.for %k = 0 to 12 {
      tir.block "C"(%vi = spatial(0:16, %i), %vj = spatial(0:10, %j), %vk = reduce(0:12, %k)) reads(%A[%vi, %vk], %B[%vk, %vj]) writes(%C[%vi, %vj]) {
        tir.init {
          %C[%vi, %vj] = 0.0
        }
        %C[%vi, %vj] = %C[%vi, %vj] + %A[%vi, %vk] * %B[%vk, %vj]
      }
    }
  }`, err.Error())
}

// Tile and bind on every workload: interpreter results and trace replay.
func TestTileAndBindOnEveryWorkload(t *testing.T) {
	for _, name := range propertyWorkloads() {
		t.Run(name, func(t *testing.T) {
			s := New(parseFunc(t, workloadSrc(name)))
			blk := firstBlock(s.Func().Body)
			ls := mustLoops(t, s, blk)
			fs := make([][]int64, len(ls))
			for i := range fs {
				fs[i] = []int64{-1, int64(2 + i%3)} // non-dividing for most extents
			}
			tiled, err := s.Tile(ls, fs)
			require.NoError(t, err)
			require.Len(t, tiled, 2*len(ls))
			got := mustLoops(t, s, blk)
			for i := range tiled {
				assert.Equal(t, tiled[i].Var, got[i].Var)
			}
			require.NoError(t, s.Bind(got[0], "blockIdx.x"))
			checkSame(t, s)
		})
	}
}

// TestAddUnitLoop: add_unit_loop wraps a block or a loop in a unit loop
// (fresh names), binds to threads, replays from its trace and keeps the
// result; unknown targets are refused.
func TestAddUnitLoop(t *testing.T) {
	s := New(parseFunc(t, fullReduceSrc))
	u, err := s.AddUnitLoop(BlockRV{Name: "sum"})
	require.NoError(t, err)
	assert.Equal(t, "sum_unit", u.Name())
	loops := mustLoops(t, s, "sum")
	v, err := s.AddUnitLoop(loops[0])
	require.NoError(t, err)
	assert.Equal(t, "i_unit", v.Name())
	w, err := s.AddUnitLoop(v)
	require.NoError(t, err)
	assert.Equal(t, "i_unit_unit", w.Name())
	require.NoError(t, s.Bind(w, "blockIdx.x"))
	require.NoError(t, s.Bind(v, "threadIdx.x"))
	assert.Contains(t, printed(s.Func()), `tir.for %i_unit_unit = 0 to 1 thread_binding("blockIdx.x") {`)
	checkSame(t, s)
	checkReplay(t, s)

	_, err = s.AddUnitLoop(BlockRV{Name: "nope"})
	assert.ErrorContains(t, err, `add_unit_loop: block "nope": no such block in @total`)
	_, err = s.AddUnitLoop("sum")
	assert.ErrorContains(t, err, "the target must be a block or a loop, not string")
}
