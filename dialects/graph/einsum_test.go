package graph

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/graphir"
)

func eq(e string) graphir.DictAttr { return attrs("equation", graphir.StringAttr(e)) }

// TestEinsumHandComputed: the evaluator on equations whose results are
// written out by hand (numpy.einsum gives the same).
func TestEinsumHandComputed(t *testing.T) {
	m := tensor([]int64{2, 3}, 1, 2, 3, 4, 5, 6)
	sq := tensor([]int64{3, 3}, 1, 2, 3, 4, 5, 6, 7, 8, 9)
	v := tensor([]int64{3}, 1, -1, 2)
	cases := []struct {
		eq    string
		ins   []*graphir.Tensor
		shape []int64
		want  []float64
	}{
		{"ij->ji", []*graphir.Tensor{m}, []int64{3, 2}, []float64{1, 4, 2, 5, 3, 6}},
		{"ba", []*graphir.Tensor{m}, []int64{3, 2}, []float64{1, 4, 2, 5, 3, 6}}, // implicit: output "ab"
		{"ij", []*graphir.Tensor{m}, []int64{2, 3}, []float64{1, 2, 3, 4, 5, 6}},
		{"ij->i", []*graphir.Tensor{m}, []int64{2}, []float64{6, 15}},
		{"ij->", []*graphir.Tensor{m}, nil, []float64{21}},
		{"ii", []*graphir.Tensor{sq}, nil, []float64{15}},
		{"ii->i", []*graphir.Tensor{sq}, []int64{3}, []float64{1, 5, 9}},
		{"i,i", []*graphir.Tensor{v, v}, nil, []float64{6}},
		{"i,j->ij", []*graphir.Tensor{tensor([]int64{2}, 1, 2), v}, []int64{2, 3}, []float64{1, -1, 2, 2, -2, 4}},
		{"ij,j->i", []*graphir.Tensor{m, v}, []int64{2}, []float64{5, 11}},
		{"ij,jk", []*graphir.Tensor{m, sq}, []int64{2, 3}, []float64{30, 36, 42, 66, 81, 96}},
		{"ij,kj->ik", []*graphir.Tensor{m, m}, []int64{2, 2}, []float64{14, 32, 32, 77}},
		{"ij,ij->ij", []*graphir.Tensor{m, m}, []int64{2, 3}, []float64{1, 4, 9, 16, 25, 36}},
		{"ii,i->i", []*graphir.Tensor{sq, v}, []int64{3}, []float64{1, -5, 18}},
		{"ij,jk,k->i", []*graphir.Tensor{m, sq, v}, []int64{2}, []float64{30 - 36 + 84, 66 - 81 + 192}},
		{"...j,j->...", []*graphir.Tensor{m, v}, []int64{2}, []float64{5, 11}},
		{"i...->...", []*graphir.Tensor{m}, []int64{3}, []float64{5, 7, 9}},
		{",ij->ji", []*graphir.Tensor{tensor(nil, 2), m}, []int64{3, 2}, []float64{2, 8, 4, 10, 6, 12}},
		// Upper case sorts first in implicit mode: output "Ab".
		{"bA", []*graphir.Tensor{m}, []int64{3, 2}, []float64{1, 4, 2, 5, 3, 6}},
		// Ellipsis dims broadcast: [2,1] against [3] gives [2,3].
		{"...i,...i->...", []*graphir.Tensor{tensor([]int64{2, 1, 2}, 1, 2, 3, 4), tensor([]int64{3, 2}, 1, 0, 0, 1, 1, 1)}, []int64{2, 3}, []float64{1, 2, 3, 3, 4, 7}},
	}
	for _, c := range cases {
		got := evalOp(t, EinsumOp, eq(c.eq), c.ins...)
		assert.Equal(t, c.shape, got.Type.Shape, c.eq)
		assert.Equal(t, c.want, got.Data, c.eq)
	}
}

