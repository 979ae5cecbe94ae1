// RUN: tessera-opt %s --legalize-to-hlo --mlir-print-debuginfo | FileCheck %s

// Every hlo op created from a graph op carries that op's location, the
// reduction bodies included.

// CHECK-LABEL: func.func @main
// CHECK-NEXT: hlo.dot_general {{.*}} loc("model.onnx":10:3)
// CHECK-NEXT: hlo.constant {{.*}} loc("model.onnx":10:3)
// CHECK-NEXT: hlo.multiply {{.*}} loc("model.onnx":10:3)
// CHECK-NEXT: hlo.broadcast_in_dim {{.*}} loc("model.onnx":10:3)
// CHECK-NEXT: hlo.add {{.*}} loc("model.onnx":10:3)
// CHECK-NEXT: hlo.constant {{.*}} loc("model.onnx":11:5)
// CHECK-NEXT: "hlo.reduce"
// CHECK-NEXT: ^bb0
// CHECK-NEXT: hlo.maximum {{.*}} loc("model.onnx":11:5)
// CHECK-NEXT: hlo.return {{.*}} loc("model.onnx":11:5)
// CHECK-NEXT: }) {dimensions = [1]} {{.*}} loc("model.onnx":11:5)
func.func @main(%a: tensor<2x4xf32>, %b: tensor<4x3xf32>, %c: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = graph.gemm %a, %b, %c {alpha = 2.0 : f32} : (tensor<2x4xf32>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<2x3xf32> loc("model.onnx":10:3)
  %1 = graph.softmax %0 : tensor<2x3xf32> loc("model.onnx":11:5)
  func.return %1 : tensor<2x3xf32>
}
