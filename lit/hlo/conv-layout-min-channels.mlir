// conv-layout{min-channels=N}: convolutions with fewer than N output
// channels keep NCHW (the CPU target passes its vectors' f32 lanes: their
// rows vectorize along the image width), the others go channels-last as
// with --conv-layout, a transpose between the two.
// RUN: tessera-opt %s --pass-pipeline 'conv-layout{min-channels=4}' | FileCheck %s
// RUN: not tessera-opt %s --pass-pipeline 'conv-layout{min-channels=-1}' 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK-LABEL: func.func @mixed
// CHECK-NEXT:    %[[C1:.*]] = hlo.convolution %arg0, %arg1 : (tensor<1x3x6x6xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT:    %[[T:.*]] = hlo.transpose %[[C1]] {permutation = [0, 2, 3, 1]}
// CHECK-NEXT:    %[[C2:.*]] = hlo.convolution %[[T]], %arg2 {input_batch_dimension = 0, input_feature_dimension = 3, {{.*}}} : (tensor<1x4x4x2xf32>, tensor<4x2x3x3xf32>) -> tensor<1x2x2x4xf32>
// CHECK-NEXT:    %[[R:.*]] = hlo.transpose %[[C2]] {permutation = [0, 3, 1, 2]}
// CHECK-NEXT:    func.return %[[R]]
// BAD: option min-channels must be an integer ≥ 0, got "-1"
func.func @mixed(%x: tensor<1x3x6x6xf32>, %w1: tensor<2x3x3x3xf32>, %w2: tensor<4x2x3x3xf32>) -> tensor<1x4x2x2xf32> {
  %0 = hlo.convolution %x, %w1 : (tensor<1x3x6x6xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x4x4xf32>
  %1 = hlo.convolution %0, %w2 : (tensor<1x2x4x4xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x2x2xf32>
  func.return %1 : tensor<1x4x2x2xf32>
}
