package graph

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tessera-ml/tessera/graphir"
)

func runPipeline(t *testing.T, m *graphir.Module, pipeline string) {
	t.Helper()
	require.NoError(t, graphir.RunPipeline(m, pipeline))
}

func constLit(x *graphir.Tensor) string {
	return fmt.Sprintf("graph.constant {value = %s} : %s", graphir.FormatAttr(x.ToDense()), x.Type)
}

func TestConstantOp(t *testing.T) {
	m := parseModule(t, `module {
  func.func @main() -> (tensor<2x2xf32>, tensor<3xi32>) {
    %0 = graph.constant {value = dense<[[1.0, 2.5], [0.1, -4.0]]> : tensor<2x2xf32>} : tensor<2x2xf32>
    %1 = graph.constant {value = dense<7> : tensor<3xi32>} : tensor<3xi32>
    func.return %0, %1 : tensor<2x2xf32>, tensor<3xi32>
  }
}`)
	out, err := graphir.Interpret(m.Lookup("main"), nil)
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 2.5, float64(float32(0.1)), -4}, out[0].Data)
	assert.Equal(t, []float64{7, 7, 7}, out[1].Data)

	bad := &graphir.DenseElementsAttr{Type: tt(3), Floats: []float64{1, 2}}
	err = checkOp(ConstantOp, nil, attrs("value", bad))
	assert.ErrorContains(t, err, "'graph.constant' op attribute 'value' holds 2 elements, but tensor<3xf32> has 3")
	err = checkOp(ConstantOp, nil, nil)
	assert.ErrorContains(t, err, "requires a dense elements attribute 'value'")
}

func TestConstantFold(t *testing.T) {
	src := `module {
  func.func @main(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = graph.constant {value = dense<[[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]]> : tensor<2x3xf32>} : tensor<2x3xf32>
    %1 = graph.constant {value = dense<[0.5, 0.25, 2.0]> : tensor<3xf32>} : tensor<3xf32>
    %2 = graph.mul %0, %1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
    %3 = graph.relu %2 : tensor<2x3xf32>
    %4 = graph.transpose %3 : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %5 = graph.reshape %4 {shape = [2, 3]} : (tensor<3x2xf32>) -> tensor<2x3xf32>
    %6 = graph.add %arg0, %5 : tensor<2x3xf32>
    func.return %6 : tensor<2x3xf32>
  }
}`
	before := parseModule(t, src)
	after := parseModule(t, src)
	runPipeline(t, after, "constant-fold")
	assert.Equal(t, 1, countOps(after, ConstantOp), graphir.Print(after))
	assert.Equal(t, 1, countOps(after, AddOp))
	assert.Equal(t, 0, countOps(after, MulOp)+countOps(after, ReluOp)+countOps(after, TransposeOp)+countOps(after, ReshapeOp))
	c := after.Lookup("main").Entry().First()
	require.Equal(t, ConstantOp, c.Name)
	d := c.Attr("value").(*graphir.DenseElementsAttr)
	// mul → [[0.5,-0.5,6],[-2,1.25,-12]]; relu → [[0.5,0,6],[0,1.25,0]];
	// transpose → [[0.5,0],[0,1.25],[6,0]]; reshape → [[0.5,0,0],[1.25,6,0]]
	assert.Equal(t, []float64{0.5, 0, 0, 1.25, 6, 0}, d.Values())
	requireSameResults(t, before, after)
}

func TestConstantFoldLimits(t *testing.T) {
	src := `module {
  func.func @main() -> (tensor<4xf32>, tensor<2xi32>) {
    %0 = graph.constant {value = dense<1.0> : tensor<4xf32>} : tensor<4xf32>
    %1 = graph.add %0, %0 : tensor<4xf32>
    %2 = graph.constant {value = dense<[4, 5]> : tensor<2xi32>} : tensor<2xi32>
    %3 = graph.constant {value = dense<[2, 0]> : tensor<2xi32>} : tensor<2xi32>
    %4 = graph.div %2, %3 : tensor<2xi32>
    func.return %1, %4 : tensor<4xf32>, tensor<2xi32>
  }
}`
	m := parseModule(t, src)
	runPipeline(t, m, "constant-fold{max-elements=3}")
	assert.Equal(t, 1, countOps(m, AddOp), "result of 4 elements exceeds the limit")
	assert.Equal(t, 1, countOps(m, DivOp), "division by zero is not folded")
	m = parseModule(t, src)
	runPipeline(t, m, "constant-fold")
	assert.Equal(t, 0, countOps(m, AddOp))
	assert.Equal(t, 1, countOps(m, DivOp))
	folded := ConstantOf(m.Lookup("main").Entry().Last().Operand(0))
	require.NotNil(t, folded)
	assert.Equal(t, []float64{2, 2, 2, 2}, folded.Values())

	// A dequantize of a stored constant folds past the limit: its result
	// stores no more elements than its operand (a large int8 weight).
	dq := parseModule(t, `func.func @main() -> tensor<6xf32> {
  %q = graph.constant {value = dense<[1, 2, 3, 4, 5, 6]> : tensor<6xi8>} : tensor<6xi8>
  %s = graph.constant {value = dense<0.5> : tensor<f32>} : tensor<f32>
  %z = graph.constant {value = dense<0> : tensor<i8>} : tensor<i8>
  %d = graph.dequantize_linear %q, %s, %z : (tensor<6xi8>, tensor<f32>, tensor<i8>) -> tensor<6xf32>
  func.return %d : tensor<6xf32>
}`)
	runPipeline(t, dq, "constant-fold{max-elements=3}")
	assert.Equal(t, 0, countOps(dq, DequantizeLinearOp))
	assert.Equal(t, []float64{0.5, 1, 1.5, 2, 2.5, 3}, ConstantOf(dq.Lookup("main").Entry().Last().Operand(0)).Values())

	_, err := graphir.ParsePipeline("constant-fold{max-elements=-4}")
	assert.ErrorContains(t, err, "max-elements must be a non-negative integer")
	_, err = graphir.ParsePipeline("constant-fold{max-elements=abc}")
	assert.Error(t, err)
}

