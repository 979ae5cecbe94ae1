// An LSTM in tensor IR: the input projection is a GEMM kernel of its own;
// R transposed is a loop kernel (R is an argument); the recurrence is one kernel (scheduled by the lower-to-tir step) with a serial
// loop over time holding the per-step GEMM block — its gate loop split by
// 16 around the reduction, init split off, both vectorized — the gate
// blocks and Y's step; the printed module parses back unchanged, and
// tessera compile builds it.
// RUN: tessera-opt %s --legalize-to-hlo --fuse --lower-to-tir > %t.tir
// RUN: FileCheck %s < %t.tir
// RUN: tessera-opt %t.tir > %t2.tir
// RUN: diff %t.tir %t2.tir
// RUN: tessera compile %s --emit tir | FileCheck %s --check-prefix=SCHED

// CHECK: tir.func @fused_0(
// CHECK: tir.block "dot_general"
// CHECK: tir.block "transpose"
// CHECK: tir.func @fused_2(%in0: buffer<6x1x80xf32>, %in1: buffer<20x80xf32>, out %out0: buffer<6x1x20xf32>, out %out1: buffer<1x20xf32>, out %out2: buffer<1x20xf32>) attributes {tessera.kernel, tessera.recurrence, tessera.schedule = "recurrence"} {
// CHECK: tir.allocate %h: buffer<1x20xf32, "local">
// CHECK: tir.allocate %c: buffer<1x20xf32, "local">
// CHECK: tir.allocate %gates: buffer<1x80xf32, "local">
// CHECK: tir.block "h_init"
// CHECK: tir.block "c_init"
// CHECK: tir.for %t = 0 to 6 {
// CHECK: tir.for %i1_0 = 0 to 5 {
// CHECK-NEXT: tir.for %i1_1 = 0 to 16 vectorized {
// CHECK-NEXT: tir.block "gates_init"
// CHECK: tir.for %r0 = 0 to 20 {
// CHECK-NEXT: tir.for %i1_1 = 0 to 16 vectorized {
// CHECK-NEXT: tir.block "gates"({{.*}}%k0 = reduce(0:20, %r0))
// CHECK-NEXT: %gates[%v0, %v1] = %gates[%v0, %v1] + %h[%v0, %k0] * %in1[%k0, %v1]
// CHECK: tir.block "cell"
// CHECK: tir.block "hidden"
// CHECK: tir.block "y"
// CHECK-NEXT: %out0[%t, %v0, %v1] = %h[%v0, %v1]
// CHECK: tir.block "y_h"
// CHECK: tir.block "y_c"

// SCHED: attributes {tessera.kernel, tessera.recurrence, tessera.schedule = "recurrence"}
// SCHED: tir.for %t = 0 to 6 {
func.func @main(%x: tensor<6x1x7xf32>, %w: tensor<1x80x7xf32>, %r: tensor<1x80x20xf32>) -> (tensor<6x1x1x20xf32>, tensor<1x1x20xf32>) {
  %0:3 = graph.lstm %x, %w, %r {hidden_size = 20} : (tensor<6x1x7xf32>, tensor<1x80x7xf32>, tensor<1x80x20xf32>) -> (tensor<6x1x1x20xf32>, tensor<1x1x20xf32>, tensor<1x1x20xf32>)
  func.return %0#0, %0#2 : tensor<6x1x1x20xf32>, tensor<1x1x20xf32>
}
