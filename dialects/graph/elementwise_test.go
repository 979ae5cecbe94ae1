package graph

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tessera-ml/tessera/graphir"
)

func TestBroadcastShapes(t *testing.T) {
	cases := []struct {
		a, b, want []int64
		err        bool
	}{
		{[]int64{2, 3}, []int64{3}, []int64{2, 3}, false},
		{[]int64{}, []int64{4, 5}, []int64{4, 5}, false},
		{[]int64{}, []int64{}, []int64{}, false},
		{[]int64{4, 1, 3}, []int64{5, 1}, []int64{4, 5, 3}, false},
		{[]int64{1}, []int64{0}, []int64{0}, false},
		{[]int64{0, 3}, []int64{1, 3}, []int64{0, 3}, false},
		{[]int64{2, 3}, []int64{2}, nil, true},
		{[]int64{0}, []int64{2}, nil, true},
		{[]int64{-1}, []int64{2}, nil, true},
		{[]int64{8, 1, 6, 1}, []int64{7, 1, 5}, []int64{8, 7, 6, 5}, false},
	}
	for _, c := range cases {
		got, err := BroadcastShapes(c.a, c.b)
		if c.err {
			assert.Error(t, err, "%v %v", c.a, c.b)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, c.want, got, "%v %v", c.a, c.b)
		// symmetric
		got2, err := BroadcastShapes(c.b, c.a)
		require.NoError(t, err)
		assert.Equal(t, c.want, got2)
	}
}

func TestBinaryHandComputed(t *testing.T) {
	a := tensor([]int64{2, 3}, 1, 2, 3, 4, 5, 6)
	row := tensor([]int64{3}, 10, 20, 30)
	col := tensor([]int64{2, 1}, 100, 200)
	s := tensor(nil, 2)
	assert.Equal(t, []float64{11, 22, 33, 14, 25, 36}, evalOp(t, AddOp, nil, a, row).Data)
	assert.Equal(t, []float64{-99, -98, -97, -196, -195, -194}, evalOp(t, SubOp, nil, a, col).Data)
	assert.Equal(t, []float64{2, 4, 6, 8, 10, 12}, evalOp(t, MulOp, nil, a, s).Data)
	requireClose(t, []float64{2, 1, 2.0 / 3, 0.5, 0.4, 2.0 / 6}, evalOp(t, DivOp, nil, s, a).Data, 1e-7)
	// outer product by broadcasting [2,1] x [3] → [2,3]
	o := evalOp(t, MulOp, nil, col, row)
	assert.Equal(t, []int64{2, 3}, o.Shape())
	assert.Equal(t, []float64{1000, 2000, 3000, 2000, 4000, 6000}, o.Data)
	// rank 0 op rank 0
	assert.Equal(t, []float64{4}, evalOp(t, AddOp, nil, s, s).Data)
	// zero-size broadcast
	z := evalOp(t, AddOp, nil, &graphir.Tensor{Type: tt(0, 3)}, row)
	assert.Equal(t, []int64{0, 3}, z.Shape())
	assert.Empty(t, z.Data)
}

func TestDivRoundsToF32(t *testing.T) {
	one := tensor([]int64{1}, 1)
	three := tensor([]int64{1}, 3)
	got := evalOp(t, DivOp, nil, one, three).Data[0]
	assert.Equal(t, float64(float32(1.0/3)), got)
}

func TestIntegerDiv(t *testing.T) {
	it := func(shape []int64, data ...float64) *graphir.Tensor {
		return &graphir.Tensor{Type: graphir.NewTensor(graphir.I32, shape...), Data: data}
	}
	got := evalOp(t, DivOp, nil, it([]int64{3}, 7, -7, 6), it([]int64{1}, 2))
	assert.Equal(t, []float64{3, -3, 3}, got.Data)
	b := graphir.NewBlock(graphir.NewTensor(graphir.I32, 2), graphir.NewTensor(graphir.I32, 2))
	op, err := graphir.Build(DivOp, b.Args, nil, graphir.Location{})
	require.NoError(t, err)
	_, err = op.Def.Eval(op, []*graphir.Tensor{it([]int64{2}, 1, 2), it([]int64{2}, 1, 0)})
	require.ErrorContains(t, err, "integer division by zero")
}

