// graph.mod end to end. fmod = 0 on integers (Python's %, the divisor's
// sign): hlo.remainder (the dividend's sign) moved to the divisor's sign by
// a compare/select; the tensor IR computes the remainder from floormod with
// a zero divisor replaced by 1 (x mod 0 = x) and the CPU code from
// sdiv/srem. fmod = 1 on floats: hlo.remainder, the tensor IR intrinsic
// fmod, LLVM's frem (C fmod, exact).
// RUN: tessera-opt %s --legalize-to-hlo | FileCheck %s --check-prefix=HLO
// RUN: tessera compile %s --emit tir | FileCheck %s --check-prefix=TIR
// RUN: tessera compile %s --emit llvm | FileCheck %s --check-prefix=LLVM

// HLO: %[[B:[0-9]+]] = hlo.broadcast_in_dim %arg1 {broadcast_dimensions = [1]} : (tensor<8xi32>) -> tensor<4x8xi32>
// HLO-NEXT: %[[R:[0-9]+]] = hlo.remainder %arg0, %[[B]] : tensor<4x8xi32>
// HLO: %[[FIX:[0-9]+]] = hlo.and
// HLO-NEXT: %[[SUM:[0-9]+]] = hlo.add %[[R]], %[[B]] : tensor<4x8xi32>
// HLO-NEXT: %[[M:[0-9]+]] = hlo.select %[[FIX]], %[[SUM]], %[[R]]
// HLO-NEXT: %[[F:[0-9]+]] = hlo.remainder %arg2, %arg3 : tensor<4x8xf32>
// HLO-NEXT: func.return %[[M]], %[[F]]

// TIR: tir.for %i1 = 0 to 8 vectorized {
// TIR: floormod(%in1[%v0, %v1], select(%in0[%v1] == 0 : i32, 1 : i32, %in0[%v1]))
// TIR: tir.for %i1 = 0 to 8 vectorized {
// TIR: %out0[%v0, %v1] = fmod(%in0[%v0, %v1], %in1[%v0, %v1])

// LLVM-LABEL: define internal void @fused_0.kernel(
// LLVM: srem <8 x i32>
// LLVM-LABEL: define internal void @fused_1.kernel(
// LLVM: frem <8 x float>
func.func @main(%a: tensor<4x8xi32>, %b: tensor<8xi32>, %x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<4x8xi32>, tensor<4x8xf32>) {
  %0 = graph.mod %a, %b : (tensor<4x8xi32>, tensor<8xi32>) -> tensor<4x8xi32>
  %1 = graph.mod %x, %y {fmod = 1} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %0, %1 : tensor<4x8xi32>, tensor<4x8xf32>
}
