package graph

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/graphir"
)

func symType(t *testing.T, s string) *graphir.TensorType {
	t.Helper()
	tt, err := graphir.ParseTensorType(s)
	require.NoError(t, err, s)
	return tt
}

// inferBuilt builds op name over operands of the given types and returns
// its result type (Build runs the symbolic gate and Infer).
func inferBuilt(types []*graphir.TensorType, name string, a graphir.DictAttr) (*graphir.TensorType, error) {
	tys := make([]graphir.Type, len(types))
	for i, x := range types {
		tys[i] = x
	}
	b := graphir.NewBlock(tys...)
	op, err := graphir.Build(name, b.Args, a, graphir.Location{File: "t.mlir", Line: 1, Col: 1})
	if err != nil {
		return nil, err
	}
	return graphir.AsTensor(op.Results[0].Type), nil
}

// Symbolic shape inference, op by op: the inferred expression, and for
// every binding of the symbols under which the static inference succeeds,
// the symbolic result bound equals the static result (inference commutes
// with binding).
// symCase applies op to operands of the types in (text), with attrs; want
// is the result type or an error's text.
type symCase struct {
	name  string
	op    string
	in    []string
	attrs graphir.DictAttr
	want  string
}

// types parses c's operand types.
func (c symCase) types(t *testing.T) []*graphir.TensorType {
	types := make([]*graphir.TensorType, len(c.in))
	for i, s := range c.in {
		types[i] = symType(t, s)
	}
	return types
}

