package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fn wraps body lines into a function taking %a: tensor<1x3x8x8xf32>.
func fn(body string) string {
	return "func.func @main(%a: tensor<1x3x8x8xf32>, %m: tensor<4x5xf32>) {\n" + body + "\n  func.return\n}\n"
}

// badToolInputs: each is rejected with exit code 1 and an error located in
// <stdin> whose message contains want; never a panic (exit 2).
var badToolInputs = []struct{ name, src, want string }{
	{"truncated after op", "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = graph.relu %a : tensor<2xf32>\n", "unexpected"},
	{"truncated in attr dict", fn(`  %0 = graph.max_pool2d %a {kernel = [2, 2`), "unexpected"},
	{"truncated in type", "func.func @main(%a: tensor<1x3", "unterminated 'tensor<'"},
	{"truncated string", fn(`  "graph.relu`), "unterminated string literal"},
	{"unbalanced braces", "func.func @main() {\n  func.return\n}\n}\n", "unexpected"},
	{"stray character", fn("  %0 = graph.relu %a ; tensor<1x3x8x8xf32>"), "unexpected character"},
	{"binary junk", "func.func @main() {\x00\x01}", "invalid character"},
	{"unknown op", fn("  %0 = graph.gelu %a : tensor<1x3x8x8xf32>"), "custom op 'graph.gelu' is unknown"},
	{"unknown generic op", fn(`  %0 = "graph.frobnicate"(%a) : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>`), "is not registered"},
	{"unknown dialect", fn(`  "npu.dma"(%a) : (tensor<1x3x8x8xf32>) -> ()`), "is not registered"},
	{"relu two operands", fn(`  %0 = "graph.relu"(%a, %a) : (tensor<1x3x8x8xf32>, tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>`), "expects 1 operands, got 2"},
	{"add one operand", fn(`  %0 = "graph.add"(%a) : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>`), "expects 2 operands, got 1"},
	{"conv no weight", fn(`  %0 = "graph.conv2d"(%a) : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>`), "operands, got 1"},
	{"hlo add one operand", fn(`  %0 = "hlo.add"(%a) : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>`), "expects 2 operands"},
	{"relu wrong result shape", fn(`  %0 = "graph.relu"(%a) : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x9xf32>`), "requires the same type"},
	{"broadcast mismatch", fn(`  %0 = "graph.add"(%a, %m) : (tensor<1x3x8x8xf32>, tensor<4x5xf32>) -> tensor<1x3x8x8xf32>`), "broadcast"},
	{"matmul inner dims", fn(`  %0 = "graph.matmul"(%m, %m) : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>`), "graph.matmul"},
	{"hlo add shapes", fn(`  %0 = "hlo.add"(%a, %m) : (tensor<1x3x8x8xf32>, tensor<4x5xf32>) -> tensor<1x3x8x8xf32>`), "same type"},
	{"conv channel mismatch", "func.func @main(%a: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) {\n  %0 = \"graph.conv2d\"(%a, %w) : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>\n  func.return\n}\n", "channels"},
	{"reshape element count", fn(`  %0 = graph.reshape %a {shape = [7, 7]} : (tensor<1x3x8x8xf32>) -> tensor<7x7xf32>`), "graph.reshape"},
	{"dot_general contracting sizes", fn(`  %0 = "hlo.dot_general"(%m, %m) {lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]} : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>`), "hlo.dot_general"},
	{"missing required attr", fn(`  %0 = graph.max_pool2d %a : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>`), "requires attribute 'kernel'"},
	{"attr wrong kind", fn(`  %0 = graph.max_pool2d %a {kernel = "2x2"} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>`), "attribute 'kernel' must be"},
	{"attr wrong length", fn(`  %0 = graph.max_pool2d %a {kernel = [2, 2, 2]} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>`), "kernel"},
	{"negative stride", fn(`  %0 = graph.max_pool2d %a {kernel = [2, 2], strides = [-1, 2]} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>`), "stride"},
	{"unknown attr", fn(`  %0 = graph.relu %a {alpha = 0.1 : f32} : tensor<1x3x8x8xf32>`), "does not accept attribute 'alpha'"},
	{"bad enum", fn(`  %0 = "hlo.compare"(%m, %m) {comparison_direction = "LTE"} : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xi1>`), "comparison_direction"},
	{"bad fusion kind", fn(`  %0 = "hlo.fusion"(%m) ({
  ^bb0(%x: tensor<4x5xf32>):
    hlo.return %x : tensor<4x5xf32>
  }) {kind = "tiled"} : (tensor<4x5xf32>) -> tensor<4x5xf32>`), "kind"},
	{"transpose bad perm", fn(`  %0 = graph.transpose %m {perm = [0, 0]} : (tensor<4x5xf32>) -> tensor<4x5xf32>`), "perm"},
	{"dense count", fn(`  %0 = graph.constant {value = dense<[1.0, 2.0]> : tensor<3xf32>} : tensor<3xf32>`), "dense literal has 2 elements"},
	{"int out of range", fn(`  %0 = graph.flatten %a {axis = 99999999999999999999} : (tensor<1x3x8x8xf32>) -> tensor<1x192xf32>`), "out of range"},
	{"undefined value", fn(`  %0 = graph.relu %b : tensor<1x3x8x8xf32>`), "use of undeclared SSA value name '%b'"},
	{"type disagrees with value", fn(`  %0 = graph.relu %m : tensor<1x3x8x8xf32>`), "expects different type than prior uses"},
	{"return type mismatch", "func.func @main(%a: tensor<2xf32>) -> tensor<3xf32> {\n  func.return %a : tensor<2xf32>\n}\n", "returns (tensor<3xf32>)"},
	{"dynamic shape", "func.func @main(%a: tensor<?x3xf32>) {\n  func.return\n}\n", "dynamic dimension"},
}

func TestBadInputsExitOneWithLocatedError(t *testing.T) {
	require.GreaterOrEqual(t, len(badToolInputs), 30)
	for _, c := range badToolInputs {
		t.Run(c.name, func(t *testing.T) {
			out, errs, code := opt(c.src, "--legalize-to-hlo", "--fuse")
			assert.Equal(t, 1, code, "stderr:\n%s", errs)
			assert.Empty(t, out)
			assert.Regexp(t, `^<stdin>:\d+:\d+: error: `, errs)
			assert.Contains(t, errs, c.want)
			assert.NotContains(t, strings.ToLower(errs), "goroutine")
			assert.NotContains(t, errs, "internal error")
		})
	}
}
