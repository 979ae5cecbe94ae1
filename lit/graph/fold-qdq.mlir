// The fold-qdq pass: a QDQ convolution whose result is quantized again
// (through relu) becomes an integer convolution and one graph.requantize.
// x is ui8 and the weight symmetric i8, so the convolution multiplies the
// 8-bit values themselves into i32: x's zero point (128) pads x first
// (the convolution's own padding would read 0), and 128 times each
// channel's weight sum leaves the bias, quantized to the accumulator's
// scale (0.1 / (0.02 · 0.01) = 500 − 128·2 = 244); the per-channel
// multiplier and shift give 0.02 · sw / 0.05 and the lower bound is the
// relu (the output zero point, 10). A convolution whose float result has
// another user (neg) keeps float where that user needs it: the same 8-bit
// convolution (without bias: 0 − 128·sum), cast to f32 and scaled by
// sx·sw per channel. tessera compile --fold-qdq runs it first and compiles
// the integer kernels.
// RUN: tessera-opt %s --fold-qdq | FileCheck %s
// RUN: tessera compile %s --fold-qdq --emit tir | FileCheck %s --check-prefix=TIR

// CHECK: %[[X:[0-9]+]] = graph.quantize_linear %arg0
// CHECK: %[[XP:[0-9]+]] = graph.pad %[[X]] {pads = [0, 0, 0, 1, 0, 0, 0, 1], value = 128.0 : f32} : (tensor<1x1x5x5xui8>) -> tensor<1x1x5x7xui8>
// CHECK-NEXT: %[[W:[0-9]+]] = graph.constant {value = dense<{{\[\[\[\[}}1, -2, 3]]], {{\[\[\[}}4, 5, -6]]], {{\[\[\[}}-7, 8, 9]]]]> : tensor<3x1x1x3xi8>} : tensor<3x1x1x3xi8>
// CHECK-NEXT: %[[B:[0-9]+]] = graph.constant {value = dense<[244, -884, 1720]> : tensor<3xi32>} : tensor<3xi32>
// CHECK-NEXT: %[[ACC:[0-9]+]] = graph.conv2d %[[XP]], %[[W]], %[[B]] {groups = 1, pads = [0, 0, 0, 0]} : (tensor<1x1x5x7xui8>, tensor<3x1x1x3xi8>, tensor<3xi32>) -> tensor<1x3x5x5xi32>
// CHECK-NEXT: %[[M:[0-9]+]] = graph.constant {value = dense<[1099511562, 1099511562, 1099511562]> : tensor<3xi32>} : tensor<3xi32>
// CHECK-NEXT: %[[S:[0-9]+]] = graph.constant {value = dense<[7, 6, 8]> : tensor<3xi32>} : tensor<3xi32>
// CHECK-NEXT: %[[ZY:[0-9]+]] = graph.constant {value = dense<10> : tensor<ui8>} : tensor<ui8>
// CHECK-NEXT: %[[Y:[0-9]+]] = graph.requantize %[[ACC]], %[[M]], %[[S]], %[[ZY]] {axis = 1, max = 255, min = 10} : (tensor<1x3x5x5xi32>, tensor<3xi32>, tensor<3xi32>, tensor<ui8>) -> tensor<1x3x5x5xui8>
// CHECK-NEXT: %[[XP2:[0-9]+]] = graph.pad %[[X]]
// CHECK: %[[ACC2:[0-9]+]] = graph.conv2d %[[XP2]], %{{[0-9]+}}, %{{[0-9]+}} {pads = [0, 0, 0, 0]} : (tensor<1x1x5x7xui8>, tensor<3x1x1x3xi8>, tensor<3xi32>) -> tensor<1x3x5x5xi32>
// CHECK-NEXT: %[[FC:[0-9]+]] = graph.cast %[[ACC2]] : (tensor<1x3x5x5xi32>) -> tensor<1x3x5x5xf32>
// CHECK-NEXT: %[[SC:[0-9]+]] = graph.constant {value = dense<{{\[\[\[}}0.0002]], {{\[\[}}0.0004]], {{\[\[}}0.0001]]]> : tensor<3x1x1xf32>} : tensor<3x1x1xf32>
// CHECK-NEXT: %[[F:[0-9]+]] = graph.mul %[[FC]], %[[SC]]
// CHECK: %[[N:[0-9]+]] = graph.neg %[[F]]
// CHECK: func.return %[[Y]], %[[N]]

// TIR: tir.block "convolution"
// TIR: cast<i32>(%in{{[0-9]+}}[{{.*}}]) * cast<i32>(%in{{[0-9]+}}[{{.*}}])

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
