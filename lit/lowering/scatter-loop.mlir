// A ScatterND with add in tensor IR: the wrapped indices are a loop kernel
// of their own; the scatter is one kernel (an opaque fusion, scheduled by
// the lower-to-tir step) that copies the data into the result — the copy
// vectorized — then runs an opaque block whose serial loops over the
// updates read each index, skip it when out of range and add at it; the
// relu consumer is a kernel of its own, after the scatter. The printed
// module parses back unchanged, and tessera compile builds it.
// RUN: tessera-opt %s --legalize-to-hlo --fuse --lower-to-tir > %t.tir
// RUN: FileCheck %s < %t.tir
// RUN: tessera-opt %t.tir > %t2.tir
// RUN: diff %t.tir %t2.tir
// RUN: tessera compile %s --emit tir | FileCheck %s --check-prefix=SCHED

// CHECK: tir.func @fused_0(%in0: buffer<4x1xi64>, out %out0: buffer<4x1xi64>) attributes {tessera.kernel} {
// CHECK: tir.block "select"
// CHECK: tir.func @fused_1(%in0: buffer<6x5xf32>, %in1: buffer<4x1xi64>, %in2: buffer<4x5xf32>, out %out0: buffer<6x5xf32>) attributes {tessera.kernel, tessera.recurrence, tessera.schedule = "recurrence"} {
// CHECK: tir.for %i1 = 0 to 5 vectorized {
// CHECK-NEXT: tir.block "copy"
// CHECK-NEXT: %out0[%v0, %v1] = %in0[%v0, %v1]
// CHECK: tir.block "scatter"() reads(%out0[0:6, 0:5], %in1[0:4, 0], %in2[0:4, 0:5]) writes(%out0[0:6, 0:5]) {
// CHECK-NEXT: tir.for %r0 = 0 to 4 {
// CHECK-NEXT: tir.for %r1 = 0 to 5 {
// CHECK-NEXT: tir.let %s0 = cast<index>(%in1[%r0, 0]) {
// CHECK-NEXT: tir.if %s0 >= 0 && %s0 <= 5 {
// CHECK-NEXT: %out0[%s0, %r1] = %out0[%s0, %r1] + %in2[%r0, %r1]
// CHECK: tir.func @fused_2(
// CHECK: tir.block "maximum"
// CHECK: tir.call @fused_0(%arg1, %t0)
// CHECK-NEXT: tir.call @fused_1(%arg0, %t0, %arg2, %t1)
// CHECK-NEXT: tir.call @fused_2(%t1, %out0)

// SCHED: tir.func @fused_1({{.*}}) attributes {tessera.kernel, tessera.recurrence, tessera.schedule = "recurrence"} {
// SCHED: tir.block "scatter"() {{.*}} {
// SCHED-NEXT: tir.for %r0 = 0 to 4 {
// SCHED-NEXT: tir.for %r1 = 0 to 5 {
func.func @main(%x: tensor<6x5xf32>, %i: tensor<4x1xi64>, %u: tensor<4x5xf32>) -> tensor<6x5xf32> {
  %0 = graph.scatter_nd %x, %i, %u {reduction = "add"} : (tensor<6x5xf32>, tensor<4x1xi64>, tensor<4x5xf32>) -> tensor<6x5xf32>
  %1 = graph.relu %0 : tensor<6x5xf32>
  func.return %1 : tensor<6x5xf32>
}
