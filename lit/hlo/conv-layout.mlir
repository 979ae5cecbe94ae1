// --conv-layout: floating-point NCHW convolutions read and write NHWC
// activations, and the layout transposes sink through elementwise ops,
// reductions, windowed reductions, pads, slices and concatenations until
// they cancel. dialects/hlo/conv_layout_test.go evaluates this file
// before and after the pass.
// RUN: tessera-opt %s --conv-layout | FileCheck %s
// RUN: tessera-opt %s --conv-layout --conv-layout | FileCheck %s

// A chain of convolutions with a bias, a clamp, a multiply by a splat, a
// residual addition and a global pooling: one transpose (the input's) is
// left, the bias broadcast and the splat are rebuilt channels-last and
// the pooling reduces NHWC's spatial dimensions [1, 2].
// CHECK-LABEL: func.func @chain
// CHECK:         %[[T:.*]] = hlo.transpose %arg0 {permutation = [0, 2, 3, 1]} : (tensor<1x3x6x6xf32>) -> tensor<1x6x6x3xf32>
// CHECK-NEXT:    %[[C1:.*]] = hlo.convolution %[[T]], %arg1 {input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [1, 2], output_batch_dimension = 0, output_feature_dimension = 3, output_spatial_dimensions = [1, 2], padding = {{\[\[}}1, 1], [1, 1]]} : (tensor<1x6x6x3xf32>, tensor<4x3x3x3xf32>) -> tensor<1x6x6x4xf32>
// CHECK-NEXT:    %[[B:.*]] = hlo.broadcast_in_dim %arg2 {broadcast_dimensions = [3]} : (tensor<4xf32>) -> tensor<1x6x6x4xf32>
// CHECK-NEXT:    hlo.add %[[C1]], %[[B]] : tensor<1x6x6x4xf32>
// CHECK-NEXT:    hlo.clamp
// CHECK-NEXT:    hlo.convolution {{.*}}feature_group_count = 4, input_batch_dimension = 0
// CHECK-NEXT:    hlo.constant {value = dense<0.5> : tensor<1x6x6x4xf32>}
// CHECK-NEXT:    hlo.multiply
// CHECK-NEXT:    hlo.convolution
// CHECK-NEXT:    hlo.add
// CHECK-NEXT:    "hlo.reduce"
// CHECK:         }) {dimensions = [1, 2]} : (tensor<1x6x6x4xf32>, tensor<f32>) -> tensor<1x4xf32>
// CHECK-NOT:     hlo.transpose
// CHECK:         func.return
func.func @chain(%x: tensor<1x3x6x6xf32>, %w1: tensor<4x3x3x3xf32>, %b: tensor<4xf32>, %w2: tensor<4x1x3x3xf32>, %w3: tensor<4x4x1x1xf32>) -> tensor<1x4xf32> {
  %lo = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
  %hi = hlo.constant {value = dense<6.0> : tensor<f32>} : tensor<f32>
  %c = hlo.constant {value = dense<0.5> : tensor<1x4x6x6xf32>} : tensor<1x4x6x6xf32>
  %0 = hlo.convolution %x, %w1 {padding = [[1, 1], [1, 1]]} : (tensor<1x3x6x6xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %bb = hlo.broadcast_in_dim %b {broadcast_dimensions = [1]} : (tensor<4xf32>) -> tensor<1x4x6x6xf32>
  %1 = hlo.add %0, %bb : tensor<1x4x6x6xf32>
  %2 = hlo.clamp %lo, %1, %hi : (tensor<f32>, tensor<1x4x6x6xf32>, tensor<f32>) -> tensor<1x4x6x6xf32>
  %3 = hlo.convolution %2, %w2 {feature_group_count = 4, padding = [[1, 1], [1, 1]]} : (tensor<1x4x6x6xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x6x6xf32>
  %4 = hlo.multiply %3, %c : tensor<1x4x6x6xf32>
  %5 = hlo.convolution %4, %w3 : (tensor<1x4x6x6xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x6x6xf32>
  %6 = hlo.add %5, %2 : tensor<1x4x6x6xf32>
  %7 = "hlo.reduce"(%6, %lo) ({
  ^bb0(%a: tensor<f32>, %e: tensor<f32>):
    %s = hlo.add %a, %e : tensor<f32>
    hlo.return %s : (tensor<f32>) -> ()
  }) {dimensions = [2, 3]} : (tensor<1x4x6x6xf32>, tensor<f32>) -> tensor<1x4xf32>
  func.return %7 : tensor<1x4xf32>
}

// Pooling, two branches concatenated along the channels, a pad and a
// slice: their per-dimension attributes follow the dimensions, and the
// function's NCHW result is transposed back once at the end.
// CHECK-LABEL: func.func @pool_concat
// CHECK:         hlo.transpose %arg0 {permutation = [0, 2, 3, 1]}
// CHECK:         }) {padding = {{\[\[}}0, 0], [1, 1], [0, 1], [0, 0]], window_dimensions = [1, 3, 2, 1], window_strides = [1, 2, 1, 1]} : (tensor<2x4x4x4xf32>, tensor<f32>) -> tensor<2x2x4x4xf32>
// CHECK:         hlo.concatenate {{.*}} {dimension = 3} : (tensor<2x2x4x2xf32>, tensor<2x2x4x3xf32>) -> tensor<2x2x4x5xf32>
// CHECK-NEXT:    hlo.pad {{.*}} {edge_padding_high = [0, 0, 0, 0], edge_padding_low = [0, 2, 1, 0], interior_padding = [0, 1, 0, 0]} : (tensor<2x2x4x5xf32>, tensor<f32>) -> tensor<2x5x5x5xf32>
// CHECK-NEXT:    %[[S:.*]] = hlo.slice {{.*}} {limit_indices = [2, 4, 4, 5], start_indices = [0, 1, 0, 0], strides = [1, 1, 1, 1]} : (tensor<2x5x5x5xf32>) -> tensor<2x3x4x5xf32>
// CHECK-NEXT:    %[[R:.*]] = hlo.transpose %[[S]] {permutation = [0, 3, 1, 2]} : (tensor<2x3x4x5xf32>) -> tensor<2x5x3x4xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @pool_concat(%x: tensor<2x3x9x9xf32>, %w1: tensor<4x3x3x3xf32>, %w2: tensor<2x4x1x1xf32>, %w3: tensor<3x4x3x3xf32>) -> tensor<2x5x3x4xf32> {
  %ninf = hlo.constant {value = dense<0xFF800000> : tensor<f32>} : tensor<f32>
  %z = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
  %0 = hlo.convolution %x, %w1 {window_strides = [2, 2]} : (tensor<2x3x9x9xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x4x4xf32>
  %1 = "hlo.reduce_window"(%0, %ninf) ({
  ^bb0(%a: tensor<f32>, %e: tensor<f32>):
    %m = hlo.maximum %a, %e : tensor<f32>
    hlo.return %m : (tensor<f32>) -> ()
  }) {window_dimensions = [1, 1, 3, 2], window_strides = [1, 1, 2, 1], padding = [[0, 0], [0, 0], [1, 1], [0, 1]]} : (tensor<2x4x4x4xf32>, tensor<f32>) -> tensor<2x4x2x4xf32>
  %2 = hlo.convolution %1, %w2 : (tensor<2x4x2x4xf32>, tensor<2x4x1x1xf32>) -> tensor<2x2x2x4xf32>
  %3 = hlo.convolution %1, %w3 {padding = [[1, 1], [1, 1]]} : (tensor<2x4x2x4xf32>, tensor<3x4x3x3xf32>) -> tensor<2x3x2x4xf32>
  %4 = hlo.concatenate %2, %3 {dimension = 1} : (tensor<2x2x2x4xf32>, tensor<2x3x2x4xf32>) -> tensor<2x5x2x4xf32>
  %5 = hlo.pad %4, %z {edge_padding_low = [0, 0, 2, 1], edge_padding_high = [0, 0, 0, 0], interior_padding = [0, 0, 1, 0]} : (tensor<2x5x2x4xf32>, tensor<f32>) -> tensor<2x5x5x5xf32>
  %6 = "hlo.slice"(%5) {start_indices = [0, 0, 1, 0], limit_indices = [2, 5, 4, 4], strides = [1, 1, 1, 1]} : (tensor<2x5x5x5xf32>) -> tensor<2x5x3x4xf32>
  func.return %6 : tensor<2x5x3x4xf32>
}

// A reduction over the image height keeps (N, C, W) in NCHW order but
// (N, W, C) channels-last: a transpose restores the order.
// CHECK-LABEL: func.func @reduce_height
// CHECK:         }) {dimensions = [1]} : (tensor<1x4x3x3xf32>, tensor<f32>) -> tensor<1x3x3xf32>
// CHECK-NEXT:    %[[R:.*]] = hlo.transpose %{{.*}} {permutation = [0, 2, 1]} : tensor<1x3x3xf32>
// CHECK-NEXT:    func.return %[[R]]
func.func @reduce_height(%x: tensor<1x2x5x4xf32>, %w: tensor<3x2x2x2xf32>) -> tensor<1x3x3xf32> {
  %z = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
  %0 = hlo.convolution %x, %w : (tensor<1x2x5x4xf32>, tensor<3x2x2x2xf32>) -> tensor<1x3x4x3xf32>
  %1 = "hlo.reduce"(%0, %z) ({
  ^bb0(%a: tensor<f32>, %e: tensor<f32>):
    %s = hlo.add %a, %e : tensor<f32>
    hlo.return %s : (tensor<f32>) -> ()
  }) {dimensions = [2]} : (tensor<1x3x4x3xf32>, tensor<f32>) -> tensor<1x3x3xf32>
  func.return %1 : tensor<1x3x3xf32>
}

// A convolution already in another layout stays.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT:     hlo.transpose
// CHECK:         func.return
func.func @untouched(%y: tensor<1x5x5x2xf32>, %v: tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32> {
  %1 = hlo.convolution %y, %v {input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [1, 2]} : (tensor<1x5x5x2xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x3x3xf32>
  func.return %1 : tensor<1x3x3x3xf32>
}

// Integer convolutions (fold-qdq's u8 x i8 -> i32) with the
// requantization between them: the transposes sink through the converts,
// and the per-channel multiplier's arithmetic (computed from constants
// only: a broadcast, a convert, a shift by a splat) is rebuilt
// channels-last, so the next convolution reads the 8-bit result
// directly; one transpose is left at each end.
// CHECK-LABEL: func.func @requantize
// CHECK:         hlo.transpose %{{.*}} {permutation = [0, 2, 3, 1]} : (tensor<1x4x5x5xui8>) -> tensor<1x5x5x4xui8>
// CHECK:         hlo.broadcast_in_dim %{{.*}} {broadcast_dimensions = [3]} : (tensor<4xi32>) -> tensor<1x5x5x4xi32>
// CHECK:         hlo.convert %{{.*}} : (tensor<1x5x5x4xi64>) -> tensor<1x5x5x4xui8>
// CHECK-NOT:     hlo.transpose
// CHECK:         hlo.convolution
// CHECK:         hlo.transpose %{{.*}} {permutation = [0, 3, 1, 2]} : (tensor<1x5x5x2xi32>) -> tensor<1x2x5x5xi32>
// CHECK-NEXT:    func.return
func.func @requantize(%x: tensor<1x4x5x5xui8>, %w1: tensor<4x4x3x3xi8>, %w2: tensor<2x4x1x1xi8>) -> tensor<1x2x5x5xi32> {
  %0 = hlo.convolution %x, %w1 {padding = [[1, 1], [1, 1]]} : (tensor<1x4x5x5xui8>, tensor<4x4x3x3xi8>) -> tensor<1x4x5x5xi32>
  %m = hlo.constant {value = dense<[3, 5, 7, 9]> : tensor<4xi32>} : tensor<4xi32>
  %1 = hlo.broadcast_in_dim %m {broadcast_dimensions = [1]} : (tensor<4xi32>) -> tensor<1x4x5x5xi32>
  %2 = hlo.convert %1 : (tensor<1x4x5x5xi32>) -> tensor<1x4x5x5xi64>
  %s = hlo.constant {value = dense<2> : tensor<1x4x5x5xi64>} : tensor<1x4x5x5xi64>
  %3 = hlo.shift_left %2, %s : tensor<1x4x5x5xi64>
  %4 = hlo.convert %0 : (tensor<1x4x5x5xi32>) -> tensor<1x4x5x5xi64>
  %5 = hlo.multiply %4, %3 : tensor<1x4x5x5xi64>
  %6 = hlo.shift_right_arithmetic %5, %s : tensor<1x4x5x5xi64>
  %lo = hlo.constant {value = dense<0> : tensor<i64>} : tensor<i64>
  %hi = hlo.constant {value = dense<127> : tensor<i64>} : tensor<i64>
  %7 = hlo.clamp %lo, %6, %hi : (tensor<i64>, tensor<1x4x5x5xi64>, tensor<i64>) -> tensor<1x4x5x5xi64>
  %8 = hlo.convert %7 : (tensor<1x4x5x5xi64>) -> tensor<1x4x5x5xui8>
  %9 = hlo.convolution %8, %w2 : (tensor<1x4x5x5xui8>, tensor<2x4x1x1xi8>) -> tensor<1x2x5x5xi32>
  func.return %9 : tensor<1x2x5x5xi32>
}

// A squeeze-and-excitation gate: the pooled [N, C, 1, 1] scale, from a
// convolution of its own, is broadcast to the image; the broadcast is
// rebuilt channels-last and reads the scale's channels-last convolution
// through the gate directly (the transpose of its 1×1 pixels folds into
// the broadcast's dimensions).
// CHECK-LABEL: func.func @squeeze_excite
// CHECK:         %[[G:.*]] = hlo.logistic %{{.*}} : tensor<2x1x1x3xf32>
// CHECK-NEXT:    hlo.broadcast_in_dim %[[G]] {broadcast_dimensions = [0, 1, 2, 3]} : (tensor<2x1x1x3xf32>) -> tensor<2x4x4x3xf32>
// CHECK:         hlo.transpose %{{.*}} {permutation = [0, 3, 1, 2]} : (tensor<2x4x4x3xf32>) -> tensor<2x3x4x4xf32>
// CHECK-NEXT:    func.return
func.func @squeeze_excite(%x: tensor<2x3x4x4xf32>, %w1: tensor<3x3x3x3xf32>, %w2: tensor<3x3x1x1xf32>) -> tensor<2x3x4x4xf32> {
  %z = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
  %0 = hlo.convolution %x, %w1 {padding = [[1, 1], [1, 1]]} : (tensor<2x3x4x4xf32>, tensor<3x3x3x3xf32>) -> tensor<2x3x4x4xf32>
  %1 = "hlo.reduce"(%0, %z) ({
  ^bb0(%a: tensor<f32>, %e: tensor<f32>):
    %s = hlo.add %a, %e : tensor<f32>
    hlo.return %s : (tensor<f32>) -> ()
  }) {dimensions = [2, 3]} : (tensor<2x3x4x4xf32>, tensor<f32>) -> tensor<2x3xf32>
  %2 = hlo.reshape %1 : (tensor<2x3xf32>) -> tensor<2x3x1x1xf32>
  %3 = hlo.convolution %2, %w2 : (tensor<2x3x1x1xf32>, tensor<3x3x1x1xf32>) -> tensor<2x3x1x1xf32>
  %4 = hlo.logistic %3 : tensor<2x3x1x1xf32>
  %5 = hlo.broadcast_in_dim %4 {broadcast_dimensions = [0, 1, 2, 3]} : (tensor<2x3x1x1xf32>) -> tensor<2x3x4x4xf32>
  %6 = hlo.multiply %0, %5 : tensor<2x3x4x4xf32>
  func.return %6 : tensor<2x3x4x4xf32>
}
