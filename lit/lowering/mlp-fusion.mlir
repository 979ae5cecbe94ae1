// RUN: tessera-opt %s --legalize-to-hlo --fuse | FileCheck %s

// The seed two-layer MLP: flatten → gemm 784→200 (transB) → relu → gemm
// 200→10 (transB). After legalization and fusion exactly two fusions
// remain, both "output" fusions rooted at a dot_general: the first holds the
// bias add and the relu's maximum, the second only the bias add. Nothing
// computes outside them.

// CHECK-LABEL: func.func @main
// CHECK-NOT: hlo.
// CHECK: %[[F1:.*]] = "hlo.fusion"(%arg0) ({
// CHECK-NOT: hlo.fusion
// CHECK: hlo.dot_general
// CHECK-SAME: rhs_contracting_dimensions = [1]
// CHECK-SAME: -> tensor<1x200xf32>
// CHECK-NOT: hlo.dot_general
// CHECK: hlo.add
// CHECK-SAME: tensor<1x200xf32>
// CHECK-NOT: hlo.dot_general
// CHECK: hlo.maximum
// CHECK-SAME: tensor<1x200xf32>
// CHECK-NOT: hlo.dot_general
// CHECK: hlo.return
// CHECK-NEXT: }) {kind = "output"} : (tensor<1x1x28x28xf32>) -> tensor<1x200xf32>
// CHECK-NEXT: %[[F2:.*]] = "hlo.fusion"(%[[F1]]) ({
// CHECK-NOT: hlo.fusion
// CHECK: hlo.dot_general
// CHECK-SAME: rhs_contracting_dimensions = [1]
// CHECK-SAME: -> tensor<1x10xf32>
// CHECK-NOT: hlo.dot_general
// CHECK-NOT: hlo.maximum
// CHECK: hlo.add
// CHECK-SAME: tensor<1x10xf32>
// CHECK-NOT: hlo.dot_general
// CHECK-NOT: hlo.maximum
// CHECK: hlo.return
// CHECK-NEXT: }) {kind = "output"} : (tensor<1x200xf32>) -> tensor<1x10xf32>
// CHECK-NEXT: func.return %[[F2]] : tensor<1x10xf32>
// CHECK-NOT: hlo.
// CHECK-NOT: graph.

module {
  func.func @main(%arg0: tensor<1x1x28x28xf32>) -> tensor<1x10xf32> {
    %w1 = graph.constant {value = dense<0.01> : tensor<200x784xf32>} : tensor<200x784xf32>
    %b1 = graph.constant {value = dense<0.1> : tensor<200xf32>} : tensor<200xf32>
    %w2 = graph.constant {value = dense<-0.02> : tensor<10x200xf32>} : tensor<10x200xf32>
    %b2 = graph.constant {value = dense<0.5> : tensor<10xf32>} : tensor<10xf32>
    %0 = graph.flatten %arg0 : (tensor<1x1x28x28xf32>) -> tensor<1x784xf32>
    %1 = graph.gemm %0, %w1, %b1 {transB = true} : (tensor<1x784xf32>, tensor<200x784xf32>, tensor<200xf32>) -> tensor<1x200xf32>
    %2 = graph.relu %1 : tensor<1x200xf32>
    %3 = graph.gemm %2, %w2, %b2 {transB = true} : (tensor<1x200xf32>, tensor<10x200xf32>, tensor<10xf32>) -> tensor<1x10xf32>
    func.return %3 : tensor<1x10xf32>
  }
}
