// The XLA-style fusion pass: every compute op ends in exactly one
// hlo.fusion; kinds loop / input / output; splat constants are cloned into
// fusions, weights stay outside as operands (in first-use order over the
// members in program order); a fusion takes its root's location. Running
// the pass twice changes nothing.
// RUN: tessera-opt %s --fuse | FileCheck %s
// RUN: tessera-opt %s --fuse --fuse | FileCheck %s
// RUN: tessera-opt %s --fuse --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// Two-layer MLP: reshape → dot_general → add(broadcast bias) → maximum(0) →
// dot_general → add(broadcast bias) becomes exactly two output fusions.
// CHECK-LABEL: func.func @mlp
// CHECK-NEXT: %[[W1:.*]] = hlo.constant {value = dense<{{\[\[}}0.1, 0.2, 0.3, 0.4]
// CHECK-NEXT: %[[B1:.*]] = hlo.constant {value = dense<[0.5, -0.5, 0.25]>
// CHECK-NEXT: %[[W2:.*]] = hlo.constant {value = dense<{{\[\[}}1.0, -2.0, 3.0]
// CHECK-NEXT: %[[B2:.*]] = hlo.constant {value = dense<[0.125, -0.125]>
// CHECK-NEXT: %[[F1:.*]] = "hlo.fusion"(%arg0, %[[W1]], %[[B1]]) ({
// CHECK-NEXT: ^bb0(%[[X:.*]]: tensor<2x1x2x2xf32>, %[[A1:.*]]: tensor<3x4xf32>, %[[A2:.*]]: tensor<3xf32>):
// CHECK-NEXT: %[[Z:.*]] = hlo.constant {value = dense<0.0> : tensor<2x3xf32>}
// CHECK-NEXT: %[[R:.*]] = hlo.reshape %[[X]] : (tensor<2x1x2x2xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %[[D:.*]] = hlo.dot_general %[[R]], %[[A1]] {lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]}
// CHECK-NEXT: %[[BB:.*]] = hlo.broadcast_in_dim %[[A2]] {broadcast_dimensions = [1]}
// CHECK-NEXT: %[[S:.*]] = hlo.add %[[D]], %[[BB]] : tensor<2x3xf32>
// CHECK-NEXT: %[[M:.*]] = hlo.maximum %[[S]], %[[Z]] : tensor<2x3xf32>
// CHECK-NEXT: hlo.return %[[M]] : tensor<2x3xf32>
// CHECK-NEXT: }) {kind = "output"} : (tensor<2x1x2x2xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[F2:.*]] = "hlo.fusion"(%[[F1]], %[[W2]], %[[B2]]) ({
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: hlo.dot_general
// CHECK-NEXT: hlo.broadcast_in_dim
// CHECK-NEXT: hlo.add
// CHECK-NEXT: hlo.return
// CHECK-NEXT: }) {kind = "output"} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x2xf32>
// CHECK-NEXT: func.return %[[F2]] : tensor<2x2xf32>
// LOC-LABEL: func.func @mlp
// LOC: }) {kind = "output"} : (tensor<2x1x2x2xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x3xf32> loc("{{.*}}fuse.mlir":[[@LINE+12]]:{{[0-9]+}})
// LOC: }) {kind = "output"} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x2xf32> loc("{{.*}}fuse.mlir":[[@LINE+14]]:{{[0-9]+}})
func.func @mlp(%x: tensor<2x1x2x2xf32>) -> tensor<2x2xf32> {
  %w1 = hlo.constant {value = dense<[[0.1, 0.2, 0.3, 0.4], [-0.5, 0.6, -0.7, 0.8], [0.9, -1.0, 1.1, -1.2]]> : tensor<3x4xf32>} : tensor<3x4xf32>
  %b1 = hlo.constant {value = dense<[0.5, -0.5, 0.25]> : tensor<3xf32>} : tensor<3xf32>
  %w2 = hlo.constant {value = dense<[[1.0, -2.0, 3.0], [-4.0, 5.0, -6.0]]> : tensor<2x3xf32>} : tensor<2x3xf32>
  %b2 = hlo.constant {value = dense<[0.125, -0.125]> : tensor<2xf32>} : tensor<2xf32>
  %zero = hlo.constant {value = dense<0.0> : tensor<2x3xf32>} : tensor<2x3xf32>
  %0 = hlo.reshape %x : (tensor<2x1x2x2xf32>) -> tensor<2x4xf32>
  %1 = hlo.dot_general %0, %w1 {lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]} : (tensor<2x4xf32>, tensor<3x4xf32>) -> tensor<2x3xf32>
  %2 = hlo.broadcast_in_dim %b1 {broadcast_dimensions = [1]} : (tensor<3xf32>) -> tensor<2x3xf32>
  %3 = hlo.add %1, %2 : tensor<2x3xf32>
  %4 = hlo.maximum %3, %zero : tensor<2x3xf32>
  %5 = hlo.dot_general %4, %w2 {lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2xf32>
  %6 = hlo.broadcast_in_dim %b2 {broadcast_dimensions = [1]} : (tensor<2xf32>) -> tensor<2x2xf32>
  %7 = hlo.add %5, %6 : tensor<2x2xf32>
  func.return %7 : tensor<2x2xf32>
}

