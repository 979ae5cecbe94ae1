package schedule

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

func TestLoopKindsPrintedIR(t *testing.T) {
	s := New(parseFunc(t, gemmSrc))
	ls := mustLoops(t, s, "C")
	js, err := s.Split(ls[1], []int64{-1, 4})
	require.NoError(t, err)
	require.NoError(t, s.Parallel(ls[0]))
	require.NoError(t, s.Reorder(ls[2], js[1]))
	require.NoError(t, s.Vectorize(js[1]))
	require.NoError(t, s.Unroll(ls[2]))
	require.NoError(t, s.Annotate(js[0], "pragma_auto_unroll_max_step", tir.IntAttr(16)))
	require.NoError(t, s.Annotate(BlockRV{Name: "C"}, "meta_schedule.tiling_structure", tir.StringAttr("SSRSRS")))
	assert.Equal(t, `tir.func @gemm(%A: buffer<16x12xf32>, %B: buffer<12x10xf32>, out %C: buffer<16x10xf32>) attributes {tessera.kernel} {
  tir.for %i = 0 to 16 parallel {
    tir.for %j_0 = 0 to 3 annotations {pragma_auto_unroll_max_step = 16} {
      tir.for %k = 0 to 12 unrolled {
        tir.for %j_1 = 0 to 4 vectorized {
          tir.block "C"(%vi = spatial(0:16, %i), %vj = spatial(0:10, %j_0 * 4 + %j_1), %vk = reduce(0:12, %k)) where(%j_0 * 4 + %j_1 < 10) reads(%A[%vi, %vk], %B[%vk, %vj]) writes(%C[%vi, %vj]) annotations {meta_schedule.tiling_structure = "SSRSRS"} {
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
`, printed(s.Func()))
	checkSame(t, s)
	require.NoError(t, s.Unannotate(js[0], "pragma_auto_unroll_max_step"))
	require.NoError(t, s.Unannotate(BlockRV{Name: "C"}, "meta_schedule.tiling_structure"))
	assert.Contains(t, printed(s.Func()), "tir.for %j_0 = 0 to 3 {\n")
	assert.NotContains(t, printed(s.Func()), "annotations")
	checkSame(t, s)
}

func TestBindPrintedIR(t *testing.T) {
	s := New(parseFunc(t, chainSrc))
	ls := mustLoops(t, s, "relu")
	require.NoError(t, s.Bind(ls[0], "blockIdx.x"))
	out, err := s.Split(ls[1], []int64{2, 7})
	require.NoError(t, err)
	require.NoError(t, s.Bind(out[0], "vthread"))
	require.NoError(t, s.Bind(out[1], "threadIdx.x"))
	assert.Contains(t, printed(s.Func()), `    tir.for %i = 0 to 6 thread_binding("blockIdx.x") {
      tir.for %j_0 = 0 to 2 thread_binding("vthread") {
        tir.for %j_1 = 0 to 7 thread_binding("threadIdx.x") {
          tir.block "relu"(%vi = spatial(0:6, %i), %vj = spatial(0:14, %j_0 * 7 + %j_1)) reads(`)
	checkSame(t, s)
	// A tag already bound outside: a nested threadIdx loop must not use
	// the outer loop's variable (merged binding).
	add := mustLoops(t, s, "add")
	require.NoError(t, s.Bind(add[0], "threadIdx.y"))
	err = s.Bind(add[1], "threadIdx.y")
	require.Error(t, err)
	assert.Equal(t, `bind: block "add", loop %j: the loop uses %i of the enclosing loop bound to threadIdx.y (a nested loop on the same axis must not depend on it)
  tir.for %i = 0 to 6 thread_binding("threadIdx.y") {
    tir.for %j = 0 to 14 {
      tir.block "add"(%vi = spatial(0:6, %i), %vj = spatial(0:14, %j)) reads(%A[%vi, %vj], %B[%vj]) writes(%T[%vi, %vj]) {
        %T[%vi, %vj] = %A[%vi, %vj] + %B[%vj]
      }
    }
  }`, err.Error())
	err = s.Parallel(add[0])
	require.Error(t, err)
	assert.Contains(t, err.Error(), `parallel: block "add", loop %i: the loop is bound to threadIdx.y`)
}

