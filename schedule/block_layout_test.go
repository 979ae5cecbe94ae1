package schedule

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The convolution's (co, h, w, ci, kh, kw) as a GEMM's (m, n, k).
const convAsGEMM = "(co, h, w, ci, kh, kw) -> (h*6 + w, co, ci*9 + kh*3 + kw)"

const blockLayoutWant = `tir.func @conv(%I: buffer<3x8x8xf32>, %W: buffer<4x3x3x3xf32>, out %O: buffer<4x6x6xf32>) attributes {tessera.kernel} {
  tir.for %h_w_fused = 0 to 36 {
    tir.for %co = 0 to 4 {
      tir.for %ci_kh_kw_fused = 0 to 27 {
        tir.block "conv"(%vh_vw_fused = spatial(0:36, %h_w_fused), %vco = spatial(0:4, %co), %vci_vkh_vkw_fused = reduce(0:27, %ci_kh_kw_fused)) reads(%I[floordiv(%vci_vkh_vkw_fused, 9), floordiv(%vh_vw_fused, 6) + floormod(floordiv(%vci_vkh_vkw_fused, 3), 3), floormod(%vci_vkh_vkw_fused, 3) + floormod(%vh_vw_fused, 6)], %W[%vco, floordiv(%vci_vkh_vkw_fused, 9), floormod(floordiv(%vci_vkh_vkw_fused, 3), 3), floormod(%vci_vkh_vkw_fused, 3)]) writes(%O[%vco, floordiv(%vh_vw_fused, 6), floormod(%vh_vw_fused, 6)]) {
          tir.init {
            %O[%vco, floordiv(%vh_vw_fused, 6), floormod(%vh_vw_fused, 6)] = 0.0
          }
          %O[%vco, floordiv(%vh_vw_fused, 6), floormod(%vh_vw_fused, 6)] = %O[%vco, floordiv(%vh_vw_fused, 6), floormod(%vh_vw_fused, 6)] + %I[floordiv(%vci_vkh_vkw_fused, 9), floordiv(%vh_vw_fused, 6) + floormod(floordiv(%vci_vkh_vkw_fused, 3), 3), floormod(%vci_vkh_vkw_fused, 3) + floormod(%vh_vw_fused, 6)] * %W[%vco, floordiv(%vci_vkh_vkw_fused, 9), floormod(floordiv(%vci_vkh_vkw_fused, 3), 3), floormod(%vci_vkh_vkw_fused, 3)]
        }
      }
    }
  }
}
`

func TestTransformBlockLayoutPrinted(t *testing.T) {
	s := New(locWorkload(t, "conv"))
	require.NoError(t, s.TransformBlockLayout(block(t, s, "conv"), MustParseIndexMap(convAsGEMM)))
	assert.Equal(t, blockLayoutWant, printed(s.Func()))
	data, err := s.Trace().JSON()
	require.NoError(t, err)
	assert.Contains(t, string(data), `{"kind":"transform_block_layout","inputs":["b0"],"attrs":{"map_params":["co","h","w","ci","kh","kw"],"map_results":["h * 6 + w","co","ci * 9 + kh * 3 + kw"]}}`)
	checkSame(t, s)
}

var blockLayoutScenarios = []scenario{
	{"permutation", "gemm", func(t *testing.T, s *Schedule) {
		require.NoError(t, s.TransformBlockLayout(block(t, s, "C"), MustParseIndexMap("(i, j, k) -> (j, i, k)")))
	}},
	{"pooling window fused", "pool", func(t *testing.T, s *Schedule) {
		require.NoError(t, s.TransformBlockLayout(block(t, s, "pool"), MustParseIndexMap("(c, y, x, ry, rx) -> (c*25 + y*5 + x, ry*2 + rx)")))
	}},
	{"strides written either way round", "conv", func(t *testing.T, s *Schedule) {
		require.NoError(t, s.TransformBlockLayout(block(t, s, "conv"), MustParseIndexMap("(co, h, w, ci, kh, kw) -> (co*36 + w + 6*h, kw + kh*3 + 9*ci)")))
	}},
	// The convolution as an implicit GEMM on the 4×4×4 intrinsic: the
	// block fused into (m, n, k), its operands reindexed into the
	// im2col matrix [M][K] and the weights [N][K] (laid out [K][N]), the
	// output through [M][N], then padded, tiled and tensorized.
	{"conv as a GEMM, tensorized", "conv", func(t *testing.T, s *Schedule) {
		c := block(t, s, "conv")
		require.NoError(t, s.TransformBlockLayout(c, MustParseIndexMap(convAsGEMM)))
		_, err := s.ReIndex(c, 0, "read")
		require.NoError(t, err)
		w, err := s.ReIndex(c, 1, "read")
		require.NoError(t, err)
		require.NoError(t, s.TransformLayout(w, 0, "write", MustParseIndexMap("(n, k) -> (k, n)")))
		_, err = s.ReIndex(c, 0, "write")
		require.NoError(t, err)
		require.NoError(t, s.PadEinsum(c, []int64{4, 4, 4}))
		var outer, inner []LoopRV
		for _, l := range mustLoops(t, s, "conv") {
			p, err := s.Split(l, []int64{-1, 4})
			require.NoError(t, err)
			outer, inner = append(outer, p[0]), append(inner, p[1])
		}
		require.NoError(t, s.Reorder(append(outer, inner...)...))
		_, err = s.DecomposeReduction(c, outer[2])
		require.NoError(t, err)
		_, err = s.Tensorize(inner[0], IntrinDot4x4x4F32)
		require.NoError(t, err)
	}},
}

