// fold-batch-norm folds an inference batch_norm into the conv2d feeding it:
// w' = w·γ/√(var+ε), b' = (b−mean)·γ/√(var+ε)+β.
// RUN: tessera-opt %s --fold-batch-norm | FileCheck %s

// √(var+ε) = [2, 3], γ/√(var+ε) = [0.5, 1]: w' = [1, 4], b' = [0.5, -2].
// CHECK-LABEL: func.func @fold
// CHECK-NEXT: %0 = graph.constant {value = dense<{{\[\[\[\[}}1.0]]], {{\[\[\[}}4.0]]]]> : tensor<2x1x1x1xf32>} : tensor<2x1x1x1xf32>
// CHECK-NEXT: %1 = graph.constant {value = dense<[0.5, -2.0]> : tensor<2xf32>} : tensor<2xf32>
// CHECK-NEXT: %2 = graph.conv2d %arg0, %0, %1 {strides = [2, 2]} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
// CHECK-NEXT: func.return %2 : tensor<1x2x2x2xf32>
func.func @fold(%x: tensor<1x1x4x4xf32>) -> tensor<1x2x2x2xf32> {
  %w = graph.constant {value = dense<[[[[2.0]]], [[[4.0]]]]> : tensor<2x1x1x1xf32>} : tensor<2x1x1x1xf32>
  %b = graph.constant {value = dense<[1.0, -1.0]> : tensor<2xf32>} : tensor<2xf32>
  %c = graph.conv2d %x, %w, %b {strides = [2, 2]} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %g = graph.constant {value = dense<[1.0, 3.0]> : tensor<2xf32>} : tensor<2xf32>
  %be = graph.constant {value = dense<[0.5, 0.0]> : tensor<2xf32>} : tensor<2xf32>
  %m = graph.constant {value = dense<1.0> : tensor<2xf32>} : tensor<2xf32>
  %v = graph.constant {value = dense<[3.0, 8.0]> : tensor<2xf32>} : tensor<2xf32>
  %y = graph.batch_norm %c, %g, %be, %m, %v {epsilon = 1.0 : f32} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  func.return %y : tensor<1x2x2x2xf32>
}

// Without a conv bias, b' = −mean·γ/√(var+ε)+β.
// CHECK-LABEL: func.func @fold_no_bias
// CHECK-NEXT: %0 = graph.constant {value = dense<{{\[\[\[\[}}2.0, 4.0]]]]> : tensor<1x1x1x2xf32>} : tensor<1x1x1x2xf32>
// CHECK-NEXT: %1 = graph.constant {value = dense<-1.0> : tensor<1xf32>} : tensor<1xf32>
// CHECK-NEXT: %2 = graph.conv2d %arg0, %0, %1 : (tensor<1x1x3x3xf32>, tensor<1x1x1x2xf32>, tensor<1xf32>) -> tensor<1x1x3x2xf32>
func.func @fold_no_bias(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x3x2xf32> {
  %w = graph.constant {value = dense<[[[[1.0, 2.0]]]]> : tensor<1x1x1x2xf32>} : tensor<1x1x1x2xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x3x3xf32>, tensor<1x1x1x2xf32>) -> tensor<1x1x3x2xf32>
  %g = graph.constant {value = dense<1.0> : tensor<1xf32>} : tensor<1xf32>
  %be = graph.constant {value = dense<1.0> : tensor<1xf32>} : tensor<1xf32>
  %m = graph.constant {value = dense<1.0> : tensor<1xf32>} : tensor<1xf32>
  %v = graph.constant {value = dense<0.25> : tensor<1xf32>} : tensor<1xf32>
  %y = graph.batch_norm %c, %g, %be, %m, %v {epsilon = 0.0 : f32} : (tensor<1x1x3x2xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x3x2xf32>
  func.return %y : tensor<1x1x3x2xf32>
}

// The conv result has another user: nothing changes.
// CHECK-LABEL: func.func @shared_conv
// CHECK: graph.conv2d
// CHECK: graph.batch_norm
func.func @shared_conv(%x: tensor<1x1x2x2xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>) {
  %w = graph.constant {value = dense<2.0> : tensor<1x1x1x1xf32>} : tensor<1x1x1x1xf32>
  %c = graph.conv2d %x, %w : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x2x2xf32>
  %p = graph.constant {value = dense<1.0> : tensor<1xf32>} : tensor<1xf32>
  %y = graph.batch_norm %c, %p, %p, %p, %p : (tensor<1x1x2x2xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x2x2xf32>
  func.return %y, %c : tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>
}

// Non-constant weights: nothing changes.
// CHECK-LABEL: func.func @weight_argument
// CHECK: graph.conv2d
// CHECK: graph.batch_norm
func.func @weight_argument(%x: tensor<1x1x2x2xf32>, %w: tensor<1x1x1x1xf32>) -> tensor<1x1x2x2xf32> {
  %c = graph.conv2d %x, %w : (tensor<1x1x2x2xf32>, tensor<1x1x1x1xf32>) -> tensor<1x1x2x2xf32>
  %p = graph.constant {value = dense<1.0> : tensor<1xf32>} : tensor<1xf32>
  %y = graph.batch_norm %c, %p, %p, %p, %p : (tensor<1x1x2x2xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x2x2xf32>
  func.return %y : tensor<1x1x2x2xf32>
}
