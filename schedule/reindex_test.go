package schedule

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A dense layer over a flattened 3×2×2 map: the reduction index k is
// split back into the map's (c, y, x) in the load of %X.
const flattenDenseSrc = `tir.func @dense(%X: buffer<3x3x2x2xf32>, %W: buffer<12x5xf32>, out %C: buffer<3x5xf32>) attributes {tessera.kernel} {
  tir.for %i = 0 to 3 {
    tir.for %j = 0 to 5 {
      tir.for %k = 0 to 12 {
        tir.block "dense"(%vi = spatial(0:3, %i), %vj = spatial(0:5, %j), %vk = reduce(0:12, %k)) reads(%X[%vi, 0:3, 0:2, 0:2], %W[%vk, %vj]) writes(%C[%vi, %vj]) {
          tir.init {
            %C[%vi, %vj] = 0.0
          }
          %C[%vi, %vj] = %C[%vi, %vj] + %X[%vi, floordiv(%vk, 4), floordiv(floormod(%vk, 4), 2), floormod(%vk, 2)] * %W[%vk, %vj]
        }
      }
    }
  }
}
`

// A 3×3 convolution with padding 1 written as the importer lowers it: the
// window load is clamped into the image and guarded by a select.
const paddedConvSrc = `tir.func @pconv(%I: buffer<2x5x5xf32>, %W: buffer<3x2x3x3xf32>, out %O: buffer<3x5x5xf32>) attributes {tessera.kernel} {
  tir.for %co = 0 to 3 {
    tir.for %h = 0 to 5 {
      tir.for %w = 0 to 5 {
        tir.for %ci = 0 to 2 {
          tir.for %kh = 0 to 3 {
            tir.for %kw = 0 to 3 {
              tir.block "conv"(%vco = spatial(0:3, %co), %vh = spatial(0:5, %h), %vw = spatial(0:5, %w), %vci = reduce(0:2, %ci), %vkh = reduce(0:3, %kh), %vkw = reduce(0:3, %kw)) reads(%I[0:2, 0:5, 0:5], %W[%vco, %vci, %vkh, %vkw]) writes(%O[%vco, %vh, %vw]) {
                tir.init {
                  %O[%vco, %vh, %vw] = 0.0
                }
                %O[%vco, %vh, %vw] = %O[%vco, %vh, %vw] + select(%vh + %vkh - 1 >= 0 && %vh + %vkh - 1 < 5 && %vw + %vkw - 1 >= 0 && %vw + %vkw - 1 < 5, %I[%vci, min(max(%vh + %vkh - 1, 0), 4), min(max(%vw + %vkw - 1, 0), 4)], 0.0) * %W[%vco, %vci, %vkh, %vkw]
              }
            }
          }
        }
      }
    }
  }
}
`

// Two loads of one buffer at different indices.
const twoOperandsSrc = `tir.func @sq(%X: buffer<7xf32>, out %Y: buffer<6xf32>) attributes {tessera.kernel} {
  tir.for %i = 0 to 6 {
    tir.block "diff"(%vi = spatial(0:6, %i)) reads(%X[%vi:%vi + 2]) writes(%Y[%vi]) {
      %Y[%vi] = %X[%vi + 1] - %X[%vi] + %X[0]
    }
  }
}
`

func reindexWorkload(t *testing.T, name string) *Schedule {
	t.Helper()
	switch name {
	case "dense":
		return New(parseFunc(t, flattenDenseSrc))
	case "pconv":
		return New(parseFunc(t, paddedConvSrc))
	case "sq":
		return New(parseFunc(t, twoOperandsSrc))
	case "inplace":
		return New(parseFunc(t, inplaceSrc))
	}
	return New(locWorkload(t, name))
}

