// Symbolic dimensions: MLIR's `?` with each dimension's expression in the
// tensor's encoding. Shape inference carries the expressions (a stride-2
// convolution's floor division, a flatten's product), the text round-trips,
// and mlir-opt-16 reads the generic form. legalize-to-hlo keeps the
// symbols (lit/hlo/symbolic.mlir); fix-dims binds them.
// RUN: tessera-opt %s | FileCheck %s
// RUN: tessera-opt %s | tessera-opt | FileCheck %s
// RUN: tessera-opt %s --mlir-print-op-generic | mlir-opt-16 --allow-unregistered-dialect > /dev/null
// RUN: tessera-opt %s --fix-dims='dims=batch:2,h:9,w:8' --legalize-to-hlo | FileCheck %s --check-prefix=BOUND
// RUN: tessera-opt %s --legalize-to-hlo | FileCheck %s --check-prefix=FREE
// RUN: not tessera-opt %s --fix-dims='dims=batch:2,h:0,w:8' 2>&1 | FileCheck %s --check-prefix=SMALL

// BOUND: func.func @main(%arg0: tensor<2x3x9x8xf32>) -> tensor<40x4xf32>
// BOUND: hlo.convolution {{.*}} -> tensor<2x4x5x4xf32>
// FREE: func.func @main(%arg0: tensor<?x3x?x?xf32, ["batch", "h", "w"]>)
// FREE: hlo.convolution {{.*}} -> tensor<?x4x?x?xf32, ["batch", "(h - 1) floordiv 2 + 1", "(w - 1) floordiv 2 + 1"]>
// FREE: hlo.reshape {{.*}} -> tensor<?x4xf32, ["((h - 1) floordiv 2)*((w - 1) floordiv 2)*batch + ((h - 1) floordiv 2)*batch + ((w - 1) floordiv 2)*batch + batch"]>
// SMALL: error: 'graph.conv2d' op height: dilated kernel 3 is larger than the padded input 2

// CHECK-LABEL: func.func @main(%arg0: tensor<?x3x?x?xf32, ["batch", "h", "w"]>) -> tensor<?x4xf32, ["((h - 1) floordiv 2)*((w - 1) floordiv 2)*batch + ((h - 1) floordiv 2)*batch + ((w - 1) floordiv 2)*batch + batch"]> {
func.func @main(%x: tensor<?x3x?x?xf32, ["batch", "h", "w"]>) -> tensor<?x4xf32, ["((h - 1) floordiv 2)*((w - 1) floordiv 2)*batch + ((h - 1) floordiv 2)*batch + ((w - 1) floordiv 2)*batch + batch"]> {
  %w = graph.constant {value = dense<0.5> : tensor<4x3x3x3xf32>} : tensor<4x3x3x3xf32>
  // CHECK: graph.conv2d {{.*}} -> tensor<?x4x?x?xf32, ["batch", "(h - 1) floordiv 2 + 1", "(w - 1) floordiv 2 + 1"]>
  %c = graph.conv2d %x, %w {pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<?x3x?x?xf32, ["batch", "h", "w"]>, tensor<4x3x3x3xf32>) -> tensor<?x4x?x?xf32, ["batch", "(h - 1) floordiv 2 + 1", "(w - 1) floordiv 2 + 1"]>
  %r = graph.relu %c : tensor<?x4x?x?xf32, ["batch", "(h - 1) floordiv 2 + 1", "(w - 1) floordiv 2 + 1"]>
  // CHECK: graph.transpose {{.*}} -> tensor<?x?x?x4xf32, ["batch", "(h - 1) floordiv 2 + 1", "(w - 1) floordiv 2 + 1"]>
  %t = graph.transpose %r {perm = [0, 2, 3, 1]} : (tensor<?x4x?x?xf32, ["batch", "(h - 1) floordiv 2 + 1", "(w - 1) floordiv 2 + 1"]>) -> tensor<?x?x?x4xf32, ["batch", "(h - 1) floordiv 2 + 1", "(w - 1) floordiv 2 + 1"]>
  %f = graph.reshape %t {shape = [-1, 4]} : (tensor<?x?x?x4xf32, ["batch", "(h - 1) floordiv 2 + 1", "(w - 1) floordiv 2 + 1"]>) -> tensor<?x4xf32, ["((h - 1) floordiv 2)*((w - 1) floordiv 2)*batch + ((h - 1) floordiv 2)*batch + ((w - 1) floordiv 2)*batch + batch"]>
  func.return %f : tensor<?x4xf32, ["((h - 1) floordiv 2)*((w - 1) floordiv 2)*batch + ((h - 1) floordiv 2)*batch + ((w - 1) floordiv 2)*batch + batch"]>
}