// naive broadcast through explicit multi-indices.
func naiveBinary(a, b *graphir.Tensor, out []int64, fn func(x, y float64) float64) []float64 {
	res := make([]float64, 0)
	for i := int64(0); i < product(out); i++ {
		idx := unravel(i, out)
		pick := func(x *graphir.Tensor) float64 {
			s := x.Shape()
			sub := make([]int64, len(s))
			for d := range s {
				od := idx[len(out)-len(s)+d]
				if s[d] == 1 {
					od = 0
				}
				sub[d] = od
			}
			return x.Data[ravel(sub, s)]
		}
		res = append(res, float64(float32(fn(pick(a), pick(b)))))
	}
	return res
}

func TestBinaryRandomBroadcast(t *testing.T) {
	rng := newRNG(1)
	shapes := [][2][]int64{
		{{2, 1, 4}, {3, 1}},
		{{1}, {2, 3, 4}},
		{{5, 1, 1, 2}, {1, 3, 1}},
		{{}, {3, 2}},
		{{3, 4}, {3, 4}},
	}
	ops := map[string]func(x, y float64) float64{
		AddOp: func(x, y float64) float64 { return x + y },
		SubOp: func(x, y float64) float64 { return x - y },
		MulOp: func(x, y float64) float64 { return x * y },
		DivOp: func(x, y float64) float64 { return x / y },
	}
	for _, sh := range shapes {
		a, b := randTensor(rng, sh[0]...), randTensor(rng, sh[1]...)
		out, err := BroadcastShapes(sh[0], sh[1])
		require.NoError(t, err)
		for name, fn := range ops {
			got := evalOp(t, name, nil, a, b)
			assert.Equal(t, out, got.Shape())
			assert.Equal(t, naiveBinary(a, b, out, fn), got.Data, "%s %v %v", name, sh[0], sh[1])
		}
	}
}

func TestUnary(t *testing.T) {
	x := tensor([]int64{5}, -2, -0.5, 0, 0.5, 30)
	assert.Equal(t, []float64{0, 0, 0, 0.5, 30}, evalOp(t, ReluOp, nil, x).Data)
	sg := evalOp(t, SigmoidOp, nil, x).Data
	th := evalOp(t, TanhOp, nil, x).Data
	for i, v := range x.Data {
		assert.Equal(t, float64(float32(1/(1+math.Exp(-v)))), sg[i])
		assert.Equal(t, float64(float32(math.Tanh(v))), th[i])
	}
	// extreme inputs do not overflow
	big := tensor([]int64{2}, -1000, 1000)
	assert.Equal(t, []float64{0, 1}, evalOp(t, SigmoidOp, nil, big).Data)
	// rank 0
	assert.Equal(t, []float64{3}, evalOp(t, ReluOp, nil, tensor(nil, 3)).Data)
}

func TestElementwiseErrors(t *testing.T) {
	i32 := graphir.NewTensor(graphir.I32, 3)
	cases := []struct {
		name  string
		types []*graphir.TensorType
		want  string
	}{
		{AddOp, []*graphir.TensorType{tt(2, 3), tt(2)}, "'graph.add' op operand shapes [2, 3] and [2] are not broadcast-compatible"},
		{MulOp, []*graphir.TensorType{tt(4, 1), tt(3, 2)}, "[4, 1] and [3, 2] are not broadcast-compatible (dimension 0: 4 vs 3)"},
		{SubOp, []*graphir.TensorType{tt(3), i32}, "operand #1 has element type i32, but operand #0 has f32"},
		{SigmoidOp, []*graphir.TensorType{i32}, "'graph.sigmoid' op requires a floating-point element type, got tensor<3xi32>"},
		{TanhOp, []*graphir.TensorType{i32}, "requires a floating-point element type"},
		{AddOp, []*graphir.TensorType{tt(-1), tt(1)}, "negative dimension"},
	}
	for _, c := range cases {
		err := checkOp(c.name, c.types, nil)
		require.Error(t, err, c.name)
		assert.Contains(t, err.Error(), c.want)
	}
	// relu on integers is fine
	require.NoError(t, checkOp(ReluOp, []*graphir.TensorType{i32}, nil))
}

func TestBinaryWrittenTypeMismatch(t *testing.T) {
	m, err := graphir.ParseString("t.mlir", `module {
  func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<3x3xf32> {
    %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
    func.return %0 : tensor<3x3xf32>
  }
}`)
	require.NoError(t, err)
	err = graphir.Verify(m)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "inferred result types (tensor<2x3xf32>) do not match")
}
