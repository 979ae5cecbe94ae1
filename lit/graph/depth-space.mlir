// graph.depth_to_space and graph.space_to_depth: printing, shape
// inference, legalization (reshape, transpose, reshape) and the verifier.
// RUN: tessera-opt %s | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo | FileCheck %s --check-prefix=HLO
// RUN: not tessera-opt %S/Inputs/depth-space-invalid.mlir 2>&1 | FileCheck %s --check-prefix=ERR

// CHECK: graph.depth_to_space %arg0 {blocksize = 2} : (tensor<1x8x2x3xf32>) -> tensor<1x2x4x6xf32>
// CHECK: graph.depth_to_space %arg0 {blocksize = 2, mode = "CRD"} : (tensor<1x8x2x3xf32>) -> tensor<1x2x4x6xf32>
// CHECK: graph.space_to_depth %arg1 {blocksize = 3} : (tensor<2x1x3x6xf32>) -> tensor<2x9x1x2xf32>

// HLO: hlo.reshape %arg0 : (tensor<1x8x2x3xf32>) -> tensor<1x2x2x2x2x3xf32>
// HLO: hlo.transpose {{.*}}{permutation = [0, 3, 4, 1, 5, 2]}
// HLO: hlo.reshape {{.*}} -> tensor<1x2x4x6xf32>
// HLO: hlo.reshape %arg0 : (tensor<1x8x2x3xf32>) -> tensor<1x2x2x2x2x3xf32>
// HLO: hlo.transpose {{.*}}{permutation = [0, 1, 4, 2, 5, 3]}
// HLO: hlo.reshape %arg1 : (tensor<2x1x3x6xf32>) -> tensor<2x1x1x3x2x3xf32>
// HLO: hlo.transpose {{.*}}{permutation = [0, 3, 5, 1, 2, 4]}
// HLO: -> tensor<2x9x1x2xf32>

// ERR: depth-space-invalid.mlir:2:8: error: 'graph.depth_to_space' op blocksize² = 4 does not divide the 6 channels
func.func @main(%arg0: tensor<1x8x2x3xf32>, %arg1: tensor<2x1x3x6xf32>) -> (tensor<1x2x4x6xf32>, tensor<1x2x4x6xf32>, tensor<2x9x1x2xf32>) {
  %0 = graph.depth_to_space %arg0 {blocksize = 2 : i64} : (tensor<1x8x2x3xf32>) -> tensor<1x2x4x6xf32>
  %1 = graph.depth_to_space %arg0 {blocksize = 2 : i64, mode = "CRD"} : (tensor<1x8x2x3xf32>) -> tensor<1x2x4x6xf32>
  %2 = graph.space_to_depth %arg1 {blocksize = 3 : i64} : (tensor<2x1x3x6xf32>) -> tensor<2x9x1x2xf32>
  func.return %0, %1, %2 : tensor<1x2x4x6xf32>, tensor<1x2x4x6xf32>, tensor<2x9x1x2xf32>
}
