// graph.layer_norm: printing, shape inference, legalization and the verifier.
// RUN: tessera-opt %s | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo | FileCheck %s --check-prefix=HLO
// RUN: not tessera-opt %S/Inputs/layer-norm-invalid.mlir 2>&1 | FileCheck %s --check-prefix=ERR

// CHECK: %0:3 = graph.layer_norm %arg0, %arg1, %arg2 : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>)
// CHECK: graph.layer_norm %arg0, %arg1 {axis = 1, epsilon = 0.001 : f32}

// HLO: hlo.reduce
// HLO: hlo.divide
// HLO: hlo.rsqrt
// HLO: hlo.broadcast_in_dim %arg1
// HLO: hlo.add

// ERR: layer-norm-invalid.mlir:2:10: error: 'graph.layer_norm' op scale tensor<5xf32> does not broadcast to the normalized shape [8]
func.func @main(%arg0: tensor<2x3x8xf32>, %arg1: tensor<8xf32>, %arg2: tensor<8xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x1xf32>, tensor<2x3x8xf32>) {
  %0:3 = graph.layer_norm %arg0, %arg1, %arg2 : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<2x3x8xf32>, tensor<2x3x1xf32>, tensor<2x3x1xf32>)
  %1:3 = graph.layer_norm %arg0, %arg1 {axis = 1, epsilon = 1.0e-3 : f32} : (tensor<2x3x8xf32>, tensor<8xf32>) -> (tensor<2x3x8xf32>, tensor<2x1x1xf32>, tensor<2x1x1xf32>)
  func.return %0#0, %0#1, %1#0 : tensor<2x3x8xf32>, tensor<2x3x1xf32>, tensor<2x3x8xf32>
}
