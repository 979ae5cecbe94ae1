// graph.cumsum: printing and legalization to one hlo.reduce_window whose
// window spans the axis, padded so each output covers its prefix
// (exclusive: low n, high −1; reverse: mirrored).
// RUN: tessera-opt %s | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo | FileCheck %s --check-prefix=HLO

// CHECK: %0 = graph.cumsum %arg0 {axis = 1} : tensor<2x5xf32>
// CHECK: %1 = graph.cumsum %arg0 {axis = 1, exclusive = true, reverse = true} : tensor<2x5xf32>

// HLO: "hlo.reduce_window"(%arg0,
// HLO: hlo.add
// HLO: }) {padding = {{\[\[}}0, 0], [4, 0]], window_dimensions = [1, 5]}
// HLO: "hlo.reduce_window"(%arg0,
// HLO: }) {padding = {{\[\[}}0, 0], [-1, 5]], window_dimensions = [1, 5]}
func.func @main(%arg0: tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>) {
  %0 = graph.cumsum %arg0 {axis = 1} : tensor<2x5xf32>
  %1 = graph.cumsum %arg0 {axis = 1, exclusive = true, reverse = true} : tensor<2x5xf32>
  func.return %0, %1 : tensor<2x5xf32>, tensor<2x5xf32>
}
