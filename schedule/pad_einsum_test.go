package schedule

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPadEinsumPrinted(t *testing.T) {
	s := New(locWorkload(t, "gemm"))
	require.NoError(t, s.PadEinsum(block(t, s, "C"), []int64{1, 4, 8}))
	assert.Equal(t, padEinsumWant, printed(s.Func()))
	data, err := s.Trace().JSON()
	require.NoError(t, err)
	assert.Contains(t, string(data), `{"kind":"pad_einsum","inputs":["b0"],"attrs":{"padding":[1,4,8]}}`)
	checkSame(t, s)
}

var padEinsumScenarios = []scenario{
	{"pad gemm reduction only", "gemm", func(t *testing.T, s *Schedule) {
		require.NoError(t, s.PadEinsum(block(t, s, "C"), []int64{1, 1, 16}))
	}},
	{"pad gemm then tile", "gemm", func(t *testing.T, s *Schedule) {
		require.NoError(t, s.PadEinsum(block(t, s, "C"), []int64{8, 8, 8}))
		ls := mustLoops(t, s, "C")
		_, err := s.Split(ls[1], []int64{-1, 8})
		require.NoError(t, err)
		require.NoError(t, s.Parallel(ls[0]))
	}},
	{"pad gemm then tensorize", "gemm", func(t *testing.T, s *Schedule) {
		require.NoError(t, s.PadEinsum(block(t, s, "C"), []int64{4, 4, 4}))
		ls := mustLoops(t, s, "C")
		var outer, inner []LoopRV
		for _, l := range ls {
			p, err := s.Split(l, []int64{-1, 4})
			require.NoError(t, err)
			outer, inner = append(outer, p[0]), append(inner, p[1])
		}
		require.NoError(t, s.Reorder(append(outer, inner...)...))
		_, err := s.DecomposeReduction(block(t, s, "C"), outer[2])
		require.NoError(t, err)
		_, err = s.Tensorize(inner[0], IntrinDot4x4x4F32)
		require.NoError(t, err)
	}},
	{"pad elementwise intermediate", "chain", func(t *testing.T, s *Schedule) {
		require.NoError(t, s.PadEinsum(block(t, s, "add"), []int64{4, 8}))
	}},
	{"pad softmax normalization", "softmax", func(t *testing.T, s *Schedule) {
		require.NoError(t, s.PadEinsum(block(t, s, "div"), []int64{3, 4}))
	}},
	{"pad softmax sum of an intermediate", "softmax", func(t *testing.T, s *Schedule) {
		require.NoError(t, s.PadEinsum(block(t, s, "sum"), []int64{1, 4}))
		require.NoError(t, s.PadEinsum(block(t, s, "exp"), []int64{8, 1}))
	}},
}

func TestPadEinsumNumerics(t *testing.T) {
	for _, sc := range padEinsumScenarios {
		t.Run(sc.name, func(t *testing.T) {
			s := New(locWorkload(t, sc.workload))
			sc.apply(t, s)
			require.Contains(t, s.Trace().String(), "pad_einsum")
			checkSame(t, s)
		})
	}
}

// An in-place scaling of an inout parameter.
const inplaceSrc = `tir.func @inplace(inout %D: buffer<6xf32>) attributes {tessera.kernel} {
  tir.for %i = 0 to 6 {
    tir.block "scale"(%vi = spatial(0:6, %i)) reads(%D[%vi]) writes(%D[%vi]) {
      %D[%vi] = %D[%vi] * 2.0
    }
  }
}
`

