package hlo

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	g "github.com/tessera-ml/tessera/graphir"
)

// symT parses a tensor type with symbolic dimensions.
func symT(t *testing.T, s string) *g.TensorType {
	t.Helper()
	tt, err := g.ParseTensorType(s)
	require.NoError(t, err, s)
	return tt
}

// symbolicCase builds one hlo op over operands of the types in, with its
// typed builder; want is its result type.
type symbolicCase struct {
	name  string
	in    []string
	build func(t *testing.T, xs []*g.Value) (*g.Op, error)
	want  string
}

// symbolicCases cover every hlo op that takes symbolic dimensions.
var symbolicCases = []symbolicCase{
	{"add", []string{`tensor<?x3xf32, ["n"]>`, `tensor<?x3xf32, ["n"]>`},
		func(_ *testing.T, xs []*g.Value) (*g.Op, error) { return g.Build(AddOp, xs, nil, loc()) }, `tensor<?x3xf32, ["n"]>`},
	{"exponential", []string{`tensor<?x?xf32, ["b", "s"]>`},
		func(_ *testing.T, xs []*g.Value) (*g.Op, error) { return g.Build(ExponentialOp, xs, nil, loc()) }, `tensor<?x?xf32, ["b", "s"]>`},
	{"compare gives i1", []string{`tensor<?xf32, ["n"]>`, `tensor<?xf32, ["n"]>`},
		func(_ *testing.T, xs []*g.Value) (*g.Op, error) { return Compare(xs[0], xs[1], "LT", loc()) }, `tensor<?xi1, ["n"]>`},
	{"select", []string{`tensor<?xi1, ["n"]>`, `tensor<?xf32, ["n"]>`, `tensor<?xf32, ["n"]>`},
		func(_ *testing.T, xs []*g.Value) (*g.Op, error) { return g.Build(SelectOp, xs, nil, loc()) }, `tensor<?xf32, ["n"]>`},
	{"clamp with scalar bounds", []string{`tensor<f32>`, `tensor<?x2xf32, ["n"]>`, `tensor<f32>`},
		func(_ *testing.T, xs []*g.Value) (*g.Op, error) { return g.Build(ClampOp, xs, nil, loc()) }, `tensor<?x2xf32, ["n"]>`},
	{"convert", []string{`tensor<?x2xf32, ["n"]>`},
		func(_ *testing.T, xs []*g.Value) (*g.Op, error) { return Convert(xs[0], g.I32, loc()) }, `tensor<?x2xi32, ["n"]>`},
	{"broadcast a scalar", []string{`tensor<f32>`},
		func(t *testing.T, xs []*g.Value) (*g.Op, error) {
			return BroadcastInDim(xs[0], symT(t, `tensor<?x4xf32, ["n"]>`), nil, loc())
		}, `tensor<?x4xf32, ["n"]>`},
	{"broadcast a symbolic dimension", []string{`tensor<?x1xf32, ["n"]>`},
		func(t *testing.T, xs []*g.Value) (*g.Op, error) {
			return BroadcastInDim(xs[0], symT(t, `tensor<2x?x4xf32, ["n"]>`), []int64{1, 2}, loc())
		}, `tensor<2x?x4xf32, ["n"]>`},
	{"reshape splits a product", []string{`tensor<?x256xf32, ["b*s"]>`},
		func(t *testing.T, xs []*g.Value) (*g.Op, error) {
			return Reshape(xs[0], symT(t, `tensor<?x?x4x64xf32, ["s", "b"]>`), loc())
		}, `tensor<?x?x4x64xf32, ["s", "b"]>`},
	{"transpose", []string{`tensor<?x3x?xf32, ["b", "s"]>`},
		func(_ *testing.T, xs []*g.Value) (*g.Op, error) { return Transpose(xs[0], []int64{2, 0, 1}, loc()) }, `tensor<?x?x3xf32, ["s", "b"]>`},
	{"slice a static dimension", []string{`tensor<?x768xf32, ["n"]>`},
		func(_ *testing.T, xs []*g.Value) (*g.Op, error) {
			return Slice(xs[0], []int64{0, 256}, []int64{SliceToEnd, 512}, nil, loc())
		}, `tensor<?x256xf32, ["n"]>`},
	{"slice to the end with a stride", []string{`tensor<?x4xf32, ["n"]>`},
		func(_ *testing.T, xs []*g.Value) (*g.Op, error) {
			return Slice(xs[0], []int64{1, 0}, []int64{SliceToEnd, 4}, []int64{2, 1}, loc())
		}, `tensor<?x4xf32, ["(n) floordiv 2"]>`},
	{"concatenate along a symbolic dimension", []string{`tensor<?x3xf32, ["n"]>`, `tensor<2x3xf32>`, `tensor<?x3xf32, ["m"]>`},
		func(_ *testing.T, xs []*g.Value) (*g.Op, error) { return Concatenate(xs, 0, loc()) }, `tensor<?x3xf32, ["m + n + 2"]>`},
	{"batched dot_general", []string{`tensor<?x?x64xf32, ["b", "s"]>`, `tensor<?x64x?xf32, ["b", "s"]>`},
		func(_ *testing.T, xs []*g.Value) (*g.Op, error) {
			return DotGeneral(xs[0], xs[1], DotDims{LhsBatch: []int64{0}, RhsBatch: []int64{0}, LhsContracting: []int64{2}, RhsContracting: []int64{1}}, loc())
		}, `tensor<?x?x?xf32, ["b", "s", "s"]>`},
	{"dot_general contracting a symbol", []string{`tensor<4x?xf32, ["s"]>`, `tensor<?x8xf32, ["s"]>`},
		func(_ *testing.T, xs []*g.Value) (*g.Op, error) {
			return DotGeneral(xs[0], xs[1], DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{0}}, loc())
		}, `tensor<4x8xf32>`},
	{"strided convolution", []string{`tensor<?x3x?x?xf32, ["n", "h", "w"]>`, `tensor<8x3x3x3xf32>`},
		func(_ *testing.T, xs []*g.Value) (*g.Op, error) {
			return Convolution(xs[0], xs[1], ConvConfig{WindowStrides: []int64{2, 2}, PadLow: []int64{1, 1}, PadHigh: []int64{1, 1}}, loc())
		}, `tensor<?x8x?x?xf32, ["n", "(h - 1) floordiv 2 + 1", "(w - 1) floordiv 2 + 1"]>`},
	{"dilated convolution in HWIO", []string{`tensor<?x2x?x6xf32, ["n", "h"]>`, `tensor<3x3x2x4xf32>`},
		func(_ *testing.T, xs []*g.Value) (*g.Op, error) {
			return Convolution(xs[0], xs[1], ConvConfig{RhsDilation: []int64{2, 2}, Kernel: &KernelDims{OutputFeature: 3, InputFeature: 2, Spatial: []int64{0, 1}}}, loc())
		}, `tensor<?x4x?x2xf32, ["n", "h - 4"]>`},
	{"reduce over a symbolic dimension", []string{`tensor<?x?x8xf32, ["b", "s"]>`, `tensor<f32>`},
		func(_ *testing.T, xs []*g.Value) (*g.Op, error) {
			return Reduce(xs[0], xs[1], []int64{1}, AddOp, loc())
		}, `tensor<?x8xf32, ["b"]>`},
	{"reduce_window", []string{`tensor<?x4x?x?xf32, ["n", "h", "w"]>`, `tensor<f32>`},
		func(_ *testing.T, xs []*g.Value) (*g.Op, error) {
			return ReduceWindow(xs[0], xs[1], WindowConfig{WindowDimensions: []int64{1, 1, 3, 3}, WindowStrides: []int64{1, 1, 2, 2}, PadLow: []int64{0, 0, 1, 1}, PadHigh: []int64{0, 0, 1, 1}}, MaximumOp, loc())
		}, `tensor<?x4x?x?xf32, ["n", "(h - 1) floordiv 2 + 1", "(w - 1) floordiv 2 + 1"]>`},
}

