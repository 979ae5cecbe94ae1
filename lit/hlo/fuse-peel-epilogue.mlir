// The fuse pass's epilogue peel: a requantization whose values have
// several users (the accumulator widened once, read by a multiply and a
// shift) feeds the zero-point pad of the next convolution. The pad moves
// the values, so the loop fusion cannot join the dot whole; its part
// before the pad does, and the output fusion stores the 8-bit value that
// the pad's loop fusion copies. When the pad value is itself computed
// from the accumulator, nothing is peeled.
// RUN: tessera-opt %s --fuse | FileCheck %s

// CHECK-LABEL: func.func @requantize_pad
// CHECK: %[[F1:.*]] = "hlo.fusion"
// CHECK: hlo.dot_general
// CHECK: hlo.shift_right_arithmetic
// CHECK: hlo.convert {{.*}} -> tensor<2x3xui8>
// CHECK-NEXT: hlo.return {{.*}} : tensor<2x3xui8>
// CHECK-NEXT: }) {kind = "output"}
// CHECK: "hlo.fusion"(%[[F1]]) ({
// CHECK-NOT: hlo.shift_right_arithmetic
// CHECK: hlo.pad
// CHECK: }) {kind = "loop"}
func.func @requantize_pad(%x: tensor<2x4xui8>) -> tensor<4x5xui8> {
  %w = hlo.constant {value = dense<[[1, -2, 3, -4], [5, -6, 7, -8], [9, -10, 11, -12]]> : tensor<3x4xi8>} : tensor<3x4xi8>
  %d = hlo.dot_general %x, %w {lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]} : (tensor<2x4xui8>, tensor<3x4xi8>) -> tensor<2x3xi32>
  %e = hlo.convert %d : (tensor<2x3xi32>) -> tensor<2x3xi64>
  %m = hlo.constant {value = dense<3> : tensor<2x3xi64>} : tensor<2x3xi64>
  %s = hlo.constant {value = dense<2> : tensor<2x3xi64>} : tensor<2x3xi64>
  %p = hlo.multiply %e, %m : tensor<2x3xi64>
  %q = hlo.shift_right_arithmetic %e, %s : tensor<2x3xi64>
  %r = hlo.add %p, %q : tensor<2x3xi64>
  %lo = hlo.constant {value = dense<0> : tensor<2x3xi64>} : tensor<2x3xi64>
  %hi = hlo.constant {value = dense<127> : tensor<2x3xi64>} : tensor<2x3xi64>
  %c = hlo.clamp %lo, %r, %hi : (tensor<2x3xi64>, tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<2x3xi64>
  %y = hlo.convert %c : (tensor<2x3xi64>) -> tensor<2x3xui8>
  %z = hlo.constant {value = dense<9> : tensor<ui8>} : tensor<ui8>
  %o = hlo.pad %y, %z {edge_padding_low = [1, 1], edge_padding_high = [1, 1], interior_padding = [0, 0]} : (tensor<2x3xui8>, tensor<ui8>) -> tensor<4x5xui8>
  func.return %o : tensor<4x5xui8>
}

// CHECK-LABEL: func.func @pad_value_from_accumulator
// CHECK: "hlo.fusion"
// CHECK: hlo.dot_general
// CHECK-NEXT: hlo.convert {{.*}} -> tensor<2x3xi64>
// CHECK-NEXT: hlo.return
// CHECK: "hlo.fusion"
// CHECK: hlo.shift_right_arithmetic
// CHECK: hlo.pad
// CHECK: }) {kind = "loop"}
func.func @pad_value_from_accumulator(%x: tensor<2x4xui8>) -> tensor<4x5xui8> {
  %w = hlo.constant {value = dense<[[1, -2, 3, -4], [5, -6, 7, -8], [9, -10, 11, -12]]> : tensor<3x4xi8>} : tensor<3x4xi8>
  %d = hlo.dot_general %x, %w {lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]} : (tensor<2x4xui8>, tensor<3x4xi8>) -> tensor<2x3xi32>
  %e = hlo.convert %d : (tensor<2x3xi32>) -> tensor<2x3xi64>
  %m = hlo.constant {value = dense<3> : tensor<2x3xi64>} : tensor<2x3xi64>
  %s = hlo.constant {value = dense<2> : tensor<2x3xi64>} : tensor<2x3xi64>
  %p = hlo.multiply %e, %m : tensor<2x3xi64>
  %q = hlo.shift_right_arithmetic %e, %s : tensor<2x3xi64>
  %r = hlo.add %p, %q : tensor<2x3xi64>
  %lo = hlo.constant {value = dense<0> : tensor<2x3xi64>} : tensor<2x3xi64>
  %hi = hlo.constant {value = dense<127> : tensor<2x3xi64>} : tensor<2x3xi64>
  %c = hlo.clamp %lo, %r, %hi : (tensor<2x3xi64>, tensor<2x3xi64>, tensor<2x3xi64>) -> tensor<2x3xi64>
  %y = hlo.convert %c : (tensor<2x3xi64>) -> tensor<2x3xui8>
  %e0 = hlo.slice %e {start_indices = [0, 0], limit_indices = [1, 1], strides = [1, 1]} : (tensor<2x3xi64>) -> tensor<1x1xi64>
  %e1 = hlo.reshape %e0 : (tensor<1x1xi64>) -> tensor<i64>
  %z = hlo.convert %e1 : (tensor<i64>) -> tensor<ui8>
  %o = hlo.pad %y, %z {edge_padding_low = [1, 1], edge_padding_high = [1, 1], interior_padding = [0, 0]} : (tensor<2x3xui8>, tensor<ui8>) -> tensor<4x5xui8>
  func.return %o : tensor<4x5xui8>
}
