// graph.trilu: printing, legalization (a j − i constant compared with k,
// select) and the verifier.
// RUN: tessera-opt %s | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo | FileCheck %s --check-prefix=HLO
// RUN: not tessera-opt %S/Inputs/trilu-invalid.mlir 2>&1 | FileCheck %s --check-prefix=ERR

// CHECK: %0 = graph.trilu %arg0 : tensor<2x3x4xf32>
// CHECK: %1 = graph.trilu %arg0, %arg1 {upper = false} : (tensor<2x3x4xf32>, tensor<i64>) -> tensor<2x3x4xf32>

// HLO: %0 = hlo.constant {value = dense<{{\[\[}}0, 1, 2, 3], [-1, 0, 1, 2], [-2, -1, 0, 1]]> : tensor<3x4xi64>}
// HLO: hlo.compare {{.*}}comparison_direction = "GE"
// HLO: hlo.broadcast_in_dim {{.*}}broadcast_dimensions = [1, 2]
// HLO: hlo.select
// HLO: hlo.broadcast_in_dim %arg1
// HLO: comparison_direction = "LE"

// ERR: trilu-invalid.mlir:2:8: error: 'graph.trilu' op input must have rank at least 2, got tensor<5xf32>
func.func @main(%arg0: tensor<2x3x4xf32>, %arg1: tensor<i64>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %0 = graph.trilu %arg0 : tensor<2x3x4xf32>
  %1 = graph.trilu %arg0, %arg1 {upper = false} : (tensor<2x3x4xf32>, tensor<i64>) -> tensor<2x3x4xf32>
  func.return %0, %1 : tensor<2x3x4xf32>, tensor<2x3x4xf32>
}