// Each hlo op that takes symbolic dimensions infers (or checks) its
// result over expressions, and inference commutes with binding: the
// function holding the op, bound by graphir.BindFunc at several sizes,
// verifies again (the static inference equals the bound expression).
func TestSymbolicOps(t *testing.T) {
	bindings := []map[string]int64{{"n": 3, "m": 1, "b": 2, "s": 5, "h": 9, "w": 8}, {"n": 8, "m": 4, "b": 1, "s": 1, "h": 16, "w": 7}}
	for _, c := range symbolicCases {
		t.Run(c.name, func(t *testing.T) {
			ins := make([]g.Type, len(c.in))
			for i, s := range c.in {
				ins[i] = symT(t, s)
			}
			b := newFB(t, ins...)
			op := b.add(c.build(t, b.f.Args()))
			assert.Equal(t, c.want, op.Results[0].Type.String())
			b.ret(op.Results...)
			require.NoError(t, b.verify())
			for _, bind := range bindings {
				f := g.CloneFunc(b.f)
				require.NoError(t, g.BindFunc(f, bind), "%v", bind)
				assert.Empty(t, g.FuncSymbols(f))
			}
		})
	}
}

// What a symbolic dimension cannot say is a diagnostic naming the symbol
// and the --fix-dim hint, and ops that do not take symbolic dimensions
// are refused by the verifier's gate.
func TestSymbolicOpErrors(t *testing.T) {
	for _, c := range []struct {
		name  string
		in    []string
		build func(t *testing.T, xs []*g.Value) (*g.Op, error)
		want  string
	}{
		{"reshape with other element counts", []string{`tensor<?x4xf32, ["n"]>`},
			func(t *testing.T, xs []*g.Value) (*g.Op, error) {
				return Reshape(xs[0], symT(t, `tensor<?x4xf32, ["m"]>`), loc())
			}, `operand tensor<?x4xf32, ["n"]> has 4*n elements but result tensor<?x4xf32, ["m"]> has 4*m`},
		{"broadcast of another symbol", []string{`tensor<?xf32, ["n"]>`},
			func(t *testing.T, xs []*g.Value) (*g.Op, error) {
				return BroadcastInDim(xs[0], symT(t, `tensor<?xf32, ["m"]>`), []int64{0}, loc())
			}, "operand dimension 0 has size n, which is neither 1 nor the size m of result dimension 0"},
		{"add of different symbols", []string{`tensor<?xf32, ["n"]>`, `tensor<?xf32, ["m"]>`},
			func(_ *testing.T, xs []*g.Value) (*g.Op, error) { return g.Build(AddOp, xs, nil, loc()) },
			"operands must have the same type"},
		{"dot_general batch symbols differ", []string{`tensor<?x2x3xf32, ["n"]>`, `tensor<?x3x2xf32, ["m"]>`},
			func(_ *testing.T, xs []*g.Value) (*g.Op, error) {
				return DotGeneral(xs[0], xs[1], DotDims{LhsBatch: []int64{0}, RhsBatch: []int64{0}, LhsContracting: []int64{2}, RhsContracting: []int64{1}}, loc())
			}, "batching dimension 0 has size n on lhs (dim 0) but m on rhs (dim 0)"},
		{"convolution over symbolic channels", []string{`tensor<1x?x5x5xf32, ["c"]>`, `tensor<2x3x3x3xf32>`},
			func(_ *testing.T, xs []*g.Value) (*g.Op, error) {
				return Convolution(xs[0], xs[1], ConvConfig{}, loc())
			},
			`the input feature count (dimension 1 of tensor<1x?x5x5xf32, ["c"]>) is symbolic (c) and must be a constant here; pin it with --fix-dim c=N`},
		{"convolution with a symbolic window", []string{`tensor<1x3x5x5xf32>`, `tensor<2x3x?x3xf32, ["k"]>`},
			func(_ *testing.T, xs []*g.Value) (*g.Op, error) {
				return Convolution(xs[0], xs[1], ConvConfig{}, loc())
			},
			"the kernel's window size (dimension 2 of tensor<2x3x?x3xf32, [\"k\"]>) is symbolic (k)"},
		{"lhs-dilated convolution over a symbolic dimension", []string{`tensor<1x3x?x5xf32, ["h"]>`, `tensor<2x3x3x3xf32>`},
			func(_ *testing.T, xs []*g.Value) (*g.Op, error) {
				return Convolution(xs[0], xs[1], ConvConfig{LhsDilation: []int64{2, 2}}, loc())
			}, "a spatial dimension under lhs_dilation (dimension 2 of tensor<1x3x?x5xf32, [\"h\"]>) is symbolic (h)"},
		{"base-dilated reduce_window over a symbolic dimension", []string{`tensor<?x4xf32, ["n"]>`, `tensor<f32>`},
			func(_ *testing.T, xs []*g.Value) (*g.Op, error) {
				return ReduceWindow(xs[0], xs[1], WindowConfig{WindowDimensions: []int64{2, 1}, BaseDilations: []int64{2, 1}}, AddOp, loc())
			}, "a dimension under base_dilations (dimension 0 of tensor<?x4xf32, [\"n\"]>) is symbolic (n)"},
		{"slice inside a symbolic dimension", []string{`tensor<?x4xf32, ["n"]>`},
			func(_ *testing.T, xs []*g.Value) (*g.Op, error) {
				return Slice(xs[0], []int64{0, 0}, []int64{2, 4}, nil, loc())
			},
			"the size of a slice to 2 (dimension 0 of tensor<?x4xf32, [\"n\"]>) is symbolic (n) and must be a constant here; pin it with --fix-dim n=N"},
		{"pad of a symbolic dimension", []string{`tensor<?x4xf32, ["n"]>`, `tensor<f32>`},
			func(_ *testing.T, xs []*g.Value) (*g.Op, error) {
				return Pad(xs[0], xs[1], []int64{1, 1}, []int64{0, 1}, nil, loc())
			}, "a padded dimension (dimension 0 of tensor<?x4xf32, [\"n\"]>) is symbolic (n) and must be a constant here; pin it with --fix-dim n=N"},
	} {
		t.Run(c.name, func(t *testing.T) {
			blk := g.NewBlock()
			for _, s := range c.in {
				blk.AddArg(symT(t, s), loc())
			}
			_, err := c.build(t, blk.Args)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// A static slice may write its limit as SliceToEnd: the dimension's size.
func TestSliceToEndStatic(t *testing.T) {
	b := newFB(t, f32(5, 4))
	op := b.add(Slice(b.arg(0), []int64{1, 2}, []int64{SliceToEnd, SliceToEnd}, []int64{2, 1}, loc()))
	assert.Equal(t, "tensor<2x2xf32>", op.Results[0].Type.String())
	x := tensorOf(f32(5, 4), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19)
	out, err := op.Def.Eval(op, []*g.Tensor{x})
	require.NoError(t, err)
	assert.Equal(t, []float64{6, 7, 14, 15}, out[0].Data)
}
