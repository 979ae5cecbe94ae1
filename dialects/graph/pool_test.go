package graph

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tessera-ml/tessera/graphir"
)

func TestPoolOutputSize(t *testing.T) {
	cases := []struct {
		in, k, s, lo, hi, d int64
		ceil                bool
		want                int64
	}{
		{5, 2, 2, 0, 0, 1, false, 2},
		{5, 2, 2, 0, 0, 1, true, 3},
		{6, 2, 2, 0, 0, 1, true, 3},
		{4, 3, 2, 1, 1, 1, true, 3},  // ceil(3/2)+1 = 3; last window starts at 4 < 4+1
		{5, 2, 2, 1, 1, 1, true, 3},  // ceil(5/2)+1 = 4, but the last window would start at 6 >= 5+1 (in the padding)
		{7, 3, 3, 1, 1, 2, false, 2}, // eff 5: floor(4/3)+1
	}
	for _, c := range cases {
		got, err := PoolOutputSize(c.in, c.k, c.s, c.lo, c.hi, c.d, c.ceil)
		require.NoError(t, err)
		assert.Equal(t, c.want, got, "%+v", c)
	}
	_, err := PoolOutputSize(2, 3, 1, 0, 0, 1, true)
	assert.ErrorContains(t, err, "larger than the padded input")
}

func TestPoolHandComputed(t *testing.T) {
	x := tensor([]int64{1, 1, 3, 3}, 1, 2, 3, 4, 5, 6, 7, 8, 9)
	k2 := []int64{2, 2}
	got := evalOp(t, MaxPool2DOp, attrs("kernel", k2), x)
	assert.Equal(t, []int64{1, 1, 2, 2}, got.Shape())
	assert.Equal(t, []float64{5, 6, 8, 9}, got.Data)
	got = evalOp(t, MaxPool2DOp, attrs("kernel", k2, "strides", k2, "ceil_mode", true), x)
	assert.Equal(t, []float64{5, 6, 8, 9}, got.Data)
	got = evalOp(t, AvgPool2DOp, attrs("kernel", k2, "strides", k2, "ceil_mode", true), x)
	assert.Equal(t, []float64{3, 4.5, 7.5, 9}, got.Data)
	// pads 1 all around, kernel 3, stride 2: out 2x2
	pads := []int64{1, 1, 1, 1}
	k3 := []int64{3, 3}
	got = evalOp(t, AvgPool2DOp, attrs("kernel", k3, "strides", k2, "pads", pads), x)
	assert.Equal(t, []float64{3, 4, 6, 7}, got.Data)
	got = evalOp(t, AvgPool2DOp, attrs("kernel", k3, "strides", k2, "pads", pads, "count_include_pad", true), x)
	requireClose(t, []float64{12.0 / 9, 16.0 / 9, 24.0 / 9, 28.0 / 9}, got.Data, 1e-7)
	got = evalOp(t, MaxPool2DOp, attrs("kernel", k3, "strides", k2, "pads", pads), x)
	assert.Equal(t, []float64{5, 6, 8, 9}, got.Data)
	// dilated max pool: kernel 2 dilation 2 → corners
	got = evalOp(t, MaxPool2DOp, attrs("kernel", k2, "dilations", k2), tensor([]int64{1, 1, 3, 3}, 9, 1, 2, 1, 1, 1, 3, 1, 4))
	assert.Equal(t, []float64{9}, got.Data)
}

