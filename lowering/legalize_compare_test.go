package lowering

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
)

func compareAgreeCases() []ewCase {
	var cs []ewCase
	for _, op := range []string{"equal", "less", "greater", "less_equal", "greater_equal"} {
		cs = append(cs,
			ewCase{name: op + "/same", op: "graph." + op, inputs: []*graphir.TensorType{f32t(4, 6), f32t(4, 6)}},
			ewCase{name: op + "/bcast", op: "graph." + op, inputs: []*graphir.TensorType{f32t(2, 1, 5), f32t(3, 1)}},
			ewCase{name: op + "/i32_rank0", op: "graph." + op, inputs: []*graphir.TensorType{graphir.NewTensor(graphir.I32, 9), graphir.NewTensor(graphir.I32)}},
		)
	}
	cs = append(cs,
		ewCase{name: "equal/i1", op: "graph.equal", inputs: []*graphir.TensorType{i1t(8), i1t(8)}},
		ewCase{name: "not", op: "graph.not", inputs: []*graphir.TensorType{i1t(3, 4)}},
		ewCase{name: "and", op: "graph.and", inputs: []*graphir.TensorType{i1t(3, 4), i1t(4)}},
		ewCase{name: "or", op: "graph.or", inputs: []*graphir.TensorType{i1t(), i1t(3, 4)}},
		ewCase{name: "where/same", op: "graph.where", inputs: []*graphir.TensorType{i1t(2, 5), f32t(2, 5), f32t(2, 5)}},
		ewCase{name: "where/bcast3", op: "graph.where", inputs: []*graphir.TensorType{i1t(2, 1), f32t(3), f32t()}},
		ewCase{name: "where/cond_rank0", op: "graph.where", inputs: []*graphir.TensorType{i1t(), f32t(4, 1), f32t(1, 3)}},
		ewCase{name: "where/i1_values", op: "graph.where", inputs: []*graphir.TensorType{i1t(6), i1t(6), i1t(1)}},
	)
	return cs
}

// TestLegalizeCompareIR: operands are broadcast to the result shape, then compared.
func TestLegalizeCompareIR(t *testing.T) {
	m := ewModule(t, ewCase{op: "graph.less", inputs: []*graphir.TensorType{f32t(2, 3), f32t(3)}})
	runPipeline(t, m, graph.LegalizeToHLOPassName)
	text := graphir.Print(m)
	assert.Contains(t, text, `hlo.broadcast_in_dim %arg1 {broadcast_dimensions = [1]} : (tensor<3xf32>) -> tensor<2x3xf32>`)
	assert.Contains(t, text, `hlo.compare %arg0, %0 {comparison_direction = "LT"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>`)
	m = ewModule(t, ewCase{op: "graph.where", inputs: []*graphir.TensorType{i1t(), f32t(2), f32t(2)}})
	runPipeline(t, m, graph.LegalizeToHLOPassName)
	text = graphir.Print(m)
	assert.Contains(t, text, `hlo.broadcast_in_dim %arg0 {broadcast_dimensions = []} : (tensor<i1>) -> tensor<2xi1>`)
	assert.Contains(t, text, `hlo.select`)
}