const reindexWant = `tir.func @dense(%X: buffer<3x3x2x2xf32>, %W: buffer<12x5xf32>, out %C: buffer<3x5xf32>) attributes {tessera.kernel} {
  tir.allocate %X_reindex: buffer<3x12xf32> {
    tir.for %ax0 = 0 to 3 {
      tir.for %ax1 = 0 to 12 {
        tir.block "X_reindex"(%v0 = spatial(0:3, %ax0), %v1 = spatial(0:12, %ax1)) reads(%X[%v0, floordiv(%v1, 4), floordiv(floormod(%v1, 4), 2), floormod(%v1, 2)]) writes(%X_reindex[%v0, %v1]) {
          %X_reindex[%v0, %v1] = %X[%v0, floordiv(%v1, 4), floordiv(floormod(%v1, 4), 2), floormod(%v1, 2)]
        }
      }
    }
    tir.for %i = 0 to 3 {
      tir.for %j = 0 to 5 {
        tir.for %k = 0 to 12 {
          tir.block "dense"(%vi = spatial(0:3, %i), %vj = spatial(0:5, %j), %vk = reduce(0:12, %k)) reads(%X_reindex[%vi, %vk], %W[%vk, %vj]) writes(%C[%vi, %vj]) {
            tir.init {
              %C[%vi, %vj] = 0.0
            }
            %C[%vi, %vj] = %C[%vi, %vj] + %X_reindex[%vi, %vk] * %W[%vk, %vj]
          }
        }
      }
    }
  }
}
`

func TestReIndexPrinted(t *testing.T) {
	s := reindexWorkload(t, "dense")
	out, err := s.ReIndex(block(t, s, "dense"), 0, "read")
	require.NoError(t, err)
	assert.Equal(t, "X_reindex", out.Name)
	assert.Equal(t, reindexWant, printed(s.Func()))
	data, err := s.Trace().JSON()
	require.NoError(t, err)
	assert.Contains(t, string(data), `{"kind":"reindex","inputs":["b0"],"attrs":{"buffer_index":0,"buffer_type":"read"},"outputs":["b1"]}`)
	checkSame(t, s)
}

// A guarded window load is copied with its select: the copy is the
// zero-padded im2col matrix, and the convolution reads it plainly.
func TestReIndexGuardedOperand(t *testing.T) {
	s := reindexWorkload(t, "pconv")
	_, err := s.ReIndex(block(t, s, "conv"), 0, "read")
	require.NoError(t, err)
	got := printed(s.Func())
	assert.Contains(t, got, `%I_reindex: buffer<5x5x2x3x3xf32>`)
	assert.Contains(t, got, `%I_reindex[%v0, %v1, %v2, %v3, %v4] = select(%v0 + %v3 - 1 >= 0 && %v0 + %v3 - 1 < 5 && %v1 + %v4 - 1 >= 0 && %v1 + %v4 - 1 < 5, %I[%v2, min(max(%v0 + %v3 - 1, 0), 4), min(max(%v1 + %v4 - 1, 0), 4)], 0.0)`)
	assert.Contains(t, got, `%O[%vco, %vh, %vw] = %O[%vco, %vh, %vw] + %I_reindex[%vh, %vw, %vci, %vkh, %vkw] * %W[%vco, %vci, %vkh, %vkw]`)
	checkSame(t, s)
}

