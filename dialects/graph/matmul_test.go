package graph

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tessera-ml/tessera/graphir"
)

func TestMatMulHandComputed(t *testing.T) {
	a := tensor([]int64{2, 3}, 1, 2, 3, 4, 5, 6)
	b := tensor([]int64{3, 2}, 7, 8, 9, 10, 11, 12)
	got := evalOp(t, MatMulOp, nil, a, b)
	assert.Equal(t, []int64{2, 2}, got.Shape())
	assert.Equal(t, []float64{58, 64, 139, 154}, got.Data)
	v := tensor([]int64{3}, 1, 0, -1)
	// matrix × vector → [2]
	got = evalOp(t, MatMulOp, nil, a, v)
	assert.Equal(t, []int64{2}, got.Shape())
	assert.Equal(t, []float64{-2, -2}, got.Data)
	// vector × matrix → [2]
	got = evalOp(t, MatMulOp, nil, v, b)
	assert.Equal(t, []int64{2}, got.Shape())
	assert.Equal(t, []float64{-4, -4}, got.Data)
	// vector · vector → rank 0
	got = evalOp(t, MatMulOp, nil, v, v)
	assert.Empty(t, got.Shape())
	assert.Equal(t, []float64{2}, got.Data)
}

// naiveMatMul implements NumPy matmul through explicit multi-indices.
func naiveMatMul(a, b *graphir.Tensor) ([]int64, []float64) {
	as, bs := a.Shape(), b.Shape()
	if len(as) == 1 {
		as = []int64{1, as[0]}
	}
	if len(bs) == 1 {
		bs = []int64{bs[0], 1}
	}
	batch, err := BroadcastShapes(as[:len(as)-2], bs[:len(bs)-2])
	if err != nil {
		panic(err)
	}
	m, k, n := as[len(as)-2], as[len(as)-1], bs[len(bs)-1]
	full := append(append([]int64(nil), batch...), m, n)
	var out []float64
	for i := int64(0); i < product(full); i++ {
		idx := unravel(i, full)
		sub := func(s []int64, r, c int64) int64 {
			nb := len(s) - 2
			j := make([]int64, len(s))
			for d := 0; d < nb; d++ {
				j[d] = idx[len(batch)-nb+d]
				if s[d] == 1 {
					j[d] = 0
				}
			}
			j[nb], j[nb+1] = r, c
			return ravel(j, s)
		}
		acc := 0.0
		for kk := int64(0); kk < k; kk++ {
			acc += a.Data[sub(as, idx[len(idx)-2], kk)] * b.Data[sub(bs, kk, idx[len(idx)-1])]
		}
		out = append(out, float64(float32(acc)))
	}
	shape := append([]int64(nil), batch...)
	if len(a.Shape()) > 1 {
		shape = append(shape, m)
	}
	if len(b.Shape()) > 1 {
		shape = append(shape, n)
	}
	return shape, out
}

func TestMatMulBatchedBroadcast(t *testing.T) {
	rng := newRNG(3)
	cases := [][2][]int64{
		{{2, 3, 4}, {4, 5}},
		{{3, 4}, {2, 4, 5}},
		{{2, 1, 3, 4}, {5, 4, 2}},
		{{1, 3, 4}, {6, 4, 2}},
		{{4}, {2, 4, 3}},
		{{2, 3, 4}, {4}},
		{{5, 1, 2}, {1, 2, 7}},
	}
	for _, c := range cases {
		a, b := randTensor(rng, c[0]...), randTensor(rng, c[1]...)
		got := evalOp(t, MatMulOp, nil, a, b)
		shape, want := naiveMatMul(a, b)
		require.Equal(t, shape, got.Shape(), "%v", c)
		requireClose(t, want, got.Data, 1e-6)
	}
}

func TestMatMulErrors(t *testing.T) {
	cases := []struct {
		types []*graphir.TensorType
		want  string
	}{
		{[]*graphir.TensorType{tt(2, 3), tt(4, 5)}, "contracting dimensions differ: tensor<2x3xf32> has 3, tensor<4x5xf32> has 4"},
		{[]*graphir.TensorType{tt(), tt(3)}, "operands must have rank at least 1"},
		{[]*graphir.TensorType{tt(2, 2, 3), tt(3, 3, 4)}, "batch dimensions of tensor<2x2x3xf32> and tensor<3x3x4xf32>"},
		{[]*graphir.TensorType{tt(3), graphir.NewTensor(graphir.F64, 3)}, "element type f64"},
	}
	for _, c := range cases {
		err := checkOp(MatMulOp, c.types, nil)
		require.Error(t, err, c.want)
		assert.Contains(t, err.Error(), c.want)
	}
}

