package hlo

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	g "github.com/tessera-ml/tessera/graphir"
)

func TestBroadcastInDim(t *testing.T) {
	x := tensorOf(f32(3), 1, 2, 3)
	out := evalOne(t, BroadcastInDimOp, []*g.Tensor{x}, f32(2, 3), attrs("broadcast_dimensions", ints(1)))
	assert.Equal(t, []float64{1, 2, 3, 1, 2, 3}, out.Data)
	out = evalOne(t, BroadcastInDimOp, []*g.Tensor{x}, f32(3, 2), attrs("broadcast_dimensions", ints(0)))
	assert.Equal(t, []float64{1, 1, 2, 2, 3, 3}, out.Data)
	// size-1 dim expands; transposing broadcast (dims not increasing)
	y := tensorOf(f32(1, 2), 5, 6)
	out = evalOne(t, BroadcastInDimOp, []*g.Tensor{y}, f32(2, 3), attrs("broadcast_dimensions", ints(1, 0)))
	assert.Equal(t, []float64{5, 5, 5, 6, 6, 6}, out.Data)
	s := evalOne(t, BroadcastInDimOp, []*g.Tensor{tensorOf(f32(), 7)}, f32(2, 2), attrs("broadcast_dimensions", ints()))
	assert.Equal(t, []float64{7, 7, 7, 7}, s.Data)

	b := newFB(t, f32(3))
	op := b.add(BroadcastInDim(b.arg(0), f32(4, 3), []int64{1}, loc()))
	b.ret(op.Results...)
	require.NoError(t, b.verify())
	_, err := BroadcastInDim(b.arg(0), f32(4, 2), []int64{1}, loc())
	assert.ErrorContains(t, err, "neither 1 nor the size 2")
}

func TestReshapeTranspose(t *testing.T) {
	x := tensorOf(f32(2, 3), 1, 2, 3, 4, 5, 6)
	out := evalOne(t, ReshapeOp, []*g.Tensor{x}, f32(3, 1, 2), nil)
	assert.Equal(t, x.Data, out.Data)
	assert.Equal(t, []int64{3, 1, 2}, out.Type.Shape)
	tr := evalOne(t, TransposeOp, []*g.Tensor{x}, nil, attrs("permutation", ints(1, 0)))
	assert.Equal(t, []int64{3, 2}, tr.Type.Shape)
	assert.Equal(t, []float64{1, 4, 2, 5, 3, 6}, tr.Data)

	r := rand.New(rand.NewSource(2))
	z := randTensor(r, f32(2, 3, 4))
	tz := evalOne(t, TransposeOp, []*g.Tensor{z}, nil, attrs("permutation", ints(2, 0, 1)))
	require.Equal(t, []int64{4, 2, 3}, tz.Type.Shape)
	for a := 0; a < 4; a++ {
		for b := 0; b < 2; b++ {
			for c := 0; c < 3; c++ {
				assert.Equal(t, z.Data[(b*3+c)*4+a], tz.Data[(a*2+b)*3+c])
			}
		}
	}
}

func TestPad(t *testing.T) {
	x := tensorOf(f32(2, 3), 1, 2, 3, 4, 5, 6)
	pv := tensorOf(f32(), 0)
	// interior 1 in dim 1, edge low 1 in dim 0
	out := evalOne(t, PadOp, []*g.Tensor{x, pv}, nil, attrs("edge_padding_low", ints(1, 0), "edge_padding_high", ints(0, 1), "interior_padding", ints(0, 1)))
	assert.Equal(t, []int64{3, 6}, out.Type.Shape)
	assert.Equal(t, []float64{
		0, 0, 0, 0, 0, 0,
		1, 0, 2, 0, 3, 0,
		4, 0, 5, 0, 6, 0}, out.Data)
	// negative edge padding crops
	out = evalOne(t, PadOp, []*g.Tensor{x, tensorOf(f32(), 9)}, nil, attrs("edge_padding_low", ints(0, -1), "edge_padding_high", ints(-1, 1), "interior_padding", ints(0, 0)))
	assert.Equal(t, []int64{1, 3}, out.Type.Shape)
	assert.Equal(t, []float64{2, 3, 9}, out.Data)

	// random against the inverse mapping
	r := rand.New(rand.NewSource(4))
	y := randTensor(r, f32(3, 4, 2))
	lo, hi, in := []int64{-1, 2, 1}, []int64{2, -3, 0}, []int64{2, 1, 3}
	out = evalOne(t, PadOp, []*g.Tensor{y, tensorOf(f32(), -5)}, nil, attrs("edge_padding_low", ints(lo...), "edge_padding_high", ints(hi...), "interior_padding", ints(in...)))
	require.Equal(t, []int64{3 - 1 + 2 + 2*2, 4 + 2 - 3 + 3, 2 + 1 + 3}, out.Type.Shape)
	idx := make([]int64, 3)
	ys := g.Strides(y.Type.Shape)
	for o, v := range out.Data {
		unravel(int64(o), out.Type.Shape, idx)
		want := -5.0
		var off int64
		inside := true
		for d := 0; d < 3; d++ {
			p := idx[d] - lo[d]
			if p < 0 || p%(in[d]+1) != 0 || p/(in[d]+1) >= y.Type.Shape[d] {
				inside = false
				break
			}
			off += p / (in[d] + 1) * ys[d]
		}
		if inside {
			want = y.Data[off]
		}
		assert.Equal(t, want, v, "element %v", idx)
	}
}