var reindexScenarios = []scenario{
	{"conv input and output", "conv", func(t *testing.T, s *Schedule) {
		_, err := s.ReIndex(block(t, s, "conv"), 0, "read")
		require.NoError(t, err)
		_, err = s.ReIndex(block(t, s, "conv"), 0, "write")
		require.NoError(t, err)
	}},
	// The window's plain form is an einsum: pad_einsum takes it.
	{"conv reindexed then padded", "conv", func(t *testing.T, s *Schedule) {
		_, err := s.ReIndex(block(t, s, "conv"), 0, "read")
		require.NoError(t, err)
		require.NoError(t, s.PadEinsum(block(t, s, "conv"), []int64{4, 4, 4, 2, 1, 1}))
	}},
	{"padded conv, weights reindexed too", "pconv", func(t *testing.T, s *Schedule) {
		_, err := s.ReIndex(block(t, s, "conv"), 0, "read")
		require.NoError(t, err)
		_, err = s.ReIndex(block(t, s, "conv"), 1, "read")
		require.NoError(t, err)
	}},
	{"pooling window", "pool", func(t *testing.T, s *Schedule) {
		_, err := s.ReIndex(block(t, s, "pool"), 0, "read")
		require.NoError(t, err)
	}},
	{"elementwise intermediate written", "chain", func(t *testing.T, s *Schedule) {
		_, err := s.ReIndex(block(t, s, "add"), 0, "write")
		require.NoError(t, err)
		_, err = s.ReIndex(block(t, s, "add"), 1, "read")
		require.NoError(t, err)
	}},
	// The flattened dense layer tiled onto the 4×4×4 intrinsic: reindex
	// gives pad_einsum and tensorize plain [M][K] operands.
	{"flatten dense reindexed, padded, tensorized", "dense", func(t *testing.T, s *Schedule) {
		_, err := s.ReIndex(block(t, s, "dense"), 0, "read")
		require.NoError(t, err)
		require.NoError(t, s.PadEinsum(block(t, s, "dense"), []int64{4, 4, 4}))
		var outer, inner []LoopRV
		for _, l := range mustLoops(t, s, "dense") {
			p, err := s.Split(l, []int64{-1, 4})
			require.NoError(t, err)
			outer, inner = append(outer, p[0]), append(inner, p[1])
		}
		require.NoError(t, s.Reorder(append(outer, inner...)...))
		_, err = s.DecomposeReduction(block(t, s, "dense"), outer[2])
		require.NoError(t, err)
		_, err = s.Tensorize(inner[0], IntrinDot4x4x4F32)
		require.NoError(t, err)
	}},
}

// TestReverseInlineIntoReIndexed: a convolution fused into (m, co, k)
// and its output reindexed writes back through a fused index (%C[co,
// floordiv(m, 6), floormod(m, 6)]), one-to-one onto %C; the bias and relu
// blocks inline into that write-back (reverse_compute_inline takes a
// producer whose store maps its domain one-to-one onto the buffer) and
// run in the fused (m, co) space. A producer that writes an element
// twice is refused.
func TestReverseInlineIntoReIndexed(t *testing.T) {
	s := New(locWorkload(t, "conv_bias_relu"))
	c := block(t, s, "conv")
	require.NoError(t, s.TransformBlockLayout(c, MustParseIndexMap("(co, h, w, ci, kh, kw) -> (h*6 + w, co, ci*9 + kh*3 + kw)")))
	wb, err := s.ReIndex(c, 0, "write")
	require.NoError(t, err)
	require.NoError(t, s.ReverseComputeInline(block(t, s, "bias")))
	require.NoError(t, s.ReverseComputeInline(block(t, s, "relu")))
	got := printed(s.Func())
	assert.Contains(t, got, `tir.block "`+wb.Name+`"(%v0 = spatial(0:36, %ax0), %v1 = spatial(0:3, %ax1))`)
	assert.Contains(t, got, `%O[%v1, floordiv(%v0, 6), floormod(%v0, 6)] = max(`)
	checkSame(t, s)

	s = New(parseFunc(t, twiceSrc))
	err = s.ReverseComputeInline(block(t, s, "use"))
	require.Error(t, err)
	assert.Equal(t, `reverse_compute_inline: block "use": the producer "half" stores %T at an index that neither is exactly its iteration variables nor maps its domain one-to-one onto the buffer`, strings.SplitN(err.Error(), "\n", 2)[0])
}

// A producer writing each element of %T twice (6 iterations onto 3).
const twiceSrc = `tir.func @twice(%A: buffer<6xf32>, out %D: buffer<3xf32>) attributes {tessera.kernel} {
  tir.allocate %T: buffer<3xf32> {
    tir.for %i = 0 to 6 {
      tir.block "half"(%vi = spatial(0:6, %i)) reads(%A[%vi]) writes(%T[floordiv(%vi, 2)]) {
        %T[floordiv(%vi, 2)] = %A[%vi]
      }
    }
    tir.for %j = 0 to 3 {
      tir.block "use"(%vj = spatial(0:3, %j)) reads(%T[%vj]) writes(%D[%vj]) {
        %D[%vj] = %T[%vj] * 2.0
      }
    }
  }
}
`

