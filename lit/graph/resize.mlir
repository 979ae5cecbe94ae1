// graph.resize: printing, legalization (one dim at a time: a one-hot dim
// is a gather of constant positions, a linear or cubic dim a weighted sum
// of gathers; tf_crop_and_resize selects the extrapolation value outside
// the roi) and the verifier.
// RUN: tessera-opt %s | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo | FileCheck %s --check-prefix=HLO
// RUN: not tessera-opt %S/Inputs/resize-invalid.mlir --split-input-file 2>&1 | FileCheck %s --check-prefix=ERR

// CHECK: %0 = graph.resize %arg0 {sizes = [1, 2, 4, 6]} : (tensor<1x2x2x3xf32>) -> tensor<1x2x4x6xf32>
// CHECK: %1 = graph.resize %arg0 {coordinate_transformation_mode = "align_corners", mode = "linear", sizes = [1, 2, 3, 3]} : (tensor<1x2x2x3xf32>) -> tensor<1x2x3x3xf32>

// The nearest resize: two gathers of constant positions (dims 2 and 3).
// HLO: %[[P2:.*]] = hlo.constant {value = dense<[0, 0, 1, 1]> : tensor<4xi64>}
// HLO: hlo.gather %arg0, %[[P2]] {collapsed_slice_dims = [2], index_vector_dim = 1, offset_dims = [0, 1, 3], slice_sizes = [1, 2, 1, 3], start_index_map = [2]}
// HLO: %[[P3:.*]] = hlo.constant {value = dense<[0, 0, 1, 1, 2, 2]> : tensor<6xi64>}
// HLO: hlo.gather %{{.*}}, %[[P3]] {collapsed_slice_dims = [3], index_vector_dim = 1, offset_dims = [0, 1, 2], slice_sizes = [1, 2, 4, 1], start_index_map = [3]}
// The align_corners linear resize (coordinates 0, 0.5, 1): tap 0 reads
// rows 0, 0, 0 with weights 0, 0.5, 0; tap 1 rows 0, 1, 1 with 1, 0.5, 1.
// HLO: hlo.constant {value = dense<[0, 0, 0]> : tensor<3xi64>}
// HLO: hlo.constant {value = dense<[0.0, 0.5, 0.0]> : tensor<3xf32>}
// HLO: hlo.multiply
// HLO: hlo.constant {value = dense<[0, 1, 1]> : tensor<3xi64>}
// HLO: hlo.constant {value = dense<[1.0, 0.5, 1.0]> : tensor<3xf32>}
// HLO: hlo.add

// ERR: resize-invalid.mlir:2:8: error: 'graph.resize' op sizes must have one entry per dimension (4), got 2
// ERR: resize-invalid.mlir:7:8: error: 'graph.resize' op mode 'linear' needs a float input, got tensor<1x1x2x2xi32>
// ERR: resize-invalid.mlir:12:8: error: 'graph.resize' op scales[3] = -2 must be positive and finite
// ERR: resize-invalid.mlir:17:8: error: 'graph.resize' op attribute 'mode' must be one of ["nearest" "linear" "cubic"], got "area"
func.func @main(%arg0: tensor<1x2x2x3xf32>) -> (tensor<1x2x4x6xf32>, tensor<1x2x3x3xf32>) {
  %0 = graph.resize %arg0 {sizes = [1, 2, 4, 6]} : (tensor<1x2x2x3xf32>) -> tensor<1x2x4x6xf32>
  %1 = graph.resize %arg0 {sizes = [1, 2, 3, 3], mode = "linear", coordinate_transformation_mode = "align_corners"} : (tensor<1x2x2x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %0, %1 : tensor<1x2x4x6xf32>, tensor<1x2x3x3xf32>
}
