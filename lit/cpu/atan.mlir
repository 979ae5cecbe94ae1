// graph.atan end to end (the worked example of README "Adding an op or a
// pass"): legalized to hlo.atan, lowered to the tensor IR intrinsic atan in
// a default-rule vectorized loop, and compiled to per-lane calls of libm's
// atanf.
// RUN: tessera-opt %s --legalize-to-hlo | FileCheck %s --check-prefix=HLO
// RUN: tessera compile %s --emit tir | FileCheck %s --check-prefix=TIR
// RUN: tessera compile %s --emit llvm | FileCheck %s --check-prefix=LLVM

// HLO: %0 = hlo.atan %arg0 : tensor<5x7xf32>

// TIR: tir.for %i1 = 0 to 7 vectorized {
// TIR: %out0[%v0, %v1] = atan(%in0[%v0, %v1])

// LLVM: call float @atanf(float
// LLVM: declare float @atanf(float
func.func @main(%x: tensor<5x7xf32>) -> tensor<5x7xf32> {
  %0 = graph.atan %x : tensor<5x7xf32>
  func.return %0 : tensor<5x7xf32>
}
