package onnx

import "fmt"

// Models of opsets 1 to 6 (MinLegacyOpset to MinOpset − 1).
//
// The converters implement each op as ONNX defines it from opset 7 on. An
// op whose opset-7 definition already existed in an earlier opset (Relu-6,
// Softplus-1, Conv-1, ...) means the same in an older model from that
// version on, so a model of opset v < 7 is imported when every node is an
// op of legacySince whose entry is at most v. Every other op changed at
// opset 7 or later (Add-6 still had the `broadcast` attribute,
// BatchNormalization-6 and Dropout-6 `is_test`, PRelu-6 no broadcasting,
// ...), or did not exist yet, and is refused in such a model.

// legacySince maps each op the importer converts whose opset-7 definition
// dates from before opset 7 to the version it dates from (the op's
// "since_version" in ONNX's docs/Changelog.md).
var legacySince = map[string]int64{
	"Conv": 1, "MaxPool": 1, "GlobalAveragePool": 1, "GlobalMaxPool": 1, "MatMul": 1,
	"Softmax": 1, "LogSoftmax": 1, "Hardmax": 1, "Softplus": 1, "Softsign": 1, "Not": 1,
	"ReduceSum": 1, "ReduceMean": 1, "ReduceMax": 1, "ReduceMin": 1, "ReduceProd": 1, "ReduceL1": 1,
	"ReduceL2": 1, "ReduceLogSum": 1, "ReduceLogSumExp": 1, "ReduceSumSquare": 1,
	"Constant": 1, "Identity": 1, "Flatten": 1, "Squeeze": 1, "Unsqueeze": 1, "Transpose": 1,
	"Slice": 1, "Gather": 1, "Shape": 1, "Size": 1, "DepthToSpace": 1, "SpaceToDepth": 1,
	"Pad": 2, "Split": 2, "Concat": 4, "Reshape": 5,
	"Relu": 6, "Sigmoid": 6, "Tanh": 6, "Exp": 6, "Log": 6, "Sqrt": 6, "Neg": 6, "Abs": 6,
	"Reciprocal": 6, "Floor": 6, "Ceil": 6, "LeakyRelu": 6, "Elu": 6, "Selu": 6, "HardSigmoid": 6,
	"Clip": 6, "Cast": 6, "Max": 6, "Min": 6, "Sum": 6, "Mean": 6, "Tile": 6,
	"InstanceNormalization": 6, "LpNormalization": 1,
}

// legacyRefusal says why op type t cannot be imported at an opset below
// MinOpset, or is "" when it can.
func legacyRefusal(t string, opset int64) string {
	since, ok := legacySince[t]
	switch {
	case opset >= MinOpset:
		return ""
	case !ok:
		return fmt.Sprintf("unsupported: '%s' at opset %d: its definition changed at opset 7 or later, and Tessera reads models of opsets %d to %d only for the ops that mean the same as at opset 7; re-export the model with opset 7 or later", t, opset, MinLegacyOpset, MinOpset-1)
	case since > opset:
		return fmt.Sprintf("unsupported: '%s' at opset %d predates the definition Tessera implements (%s-%d); re-export the model with opset %d or later", t, opset, t, since, since)
	}
	return ""
}