func TestAnnotationValuesRoundTrip(t *testing.T) {
	s := New(parseFunc(t, chainSrc))
	ls := mustLoops(t, s, "add")
	vals := map[string]tir.Attr{
		"u": tir.UnitAttr{}, "b": tir.BoolAttr(true), "i": tir.IntAttr(-3), "f": tir.FloatAttr(0.5),
		"s": tir.StringAttr("x\"y"), "a": tir.ArrayAttr{tir.IntAttr(1), tir.StringAttr("two"), tir.FloatAttr(3)},
	}
	for k, v := range vals {
		require.NoError(t, s.Annotate(ls[0], k, v))
	}
	require.NoError(t, s.Annotate(BlockRV{Name: "relu"}, "f", tir.FloatAttr(2)))
	f, err := s.FindLoop(ls[0])
	require.NoError(t, err)
	assert.Equal(t, tir.Attrs(vals), f.Annotations)
	checkSame(t, s)
	// Replacing a value.
	require.NoError(t, s.Annotate(ls[0], "i", tir.IntAttr(7)))
	f, _ = s.FindLoop(ls[0])
	assert.Equal(t, tir.IntAttr(7), f.Annotations["i"])
	checkSame(t, s)
}

func TestAnnotationNumerics(t *testing.T) {
	for name, src := range workloads {
		t.Run(name, func(t *testing.T) {
			s := New(parseFunc(t, src))
			blk := firstBlock(s.Func().Body)
			ls := mustLoops(t, s, blk)
			require.NoError(t, s.Parallel(ls[0]))
			require.NoError(t, s.Unroll(ls[len(ls)-1]))
			require.NoError(t, s.Annotate(ls[1], "pragma_unroll_explicit", tir.BoolAttr(false)))
			inner := mustLoops(t, s, blk)
			if len(ls) == 2 {
				out, err := s.Split(inner[1], []int64{-1, 8})
				require.NoError(t, err)
				require.NoError(t, s.Vectorize(out[1]))
			}
			checkSame(t, s)
		})
	}
}

func TestAnnotationErrors(t *testing.T) {
	gemmC := `  tir.block "C"(%vi = spatial(0:16, %i), %vj = spatial(0:10, %j), %vk = reduce(0:12, %k)) reads(%A[%vi, %vk], %B[%vk, %vj]) writes(%C[%vi, %vj]) {
    tir.init {
      %C[%vi, %vj] = 0.0
    }
    %C[%vi, %vj] = %C[%vi, %vj] + %A[%vi, %vk] * %B[%vk, %vj]
  }`
	gemmI := `  tir.for %i = 0 to 16 {
    tir.for %j = 0 to 10 {
      tir.for %k = 0 to 12 {
` + indent(gemmC, "      ") + `
      }
    }
  }`
	cases := []struct {
		name string
		do   func(s *Schedule, ls []LoopRV) error
		want string
	}{
		{"parallel/reduce", func(s *Schedule, ls []LoopRV) error { return s.Parallel(ls[2]) },
			"parallel: block \"C\", loop %k: the loop is bound to the reduce iteration variable %vk; only spatial loops can be parallelized\n" + gemmC},
		{"vectorize/reduce", func(s *Schedule, ls []LoopRV) error { return s.Vectorize(ls[2]) },
			"vectorize: block \"C\", loop %k: the loop is bound to the reduce iteration variable %vk; only spatial loops can be vectorized\n" + gemmC},
		{"bind/reduce", func(s *Schedule, ls []LoopRV) error { return s.Bind(ls[2], "threadIdx.x") },
			"bind: block \"C\", loop %k: the loop is bound to the reduce iteration variable %vk; only spatial loops can be bound to threads\n" + gemmC},
		{"bind/tag", func(s *Schedule, ls []LoopRV) error { return s.Bind(ls[0], "threadIdx.w") },
			"bind: block \"C\", loop %i: invalid thread tag \"threadIdx.w\" (want blockIdx.x/y/z, threadIdx.x/y/z or vthread)\n" + gemmI},
		{"unannotate/loop", func(s *Schedule, ls []LoopRV) error { return s.Unannotate(ls[0], "foo") },
			"unannotate: block \"C\", loop %i: the loop has no annotation \"foo\"\n" + gemmI},
		{"unannotate/block", func(s *Schedule, ls []LoopRV) error { return s.Unannotate(BlockRV{Name: "C"}, "foo") },
			"unannotate: block \"C\": the block has no annotation \"foo\"\n" + gemmC},
		{"annotate/unknown-block", func(s *Schedule, ls []LoopRV) error { return s.Annotate(BlockRV{Name: "D"}, "k", tir.UnitAttr{}) },
			"annotate: block \"D\": no such block in @gemm"},
		{"annotate/empty-key", func(s *Schedule, ls []LoopRV) error { return s.Annotate(ls[0], "", tir.UnitAttr{}) },
			"annotate: empty annotation key"},
		{"parallel/nested", func(s *Schedule, ls []LoopRV) error {
			require.NoError(t, s.Parallel(ls[0]))
			return s.Parallel(ls[1])
		}, "parallel: block \"C\", loop %j: the loop is inside the parallel loop %i; nested parallel regions are not supported\n" + replaceFirst(gemmI, "0 to 16 {", "0 to 16 parallel {")},
		{"parallel/nested-inside", func(s *Schedule, ls []LoopRV) error {
			require.NoError(t, s.Parallel(ls[1]))
			return s.Parallel(ls[0])
		}, "parallel: block \"C\", loop %i: the loop holds the parallel loop %j; nested parallel regions are not supported\n" + replaceFirst(gemmI, "0 to 10 {", "0 to 10 parallel {")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New(parseFunc(t, gemmSrc))
			ls := mustLoops(t, s, "C")
			err := c.do(s, ls)
			require.Error(t, err)
			var se *Error
			require.ErrorAs(t, err, &se)
			assert.Equal(t, c.want, err.Error())
		})
	}
}