// TestEinsumMatchesMatMul: a batch matmul with a broadcast batch dim
// written as an einsum equals graph.matmul.
func TestEinsumMatchesMatMul(t *testing.T) {
	rng := newRNG(7)
	a, b := randTensor(rng, 2, 1, 3, 5), randTensor(rng, 4, 5, 6)
	want := evalOp(t, MatMulOp, nil, a, b)
	got := evalOp(t, EinsumOp, eq("...mk,...kn->...mn"), a, b)
	assert.Equal(t, want.Type.Shape, got.Type.Shape)
	requireClose(t, want.Data, got.Data, 1e-6)
	// bhqd,bhkd->bhqk is a matmul with the rhs transposed.
	q, k := randTensor(rng, 2, 3, 4, 5), randTensor(rng, 2, 3, 7, 5)
	kt := evalOp(t, TransposeOp, attrs("perm", []int64{0, 1, 3, 2}), k)
	want = evalOp(t, MatMulOp, nil, q, kt)
	got = evalOp(t, EinsumOp, eq("bhqd,bhkd->bhqk"), q, k)
	requireClose(t, want.Data, got.Data, 1e-6)
}

// TestEinsumIntegers: integer operands multiply and sum exactly.
func TestEinsumIntegers(t *testing.T) {
	x := &graphir.Tensor{Type: graphir.NewTensor(graphir.I64, 2, 2), Data: []float64{1, 2, 3, 4}}
	got := evalOp(t, EinsumOp, eq("ij,jk->ik"), x, x)
	assert.Equal(t, graphir.I64, got.Type.Elem)
	assert.Equal(t, []float64{7, 10, 15, 22}, got.Data)
}

// TestEinsumErrors: every malformed equation and mismatched operand gets
// a diagnostic naming the op and the problem.
func TestEinsumErrors(t *testing.T) {
	i64 := func(shape ...int64) *graphir.TensorType { return graphir.NewTensor(graphir.I64, shape...) }
	i1 := graphir.NewTensor(graphir.I1, 2)
	cases := []struct {
		eq    string
		types []*graphir.TensorType
		want  string
	}{
		{"ij#", []*graphir.TensorType{tt(2, 3)}, `equation "ij#": invalid character '#' at offset 2`},
		{"i1", []*graphir.TensorType{tt(2, 3)}, `invalid character '1' at offset 1`},
		{"i..j", []*graphir.TensorType{tt(2, 3)}, `'.' at offset 1 is not part of an ellipsis '...'`},
		{"...i...", []*graphir.TensorType{tt(2, 3)}, `term "...i..." has more than one ellipsis`},
		{"i->...i...", []*graphir.TensorType{tt(2)}, `term "...i..." has more than one ellipsis`},
		{"i->i->i", []*graphir.TensorType{tt(2)}, `more than one '->' (the second at offset 4)`},
		{"i-i", []*graphir.TensorType{tt(2)}, `'-' at offset 1 does not start '->'`},
		{"i->i,i", []*graphir.TensorType{tt(2)}, `',' at offset 4 is in the output, which is a single term`},
		{"ij,jk->ik", []*graphir.TensorType{tt(2, 3)}, `2 input terms for 1 operands`},
		{"ij", []*graphir.TensorType{tt(2, 3), tt(3)}, `1 input terms for 2 operands`},
		{"ijk->i", []*graphir.TensorType{tt(2, 3)}, `term #0 "ijk" has 3 subscripts but operand #0 has rank 2 (tensor<2x3xf32>)`},
		{"i,i", []*graphir.TensorType{tt(2), tt(2, 2)}, `term #1 "i" has 1 subscripts but operand #1 has rank 2`},
		{"...ijk", []*graphir.TensorType{tt(2, 3)}, `term #0 "...ijk" has 3 subscripts besides its ellipsis but operand #0 has rank 2`},
		{"ij,jk->ik", []*graphir.TensorType{tt(2, 3), tt(4, 5)}, `subscript 'j' has size 3 in operand #0 (tensor<2x3xf32>) but 4 in operand #1 (tensor<4x5xf32>)`},
		{"i,i", []*graphir.TensorType{tt(1), tt(3)}, `subscript 'i' has size 1 in operand #0`},
		{"ii->i", []*graphir.TensorType{tt(2, 3)}, `subscript 'i' is repeated in term #0 "ii" over dimensions of sizes 2 and 3`},
		{"ij->k", []*graphir.TensorType{tt(2, 3)}, `output subscript 'k' does not appear in any input term`},
		{"ij->ii", []*graphir.TensorType{tt(2, 3)}, `output subscript 'i' appears more than once`},
		{"...i,...i", []*graphir.TensorType{tt(2, 3, 4), tt(3, 3, 4)}, `the ellipsis dimensions do not broadcast: operand #0 has [2, 3], operand #1 has [3, 3]`},
		{"...ij->ij", []*graphir.TensorType{tt(5, 2, 3)}, `the output "ij" has no ellipsis but the inputs' ellipsis stands for 1 dimensions`},
		{"ij,jk", []*graphir.TensorType{tt(2, 3), i64(3, 2)}, `operand #1 has element type i64, but operand #0 has f32`},
		{"i", []*graphir.TensorType{i1}, `operands must be numeric, got tensor<2xi1>`},
	}
	for _, c := range cases {
		err := checkOp(EinsumOp, c.types, eq(c.eq))
		require.Error(t, err, c.eq)
		assert.Contains(t, err.Error(), "'graph.einsum' op ", c.eq)
		assert.Contains(t, err.Error(), c.want, c.eq)
	}
	err := checkOp(EinsumOp, []*graphir.TensorType{tt(2)}, nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "equation")
}

