// graph.conv_transpose: printing, shape inference (pads, output_padding,
// output_shape, auto_pad; 1-D, 2-D, 3-D), legalization to hlo.convolution
// (input dilated by the strides, flipped and regrouped kernel: folded from
// a constant weight, else slices, concatenate, reshape, transpose) and the
// verifier.
// RUN: tessera-opt %s | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo | FileCheck %s --check-prefix=HLO
// RUN: tessera-opt %S/Inputs/conv-transpose-invalid.mlir --split-input-file --verify-diagnostics

// CHECK: %0 = graph.conv_transpose %arg0, %arg1, %arg2 {group = 2, output_padding = [1, 2], pads = [1, 0, 0, 1], strides = [2, 3]} : (tensor<1x4x3x5xf32>, tensor<4x3x3x2xf32>, tensor<6xf32>) -> tensor<1x6x7x15xf32>
// CHECK: %1 = graph.constant
// CHECK: %2 = graph.conv_transpose %arg3, %1 {auto_pad = "SAME_UPPER", strides = [2]} : (tensor<2x3x7xf32>, tensor<3x2x3xf32>) -> tensor<2x2x14xf32>
// CHECK: %3 = graph.conv_transpose %arg4, %arg5 {dilations = [2, 1, 1], output_shape = [5, 3, 6], strides = [1, 2, 2]} : (tensor<1x2x2x2x3xf32>, tensor<2x1x2x1x2xf32>) -> tensor<1x1x5x3x6xf32>

// Runtime weight, group 2: each spatial dimension reversed, then
// [C, M/g, k…] → [g, C/g, M/g, k…] → [g, M/g, C/g, k…] → [M, C/g, k…];
// padding lo = dk − 1 − begin, hi = dk − 1 − end + output_padding.
// HLO: %0 = hlo.slice %arg1 {limit_indices = [4, 3, 3, 2], start_indices = [0, 0, 2, 0]
// HLO: %3 = hlo.concatenate %0, %1, %2 {dimension = 2}
// HLO: %6 = hlo.concatenate %4, %5 {dimension = 3}
// HLO: %7 = hlo.reshape %6 : (tensor<4x3x3x2xf32>) -> tensor<2x2x3x3x2xf32>
// HLO: %8 = hlo.transpose %7 {permutation = [0, 2, 1, 3, 4]} : (tensor<2x2x3x3x2xf32>) -> tensor<2x3x2x3x2xf32>
// HLO: %9 = hlo.reshape %8 : (tensor<2x3x2x3x2xf32>) -> tensor<6x2x3x2xf32>
// HLO: %10 = hlo.convolution %arg0, %9 {feature_group_count = 2, lhs_dilation = [2, 3], padding = {{\[\[}}1, 3], [1, 2]], rhs_dilation = [1, 1]} : (tensor<1x4x3x5xf32>, tensor<6x2x3x2xf32>) -> tensor<1x6x7x15xf32>
// HLO: %11 = hlo.broadcast_in_dim %arg2 {broadcast_dimensions = [1]} : (tensor<6xf32>) -> tensor<1x6x7x15xf32>
// HLO: %12 = hlo.add %10, %11

// Constant weight: flipped and transposed at compile time; SAME_UPPER with
// stride 2 on 7 elements: 14 outputs, total padding 1 at the end.
// HLO: hlo.constant {value = dense<{{\[\[\[}}3.0, 2.0, 1.0], [9.0, 8.0, 7.0], [-3.0, -2.0, -1.0]], {{\[\[}}6.0, 5.0, 4.0], [12.0, 11.0, 10.0], [-6.0, -5.0, -4.0]]]> : tensor<2x3x3xf32>}
// HLO: hlo.convolution %arg3, %{{[0-9]+}} {lhs_dilation = [2], padding = {{\[\[}}2, 1]], rhs_dilation = [1]} : (tensor<2x3x7xf32>, tensor<2x3x3xf32>) -> tensor<2x2x14xf32>

// Runtime weight, group 1: the kernel keeps its [C, M, k…] layout, named
// by the kernel dimension numbers; output_shape [5, 3, 6] against the
// natural [4, 3, 6] gives pads begin 0, end −1 (one more output at the end).
// HLO: hlo.convolution %arg4, %{{[0-9]+}} {kernel_input_feature_dimension = 0, kernel_output_feature_dimension = 1, kernel_spatial_dimensions = [2, 3, 4], lhs_dilation = [1, 2, 2], padding = {{\[\[}}2, 3], [0, 0], [1, 1]], rhs_dilation = [2, 1, 1]} : (tensor<1x2x2x2x3xf32>, tensor<2x1x2x1x2xf32>) -> tensor<1x1x5x3x6xf32>
func.func @main(%arg0: tensor<1x4x3x5xf32>, %arg1: tensor<4x3x3x2xf32>, %arg2: tensor<6xf32>, %arg3: tensor<2x3x7xf32>, %arg4: tensor<1x2x2x2x3xf32>, %arg5: tensor<2x1x2x1x2xf32>) -> (tensor<1x6x7x15xf32>, tensor<2x2x14xf32>, tensor<1x1x5x3x6xf32>) {
  %0 = graph.conv_transpose %arg0, %arg1, %arg2 {group = 2, strides = [2, 3], pads = [1, 0, 0, 1], output_padding = [1, 2]} : (tensor<1x4x3x5xf32>, tensor<4x3x3x2xf32>, tensor<6xf32>) -> tensor<1x6x7x15xf32>
  %c = graph.constant {value = dense<[[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], [[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]], [[-1.0, -2.0, -3.0], [-4.0, -5.0, -6.0]]]> : tensor<3x2x3xf32>} : tensor<3x2x3xf32>
  %1 = graph.conv_transpose %arg3, %c {strides = [2], auto_pad = "SAME_UPPER"} : (tensor<2x3x7xf32>, tensor<3x2x3xf32>) -> tensor<2x2x14xf32>
  %2 = graph.conv_transpose %arg4, %arg5 {strides = [1, 2, 2], dilations = [2, 1, 1], output_shape = [5, 3, 6]} : (tensor<1x2x2x2x3xf32>, tensor<2x1x2x1x2xf32>) -> tensor<1x1x5x3x6xf32>
  func.return %0, %1, %2 : tensor<1x6x7x15xf32>, tensor<2x2x14xf32>, tensor<1x1x5x3x6xf32>
}
