// Unsigned integers, f16 and bf16 end to end. ui8 division and ONNX Mod
// become floordiv/floormod of unsigned tensor IR values (no sign fix:
// hlo.remainder alone) and LLVM's udiv/urem; comparisons icmp ult; ui32
// converts with uitofp and zext; float → ui16 saturates: clamped in float
// to [0, 65535], NaN → 0, then fptosi to i32 and trunc (LLVM 16 scalarizes
// llvm.fptoui.sat on vectors). f64 → f16/bf16 rounds once: round-to-odd to float (an
// fptrunc stepped back toward zero and or'ed with the inexact bit), then
// fptrunc to half, or bf16's nearest-even rounding on the float bits; bf16
// is stored as i16 (the float's upper half).
// RUN: tessera-opt %s --legalize-to-hlo | FileCheck %s --check-prefix=HLO
// RUN: tessera compile %s --emit tir | FileCheck %s --check-prefix=TIR
// RUN: tessera compile %s --emit llvm --mcpu x86-64-v4 | FileCheck %s --check-prefix=LLVM
// RUN: tessera compile %s --emit llvm | opt-16 -passes=verify -disable-output

// HLO: %[[B:[0-9]+]] = hlo.broadcast_in_dim %arg1 {broadcast_dimensions = [1]} : (tensor<8xui8>) -> tensor<4x8xui8>
// HLO-NEXT: %[[Q:[0-9]+]] = hlo.divide %arg0, %[[B]] : tensor<4x8xui8>
// HLO: %[[R:[0-9]+]] = hlo.remainder %arg0, %{{[0-9]+}} : tensor<4x8xui8>
// HLO-NOT: hlo.select
// HLO: hlo.compare %arg0, %{{[0-9]+}} {comparison_direction = "LT"} : (tensor<4x8xui8>, tensor<4x8xui8>) -> tensor<4x8xi1>
// HLO: hlo.convert %arg3 : (tensor<4x8xf64>) -> tensor<4x8xf16>
// HLO: func.return %[[Q]], %[[R]],

// TIR: tir.func @fused_0(%in0: buffer<8xui8>, %in1: buffer<4x8xui8>, out %out0: buffer<4x8xui8>)
// TIR: select(%in0[%v1] == 0 : ui8, 255 : ui8, floordiv(%in1[%v0, %v1], select(%in0[%v1] == 0 : ui8, 1 : ui8, %in0[%v1])))
// TIR: floormod(%in1[%v0, %v1], select(%in0[%v1] == 0 : ui8, 1 : ui8, %in0[%v1]))
// TIR: %out0[%v0, %v1] = %in1[%v0, %v1] < %in0[%v1]
// TIR: %out0[%v0, %v1] = cast<f32>(%in0[%v0, %v1])
// TIR: %out0[%v0, %v1] = cast<ui16>(%in0[%v0, %v1])
// TIR: %out0[%v0, %v1] = cast<bf16>(%in0[%v0, %v1])
// TIR: tir.func @main(%arg0: buffer<4x8xui8>, {{.*}} out %out6: buffer<4x8xf16>, out %out7: buffer<4x8xbf16>)

// LLVM-LABEL: define internal void @fused_0.kernel(
// LLVM: udiv <8 x i8>
// LLVM-LABEL: define internal void @fused_1.kernel(
// LLVM: urem <8 x i8>
// LLVM-LABEL: define internal void @fused_2.kernel(
// LLVM: icmp ult <8 x i8>
// LLVM-LABEL: define internal void @fused_3.kernel(
// LLVM: uitofp <8 x i32> %{{[0-9]+}} to <8 x float>
// LLVM-LABEL: define internal void @fused_4.kernel(
// LLVM: zext <8 x i32> %{{[0-9]+}} to <8 x i64>
// LLVM-LABEL: define internal void @fused_5.kernel(
// LLVM: %[[LO:[0-9]+]] = select <8 x i1> %{{[0-9]+}}, <8 x float> <float 0.0,
// LLVM: fcmp ogt <8 x float> %[[LO]], <float 65535.0,
// LLVM: fcmp uno <8 x float>
// LLVM: %[[C:[0-9]+]] = fptosi <8 x float> %{{[0-9]+}} to <8 x i32>
// LLVM-NEXT: trunc <8 x i32> %[[C]] to <8 x i16>
// LLVM-NOT: llvm.fptoui.sat
// LLVM-LABEL: define internal void @fused_6.kernel(
// LLVM: %[[F:[0-9]+]] = fptrunc <8 x double> %{{[0-9]+}} to <8 x float>
// LLVM: fcmp ogt <8 x double>
// LLVM: fcmp one <8 x double>
// LLVM: %[[ODD:[0-9]+]] = or <8 x i32>
// LLVM: %[[O:[0-9]+]] = bitcast <8 x i32> %[[ODD]] to <8 x float>
// LLVM-NEXT: fptrunc <8 x float> %[[O]] to <8 x half>
// LLVM-LABEL: define internal void @fused_7.kernel(
// LLVM: add <8 x i32> %{{[0-9]+}}, <i32 u0x7FFF,
// LLVM: and <8 x i32> %{{[0-9]+}}, <i32 -65536,
// LLVM: lshr <8 x i32> %{{[0-9]+}}, <i32 16,
// LLVM-NEXT: trunc <8 x i32> %{{[0-9]+}} to <8 x i16>
// LLVM: store <8 x i16>
// LLVM-NOT: __truncdfhf2
func.func @main(%a: tensor<4x8xui8>, %b: tensor<8xui8>, %c: tensor<4x8xui32>, %d: tensor<4x8xf64>, %e: tensor<4x8xf32>) -> (tensor<4x8xui8>, tensor<4x8xui8>, tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xi64>, tensor<4x8xui16>, tensor<4x8xf16>, tensor<4x8xbf16>) {
  %0 = graph.div %a, %b : (tensor<4x8xui8>, tensor<8xui8>) -> tensor<4x8xui8>
  %1 = graph.mod %a, %b : (tensor<4x8xui8>, tensor<8xui8>) -> tensor<4x8xui8>
  %2 = graph.less %a, %b : (tensor<4x8xui8>, tensor<8xui8>) -> tensor<4x8xi1>
  %3 = graph.cast %c : (tensor<4x8xui32>) -> tensor<4x8xf32>
  %4 = graph.cast %c : (tensor<4x8xui32>) -> tensor<4x8xi64>
  %5 = graph.cast %e : (tensor<4x8xf32>) -> tensor<4x8xui16>
  %6 = graph.cast %d : (tensor<4x8xf64>) -> tensor<4x8xf16>
  %7 = graph.cast %d : (tensor<4x8xf64>) -> tensor<4x8xbf16>
  func.return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<4x8xui8>, tensor<4x8xui8>, tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xi64>, tensor<4x8xui16>, tensor<4x8xf16>, tensor<4x8xbf16>
}