// naivePool pads the input with NaN markers (and extra trailing cells for
// ceil mode) and reduces each window.
func naivePool(x *graphir.Tensor, isMax bool, k, s, pads, dil []int64, ceil, includePad bool) *graphir.Tensor {
	n, c, h, w := x.Shape()[0], x.Shape()[1], x.Shape()[2], x.Shape()[3]
	outSize := func(in, k, s, lo, hi, d int64) int64 {
		eff := d*(k-1) + 1
		num := float64(in+lo+hi-eff) / float64(s)
		if !ceil {
			return int64(math.Floor(num)) + 1
		}
		o := int64(math.Ceil(num)) + 1
		if (o-1)*s >= in+lo {
			o--
		}
		return o
	}
	oh := outSize(h, k[0], s[0], pads[0], pads[2], dil[0])
	ow := outSize(w, k[1], s[1], pads[1], pads[3], dil[1])
	// grid big enough for every window, cells: 0 outside, 1 pad, 2 data
	gh := (oh-1)*s[0] + dil[0]*(k[0]-1) + 1 + h + pads[0]
	gw := (ow-1)*s[1] + dil[1]*(k[1]-1) + 1 + w + pads[1]
	out := graphir.NewZeroTensor(tt(n, c, oh, ow))
	for p := int64(0); p < n*c; p++ {
		kind := make([]int, gh*gw)
		val := make([]float64, gh*gw)
		for y := int64(0); y < gh; y++ {
			for xx := int64(0); xx < gw; xx++ {
				iy, ix := y-pads[0], xx-pads[1]
				switch {
				case iy >= 0 && iy < h && ix >= 0 && ix < w:
					kind[y*gw+xx] = 2
					val[y*gw+xx] = x.Data[p*h*w+iy*w+ix]
				case y < h+pads[0]+pads[2] && xx < w+pads[1]+pads[3]:
					kind[y*gw+xx] = 1
				}
			}
		}
		for oy := int64(0); oy < oh; oy++ {
			for ox := int64(0); ox < ow; ox++ {
				best, sum, cnt, padCnt := math.Inf(-1), 0.0, 0, 0
				for ky := int64(0); ky < k[0]; ky++ {
					for kx := int64(0); kx < k[1]; kx++ {
						cell := (oy*s[0]+ky*dil[0])*gw + ox*s[1] + kx*dil[1]
						switch kind[cell] {
						case 2:
							best = math.Max(best, val[cell])
							sum += val[cell]
							cnt++
							padCnt++
						case 1:
							padCnt++
						}
					}
				}
				r := best
				if !isMax {
					div := cnt
					if includePad {
						div = padCnt
					}
					r = sum / float64(div)
				}
				out.Data[((p*oh)+oy)*ow+ox] = r
			}
		}
	}
	return out.Round()
}

func TestPoolRandomAgainstNaive(t *testing.T) {
	rng := newRNG(5)
	cases := []struct {
		x                []int64
		k, s, pads, dil  []int64
		ceil, includePad bool
	}{
		{[]int64{2, 3, 7, 8}, []int64{3, 3}, []int64{2, 2}, []int64{1, 1, 1, 1}, []int64{1, 1}, false, false},
		{[]int64{1, 2, 7, 8}, []int64{3, 2}, []int64{2, 3}, []int64{1, 0, 2, 1}, []int64{1, 1}, true, false},
		{[]int64{1, 2, 7, 8}, []int64{3, 2}, []int64{2, 3}, []int64{1, 0, 2, 1}, []int64{1, 1}, true, true},
		{[]int64{1, 2, 6, 6}, []int64{2, 2}, []int64{2, 2}, []int64{1, 1, 1, 1}, []int64{1, 1}, true, true},
		{[]int64{1, 1, 10, 9}, []int64{3, 2}, []int64{3, 2}, []int64{2, 1, 0, 1}, []int64{1, 1}, false, true},
		{[]int64{1, 1, 5, 5}, []int64{5, 5}, []int64{1, 1}, []int64{0, 0, 0, 0}, []int64{1, 1}, false, false},
	}
	for _, c := range cases {
		x := randTensor(rng, c.x...)
		got := evalOp(t, AvgPool2DOp, attrs("kernel", c.k, "strides", c.s, "pads", c.pads, "ceil_mode", c.ceil, "count_include_pad", c.includePad), x)
		want := naivePool(x, false, c.k, c.s, c.pads, c.dil, c.ceil, c.includePad)
		require.Equal(t, want.Shape(), got.Shape(), "%+v", c)
		requireClose(t, want.Data, got.Data, 1e-6)
		got = evalOp(t, MaxPool2DOp, attrs("kernel", c.k, "strides", c.s, "pads", c.pads, "ceil_mode", c.ceil), x)
		want = naivePool(x, true, c.k, c.s, c.pads, c.dil, c.ceil, false)
		require.Equal(t, want.Shape(), got.Shape(), "%+v", c)
		requireClose(t, want.Data, got.Data, 0)
	}
	// dilated max pooling with ceil mode
	x := randTensor(rng, 1, 2, 9, 10)
	a := attrs("kernel", []int64{2, 3}, "strides", []int64{2, 3}, "pads", []int64{1, 1, 1, 0}, "dilations", []int64{2, 2}, "ceil_mode", true)
	got := evalOp(t, MaxPool2DOp, a, x)
	want := naivePool(x, true, []int64{2, 3}, []int64{2, 3}, []int64{1, 1, 1, 0}, []int64{2, 2}, true, false)
	require.Equal(t, want.Shape(), got.Shape())
	requireClose(t, want.Data, got.Data, 0)
}

