// Gathers with runtime indices: printing, legalization to hlo.gather
// (negative indices wrapped by a select first) and the verifier.
// RUN: tessera-opt %s | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo | FileCheck %s --check-prefix=HLO
// RUN: not tessera-opt %S/Inputs/gather-invalid.mlir --split-input-file 2>&1 | FileCheck %s --check-prefix=ERR

// CHECK: %0 = graph.gather %arg0, %arg1 : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
// CHECK: %1 = graph.gather_elements %arg0, %arg2 {axis = 1} : (tensor<10x4xf32>, tensor<10x2xi64>) -> tensor<10x2xf32>
// CHECK: %2 = graph.gather_nd %arg0, %arg3 : (tensor<10x4xf32>, tensor<5x2xi32>) -> tensor<5xf32>

// HLO: %[[LT:.*]] = hlo.compare %arg1, %{{.*}} {comparison_direction = "LT"}
// HLO: %[[ADD:.*]] = hlo.add %arg1, %{{.*}} : tensor<2x3xi64>
// HLO: %[[W:.*]] = hlo.select %[[LT]], %[[ADD]], %arg1
// HLO: hlo.gather %arg0, %[[W]] {collapsed_slice_dims = [0], index_vector_dim = 2, offset_dims = [2], slice_sizes = [1, 4], start_index_map = [0]} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
// HLO: hlo.concatenate {{.*}} {dimension = 2} : (tensor<10x2x1xi64>, tensor<10x2x1xi64>) -> tensor<10x2x2xi64>
// HLO: hlo.gather %arg0, {{.*}} {collapsed_slice_dims = [0, 1], index_vector_dim = 2, offset_dims = [], slice_sizes = [1, 1], start_index_map = [0, 1]} : (tensor<10x4xf32>, tensor<10x2x2xi64>) -> tensor<10x2xf32>
// HLO: hlo.gather %arg0, {{.*}} {collapsed_slice_dims = [0, 1], index_vector_dim = 1, offset_dims = [], slice_sizes = [1, 1], start_index_map = [0, 1]} : (tensor<10x4xf32>, tensor<5x2xi32>) -> tensor<5xf32>

// ERR: gather-invalid.mlir:2:8: error: 'graph.gather' op indices must have an integer element type, got tensor<3xf32>
// ERR: gather-invalid.mlir:7:8: error: 'graph.gather_elements' op indices must have the data's rank 2, got tensor<3xi64>
// ERR: gather-invalid.mlir:12:8: error: 'graph.gather_nd' op index vectors of length 3 after 0 batch dims exceed the data's rank 2
// ERR: gather-invalid.mlir:17:8: error: 'graph.gather' op takes its indices from the attribute 'indices' or from a second operand, not both
func.func @main(%arg0: tensor<10x4xf32>, %arg1: tensor<2x3xi64>, %arg2: tensor<10x2xi64>, %arg3: tensor<5x2xi32>) -> (tensor<2x3x4xf32>, tensor<10x2xf32>, tensor<5xf32>) {
  %0 = graph.gather %arg0, %arg1 : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  %1 = graph.gather_elements %arg0, %arg2 {axis = 1} : (tensor<10x4xf32>, tensor<10x2xi64>) -> tensor<10x2xf32>
  %2 = graph.gather_nd %arg0, %arg3 : (tensor<10x4xf32>, tensor<5x2xi32>) -> tensor<5xf32>
  func.return %0, %1, %2 : tensor<2x3x4xf32>, tensor<10x2xf32>, tensor<5xf32>
}
