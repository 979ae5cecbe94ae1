package lowering

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
)

func activationAgreeCases() []ewCase {
	x := []*graphir.TensorType{f32t(5, 8)}
	cs := []ewCase{
		{name: "softplus", op: "graph.softplus", inputs: x},
		{name: "softsign", op: "graph.softsign", inputs: x},
		{name: "clip/both", op: "graph.clip", inputs: x, attrs: attrs("min", -1.0, "max", 0.5)},
		{name: "clip/min", op: "graph.clip", inputs: x, attrs: attrs("min", -1.0)},
		{name: "clip/max", op: "graph.clip", inputs: x, attrs: attrs("max", 0.5)},
		{name: "clip/none", op: "graph.clip", inputs: x},
		{name: "clip/min_gt_max", op: "graph.clip", inputs: x, attrs: attrs("min", 1.0, "max", -1.0)},
		{name: "clip/i32", op: "graph.clip", inputs: []*graphir.TensorType{graphir.NewTensor(graphir.I32, 11)}, attrs: attrs("min", -3, "max", 4)},
		{name: "clip/rank0", op: "graph.clip", inputs: []*graphir.TensorType{f32t()}, attrs: attrs("min", 0.0, "max", 1.0)},
		{name: "hard_sigmoid", op: "graph.hard_sigmoid", inputs: x},
		{name: "hard_sigmoid/attrs", op: "graph.hard_sigmoid", inputs: x, attrs: attrs("alpha", 0.5, "beta", 0.6)},
		{name: "hard_swish", op: "graph.hard_swish", inputs: x},
		{name: "leaky_relu", op: "graph.leaky_relu", inputs: x},
		{name: "leaky_relu/alpha", op: "graph.leaky_relu", inputs: x, attrs: attrs("alpha", 0.1)},
		{name: "elu", op: "graph.elu", inputs: x},
		{name: "elu/alpha", op: "graph.elu", inputs: x, attrs: attrs("alpha", 2.0)},
		{name: "selu", op: "graph.selu", inputs: x},
		{name: "selu/attrs", op: "graph.selu", inputs: x, attrs: attrs("alpha", 2.0, "gamma", 3.0)},
		{name: "celu", op: "graph.celu", inputs: x},
		{name: "celu/alpha", op: "graph.celu", inputs: x, attrs: attrs("alpha", 2.0)},
		{name: "celu/negative_alpha", op: "graph.celu", inputs: x, attrs: attrs("alpha", -1.5)},
		{name: "shrink", op: "graph.shrink", inputs: x},
		{name: "shrink/attrs", op: "graph.shrink", inputs: x, attrs: attrs("lambd", 1.5, "bias", 0.5)},
		{name: "shrink/f64", op: "graph.shrink", inputs: []*graphir.TensorType{graphir.NewTensor(graphir.F64, 7)}, attrs: attrs("lambd", 0.25, "bias", -1.0)},
		{name: "mish/rank0", op: "graph.mish", inputs: []*graphir.TensorType{f32t()}},
		{name: "prelu/channel", op: "graph.prelu", inputs: []*graphir.TensorType{f32t(2, 3, 4), f32t(3, 1)}},
		{name: "prelu/same", op: "graph.prelu", inputs: []*graphir.TensorType{f32t(2, 5), f32t(2, 5)}},
		{name: "prelu/scalar", op: "graph.prelu", inputs: []*graphir.TensorType{f32t(6), f32t()}},
	}
	return cs
}

// TestLegalizeActivationIR pins the hlo each rule produces.
func TestLegalizeActivationIR(t *testing.T) {
	cases := []struct {
		c    ewCase
		want []string
	}{
		{ewCase{op: "graph.clip", inputs: []*graphir.TensorType{f32t(3)}, attrs: attrs("min", -1.0, "max", 1.0)}, []string{"hlo.constant", "hlo.constant", "hlo.clamp"}},
		{ewCase{op: "graph.clip", inputs: []*graphir.TensorType{f32t(3)}, attrs: attrs("min", -1.0)}, []string{"hlo.constant", "hlo.maximum"}},
		{ewCase{op: "graph.clip", inputs: []*graphir.TensorType{f32t(3)}}, nil},
		{ewCase{op: "graph.leaky_relu", inputs: []*graphir.TensorType{f32t(3)}}, []string{"hlo.constant", "hlo.compare", "hlo.constant", "hlo.multiply", "hlo.select"}},
		{ewCase{op: "graph.hard_sigmoid", inputs: []*graphir.TensorType{f32t(3)}}, []string{"hlo.constant", "hlo.multiply", "hlo.constant", "hlo.add", "hlo.constant", "hlo.constant", "hlo.clamp"}},
		{ewCase{op: "graph.softplus", inputs: []*graphir.TensorType{f32t(3)}}, []string{"hlo.constant", "hlo.maximum", "hlo.abs", "hlo.negate", "hlo.exponential", "hlo.constant", "hlo.add", "hlo.log", "hlo.add"}},
	}
	for _, c := range cases {
		m := ewModule(t, c.c)
		runPipeline(t, m, graph.LegalizeToHLOPassName)
		var got []string
		m.Walk(func(op *graphir.Op) {
			if op.Name != graphir.ReturnOpName {
				got = append(got, op.Name)
			}
		})
		assert.Equal(t, c.want, got, c.c.op)
	}
}

func TestLegalizeActivationErrors(t *testing.T) {
	// A result type that contradicts the operand is reported at the op.
	src := `func.func @main(%x: tensor<3xf32>) -> tensor<4xf32> {
  %0 = "graph.prelu"(%x, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}`
	m, err := graphir.ParseString("bad.mlir", src)
	require.NoError(t, err)
	err = legalizeModule(m)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad.mlir:2:")
	assert.Contains(t, err.Error(), "graph.prelu")
}
