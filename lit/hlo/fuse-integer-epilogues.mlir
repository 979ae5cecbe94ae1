// The fuse pass's integer-epilogues option (the NPU target's pipeline):
// an integer contraction's fusion takes no op with a float result, so a
// dequantizing epilogue (convert to f32, scale) fuses apart as a loop
// fusion; the i32 bias stays with the contraction. Without the option the
// whole chain is one output fusion.
// RUN: tessera-opt %s --pass-pipeline='fuse{integer-epilogues=true}' | FileCheck %s
// RUN: tessera-opt %s --fuse | FileCheck %s --check-prefix=DEFAULT
// RUN: not tessera-opt %s --pass-pipeline='fuse{integer-epilogues=maybe}' 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK-LABEL: func.func @dequantize
// CHECK: %[[F1:.*]] = "hlo.fusion"
// CHECK: hlo.dot_general
// CHECK-NEXT: hlo.broadcast_in_dim
// CHECK-NEXT: hlo.add {{.*}} : tensor<2x3xi32>
// CHECK-NEXT: hlo.return {{.*}} : tensor<2x3xi32>
// CHECK-NEXT: }) {kind = "output"}
// CHECK: "hlo.fusion"(%[[F1]], {{.*}}) ({
// CHECK: hlo.convert {{.*}} -> tensor<2x3xf32>
// CHECK: hlo.multiply
// CHECK: }) {kind = "loop"}

// DEFAULT-LABEL: func.func @dequantize
// DEFAULT: "hlo.fusion"
// DEFAULT: hlo.dot_general
// DEFAULT: hlo.convert
// DEFAULT: hlo.multiply
// DEFAULT: }) {kind = "output"}
// DEFAULT-NOT: "hlo.fusion"

// BAD: option integer-epilogues must be true or false, got "maybe"
func.func @dequantize(%x: tensor<2x4xui8>) -> tensor<2x3xf32> {
  %w = hlo.constant {value = dense<[[1, -2, 3, -4], [5, -6, 7, -8], [9, -10, 11, -12]]> : tensor<3x4xi8>} : tensor<3x4xi8>
  %b = hlo.constant {value = dense<[100, -200, 300]> : tensor<3xi32>} : tensor<3xi32>
  %s = hlo.constant {value = dense<[0.5, 0.25, 0.125]> : tensor<3xf32>} : tensor<3xf32>
  %d = hlo.dot_general %x, %w {lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]} : (tensor<2x4xui8>, tensor<3x4xi8>) -> tensor<2x3xi32>
  %bb = hlo.broadcast_in_dim %b {broadcast_dimensions = [1]} : (tensor<3xi32>) -> tensor<2x3xi32>
  %acc = hlo.add %d, %bb : tensor<2x3xi32>
  %f = hlo.convert %acc : (tensor<2x3xi32>) -> tensor<2x3xf32>
  %sb = hlo.broadcast_in_dim %s {broadcast_dimensions = [1]} : (tensor<3xf32>) -> tensor<2x3xf32>
  %y = hlo.multiply %f, %sb : tensor<2x3xf32>
  func.return %y : tensor<2x3xf32>
}