func TestPadEinsumRefusals(t *testing.T) {
	cases := []struct {
		name, workload string
		apply          func(t *testing.T, s *Schedule) error
		want, ir       string
	}{
		{"factor count", "gemm", func(t *testing.T, s *Schedule) error {
			return s.PadEinsum(block(t, s, "C"), []int64{4, 4})
		}, `pad_einsum: block "C": 2 padding factors for 3 iteration variables`,
			`tir.block "C"(%vi = spatial(0:16, %i), %vj = spatial(0:10, %j), %vk = reduce(0:12, %k)) reads(%A[%vi, %vk], %B[%vk, %vj]) writes(%C[%vi, %vj]) {`},
		{"factor sign", "gemm", func(t *testing.T, s *Schedule) error {
			return s.PadEinsum(block(t, s, "C"), []int64{4, 0, 4})
		}, `pad_einsum: block "C": padding factors [4 0 4]: each must be positive`,
			`tir.block "C"(%vi = spatial(0:16, %i), %vj = spatial(0:10, %j), %vk = reduce(0:12, %k)) reads(%A[%vi, %vk], %B[%vk, %vj]) writes(%C[%vi, %vj]) {`},
		{"nothing to pad", "gemm", func(t *testing.T, s *Schedule) error {
			return s.PadEinsum(block(t, s, "C"), []int64{4, 5, 6})
		}, `pad_einsum: block "C": the extents [16 10 12] are already multiples of [4 5 6]: nothing to pad`,
			`tir.block "C"(%vi = spatial(0:16, %i), %vj = spatial(0:10, %j), %vk = reduce(0:12, %k)) reads(%A[%vi, %vk], %B[%vk, %vj]) writes(%C[%vi, %vj]) {`},
		{"not an einsum index", "conv", func(t *testing.T, s *Schedule) error {
			return s.PadEinsum(block(t, s, "conv"), []int64{1, 4, 4, 1, 1, 1})
		}, `pad_einsum: block "conv": %I is indexed by %vh + %vkh, not by an iteration variable`,
			`tir.block "conv"(%vco = spatial(0:4, %co), %vh = spatial(0:6, %h), %vw = spatial(0:6, %w), %vci = reduce(0:3, %ci), %vkh = reduce(0:3, %kh), %vkw = reduce(0:3, %kw)) reads(%I[%vci, %vh + %vkh, %vw + %vkw], %W[%vco, %vci, %vkh, %vkw]) writes(%O[%vco, %vh, %vw]) {`},
		{"not a sum", "pool", func(t *testing.T, s *Schedule) error {
			return s.PadEinsum(block(t, s, "pool"), []int64{1, 4, 4, 1, 1})
		}, `pad_einsum: block "pool": the block is not a sum reduction %P[...] = %P[...] + e with an init`,
			`tir.block "pool"(%vc = spatial(0:2, %c), %vy = spatial(0:5, %y), %vx = spatial(0:5, %x), %vry = reduce(0:2, %ry), %vrx = reduce(0:2, %rx)) reads(%X[%vc, %vy * 2 + %vry, %vx * 2 + %vrx]) writes(%P[%vc, %vy, %vx]) {`},
		{"not a product", "softmax_exp", func(t *testing.T, s *Schedule) error {
			return s.PadEinsum(block(t, s, "sum"), []int64{1, 4})
		}, `pad_einsum: block "sum": padding the reduction %vk needs the summand exp(%X[%vi, %vk] - %M[%vi]) to be a product with a factor indexed by it (the padding reads zero)`,
			`tir.block "sum"(%vi = spatial(0:4, %i), %vk = reduce(0:10, %k)) reads(%X[%vi, %vk], %M[%vi]) writes(%S[%vi]) {`},
		{"split binding", "gemm", func(t *testing.T, s *Schedule) error {
			_, err := s.Split(mustLoops(t, s, "C")[0], []int64{4, 4})
			require.NoError(t, err)
			return s.PadEinsum(block(t, s, "C"), []int64{1, 4, 8})
		}, `pad_einsum: block "C": %vi is bound to %i_0 * 4 + %i_1, not to a loop of its own`,
			`tir.block "C"(%vi = spatial(0:16, %i_0 * 4 + %i_1), %vj = spatial(0:10, %j), %vk = reduce(0:12, %k)) reads(%A[%vi, %vk], %B[%vk, %vj]) writes(%C[%vi, %vj]) {`},
		{"shared loop", "chain", func(t *testing.T, s *Schedule) error {
			require.NoError(t, s.ComputeAt(block(t, s, "add"), mustLoops(t, s, "relu")[0]))
			return s.PadEinsum(block(t, s, "relu"), []int64{4, 4})
		}, `pad_einsum: block "relu", loop %i: loop %i holds more than the block's nest (not a perfect nest)`,
			`tir.for %i = 0 to 6 {`},
		{"reads its output", "inplace", func(t *testing.T, s *Schedule) error {
			return s.PadEinsum(block(t, s, "scale"), []int64{4})
		}, `pad_einsum: block "scale": the block reads its output %D in %D[%vi] * 2.0 (the padded output does not hold its prior contents)`,
			`tir.block "scale"(%vi = spatial(0:6, %i)) reads(%D[%vi]) writes(%D[%vi]) {`},
		{"no block", "gemm", func(t *testing.T, s *Schedule) error {
			return s.PadEinsum(BlockRV{Name: "D"}, []int64{4})
		}, `pad_einsum: block "D": no such block in @gemm`, ``},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s *Schedule
			switch c.workload {
			case "softmax_exp":
				s = New(parseFunc(t, softmaxSrc))
			case "inplace":
				s = New(parseFunc(t, inplaceSrc))
			default:
				s = New(locWorkload(t, c.workload))
			}
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

const padEinsumWant = `tir.func @gemm(%A: buffer<16x12xf32>, %B: buffer<12x10xf32>, out %C: buffer<16x10xf32>) attributes {tessera.kernel} {
  tir.allocate %B_pad: buffer<16x12xf32> {
    tir.allocate %A_pad: buffer<16x16xf32> {
      tir.allocate %C_pad: buffer<16x12xf32> {
        tir.for %ax0 = 0 to 16 {
          tir.for %ax1 = 0 to 16 {
            tir.block "A_pad"(%v0 = spatial(0:16, %ax0), %v1 = spatial(0:16, %ax1)) reads(%A[%v0, min(%v1, 11)]) writes(%A_pad[%v0, %v1]) {
              %A_pad[%v0, %v1] = select(%v1 < 12, %A[%v0, min(%v1, 11)], 0.0)
            }
          }
        }
        tir.for %ax0 = 0 to 16 {
          tir.for %ax1 = 0 to 12 {
            tir.block "B_pad"(%v0 = spatial(0:16, %ax0), %v1 = spatial(0:12, %ax1)) reads(%B[min(%v0, 11), min(%v1, 9)]) writes(%B_pad[%v0, %v1]) {
              %B_pad[%v0, %v1] = select(%v0 < 12 && %v1 < 10, %B[min(%v0, 11), min(%v1, 9)], 0.0)
            }
          }
        }
        tir.for %i = 0 to 16 {
          tir.for %j = 0 to 12 {
            tir.for %k = 0 to 16 {
              tir.block "C"(%vi = spatial(0:16, %i), %vj = spatial(0:12, %j), %vk = reduce(0:16, %k)) reads(%A_pad[%vi, %vk], %B_pad[%vk, %vj]) writes(%C_pad[%vi, %vj]) {
                tir.init {
                  %C_pad[%vi, %vj] = 0.0
                }
                %C_pad[%vi, %vj] = %C_pad[%vi, %vj] + %A_pad[%vi, %vk] * %B_pad[%vk, %vj]
              }
            }
          }
        }
        tir.for %ax0 = 0 to 16 {
          tir.for %ax1 = 0 to 10 {
            tir.block "C_unpad"(%v0 = spatial(0:16, %ax0), %v1 = spatial(0:10, %ax1)) reads(%C_pad[%v0, %v1]) writes(%C[%v0, %v1]) {
              %C[%v0, %v1] = %C_pad[%v0, %v1]
            }
          }
        }
      }
    }
  }
}
`
