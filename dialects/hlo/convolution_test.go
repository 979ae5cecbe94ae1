package hlo

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	g "github.com/tessera-ml/tessera/graphir"
)

// naiveConv2D materializes the dilated and padded input, then runs a plain
// strided grouped convolution over it.
func naiveConv2D(x, w *g.Tensor, c ConvConfig) ([]int64, []float64) {
	N, C, H, W := x.Type.Shape[0], x.Type.Shape[1], x.Type.Shape[2], x.Type.Shape[3]
	O, Cg, KH, KW := w.Type.Shape[0], w.Type.Shape[1], w.Type.Shape[2], w.Type.Shape[3]
	groups := C / Cg
	ph := c.PadLow[0] + (H-1)*c.LhsDilation[0] + 1 + c.PadHigh[0]
	pw := c.PadLow[1] + (W-1)*c.LhsDilation[1] + 1 + c.PadHigh[1]
	P := make([]float64, N*C*ph*pw)
	for n := int64(0); n < N; n++ {
		for ch := int64(0); ch < C; ch++ {
			for i := int64(0); i < H; i++ {
				for j := int64(0); j < W; j++ {
					pi, pj := c.PadLow[0]+i*c.LhsDilation[0], c.PadLow[1]+j*c.LhsDilation[1]
					if pi >= 0 && pi < ph && pj >= 0 && pj < pw {
						P[((n*C+ch)*ph+pi)*pw+pj] = x.Data[((n*C+ch)*H+i)*W+j]
					}
				}
			}
		}
	}
	dkh, dkw := (KH-1)*c.RhsDilation[0]+1, (KW-1)*c.RhsDilation[1]+1
	OH, OW := (ph-dkh)/c.WindowStrides[0]+1, (pw-dkw)/c.WindowStrides[1]+1
	out := make([]float64, N*O*OH*OW)
	for n := int64(0); n < N; n++ {
		for o := int64(0); o < O; o++ {
			grp := o / (O / groups)
			for y := int64(0); y < OH; y++ {
				for xx := int64(0); xx < OW; xx++ {
					var acc float64
					for ci := int64(0); ci < Cg; ci++ {
						for ky := int64(0); ky < KH; ky++ {
							for kx := int64(0); kx < KW; kx++ {
								py := y*c.WindowStrides[0] + ky*c.RhsDilation[0]
								px := xx*c.WindowStrides[1] + kx*c.RhsDilation[1]
								acc += P[((n*C+grp*Cg+ci)*ph+py)*pw+px] * w.Data[((o*Cg+ci)*KH+ky)*KW+kx]
							}
						}
					}
					out[((n*O+o)*OH+y)*OW+xx] = float64(float32(acc))
				}
			}
		}
	}
	return []int64{N, O, OH, OW}, out
}

func TestConvolutionAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	cases := []struct {
		x, w []int64
		c    ConvConfig
	}{
		{[]int64{1, 3, 7, 6}, []int64{4, 3, 3, 3}, ConvConfig{}},
		{[]int64{2, 4, 9, 8}, []int64{6, 2, 3, 2}, ConvConfig{WindowStrides: []int64{2, 3}, PadLow: []int64{1, 0}, PadHigh: []int64{2, 1}, FeatureGroupCount: 2}},
		{[]int64{1, 3, 10, 9}, []int64{2, 3, 3, 3}, ConvConfig{RhsDilation: []int64{2, 3}, PadLow: []int64{2, 1}, PadHigh: []int64{2, 1}}},
		{[]int64{1, 2, 4, 5}, []int64{3, 2, 3, 2}, ConvConfig{LhsDilation: []int64{2, 3}, PadLow: []int64{2, 1}, PadHigh: []int64{2, 1}, WindowStrides: []int64{1, 2}}},
		{[]int64{2, 4, 8, 8}, []int64{4, 1, 3, 3}, ConvConfig{FeatureGroupCount: 4, PadLow: []int64{-1, 1}, PadHigh: []int64{1, -2}, WindowStrides: []int64{3, 2}}}, // depthwise, negative padding
	}
	for i, tc := range cases {
		x, w := randTensor(r, f32(tc.x...)), randTensor(r, f32(tc.w...))
		out := evalOne(t, ConvolutionOp, []*g.Tensor{x, w}, nil, tc.c.Attrs())
		full := tc.c
		for _, s := range []*[]int64{&full.WindowStrides, &full.LhsDilation, &full.RhsDilation} {
			if *s == nil {
				*s = []int64{1, 1}
			}
		}
		for _, s := range []*[]int64{&full.PadLow, &full.PadHigh} {
			if *s == nil {
				*s = []int64{0, 0}
			}
		}
		shape, want := naiveConv2D(x, w, full)
		require.Equal(t, shape, out.Type.Shape, "case %d", i)
		assert.Equal(t, want, out.Data, "case %d", i)
		// The same kernel in other layouts (HWIO, and a scrambled one)
		// through the kernel dimension numbers gives the same result.
		for _, perm := range [][]int64{{2, 3, 1, 0}, {1, 3, 0, 2}} {
			wp := evalOne(t, TransposeOp, []*g.Tensor{w}, nil, attrs("permutation", ints(perm...)))
			pos := make([]int64, 4)
			for i, d := range perm {
				pos[d] = int64(i)
			}
			c := tc.c
			c.Kernel = &KernelDims{OutputFeature: pos[0], InputFeature: pos[1], Spatial: []int64{pos[2], pos[3]}}
			got := evalOne(t, ConvolutionOp, []*g.Tensor{x, wp}, nil, c.Attrs())
			assert.Equal(t, want, got.Data, "case %d, kernel permuted %v", i, perm)
		}
		// The same input and result in other layouts (NHWC, and scrambled
		// ones) through the input and output dimension numbers.
		wantT := tensorOf(f32(shape...), want...)
		for _, lp := range []struct{ in, out []int64 }{{[]int64{0, 2, 3, 1}, []int64{0, 2, 3, 1}}, {[]int64{3, 1, 0, 2}, []int64{2, 0, 3, 1}}} {
			xp := evalOne(t, TransposeOp, []*g.Tensor{x}, nil, attrs("permutation", ints(lp.in...)))
			c := tc.c
			c.Input, c.Output = layoutOf(lp.in), layoutOf(lp.out)
			got := evalOne(t, ConvolutionOp, []*g.Tensor{xp, w}, nil, c.Attrs())
			wantP := evalOne(t, TransposeOp, []*g.Tensor{wantT}, nil, attrs("permutation", ints(lp.out...)))
			require.Equal(t, wantP.Type.Shape, got.Type.Shape, "case %d, layouts %v", i, lp)
			assert.Equal(t, wantP.Data, got.Data, "case %d, layouts %v", i, lp)
		}
	}
}

// layoutOf is the dimension numbers of the NCHW tensor transposed by
// perm (the transposed tensor's dimension i is the NCHW dimension
// perm[i]).
func layoutOf(perm []int64) *ActivationDims {
	pos := make([]int64, len(perm))
	for i, d := range perm {
		pos[d] = int64(i)
	}
	return &ActivationDims{Batch: pos[0], Feature: pos[1], Spatial: pos[2:]}
}

func TestActivationDimsHelpers(t *testing.T) {
	assert.Equal(t, []int64{0, 1, 2, 3}, NCHW(4).Perm())
	assert.Equal(t, []int64{0, 3, 1, 2}, NHWC(4).Perm())
	assert.Equal(t, []int64{0, 2, 1}, NHWC(3).Perm())
	assert.True(t, NCHW(5).IsNCHW())
	assert.False(t, NHWC(4).IsNCHW())
	// SetActivationDims writes a non-default layout and drops a default one.
	b := newFB(t, f32(1, 2, 5, 5), f32(3, 2, 1, 1))
	op := b.build(ConvolutionOp, b.f.Args(), nil)
	SetActivationDims(op, NHWC(4), NHWC(4))
	assert.Equal(t, g.IntAttr(3), op.Attr("input_feature_dimension"))
	assert.Equal(t, ints(1, 2), op.Attr("output_spatial_dimensions"))
	SetActivationDims(op, NCHW(4), NHWC(4))
	assert.Nil(t, op.Attr("input_feature_dimension"))
	assert.Nil(t, op.Attr("input_spatial_dimensions"))
	assert.NotNil(t, op.Attr("output_feature_dimension"))
}

func TestConvolution1DByHand(t *testing.T) {
	// x = [1 2 3 4 5], w = [1 0 -1], padding [1, 1], stride 2
	x := tensorOf(f32(1, 1, 5), 1, 2, 3, 4, 5)
	w := tensorOf(f32(1, 1, 3), 1, 0, -1)
	out := evalOne(t, ConvolutionOp, []*g.Tensor{x, w}, nil, ConvConfig{WindowStrides: []int64{2}, PadLow: []int64{1}, PadHigh: []int64{1}}.Attrs())
	// padded: 0 1 2 3 4 5 0 → windows at 0, 2, 4: (0-2), (2-4), (4-0)
	assert.Equal(t, []int64{1, 1, 3}, out.Type.Shape)
	assert.Equal(t, []float64{-2, -2, 4}, out.Data)
	// 3 spatial dims, all ones → counts
	x3 := tensorOf(f32(1, 1, 2, 2, 2), 1, 1, 1, 1, 1, 1, 1, 1)
	w3 := tensorOf(f32(1, 1, 2, 2, 2), 1, 1, 1, 1, 1, 1, 1, 1)
	o3 := evalOne(t, ConvolutionOp, []*g.Tensor{x3, w3}, nil, nil)
	assert.Equal(t, []float64{8}, o3.Data)
}

