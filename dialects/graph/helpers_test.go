package graph

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tessera-ml/tessera/graphir"
)

func tt(shape ...int64) *graphir.TensorType { return graphir.NewTensor(graphir.F32, shape...) }

func attrs(kv ...any) graphir.DictAttr {
	d := graphir.DictAttr{}
	for i := 0; i < len(kv); i += 2 {
		var a graphir.Attribute
		switch v := kv[i+1].(type) {
		case []int64:
			a = graphir.I64Array(v...)
		case int:
			a = graphir.IntAttr(int64(v))
		case float64:
			a = graphir.F32Attr(v)
		case bool:
			a = graphir.BoolAttr(v)
		case graphir.Attribute:
			a = v
		default:
			panic("attrs: unsupported value")
		}
		d = d.Set(kv[i].(string), a)
	}
	return d
}

// checkOp builds a function applying op name to arguments of the given
// types and returns the first error of Build (Infer) or of Verify.
func checkOp(name string, types []*graphir.TensorType, a graphir.DictAttr) error {
	in := make([]graphir.Type, len(types))
	for i, t := range types {
		in[i] = t
	}
	f := graphir.NewFunc("main", &graphir.FunctionType{Inputs: in}, graphir.Location{})
	op, err := graphir.Build(name, f.Args(), a, graphir.Location{File: "t.mlir", Line: 1, Col: 1})
	if err != nil {
		return err
	}
	f.Entry().Append(op)
	f.Type.Results = []graphir.Type{op.Results[0].Type}
	f.Entry().Append(graphir.NewOp(graphir.ReturnOpName, op.Results, nil, nil, graphir.Location{}))
	m := &graphir.Module{}
	m.AddFunc(f)
	return graphir.Verify(m)
}

// evalOp builds op name over the inputs' types and runs its evaluator.
func evalOp(t *testing.T, name string, a graphir.DictAttr, ins ...*graphir.Tensor) *graphir.Tensor {
	t.Helper()
	types := make([]*graphir.TensorType, len(ins))
	for i, x := range ins {
		types[i] = x.Type
	}
	require.NoError(t, checkOp(name, types, a))
	tys := make([]graphir.Type, len(ins))
	for i, x := range ins {
		tys[i] = x.Type
	}
	b := graphir.NewBlock(tys...)
	op, err := graphir.Build(name, b.Args, a, graphir.Location{})
	require.NoError(t, err)
	outs, err := op.Def.Eval(op, ins)
	require.NoError(t, err)
	require.Len(t, outs, 1)
	require.True(t, outs[0].Type.Equal(op.Results[0].Type), "%s vs %s", outs[0].Type, op.Results[0].Type)
	return outs[0]
}

func tensor(shape []int64, data ...float64) *graphir.Tensor {
	t := &graphir.Tensor{Type: tt(shape...), Data: data}
	if int64(len(data)) != t.Type.NumElements() {
		panic("tensor: wrong element count")
	}
	return t
}

func randTensor(rng *rand.Rand, shape ...int64) *graphir.Tensor {
	t := graphir.NewZeroTensor(tt(shape...))
	for i := range t.Data {
		t.Data[i] = rng.Float64()*2 - 1
	}
	return t.Round()
}

func newRNG(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// requireClose compares element-wise within a relative tolerance (absolute
// near zero).
func requireClose(t *testing.T, want, got []float64, tol float64) {
	t.Helper()
	require.Equal(t, len(want), len(got), "element count")
	for i := range want {
		if math.IsNaN(want[i]) {
			require.True(t, math.IsNaN(got[i]), "element %d: want NaN, got %v", i, got[i])
			continue
		}
		if math.IsInf(want[i], 0) {
			require.Equal(t, want[i], got[i], "element %d", i)
			continue
		}
		d := math.Abs(want[i] - got[i])
		require.LessOrEqual(t, d, tol*math.Max(1, math.Abs(want[i])), "element %d: want %v, got %v", i, want[i], got[i])
	}
}

func unravel(i int64, shape []int64) []int64 {
	idx := make([]int64, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 0 {
			idx[d] = i % shape[d]
			i /= shape[d]
		}
	}
	return idx
}

func ravel(idx, shape []int64) int64 {
	off := int64(0)
	for d := range shape {
		off = off*shape[d] + idx[d]
	}
	return off
}

func parseModule(t *testing.T, src string) *graphir.Module {
	t.Helper()
	m, err := graphir.ParseString("test.mlir", src)
	require.NoError(t, err)
	require.NoError(t, graphir.Verify(m))
	return m
}

// graphPatterns collects the canonicalization patterns of all graph ops.
func graphPatterns() []*graphir.Pattern {
	var ps []*graphir.Pattern
	for _, n := range graphir.RegisteredOps() {
		if d := graphir.LookupOp(n); d != nil && len(n) > 6 && n[:6] == "graph." {
			ps = append(ps, d.Canonicalize...)
		}
	}
	return ps
}

// randomArgs draws random f32 inputs for f.
func randomArgs(rng *rand.Rand, f *graphir.Func) []*graphir.Tensor {
	var args []*graphir.Tensor
	for _, ty := range f.Type.Inputs {
		tt := graphir.AsTensor(ty)
		x := graphir.NewZeroTensor(tt)
		for i := range x.Data {
			x.Data[i] = rng.Float64()*4 - 2
		}
		args = append(args, x.Round())
	}
	return args
}

// requireSameResults interprets main of before and after on the same
// random inputs (several draws) and compares within 1e-5 relative.
func requireSameResults(t *testing.T, before, after *graphir.Module) {
	t.Helper()
	fb, fa := before.Lookup("main"), after.Lookup("main")
	require.NotNil(t, fb)
	require.NotNil(t, fa)
	rng := newRNG(42)
	for trial := 0; trial < 3; trial++ {
		args := randomArgs(rng, fb)
		rb, err := graphir.Interpret(fb, args)
		require.NoError(t, err)
		ra, err := graphir.Interpret(fa, args)
		require.NoError(t, err)
		require.Len(t, ra, len(rb))
		for i := range rb {
			require.True(t, rb[i].Type.Equal(ra[i].Type))
			requireClose(t, rb[i].Data, ra[i].Data, 1e-5)
		}
	}
}

// countOps counts ops named name in m.
func countOps(m *graphir.Module, name string) int {
	n := 0
	m.Walk(func(op *graphir.Op) {
		if op.Name == name {
			n++
		}
	})
	return n
}

// must returns v, panicking on err (an attribute accessor in a test).
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
