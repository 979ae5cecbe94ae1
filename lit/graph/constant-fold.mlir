// constant-fold replaces graph ops whose operands are all constants.
// RUN: tessera-opt %s --constant-fold | FileCheck %s
// RUN: tessera-opt %s --constant-fold='max-elements=4' | FileCheck %s --check-prefix=LIMIT

// A chain folds completely; the op reading an argument stays.
// CHECK-LABEL: func.func @chain
// CHECK-NEXT: %0 = graph.constant {value = dense<{{\[\[}}0.5, 0.0, 0.0], [1.25, 6.0, 0.0]]> : tensor<2x3xf32>} : tensor<2x3xf32>
// CHECK-NEXT: %1 = graph.add %arg0, %0 : tensor<2x3xf32>
// CHECK-NEXT: func.return %1
// Above the limit, the elementwise ops still fold (their results store no
// more than their 6-element operand); the transpose does not.
// LIMIT-LABEL: func.func @chain
// LIMIT-NOT: graph.mul
// LIMIT: graph.transpose
func.func @chain(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.constant {value = dense<[[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]]> : tensor<2x3xf32>} : tensor<2x3xf32>
  %1 = graph.constant {value = dense<[0.5, 0.25, 2.0]> : tensor<3xf32>} : tensor<3xf32>
  %2 = graph.mul %0, %1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %3 = graph.relu %2 : tensor<2x3xf32>
  %4 = graph.transpose %3 : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %5 = graph.reshape %4 {shape = [2, 3]} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %6 = graph.add %x, %5 : tensor<2x3xf32>
  func.return %6 : tensor<2x3xf32>
}

// Matmul of constants and splats; within the limit of 4 elements.
// CHECK-LABEL: func.func @matmul
// CHECK-NEXT: %0 = graph.constant {value = dense<{{\[\[}}3.0, 3.0], [7.0, 7.0]]> : tensor<2x2xf32>} : tensor<2x2xf32>
// CHECK-NEXT: func.return %0
// LIMIT-LABEL: func.func @matmul
// LIMIT-NEXT: %0 = graph.constant {value = dense<{{\[\[}}3.0, 3.0], [7.0, 7.0]]> : tensor<2x2xf32>} : tensor<2x2xf32>
// LIMIT-NEXT: func.return %0
func.func @matmul() -> tensor<2x2xf32> {
  %a = graph.constant {value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : tensor<2x2xf32>
  %b = graph.constant {value = dense<1.0> : tensor<2x2xf32>} : tensor<2x2xf32>
  %0 = graph.matmul %a, %b : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %0 : tensor<2x2xf32>
}

// Integer division by zero is not folded; the other division is.
// CHECK-LABEL: func.func @int_div
// CHECK: graph.constant {value = dense<[2, -2]> : tensor<2xi32>}
// CHECK: graph.div
func.func @int_div() -> (tensor<2xi32>, tensor<2xi32>) {
  %a = graph.constant {value = dense<[5, -5]> : tensor<2xi32>} : tensor<2xi32>
  %b = graph.constant {value = dense<2> : tensor<2xi32>} : tensor<2xi32>
  %z = graph.constant {value = dense<[1, 0]> : tensor<2xi32>} : tensor<2xi32>
  %0 = graph.div %a, %b : tensor<2xi32>
  %1 = graph.div %a, %z : tensor<2xi32>
  func.return %0, %1 : tensor<2xi32>, tensor<2xi32>
}

// Softmax of a constant along axis 0.
// CHECK-LABEL: func.func @softmax
// CHECK-NEXT: %0 = graph.constant {value = dense<{{\[\[}}0.5, 0.5]]> : tensor<1x2xf32>} : tensor<1x2xf32>
func.func @softmax() -> tensor<1x2xf32> {
  %a = graph.constant {value = dense<[[3.0, 3.0]]> : tensor<1x2xf32>} : tensor<1x2xf32>
  %0 = graph.softmax %a : tensor<1x2xf32>
  func.return %0 : tensor<1x2xf32>
}
