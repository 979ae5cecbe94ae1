package graph

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tessera-ml/tessera/graphir"
)

func TestBatchNorm(t *testing.T) {
	x := tensor([]int64{1, 2, 1, 2}, 1, 2, 3, 4)
	scale := tensor([]int64{2}, 2, 1)
	bias := tensor([]int64{2}, 0, 1)
	mean := tensor([]int64{2}, 1, 3)
	vr := tensor([]int64{2}, 4, 0.25)
	got := evalOp(t, BatchNormOp, attrs("epsilon", 0.0), x, scale, bias, mean, vr)
	// ch0: (x-1)/2*2 → 0, 1; ch1: (x-3)/0.5+1 → 1, 3
	assert.Equal(t, []float64{0, 1, 1, 3}, got.Data)
	// default epsilon 1e-5, rank 2 input, random data vs formula
	rng := newRNG(9)
	for _, shape := range [][]int64{{3, 4}, {2, 3, 5}, {2, 3, 4, 5}} {
		c := shape[1]
		x := randTensor(rng, shape...)
		p := make([]*graphir.Tensor, 4)
		for i := range p {
			p[i] = randTensor(rng, c)
		}
		for i := range p[3].Data {
			p[3].Data[i] = math.Abs(p[3].Data[i]) + 0.1
		}
		got := evalOp(t, BatchNormOp, nil, x, p[0], p[1], p[2], p[3])
		want := make([]float64, len(x.Data))
		for i := range x.Data {
			ch := unravel(int64(i), shape)[1]
			want[i] = p[0].Data[ch]*(x.Data[i]-p[2].Data[ch])/math.Sqrt(p[3].Data[ch]+1e-5) + p[1].Data[ch]
		}
		requireClose(t, want, got.Data, 1e-6)
	}
}

func TestBatchNormErrors(t *testing.T) {
	p := tt(3)
	cases := []struct {
		types []*graphir.TensorType
		a     graphir.DictAttr
		want  string
	}{
		{[]*graphir.TensorType{tt(1, 3, 4, 4), p, p, tt(4), p}, nil, "mean must have shape [3] (channels of tensor<1x3x4x4xf32>), got tensor<4xf32>"},
		{[]*graphir.TensorType{tt(1, 3, 4, 4), tt(3, 1), p, p, p}, nil, "scale must have shape [3]"},
		{[]*graphir.TensorType{tt(3), p, p, p, p}, nil, "input must have rank at least 2"},
		{[]*graphir.TensorType{tt(1, 3, 4, 4), p, p, p, p}, attrs("epsilon", -1.0), "epsilon -1 must be finite and non-negative"},
		{[]*graphir.TensorType{tt(1, 3, 4, 4), p, p, p, graphir.NewTensor(graphir.F16, 3)}, nil, "operand #4 has element type f16"},
	}
	for _, c := range cases {
		err := checkOp(BatchNormOp, c.types, c.a)
		require.Error(t, err, c.want)
		assert.Contains(t, err.Error(), c.want)
	}
}

func TestSoftmax(t *testing.T) {
	x := tensor([]int64{2, 3}, 1, 2, 3, 1, 1, 1)
	got := evalOp(t, SoftmaxOp, nil, x)
	e := []float64{math.Exp(1), math.Exp(2), math.Exp(3)}
	s := e[0] + e[1] + e[2]
	requireClose(t, []float64{e[0] / s, e[1] / s, e[2] / s, 1.0 / 3, 1.0 / 3, 1.0 / 3}, got.Data, 1e-7)
	// axis 0: columns (1,1), (2,1), (3,1)
	got = evalOp(t, SoftmaxOp, attrs("axis", 0), x)
	sig := func(d float64) float64 { return 1 / (1 + math.Exp(-d)) }
	requireClose(t, []float64{0.5, sig(1), sig(2), 0.5, sig(-1), sig(-2)}, got.Data, 1e-7)
	// large values do not overflow
	got = evalOp(t, SoftmaxOp, nil, tensor([]int64{2}, 1000, 1000))
	assert.Equal(t, []float64{0.5, 0.5}, got.Data)
}

func TestSoftmaxAxesRandom(t *testing.T) {
	rng := newRNG(13)
	shape := []int64{2, 3, 4}
	x := randTensor(rng, shape...)
	for _, axis := range []int{0, 1, 2, -1, -2, -3} {
		got := evalOp(t, SoftmaxOp, attrs("axis", axis), x)
		ax := axis
		if ax < 0 {
			ax += 3
		}
		want := make([]float64, len(x.Data))
		for i := range x.Data {
			idx := unravel(int64(i), shape)
			sum := 0.0
			for k := int64(0); k < shape[ax]; k++ {
				j := append([]int64(nil), idx...)
				j[ax] = k
				sum += math.Exp(x.Data[ravel(j, shape)])
			}
			want[i] = math.Exp(x.Data[i]) / sum
		}
		requireClose(t, want, got.Data, 1e-6)
	}
}

func TestSoftmaxErrors(t *testing.T) {
	cases := []struct {
		types []*graphir.TensorType
		a     graphir.DictAttr
		want  string
	}{
		{[]*graphir.TensorType{tt(2, 3)}, attrs("axis", 2), "axis 2 is out of range for rank 2 (expected [-2, 1])"},
		{[]*graphir.TensorType{tt(2, 3)}, attrs("axis", -3), "axis -3 is out of range"},
		{[]*graphir.TensorType{tt()}, nil, "input must have rank at least 1"},
		{[]*graphir.TensorType{graphir.NewTensor(graphir.I32, 3)}, nil, "requires a floating-point element type"},
	}
	for _, c := range cases {
		err := checkOp(SoftmaxOp, c.types, c.a)
		require.Error(t, err, c.want)
		assert.Contains(t, err.Error(), c.want)
	}
}
