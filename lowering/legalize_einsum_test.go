package lowering

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/schedule"
)

// An einsum case is one graph.einsum over operands of the given shapes
// and element type; dot says whether its legalization must contract with
// hlo.dot_general (and never multiply elementwise), mul whether it has
// no contraction and must multiply.
type einsumCase struct {
	name     string
	equation string
	shapes   [][]int64
	elem     graphir.DType
	dot, mul bool
}

// einsumCases cover every shape class of the ONNX spec: transposes,
// reductions, diagonals (several letters, with a batch), traces,
// inner, outer and elementwise products, matrix-vector, (batch) matmul,
// the transformer attention contractions, ellipsis broadcasting (size-1
// dims, different ranks, empty), implicit mode, three and four operands,
// letters summed from one operand only, rank-0 operands, odd sizes, and
// f64, i32 and i64.
func einsumCases() []einsumCase {
	f32, f64, i32, i64 := graphir.F32, graphir.F64, graphir.I32, graphir.I64
	return []einsumCase{
		{"transpose", "ij->ji", shapes(s(3, 5)), f32, false, false},
		{"transpose_implicit", "ba", shapes(s(4, 7)), f32, false, false},
		{"permute3", "abc->cab", shapes(s(2, 3, 5)), f32, false, false},
		{"identity", "ij->ij", shapes(s(3, 2)), f32, false, false},
		{"row_sum", "ij->i", shapes(s(3, 7)), f64, false, false},
		{"total_sum", "ijk->", shapes(s(2, 3, 5)), f32, false, false},
		{"trace", "ii", shapes(s(5, 5)), f32, false, false},
		{"diagonal", "ii->i", shapes(s(6, 6)), f32, false, false},
		{"batch_diagonal", "bii->bi", shapes(s(3, 4, 4)), f32, false, false},
		{"ellipsis_diagonal", "...ii->...i", shapes(s(2, 3, 5, 5)), f64, false, false},
		{"triple_diagonal", "iii->i", shapes(s(3, 3, 3)), f32, false, false},
		{"two_diagonals", "ijij->ji", shapes(s(3, 2, 3, 2)), f32, false, false},
		{"diagonal_interleaved", "iaib->bai", shapes(s(4, 2, 4, 3)), f32, false, false},
		{"inner", "i,i", shapes(s(7), s(7)), f32, true, false},
		{"inner_explicit", "i,i->", shapes(s(9), s(9)), i64, true, false},
		{"outer", "i,j->ij", shapes(s(3), s(5)), f32, false, true},
		{"outer_transposed", "i,j->ji", shapes(s(3), s(4)), f32, false, true},
		{"hadamard", "ij,ij->ij", shapes(s(3, 5), s(3, 5)), f32, false, true},
		{"scale_by_scalar", ",ij->ji", shapes(nil, s(2, 3)), f32, false, true},
		{"matvec", "ij,j->i", shapes(s(5, 3), s(3)), f32, true, false},
		{"matmul", "ij,jk->ik", shapes(s(3, 4), s(4, 5)), f32, true, false},
		{"matmul_implicit", "ij,jk", shapes(s(3, 4), s(4, 5)), i32, true, false},
		{"matmul_transposed_out", "ij,jk->ki", shapes(s(3, 4), s(4, 5)), f32, true, false},
		{"matmul_a_transposed", "ji,jk->ik", shapes(s(4, 3), s(4, 5)), f32, true, false},
		{"batch_matmul", "bij,bjk->bik", shapes(s(5, 2, 3), s(5, 3, 4)), f64, true, false},
		{"attention_scores", "bhqd,bhkd->bhqk", shapes(s(2, 3, 5, 4), s(2, 3, 7, 4)), f32, true, false},
		{"attention_values", "bhqk,bhkd->bhqd", shapes(s(2, 3, 5, 7), s(2, 3, 7, 4)), f32, true, false},
		{"attention_scores_bqhd", "bqhd,bkhd->bhqk", shapes(s(2, 5, 3, 4), s(2, 7, 3, 4)), f32, true, false},
		{"attention_values_to_bqhd", "bhqk,bkhd->bqhd", shapes(s(2, 3, 5, 7), s(2, 7, 3, 4)), f32, true, false},
		{"multi_contract", "abcd,cdbe->ae", shapes(s(2, 3, 4, 5), s(4, 5, 3, 6)), f32, true, false},
		{"ellipsis_matmul_broadcast", "...ij,...jk->...ik", shapes(s(2, 1, 3, 4), s(5, 4, 2)), f32, true, false},
		{"ellipsis_implicit", "...ij,...jk", shapes(s(3, 2, 4), s(3, 4, 5)), f32, true, false},
		{"ellipsis_middle", "a...b,b...c->...ac", shapes(s(2, 3, 4, 5), s(5, 1, 4, 6)), f32, true, false},
		{"ellipsis_empty", "...i,i...->...", shapes(s(4), s(4)), f32, true, false},
		{"ellipsis_sum_leading", "i...->...", shapes(s(3, 2, 4)), f32, false, false},
		{"ellipsis_only", "...,...->...", shapes(s(3, 1), s(4)), f32, false, true},
		{"summed_one_operand", "ijk,jl->il", shapes(s(2, 3, 4), s(3, 5)), f32, true, false},
		{"summed_both_sides", "ab,cd->", shapes(s(2, 3), s(4, 5)), f32, false, true},
		{"chain3", "ij,jk,kl->il", shapes(s(2, 3), s(3, 4), s(4, 5)), f32, true, false},
		{"matrix_matrix_vector", "ij,jk,k->i", shapes(s(3, 6), s(6, 7), s(7)), f32, true, false},
		{"bilinear", "bn,anm,bm->ba", shapes(s(2, 3), s(4, 3, 5), s(2, 5)), f32, true, false},
		{"four_operands", "ab,bc,cd,de->ae", shapes(s(2, 3), s(3, 4), s(4, 3), s(3, 2)), f32, true, false},
		{"diagonal_then_matmul", "iij,jk->ik", shapes(s(3, 3, 4), s(4, 2)), f32, true, false},
		{"shared_three", "ij,ij,ij->", shapes(s(2, 3), s(2, 3), s(2, 3)), f32, false, false},
		{"upper_case", "Ab,bC->CA", shapes(s(3, 4), s(4, 2)), f32, true, false},
		{"spaces", " bij , bjk -> bik ", shapes(s(2, 3, 4), s(2, 4, 3)), f32, true, false},
		{"size_one_letter", "ij,jk->ik", shapes(s(1, 1), s(1, 3)), f32, true, false},
		{"zero_size", "ij,jk->ik", shapes(s(2, 0), s(0, 3)), f32, true, false},
	}
}

