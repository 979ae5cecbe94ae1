// Compile once (issue 19): lower-to-tir gives every function of a model
// with a symbolic batch the scalar parameter %batch, first; buffers are
// shaped by it, the host passes it to each kernel, and its arena's size
// is an expression of it. The default rules schedule a batch kernel for a
// chunk of rows (bind-dims) and for one row and run chunks, then the
// remaining rows. The printed tensor IR parses back.
// RUN: tessera-opt %s --legalize-to-hlo --fuse --lower-to-tir | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo --fuse --lower-to-tir | tessera-opt | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo --fuse --lower-to-tir --inline-elementwise --default-schedule='bind-dims=batch:4' | FileCheck %s --check-prefix=LIFT
// RUN: tessera-opt %s --legalize-to-hlo --fuse --lower-to-tir --inline-elementwise --default-schedule='bind-dims=batch:1' | FileCheck %s --check-prefix=ROWS

// CHECK-LABEL: tir.func @fused_0(%batch: index, %in0: buffer<(%batch)x4xf32>, %in1: buffer<3x4xf32>, out %out0: buffer<(%batch)x3xf32>) attributes {tessera.kernel}
// CHECK: tir.for %i0 = 0 to %batch {
// CHECK: tir.block "dot_general"(%v0 = spatial(0:%batch, %i0)
// CHECK-LABEL: tir.func @fused_1(%batch: index, %in0: buffer<(%batch)x3xf32>, %in1: buffer<2x3xf32>, out %out0: buffer<(%batch)x2xf32>) attributes {tessera.kernel}
// CHECK-LABEL: tir.func @mlp(%batch: index, %arg0: buffer<(%batch)x4xf32>, out %out0: buffer<(%batch)x2xf32>) attributes {tessera.host}
// CHECK: tir.arena (64 * %batch) (%t0: buffer<(%batch)x3xf32> at 0) {
// CHECK-NEXT: tir.call @fused_0(%batch, %arg0, %w0, %t0)
// CHECK-NEXT: tir.call @fused_1(%batch, %t0, %w1, %out0)

// LIFT-LABEL: tir.func @fused_0(%batch: index,
// LIFT: tir.for %chunk = 0 to floordiv(%batch, 4) {
// LIFT: tir.block "dot_general"(%v0 = spatial(0:4,
// LIFT-SAME: %in0[%chunk * 4:%chunk * 4 + 4, 0:4]
// LIFT: tir.for %row = floordiv(%batch, 4) * 4 to floordiv(%batch, 4) * 4 + floormod(%batch, 4) {
// LIFT: tir.block "dot_general_row"(%v0 = spatial(0:1,
// LIFT-SAME: %in0[%row, 0:4]

// ROWS-LABEL: tir.func @fused_0(%batch: index,
// ROWS-NEXT: tir.for %row = 0 to %batch {
// ROWS-NOT: %chunk

func.func @mlp(%x: tensor<?x4xf32, ["batch"]>) -> tensor<?x2xf32, ["batch"]> {
  %w = graph.constant {value = dense<[[1.0, -1.0, 0.5, 2.0], [0.0, 1.0, -2.0, 1.0], [3.0, 0.0, 1.0, -1.0]]> : tensor<3x4xf32>} : tensor<3x4xf32>
  %v = graph.constant {value = dense<[[1.0, 2.0, 0.5], [-1.0, 0.0, 1.0]]> : tensor<2x3xf32>} : tensor<2x3xf32>
  %y = graph.gemm %x, %w {transB = true} : (tensor<?x4xf32, ["batch"]>, tensor<3x4xf32>) -> tensor<?x3xf32, ["batch"]>
  %r = graph.relu %y : tensor<?x3xf32, ["batch"]>
  %z = graph.gemm %r, %v {transB = true} : (tensor<?x3xf32, ["batch"]>, tensor<2x3xf32>) -> tensor<?x2xf32, ["batch"]>
  func.return %z : tensor<?x2xf32, ["batch"]>
}
