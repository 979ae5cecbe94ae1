package npu

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/targets/npu/isa"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// conv is a 2-D convolution's shape (NCHW input, OIHW weights).
type conv struct {
	n, c, h, w, co, kh, kw int
	sh, sw, dh, dw         int
	pt, pb, pl, pr         int
}

func (c conv) out() (int, int) {
	return (c.h+c.pt+c.pb-c.dh*(c.kh-1)-1)/c.sh + 1, (c.w+c.pl+c.pr-c.dw*(c.kw-1)-1)/c.sw + 1
}

// kernel writes the convolution as lowering does: the padded input read
// through select(in bounds, x[clamped], 0.0).
func (c conv) kernel() *tir.PrimFunc {
	m, err := tir.ParseString("conv.tir", c.text())
	if err != nil {
		panic(err)
	}
	return m.Funcs[0]
}

// paddedLoad is the input read at output (%v2, %v3) and tap (%k1, %k2)
// of channel ch, as lowering writes it: its in-bounds condition and the
// clamped load.
func (c conv) paddedLoad(ch string) (cond, load string) {
	hi := fmt.Sprintf("%%v2 * %d + %%k1 * %d - %d", c.sh, c.dh, c.pt)
	wi := fmt.Sprintf("%%v3 * %d + %%k2 * %d - %d", c.sw, c.dw, c.pl)
	cond = fmt.Sprintf("%s >= 0 && %s < %d && %s >= 0 && %s < %d", hi, hi, c.h, wi, wi, c.w)
	load = fmt.Sprintf("%%x[%%v0, %s, min(max(%s, 0), %d), min(max(%s, 0), %d)]", ch, hi, c.h-1, wi, c.w-1)
	return cond, load
}

func (c conv) text() string {
	oh, ow := c.out()
	cond, load := c.paddedLoad("%k0")
	src := fmt.Sprintf(`tir.func @conv(%%x: buffer<%[1]dx%[2]dx%[3]dx%[4]dxf32>, %%w: buffer<%[5]dx%[2]dx%[6]dx%[7]dxf32>, out %%y: buffer<%[1]dx%[5]dx%[8]dx%[9]dxf32>) attributes {tessera.kernel} {
  tir.for %%i0 = 0 to %[1]d {
    tir.for %%i1 = 0 to %[5]d {
      tir.for %%i2 = 0 to %[8]d {
        tir.for %%i3 = 0 to %[9]d {
          tir.for %%r0 = 0 to %[2]d {
            tir.for %%r1 = 0 to %[6]d {
              tir.for %%r2 = 0 to %[7]d {
                tir.block "convolution"(%%v0 = spatial(0:%[1]d, %%i0), %%v1 = spatial(0:%[5]d, %%i1), %%v2 = spatial(0:%[8]d, %%i2), %%v3 = spatial(0:%[9]d, %%i3), %%k0 = reduce(0:%[2]d, %%r0), %%k1 = reduce(0:%[6]d, %%r1), %%k2 = reduce(0:%[7]d, %%r2)) reads(%%y[0:%[1]d, 0:%[5]d, 0:%[8]d, 0:%[9]d], %%x[0:%[1]d, 0:%[2]d, 0:%[3]d, 0:%[4]d], %%w[0:%[5]d, 0:%[2]d, 0:%[6]d, 0:%[7]d]) writes(%%y[%%v0, %%v1, %%v2, %%v3]) {
                  tir.init {
                    %%y[%%v0, %%v1, %%v2, %%v3] = 0.0
                  }
                  %%y[%%v0, %%v1, %%v2, %%v3] = %%y[%%v0, %%v1, %%v2, %%v3] + select(%[10]s, %[11]s, 0.0) * %%w[%%v1, %%k0, %%k1, %%k2]
                }
              }
            }
          }
        }
      }
    }
  }
}`, c.n, c.c, c.h, c.w, c.co, c.kh, c.kw, oh, ow, cond, load)
	return src
}