// einsumModule builds @main(args) { einsum; return } with the result type
// inferred.
func einsumModule(t *testing.T, c einsumCase) *graphir.Module {
	t.Helper()
	var in []graphir.Type
	for _, sh := range c.shapes {
		in = append(in, graphir.NewTensor(c.elem, sh...))
	}
	f := graphir.NewFunc("main", &graphir.FunctionType{Inputs: in}, caseLoc)
	op, err := graphir.Build(graph.EinsumOp, f.Args(), graphir.DictAttr{}.Set("equation", graphir.StringAttr(c.equation)), caseLoc)
	require.NoError(t, err, "building %s", c.name)
	f.Entry().Append(op)
	f.Entry().Append(graphir.NewOp(graphir.ReturnOpName, op.Results, nil, nil, caseLoc))
	f.Type.Results = []graphir.Type{op.Results[0].Type}
	m := &graphir.Module{}
	m.AddFunc(f)
	require.NoError(t, graphir.Verify(m), "graph IR of %s", c.name)
	return m
}

// checkEinsum runs one case: the graph interpreter (the equation evaluated
// directly), the legalized hlo, the fused hlo and the tensor IR of the
// fused module agree on random inputs (f32 within 1e-5 of the result's
// scale, integers exactly). tir says whether to lower to tensor IR.
func checkEinsum(t *testing.T, c einsumCase, seed int64, tir bool) {
	rng := rand.New(rand.NewSource(seed))
	f := einsumModule(t, c).Funcs[0]
	var args []*graphir.Tensor
	for _, in := range f.Type.Inputs {
		args = append(args, randomTensor(rng, graphir.AsTensor(in), -2, 2))
	}
	want, err := graphir.Interpret(f, args)
	require.NoError(t, err)

	lm := einsumModule(t, c)
	runPipeline(t, lm, graph.LegalizeToHLOPassName)
	checkLowered(t, lm, &caseLoc, c.name)
	ops := map[string]bool{}
	lm.Walk(func(op *graphir.Op) { ops[op.Name] = true })
	if c.dot {
		assert.True(t, ops[hlo.DotGeneralOp], "%s: no dot_general in\n%s", c.name, graphir.Print(lm))
		assert.False(t, ops[hlo.MultiplyOp], "%s: an elementwise multiply in\n%s", c.name, graphir.Print(lm))
	}
	if c.mul {
		assert.True(t, ops[hlo.MultiplyOp], "%s: no multiply in\n%s", c.name, graphir.Print(lm))
		assert.False(t, ops[hlo.DotGeneralOp], "%s: a dot_general in\n%s", c.name, graphir.Print(lm))
	}
	got, err := graphir.Interpret(lm.Funcs[0], args)
	require.NoError(t, err, "interpreting\n%s", graphir.Print(lm))
	requireEinsumClose(t, want[0], got[0], c.name+" (hlo)")

	fm := einsumModule(t, c)
	runPipeline(t, fm, graph.LegalizeToHLOPassName+",canonicalize,cse,fuse")
	got, err = graphir.Interpret(fm.Funcs[0], args)
	require.NoError(t, err, "interpreting\n%s", graphir.Print(fm))
	requireEinsumClose(t, want[0], got[0], c.name+" (fused)")
	if !tir {
		return
	}
	tm, err := LowerToTIR(fm)
	require.NoError(t, err, "lowering\n%s", graphir.Print(fm))
	require.NoError(t, schedule.InlineElementwiseModule(tm))
	outs := runHost(t, tm, "main", args)
	require.Len(t, outs, 1)
	requireTIRClose(t, want[0], outs[0], 1e-5, c.name+" (tensor IR)")
}

