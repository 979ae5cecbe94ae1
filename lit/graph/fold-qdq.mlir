// The fold-qdq pass: a QDQ convolution whose result is quantized again
// (through relu) becomes an i32 convolution of the 8-bit operands minus
// their zero points, with the bias quantized to the accumulator's scale
// (0.1 / (0.02 · 0.01) = 500), and one graph.requantize whose per-channel
// multiplier and shift give 0.02 · sw / 0.05 and whose lower bound is the
// relu (the output zero point, 10); a convolution whose float result has
// another user keeps the float path. tessera compile --fold-qdq runs it
// first and compiles the integer kernels.
// RUN: tessera-opt %s --fold-qdq | FileCheck %s
// RUN: tessera compile %s --fold-qdq --emit tir | FileCheck %s --check-prefix=TIR

// CHECK: %[[X:[0-9]+]] = graph.quantize_linear %arg0
// CHECK: %[[XI:[0-9]+]] = graph.cast %[[X]] : (tensor<1x1x5x5xui8>) -> tensor<1x1x5x5xi32>
// CHECK-NEXT: %[[ZX:[0-9]+]] = graph.constant {value = dense<128> : tensor<i32>} : tensor<i32>
// CHECK-NEXT: %[[XS:[0-9]+]] = graph.sub %[[XI]], %[[ZX]] : (tensor<1x1x5x5xi32>, tensor<i32>) -> tensor<1x1x5x5xi32>
// CHECK-NEXT: %[[W:[0-9]+]] = graph.constant {value = dense<{{\[\[\[\[}}1, -2, 3]]], {{\[\[\[}}4, 5, -6]]], {{\[\[\[}}-7, 8, 9]]]]> : tensor<3x1x1x3xi32>} : tensor<3x1x1x3xi32>
// CHECK-NEXT: %[[B:[0-9]+]] = graph.constant {value = dense<[500, -500, 3000]> : tensor<3xi32>} : tensor<3xi32>
// CHECK-NEXT: %[[ACC:[0-9]+]] = graph.conv2d %[[XS]], %[[W]], %[[B]] {groups = 1, pads = [0, 1, 0, 1]} : (tensor<1x1x5x5xi32>, tensor<3x1x1x3xi32>, tensor<3xi32>) -> tensor<1x3x5x5xi32>
// CHECK-NEXT: %[[M:[0-9]+]] = graph.constant {value = dense<[1099511562, 1099511562, 1099511562]> : tensor<3xi32>} : tensor<3xi32>
// CHECK-NEXT: %[[S:[0-9]+]] = graph.constant {value = dense<[7, 6, 8]> : tensor<3xi32>} : tensor<3xi32>
// CHECK-NEXT: %[[ZY:[0-9]+]] = graph.constant {value = dense<10> : tensor<ui8>} : tensor<ui8>
// CHECK-NEXT: %[[Y:[0-9]+]] = graph.requantize %[[ACC]], %[[M]], %[[S]], %[[ZY]] {axis = 1, max = 255, min = 10} : (tensor<1x3x5x5xi32>, tensor<3xi32>, tensor<3xi32>, tensor<ui8>) -> tensor<1x3x5x5xui8>
// CHECK-NEXT: %[[F:[0-9]+]] = graph.conv2d %{{[0-9]+}}, %{{[0-9]+}} {pads = [0, 1, 0, 1]} : (tensor<1x1x5x5xf32>, tensor<3x1x1x3xf32>) -> tensor<1x3x5x5xf32>
// CHECK: func.return %[[Y]], %{{[0-9]+}}

// TIR: tir.func @{{.*}}(%in0: buffer<1x1x5x5xi32>, %in1: buffer<1x3x1x3xi32>, %in2: buffer<3xi32>
// TIR: tir.block "convolution"

func.func @main(%x: tensor<1x1x5x5xf32>) -> (tensor<1x3x5x5xui8>, tensor<1x3x5x5xf32>) {
  %sx = graph.constant {value = dense<0.02> : tensor<f32>} : tensor<f32>
  %zx = graph.constant {value = dense<128> : tensor<ui8>} : tensor<ui8>
  %xq = graph.quantize_linear %x, %sx, %zx : (tensor<1x1x5x5xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x1x5x5xui8>
  %xd = graph.dequantize_linear %xq, %sx, %zx : (tensor<1x1x5x5xui8>, tensor<f32>, tensor<ui8>) -> tensor<1x1x5x5xf32>
  %wq = graph.constant {value = dense<[[[[1, -2, 3]]], [[[4, 5, -6]]], [[[-7, 8, 9]]]]> : tensor<3x1x1x3xi8>} : tensor<3x1x1x3xi8>
  %sw = graph.constant {value = dense<[0.01, 0.02, 0.005]> : tensor<3xf32>} : tensor<3xf32>
  %zw = graph.constant {value = dense<0> : tensor<3xi8>} : tensor<3xi8>
  %wd = graph.dequantize_linear %wq, %sw, %zw {axis = 0} : (tensor<3x1x1x3xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<3x1x1x3xf32>
  %b = graph.constant {value = dense<[0.1, -0.2, 0.3]> : tensor<3xf32>} : tensor<3xf32>
  %sy = graph.constant {value = dense<0.05> : tensor<f32>} : tensor<f32>
  %zy = graph.constant {value = dense<10> : tensor<ui8>} : tensor<ui8>
  // folded: conv → relu → quantize
  %c = graph.conv2d %xd, %wd, %b {pads = [0, 1, 0, 1], groups = 1} : (tensor<1x1x5x5xf32>, tensor<3x1x1x3xf32>, tensor<3xf32>) -> tensor<1x3x5x5xf32>
  %r = graph.relu %c : tensor<1x3x5x5xf32>
  %y = graph.quantize_linear %r, %sy, %zy : (tensor<1x3x5x5xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x5x5xui8>
  // kept float: the contraction's result has a float user too
  %c2 = graph.conv2d %xd, %wd {pads = [0, 1, 0, 1]} : (tensor<1x1x5x5xf32>, tensor<3x1x1x3xf32>) -> tensor<1x3x5x5xf32>
  %y2 = graph.quantize_linear %c2, %sy, %zy : (tensor<1x3x5x5xf32>, tensor<f32>, tensor<ui8>) -> tensor<1x3x5x5xui8>
  %n = graph.neg %c2 : tensor<1x3x5x5xf32>
  func.return %y, %n : tensor<1x3x5x5xui8>, tensor<1x3x5x5xf32>
}