// Softmax: the reductions are input fusions; exp has users in two groups
// (the sum and the divide), so it is fused into neither and its loop fusion
// feeds both.
// CHECK-LABEL: func.func @softmax
// CHECK-NEXT: %[[MAX:.*]] = "hlo.fusion"(%arg0) ({
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: hlo.constant {value = dense<0xFF800000> : tensor<f32>}
// CHECK-NEXT: "hlo.reduce"
// CHECK: hlo.maximum
// CHECK: }) {dimensions = [1]}
// CHECK-NEXT: hlo.return
// CHECK-NEXT: }) {kind = "input"} : (tensor<3x5xf32>) -> tensor<3xf32>
// CHECK-NEXT: %[[EXP:.*]] = "hlo.fusion"(%[[MAX]], %arg0) ({
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: hlo.broadcast_in_dim
// CHECK-NEXT: hlo.subtract
// CHECK-NEXT: hlo.exponential
// CHECK-NEXT: hlo.return
// CHECK-NEXT: }) {kind = "loop"} : (tensor<3xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT: %[[SUM:.*]] = "hlo.fusion"(%[[EXP]]) ({
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: hlo.constant {value = dense<0.0> : tensor<f32>}
// CHECK-NEXT: "hlo.reduce"
// CHECK: hlo.add
// CHECK: }) {kind = "input"} : (tensor<3x5xf32>) -> tensor<3xf32>
// CHECK-NEXT: %[[DIV:.*]] = "hlo.fusion"(%[[SUM]], %[[EXP]]) ({
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: hlo.broadcast_in_dim
// CHECK-NEXT: hlo.divide
// CHECK-NEXT: hlo.return
// CHECK-NEXT: }) {kind = "loop"} : (tensor<3xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT: func.return %[[DIV]] : tensor<3x5xf32>
func.func @softmax(%x: tensor<3x5xf32>) -> tensor<3x5xf32> {
  %ninf = hlo.constant {value = dense<0xFF800000> : tensor<f32>} : tensor<f32>
  %zero = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
  %m = "hlo.reduce"(%x, %ninf) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = hlo.maximum %a, %b : tensor<f32>
    hlo.return %r : (tensor<f32>) -> ()
  }) {dimensions = [1]} : (tensor<3x5xf32>, tensor<f32>) -> tensor<3xf32>
  %mb = hlo.broadcast_in_dim %m {broadcast_dimensions = [0]} : (tensor<3xf32>) -> tensor<3x5xf32>
  %s = hlo.subtract %x, %mb : tensor<3x5xf32>
  %e = hlo.exponential %s : tensor<3x5xf32>
  %sum = "hlo.reduce"(%e, %zero) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = hlo.add %a, %b : tensor<f32>
    hlo.return %r : (tensor<f32>) -> ()
  }) {dimensions = [1]} : (tensor<3x5xf32>, tensor<f32>) -> tensor<3xf32>
  %sb = hlo.broadcast_in_dim %sum {broadcast_dimensions = [0]} : (tensor<3xf32>) -> tensor<3x5xf32>
  %y = hlo.divide %e, %sb : tensor<3x5xf32>
  func.return %y : tensor<3x5xf32>
}

// Convolution + bias + relu: one output fusion; the weights and bias are
// operands.
// CHECK-LABEL: func.func @conv_bias_relu
// CHECK-NEXT: %[[F:.*]] = "hlo.fusion"(%arg0, %arg1, %arg2) ({
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: hlo.constant {value = dense<0.0> : tensor<1x4x8x8xf32>}
// CHECK-NEXT: hlo.convolution {{.*}} {padding = {{\[\[}}1, 1], [1, 1]]}
// CHECK-NEXT: hlo.broadcast_in_dim {{.*}} {broadcast_dimensions = [1]}
// CHECK-NEXT: hlo.add
// CHECK-NEXT: hlo.maximum
// CHECK-NEXT: hlo.return
// CHECK-NEXT: }) {kind = "output"} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
// CHECK-NEXT: func.return %[[F]]
func.func @conv_bias_relu(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>) -> tensor<1x4x8x8xf32> {
  %zero = hlo.constant {value = dense<0.0> : tensor<1x4x8x8xf32>} : tensor<1x4x8x8xf32>
  %0 = hlo.convolution %x, %w {padding = [[1, 1], [1, 1]]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
  %1 = hlo.broadcast_in_dim %b {broadcast_dimensions = [1]} : (tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %2 = hlo.add %0, %1 : tensor<1x4x8x8xf32>
  %3 = hlo.maximum %2, %zero : tensor<1x4x8x8xf32>
  func.return %3 : tensor<1x4x8x8xf32>
}

// A reduce absorbs its elementwise producers: one input fusion.
// CHECK-LABEL: func.func @reduce_input_fusion
// CHECK-NEXT: %[[F:.*]] = "hlo.fusion"(%arg0) ({
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: hlo.constant
// CHECK-NEXT: hlo.multiply
// CHECK-NEXT: hlo.exponential
// CHECK-NEXT: "hlo.reduce"
// CHECK: }) {kind = "input"} : (tensor<4x6xf32>) -> tensor<6xf32>
// CHECK-NEXT: func.return %[[F]] : tensor<6xf32>
func.func @reduce_input_fusion(%x: tensor<4x6xf32>) -> tensor<6xf32> {
  %zero = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
  %0 = hlo.multiply %x, %x : tensor<4x6xf32>
  %1 = hlo.exponential %0 : tensor<4x6xf32>
  %2 = "hlo.reduce"(%1, %zero) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %r = hlo.add %a, %b : tensor<f32>
    hlo.return %r : (tensor<f32>) -> ()
  }) {dimensions = [0]} : (tensor<4x6xf32>, tensor<f32>) -> tensor<6xf32>
  func.return %2 : tensor<6xf32>
}