// bnModule writes a conv2d (+ optional bias) followed by a batch_norm with
// random constant parameters.
func bnModule(seed uint64, x, w []int64, a graphir.DictAttr, bias bool, extraUse bool) string {
	rng := newRNG(seed)
	o := w[0]
	wt := randTensor(rng, w...)
	var b strings.Builder
	xt, wtt := tt(x...), tt(w...)
	op, err := graphir.Build(Conv2DOp, graphir.NewBlock(xt, wtt).Args, a, graphir.Location{})
	if err != nil {
		panic(err)
	}
	outType := op.Results[0].Type.String()
	fmt.Fprintf(&b, "module {\n  func.func @main(%%x: %s) -> %s {\n", xt, outType)
	fmt.Fprintf(&b, "    %%w = %s\n", constLit(wt))
	operands := "%x, %w"
	types := fmt.Sprintf("%s, %s", xt, wtt)
	if bias {
		fmt.Fprintf(&b, "    %%b = %s\n", constLit(randTensor(rng, o)))
		operands += ", %b"
		types += fmt.Sprintf(", tensor<%dxf32>", o)
	}
	attrText := ""
	if len(a) > 0 {
		attrText = " " + graphir.FormatAttr(a)
	}
	fmt.Fprintf(&b, "    %%c = graph.conv2d %s%s : (%s) -> %s\n", operands, attrText, types, outType)
	for _, n := range []string{"g", "be", "m"} {
		fmt.Fprintf(&b, "    %%%s = %s\n", n, constLit(randTensor(rng, o)))
	}
	v := randTensor(rng, o)
	for i := range v.Data {
		v.Data[i] = float64(float32(math.Abs(v.Data[i]) + 0.05))
	}
	fmt.Fprintf(&b, "    %%v = %s\n", constLit(v))
	p := fmt.Sprintf("tensor<%dxf32>", o)
	fmt.Fprintf(&b, "    %%y = graph.batch_norm %%c, %%g, %%be, %%m, %%v {epsilon = 1.0e-03 : f32} : (%s, %s, %s, %s, %s) -> %s\n", outType, p, p, p, p, outType)
	res := "%y"
	if extraUse {
		fmt.Fprintf(&b, "    %%z = graph.add %%y, %%c : %s\n", outType)
		res = "%z"
	}
	fmt.Fprintf(&b, "    func.return %s : %s\n  }\n}\n", res, outType)
	return b.String()
}

func TestFoldBatchNorm(t *testing.T) {
	cases := []struct {
		x, w []int64
		a    graphir.DictAttr
		bias bool
	}{
		{[]int64{1, 3, 6, 6}, []int64{4, 3, 3, 3}, attrs("pads", []int64{1, 1, 1, 1}), true},
		{[]int64{2, 4, 7, 5}, []int64{6, 2, 3, 2}, attrs("groups", 2, "strides", []int64{2, 1}), false},
		{[]int64{1, 3, 5, 5}, []int64{3, 1, 3, 3}, attrs("dilations", []int64{2, 2}, "groups", 3), true},
	}
	for i, c := range cases {
		src := bnModule(uint64(i+1), c.x, c.w, c.a, c.bias, false)
		before := parseModule(t, src)
		after := parseModule(t, src)
		runPipeline(t, after, "fold-batch-norm")
		assert.Equal(t, 0, countOps(after, BatchNormOp), graphir.Print(after))
		assert.Equal(t, 1, countOps(after, Conv2DOp))
		assert.Equal(t, 2, countOps(after, ConstantOp), "folded weight and bias only")
		conv := after.Lookup("main").Entry().Last().Operand(0).Def
		require.Equal(t, Conv2DOp, conv.Name)
		assert.Equal(t, 3, conv.NumOperands())
		orig := before.Lookup("main")
		var oc *graphir.Op
		orig.Walk(func(op *graphir.Op) {
			if op.Name == Conv2DOp {
				oc = op
			}
		})
		assert.True(t, graphir.AttrEqual(oc.Attrs, conv.Attrs), "attributes kept")
		requireSameResults(t, before, after)
	}
}

func TestFoldBatchNormNotApplicable(t *testing.T) {
	// the conv result has another user
	src := bnModule(5, []int64{1, 2, 4, 4}, []int64{2, 2, 3, 3}, nil, true, true)
	m := parseModule(t, src)
	runPipeline(t, m, "fold-batch-norm")
	assert.Equal(t, 1, countOps(m, BatchNormOp))
	// non-constant weight or parameters
	m = parseModule(t, `module {
  func.func @main(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x3x3xf32>, %p: tensor<2xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x4x4xf32>) {
    %c = graph.conv2d %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x2x2xf32>
    %y = graph.batch_norm %c, %p, %p, %p, %p : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
    %y2 = graph.batch_norm %x, %p, %p, %p, %p : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32>
    func.return %y, %y2 : tensor<1x2x2x2xf32>, tensor<1x2x4x4xf32>
  }
}`)
	assert.Equal(t, 0, FoldBatchNorm(m.Lookup("main")))
	assert.Equal(t, 2, countOps(m, BatchNormOp))
}
