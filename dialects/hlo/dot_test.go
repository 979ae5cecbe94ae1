package hlo

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	g "github.com/tessera-ml/tessera/graphir"
)

func dotAttrs(lb, rb, lc, rc []int64) g.DictAttr {
	return DotDims{LhsBatch: lb, RhsBatch: rb, LhsContracting: lc, RhsContracting: rc}.Attrs()
}

func TestDotGeneralMatmulByHand(t *testing.T) {
	a := tensorOf(f32(2, 3), 1, 2, 3, 4, 5, 6)
	b := tensorOf(f32(3, 2), 7, 8, 9, 10, 11, 12)
	out := evalOne(t, DotGeneralOp, []*g.Tensor{a, b}, nil, dotAttrs(nil, nil, []int64{1}, []int64{0}))
	assert.Equal(t, []int64{2, 2}, out.Type.Shape)
	assert.Equal(t, []float64{58, 64, 139, 154}, out.Data)
	// x · wᵀ with w stored N×K (rhs_contracting_dimensions = [1])
	w := tensorOf(f32(2, 3), 7, 9, 11, 8, 10, 12)
	out = evalOne(t, DotGeneralOp, []*g.Tensor{a, w}, nil, dotAttrs(nil, nil, []int64{1}, []int64{1}))
	assert.Equal(t, []float64{58, 64, 139, 154}, out.Data)
	// outer product: no contraction
	outer := evalOne(t, DotGeneralOp, []*g.Tensor{tensorOf(f32(2), 1, 2), tensorOf(f32(3), 3, 4, 5)}, nil, nil)
	assert.Equal(t, []int64{2, 3}, outer.Type.Shape)
	assert.Equal(t, []float64{3, 4, 5, 6, 8, 10}, outer.Data)
}

// TestDotGeneralBatchPermuted: lhs K×B×M, rhs N×B×K, batch (1,1),
// contracting (0,2): result B×M×N, against a direct loop.
func TestDotGeneralBatchPermuted(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	const K, B, M, N = 5, 3, 4, 2
	lhs := randTensor(r, f32(K, B, M))
	rhs := randTensor(r, f32(N, B, K))
	out := evalOne(t, DotGeneralOp, []*g.Tensor{lhs, rhs}, nil, dotAttrs([]int64{1}, []int64{1}, []int64{0}, []int64{2}))
	require.Equal(t, []int64{B, M, N}, out.Type.Shape)
	for b := 0; b < B; b++ {
		for m := 0; m < M; m++ {
			for n := 0; n < N; n++ {
				var acc float64
				for k := 0; k < K; k++ {
					acc += lhs.Data[(k*B+b)*M+m] * rhs.Data[(n*B+b)*K+k]
				}
				assert.Equal(t, float64(float32(acc)), out.Data[(b*M+m)*N+n])
			}
		}
	}
}

// Two batch dims and two contracting dims in non-sorted order.
func TestDotGeneralMultiDims(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	// lhs: [k1=2, b0=3, m=2, k0=3, b1=2]; rhs: [b1=2, k0=3, n=4, b0=3, k1=2]
	lhs := randTensor(r, tt(g.F64, 2, 3, 2, 3, 2))
	rhs := randTensor(r, tt(g.F64, 2, 3, 4, 3, 2))
	out := evalOne(t, DotGeneralOp, []*g.Tensor{lhs, rhs}, nil,
		dotAttrs([]int64{1, 4}, []int64{3, 0}, []int64{3, 0}, []int64{1, 4}))
	require.Equal(t, []int64{3, 2, 2, 4}, out.Type.Shape)
	ls, rs := g.Strides(lhs.Type.Shape), g.Strides(rhs.Type.Shape)
	for b0 := int64(0); b0 < 3; b0++ {
		for b1 := int64(0); b1 < 2; b1++ {
			for m := int64(0); m < 2; m++ {
				for n := int64(0); n < 4; n++ {
					var acc float64
					for k0 := int64(0); k0 < 3; k0++ {
						for k1 := int64(0); k1 < 2; k1++ {
							acc += lhs.Data[k1*ls[0]+b0*ls[1]+m*ls[2]+k0*ls[3]+b1*ls[4]] *
								rhs.Data[b1*rs[0]+k0*rs[1]+n*rs[2]+b0*rs[3]+k1*rs[4]]
						}
					}
					assert.InDelta(t, acc, out.Data[((b0*2+b1)*2+m)*4+n], 1e-12)
				}
			}
		}
	}
}

func TestDotGeneralVerifyErrors(t *testing.T) {
	cases := []struct {
		lhs, rhs, res *g.TensorType
		a             g.DictAttr
		want          string
	}{
		{f32(2, 3), f32(3, 4), f32(2, 4), dotAttrs(nil, nil, []int64{1}, nil), "must have the same length, got 1 and 0"},
		{f32(2, 3), f32(3, 4), f32(2, 4), dotAttrs([]int64{0}, nil, []int64{1}, []int64{0}), "lhs_batching_dimensions and rhs_batching_dimensions must have the same length"},
		{f32(2, 3), f32(3, 4), f32(2, 4), dotAttrs(nil, nil, []int64{2}, []int64{0}), "dimension 2 is out of range for rank 2"},
		{f32(2, 3), f32(3, 4), f32(2, 4), dotAttrs(nil, nil, []int64{-1}, []int64{0}), "dimension -1 is out of range"},
		{f32(3, 3), f32(3, 3), f32(3), dotAttrs([]int64{1}, []int64{0}, []int64{1}, []int64{1}), "dimension 1 appears more than once"},
		{f32(2, 3), f32(4, 4), f32(2, 4), dotAttrs(nil, nil, []int64{1}, []int64{0}), "contracting dimension 0 has size 3 on lhs (dim 1) but 4 on rhs (dim 0)"},
		{f32(2, 3, 4), f32(5, 4, 6), f32(2, 3, 6), dotAttrs([]int64{0}, []int64{0}, []int64{2}, []int64{1}), "batching dimension 0 has size 2 on lhs"},
		{f32(2, 3), tt(g.F16, 3, 4), f32(2, 4), dotAttrs(nil, nil, []int64{1}, []int64{0}), "same element type"},
		{f32(2, 3), f32(3, 4), f32(4, 2), dotAttrs(nil, nil, []int64{1}, []int64{0}), "inferred result types (tensor<2x4xf32>) do not match the written types (tensor<4x2xf32>)"},
		{f32(2, 3), f32(3, 4), f32(2, 4), attrs("lhs_contracting_dimensions", g.ArrayAttr{g.StringAttr("x")}, "rhs_contracting_dimensions", ints(0)), "must be an integer array"},
	}
	for i, c := range cases {
		b := newFB(t, c.lhs, c.rhs)
		op := b.op(DotGeneralOp, b.f.Args(), []g.Type{c.res}, c.a)
		b.ret(op.Results...)
		assert.Contains(t, b.verifyErr(), c.want, "case %d", i)
		// Build (which runs Infer without the schema check) must not panic either.
		_, _ = g.Build(DotGeneralOp, b.f.Args(), c.a, g.Location{})
	}
}