// requireEinsumClose compares within 1e-5 of the result's largest
// magnitude (sums reassociate between the evaluators), integers exactly.
func requireEinsumClose(t *testing.T, want, got *graphir.Tensor, what string) {
	t.Helper()
	require.True(t, want.Type.Equal(got.Type), "%s: type %s, want %s", what, got.Type, want.Type)
	scale := 1.0
	for _, w := range want.Data {
		scale = math.Max(scale, math.Abs(w))
	}
	for i, w := range want.Data {
		if !want.Type.Elem.IsFloat() {
			require.Equal(t, w, got.Data[i], "%s: element %d", what, i)
			continue
		}
		require.InDelta(t, w, got.Data[i], 1e-5*scale, "%s: element %d", what, i)
	}
}

// TestLegalizeEinsum: every case through graph, hlo, fused hlo and tensor
// IR.
func TestLegalizeEinsum(t *testing.T) {
	for i, c := range einsumCases() {
		t.Run(c.name, func(t *testing.T) { checkEinsum(t, c, int64(i)+11, true) })
	}
}

// TestLegalizeEinsumRandom: random equations (1–3 operands, letters
// shared, repeated within a term, summed or kept, ellipses of different
// ranks with size-1 broadcast dims, implicit and explicit output in any
// order) agree between the graph interpreter and the legalized and fused
// hlo; every fourth also through tensor IR.
func TestLegalizeEinsumRandom(t *testing.T) {
	r := rand.New(rand.NewSource(29))
	for n := 0; n < 120; n++ {
		c := randomEinsum(r)
		c.name = fmt.Sprintf("%d_%s", n, strings.ReplaceAll(c.equation, "...", "_"))
		t.Run(c.name, func(t *testing.T) { checkEinsum(t, c, int64(n), n%4 == 0) })
	}
}

// randomEinsum draws a valid equation over up to 5 letters of sizes 1–4.
func randomEinsum(r *rand.Rand) einsumCase {
	const letters = "abcdZ"
	sizes := map[byte]int64{}
	for i := 0; i < len(letters); i++ {
		sizes[letters[i]] = int64(1 + r.Intn(4))
	}
	nEll := r.Intn(3)
	ellSizes := make([]int64, nEll)
	for i := range ellSizes {
		ellSizes[i] = int64(2 + r.Intn(2))
	}
	useEll := r.Intn(3) == 0
	nOps := 1 + r.Intn(3)
	c := einsumCase{elem: graphir.F32}
	var terms []string
	count := map[byte]int{}
	anyEll := false
	for k := 0; k < nOps; k++ {
		var term []byte
		var shape []int64
		for d, n := 0, r.Intn(4); d < n; d++ {
			l := letters[r.Intn(len(letters))]
			term = append(term, l)
			shape = append(shape, sizes[l])
			count[l]++
		}
		if useEll && r.Intn(3) > 0 {
			// This operand's ellipsis stands for the last e of the
			// ellipsis dims, some of them broadcast (size 1).
			anyEll = true
			e := r.Intn(nEll + 1)
			at := r.Intn(len(term) + 1)
			var dims []int64
			for _, sz := range ellSizes[nEll-e:] {
				if r.Intn(3) == 0 {
					sz = 1
				}
				dims = append(dims, sz)
			}
			term = append(term[:at], append([]byte("..."), term[at:]...)...)
			shape = append(shape[:at], append(dims, shape[at:]...)...)
		}
		terms = append(terms, string(term))
		c.shapes = append(c.shapes, shape)
	}
	c.equation = strings.Join(terms, ",")
	if r.Intn(3) == 0 {
		return c // implicit
	}
	var out []string
	for i := 0; i < len(letters); i++ {
		if count[letters[i]] > 0 && r.Intn(2) == 0 {
			out = append(out, string(letters[i]))
		}
	}
	if anyEll {
		out = append(out, "...")
	}
	r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	c.equation += "->" + strings.Join(out, "")
	return c
}
