// graph.requantize (integer-only requantization, gemmlowp/TFLite):
// printing, legalization to i64 hlo arithmetic with the multiplier split
// into 16-bit halves — constant multipliers and shifts give the halves,
// the shift + 15 and the rounding term 2^(shift+14) as i64 constants per
// channel — one fused tensor IR kernel of shr, and LLVM arithmetic
// shifts.
// RUN: tessera-opt %s | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo | FileCheck %s --check-prefix=HLO
// RUN: tessera compile %s --emit tir | FileCheck %s --check-prefix=TIR
// RUN: tessera compile %s --emit llvm | FileCheck %s --check-prefix=LLVM

// CHECK: %3 = graph.requantize %arg0, %0, %1, %2 {axis = 1, min = 10} : (tensor<2x3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<ui8>) -> tensor<2x3xui8>

// HLO: %[[ACC:[0-9]+]] = hlo.convert %arg0 : (tensor<2x3xi32>) -> tensor<2x3xi64>
// HLO-NEXT: hlo.constant {value = dense<[16384, 22888, 32767]> : tensor<3xi64>}
// HLO-NEXT: %[[MH:[0-9]+]] = hlo.broadcast_in_dim
// HLO-NEXT: hlo.constant {value = dense<[0, 12032, 65535]> : tensor<3xi64>}
// HLO: hlo.constant {value = dense<[22, 1, 46]> : tensor<3xi64>}
// HLO: hlo.constant {value = dense<[2097152, 1, 35184372088832]> : tensor<3xi64>}
// HLO: hlo.multiply %[[ACC]], %[[MH]] : tensor<2x3xi64>
// HLO: %[[Y:[0-9]+]] = hlo.clamp %{{[0-9]+}}, %{{[0-9]+}}, %{{[0-9]+}} : (tensor<i64>, tensor<2x3xi64>, tensor<i64>) -> tensor<2x3xi64>
// HLO-NEXT: hlo.convert %[[Y]] : (tensor<2x3xi64>) -> tensor<2x3xui8>

// TIR: tir.block
// TIR-NEXT: %out0[%v0, %v1] = cast<ui8>(min(max(shr(

// LLVM: ashr <3 x i64>
// LLVM: mul <3 x i64>

func.func @main(%acc: tensor<2x3xi32>) -> tensor<2x3xui8> {
  %m = graph.constant {value = dense<[1073741824, 1500000000, 2147483647]> : tensor<3xi32>} : tensor<3xi32>
  %s = graph.constant {value = dense<[7, -14, 31]> : tensor<3xi32>} : tensor<3xi32>
  %z = graph.constant {value = dense<10> : tensor<ui8>} : tensor<ui8>
  %0 = graph.requantize %acc, %m, %s, %z {axis = 1, min = 10} : (tensor<2x3xi32>, tensor<3xi32>, tensor<3xi32>, tensor<ui8>) -> tensor<2x3xui8>
  func.return %0 : tensor<2x3xui8>
}