func TestSlice(t *testing.T) {
	x := tensorOf(f32(3, 5), 0, 1, 2, 3, 4, 10, 11, 12, 13, 14, 20, 21, 22, 23, 24)
	out := evalOne(t, SliceOp, []*g.Tensor{x}, nil, attrs("start_indices", ints(0, 1), "limit_indices", ints(3, 5), "strides", ints(2, 3)))
	assert.Equal(t, []int64{2, 2}, out.Type.Shape)
	assert.Equal(t, []float64{1, 4, 21, 24}, out.Data)
	out = evalOne(t, SliceOp, []*g.Tensor{x}, nil, attrs("start_indices", ints(1, 2), "limit_indices", ints(2, 4)))
	assert.Equal(t, []float64{12, 13}, out.Data)
	empty := evalOne(t, SliceOp, []*g.Tensor{x}, nil, attrs("start_indices", ints(1, 2), "limit_indices", ints(1, 4)))
	assert.Equal(t, []int64{0, 2}, empty.Type.Shape)
}

func TestConcatenate(t *testing.T) {
	a := tensorOf(f32(2, 2), 1, 2, 3, 4)
	b := tensorOf(f32(2, 1), 5, 6)
	out := evalOne(t, ConcatenateOp, []*g.Tensor{a, b, a}, nil, attrs("dimension", g.IntAttr(1)))
	assert.Equal(t, []int64{2, 5}, out.Type.Shape)
	assert.Equal(t, []float64{1, 2, 5, 1, 2, 3, 4, 6, 3, 4}, out.Data)
	out = evalOne(t, ConcatenateOp, []*g.Tensor{a, a}, nil, attrs("dimension", g.IntAttr(0)))
	assert.Equal(t, []float64{1, 2, 3, 4, 1, 2, 3, 4}, out.Data)
}

