package graph

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tessera-ml/tessera/graphir"
)

func TestConvOutputSize(t *testing.T) {
	got, err := ConvOutputSize(32, 3, 1, 1, 1, 1)
	require.NoError(t, err)
	assert.Equal(t, int64(32), got)
	got, err = ConvOutputSize(7, 3, 2, 0, 0, 1) // floor(4/2)+1
	require.NoError(t, err)
	assert.Equal(t, int64(3), got)
	got, err = ConvOutputSize(8, 3, 3, 1, 0, 2) // eff 5: floor((9-5)/3)+1 = 2
	require.NoError(t, err)
	assert.Equal(t, int64(2), got)
	_, err = ConvOutputSize(2, 3, 1, 0, 0, 1)
	assert.ErrorContains(t, err, "dilated kernel 3 is larger than the padded input 2")
	_, err = ConvOutputSize(4, 3, 0, 0, 0, 1)
	assert.ErrorContains(t, err, "stride 0")
	_, err = ConvOutputSize(4, 3, 1, -1, 0, 1)
	assert.ErrorContains(t, err, "non-negative")
	_, err = ConvOutputSize(4, 2, 1, 0, 0, 0)
	assert.ErrorContains(t, err, "dilation 0")
}

func TestConvHandComputed(t *testing.T) {
	// 1×1×3×3 input, 1×1×2×2 weight of ones, bias 10, pads 1 on top/left only.
	x := tensor([]int64{1, 1, 3, 3}, 1, 2, 3, 4, 5, 6, 7, 8, 9)
	w := tensor([]int64{1, 1, 2, 2}, 1, 1, 1, 1)
	b := tensor([]int64{1}, 10)
	got := evalOp(t, Conv2DOp, attrs("pads", []int64{1, 1, 0, 0}), x, w, b)
	assert.Equal(t, []int64{1, 1, 3, 3}, got.Shape())
	assert.Equal(t, []float64{
		11, 13, 15,
		15, 22, 26,
		21, 34, 38,
	}, got.Data)
	// stride 2, no bias: sums of the 2x2 windows at (0,0) only: out 1x1
	got = evalOp(t, Conv2DOp, attrs("strides", []int64{2, 2}), x, w)
	assert.Equal(t, []float64{12}, got.Data)
	// dilation 2 with 2x2 kernel: corners 1+3+7+9
	got = evalOp(t, Conv2DOp, attrs("dilations", []int64{2, 2}), x, w)
	assert.Equal(t, []float64{20}, got.Data)
}

// naiveConv materializes the zero-padded input and walks every output.
func naiveConv(x, w *graphir.Tensor, b *graphir.Tensor, strides, pads, dil []int64, groups int64) *graphir.Tensor {
	n, c, h, wd := x.Shape()[0], x.Shape()[1], x.Shape()[2], x.Shape()[3]
	o, cg, kh, kw := w.Shape()[0], w.Shape()[1], w.Shape()[2], w.Shape()[3]
	ph, pw := h+pads[0]+pads[2], wd+pads[1]+pads[3]
	padded := make([]float64, n*c*ph*pw)
	for i := int64(0); i < n*c*h*wd; i++ {
		idx := unravel(i, x.Shape())
		padded[ravel([]int64{idx[0], idx[1], idx[2] + pads[0], idx[3] + pads[1]}, []int64{n, c, ph, pw})] = x.Data[i]
	}
	oh := (ph-dil[0]*(kh-1)-1)/strides[0] + 1
	ow := (pw-dil[1]*(kw-1)-1)/strides[1] + 1
	out := graphir.NewZeroTensor(tt(n, o, oh, ow))
	for i := range out.Data {
		idx := unravel(int64(i), out.Shape())
		bi, oc, y, xx := idx[0], idx[1], idx[2], idx[3]
		g := oc / (o / groups)
		s := 0.0
		for ic := int64(0); ic < cg; ic++ {
			for ky := int64(0); ky < kh; ky++ {
				for kx := int64(0); kx < kw; kx++ {
					pv := padded[ravel([]int64{bi, g*cg + ic, y*strides[0] + ky*dil[0], xx*strides[1] + kx*dil[1]}, []int64{n, c, ph, pw})]
					s += pv * w.Data[ravel([]int64{oc, ic, ky, kx}, w.Shape())]
				}
			}
		}
		if b != nil {
			s += b.Data[oc]
		}
		out.Data[i] = s
	}
	return out.Round()
}

