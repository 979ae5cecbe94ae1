package tensorir_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/tensorir"
)

type verifyCase struct {
	name string
	src  string
	want string // the first diagnostic line
}

// verifyErrorCases parse but fail verification.
var verifyErrorCases = []verifyCase{
	{"too many indices", "tir.func @f(out %A: buffer<4xf32>) {\n  %A[0, 1] = 1.0\n}",
		"v.tir:2:3: error: store to buffer %A with 2 indices; it has 1 dimensions"},
	{"too few load indices", "tir.func @f(%A: buffer<4x4xf32>, out %B: buffer<4xf32>) {\n  %B[0] = %A[1]\n}",
		"v.tir:2:3: error: load from buffer %A with 1 indices; it has 2 dimensions"},
	{"store dtype", "tir.func @f(out %A: buffer<4xf32>) {\n  %A[0] = 1.0 : f64\n}",
		"v.tir:2:3: error: store to buffer %A of f32: value has dtype f64"},
	{"binary dtypes", "tir.func @f(out %A: buffer<4xf32>, %B: buffer<4xf16>) {\n  %A[0] = %A[1] + %B[1]\n}",
		"v.tir:2:3: error: 'add' operands have different dtypes f32 and f16"},
	{"integer true division", "tir.func @f(out %A: buffer<4xi32>) {\n  %A[0] = %A[1] / 2 : i32\n}",
		"v.tir:2:3: error: '/' divides floats; use floordiv or floormod for i32"},
	{"float floordiv", "tir.func @f(out %A: buffer<4xf32>) {\n  %A[0] = floordiv(%A[1], 2.0)\n}",
		"v.tir:2:3: error: 'floordiv' takes integers, not f32"},
	{"float index", "tir.func @f(out %A: buffer<4xf32>) {\n  %A[1.0] = 1.0\n}",
		"v.tir:2:3: error: index 0 of buffer %A must be an integer, got f32"},
	{"zero extent", "tir.func @f() {\n  tir.for %i = 0 to 0 {\n  }\n}",
		"v.tir:2:3: error: loop %i: extent must be positive, got 0"},
	{"negative extent", "tir.func @f() {\n  tir.for %i = 5 to 3 {\n  }\n}",
		"v.tir:2:3: error: loop %i: extent must be positive, got -2"},
	{"float loop", "tir.func @f() {\n  tir.for %i = 0.0 to 4.0 {\n  }\n}",
		"v.tir:2:3: error: loop %i: minimum must be an integer, got f32"},
	{"loop bound dtypes", "tir.func @f(%n: i32) {\n  tir.for %i = 0 to %n {\n  }\n}",
		"v.tir:2:3: error: loop %i of dtype index has an extent of dtype i32"},
	{"symbolic vectorized", "tir.func @f(%n: index) {\n  tir.for %i = 0 to %n vectorized {\n  }\n}",
		"v.tir:2:3: error: vectorized loop %i must have a constant extent"},
	{"symbolic unrolled", "tir.func @f(%n: index) {\n  tir.for %i = 0 to %n unrolled {\n  }\n}",
		"v.tir:2:3: error: unrolled loop %i must have a constant extent"},
	{"bad thread tag", "tir.func @f() {\n  tir.for %i = 0 to 4 thread_binding(\"threadIdx.w\") {\n  }\n}",
		"v.tir:2:3: error: loop %i: invalid thread tag \"threadIdx.w\" (want blockIdx.x/y/z, threadIdx.x/y/z or vthread)"},
	{"reduce without init", "tir.func @f(%A: buffer<4xf32>, out %S: buffer<f32>) {\n  tir.for %k = 0 to 4 {\n    tir.block \"S\"(%vk = reduce(0:4, %k)) reads(%A[%vk]) writes(%S[]) {\n      %S[] = %S[] + %A[%vk]\n    }\n  }\n}",
		"v.tir:3:5: error: block 'S' has reduce iteration variables but no init; add tir.init or the tessera.accumulate annotation"},
	{"init without reduce", "tir.func @f(out %S: buffer<4xf32>) {\n  tir.for %i = 0 to 4 {\n    tir.block \"S\"(%vi = spatial(0:4, %i)) writes(%S[%vi]) {\n      tir.init {\n        %S[%vi] = 0.0\n      }\n      %S[%vi] = 1.0\n    }\n  }\n}",
		"v.tir:3:5: error: block 'S' has an init but no reduce iteration variables"},
	{"binding out of domain", "tir.func @f(out %S: buffer<4xf32>) {\n  tir.for %i = 0 to 8 {\n    tir.block \"S\"(%vi = spatial(0:4, %i)) writes(%S[%vi]) {\n      %S[%vi] = 1.0\n    }\n  }\n}",
		"v.tir:3:5: error: block 'S': binding of %vi ranges over [0, 7], outside its domain [0, 4)"},
	{"loop feeds spatial and reduce", "tir.func @f(out %S: buffer<4xf32>) {\n  tir.for %i = 0 to 4 {\n    tir.block \"S\"(%vi = spatial(0:4, %i), %vk = reduce(0:4, %i)) writes(%S[%vi]) {\n      tir.init {\n        %S[%vi] = 0.0\n      }\n      %S[%vi] = 1.0\n    }\n  }\n}",
		"v.tir:3:5: error: block 'S': loop %i feeds both spatial %vi and reduce %vk"},
	{"reduce var in written region", "tir.func @f(out %S: buffer<4xf32>) {\n  tir.for %k = 0 to 4 {\n    tir.block \"S\"(%vk = reduce(0:4, %k)) writes(%S[%vk]) {\n      tir.init {\n        %S[%vk] = 0.0\n      }\n      %S[%vk] = 1.0\n    }\n  }\n}",
		"v.tir:3:5: error: block 'S': reduce variable %vk indexes the written region of buffer %S"},
	{"reduce var in store", "tir.func @f(out %S: buffer<4xf32>) {\n  tir.for %k = 0 to 4 {\n    tir.block \"S\"(%vk = reduce(0:4, %k)) writes(%S[0:4]) {\n      tir.init {\n        %S[0] = 0.0\n      }\n      %S[%vk] = 1.0\n    }\n  }\n}",
		"v.tir:7:7: error: block 'S': reduce variable %vk indexes the store to buffer %S"},
	{"binding uses let", "tir.func @f(out %S: buffer<4xf32>) {\n  tir.let %x = 1 {\n    tir.block \"S\"(%vi = spatial(0:4, %x)) writes(%S[%vi]) {\n      %S[%vi] = 1.0\n    }\n  }\n}",
		"v.tir:3:5: error: block 'S': binding of %vi uses let variable %x; bindings are expressions of loop variables"},
	{"binding reads buffer", "tir.func @f(%I: buffer<4xindex>, out %S: buffer<4xf32>) {\n  tir.for %i = 0 to 4 {\n    tir.block \"S\"(%vi = spatial(0:4, %I[%i])) writes(%S[%vi]) {\n      %S[%vi] = 1.0\n    }\n  }\n}",
		"v.tir:3:5: error: block 'S': binding of %vi reads a buffer; bindings are expressions of loop variables"},
	{"duplicate block names", "tir.func @f(out %S: buffer<4xf32>) {\n  tir.block \"b\"() {\n  }\n  tir.block \"b\"() {\n  }\n}",
		"v.tir:4:3: error: block 'b': duplicate block name in function @f"},
	{"unrealized block", "tir.func @f() {\n  tir.block \"b\"(%v = spatial(0:4)) {\n  }\n}",
		"v.tir:2:3: error: block 'b' is not realized: give each iteration variable a binding"},
	{"region rank", "tir.func @f(%A: buffer<4x4xf32>) {\n  tir.block \"b\"() reads(%A[0:4]) {\n  }\n}",
		"v.tir:2:3: error: block 'b': read region of buffer %A has 1 ranges for 2 dimensions"},
	{"allocated buffer in block regions is valid", "tir.func @f() {\n  tir.allocate %T: buffer<4xf32, \"local\"> {\n    tir.block \"b\"() writes(%T[0:4]) {\n      %T[0] = 1.0\n    }\n  }\n}",
		""},
	{"if condition", "tir.func @f(out %A: buffer<4xf32>) {\n  tir.if 1 {\n    %A[0] = 1.0\n  }\n}",
		"v.tir:2:3: error: if condition must be i1, got index"},
	{"predicate", "tir.func @f() {\n  tir.block \"b\"() where(3) {\n  }\n}",
		"v.tir:2:3: error: block 'b': predicate must be i1, got index"},
	{"select arms", "tir.func @f(out %A: buffer<4xf32>) {\n  %A[0] = select(true, 1.0, 2.0 : f64)\n}",
		"v.tir:2:3: error: select arms have different dtypes f32 and f64"},
	{"intrinsic on ints", "tir.func @f(out %A: buffer<4xi32>) {\n  %A[0] = exp(%A[1])\n}",
		"v.tir:2:3: error: 'exp' takes float arguments, not i32"},
	{"logic on ints", "tir.func @f(out %A: buffer<4xi1>) {\n  %A[0] = 1 && 2\n}",
		"v.tir:2:3: error: 'and' takes i1, not index"},
	{"negative dimension", "tir.func @f(%A: buffer<(-1)xf32>) {\n}",
		"v.tir:1:13: error: buffer %A: dimension 0 is negative (-1)"},
	{"stride count", "tir.func @f(%A: buffer<4x4xf32, strides = [1]>) {\n}",
		"v.tir:1:13: error: buffer %A: 1 strides for 2 dimensions"},
	{"unknown scope", "tir.func @f(%A: buffer<4xf32, \"texture\">) {\n}",
		"v.tir:1:13: error: buffer %A: unknown scope \"texture\" (want global, shared or local)"},
	{"alignment", "tir.func @f(%A: buffer<4xf32, align = 48>) {\n}",
		"v.tir:1:13: error: buffer %A: alignment 48 is not a power of two"},
	{"global symbol", "tir.func @f() attributes {global_symbol = 1} {\n}",
		"v.tir:1:1: error: function @f: attribute global_symbol must be a string"},
	{"kernel value", "tir.func @f() attributes {tessera.kernel = 1} {\n}",
		"v.tir:1:1: error: function @f: attribute tessera.kernel takes no value"},
	{"let dtype mismatch via binary", "tir.func @f(%n: i32) {\n  tir.let %x = %n + 1 {\n  }\n}",
		"v.tir:2:3: error: 'add' operands have different dtypes i32 and index"},
	{"bool arithmetic", "tir.func @f(out %A: buffer<4xi1>) {\n  %A[0] = true + false\n}",
		"v.tir:2:3: error: arithmetic 'add' on i1"},
}