// A producer with users in two groups is fused into neither.
// CHECK-LABEL: func.func @two_users
// CHECK-NEXT: %[[E:.*]] = "hlo.fusion"(%arg0) ({
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: hlo.exponential
// CHECK-NEXT: hlo.return
// CHECK-NEXT: }) {kind = "loop"}
// CHECK-NEXT: %[[N:.*]] = "hlo.fusion"(%[[E]]) ({
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: hlo.negate
// CHECK-NEXT: hlo.return
// CHECK-NEXT: }) {kind = "loop"}
// CHECK-NEXT: %[[A:.*]] = "hlo.fusion"(%[[E]]) ({
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: hlo.abs
// CHECK-NEXT: hlo.return
// CHECK-NEXT: }) {kind = "loop"}
// CHECK-NEXT: func.return %[[N]], %[[A]]
func.func @two_users(%x: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>) {
  %e = hlo.exponential %x : tensor<5xf32>
  %n = hlo.negate %e : tensor<5xf32>
  %a = hlo.abs %e : tensor<5xf32>
  func.return %n, %a : tensor<5xf32>, tensor<5xf32>
}

// On the operand side of a dot only layout ops join: the transpose is
// fused, the exponential (arithmetic, recomputed per output) is not.
// CHECK-LABEL: func.func @dot_operands
// CHECK-NEXT: %[[E:.*]] = "hlo.fusion"(%arg0) ({
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: hlo.exponential
// CHECK-NEXT: hlo.return
// CHECK-NEXT: }) {kind = "loop"}
// CHECK-NEXT: %[[D:.*]] = "hlo.fusion"(%arg1, %[[E]]) ({
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: hlo.transpose
// CHECK-NEXT: hlo.dot_general
// CHECK-NEXT: hlo.return
// CHECK-NEXT: }) {kind = "output"}
// CHECK-NEXT: func.return %[[D]]
func.func @dot_operands(%x: tensor<3x4xf32>, %w: tensor<5x4xf32>) -> tensor<3x5xf32> {
  %e = hlo.exponential %x : tensor<3x4xf32>
  %t = hlo.transpose %w {permutation = [1, 0]} : (tensor<5x4xf32>) -> tensor<4x5xf32>
  %d = hlo.dot_general %e, %t {lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  func.return %d : tensor<3x5xf32>
}

// A bias broadcast shared by two dot epilogues is cloned into each: both
// fusions take the 3-element bias, no fusion materializes the broadcast.
// CHECK-LABEL: func.func @shared_bias
// CHECK-NEXT: %[[D1:.*]] = "hlo.fusion"(%arg2, %arg0, %arg1) ({
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: hlo.broadcast_in_dim
// CHECK-NEXT: hlo.dot_general
// CHECK-NEXT: hlo.add
// CHECK-NEXT: hlo.return
// CHECK-NEXT: }) {kind = "output"}
// CHECK-NEXT: %[[D2:.*]] = "hlo.fusion"(%arg2, %[[D1]], %arg1) ({
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: hlo.broadcast_in_dim
// CHECK-NEXT: hlo.dot_general
// CHECK-NEXT: hlo.add
// CHECK-NEXT: hlo.return
// CHECK-NEXT: }) {kind = "output"}
// CHECK-NEXT: func.return %[[D2]]
func.func @shared_bias(%x: tensor<2x3xf32>, %w: tensor<3x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %bb = hlo.broadcast_in_dim %b {broadcast_dimensions = [1]} : (tensor<3xf32>) -> tensor<2x3xf32>
  %d1 = hlo.dot_general %x, %w {lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  %y1 = hlo.add %d1, %bb : tensor<2x3xf32>
  %d2 = hlo.dot_general %y1, %w {lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x3xf32>
  %y2 = hlo.add %d2, %bb : tensor<2x3xf32>
  func.return %y2 : tensor<2x3xf32>
}
