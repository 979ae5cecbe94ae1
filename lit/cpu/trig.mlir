// graph.sin, graph.cos, graph.tan end to end: legalized to hlo.sine,
// hlo.cosine and hlo.tan, fused into one vectorized loop of the tensor IR
// intrinsics, and compiled inline in f64 (Cody–Waite reduction by a 3-part
// π/2, Cephes polynomials; targets/llvm/mathfns_trig.go) with a branch to
// libm's double sin/cos/tan taken only for lanes beyond 2^27. graph.asinh
// (like asin, acos, sinh, cosh, acosh, atanh) is Tessera's own vectorized
// code in f64 (targets/llvm/mathfns_log.go), no libm call.
// RUN: tessera-opt %s --legalize-to-hlo | FileCheck %s --check-prefix=HLO
// RUN: tessera compile %s --emit tir | FileCheck %s --check-prefix=TIR
// RUN: tessera compile %s --emit llvm | FileCheck %s --check-prefix=LLVM

// HLO: %0 = hlo.sine %arg0 : tensor<5x7xf32>
// HLO-NEXT: %1 = hlo.cosine %0 : tensor<5x7xf32>
// HLO-NEXT: %2 = hlo.tan %1 : tensor<5x7xf32>
// HLO-NEXT: %3 = hlo.asinh %arg0 : tensor<5x7xf32>

// TIR: tir.for %i1 = 0 to 7 vectorized {
// TIR: %out0[%v0, %v1] = tan(cos(sin(%in0[%v0, %v1])))
// TIR: tir.for %i1 = 0 to 7 vectorized {
// TIR: %out0[%v0, %v1] = asinh(%in0[%v0, %v1])

// LLVM-LABEL: define internal void @fused_0.kernel(
// LLVM: fpext <7 x float> %{{[0-9]+}} to <7 x double>
// LLVM: call <7 x double> @llvm.rint.v7f64
// LLVM: fcmp ogt <7 x double> %{{[0-9]+}}, <double 1.34217728e+08
// LLVM: br i1 %{{[0-9]+}}, label %trig.large.{{[0-9]+}}, label %trig.join.{{[0-9]+}}
// LLVM: call double @sin(double
// LLVM: phi <7 x double>
// LLVM: call double @cos(double
// LLVM: call double @tan(double
// LLVM: fptrunc <7 x double> %{{[0-9]+}} to <7 x float>
// LLVM-LABEL: define internal void @fused_1.kernel(
// LLVM: fpext <7 x float> %{{[0-9]+}} to <7 x double>
// LLVM-NOT: @asinhf
func.func @main(%x: tensor<5x7xf32>) -> (tensor<5x7xf32>, tensor<5x7xf32>) {
  %0 = graph.sin %x : tensor<5x7xf32>
  %1 = graph.cos %0 : tensor<5x7xf32>
  %2 = graph.tan %1 : tensor<5x7xf32>
  %3 = graph.asinh %x : tensor<5x7xf32>
  func.return %2, %3 : tensor<5x7xf32>, tensor<5x7xf32>
}