func TestVerifyErrors(t *testing.T) {
	for _, c := range verifyErrorCases {
		t.Run(c.name, func(t *testing.T) {
			m, err := tensorir.ParseString("v.tir", c.src)
			require.NoError(t, err)
			err = tensorir.Verify(m)
			if c.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			ds, ok := err.(tensorir.Diagnostics)
			require.True(t, ok, "verifier errors are Diagnostics")
			assert.Equal(t, c.want, ds[0].Error())
		})
	}
}

// A reduce block annotated tessera.accumulate needs no init, and a bare
// module-level scalar use of a loop variable outside its loop is caught
// for IR built through the API.
func TestVerifyAPI(t *testing.T) {
	a := tensorir.NewBuffer("A", tensorir.DF32, 4)
	i := tensorir.NewVar("i", tensorir.DIndex)
	f := &tensorir.PrimFunc{Name: "f", Params: []*tensorir.Param{{Buffer: a, Role: tensorir.RoleOut}},
		Body: tensorir.Seq(
			&tensorir.For{Var: i, Min: tensorir.Int(0), Extent: tensorir.Int(4),
				Body: &tensorir.BufferStore{Buffer: a, Indices: []tensorir.Expr{i}, Value: tensorir.Float(tensorir.DF32, 1)}},
			&tensorir.BufferStore{Buffer: a, Indices: []tensorir.Expr{i}, Value: tensorir.Float(tensorir.DF32, 2)},
		)}
	err := tensorir.VerifyFunc(f)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "use of undefined variable %i")

	// The same variable bound by two loops.
	f.Body = tensorir.Seq(
		&tensorir.For{Var: i, Min: tensorir.Int(0), Extent: tensorir.Int(4), Body: &tensorir.SeqStmt{}},
		&tensorir.For{Var: i, Min: tensorir.Int(0), Extent: tensorir.Int(4), Body: &tensorir.SeqStmt{}},
	)
	err = tensorir.VerifyFunc(f)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "variable %i is defined more than once")

	// A buffer that is neither a parameter nor allocated.
	b := tensorir.NewBuffer("B", tensorir.DF32, 4)
	f.Body = &tensorir.BufferStore{Buffer: b, Indices: []tensorir.Expr{tensorir.Int(0)}, Value: tensorir.Float(tensorir.DF32, 2)}
	err = tensorir.VerifyFunc(f)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "store to buffer %B, which is not a parameter or allocated in scope")
}

