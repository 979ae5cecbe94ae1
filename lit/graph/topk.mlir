// graph.topk: printing, legalization (ranks by comparing x with itself
// over [..., n, n, ...], then each output slot selects the element of its
// rank over [..., k, n, ...]) and the verifier.
// RUN: tessera-opt %s | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo | FileCheck %s --check-prefix=HLO
// RUN: tessera-opt %s --legalize-to-hlo --fuse | FileCheck %s --check-prefix=FUSE
// RUN: tessera-opt %S/Inputs/topk-invalid.mlir --split-input-file --verify-diagnostics

// CHECK: %0:2 = graph.topk %arg0 {k = 2} : (tensor<3x5xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
// CHECK: %1:2 = graph.topk %arg0 {axis = 0, k = 3, largest = false, sorted = false} : (tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xi64>)

// HLO: hlo.broadcast_in_dim %arg0 {broadcast_dimensions = [0, 1]} : (tensor<3x5xf32>) -> tensor<3x5x5xf32>
// HLO: hlo.broadcast_in_dim %arg0 {broadcast_dimensions = [0, 2]} : (tensor<3x5xf32>) -> tensor<3x5x5xf32>
// HLO: comparison_direction = "GT"
// HLO: comparison_direction = "EQ"
// HLO: comparison_direction = "LT"
// HLO: hlo.convert {{.*}} : (tensor<3x5x5xi1>) -> tensor<3x5x5xi64>
// HLO: hlo.add
// HLO: {dimensions = [2]} : (tensor<3x5x5xi64>, tensor<i64>) -> tensor<3x5xi64>
// HLO: hlo.constant {value = dense<[0, 1]> : tensor<2xi64>}
// HLO: hlo.select {{.*}} -> tensor<3x2x5xf32>
// HLO: {dimensions = [2]} : (tensor<3x2x5xf32>, tensor<f32>) -> tensor<3x2xf32>
// HLO: {dimensions = [2]} : (tensor<3x2x5xi64>, tensor<i64>) -> tensor<3x2xi64>
// HLO: hlo.broadcast_in_dim %arg0 {broadcast_dimensions = [0, 2]} : (tensor<3x5xf32>) -> tensor<3x3x5xf32>
// HLO: hlo.broadcast_in_dim %arg0 {broadcast_dimensions = [1, 2]} : (tensor<3x5xf32>) -> tensor<3x3x5xf32>
// HLO: comparison_direction = "LT"

// FUSE: hlo.fusion
// FUSE-NOT: graph.
func.func @main(%arg0: tensor<3x5xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>, tensor<3x5xf32>, tensor<3x5xi64>) {
  %0:2 = graph.topk %arg0 {k = 2} : (tensor<3x5xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
  %1:2 = graph.topk %arg0 {k = 3, axis = 0, largest = false, sorted = false} : (tensor<3x5xf32>) -> (tensor<3x5xf32>, tensor<3x5xi64>)
  func.return %0#0, %0#1, %1#0, %1#1 : tensor<3x2xf32>, tensor<3x2xi64>, tensor<3x5xf32>, tensor<3x5xi64>
}