func TestReIndexNumerics(t *testing.T) {
	for _, sc := range reindexScenarios {
		t.Run(sc.name, func(t *testing.T) {
			s := reindexWorkload(t, sc.workload)
			sc.apply(t, s)
			require.Contains(t, s.Trace().String(), "reindex")
			checkSame(t, s)
		})
	}
}

func TestReIndexRefusals(t *testing.T) {
	cases := []struct {
		name, workload string
		apply          func(t *testing.T, s *Schedule) error
		want           string
	}{
		{"split binding", "gemm", func(t *testing.T, s *Schedule) error {
			_, err := s.Split(mustLoops(t, s, "C")[0], []int64{4, 4})
			require.NoError(t, err)
			_, err = s.ReIndex(block(t, s, "C"), 0, "read")
			return err
		}, `reindex: block "C": %vi is bound to %i_0 * 4 + %i_1, not to a loop of its own over its domain; reindex before splitting or fusing the block's loops`},
		{"buffer type", "gemm", func(t *testing.T, s *Schedule) error {
			_, err := s.ReIndex(block(t, s, "C"), 0, "both")
			return err
		}, `reindex: block "C": buffer index type "both": want "read" or "write"`},
		{"index range", "gemm", func(t *testing.T, s *Schedule) error {
			_, err := s.ReIndex(block(t, s, "C"), 1, "write")
			return err
		}, `reindex: block "C": write index 1 is out of range: the block has 1 write regions`},
		{"reads what it writes", "inplace", func(t *testing.T, s *Schedule) error {
			_, err := s.ReIndex(block(t, s, "scale"), 0, "read")
			return err
		}, `reindex: block "scale": the block also writes %D; a copy of it would be stale`},
		{"two operands", "sq", func(t *testing.T, s *Schedule) error {
			_, err := s.ReIndex(block(t, s, "diff"), 0, "read")
			return err
		}, `reindex: block "diff": the block reads %X as two operands, %X[%vi + 1] and %X[%vi]`},
		{"accessed inside the nest", "chain", func(t *testing.T, s *Schedule) error {
			require.NoError(t, s.ReverseComputeAt(block(t, s, "relu"), mustLoops(t, s, "add")[0]))
			_, err := s.ReIndex(block(t, s, "add"), 0, "write")
			return err
		}, `reindex: block "add": block "relu" also accesses %T inside the block's loop nest, where the copy would be stale`},
		{"no block", "gemm", func(t *testing.T, s *Schedule) error {
			_, err := s.ReIndex(BlockRV{Name: "D"}, 0, "read")
			return err
		}, `reindex: block "D": no such block in @gemm`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := reindexWorkload(t, c.workload)
			before := printed(s.Func())
			err := c.apply(t, s)
			var se *Error
			require.True(t, errors.As(err, &se), "%v", err)
			assert.Equal(t, c.want, strings.SplitN(err.Error(), "\n", 2)[0])
			if c.name != "split binding" && c.name != "accessed inside the nest" {
				assert.Equal(t, before, printed(s.Func()))
				assert.NotContains(t, s.Trace().String(), "reindex")
			}
		})
	}
}

// TestReIndexHoisted: a read copy goes as early in its sequence as the
// buffer's writers allow — a parameter's before the first block, so the
// reading block can still move under the loops of the blocks before it;
// an intermediate's right after its producer.
func TestReIndexHoisted(t *testing.T) {
	s := New(locWorkload(t, "conv_bias_relu"))
	_, err := s.ReIndex(block(t, s, "bias"), 1, "read")
	require.NoError(t, err)
	_, err = s.ReIndex(block(t, s, "relu"), 0, "read")
	require.NoError(t, err)
	got := printed(s.Func())
	order := []string{`tir.block "Bs_reindex"`, `tir.block "pad"`, `tir.block "conv"`, `tir.block "bias"`, `tir.block "T_reindex"`, `tir.block "relu"`}
	last := -1
	for _, b := range order {
		at := strings.Index(got, b)
		require.Greater(t, at, last, "%s in order %v:\n%s", b, order, got)
		last = at
	}
	require.NoError(t, s.ReverseComputeAt(block(t, s, "bias"), mustLoops(t, s, "conv")[0]))
	checkSame(t, s)
}
