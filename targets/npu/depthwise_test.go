package npu

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/targets/npu/isa"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// depthwiseText is a depthwise convolution (c channels, each its own
// group) as lowering writes it — the padded input through select(in
// bounds, x[clamped], 0.0) — with a per-channel bias and relu in an
// epilogue block.
func (c conv) depthwiseText() string {
	oh, ow := c.out()
	cond, load := c.paddedLoad("%v1")
	return fmt.Sprintf(`tir.func @dw(%%x: buffer<%[1]dx%[2]dx%[3]dx%[4]dxf32>, %%w: buffer<%[2]dx1x%[5]dx%[6]dxf32>, %%b: buffer<%[2]dxf32>, out %%y: buffer<%[1]dx%[2]dx%[7]dx%[8]dxf32>) attributes {tessera.kernel} {
  tir.allocate %%t: buffer<%[1]dx%[2]dx%[7]dx%[8]dxf32, "local"> {
    tir.for %%i0 = 0 to %[1]d {
      tir.for %%i1 = 0 to %[2]d {
        tir.for %%i2 = 0 to %[7]d {
          tir.for %%i3 = 0 to %[8]d {
            tir.for %%r1 = 0 to %[5]d {
              tir.for %%r2 = 0 to %[6]d {
                tir.block "convolution"(%%v0 = spatial(0:%[1]d, %%i0), %%v1 = spatial(0:%[2]d, %%i1), %%v2 = spatial(0:%[7]d, %%i2), %%v3 = spatial(0:%[8]d, %%i3), %%k1 = reduce(0:%[5]d, %%r1), %%k2 = reduce(0:%[6]d, %%r2)) reads(%%t[0:%[1]d, 0:%[2]d, 0:%[7]d, 0:%[8]d], %%x[0:%[1]d, 0:%[2]d, 0:%[3]d, 0:%[4]d], %%w[0:%[2]d, 0, 0:%[5]d, 0:%[6]d]) writes(%%t[%%v0, %%v1, %%v2, %%v3]) {
                  tir.init {
                    %%t[%%v0, %%v1, %%v2, %%v3] = 0.0
                  }
                  %%t[%%v0, %%v1, %%v2, %%v3] = %%t[%%v0, %%v1, %%v2, %%v3] + select(%[9]s, %[10]s, 0.0) * %%w[%%v1, 0, %%k1, %%k2]
                }
              }
            }
          }
        }
      }
    }
    tir.for %%i0 = 0 to %[1]d {
      tir.for %%i1 = 0 to %[2]d {
        tir.for %%i2 = 0 to %[7]d {
          tir.for %%i3 = 0 to %[8]d {
            tir.block "maximum"(%%v0 = spatial(0:%[1]d, %%i0), %%v1 = spatial(0:%[2]d, %%i1), %%v2 = spatial(0:%[7]d, %%i2), %%v3 = spatial(0:%[8]d, %%i3)) reads(%%t[%%v0, %%v1, %%v2, %%v3], %%b[%%v1]) writes(%%y[%%v0, %%v1, %%v2, %%v3]) {
              %%y[%%v0, %%v1, %%v2, %%v3] = max(%%t[%%v0, %%v1, %%v2, %%v3] + %%b[%%v1], 0.0)
            }
          }
        }
      }
    }
  }
}`, c.n, c.c, c.h, c.w, c.kh, c.kw, oh, ow, cond, load)
}

// TestDepthwiseRowWeights runs depthwise convolutions — odd channel
// counts, two images, stride, dilation, asymmetric padding, 5×5 taps
// (two reduction blocks) — in the per-row-weight form (RowW: a row per
// channel, its taps times its own patches) with every third tiling that
// fits, against the interpreter; the bias is a row operand (opRow).
func TestDepthwiseRowWeights(t *testing.T) {
	cfg := isa.DefaultConfig()
	cases := []conv{
		{n: 1, c: 24, h: 9, w: 11, kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1, pt: 1, pb: 1, pl: 1, pr: 1},
		{n: 2, c: 7, h: 10, w: 13, kh: 3, kw: 3, sh: 2, sw: 2, dh: 1, dw: 1, pt: 1, pb: 0, pl: 0, pr: 1},
		{n: 1, c: 33, h: 12, w: 12, kh: 5, kw: 5, sh: 1, sw: 2, dh: 2, dw: 1, pt: 2, pb: 3, pl: 2, pr: 2},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%+v", c), func(t *testing.T) {
			m, err := tir.ParseString("dw.tir", c.depthwiseText())
			require.NoError(t, err)
			f := m.Funcs[0]
			g, err := analyzeGEMM(cfg, f)
			require.NoError(t, err)
			require.True(t, g.RowW, "per-row weights")
			oh, ow := c.out()
			require.Equal(t, []int{c.c, c.n * oh * ow, c.kh * c.kw}, []int{g.M, g.N, g.K})
			require.Len(t, g.Epilogue, 2)
			require.Equal(t, opRow, g.Epilogue[0].Kind, "the bias is per channel: a row operand")
			all := tilings(cfg, g)
			require.NotEmpty(t, all)
			var some []Tiling
			for i, tl := range all {
				if i%3 == 0 || i == len(all)-1 {
					some = append(some, tl)
				}
			}
			checkTilings(t, cfg, f, append(some, Tiling{}))
		})
	}
}
