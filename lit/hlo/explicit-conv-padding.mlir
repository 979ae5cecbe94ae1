// --explicit-conv-padding: a convolution with at least 8 output channels
// per group gets its spatial padding as an hlo.pad of its input (zeros of
// the input's element type) and reads it unpadded; depthwise
// convolutions and those with fewer outputs per group, a dilated input
// (lhs_dilation) or negative padding are left alone.
// dialects/hlo/explicit_padding_test.go evaluates this file before and
// after the pass.
// RUN: tessera-opt %s --explicit-conv-padding | FileCheck %s
// RUN: tessera-opt %s --explicit-conv-padding --explicit-conv-padding | FileCheck %s

// CHECK-LABEL: func.func @padded
// CHECK-NEXT:    %[[Z:.*]] = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
// CHECK-NEXT:    %[[P:.*]] = hlo.pad %arg0, %[[Z]] {edge_padding_high = [0, 0, 1, 1], edge_padding_low = [0, 0, 1, 1]} : (tensor<1x4x5x5xf32>, tensor<f32>) -> tensor<1x4x7x7xf32>
// CHECK-NEXT:    hlo.convolution %[[P]], %arg1 : (tensor<1x4x7x7xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x5x5xf32>
func.func @padded(%x: tensor<1x4x5x5xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x5x5xf32> {
  %0 = hlo.convolution %x, %w {padding = [[1, 1], [1, 1]]} : (tensor<1x4x5x5xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x5x5xf32>
  func.return %0 : tensor<1x8x5x5xf32>
}

// Asymmetric padding, strides and a dilated window.
// CHECK-LABEL: func.func @strided
// CHECK:         hlo.pad %arg0, %{{.*}} {edge_padding_high = [0, 0, 0, 3], edge_padding_low = [0, 0, 2, 1]} : (tensor<2x2x7x6xf32>, tensor<f32>) -> tensor<2x2x9x10xf32>
// CHECK-NEXT:    hlo.convolution %{{.*}}, %arg1 {rhs_dilation = [1, 2], window_strides = [2, 1]} : (tensor<2x2x9x10xf32>, tensor<9x2x3x2xf32>) -> tensor<2x9x4x8xf32>
func.func @strided(%x: tensor<2x2x7x6xf32>, %w: tensor<9x2x3x2xf32>) -> tensor<2x9x4x8xf32> {
  %0 = hlo.convolution %x, %w {padding = [[2, 0], [1, 3]], rhs_dilation = [1, 2], window_strides = [2, 1]} : (tensor<2x2x7x6xf32>, tensor<9x2x3x2xf32>) -> tensor<2x9x4x8xf32>
  func.return %0 : tensor<2x9x4x8xf32>
}

// Two groups of 8 output channels; the kernel in HWIO (conv-kernel-layout's).
// CHECK-LABEL: func.func @grouped_hwio
// CHECK:         hlo.pad
// CHECK-NEXT:    hlo.convolution %{{.*}}, %arg1 {feature_group_count = 2, kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1]} : (tensor<1x4x7x7xf32>
func.func @grouped_hwio(%x: tensor<1x4x5x5xf32>, %w: tensor<3x3x2x16xf32>) -> tensor<1x16x5x5xf32> {
  %0 = hlo.convolution %x, %w {feature_group_count = 2, kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3, kernel_spatial_dimensions = [0, 1], padding = [[1, 1], [1, 1]]} : (tensor<1x4x5x5xf32>, tensor<3x3x2x16xf32>) -> tensor<1x16x5x5xf32>
  func.return %0 : tensor<1x16x5x5xf32>
}

// 8-bit operands: the padding is a ui8 zero.
// CHECK-LABEL: func.func @int8
// CHECK-NEXT:    %[[Z:.*]] = hlo.constant {value = dense<0> : tensor<ui8>} : tensor<ui8>
// CHECK-NEXT:    hlo.pad %arg0, %[[Z]] {{.*}} -> tensor<1x4x7x7xui8>
// CHECK-NEXT:    hlo.convolution {{.*}} -> tensor<1x8x5x5xi32>
func.func @int8(%x: tensor<1x4x5x5xui8>, %w: tensor<8x4x3x3xi8>) -> tensor<1x8x5x5xi32> {
  %0 = hlo.convolution %x, %w {padding = [[1, 1], [1, 1]]} : (tensor<1x4x5x5xui8>, tensor<8x4x3x3xi8>) -> tensor<1x8x5x5xi32>
  func.return %0 : tensor<1x8x5x5xi32>
}

// A 1-d convolution.
// CHECK-LABEL: func.func @conv1d
// CHECK:         hlo.pad %arg0, %{{.*}} {edge_padding_high = [0, 0, 2], edge_padding_low = [0, 0, 1]} : (tensor<1x3x10xf32>, tensor<f32>) -> tensor<1x3x13xf32>
func.func @conv1d(%x: tensor<1x3x10xf32>, %w: tensor<8x3x3xf32>) -> tensor<1x8x11xf32> {
  %0 = hlo.convolution %x, %w {padding = [[1, 2]]} : (tensor<1x3x10xf32>, tensor<8x3x3xf32>) -> tensor<1x8x11xf32>
  func.return %0 : tensor<1x8x11xf32>
}

// Left alone: depthwise, 4 outputs, a dilated input, negative padding,
// no padding.
// CHECK-LABEL: func.func @untouched
// CHECK-NOT:     hlo.pad
// CHECK:         func.return
func.func @untouched(%x: tensor<1x4x5x5xf32>, %dw: tensor<4x1x3x3xf32>, %w4: tensor<4x4x3x3xf32>, %w8: tensor<8x4x3x3xf32>) -> (tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>, tensor<1x8x9x9xf32>, tensor<1x8x2x5xf32>, tensor<1x8x3x3xf32>) {
  %0 = hlo.convolution %x, %dw {feature_group_count = 4, padding = [[1, 1], [1, 1]]} : (tensor<1x4x5x5xf32>, tensor<4x1x3x3xf32>) -> tensor<1x4x5x5xf32>
  %1 = hlo.convolution %x, %w4 {padding = [[1, 1], [1, 1]]} : (tensor<1x4x5x5xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x5x5xf32>
  %2 = hlo.convolution %x, %w8 {lhs_dilation = [2, 2], padding = [[1, 1], [1, 1]]} : (tensor<1x4x5x5xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x9x9xf32>
  %3 = hlo.convolution %x, %w8 {padding = [[-1, 0], [1, 1]]} : (tensor<1x4x5x5xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x2x5xf32>
  %4 = hlo.convolution %x, %w8 : (tensor<1x4x5x5xf32>, tensor<8x4x3x3xf32>) -> tensor<1x8x3x3xf32>
  func.return %0, %1, %2, %3, %4 : tensor<1x4x5x5xf32>, tensor<1x4x5x5xf32>, tensor<1x8x9x9xf32>, tensor<1x8x2x5xf32>, tensor<1x8x3x3xf32>
}