// TestWindowConvolutions runs convolutions on the window layout — odd
// sizes, channels that are not a multiple of BlockIn, more than one
// image, stride, dilation, asymmetric padding, a 1-D kernel — with a
// third of the window tilings that fit (tails of rows and N blocks
// included) and compares with the interpreter.
func TestWindowConvolutions(t *testing.T) {
	cfg := isa.DefaultConfig()
	cases := []conv{
		{n: 1, c: 20, h: 11, w: 9, co: 24, kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1, pt: 1, pb: 1, pl: 1, pr: 1},
		{n: 2, c: 5, h: 10, w: 13, co: 7, kh: 3, kw: 2, sh: 2, sw: 1, dh: 1, dw: 2, pt: 2, pb: 0, pl: 0, pr: 3},
		{n: 1, c: 33, h: 7, w: 7, co: 40, kh: 5, kw: 5, sh: 1, sw: 2, dh: 2, dw: 1, pt: 3, pb: 3, pl: 2, pr: 2},
		{n: 1, c: 16, h: 1, w: 30, co: 16, kh: 1, kw: 3, sh: 1, sw: 3, dh: 1, dw: 1, pt: 0, pb: 0, pl: 1, pr: 1},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%+v", c), func(t *testing.T) {
			f := c.kernel()
			g, err := analyzeGEMM(cfg, f)
			require.NoError(t, err)
			require.NotNil(t, g.Win, "the image is a window")
			oh, ow := c.out()
			if c.kh > 1 {
				require.Equal(t, []int{oh, ow, c.sh, c.sw, c.dh, c.dw, -c.pt, -c.pl}, []int{g.Win.OH, g.Win.OW, g.Win.SH, g.Win.SW, g.Win.DH, g.Win.DW, g.Win.PH, g.Win.PW})
			}
			var win []Tiling
			for _, tl := range tilings(cfg, g) {
				if tl.Window {
					win = append(win, tl)
				}
			}
			require.NotEmpty(t, win, "window tilings fit")
			// the first, the last and every third: row and N-block tails,
			// one and several channel blocks per step
			var some []Tiling
			for i, tl := range win {
				if i%3 == 0 || i == len(win)-1 {
					some = append(some, tl)
				}
			}
			checkTilings(t, cfg, f, some)
		})
	}
}

// TestWindowDefault: the default tiling of a 64-channel 3×3 convolution
// at 28×28 takes the window layout, which reads each input value about
// once instead of nine times.
func TestWindowDefault(t *testing.T) {
	cfg := isa.DefaultConfig()
	f := conv{n: 1, c: 64, h: 28, w: 28, co: 64, kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1, pt: 1, pb: 1, pl: 1, pr: 1}.kernel()
	g, err := analyzeGEMM(cfg, f)
	require.NoError(t, err)
	tl, err := defaultTiling(cfg, g)
	require.NoError(t, err)
	require.True(t, tl.Window, "default tiling %v", tl)
	gp, err := compileGEMM(cfg, g, tl)
	require.NoError(t, err)
	requireRoundTrip(t, gp.prog)
	_, win := estimate(cfg, g, tl, true)
	gather := Tiling{}
	for _, o := range tilings(cfg, g) {
		if !o.Window && o.Threads == tl.Threads {
			gather = o
		}
	}
	_, im2col := estimate(cfg, g, gather, true)
	require.Less(t, win*3, im2col, "window %v moves %.0f bytes, im2col %v %.0f", tl, win, gather, im2col)
}

// TestWindowRefusals: operands the window layout does not describe keep
// the gather layout (and still run): a transposed image read, a channel
// read at a computed index, and the 2×32×32 configuration (Batch 2).
func TestWindowRefusals(t *testing.T) {
	cfg := isa.DefaultConfig()
	base := conv{n: 1, c: 8, h: 6, w: 6, co: 8, kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1}
	src := base.kernel()
	text := base.text()
	for name, edit := range map[string][2]string{
		"channel at 7 - c": {"%x[%v0, %k0,", "%x[%v0, 7 - %k0,"},
		"h and w swapped":  {"%x[%v0, %k0, min(max(%v2 * 1 + %k1 * 1 - 0, 0), 5), min(max(%v3 * 1 + %k2 * 1 - 0, 0), 5)]", "%x[%v0, %k0, min(max(%v3 * 1 + %k2 * 1 - 0, 0), 5), min(max(%v2 * 1 + %k1 * 1 - 0, 0), 5)]"},
	} {
		t.Run(name, func(t *testing.T) {
			changed := strings.Replace(text, edit[0], edit[1], 1)
			require.NotEqual(t, text, changed)
			m, err := tir.ParseString("k.tir", changed)
			require.NoError(t, err)
			f := m.Funcs[0]
			g, err := analyzeGEMM(cfg, f)
			require.NoError(t, err)
			if name == "channel at 7 - c" {
				require.Nil(t, g.Win)
			}
			checkGEMM(t, cfg, f, Tiling{})
		})
	}
	big := cfg
	big.Batch = 2
	g, err := analyzeGEMM(big, src)
	require.NoError(t, err)
	require.Nil(t, g.Win)
}
