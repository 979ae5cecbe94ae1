package graphir_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/graphir"
)

const symbolicPair = `func.func @f(%x: tensor<?x3xf32, ["n"]>, %y: tensor<?x3xf32, ["n"]>) -> tensor<?x3xf32, ["n"]> {
  %0 = test.add %x, %y : tensor<?x3xf32, ["n"]>
  func.return %0 : tensor<?x3xf32, ["n"]>
}`

// BindingOf takes each symbol's size from the inputs' shapes and refuses
// inputs that disagree, naming the symbol and both inputs.
func TestBindingOf(t *testing.T) {
	f := graphLevel.MustParse(t, symbolicPair).Lookup("f")
	assert.Equal(t, []string{"n"}, graphir.FuncSymbols(f))
	bind, err := graphir.BindingOf(f, [][]int64{{4, 3}, {4, 3}}, nil)
	require.NoError(t, err)
	assert.Equal(t, map[string]int64{"n": 4}, bind)

	for _, c := range []struct {
		shapes [][]int64
		want   string
	}{
		{[][]int64{{3, 3}, {4, 3}}, "inconsistent inputs: symbolic dimension 'n' is 3 in input #0 (a.npy) but 4 in input #1 (b.npy)"},
		{[][]int64{{3, 3}, {3, 2}}, "input #1 (b.npy) has shape [3 2], but @f's input is tensor<?x3xf32, [\"n\"]>"},
		{[][]int64{{3, 3, 1}, {3, 3}}, "input #0 (a.npy) has shape [3 3 1], but @f's input is tensor<?x3xf32, [\"n\"]>"},
		{[][]int64{{3, 3}}, "@f takes 2 inputs, got 1"},
	} {
		_, err := graphir.BindingOf(f, c.shapes, []string{"a.npy", "b.npy"})
		assert.EqualError(t, err, c.want)
	}
	g := graphLevel.MustParse(t, `func.func @g(%x: tensor<?xf32, ["2*n"]>) {
  func.return
}`).Lookup("g")
	_, err = graphir.BindingOf(g, [][]int64{{4}}, nil)
	assert.EqualError(t, err, "@g: symbolic dimensions 'n' appear in no input dimension of their own")
}

// BindFunc specializes every type and verifies the result; the clone
// keeps the original symbolic.
func TestBindFunc(t *testing.T) {
	f := graphLevel.MustParse(t, symbolicPair).Lookup("f")
	c := graphir.CloneFunc(f)
	require.NoError(t, graphir.BindFunc(c, map[string]int64{"n": 5}))
	assert.Equal(t, "(tensor<5x3xf32>, tensor<5x3xf32>) -> tensor<5x3xf32>", c.Type.String())
	assert.Equal(t, "tensor<5x3xf32>", c.Entry().First().Results[0].Type.String())
	assert.Equal(t, `tensor<?x3xf32, ["n"]>`, f.Entry().First().Results[0].Type.String(), "the original is untouched")

	h := graphLevel.MustParse(t, `func.func @h(%x: tensor<?xf32, ["n - 4"]>) {
  func.return
}`).Lookup("h")
	err := graphir.BindFunc(h, map[string]int64{"n": 2})
	assert.ErrorContains(t, err, `dimension 0 of tensor<?xf32, ["n - 4"]> is n - 4 = -2, below 0`)
}

// The interpreter runs a symbolic function at the arguments' sizes, as
// the same function specialized to them.
func TestInterpretSymbolic(t *testing.T) {
	m := graphLevel.MustParse(t, `func.func @f(%x: tensor<?x2xf32, ["n"]>, %y: tensor<?x2xf32, ["n"]>) -> tensor<?x2xf32, ["n"]> {
  %0 = test.add %x, %y : tensor<?x2xf32, ["n"]>
  func.return %0 : tensor<?x2xf32, ["n"]>
}`)
	f := m.Lookup("f")
	for _, n := range []int64{1, 3} {
		x := graphir.NewZeroTensor(graphir.NewTensor(graphir.F32, n, 2))
		y := graphir.NewZeroTensor(graphir.NewTensor(graphir.F32, n, 2))
		for i := range x.Data {
			x.Data[i], y.Data[i] = float64(i), 10*float64(i)
		}
		var seen []*graphir.Value
		out, err := graphir.InterpretObserved(f, []*graphir.Tensor{x, y}, func(v *graphir.Value, _ *graphir.Tensor) { seen = append(seen, v) })
		require.NoError(t, err)
		assert.Equal(t, []int64{n, 2}, out[0].Shape())
		for i, v := range out[0].Data {
			assert.Equal(t, 11*float64(i), v)
		}
		assert.Equal(t, f.Entry().First().Results[0], seen[len(seen)-1], "observe sees the original function's values")
	}
	x := graphir.NewZeroTensor(graphir.NewTensor(graphir.F32, 2, 2))
	y := graphir.NewZeroTensor(graphir.NewTensor(graphir.F32, 3, 2))
	_, err := graphir.Interpret(f, []*graphir.Tensor{x, y})
	assert.ErrorContains(t, err, "inconsistent inputs: symbolic dimension 'n' is 2 in input #0 but 3 in input #1")
}

// An op whose definition does not take symbols is refused by the
// verifier, naming them.
func TestSymbolicGate(t *testing.T) {
	m, err := graphir.ParseString("t.mlir", `func.func @f(%x: tensor<?x2xf32, ["n"]>) -> tensor<?x2xf32, ["n"]> {
  %0 = test.neg %x : tensor<?x2xf32, ["n"]>
  func.return %0 : tensor<?x2xf32, ["n"]>
}`)
	if err == nil {
		err = graphir.Verify(m)
	}
	assert.ErrorContains(t, err, "'test.neg' op does not take symbolic dimensions yet ('n'); pin them with --fix-dim n=N")
}