func TestShapeVerifyErrors(t *testing.T) {
	cases := []struct {
		name     string
		operands []g.Type
		result   g.Type
		a        g.DictAttr
		want     string
	}{
		{BroadcastInDimOp, []g.Type{f32(3)}, f32(2, 3), nil, "requires attribute 'broadcast_dimensions'"},
		{BroadcastInDimOp, []g.Type{f32(3)}, f32(2, 3), attrs("broadcast_dimensions", ints(0, 1)), "one entry per operand dimension (1), got 2"},
		{BroadcastInDimOp, []g.Type{f32(3)}, f32(2, 3), attrs("broadcast_dimensions", ints(2)), "dimension 2 is out of range for rank 2"},
		{BroadcastInDimOp, []g.Type{f32(3, 3)}, f32(3, 3), attrs("broadcast_dimensions", ints(0, 0)), "appears more than once"},
		{BroadcastInDimOp, []g.Type{f32(3)}, f32(2, 3), attrs("broadcast_dimensions", ints(0)), "operand dimension 0 has size 3, which is neither 1 nor the size 2"},
		{BroadcastInDimOp, []g.Type{f32(3)}, tt(g.F16, 3), attrs("broadcast_dimensions", ints(0)), "result element type must be f32"},
		{ReshapeOp, []g.Type{f32(2, 3)}, f32(4, 2), nil, "has 6 elements but result tensor<4x2xf32> has 8"},
		{ReshapeOp, []g.Type{f32(2, 3)}, tt(g.I32, 6), nil, "result element type must be f32"},
		{TransposeOp, []g.Type{f32(2, 3)}, f32(3, 2), attrs("permutation", ints(0)), "permutation must have 2 entries"},
		{TransposeOp, []g.Type{f32(2, 3)}, f32(3, 2), attrs("permutation", ints(1, 1)), "appears more than once"},
		{TransposeOp, []g.Type{f32(2, 3)}, f32(3, 2), attrs("permutation", ints(0, 2)), "out of range"},
		{TransposeOp, []g.Type{f32(2, 3)}, f32(2, 3), attrs("permutation", ints(1, 0)), "inferred result types (tensor<3x2xf32>)"},
		{PadOp, []g.Type{f32(2, 3), f32(1)}, f32(2, 3), nil, "padding value must be a rank-0 tensor<f32>"},
		{PadOp, []g.Type{f32(2, 3), f32()}, f32(2, 3), attrs("edge_padding_low", ints(1)), "'edge_padding_low' must have 2 elements"},
		{PadOp, []g.Type{f32(2, 3), f32()}, f32(2, 3), attrs("interior_padding", ints(0, -1)), "interior_padding must be non-negative"},
		{PadOp, []g.Type{f32(2, 3), f32()}, f32(2, 3), attrs("edge_padding_low", ints(-2, 0), "edge_padding_high", ints(-1, 0)), "padding makes dimension 0 negative (-1)"},
		{SliceOp, []g.Type{f32(4)}, f32(2), attrs("start_indices", ints(0)), "requires attribute 'limit_indices'"},
		{SliceOp, []g.Type{f32(4)}, f32(2), attrs("start_indices", ints(3), "limit_indices", ints(2)), "need 0 <= start (3) <= limit (2) <= size (4)"},
		{SliceOp, []g.Type{f32(4)}, f32(2), attrs("start_indices", ints(0), "limit_indices", ints(5)), "limit (5) <= size (4)"},
		{SliceOp, []g.Type{f32(4)}, f32(2), attrs("start_indices", ints(-1), "limit_indices", ints(2)), "need 0 <= start (-1)"},
		{SliceOp, []g.Type{f32(4)}, f32(2), attrs("start_indices", ints(0), "limit_indices", ints(2), "strides", ints(0)), "strides must be positive"},
		{SliceOp, []g.Type{f32(4, 4)}, f32(2), attrs("start_indices", ints(0), "limit_indices", ints(2, 2)), "'start_indices' must have 2 elements"},
		{ConcatenateOp, []g.Type{f32(2, 3), f32(2, 3)}, f32(4, 3), attrs("dimension", g.IntAttr(2)), "dimension 2 is out of range for rank 2"},
		{ConcatenateOp, []g.Type{f32(2, 3), f32(2, 3)}, f32(4, 3), attrs("dimension", g.IntAttr(-1)), "dimension -1 is out of range"},
		{ConcatenateOp, []g.Type{f32(2, 3), f32(3, 2)}, f32(5, 3), attrs("dimension", g.IntAttr(0)), "operand #1 has size 2 in dimension 1, expected 3"},
		{ConcatenateOp, []g.Type{f32(2, 3), f32(2)}, f32(4, 3), attrs("dimension", g.IntAttr(0)), "operand #1 must have element type f32 and rank 2"},
		{ConcatenateOp, []g.Type{f32(), f32()}, f32(), attrs("dimension", g.IntAttr(0)), "out of range for rank 0"},
		{ConcatenateOp, []g.Type{f32(2)}, f32(2), nil, "requires attribute 'dimension'"},
	}
	for i, c := range cases {
		b := newFB(t, c.operands...)
		op := b.op(c.name, b.f.Args(), []g.Type{c.result}, c.a)
		b.ret(op.Results...)
		assert.Contains(t, b.verifyErr(), c.want, "case %d (%s)", i, c.name)
	}
}

// TestReshapeGroups: a symbolic reshape splits into the finest runs of
// dimensions with equal element counts; size-1 dimensions join a
// neighbour's group, and a constant 0 makes one group.
func TestReshapeGroups(t *testing.T) {
	dims := func(ss ...string) []*g.SymExpr {
		out := make([]*g.SymExpr, len(ss))
		for i, s := range ss {
			e, err := g.ParseSymExpr(s)
			require.NoError(t, err)
			out[i] = e
		}
		return out
	}
	for _, c := range []struct {
		a, b    []string
		in, out []int
	}{
		{[]string{"s", "b", "256"}, []string{"s", "4*b", "64"}, []int{0, 1, 3}, []int{0, 1, 3}},
		{[]string{"s", "4*b", "64"}, []string{"b*s", "256"}, []int{0, 3}, []int{0, 2}},
		{[]string{"b*s", "256"}, []string{"s", "b", "256"}, []int{0, 1, 2}, []int{0, 2, 3}},
		{[]string{"b", "3", "4"}, []string{"b", "12"}, []int{0, 1, 3}, []int{0, 1, 2}},
		{[]string{"b", "1", "6"}, []string{"b", "6", "1"}, []int{0, 1, 3}, []int{0, 1, 3}},
		{[]string{"b", "0"}, []string{"0", "b"}, []int{0, 2}, []int{0, 2}},
	} {
		in, out := reshapeGroups(dims(c.a...), dims(c.b...))
		assert.Equal(t, c.in, in, "%v to %v", c.a, c.b)
		assert.Equal(t, c.out, out, "%v to %v", c.a, c.b)
	}
}
