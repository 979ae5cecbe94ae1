// Scatters with runtime indices: printing, legalization to hlo.scatter
// (negative indices wrapped by a select first; scatter_elements' index
// vectors pair them with position constants) and the verifier; each
// hlo.scatter is an opaque fusion of its own.
// RUN: tessera-opt %s | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo | FileCheck %s --check-prefix=HLO
// RUN: tessera-opt %s --legalize-to-hlo --fuse | FileCheck %s --check-prefix=FUSE
// RUN: not tessera-opt %S/Inputs/scatter-invalid.mlir --split-input-file 2>&1 | FileCheck %s --check-prefix=ERR

// CHECK: %0 = graph.scatter_elements %arg0, %arg1, %arg2 {axis = 1, reduction = "add"} : (tensor<10x4xf32>, tensor<10x2xi64>, tensor<10x2xf32>) -> tensor<10x4xf32>
// CHECK: %1 = graph.scatter_nd %0, %arg3, %arg4 : (tensor<10x4xf32>, tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<10x4xf32>
// CHECK: %2 = graph.scatter_elements %arg5, %arg6, %arg7 {reduction = "max"} : (tensor<7xi32>, tensor<5xi64>, tensor<5xi32>) -> tensor<7xi32>

// HLO: %[[LT:.*]] = hlo.compare %arg1, %{{.*}} {comparison_direction = "LT"}
// HLO: %[[ADD:.*]] = hlo.add %arg1, %{{.*}} : tensor<10x2xi64>
// HLO: %[[W:.*]] = hlo.select %[[LT]], %[[ADD]], %arg1
// HLO: %[[V:.*]] = hlo.concatenate {{.*}} {dimension = 2} : (tensor<10x2x1xi64>, tensor<10x2x1xi64>) -> tensor<10x2x2xi64>
// HLO: %[[S0:.*]] = "hlo.scatter"(%arg0, %[[V]], %arg2) ({
// HLO: hlo.add
// HLO: {index_vector_dim = 2, inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], update_window_dims = []} : (tensor<10x4xf32>, tensor<10x2x2xi64>, tensor<10x2xf32>) -> tensor<10x4xf32>
// HLO: %[[W2:.*]] = hlo.select {{.*}} : (tensor<3x1xi1>, tensor<3x1xi32>, tensor<3x1xi32>) -> tensor<3x1xi32>
// HLO: "hlo.scatter"(%[[S0]], %[[W2]], %arg4) ({
// HLO-NEXT: ^bb0(%{{.*}}: tensor<f32>, %[[NEW:.*]]: tensor<f32>):
// HLO-NEXT: hlo.return %[[NEW]] : tensor<f32>
// HLO-NEXT: }) {index_vector_dim = 1, inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], update_window_dims = [1]} : (tensor<10x4xf32>, tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<10x4xf32>
// HLO: "hlo.scatter"(%arg5, %{{.*}}, %arg7) ({
// HLO: hlo.maximum
// HLO: {index_vector_dim = 1, inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], update_window_dims = []} : (tensor<7xi32>, tensor<5xi64>, tensor<5xi32>) -> tensor<7xi32>

// FUSE: "hlo.scatter"
// FUSE: hlo.return %{{.*}} : tensor<10x4xf32>
// FUSE-NEXT: }) {kind = "opaque"}
// FUSE: "hlo.scatter"
// FUSE: hlo.return %{{.*}} : tensor<10x4xf32>
// FUSE-NEXT: }) {kind = "opaque"}

// ERR: scatter-invalid.mlir:2:8: error: 'graph.scatter_elements' op indices must have an integer element type, got tensor<3x4xf32>
// ERR: scatter-invalid.mlir:7:8: error: 'graph.scatter_elements' op updates must have the indices' shape [3, 4], got tensor<3x2xf32>
// ERR: scatter-invalid.mlir:12:8: error: 'graph.scatter_elements' op indices dimension 0 has size 11, larger than the data's 10
// ERR: scatter-invalid.mlir:17:8: error: 'graph.scatter_elements' op attribute 'reduction' must be one of ["none" "add" "mul" "max" "min"], got "sum"
// ERR: scatter-invalid.mlir:22:8: error: 'graph.scatter_nd' op index vectors of length 3 exceed the data's rank 2
// ERR: scatter-invalid.mlir:27:8: error: 'graph.scatter_nd' op updates must have shape [2, 4] (indices.shape[:-1] ++ data.shape[1:]), got tensor<2x3xf32>
// ERR: scatter-invalid.mlir:32:8: error: 'graph.scatter_nd' op updates must have the data's element type f32, got tensor<2x4xi32>
func.func @main(%arg0: tensor<10x4xf32>, %arg1: tensor<10x2xi64>, %arg2: tensor<10x2xf32>, %arg3: tensor<3x1xi32>, %arg4: tensor<3x4xf32>,
                %arg5: tensor<7xi32>, %arg6: tensor<5xi64>, %arg7: tensor<5xi32>) -> (tensor<10x4xf32>, tensor<7xi32>) {
  %0 = graph.scatter_elements %arg0, %arg1, %arg2 {axis = 1, reduction = "add"} : (tensor<10x4xf32>, tensor<10x2xi64>, tensor<10x2xf32>) -> tensor<10x4xf32>
  %1 = graph.scatter_nd %0, %arg3, %arg4 : (tensor<10x4xf32>, tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<10x4xf32>
  %2 = graph.scatter_elements %arg5, %arg6, %arg7 {reduction = "max"} : (tensor<7xi32>, tensor<5xi64>, tensor<5xi32>) -> tensor<7xi32>
  func.return %1, %2 : tensor<10x4xf32>, tensor<7xi32>
}
