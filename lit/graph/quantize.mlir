// graph.quantize_linear's saturation bounds min and max (default: the
// zero point type's range; max = 127 on ui8 is PyTorch's reduce_range,
// 7-bit activations): printing and reparsing, legalization to a clamp
// to [min, max] after the NaN select (so that NaN's zero point is
// clamped too), and fold-qdq, whose graph.requantize takes the output
// quantize's bounds (narrowed by a relu to the zero point).
// RUN: tessera-opt %s | FileCheck %s
// RUN: tessera-opt %s | tessera-opt | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo | FileCheck %s --check-prefix=HLO
// RUN: tessera-opt %s --fold-qdq | FileCheck %s --check-prefix=FOLD

// CHECK-LABEL: func.func @bounds
// CHECK: %[[Q:[0-9]+]] = graph.quantize_linear %arg0, %0, %1 {max = 127} : (tensor<2x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x3xui8>
// CHECK: graph.quantize_linear %arg0, %3, %4 {axis = 1, max = 63, min = -64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xi8>) -> tensor<2x3xi8>
// CHECK: graph.quantize_linear %arg0, %0, %1 {max = 255, min = 0} : (tensor<2x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x3xui8>
// CHECK: graph.dequantize_linear %[[Q]], %0, %1 : (tensor<2x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x3xf32>

// HLO-LABEL: func.func @bounds
// HLO: %[[SEL:[0-9]+]] = hlo.select
// HLO-NEXT: %[[LO:[0-9]+]] = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
// HLO-NEXT: %[[HI:[0-9]+]] = hlo.constant {value = dense<127.0> : tensor<f32>} : tensor<f32>
// HLO-NEXT: %[[C:[0-9]+]] = hlo.clamp %[[LO]], %[[SEL]], %[[HI]] : (tensor<f32>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// HLO-NEXT: hlo.convert %[[C]] : (tensor<2x3xf32>) -> tensor<2x3xui8>
// HLO: %[[SEL2:[0-9]+]] = hlo.select
// HLO-NEXT: %[[LO2:[0-9]+]] = hlo.constant {value = dense<-64.0> : tensor<f32>} : tensor<f32>
// HLO-NEXT: %[[HI2:[0-9]+]] = hlo.constant {value = dense<63.0> : tensor<f32>} : tensor<f32>
// HLO-NEXT: hlo.clamp %[[LO2]], %[[SEL2]], %[[HI2]]
// HLO: %[[SEL3:[0-9]+]] = hlo.select
// HLO-NEXT: hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
// HLO-NEXT: hlo.constant {value = dense<255.0> : tensor<f32>} : tensor<f32>

// FOLD-LABEL: func.func @fold
// FOLD: graph.quantize_linear %arg0, %{{[0-9]+}}, %{{[0-9]+}} {max = 127}
// FOLD: %[[ACC:[0-9]+]] = graph.matmul
// FOLD: graph.requantize %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} {axis = 1, max = 127, min = 64} : (tensor<2x3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<ui8>) -> tensor<2x3xui8>
// FOLD-NOT: graph.quantize_linear

func.func @bounds(%x: tensor<2x3xf32>) -> (tensor<2x3xui8>, tensor<2x3xi8>, tensor<2x3xui8>, tensor<2x3xf32>) {
  %s = graph.constant {value = dense<0.05> : tensor<f32>} : tensor<f32>
  %z = graph.constant {value = dense<64> : tensor<ui8>} : tensor<ui8>
  %q = graph.quantize_linear %x, %s, %z {max = 127} : (tensor<2x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x3xui8>
  %sa = graph.constant {value = dense<[0.1, 0.2, 0.3]> : tensor<3xf32>} : tensor<3xf32>
  %za = graph.constant {value = dense<[-1, 0, 1]> : tensor<3xi8>} : tensor<3xi8>
  %qa = graph.quantize_linear %x, %sa, %za {axis = 1, min = -64, max = 63} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xi8>) -> tensor<2x3xi8>
  // the type's range written out (the same as no bounds)
  %qd = graph.quantize_linear %x, %s, %z {min = 0, max = 255} : (tensor<2x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x3xui8>
  %d = graph.dequantize_linear %q, %s, %z : (tensor<2x3xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x3xf32>
  func.return %q, %qa, %qd, %d : tensor<2x3xui8>, tensor<2x3xi8>, tensor<2x3xui8>, tensor<2x3xf32>
}

func.func @fold(%x: tensor<2x4xf32>) -> tensor<2x3xui8> {
  %sx = graph.constant {value = dense<0.02> : tensor<f32>} : tensor<f32>
  %zx = graph.constant {value = dense<60> : tensor<ui8>} : tensor<ui8>
  %xq = graph.quantize_linear %x, %sx, %zx {max = 127} : (tensor<2x4xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x4xui8>
  %xd = graph.dequantize_linear %xq, %sx, %zx : (tensor<2x4xui8>, tensor<f32>, tensor<ui8>) -> tensor<2x4xf32>
  %wq = graph.constant {value = dense<[[1, -2, 3], [4, 5, -6], [-7, 8, 9], [10, -11, 12]]> : tensor<4x3xi8>} : tensor<4x3xi8>
  %sw = graph.constant {value = dense<[0.01, 0.02, 0.005]> : tensor<3xf32>} : tensor<3xf32>
  %zw = graph.constant {value = dense<0> : tensor<3xi8>} : tensor<3xi8>
  %wd = graph.dequantize_linear %wq, %sw, %zw {axis = 1} : (tensor<4x3xi8>, tensor<3xf32>, tensor<3xi8>) -> tensor<4x3xf32>
  %c = graph.matmul %xd, %wd : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %r = graph.relu %c : tensor<2x3xf32>
  %sy = graph.constant {value = dense<0.05> : tensor<f32>} : tensor<f32>
  %zy = graph.constant {value = dense<64> : tensor<ui8>} : tensor<ui8>
  %y = graph.quantize_linear %r, %sy, %zy {max = 127} : (tensor<2x3xf32>, tensor<f32>, tensor<ui8>) -> tensor<2x3xui8>
  func.return %y : tensor<2x3xui8>
}
