// --conv-kernel-layout: constant OIHW convolution kernels are transposed at
// compile time to HWIO (output features innermost) and the convolution
// gets the kernel dimension numbers that say so. A constant shared by two
// convolutions is transposed once; a kernel passed as an argument, and a
// convolution that already has kernel dimension numbers, are left alone.
// dialects/hlo/conv_kernel_layout_test.go evaluates this file before and
// after the pass.
// RUN: tessera-opt %s --conv-kernel-layout | FileCheck %s
// RUN: tessera-opt %s --conv-kernel-layout --conv-kernel-layout | FileCheck %s

// CHECK-LABEL: func.func @shared
// CHECK-NEXT:    %[[W:.*]] = hlo.constant {value = dense<{{\[\[\[\[}}1.0, 5.0, 9.0], [3.0, 7.0, 11.0]], {{\[\[}}2.0, 6.0, 10.0], [4.0, 8.0, 12.0]]]]> : tensor<1x2x2x3xf32>}
// CHECK-NEXT:    hlo.convolution %{{.*}}, %[[W]] {kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1], padding = {{\[\[}}0, 0], [1, 0]]} : (tensor<1x2x5x5xf32>, tensor<1x2x2x3xf32>) -> tensor<1x3x5x5xf32>
// CHECK-NEXT:    hlo.convolution %{{.*}}, %[[W]] {kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1], padding = {{\[\[}}0, 0], [0, 1]]}
// CHECK-NOT:     tensor<3x2x1x2xf32>
func.func @shared(%x: tensor<1x2x5x5xf32>) -> tensor<1x3x5x5xf32> {
  %w = hlo.constant {value = dense<[[[[1.0, 2.0]], [[3.0, 4.0]]], [[[5.0, 6.0]], [[7.0, 8.0]]], [[[9.0, 10.0]], [[11.0, 12.0]]]]> : tensor<3x2x1x2xf32>} : tensor<3x2x1x2xf32>
  %0 = hlo.convolution %x, %w {padding = [[0, 0], [1, 0]]} : (tensor<1x2x5x5xf32>, tensor<3x2x1x2xf32>) -> tensor<1x3x5x5xf32>
  %1 = hlo.convolution %x, %w {padding = [[0, 0], [0, 1]]} : (tensor<1x2x5x5xf32>, tensor<3x2x1x2xf32>) -> tensor<1x3x5x5xf32>
  %2 = hlo.add %0, %1 : tensor<1x3x5x5xf32>
  func.return %2 : tensor<1x3x5x5xf32>
}

// A 1-d convolution with groups: OIW becomes WIO.
// CHECK-LABEL: func.func @grouped1d
// CHECK-NEXT:    %[[W:.*]] = hlo.constant {value = dense<{{\[\[\[}}1.0, 3.0]], {{\[\[}}2.0, 4.0]]]> : tensor<2x1x2xf32>}
// CHECK-NEXT:    hlo.convolution %{{.*}}, %[[W]] {feature_group_count = 2, kernel_input_feature_dimension = 1, kernel_output_feature_dimension = 2, kernel_spatial_dimensions = [0]}
func.func @grouped1d(%x: tensor<1x2x4xf32>) -> tensor<1x2x3xf32> {
  %w = hlo.constant {value = dense<[[[1.0, 2.0]], [[3.0, 4.0]]]> : tensor<2x1x2xf32>} : tensor<2x1x2xf32>
  %0 = hlo.convolution %x, %w {feature_group_count = 2} : (tensor<1x2x4xf32>, tensor<2x1x2xf32>) -> tensor<1x2x3xf32>
  func.return %0 : tensor<1x2x3xf32>
}

// CHECK-LABEL: func.func @untouched
// CHECK-NEXT:    hlo.convolution %arg0, %arg1 : (tensor<1x2x5x5xf32>, tensor<3x2x1x2xf32>) -> tensor<1x3x5x4xf32>
// CHECK:         hlo.convolution %arg0, %{{.*}} {kernel_input_feature_dimension = 1, kernel_output_feature_dimension = 0, kernel_spatial_dimensions = [3, 2]} : (tensor<1x2x5x5xf32>, tensor<3x2x2x1xf32>) -> tensor<1x3x5x4xf32>
func.func @untouched(%x: tensor<1x2x5x5xf32>, %w: tensor<3x2x1x2xf32>) -> (tensor<1x3x5x4xf32>, tensor<1x3x5x4xf32>) {
  %0 = hlo.convolution %x, %w : (tensor<1x2x5x5xf32>, tensor<3x2x1x2xf32>) -> tensor<1x3x5x4xf32>
  %c = hlo.constant {value = dense<[[[[1.0], [2.0]], [[3.0], [4.0]]], [[[5.0], [6.0]], [[7.0], [8.0]]], [[[9.0], [10.0]], [[11.0], [12.0]]]]> : tensor<3x2x2x1xf32>} : tensor<3x2x2x1xf32>
  %1 = hlo.convolution %x, %c {kernel_output_feature_dimension = 0, kernel_input_feature_dimension = 1, kernel_spatial_dimensions = [3, 2]} : (tensor<1x2x5x5xf32>, tensor<3x2x2x1xf32>) -> tensor<1x3x5x4xf32>
  func.return %0, %1 : tensor<1x3x5x4xf32>, tensor<1x3x5x4xf32>
}
