// Symbolic dimensions at the hlo level (issue 19): legalize-to-hlo and the
// hlo passes the compiler runs after it (canonicalize, cse,
// conv-kernel-layout, fuse) keep the graph function's symbols. A splat of
// a symbolic type is a rank-0 hlo.constant broadcast by
// hlo.broadcast_in_dim, both cloned into the fusion that uses them; a
// strided convolution's and a pooling window's outputs are floor
// divisions. The fix-dims pass binds the hlo function as it binds a graph
// one (graphir.BindFunc), and mlir-opt-16 reads the generic form.
// RUN: tessera-opt %s --legalize-to-hlo --canonicalize --cse --conv-kernel-layout --fuse | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo --canonicalize --cse --conv-kernel-layout --fuse | tessera-opt | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo --canonicalize --cse --conv-kernel-layout --fuse --fix-dims='dims=batch:2,h:9,w:8' | FileCheck %s --check-prefix=BOUND
// RUN: tessera-opt %s --legalize-to-hlo --fuse --mlir-print-op-generic | mlir-opt-16 --allow-unregistered-dialect > /dev/null

// CHECK-LABEL: func.func @mlp(%arg0: tensor<?x1x2x2xf32, ["batch"]>) -> tensor<?x3xf32, ["batch"]>
// CHECK: "hlo.fusion"(%arg0, %{{.*}}, %{{.*}}) ({
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<?x1x2x2xf32, ["batch"]>, %{{.*}}: tensor<3x4xf32>, %{{.*}}: tensor<3xf32>):
// CHECK-NEXT: %[[ZERO:.*]] = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
// CHECK-NEXT: %[[FLAT:.*]] = hlo.reshape %{{.*}} : (tensor<?x1x2x2xf32, ["batch"]>) -> tensor<?x4xf32, ["batch"]>
// CHECK-NEXT: %[[DOT:.*]] = hlo.dot_general %[[FLAT]], %{{.*}} {lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]} : (tensor<?x4xf32, ["batch"]>, tensor<3x4xf32>) -> tensor<?x3xf32, ["batch"]>
// CHECK-NEXT: %[[BIAS:.*]] = hlo.broadcast_in_dim %{{.*}} {broadcast_dimensions = [1]} : (tensor<3xf32>) -> tensor<?x3xf32, ["batch"]>
// CHECK-NEXT: %[[SUM:.*]] = hlo.add %[[DOT]], %[[BIAS]] : tensor<?x3xf32, ["batch"]>
// CHECK-NEXT: %[[SPLAT:.*]] = hlo.broadcast_in_dim %[[ZERO]] {broadcast_dimensions = []} : (tensor<f32>) -> tensor<?x3xf32, ["batch"]>
// CHECK-NEXT: %[[RELU:.*]] = hlo.maximum %[[SUM]], %[[SPLAT]] : tensor<?x3xf32, ["batch"]>
// CHECK-NEXT: hlo.return %[[RELU]] : tensor<?x3xf32, ["batch"]>
// CHECK-NEXT: }) {kind = "output"} : (tensor<?x1x2x2xf32, ["batch"]>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<?x3xf32, ["batch"]>

// CHECK-LABEL: func.func @conv
// CHECK: hlo.convolution {{.*}}kernel_input_feature_dimension = 2, kernel_output_feature_dimension = 3{{.*}} : (tensor<?x2x?x?xf32, ["batch", "h", "w"]>, tensor<3x3x2x4xf32>) -> tensor<?x4x?x?xf32, ["batch", "(h - 1) floordiv 2 + 1", "(w - 1) floordiv 2 + 1"]>
// CHECK: hlo.maximum
// CHECK: }) {kind = "output"}
// CHECK: "hlo.reduce_window"
// CHECK: window_dimensions = [1, 1, 2, 2]{{.*}} -> tensor<?x4x?x?xf32, ["batch", "(h - 1) floordiv 2", "(w - 1) floordiv 2"]>
// CHECK: }) {kind = "input"}

