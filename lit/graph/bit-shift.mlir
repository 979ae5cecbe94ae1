// graph.bit_shift (ONNX BitShift): printing, legalization to
// hlo.shift_left / hlo.shift_right_logical of the broadcast operands,
// tensor IR shl/shr, and LLVM shifts whose amount is clamped and whose
// result is 0 for amounts of the bit width or more (icmp uge, select),
// never LLVM's poison.
// RUN: tessera-opt %s | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo | FileCheck %s --check-prefix=HLO
// RUN: tessera compile %s --emit tir | FileCheck %s --check-prefix=TIR
// RUN: tessera compile %s --emit llvm --mcpu x86-64-v4 | FileCheck %s --check-prefix=LLVM

// CHECK: %0 = graph.bit_shift %arg0, %arg1 {direction = "LEFT"} : (tensor<2x3xui8>, tensor<3xui8>) -> tensor<2x3xui8>
// CHECK: %1 = graph.bit_shift %arg2, %arg3 {direction = "RIGHT"} : tensor<5xui64>

// HLO: %[[B:[0-9]+]] = hlo.broadcast_in_dim %arg1 {broadcast_dimensions = [1]} : (tensor<3xui8>) -> tensor<2x3xui8>
// HLO-NEXT: %[[L:[0-9]+]] = hlo.shift_left %arg0, %[[B]] : tensor<2x3xui8>
// HLO-NEXT: %[[R:[0-9]+]] = hlo.shift_right_logical %arg2, %arg3 : tensor<5xui64>
// HLO-NEXT: func.return %[[L]], %[[R]]

// TIR: tir.block "shift_left"
// TIR-NEXT: %out0[%v0, %v1] = shl(%in1[%v0, %v1], %in0[%v1])
// TIR: tir.block "shift_right_logical"
// TIR-NEXT: %out0[%v0] = shr(%in0[%v0], %in1[%v0])

// LLVM-LABEL: define internal void @fused_0.kernel(
// LLVM: %[[BIG:[0-9]+]] = icmp uge <3 x i8> %{{[0-9]+}}, <i8 8,
// LLVM: shl <3 x i8>
// LLVM: select <3 x i1> %[[BIG]], <3 x i8> <i8 0,
// LLVM-LABEL: define internal void @fused_1.kernel(
// LLVM: icmp uge <5 x i64> %{{[0-9]+}}, <i64 64,
// LLVM: lshr <5 x i64>
func.func @main(%x: tensor<2x3xui8>, %y: tensor<3xui8>, %a: tensor<5xui64>, %b: tensor<5xui64>) -> (tensor<2x3xui8>, tensor<5xui64>) {
  %0 = graph.bit_shift %x, %y {direction = "LEFT"} : (tensor<2x3xui8>, tensor<3xui8>) -> tensor<2x3xui8>
  %1 = "graph.bit_shift"(%a, %b) {direction = "RIGHT"} : (tensor<5xui64>, tensor<5xui64>) -> tensor<5xui64>
  func.return %0, %1 : tensor<2x3xui8>, tensor<5xui64>
}