func TestSymbolicInference(t *testing.T) {
	for _, c := range []symCase{
		{"add broadcasts a 1", AddOp, []string{`tensor<?x3xf32, ["n"]>`, "tensor<1x3xf32>"}, nil, `tensor<?x3xf32, ["n"]>`},
		{"add of equal symbols", AddOp, []string{`tensor<?x3xf32, ["n"]>`, `tensor<?x1xf32, ["n"]>`}, nil, `tensor<?x3xf32, ["n"]>`},
		{"compare gives i1", "graph.less", []string{`tensor<?xf32, ["n"]>`, "tensor<f32>"}, nil, `tensor<?xi1, ["n"]>`},
		{"relu keeps the type", ReluOp, []string{`tensor<?x8xf32, ["n"]>`}, nil, `tensor<?x8xf32, ["n"]>`},
		{"conv over symbolic batch and height", Conv2DOp, []string{`tensor<?x3x?x32xf32, ["n", "h"]>`, "tensor<8x3x3x3xf32>"},
			attrs("strides", []int64{2, 2}, "pads", []int64{1, 1, 1, 1}), `tensor<?x8x?x16xf32, ["n", "(h - 1) floordiv 2 + 1"]>`},
		{"max pool", MaxPool2DOp, []string{`tensor<?x4x?x?xf32, ["n", "h", "w"]>`}, attrs("kernel", []int64{3, 3}, "strides", []int64{2, 2}, "pads", []int64{1, 1, 1, 1}),
			`tensor<?x4x?x?xf32, ["n", "(h - 1) floordiv 2 + 1", "(w - 1) floordiv 2 + 1"]>`},
		{"global average pool", GlobalAvgPoolOp, []string{`tensor<?x4x?x7xf32, ["n", "h"]>`}, nil, `tensor<?x4x1x1xf32, ["n"]>`},
		{"flatten multiplies", FlattenOp, []string{`tensor<?x?x4xf32, ["b", "s"]>`}, attrs("axis", 2), `tensor<?x4xf32, ["b*s"]>`},
		{"reshape infers -1", ReshapeOp, []string{`tensor<?x?x64xf32, ["b", "s"]>`}, attrs("shape", []int64{0, -1, 4, 16}), `tensor<?x?x4x16xf32, ["b", "s"]>`},
		{"reshape merges", ReshapeOp, []string{`tensor<?x?x64xf32, ["b", "s"]>`}, attrs("shape", []int64{-1, 64}), `tensor<?x64xf32, ["b*s"]>`},
		{"transpose", TransposeOp, []string{`tensor<?x3x?xf32, ["b", "s"]>`}, attrs("perm", []int64{2, 0, 1}), `tensor<?x?x3xf32, ["s", "b"]>`},
		{"concat adds", ConcatOp, []string{`tensor<?x3xf32, ["n"]>`, `tensor<?x3xf32, ["m"]>`, "tensor<2x3xf32>"}, attrs("axis", 0), `tensor<?x3xf32, ["m + n + 2"]>`},
		{"gemm", GemmOp, []string{`tensor<?x8xf32, ["n"]>`, "tensor<4x8xf32>", "tensor<4xf32>"}, attrs("transB", true), `tensor<?x4xf32, ["n"]>`},
		{"gemm transA", GemmOp, []string{`tensor<8x?xf32, ["n"]>`, "tensor<8x4xf32>"}, attrs("transA", true), `tensor<?x4xf32, ["n"]>`},
		{"batched matmul", MatMulOp, []string{`tensor<?x?x16xf32, ["b", "s"]>`, `tensor<?x16x?xf32, ["b", "s"]>`}, nil, `tensor<?x?x?xf32, ["b", "s", "s"]>`},
		{"matmul with a matrix", MatMulOp, []string{`tensor<?x?x16xf32, ["b", "s"]>`, "tensor<16x8xf32>"}, nil, `tensor<?x?x8xf32, ["b", "s"]>`},
		{"softmax", SoftmaxOp, []string{`tensor<?x?xf32, ["b", "s"]>`}, nil, `tensor<?x?xf32, ["b", "s"]>`},
		{"reduce mean keepdims", ReduceMeanOp, []string{`tensor<?x?x8xf32, ["b", "s"]>`}, attrs("axes", []int64{2}), `tensor<?x?x1xf32, ["b", "s"]>`},
		{"reduce mean drops", ReduceMeanOp, []string{`tensor<?x?x8xf32, ["b", "s"]>`}, attrs("axes", []int64{1}, "keepdims", false), `tensor<?x8xf32, ["b"]>`},
		{"slice to the end", SliceOp, []string{`tensor<?x8xf32, ["n"]>`}, attrs("starts", []int64{1, 2}, "ends", []int64{1 << 40, 6}), `tensor<?x4xf32, ["n - 1"]>`},
		{"batch norm", BatchNormOp, []string{`tensor<?x2x3xf32, ["n"]>`, "tensor<2xf32>", "tensor<2xf32>", "tensor<2xf32>", "tensor<2xf32>"}, nil, `tensor<?x2x3xf32, ["n"]>`},
	} {
		t.Run(c.name, func(t *testing.T) {
			types := c.types(t)
			got, err := inferBuilt(types, c.op, c.attrs)
			require.NoError(t, err)
			assert.Equal(t, c.want, got.String())
			checked := 0
			for _, v := range []int64{1, 2, 5, 7, 16, 33} {
				bind := map[string]int64{"n": v, "m": v + 1, "h": v + 2, "w": v + 3, "b": v, "s": v + 4}
				static := make([]*graphir.TensorType, len(types))
				for i, x := range types {
					static[i], err = x.Bind(bind)
					require.NoError(t, err)
				}
				want, err := inferBuilt(static, c.op, c.attrs)
				if err != nil {
					continue // the static shapes are invalid at this size
				}
				bound, err := got.Bind(bind)
				require.NoError(t, err)
				assert.Equal(t, want.String(), bound.String(), "binding %v", bind)
				checked++
			}
			assert.Positive(t, checked)
		})
	}
}

