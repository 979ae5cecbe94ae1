// graph.one_hot: printing and legalization (wrapped i64 indices broadcast
// along the new axis, compared with the positions, select of on/off).
// RUN: tessera-opt %s | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo | FileCheck %s --check-prefix=HLO

// CHECK: %0 = graph.one_hot %arg0, %arg1 {axis = 0, depth = 3} : (tensor<2xf32>, tensor<2xf32>) -> tensor<3x2xf32>

// HLO: hlo.convert %arg0 : (tensor<2xf32>) -> tensor<2xi64>
// HLO: hlo.broadcast_in_dim {{.*}} {broadcast_dimensions = [1]} : (tensor<2xi64>) -> tensor<3x2xi64>
// HLO: hlo.constant {value = dense<[0, 1, 2]> : tensor<3xi64>}
// HLO: hlo.compare {{.*}}comparison_direction = "EQ"
// HLO: hlo.select
func.func @main(%arg0: tensor<2xf32>, %arg1: tensor<2xf32>) -> tensor<3x2xf32> {
  %0 = graph.one_hot %arg0, %arg1 {depth = 3, axis = 0} : (tensor<2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}
