package graph

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tessera-ml/tessera/graphir"
)

func TestConvTransposeSplit(t *testing.T) {
	for _, c := range []struct {
		t          int64
		autoPad    string
		begin, end int64
	}{
		{3, "SAME_UPPER", 1, 2}, {3, "SAME_LOWER", 2, 1}, {3, "NOTSET", 2, 1},
		{-1, "SAME_UPPER", -1, 0}, {-1, "NOTSET", 0, -1}, {4, "SAME_UPPER", 2, 2}, {0, "NOTSET", 0, 0},
	} {
		b, e := ConvTransposeSplit(c.t, c.autoPad)
		assert.Equal(t, [2]int64{c.begin, c.end}, [2]int64{b, e}, "t = %d, %s", c.t, c.autoPad)
	}
}

func TestConvTransposeHandComputed(t *testing.T) {
	// x = [[1, 2], [3, 4]], w = [[1, 10], [100, 1000]], stride 2: every
	// input pixel stamps the kernel into its own 2×2 block.
	x := tensor([]int64{1, 1, 2, 2}, 1, 2, 3, 4)
	w := tensor([]int64{1, 1, 2, 2}, 1, 10, 100, 1000)
	got := evalOp(t, ConvTransposeOp, attrs("strides", []int64{2, 2}), x, w)
	assert.Equal(t, []int64{1, 1, 4, 4}, got.Shape())
	assert.Equal(t, []float64{
		1, 10, 2, 20,
		100, 1000, 200, 2000,
		3, 30, 4, 40,
		300, 3000, 400, 4000,
	}, got.Data)
	// stride 1 overlaps the stamps; pads [1, 1, 0, 0] drop the first row
	// and column; bias 0.5.
	got = evalOp(t, ConvTransposeOp, attrs("pads", []int64{1, 1, 0, 0}), x, w, tensor([]int64{1}, 0.5))
	assert.Equal(t, []float64{
		1*1000 + 2*100 + 3*10 + 4*1 + 0.5, 2*1000 + 4*10 + 0.5,
		3*1000 + 4*100 + 0.5, 4*1000 + 0.5,
	}, got.Data)
}

// TestConvTransposeIsConvAdjoint: conv_transpose with weight w is the
// adjoint of conv2d with the same weight read as O×(C/groups)×KH×KW, so
// ⟨conv_transpose(x), z⟩ = ⟨x, conv2d(z)⟩ for every x and z (with
// output_padding < stride the conv2d maps the result shape back to x's).
func TestConvTransposeIsConvAdjoint(t *testing.T) {
	rng := newRNG(5)
	for _, c := range []struct {
		x, w                           []int64
		strides, pads, dil, outPadding []int64
		group                          int
	}{
		{[]int64{1, 2, 3, 4}, []int64{2, 3, 3, 3}, []int64{1, 1}, []int64{0, 0, 0, 0}, []int64{1, 1}, []int64{0, 0}, 1},
		{[]int64{2, 3, 4, 3}, []int64{3, 2, 3, 2}, []int64{2, 3}, []int64{1, 0, 0, 1}, []int64{1, 1}, []int64{1, 2}, 1},
		{[]int64{1, 4, 3, 5}, []int64{4, 3, 2, 3}, []int64{2, 2}, []int64{0, 1, 1, 0}, []int64{2, 1}, []int64{1, 0}, 2},
		{[]int64{1, 3, 4, 4}, []int64{3, 1, 3, 3}, []int64{3, 2}, []int64{1, 1, 1, 1}, []int64{1, 2}, []int64{2, 1}, 3},
	} {
		x, w := randTensor(rng, c.x...), randTensor(rng, c.w...)
		y := evalOp(t, ConvTransposeOp, attrs("strides", c.strides, "pads", c.pads, "dilations", c.dil,
			"output_padding", c.outPadding, "group", c.group), x, w)
		z := randTensor(rng, y.Shape()...)
		back := evalOp(t, Conv2DOp, attrs("strides", c.strides, "pads", c.pads, "dilations", c.dil, "groups", c.group), z, w)
		require.Equal(t, x.Shape(), back.Shape())
		lhs, rhs := 0.0, 0.0
		for i := range y.Data {
			lhs += y.Data[i] * z.Data[i]
		}
		for i := range x.Data {
			rhs += x.Data[i] * back.Data[i]
		}
		assert.InDelta(t, lhs, rhs, 1e-3, "%+v", c)
	}
}

func TestConvTransposeShapes(t *testing.T) {
	f := func(x, w []int64, a graphir.DictAttr) []int64 {
		op, err := graphir.Build(ConvTransposeOp, graphir.NewBlock(tt(x...), tt(w...)).Args, a, graphir.Location{})
		require.NoError(t, err)
		return graphir.AsTensor(op.Results[0].Type).Shape
	}
	// ONNX's node tests: output_padding, output_shape, auto_pad SAME_UPPER, 1-D and 3-D.
	assert.Equal(t, []int64{1, 2, 10, 8}, f([]int64{1, 1, 3, 3}, []int64{1, 2, 3, 3}, attrs("strides", []int64{3, 2}, "output_padding", []int64{1, 1})))
	assert.Equal(t, []int64{1, 2, 10, 8}, f([]int64{1, 1, 3, 3}, []int64{1, 2, 3, 3}, attrs("strides", []int64{3, 2}, "output_shape", []int64{10, 8})))
	assert.Equal(t, []int64{1, 2, 6, 6}, f([]int64{1, 1, 3, 3}, []int64{1, 2, 3, 3}, attrs("strides", []int64{2, 2}, "auto_pad", graphir.StringAttr("SAME_UPPER"))))
	assert.Equal(t, []int64{1, 2, 7, 3}, f([]int64{1, 1, 3, 3}, []int64{1, 2, 3, 3}, attrs("strides", []int64{3, 2}, "pads", []int64{1, 2, 1, 2})))
	assert.Equal(t, []int64{1, 2, 5}, f([]int64{1, 1, 3}, []int64{1, 2, 3}, nil))
	assert.Equal(t, []int64{1, 2, 5, 6, 7}, f([]int64{1, 1, 3, 4, 5}, []int64{1, 2, 3, 3, 3}, nil))
	// VALID ignores pads; group multiplies the output channels.
	assert.Equal(t, []int64{2, 6, 9, 4}, f([]int64{2, 4, 4, 2}, []int64{4, 3, 3, 3}, attrs("group", 2, "strides", []int64{2, 1},
		"pads", []int64{5, 5, 5, 5}, "auto_pad", graphir.StringAttr("VALID"))))
}
