// The int8 rule and VNNI code: a matmul of ui8 activations by an i8
// constant weight into i32 gets the int8 nest (16 output channels
// vectorized around a 4-deep reduction loop, 4 rows × 2 vectors of
// accumulators); rewrite-layout stores the weight as [K/4][2][16][4], so
// each step reads 64 contiguous bytes; for a processor with AVX-512 VNNI
// every step is one vpdpbusd (4 rows × 2 vectors per reduction step); with
// AVX-512BW but no VNNI (skylake-avx512) each is the exact emulation, two
// vpmaddubsw on the 7 upper bits and the lowest bit of the activations and
// two vpmaddwd. With 256-bit vectors the register tile is 2 rows × 2
// vectors (each accumulator two ymm registers) and every step runs on the
// two 256-bit halves: AVX-VNNI (alderlake) one VEX vpdpbusd per half,
// AVX2 (haswell) the emulation per half; without AVX2 (x86-64) the same
// nest is plain vector code.
// RUN: tessera compile %s --mcpu sapphirerapids --emit tir | FileCheck %s --check-prefix=TIR
// RUN: tessera compile %s --mcpu sapphirerapids --emit llvm | FileCheck %s --check-prefix=VNNI
// RUN: tessera compile %s --mcpu skylake-avx512 --emit llvm | FileCheck %s --check-prefix=BW
// RUN: tessera compile %s --mcpu alderlake --emit llvm | FileCheck %s --check-prefix=AVXVNNI
// RUN: tessera compile %s --mcpu haswell --emit llvm | FileCheck %s --check-prefix=AVX2
// RUN: tessera compile %s --mcpu x86-64 --emit llvm | FileCheck %s --check-prefix=PLAIN

// TIR: %in1: buffer<2x2x16x4xi8>
// TIR: tir.for %r0_0 = 0 to 2 {
// TIR-NEXT: tir.for %i0_1 = 0 to 4 unrolled {
// TIR-NEXT: tir.for %i1_1 = 0 to 2 unrolled {
// TIR-NEXT: tir.for %i1_2 = 0 to 16 vectorized {
// TIR-NEXT: tir.for %r0_1 = 0 to 4 {
// TIR: cast<i32>(%in0[%v0, %k0_0 * 4 + %k0_1]) * cast<i32>(%in1[%k0_0, %v1_0, %v1_1, %k0_1])

// VNNI-COUNT-8: call <16 x i32> @llvm.x86.avx512.vpdpbusd.512(
// BW-NOT: vpdpbusd
// BW-COUNT-16: call <32 x i16> @llvm.x86.avx512.pmaddubs.w.512(
// AVXVNNI-NOT: .512(
// AVXVNNI-COUNT-8: call <8 x i32> @llvm.x86.avx512.vpdpbusd.256(
// AVX2-NOT: vpdpbusd
// AVX2-NOT: .512(
// AVX2-COUNT-16: call <16 x i16> @llvm.x86.avx2.pmadd.ub.sw(
// PLAIN-NOT: vpdpbusd
// PLAIN-NOT: pmaddubs

func.func @main(%x: tensor<4x8xui8>) -> tensor<4x32xi32> {
  %w = graph.constant {value = dense<[[1, -2, 3, -4, 5, -6, 7, -8, 9, -10, 11, -12, 13, -14, 15, -16, 17, -18, 19, -20, 21, -22, 23, -24, 25, -26, 27, -28, 29, -30, 31, -32], [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33], [-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1], [127, -128, 127, -128, 127, -128, 127, -128, 127, -128, 127, -128, 127, -128, 127, -128, 127, -128, 127, -128, 127, -128, 127, -128, 127, -128, 127, -128, 127, -128, 127, -128], [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1], [5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5], [-7, 7, -7, 7, -7, 7, -7, 7, -7, 7, -7, 7, -7, 7, -7, 7, -7, 7, -7, 7, -7, 7, -7, 7, -7, 7, -7, 7, -7, 7, -7, 7], [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4, 6, 2, 6, 4, 3, 3, 8, 3, 2, 7, 9, 5]]> : tensor<8x32xi8>} : tensor<8x32xi8>
  %0 = graph.matmul %x, %w : (tensor<4x8xui8>, tensor<8x32xi8>) -> tensor<4x32xi32>
  func.return %0 : tensor<4x32xi32>
}
