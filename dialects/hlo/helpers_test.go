package hlo

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
	g "github.com/tessera-ml/tessera/graphir"
)

// fb builds a one-function module for tests.
type fb struct {
	t *testing.T
	m *g.Module
	f *g.Func
}

func newFB(t *testing.T, inputs ...g.Type) *fb {
	f := g.NewFunc("main", &g.FunctionType{Inputs: inputs}, g.Location{File: "test.mlir", Line: 1, Col: 1})
	m := &g.Module{}
	m.AddFunc(f)
	return &fb{t: t, m: m, f: f}
}

func (b *fb) arg(i int) *g.Value { return b.f.Args()[i] }

var nextLine = 2

func loc() g.Location {
	nextLine++
	return g.Location{File: "test.mlir", Line: nextLine, Col: 3}
}

// op appends an op with explicit result types (which may be wrong on purpose).
func (b *fb) op(name string, operands []*g.Value, results []g.Type, attrs g.DictAttr) *g.Op {
	op := g.NewOp(name, operands, results, attrs, loc())
	b.f.Entry().Append(op)
	return op
}

// build appends an op with inferred result types; inference must succeed.
func (b *fb) build(name string, operands []*g.Value, attrs g.DictAttr) *g.Op {
	op, err := g.Build(name, operands, attrs, loc())
	require.NoError(b.t, err)
	b.f.Entry().Append(op)
	return op
}

func (b *fb) add(op *g.Op, err error) *g.Op {
	require.NoError(b.t, err)
	b.f.Entry().Append(op)
	return op
}

func (b *fb) ret(vals ...*g.Value) {
	var ts []g.Type
	for _, v := range vals {
		ts = append(ts, v.Type)
	}
	b.f.Type.Results = ts
	b.f.Entry().Append(g.NewOp(g.ReturnOpName, vals, nil, nil, loc()))
}

func (b *fb) verify() error { return g.Verify(b.m) }

// verifyErr returns the verifier's message for a module expected to be invalid.
func (b *fb) verifyErr() string {
	err := b.verify()
	require.Error(b.t, err)
	return err.Error()
}

func tt(e g.DType, shape ...int64) *g.TensorType { return g.NewTensor(e, shape...) }

func f32(shape ...int64) *g.TensorType { return g.NewTensor(g.F32, shape...) }

func ints(vs ...int64) g.ArrayAttr { return g.I64Array(vs...) }

func attrs(kv ...any) g.DictAttr {
	var d g.DictAttr
	for i := 0; i < len(kv); i += 2 {
		d = d.Set(kv[i].(string), kv[i+1].(g.Attribute))
	}
	return d
}

func randTensor(r *rand.Rand, t *g.TensorType) *g.Tensor {
	x := g.NewZeroTensor(t)
	for i := range x.Data {
		switch {
		case t.Elem.IsFloat():
			x.Data[i] = r.NormFloat64()
		case t.Elem == g.I1:
			x.Data[i] = float64(r.Intn(2))
		default:
			x.Data[i] = float64(r.Intn(19) - 9)
		}
	}
	return x.Round()
}

func tensorOf(t *g.TensorType, data ...float64) *g.Tensor {
	return (&g.Tensor{Type: t, Data: data}).Round()
}

// evalOne builds main(inputs) { r = name(args) : rt; return r }, verifies it
// and interprets it on the inputs. rt nil means: infer.
func evalOne(t *testing.T, name string, inputs []*g.Tensor, rt g.Type, a g.DictAttr) *g.Tensor {
	t.Helper()
	var ins []g.Type
	for _, x := range inputs {
		ins = append(ins, x.Type)
	}
	b := newFB(t, ins...)
	var op *g.Op
	if rt == nil {
		op = b.build(name, b.f.Args(), a)
	} else {
		op = b.op(name, b.f.Args(), []g.Type{rt}, a)
	}
	b.ret(op.Results...)
	require.NoError(t, b.verify())
	outs, err := g.Interpret(b.f, inputs)
	require.NoError(t, err)
	require.Len(t, outs, 1)
	require.True(t, outs[0].Type.Equal(op.Results[0].Type))
	return outs[0]
}

func interpret(t *testing.T, f *g.Func, args []*g.Tensor) []*g.Tensor {
	t.Helper()
	outs, err := g.Interpret(f, args)
	require.NoError(t, err)
	return outs
}

func randArgs(r *rand.Rand, f *g.Func) []*g.Tensor {
	var args []*g.Tensor
	for _, in := range f.Type.Inputs {
		args = append(args, randTensor(r, in.(*g.TensorType)))
	}
	return args
}

// must returns v, panicking on err (an attribute accessor in a test).
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
