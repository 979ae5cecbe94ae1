package onnx

import (
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	pb "github.com/tessera-ml/tessera/dialects/graph/onnx/onnxpb"
	"github.com/tessera-ml/tessera/graphir"
)

// TestRandomNodesNeverPanic imports thousands of random single nodes of
// every supported op type (random inputs among graph values and
// constants, random attribute values, random opsets): each import either
// fails with a diagnostic or gives a module that verifies and interprets
// without panicking.
func TestRandomNodesNeverPanic(t *testing.T) {
	ops := make([]string, 0, len(converters))
	for k := range converters {
		ops = append(ops, k)
	}
	sort.Strings(ops)
	rng := rand.New(rand.NewSource(1))
	small := func() int64 { return int64(rng.Intn(7) - 2) }
	ints := func() []int64 {
		v := make([]int64, rng.Intn(5))
		for i := range v {
			v[i] = small()
		}
		return v
	}
	attrNames := []string{"axis", "axes", "perm", "pads", "kernel_shape", "strides", "dilations", "group", "keepdims",
		"starts", "ends", "split", "to", "alpha", "beta", "transA", "transB", "ceil_mode", "auto_pad", "mode", "min", "max",
		"value", "epsilon", "count_include_pad", "noop_with_empty_axes", "start", "end", "value_ints", "value_float"}
	iters := 4000
	if testing.Short() {
		iters = 500
	}
	imported := 0
	for it := 0; it < iters; it++ {
		op := ops[rng.Intn(len(ops))]
		inputs := []*pb.ValueInfoProto{f32In("x", 2, 3), f32In("img", 1, 2, 4, 4), tensorInfo("b", pb.TensorProto_BOOL, 2, 3)}
		iv := ints()
		inits := []*pb.TensorProto{
			i64Tensor("v", dims(int64(len(iv))), iv...),
			f32Tensor("s", nil, float32(small())),
			f32Tensor("w", dims(2, 1, 2, 2), 1, 2, 3, 4, 5, 6, 7, 8),
			f32Tensor("c3", dims(3), 1, 2, 3),
			i64Tensor("k", nil, small()),
		}
		pool := []string{"x", "img", "b", "v", "s", "w", "c3", "k", ""}
		var ins []string
		for i := rng.Intn(5); i > 0; i-- {
			ins = append(ins, pool[rng.Intn(len(pool))])
		}
		var attrs []*pb.AttributeProto
		for i := rng.Intn(4); i > 0; i-- {
			name := attrNames[rng.Intn(len(attrNames))]
			switch rng.Intn(5) {
			case 0:
				attrs = append(attrs, aInt(name, small()))
			case 1:
				attrs = append(attrs, aInts(name, ints()...))
			case 2:
				attrs = append(attrs, aFloat(name, float32(small())/2))
			case 3:
				attrs = append(attrs, aString(name, []string{"SAME_UPPER", "VALID", "NOTSET", "reflect", "edge", "x"}[rng.Intn(6)]))
			default:
				attrs = append(attrs, aTensor(name, i64Tensor("", dims(1), small())))
			}
		}
		outs := ss("y")
		if rng.Intn(4) == 0 {
			outs = ss("y", "z")
		}
		s := modelSpec{opset: int64(7 + rng.Intn(11)), inputs: inputs, inits: inits, outputs: []*pb.ValueInfoProto{out("y")},
			nodes: []*pb.NodeProto{mkNode(op, ins, outs, attrs...)}}
		desc := fmt.Sprintf("iteration %d: %s(%v) opset %d attrs %v", it, op, ins, s.opset, attrs)
		var m *graphir.Module
		var err error
		require.NotPanics(t, func() { m, err = importSpec(t, s) }, desc)
		if err != nil {
			continue
		}
		imported++
		require.NoError(t, graphir.Verify(m), desc)
		args := []*graphir.Tensor{seq(graphir.F32, 2, 3), seq(graphir.F32, 1, 2, 4, 4), tensor(graphir.I1, dims(2, 3), 1, 0, 1, 0, 1, 0)}
		require.NotPanics(t, func() { _, _ = graphir.Interpret(m.Lookup("main"), args) }, desc)
	}
	t.Logf("%d of %d random nodes imported", imported, iters)
	require.Greater(t, imported, iters/20, "the generator should produce some valid nodes")
}