func TestSpatialChecksOnOverlappingWrites(t *testing.T) {
	src := `tir.func @f(%A: buffer<8xf32>, out %S: buffer<1xf32>, out %B: buffer<8xf32>) {
  tir.for %i = 0 to 8 {
    tir.block "acc"(%vi = spatial(0:8, %i)) reads(%A[%vi]) writes(%S[0]) {
      %S[0] = %A[%vi]
    }
  }
  tir.for %i = 0 to 4 {
    tir.for %j = 0 to 8 {
      %B[%j] = 1.0
    }
  }
}
`
	s := New(parseFunc(t, src))
	ls := mustLoops(t, s, "acc")
	err := s.Parallel(ls[0])
	require.Error(t, err)
	assert.Equal(t, `parallel: block "acc", loop %i: every iteration of the loop writes the same region of %S (no spatial iteration variable bound to the loop indexes it); only spatial loops can be parallelized
  tir.block "acc"(%vi = spatial(0:8, %i)) reads(%A[%vi]) writes(%S[0]) {
    %S[0] = %A[%vi]
  }`, err.Error())
	var outer *tir.For
	tir.VisitStmt(s.Func().Body, func(st tir.Stmt) bool {
		if f, ok := st.(*tir.For); ok && f.Var.Name == "i" && outer == nil && f.Extent.(*tir.IntImm).Value == 4 {
			outer = f
		}
		return true
	})
	require.NotNil(t, outer)
	err = s.Vectorize(LoopRV{Var: outer.Var})
	require.Error(t, err)
	assert.Equal(t, `vectorize: loop %i: every iteration of the loop stores to the same element of %B; only spatial loops can be vectorized
  %B[%j] = 1.0`, err.Error())
	inner := onlyChild(outer)
	require.NoError(t, s.Vectorize(LoopRV{Var: inner.Var}))
	require.NoError(t, s.Unroll(LoopRV{Var: outer.Var}))
}

func TestVectorizeUnrollNeedConstantExtent(t *testing.T) {
	src := `tir.func @f(%n: index, out %B: buffer<8xf32>) {
  tir.for %i = 0 to %n {
    tir.block "b"(%vi = spatial(0:8, %i)) writes(%B[%vi]) {
      %B[%vi] = 1.0
    }
  }
}
`
	s := New(parseFunc(t, src))
	ls := mustLoops(t, s, "b")
	for prim, fn := range map[string]func(LoopRV) error{"vectorize": s.Vectorize, "unroll": s.Unroll} {
		err := fn(ls[0])
		require.Error(t, err)
		assert.Equal(t, prim+`: block "b", loop %i: the extent %n is not a constant
  tir.for %i = 0 to %n {
    tir.block "b"(%vi = spatial(0:8, %i)) writes(%B[%vi]) {
      %B[%vi] = 1.0
    }
  }`, err.Error())
	}
	require.NoError(t, s.Parallel(ls[0]))
}