func TestGemmHandComputed(t *testing.T) {
	a := tensor([]int64{2, 2}, 1, 2, 3, 4)
	b := tensor([]int64{2, 2}, 5, 6, 7, 8)
	c := tensor([]int64{2}, 1, -1)
	got := evalOp(t, GemmOp, attrs("alpha", 2.0, "beta", 0.5, "transA", true), a, b, c)
	// Aᵀ = [[1,3],[2,4]]; AᵀB = [[26,30],[38,44]]
	assert.Equal(t, []float64{52.5, 59.5, 76.5, 87.5}, got.Data)
	got = evalOp(t, GemmOp, nil, a, b)
	assert.Equal(t, []float64{19, 22, 43, 50}, got.Data)
}

func TestGemmAllCombinations(t *testing.T) {
	rng := newRNG(11)
	const m, k, n = 3, 4, 5
	a0, b0 := randTensor(rng, m, k), randTensor(rng, k, n)
	transpose := func(x *graphir.Tensor) *graphir.Tensor {
		r, c := x.Shape()[0], x.Shape()[1]
		y := graphir.NewZeroTensor(tt(c, r))
		for i := int64(0); i < r; i++ {
			for j := int64(0); j < c; j++ {
				y.Data[j*r+i] = x.Data[i*c+j]
			}
		}
		return y
	}
	cShapes := [][]int64{nil, {}, {1}, {n}, {m, 1}, {1, n}, {m, n}, {1, 1}}
	for _, ta := range []bool{false, true} {
		for _, tb := range []bool{false, true} {
			for _, ab := range [][2]float64{{1, 1}, {0.5, -2}, {0, 1.5}} {
				for _, cs := range cShapes {
					a, b := a0, b0
					if ta {
						a = transpose(a0)
					}
					if tb {
						b = transpose(b0)
					}
					ins := []*graphir.Tensor{a, b}
					var c *graphir.Tensor
					if cs != nil {
						c = randTensor(rng, cs...)
						ins = append(ins, c)
					}
					got := evalOp(t, GemmOp, attrs("alpha", ab[0], "beta", ab[1], "transA", ta, "transB", tb), ins...)
					want := make([]float64, m*n)
					for i := 0; i < m; i++ {
						for j := 0; j < n; j++ {
							s := 0.0
							for kk := 0; kk < k; kk++ {
								s += a0.Data[i*k+kk] * b0.Data[kk*n+j]
							}
							s *= ab[0]
							if c != nil {
								ci, cj := i, j
								sh := c.Shape()
								var cv float64
								switch len(sh) {
								case 0:
									cv = c.Data[0]
								case 1:
									if sh[0] == 1 {
										cj = 0
									}
									cv = c.Data[cj]
								case 2:
									if sh[0] == 1 {
										ci = 0
									}
									if sh[1] == 1 {
										cj = 0
									}
									cv = c.Data[int64(ci)*sh[1]+int64(cj)]
								}
								s += ab[1] * cv
							}
							want[i*n+j] = s
						}
					}
					requireClose(t, want, got.Data, 1e-6)
					assert.Equal(t, []int64{m, n}, got.Shape(), fmt.Sprint(ta, tb, cs))
				}
			}
		}
	}
}

func TestGemmErrors(t *testing.T) {
	cases := []struct {
		types []*graphir.TensorType
		a     graphir.DictAttr
		want  string
	}{
		{[]*graphir.TensorType{tt(2, 3), tt(2, 3)}, nil, "contracting dimensions differ: A' is 2×3, B' is 2×3"},
		{[]*graphir.TensorType{tt(2, 3), tt(2, 3)}, attrs("transB", true, "transA", true), "contracting dimensions differ: A' is 3×2, B' is 3×2"},
		{[]*graphir.TensorType{tt(2, 3, 1), tt(3, 2)}, nil, "A and B must be rank 2"},
		{[]*graphir.TensorType{tt(2, 3), tt(3, 4), tt(3)}, nil, "C tensor<3xf32> is not unidirectionally broadcastable to [2, 4]"},
		{[]*graphir.TensorType{tt(2, 3), tt(3, 4), tt(4, 2)}, nil, "not unidirectionally broadcastable"},
		{[]*graphir.TensorType{tt(2, 3), tt(3, 4), tt(1, 2, 4)}, nil, "not unidirectionally broadcastable"},
		{[]*graphir.TensorType{tt(2, 3), tt(3, 4)}, attrs("alpha", graphir.StringAttr("one")), "attribute 'alpha' must be a float"},
		{[]*graphir.TensorType{tt(2, 3), tt(3, 4)}, attrs("transA", 1), "attribute 'transA' must be a bool"},
	}
	for _, c := range cases {
		err := checkOp(GemmOp, c.types, c.a)
		require.Error(t, err, c.want)
		assert.Contains(t, err.Error(), c.want)
	}
}