func TestConvolutionVerifyErrors(t *testing.T) {
	x, w := f32(1, 4, 8, 8), f32(6, 2, 3, 3)
	good := func() g.DictAttr { return ConvConfig{FeatureGroupCount: 2}.Attrs() }
	cases := []struct {
		x, w *g.TensorType
		a    g.DictAttr
		want string
	}{
		{f32(4, 8), f32(6, 4), nil, "lhs must have rank >= 3"},
		{x, f32(6, 2, 3), good(), "rhs must have the rank of lhs"},
		{x, w, nil, "rhs input feature dimension must be 4"},
		{x, w, attrs("feature_group_count", g.IntAttr(3)), "not divisible by feature_group_count 3"},
		{x, f32(5, 2, 3, 3), good(), "output feature dimension 5 is not divisible"},
		{x, w, good().Set("feature_group_count", g.IntAttr(0)), "feature_group_count must be positive"},
		{x, w, good().Set("window_strides", ints(1)), "'window_strides' must have 2 elements (one per spatial dimension)"},
		{x, w, good().Set("window_strides", ints(1, 0)), "window_strides must be positive"},
		{x, w, good().Set("lhs_dilation", ints(0, 1)), "lhs_dilation must be positive"},
		{x, w, good().Set("rhs_dilation", ints(1, -1)), "rhs_dilation must be positive"},
		{x, w, good().Set("padding", ints(1, 1)), "must be an array of 2 [low, high] integer pairs"},
		{x, w, good().Set("padding", g.ArrayAttr{ints(1, 1), ints(1)}), "must be an array of 2 [low, high] integer pairs"},
		{x, w, good().Set("padding", g.ArrayAttr{ints(-5, -4), ints(0, 0)}), "makes spatial dimension 0 negative"},
		{x, tt(g.F16, 6, 2, 3, 3), good(), "same element type"},
		{x, w, good().Set("kernel_spatial_dimensions", ints(2)), "'kernel_spatial_dimensions' must have 2 elements"},
		{x, w, good().Set("kernel_input_feature_dimension", g.IntAttr(0)), "must be a permutation of the rhs dimensions 0..3"},
		{x, w, good().Set("kernel_spatial_dimensions", ints(2, 4)), "must be a permutation of the rhs dimensions 0..3"},
		{x, f32(3, 3, 2, 6), good().Set("kernel_output_feature_dimension", g.IntAttr(3)).Set("kernel_input_feature_dimension", g.IntAttr(2)).Set("kernel_spatial_dimensions", ints(0, 0)), "must be a permutation"},
		{x, w, good().Set("input_spatial_dimensions", ints(2)), "'input_spatial_dimensions' must have 2 elements"},
		{x, w, good().Set("input_feature_dimension", g.IntAttr(0)), "input dimension numbers (batch 0, feature 0, spatial [2 3]) must be a permutation of the dimensions 0..3"},
		{x, w, good().Set("output_spatial_dimensions", ints(1, 4)), "output dimension numbers"},
		{x, w, good().Set("output_batch_dimension", g.IntAttr(-1)), "output dimension numbers"},
		{f32(1, 8, 8, 5), w, good().Set("input_feature_dimension", g.IntAttr(3)).Set("input_spatial_dimensions", ints(1, 2)), "input feature dimension 5 is not divisible by feature_group_count 2"},
	}
	for i, c := range cases {
		b := newFB(t, c.x, c.w)
		op := b.op(ConvolutionOp, b.f.Args(), []g.Type{f32(1, 6, 6, 6)}, c.a)
		b.ret(op.Results...)
		assert.Contains(t, b.verifyErr(), c.want, fmt.Sprint("case ", i))
	}
	// window larger than the input: empty result, not an error
	b := newFB(t, f32(1, 1, 2, 2), f32(1, 1, 3, 3))
	op := b.build(ConvolutionOp, b.f.Args(), nil)
	assert.Equal(t, []int64{1, 1, 0, 0}, op.Results[0].Type.(*g.TensorType).Shape)
}
