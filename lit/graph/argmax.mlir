// graph.argmax / graph.argmin: printing, legalization (reduce max/min, the
// positions that hit it or hold NaN, the first by reduce min or the last
// by reduce max, reshape to keepdims) and the verifier.
// RUN: tessera-opt %s | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo | FileCheck %s --check-prefix=HLO
// RUN: tessera-opt %S/Inputs/argmax-invalid.mlir --split-input-file --verify-diagnostics

// CHECK: %0 = graph.argmax %arg0 : (tensor<4x3xf32>) -> tensor<1x3xi64>
// CHECK: %1 = graph.argmin %arg0 {axis = -1, keepdims = false, select_last_index = true} : (tensor<4x3xf32>) -> tensor<4xi64>
// CHECK: %2 = graph.argmax %arg1 {axis = 1} : (tensor<2x5xi32>) -> tensor<2x1xi64>

// HLO: "hlo.reduce"(%arg0
// HLO: hlo.maximum
// HLO: comparison_direction = "EQ"
// HLO: comparison_direction = "NE"
// HLO: hlo.or
// HLO: hlo.constant {value = dense<[0, 1, 2, 3]> : tensor<4xi64>}
// HLO: hlo.select
// HLO: hlo.minimum
// HLO: hlo.reshape {{.*}} -> tensor<1x3xi64>
// HLO: hlo.minimum
// HLO: hlo.constant {value = dense<-1> : tensor<i64>}
// HLO: hlo.maximum {{.*}} : tensor<i64>
// HLO-NOT: comparison_direction = "NE"
// HLO: func.return
func.func @main(%arg0: tensor<4x3xf32>, %arg1: tensor<2x5xi32>) -> (tensor<1x3xi64>, tensor<4xi64>, tensor<2x1xi64>) {
  %0 = graph.argmax %arg0 : (tensor<4x3xf32>) -> tensor<1x3xi64>
  %1 = graph.argmin %arg0 {axis = -1, keepdims = false, select_last_index = true} : (tensor<4x3xf32>) -> tensor<4xi64>
  %2 = graph.argmax %arg1 {axis = 1} : (tensor<2x5xi32>) -> tensor<2x1xi64>
  func.return %0, %1, %2 : tensor<1x3xi64>, tensor<4xi64>, tensor<2x1xi64>
}
