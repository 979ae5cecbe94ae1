// graph.hardmax: printing and legalization (reduce max, the first maximum
// by a reduce min over positions, select).
// RUN: tessera-opt %s | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo | FileCheck %s --check-prefix=HLO

// CHECK: %0 = graph.hardmax %arg0 {axis = 0} : tensor<4x3xf32>

// HLO: %0 = hlo.constant {value = dense<[0.0, 1.0, 2.0, 3.0]> : tensor<4xf32>}
// HLO: hlo.reduce
// HLO: hlo.maximum
// HLO: comparison_direction = "EQ"
// HLO: hlo.select
// HLO: hlo.minimum
// HLO: comparison_direction = "EQ"
// HLO: hlo.select
func.func @main(%arg0: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = graph.hardmax %arg0 {axis = 0} : tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}