func TestGlobalAvgPool(t *testing.T) {
	x := tensor([]int64{1, 2, 2, 2}, 1, 2, 3, 4, 10, 20, 30, 40)
	got := evalOp(t, GlobalAvgPoolOp, nil, x)
	assert.Equal(t, []int64{1, 2, 1, 1}, got.Shape())
	assert.Equal(t, []float64{2.5, 25}, got.Data)
	got = evalOp(t, GlobalAvgPoolOp, nil, tensor([]int64{2, 1, 3}, 1, 2, 6, 3, 3, 3))
	assert.Equal(t, []int64{2, 1, 1}, got.Shape())
	assert.Equal(t, []float64{3, 3}, got.Data)
}

func TestPoolErrors(t *testing.T) {
	x := []*graphir.TensorType{tt(1, 3, 8, 8)}
	cases := []struct {
		name  string
		types []*graphir.TensorType
		a     graphir.DictAttr
		want  string
	}{
		{MaxPool2DOp, x, nil, "requires attribute 'kernel'"},
		{MaxPool2DOp, []*graphir.TensorType{tt(3, 8, 8)}, attrs("kernel", []int64{2, 2}), "input must be rank 4 (N×C×H×W), got tensor<3x8x8xf32>"},
		{MaxPool2DOp, x, attrs("kernel", []int64{0, 2}), "kernel [0, 2] must be at least 1"},
		{MaxPool2DOp, x, attrs("kernel", []int64{2, 2}, "strides", []int64{0, 1}), "strides [0, 1] must be at least 1"},
		{MaxPool2DOp, x, attrs("kernel", []int64{2, 2}, "pads", []int64{2, 0, 0, 0}), "pads [2, 0, 0, 0] must be smaller than the (dilated) kernel [2, 2]"},
		{MaxPool2DOp, x, attrs("kernel", []int64{2, 2}, "pads", []int64{0, 0, -1, 0}), "must be non-negative"},
		{MaxPool2DOp, x, attrs("kernel", []int64{9, 2}), "height: dilated kernel 9 is larger than the padded input 8"},
		{MaxPool2DOp, x, attrs("kernel", []int64{3, 3}, "dilations", []int64{1, 4}), "width: dilated kernel 9 is larger than the padded input 8"},
		{MaxPool2DOp, x, attrs("kernel", []int64{2}), "attribute 'kernel' must have 2 elements, got 1"},
		{AvgPool2DOp, x, attrs("kernel", []int64{2, 2}, "dilations", []int64{1, 1}), "does not accept attribute 'dilations'"},
		{AvgPool2DOp, []*graphir.TensorType{graphir.NewTensor(graphir.I8, 1, 1, 4, 4)}, attrs("kernel", []int64{2, 2}), "requires a floating-point element type"},
		{GlobalAvgPoolOp, []*graphir.TensorType{tt(3, 8)}, nil, "input must have rank at least 3 (N×C×spatial...), got tensor<3x8xf32>"},
	}
	for _, c := range cases {
		err := checkOp(c.name, c.types, c.a)
		require.Error(t, err, c.want)
		assert.Contains(t, err.Error(), c.want)
	}
}
