// graph.nll_loss: printing, legalization (ignored targets become class 0,
// one gather of the scores at the targets, the weights gathered and zeroed
// where ignored, mean = Σ loss / Σ weights) and the verifier.
// RUN: tessera-opt %s | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo | FileCheck %s --check-prefix=HLO
// RUN: not tessera-opt %S/Inputs/nll-loss-invalid.mlir --split-input-file 2>&1 | FileCheck %s --check-prefix=ERR

// CHECK: %0 = graph.nll_loss %arg0, %arg1, %arg2 {ignore_index = 1} : (tensor<4x3xf32>, tensor<4xi64>, tensor<3xf32>) -> tensor<f32>

// HLO: %[[KEEP:.*]] = hlo.compare %arg1, %{{.*}} {comparison_direction = "NE"}
// HLO: %[[SAFE:.*]] = hlo.select %[[KEEP]], %arg1, %{{.*}} : (tensor<4xi1>, tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
// HLO: hlo.gather %arg0, %{{.*}} {collapsed_slice_dims = [0, 1], index_vector_dim = 1, offset_dims = [], slice_sizes = [1, 1], start_index_map = [0, 1]} : (tensor<4x3xf32>, tensor<4x2xi64>) -> tensor<4xf32>
// HLO: hlo.gather %arg2, %[[SAFE]] {collapsed_slice_dims = [0], index_vector_dim = 1, offset_dims = [], slice_sizes = [1], start_index_map = [0]} : (tensor<3xf32>, tensor<4xi64>) -> tensor<4xf32>
// HLO: hlo.negate
// HLO: hlo.divide

// ERR: nll-loss-invalid.mlir:2:8: error: 'graph.nll_loss' op target must have shape [4, 2] (input's without the class dim), got tensor<4xi64>
// ERR: nll-loss-invalid.mlir:7:8: error: 'graph.nll_loss' op weight must be tensor<3xf32>, got tensor<4xf32>
// ERR: nll-loss-invalid.mlir:12:8: error: 'graph.nll_loss' op target must have an integer element type, got tensor<4xf32>
func.func @main(%arg0: tensor<4x3xf32>, %arg1: tensor<4xi64>, %arg2: tensor<3xf32>) -> tensor<f32> {
  %0 = graph.nll_loss %arg0, %arg1, %arg2 {ignore_index = 1} : (tensor<4x3xf32>, tensor<4xi64>, tensor<3xf32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}