// What an expression cannot say is refused naming the symbol, with the
// --fix-dim hint; an op that has no symbolic inference is refused by the
// gate.
func TestSymbolicRefusals(t *testing.T) {
	for _, c := range []symCase{
		{"different symbols", AddOp, []string{`tensor<?xf32, ["n"]>`, `tensor<?xf32, ["m"]>`}, nil, "dimension 0: n vs m"},
		{"symbol against a constant", AddOp, []string{`tensor<?xf32, ["n"]>`, "tensor<4xf32>"}, nil, "dimension 0: n vs 4"},
		{"symbolic channels", Conv2DOp, []string{`tensor<1x?x8x8xf32, ["c"]>`, "tensor<8x3x3x3xf32>"}, nil,
			"the input channel count (dimension 1 of tensor<1x?x8x8xf32, [\"c\"]>) is symbolic (c) and must be a constant here; pin it with --fix-dim c=N"},
		{"ceil mode", MaxPool2DOp, []string{`tensor<1x4x?x8xf32, ["h"]>`}, attrs("kernel", []int64{2, 2}, "strides", []int64{2, 2}, "ceil_mode", true),
			"the height under ceil_mode is symbolic (h)"},
		{"slice inside a symbol", SliceOp, []string{`tensor<?x8xf32, ["n"]>`}, attrs("starts", []int64{0}, "ends", []int64{3}), "--fix-dim n=N"},
		{"reshape that does not divide", ReshapeOp, []string{`tensor<?x3xf32, ["n"]>`}, attrs("shape", []int64{2, -1}), "not a multiple of 2 for every value of the symbols"},
		{"contracting symbols differ", MatMulOp, []string{`tensor<2x?xf32, ["k"]>`, `tensor<?x2xf32, ["j"]>`}, nil, "contracting dimensions differ"},
		{"an op without symbolic inference", TileOp, []string{`tensor<?x3xf32, ["n"]>`}, attrs("repeats", []int64{2, 1}),
			"does not take symbolic dimensions yet ('n'); pin them with --fix-dim n=N"},
	} {
		t.Run(c.name, func(t *testing.T) {
			types := c.types(t)
			_, err := inferBuilt(types, c.op, c.attrs)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
			assert.Contains(t, err.Error(), "t.mlir:1:1: error:")
		})
	}
}

// A reshape with several −1 takes them from its written result type, as
// the importer writes a split of a symbolic dimension; the element counts
// must agree for every value of the symbols.
func TestReshapeFromWrittenType(t *testing.T) {
	parse := func(src string) error {
		m, err := graphir.ParseString("t.mlir", src)
		if err != nil {
			return err
		}
		return graphir.Verify(m)
	}
	fn := func(in, attr, out string) string {
		return `func.func @main(%x: ` + in + `) -> ` + out + ` {
  %0 = graph.reshape %x {shape = ` + attr + `} : (` + in + `) -> ` + out + `
  func.return %0 : ` + out + `
}`
	}
	require.NoError(t, parse(fn(`tensor<?x256xf32, ["b*s"]>`, "[-1, -1, 256]", `tensor<?x?x256xf32, ["s", "b"]>`)))
	require.NoError(t, parse(fn("tensor<6x4xf32>", "[-1, -1, 4]", "tensor<2x3x4xf32>")))
	assert.ErrorContains(t, parse(fn(`tensor<?x256xf32, ["b*s"]>`, "[-1, -1, 256]", `tensor<?x?x256xf32, ["s", "s"]>`)),
		`has 256*s*s elements, input tensor<?x256xf32, ["b*s"]> has 256*b*s`)
	assert.ErrorContains(t, parse(fn("tensor<6x4xf32>", "[-1, -1, 4]", "tensor<2x2x4xf32>")), "has 16 elements, input tensor<6x4xf32> has 24")
	_, err := inferBuilt([]*graphir.TensorType{symType(t, "tensor<6x4xf32>")}, ReshapeOp, attrs("shape", []int64{-1, -1}))
	assert.ErrorContains(t, err, "shape [-1, -1] has more than one -1, which only a written result type of rank 2 resolves")
}