// TestEinsumSpacesAndEmptyEllipsis: spaces are ignored (ONNX node tests
// write "bij, bjk -> bik"); an ellipsis standing for no dimension, and an
// output ellipsis with none in the inputs, are allowed.
func TestEinsumSpacesAndEmptyEllipsis(t *testing.T) {
	rng := newRNG(3)
	a, b := randTensor(rng, 2, 3, 4), randTensor(rng, 2, 4, 5)
	want := evalOp(t, EinsumOp, eq("bij,bjk->bik"), a, b)
	got := evalOp(t, EinsumOp, eq(" bij , bjk -> bik "), a, b)
	assert.Equal(t, want.Data, got.Data)
	got = evalOp(t, EinsumOp, eq("b...ij,bjk...->b...ik"), a, b)
	assert.Equal(t, want.Data, got.Data)
	got = evalOp(t, EinsumOp, eq("bij,bjk->...bik"), a, b)
	assert.Equal(t, want.Data, got.Data)
}

// FuzzEinsumEquation: any equation over operands of a few fixed types is
// either refused with a graph.einsum diagnostic or verifies, evaluates,
// and legalizes to hlo ops that compute the same values.
func FuzzEinsumEquation(f *testing.F) {
	for _, s := range []string{"ij,jk->ik", "ii", "...ii->...i", "i,j", "bij, bjk -> bik", "...,...->...",
		"ij->ji", "a...b,b...c", "iij,jk->kj", "->", ",", "i..j", "ij->k", "ij->ii", "...i...", "x-y", "ABc,cd"} {
		f.Add(s, uint8(0))
		f.Add(s, uint8(3))
	}
	sets := [][]*graphir.TensorType{
		{tt(3, 3)}, {tt(2, 3), tt(3, 4)}, {tt(2, 3, 3), tt(3)}, {tt(2, 1, 2), tt(3, 2), tt(2)}, {tt(), tt(2, 2)},
	}
	f.Fuzz(func(t *testing.T, equation string, which uint8) {
		types := sets[int(which)%len(sets)]
		err := checkOp(EinsumOp, types, eq(equation))
		if err != nil {
			require.Contains(t, err.Error(), "'graph.einsum' op ")
			return
		}
		in := make([]graphir.Type, len(types))
		args := make([]*graphir.Tensor, len(types))
		rng := newRNG(uint64(len(equation)))
		for i, ty := range types {
			in[i] = ty
			args[i] = randTensor(rng, ty.Shape...)
		}
		fn := graphir.NewFunc("main", &graphir.FunctionType{Inputs: in}, graphir.Location{})
		op, err := graphir.Build(EinsumOp, fn.Args(), eq(equation), graphir.Location{})
		require.NoError(t, err)
		fn.Entry().Append(op)
		fn.Entry().Append(graphir.NewOp(graphir.ReturnOpName, op.Results, nil, nil, graphir.Location{}))
		fn.Type.Results = []graphir.Type{op.Results[0].Type}
		want, err := graphir.Interpret(fn, args)
		require.NoError(t, err)
		require.NoError(t, LegalizeFunc(fn))
		got, err := graphir.Interpret(fn, args)
		require.NoError(t, err)
		requireClose(t, want[0].Data, got[0].Data, 1e-5)
	})
}
