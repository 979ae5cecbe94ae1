package graph

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tessera-ml/tessera/graphir"
)

// randomAttr draws a plausible or malformed attribute value.
func randomAttr(rng *rand.Rand) graphir.Attribute {
	switch rng.IntN(7) {
	case 0:
		return graphir.IntAttr(int64(rng.IntN(7) - 2))
	case 1:
		return graphir.F32Attr(rng.Float64()*4 - 1)
	case 2:
		return graphir.BoolAttr(rng.IntN(2) == 0)
	case 3:
		return graphir.StringAttr("x")
	case 4:
		return graphir.ArrayAttr{graphir.StringAttr("a"), graphir.IntAttr(1)}
	case 5:
		return &graphir.DenseElementsAttr{Type: tt(2), Floats: []float64{1, 2}}
	}
	n := rng.IntN(6)
	vs := make([]int64, n)
	for i := range vs {
		vs[i] = int64(rng.IntN(7) - 2)
	}
	return graphir.I64Array(vs...)
}

// randomOps draws random instances of some graph ops for the never-panic
// tests: random operand types (rank ≤ maxRank, dims < maxDim, now and then
// a dynamic dim, a non-tensor operand or a wrong operand count) and up to
// maxAttrs random attributes named from attrNames.
type randomOps struct {
	rng              *rand.Rand
	names, attrNames []string
	dtypes           []graphir.DType
	maxRank, maxDim  int
	maxAttrs         int
}

// draw builds one op in a one-op function; ok is false when Build or the
// verifier refuses it (which must not panic either).
func (g *randomOps) draw() (op *graphir.Op, f *graphir.Func, ok bool) {
	rng := g.rng
	def := graphir.LookupOp(g.names[rng.IntN(len(g.names))])
	nops := def.Operands.Min
	if def.Operands.Max != def.Operands.Min {
		nops += rng.IntN(2)
	}
	if rng.IntN(20) == 0 {
		nops = rng.IntN(4)
	}
	types := make([]graphir.Type, nops)
	for i := range types {
		shape := make([]int64, rng.IntN(g.maxRank+1))
		for d := range shape {
			shape[d] = int64(rng.IntN(g.maxDim))
			if rng.IntN(50) == 0 {
				shape[d] = -1
			}
		}
		types[i] = graphir.NewTensor(g.dtypes[rng.IntN(len(g.dtypes))], shape...)
	}
	if nops > 0 && rng.IntN(30) == 0 {
		types[rng.IntN(nops)] = graphir.F32Type
	}
	a := graphir.DictAttr{}
	for k := rng.IntN(g.maxAttrs + 1); k > 0; k-- {
		a = a.Set(g.attrNames[rng.IntN(len(g.attrNames))], randomAttr(rng))
	}
	b := graphir.NewBlock(types...)
	op, err := graphir.Build(def.Name, b.Args, a, graphir.Location{})
	if err != nil {
		return nil, nil, false
	}
	f = graphir.NewFunc("main", &graphir.FunctionType{Inputs: types, Results: []graphir.Type{op.Results[0].Type}}, graphir.Location{})
	for i, arg := range b.Args {
		arg.ReplaceAllUsesWith(f.Args()[i])
	}
	f.Entry().Append(op)
	f.Entry().Append(graphir.NewOp(graphir.ReturnOpName, op.Results, nil, nil, graphir.Location{}))
	m := &graphir.Module{}
	m.AddFunc(f)
	if graphir.Verify(m) != nil {
		return nil, nil, false
	}
	return op, f, true
}

// interpretSmall runs f on random inputs when they hold at most 4096
// elements each; errors are fine, panics are not.
func interpretSmall(rng *rand.Rand, f *graphir.Func) {
	for _, ty := range f.Type.Inputs {
		if tt := graphir.AsTensor(ty); tt == nil || tt.NumElements() > 4096 {
			return
		}
	}
	_, _ = graphir.Interpret(f, randomArgs(rng, f))
}

// TestOpsNeverPanic builds every graph op with random operand types and
// random attributes and runs Infer, the verifier and, where inference
// succeeds, the evaluator; none may panic.
func TestOpsNeverPanic(t *testing.T) {
	var names []string
	for _, n := range graphir.RegisteredOps() {
		if strings.HasPrefix(n, "graph.") {
			names = append(names, n)
		}
	}
	require.NotEmpty(t, names)
	g := &randomOps{rng: newRNG(99), names: names, attrNames: schemaAttrNames(names),
		dtypes: []graphir.DType{graphir.F32, graphir.F32, graphir.F32, graphir.I32}, maxRank: 5, maxDim: 5, maxAttrs: 3}
	for iter := 0; iter < 20000; iter++ {
		if _, f, ok := g.draw(); ok {
			interpretSmall(g.rng, f)
		}
	}
}

// TestEvalRejectsMismatchedInputs: evaluators check their inputs against
// the operand types instead of indexing out of range.
func TestEvalRejectsMismatchedInputs(t *testing.T) {
	b := graphir.NewBlock(tt(2, 3), tt(3))
	op, err := graphir.Build(AddOp, b.Args, nil, graphir.Location{})
	require.NoError(t, err)
	_, err = op.Def.Eval(op, []*graphir.Tensor{randTensor(newRNG(1), 2, 3)})
	require.ErrorContains(t, err, "evaluator got 1 inputs for 2 operands")
	_, err = op.Def.Eval(op, []*graphir.Tensor{randTensor(newRNG(1), 2, 3), randTensor(newRNG(1), 4)})
	require.ErrorContains(t, err, "evaluator input #1 has type tensor<4xf32>, operand type is tensor<3xf32>")
	_, err = op.Def.Eval(op, []*graphir.Tensor{randTensor(newRNG(1), 2, 3), {Type: tt(3), Data: []float64{1}}})
	require.ErrorContains(t, err, "evaluator input #1 holds 1 elements, tensor<3xf32> has 3")
	_, err = op.Def.Eval(op, []*graphir.Tensor{randTensor(newRNG(1), 2, 3), nil})
	require.ErrorContains(t, err, "evaluator input #1 is missing")
	// an elided constant cannot be evaluated
	c := graphir.NewOp(ConstantOp, nil, []graphir.Type{tt(4)}, attrs("value", &graphir.DenseElementsAttr{Type: tt(4), Elided: true}), graphir.Location{})
	_, err = c.Def.Eval(c, nil)
	require.ErrorContains(t, err, "elided")
}

// schemaAttrNames lists every attribute name the ops' schemas declare, so
// the random attributes hit every op's attribute checks.
func schemaAttrNames(ops []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, n := range ops {
		for _, a := range graphir.LookupOp(n).Attrs {
			if !seen[a.Name] {
				seen[a.Name] = true
				out = append(out, a.Name)
			}
		}
	}
	return out
}
