// graph.atan end to end (the worked example of README "Adding an op or a
// pass"): legalized to hlo.atan, lowered to the tensor IR intrinsic atan in
// a default-rule vectorized loop, and compiled inline and vectorized
// (Tessera's own atan in f64, targets/llvm/mathfns_log.go): no libm call.
// RUN: tessera-opt %s --legalize-to-hlo | FileCheck %s --check-prefix=HLO
// RUN: tessera compile %s --emit tir | FileCheck %s --check-prefix=TIR
// RUN: tessera compile %s --emit llvm | FileCheck %s --check-prefix=LLVM

// HLO: %0 = hlo.atan %arg0 : tensor<5x7xf32>

// TIR: tir.for %i1 = 0 to 7 vectorized {
// TIR: %out0[%v0, %v1] = atan(%in0[%v0, %v1])

// LLVM: fpext <7 x float> %{{[0-9]+}} to <7 x double>
// LLVM: fdiv <7 x double>
// LLVM: fptrunc <7 x double> %{{[0-9]+}} to <7 x float>
// LLVM-NOT: @atanf
func.func @main(%x: tensor<5x7xf32>) -> tensor<5x7xf32> {
  %0 = graph.atan %x : tensor<5x7xf32>
  func.return %0 : tensor<5x7xf32>
}
