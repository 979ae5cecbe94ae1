// The fold-qdq pass on a QDQ residual add quantized again through relu:
// the two ui8 operands are widened to i32 and weighted by their scales in
// units of max(0.02, 0.05) / 2^16 (26214 and 65536), their zero points
// leave as one constant (−(26214·128 + 65536·100) = −9908992), and one
// per-tensor graph.requantize by (0.05 / 2^16) / 0.06 ≈ 1789569773 ·
// 2^−(31+16) with the relu as its lower bound (the zero point, 10) gives
// the ui8 result. No float add is left.
// RUN: tessera-opt %s --fold-qdq | FileCheck %s

// CHECK-LABEL: func.func @main
// CHECK: %[[A:[0-9]+]] = graph.cast %{{[0-9]+}} : (tensor<2x8xui8>) -> tensor<2x8xi32>
// CHECK-NEXT: %[[KA:[0-9]+]] = graph.constant {value = dense<26214> : tensor<i32>} : tensor<i32>
// CHECK-NEXT: %[[TA:[0-9]+]] = graph.mul %[[A]], %[[KA]]
// CHECK-NEXT: %[[B:[0-9]+]] = graph.cast %{{[0-9]+}} : (tensor<2x8xui8>) -> tensor<2x8xi32>
// CHECK-NEXT: %[[KB:[0-9]+]] = graph.constant {value = dense<65536> : tensor<i32>} : tensor<i32>
// CHECK-NEXT: %[[TB:[0-9]+]] = graph.mul %[[B]], %[[KB]]
// CHECK-NEXT: %[[S:[0-9]+]] = graph.add %[[TA]], %[[TB]] : tensor<2x8xi32>
// CHECK-NEXT: %[[Z:[0-9]+]] = graph.constant {value = dense<-9908992> : tensor<i32>} : tensor<i32>
// CHECK-NEXT: %[[ACC:[0-9]+]] = graph.add %[[S]], %[[Z]]
// CHECK-NEXT: %[[M:[0-9]+]] = graph.constant {value = dense<1789569773> : tensor<i32>} : tensor<i32>
// CHECK-NEXT: %[[SH:[0-9]+]] = graph.constant {value = dense<16> : tensor<i32>} : tensor<i32>
// CHECK-NEXT: %[[ZY:[0-9]+]] = graph.constant {value = dense<10> : tensor<ui8>} : tensor<ui8>
// CHECK-NEXT: graph.requantize %[[ACC]], %[[M]], %[[SH]], %[[ZY]] {max = 255, min = 10} : (tensor<2x8xi32>, tensor<i32>, tensor<i32>, tensor<ui8>) -> tensor<2x8xui8>
// CHECK-NOT: graph.dequantize_linear
// CHECK-NOT: xf32>) -> tensor<2x8xf32>
func.func @main(%a: tensor<2x8xf32>, %b: tensor<2x8xf32>) -> tensor<2x8xui8> {
  %sa = graph.constant {value = dense<0.02> : tensor<f32>} : tensor<f32>
  %za = graph.constant {value = dense<128> : tensor<ui8>} : tensor<ui8>
  %aq = graph.quantize_linear %a, %sa, %za : (tensor<2x8xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x8xui8>
  %ad = graph.dequantize_linear %aq, %sa, %za : (tensor<2x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x8xf32>
  %sb = graph.constant {value = dense<0.05> : tensor<f32>} : tensor<f32>
  %zb = graph.constant {value = dense<100> : tensor<ui8>} : tensor<ui8>
  %bq = graph.quantize_linear %b, %sb, %zb : (tensor<2x8xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x8xui8>
  %bd = graph.dequantize_linear %bq, %sb, %zb : (tensor<2x8xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x8xf32>
  %c = graph.add %ad, %bd : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %r = graph.relu %c : tensor<2x8xf32>
  %sy = graph.constant {value = dense<0.06> : tensor<f32>} : tensor<f32>
  %zy = graph.constant {value = dense<10> : tensor<ui8>} : tensor<ui8>
  %y = graph.quantize_linear %r, %sy, %zy : (tensor<2x8xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x8xui8>
  func.return %y : tensor<2x8xui8>
}