// IR built incorrectly through the API is reported, never a panic.
func TestVerifyMalformedAPI(t *testing.T) {
	a := tensorir.NewBuffer("A", tensorir.DF32, 4)
	params := []*tensorir.Param{{Buffer: a}}
	bodies := []tensorir.Stmt{
		&tensorir.For{Min: tensorir.Int(0), Extent: tensorir.Int(1), Body: &tensorir.SeqStmt{}},
		&tensorir.For{Var: tensorir.NewVar("i", tensorir.DIndex), Body: &tensorir.SeqStmt{}},
		&tensorir.LetStmt{Value: tensorir.Int(1)},
		&tensorir.LetStmt{Var: tensorir.NewVar("x", tensorir.DIndex)},
		&tensorir.BufferStore{Buffer: a, Indices: []tensorir.Expr{tensorir.Int(0)}},
		&tensorir.BufferStore{Indices: []tensorir.Expr{nil}, Value: tensorir.Float(tensorir.DF32, 1)},
		&tensorir.BufferStore{Buffer: a, Indices: []tensorir.Expr{tensorir.Int(0)}, Value: &tensorir.Binary{Op: tensorir.OpAdd}},
		&tensorir.BufferStore{Buffer: a, Indices: []tensorir.Expr{tensorir.Int(0)}, Value: &tensorir.Select{}},
		&tensorir.BufferStore{Buffer: a, Indices: []tensorir.Expr{tensorir.Int(0)}, Value: &tensorir.Call{Name: "exp"}},
		&tensorir.BufferStore{Buffer: a, Indices: []tensorir.Expr{tensorir.Int(0)}, Value: &tensorir.BufferLoad{}},
		&tensorir.BufferStore{Buffer: a, Indices: []tensorir.Expr{tensorir.Int(0)}, Value: &tensorir.Not{}},
		&tensorir.BlockRealize{},
		&tensorir.BlockRealize{Block: &tensorir.Block{Name: "b", IterVars: []*tensorir.IterVar{nil}}, Values: []tensorir.Expr{nil}},
		&tensorir.BlockRealize{Block: &tensorir.Block{Name: "b", IterVars: []*tensorir.IterVar{{Var: tensorir.NewVar("v", tensorir.DIndex)}}}, Values: []tensorir.Expr{nil}},
		&tensorir.BlockRealize{Block: &tensorir.Block{Name: "b", Reads: []tensorir.BufferRegion{{}}}},
		&tensorir.IfThenElse{},
		&tensorir.Allocate{Buffer: &tensorir.Buffer{Name: "T", Shape: []tensorir.Expr{nil}}},
		&tensorir.Evaluate{},
	}
	for i, body := range bodies {
		f := &tensorir.PrimFunc{Name: "f", Params: params, Body: body}
		var err error
		require.NotPanics(t, func() { err = tensorir.VerifyFunc(f) }, "case %d", i)
		assert.Error(t, err, "case %d", i)
		require.NotPanics(t, func() { _ = tensorir.Run(f, map[string]*tensorir.Array{"A": tensorir.NewArray(tensorir.DF32, 4)}) }, "case %d", i)
		require.NotPanics(t, func() { _ = tensorir.PrintFunc(f, tensorir.PrintOptions{}) }, "case %d", i)
	}
}