func TestTransformBlockLayoutNumerics(t *testing.T) {
	for _, sc := range blockLayoutScenarios {
		t.Run(sc.name, func(t *testing.T) {
			s := New(locWorkload(t, sc.workload))
			sc.apply(t, s)
			require.Contains(t, s.Trace().String(), "transform_block_layout")
			checkSame(t, s)
		})
	}
}

func TestTransformBlockLayoutRefusals(t *testing.T) {
	cases := []struct {
		name, workload, block, m string
		prep                     func(t *testing.T, s *Schedule)
		want                     string
	}{
		{"arity", "gemm", "C", "(i, j) -> (i*10 + j)", nil,
			`transform_block_layout: block "C": index map (i, j) -> (i * 10 + j) has 2 parameters, the block 3 iteration variables`},
		{"not row-major", "gemm", "C", "(i, j, k) -> (i*11 + j, k)", nil,
			`transform_block_layout: block "C": index map (i, j, k) -> (i * 11 + j, k): result i * 11 + j does not fuse its parameters row-major (the stride of i should be 10)`},
		{"mixed kinds", "gemm", "C", "(i, j, k) -> (i, j*12 + k)", nil,
			`transform_block_layout: block "C": index map (i, j, k) -> (i, j * 12 + k): result j * 12 + k fuses spatial and reduce iteration variables`},
		{"twice", "gemm", "C", "(i, j, k) -> (i, j*16 + i, k)", nil,
			`transform_block_layout: block "C": index map (i, j, k) -> (i, j * 16 + i, k): parameter i is used twice`},
		{"unused", "gemm", "C", "(i, j, k) -> (i, j)", nil,
			`transform_block_layout: block "C": index map (i, j, k) -> (i, j): parameter k is not used`},
		{"not a sum", "gemm", "C", "(i, j, k) -> (i, j floordiv 2, k)", nil,
			`transform_block_layout: block "C": index map (i, j, k) -> (i, j floordiv 2, k): result j floordiv 2 is not a sum of parameters times constant strides`},
		{"split binding", "gemm", "C", "(i, j, k) -> (j, i, k)", func(t *testing.T, s *Schedule) {
			_, err := s.Split(mustLoops(t, s, "C")[1], []int64{-1, 5})
			require.NoError(t, err)
		}, `transform_block_layout: block "C": %vj is bound to %j_0 * 5 + %j_1, not to a loop of its own over its domain`},
		{"not a perfect nest", "chain", "add", "(i, j) -> (j, i)", func(t *testing.T, s *Schedule) {
			require.NoError(t, s.ReverseComputeAt(block(t, s, "relu"), mustLoops(t, s, "add")[0]))
		}, `transform_block_layout: block "add": loop %i holds more than the block's nest (not a perfect nest)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := New(locWorkload(t, c.workload))
			if c.prep != nil {
				c.prep(t, s)
			}
			before := printed(s.Func())
			err := s.TransformBlockLayout(block(t, s, c.block), MustParseIndexMap(c.m))
			var se *Error
			require.True(t, errors.As(err, &se), "%v", err)
			assert.Equal(t, c.want, strings.SplitN(err.Error(), "\n", 2)[0])
			assert.Equal(t, before, printed(s.Func()))
			assert.NotContains(t, s.Trace().String(), "transform_block_layout")
		})
	}
}