func TestConvRandomAgainstNaive(t *testing.T) {
	rng := newRNG(7)
	cases := []struct {
		x, w               []int64
		strides, pads, dil []int64
		groups             int64
		bias               bool
	}{
		{[]int64{2, 3, 7, 6}, []int64{4, 3, 3, 3}, []int64{1, 1}, []int64{1, 1, 1, 1}, []int64{1, 1}, 1, true},
		{[]int64{1, 4, 9, 8}, []int64{6, 2, 3, 2}, []int64{2, 3}, []int64{0, 1, 2, 0}, []int64{1, 1}, 2, false},  // grouped, non-dividing strides, asymmetric pads
		{[]int64{1, 5, 8, 8}, []int64{5, 1, 3, 3}, []int64{1, 1}, []int64{1, 1, 1, 1}, []int64{1, 1}, 5, true},   // depthwise
		{[]int64{1, 5, 8, 8}, []int64{10, 1, 3, 3}, []int64{2, 2}, []int64{1, 1, 1, 1}, []int64{1, 1}, 5, true},  // depthwise multiplier 2
		{[]int64{2, 2, 11, 10}, []int64{3, 2, 3, 2}, []int64{3, 2}, []int64{2, 0, 1, 3}, []int64{2, 3}, 1, true}, // dilation
		{[]int64{1, 1, 1, 1}, []int64{2, 1, 1, 1}, []int64{1, 1}, []int64{0, 0, 0, 0}, []int64{1, 1}, 1, true},   // 1x1
		{[]int64{1, 3, 5, 5}, []int64{2, 3, 5, 5}, []int64{4, 4}, []int64{2, 2, 2, 2}, []int64{1, 1}, 1, false},  // kernel as big as input
	}
	for _, c := range cases {
		x, w := randTensor(rng, c.x...), randTensor(rng, c.w...)
		ins := []*graphir.Tensor{x, w}
		var b *graphir.Tensor
		if c.bias {
			b = randTensor(rng, c.w[0])
			ins = append(ins, b)
		}
		a := attrs("strides", c.strides, "pads", c.pads, "dilations", c.dil, "groups", int(c.groups))
		got := evalOp(t, Conv2DOp, a, ins...)
		want := naiveConv(x, w, b, c.strides, c.pads, c.dil, c.groups)
		require.Equal(t, want.Shape(), got.Shape(), "%+v", c)
		requireClose(t, want.Data, got.Data, 1e-6)
	}
}

func TestConvErrors(t *testing.T) {
	cases := []struct {
		types []*graphir.TensorType
		a     graphir.DictAttr
		want  string
	}{
		{[]*graphir.TensorType{tt(1, 3, 8, 8), tt(2, 4, 3, 3)}, nil, "'graph.conv2d' op input channels 3 do not match weight channels 4 × groups 1"},
		{[]*graphir.TensorType{tt(1, 3, 8), tt(2, 3, 3, 3)}, nil, "input must be rank 4 (N×C×H×W), got tensor<1x3x8xf32>"},
		{[]*graphir.TensorType{tt(1, 3, 8, 8), tt(2, 3, 3)}, nil, "weight must be rank 4"},
		{[]*graphir.TensorType{tt(1, 4, 8, 8), tt(2, 2, 3, 3)}, attrs("groups", 3), "groups 3 does not divide input channels 4"},
		{[]*graphir.TensorType{tt(1, 4, 8, 8), tt(3, 2, 3, 3)}, attrs("groups", 2), "groups 2 does not divide output channels 3"},
		{[]*graphir.TensorType{tt(1, 4, 8, 8), tt(2, 4, 3, 3)}, attrs("groups", 0), "groups 0 must be at least 1"},
		{[]*graphir.TensorType{tt(1, 3, 8, 8), tt(2, 3, 3, 3), tt(3)}, nil, "bias must have shape [2] (output channels), got tensor<3xf32>"},
		{[]*graphir.TensorType{tt(1, 3, 8, 8), tt(2, 3, 3, 3)}, attrs("pads", []int64{0, -1, 0, 0}), "pads [0, -1, 0, 0] must be non-negative"},
		{[]*graphir.TensorType{tt(1, 3, 8, 8), tt(2, 3, 3, 3)}, attrs("strides", []int64{1, 0}), "strides [1, 0] must be at least 1"},
		{[]*graphir.TensorType{tt(1, 3, 8, 8), tt(2, 3, 3, 3)}, attrs("dilations", []int64{0, 1}), "dilations [0, 1] must be at least 1"},
		{[]*graphir.TensorType{tt(1, 3, 2, 8), tt(2, 3, 3, 3)}, nil, "height: dilated kernel 3 is larger than the padded input 2"},
		{[]*graphir.TensorType{tt(1, 3, 8, 8), tt(2, 3, 3, 3)}, attrs("dilations", []int64{1, 4}), "width: dilated kernel 9 is larger than the padded input 8"},
		{[]*graphir.TensorType{tt(1, 3, 8, 8), tt(2, 3, 3, 3)}, attrs("strides", []int64{1, 1, 1}), "attribute 'strides' must have 2 elements, got 3"},
		{[]*graphir.TensorType{tt(1, 3, 8, 8), tt(2, 3, 3, 3)}, attrs("pads", []int64{1, 1}), "attribute 'pads' must have 4 elements, got 2"},
		{[]*graphir.TensorType{tt(1, 3, 8, 8), tt(2, 3, 3, 3)}, attrs("strides", graphir.StringAttr("x")), "attribute 'strides' must be an integer array"},
		{[]*graphir.TensorType{graphir.NewTensor(graphir.I64, 1, 3, 8, 8), graphir.NewTensor(graphir.I64, 2, 3, 3, 3)}, nil, "requires a floating-point element type"},
		{[]*graphir.TensorType{tt(1, 3, 8, 8), graphir.NewTensor(graphir.F16, 2, 3, 3, 3)}, nil, "operand #1 has element type f16, but operand #0 has f32"},
	}
	for _, c := range cases {
		err := checkOp(Conv2DOp, c.types, c.a)
		require.Error(t, err, c.want)
		assert.Contains(t, err.Error(), c.want)
	}
}