// A mean over a symbolic dimension divides by its size at run time.
// CHECK-LABEL: func.func @mean
// CHECK: %[[N:.*]] = hlo.get_dimension_size %{{.*}} {dimension = 0} : (tensor<?x3xf32, ["batch"]>) -> tensor<i32>
// CHECK-NEXT: %[[F:.*]] = hlo.convert %[[N]] : (tensor<i32>) -> tensor<f32>
// CHECK: hlo.divide

// BOUND-LABEL: func.func @mlp(%arg0: tensor<2x1x2x2xf32>) -> tensor<2x3xf32>
// BOUND: hlo.dot_general {{.*}} -> tensor<2x3xf32>
// BOUND: hlo.broadcast_in_dim {{.*}} {broadcast_dimensions = []} : (tensor<f32>) -> tensor<2x3xf32>
// BOUND-LABEL: func.func @conv(%arg0: tensor<2x2x9x8xf32>) -> tensor<2x4x4x3xf32>
// BOUND: hlo.convolution {{.*}} -> tensor<2x4x5x4xf32>
// BOUND: "hlo.reduce_window"
// BOUND: window_dimensions = [1, 1, 2, 2]{{.*}} -> tensor<2x4x4x3xf32>
// BOUND-LABEL: func.func @mean(%arg0: tensor<2x3xf32>) -> tensor<3xf32>
// BOUND: hlo.get_dimension_size %{{.*}} {dimension = 0} : (tensor<2x3xf32>) -> tensor<i32>

func.func @mlp(%x: tensor<?x1x2x2xf32, ["batch"]>) -> tensor<?x3xf32, ["batch"]> {
  %w = graph.constant {value = dense<[[1.0, -1.0, 0.5, 2.0], [0.0, 1.0, -2.0, 1.0], [3.0, 0.0, 1.0, -1.0]]> : tensor<3x4xf32>} : tensor<3x4xf32>
  %b = graph.constant {value = dense<[0.5, -0.5, 1.0]> : tensor<3xf32>} : tensor<3xf32>
  %f = graph.flatten %x : (tensor<?x1x2x2xf32, ["batch"]>) -> tensor<?x4xf32, ["batch"]>
  %y = graph.gemm %f, %w, %b {transB = true} : (tensor<?x4xf32, ["batch"]>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<?x3xf32, ["batch"]>
  %r = graph.relu %y : tensor<?x3xf32, ["batch"]>
  func.return %r : tensor<?x3xf32, ["batch"]>
}

func.func @conv(%x: tensor<?x2x?x?xf32, ["batch", "h", "w"]>) -> tensor<?x4x?x?xf32, ["batch", "(h - 1) floordiv 2", "(w - 1) floordiv 2"]> {
  %k = graph.constant {value = dense<0.5> : tensor<4x2x3x3xf32>} : tensor<4x2x3x3xf32>
  %c = graph.conv2d %x, %k {pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<?x2x?x?xf32, ["batch", "h", "w"]>, tensor<4x2x3x3xf32>) -> tensor<?x4x?x?xf32, ["batch", "(h - 1) floordiv 2 + 1", "(w - 1) floordiv 2 + 1"]>
  %r = graph.relu %c : tensor<?x4x?x?xf32, ["batch", "(h - 1) floordiv 2 + 1", "(w - 1) floordiv 2 + 1"]>
  %m = graph.max_pool2d %r {kernel = [2, 2]} : (tensor<?x4x?x?xf32, ["batch", "(h - 1) floordiv 2 + 1", "(w - 1) floordiv 2 + 1"]>) -> tensor<?x4x?x?xf32, ["batch", "(h - 1) floordiv 2", "(w - 1) floordiv 2"]>
  func.return %m : tensor<?x4x?x?xf32, ["batch", "(h - 1) floordiv 2", "(w - 1) floordiv 2"]>
}

func.func @mean(%x: tensor<?x3xf32, ["batch"]>) -> tensor<3xf32> {
  %m = graph.reduce_mean %x {axes = [0], keepdims = false} : (tensor<?x3xf32, ["batch"]>) -> tensor<3xf32>
  func.return %m : tensor<3xf32>
}
