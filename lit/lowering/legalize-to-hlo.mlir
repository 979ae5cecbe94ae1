// RUN: tessera-opt %s --split-input-file --legalize-to-hlo | FileCheck %s
// RUN: tessera-opt %s --split-input-file --legalize-to-hlo | FileCheck %s --check-prefix=NOGRAPH

// Every graph op becomes hlo primitives; no graph op remains anywhere.
// NOGRAPH-NOT: graph.

// CHECK-LABEL: func.func @constant
// CHECK-NEXT: %[[C:.*]] = hlo.constant {value = dense<{{\[}}[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : tensor<2x2xf32>
// CHECK-NEXT: func.return %[[C]]
func.func @constant() -> tensor<2x2xf32> {
  %0 = graph.constant {value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : tensor<2x2xf32>
  func.return %0 : tensor<2x2xf32>
}

// -----

// Same shapes: no broadcast.
// CHECK-LABEL: func.func @add_same
// CHECK-NEXT: %[[R:.*]] = hlo.add %arg0, %arg1 : tensor<2x3xf32>
// CHECK-NEXT: func.return %[[R]]
func.func @add_same(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.add %a, %b : tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

// Right-aligned broadcast of a trailing vector.
// CHECK-LABEL: func.func @sub_vector
// CHECK-NEXT: %[[B:.*]] = hlo.broadcast_in_dim %arg1 {broadcast_dimensions = [1]} : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[R:.*]] = hlo.subtract %arg0, %[[B]] : tensor<2x3xf32>
func.func @sub_vector(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = graph.sub %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

// Rank-0 operand: empty dimension map.
// CHECK-LABEL: func.func @mul_scalar
// CHECK-NEXT: %[[B:.*]] = hlo.broadcast_in_dim %arg0 {broadcast_dimensions = []} : (tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT: hlo.multiply %[[B]], %arg1 : tensor<2x3xf32>
func.func @mul_scalar(%a: tensor<f32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.mul %a, %b : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

// Size-1 dimensions expand on both sides.
// CHECK-LABEL: func.func @div_expand
// CHECK-NEXT: %[[A:.*]] = hlo.broadcast_in_dim %arg0 {broadcast_dimensions = [0, 1, 2]} : (tensor<4x1x5xf32>) -> tensor<4x3x5xf32>
// CHECK-NEXT: %[[B:.*]] = hlo.broadcast_in_dim %arg1 {broadcast_dimensions = [1, 2]} : (tensor<3x1xf32>) -> tensor<4x3x5xf32>
// CHECK-NEXT: hlo.divide %[[A]], %[[B]] : tensor<4x3x5xf32>
func.func @div_expand(%a: tensor<4x1x5xf32>, %b: tensor<3x1xf32>) -> tensor<4x3x5xf32> {
  %0 = graph.div %a, %b : (tensor<4x1x5xf32>, tensor<3x1xf32>) -> tensor<4x3x5xf32>
  func.return %0 : tensor<4x3x5xf32>
}

// -----

// CHECK-LABEL: func.func @activations
// CHECK-NEXT: %[[Z:.*]] = hlo.constant {value = dense<0.0> : tensor<4x8xf32>} : tensor<4x8xf32>
// CHECK-NEXT: %[[R:.*]] = hlo.maximum %arg0, %[[Z]] : tensor<4x8xf32>
// CHECK-NEXT: %[[S:.*]] = hlo.logistic %[[R]] : tensor<4x8xf32>
// CHECK-NEXT: %[[T:.*]] = hlo.tanh %[[S]] : tensor<4x8xf32>
// CHECK-NEXT: func.return %[[T]]
func.func @activations(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = graph.relu %x : tensor<4x8xf32>
  %1 = graph.sigmoid %0 : tensor<4x8xf32>
  %2 = graph.tanh %1 : tensor<4x8xf32>
  func.return %2 : tensor<4x8xf32>
}

// -----

// pads [top, left, bottom, right] become [[top, bottom], [left, right]];
// the bias is broadcast along the channel dimension.
// CHECK-LABEL: func.func @conv2d
// CHECK-NEXT: %[[C:.*]] = hlo.convolution %arg0, %arg1 {feature_group_count = 2, padding = {{\[}}[0, 2], [1, 1]], rhs_dilation = [1, 2], window_strides = [2, 3]} : (tensor<1x4x7x8xf32>, tensor<6x2x3x2xf32>) -> tensor<1x6x4x3xf32>
// CHECK-NEXT: %[[B:.*]] = hlo.broadcast_in_dim %arg2 {broadcast_dimensions = [1]} : (tensor<6xf32>) -> tensor<1x6x4x3xf32>
// CHECK-NEXT: %[[R:.*]] = hlo.add %[[C]], %[[B]] : tensor<1x6x4x3xf32>
// CHECK-NEXT: func.return %[[R]]
func.func @conv2d(%x: tensor<1x4x7x8xf32>, %w: tensor<6x2x3x2xf32>, %b: tensor<6xf32>) -> tensor<1x6x4x3xf32> {
  %0 = graph.conv2d %x, %w, %b {strides = [2, 3], pads = [0, 1, 2, 1], dilations = [1, 2], groups = 2} : (tensor<1x4x7x8xf32>, tensor<6x2x3x2xf32>, tensor<6xf32>) -> tensor<1x6x4x3xf32>
  func.return %0 : tensor<1x6x4x3xf32>
}

// -----

// CHECK-LABEL: func.func @conv2d_nobias
// CHECK-NEXT: %[[C:.*]] = hlo.convolution %arg0, %arg1 {padding = {{\[}}[0, 0], [0, 0]], rhs_dilation = [1, 1], window_strides = [1, 1]}
// CHECK-NEXT: func.return %[[C]]
func.func @conv2d_nobias(%x: tensor<1x3x5x5xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x2x3x3xf32> {
  %0 = graph.conv2d %x, %w : (tensor<1x3x5x5xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %0 : tensor<1x2x3x3xf32>
}

// -----

// CHECK-LABEL: func.func @matmul_2d
// CHECK-NEXT: hlo.dot_general %arg0, %arg1 {lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
func.func @matmul_2d(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %0 = graph.matmul %a, %b : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}

// -----

// A 1-D operand contracts directly; the promoted dimension never appears.
// CHECK-LABEL: func.func @matmul_vec
// CHECK-NEXT: hlo.dot_general %arg0, %arg1 {lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [1]} : (tensor<4xf32>, tensor<2x4x5xf32>) -> tensor<2x5xf32>
func.func @matmul_vec(%a: tensor<4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x5xf32> {
  %0 = graph.matmul %a, %b : (tensor<4xf32>, tensor<2x4x5xf32>) -> tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}

// -----

// Batch dimensions broadcast to the common batch shape, then batch.
// CHECK-LABEL: func.func @matmul_batched
// CHECK-NEXT: %[[A:.*]] = hlo.broadcast_in_dim %arg0 {broadcast_dimensions = [0, 1, 2, 3]} : (tensor<2x1x3x4xf32>) -> tensor<2x5x3x4xf32>
// CHECK-NEXT: %[[B:.*]] = hlo.broadcast_in_dim %arg1 {broadcast_dimensions = [1, 2, 3]} : (tensor<5x4x2xf32>) -> tensor<2x5x4x2xf32>
// CHECK-NEXT: hlo.dot_general %[[A]], %[[B]] {lhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_batching_dimensions = [0, 1], rhs_contracting_dimensions = [2]} : (tensor<2x5x3x4xf32>, tensor<2x5x4x2xf32>) -> tensor<2x5x3x2xf32>
func.func @matmul_batched(%a: tensor<2x1x3x4xf32>, %b: tensor<5x4x2xf32>) -> tensor<2x5x3x2xf32> {
  %0 = graph.matmul %a, %b : (tensor<2x1x3x4xf32>, tensor<5x4x2xf32>) -> tensor<2x5x3x2xf32>
  func.return %0 : tensor<2x5x3x2xf32>
}

// -----

// transA/transB pick the contracting dimensions; alpha scales the product,
// beta scales C at its own shape before the broadcast.
// CHECK-LABEL: func.func @gemm
// CHECK-NEXT: %[[D:.*]] = hlo.dot_general %arg0, %arg1 {lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [1]} : (tensor<4x3xf32>, tensor<5x4xf32>) -> tensor<3x5xf32>
// CHECK-NEXT: %[[AL:.*]] = hlo.constant {value = dense<0.5> : tensor<3x5xf32>}
// CHECK-NEXT: %[[Y:.*]] = hlo.multiply %[[D]], %[[AL]] : tensor<3x5xf32>
// CHECK-NEXT: %[[BE:.*]] = hlo.constant {value = dense<2.0> : tensor<5xf32>}
// CHECK-NEXT: %[[C:.*]] = hlo.multiply %arg2, %[[BE]] : tensor<5xf32>
// CHECK-NEXT: %[[CB:.*]] = hlo.broadcast_in_dim %[[C]] {broadcast_dimensions = [1]} : (tensor<5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT: %[[R:.*]] = hlo.add %[[Y]], %[[CB]] : tensor<3x5xf32>
// CHECK-NEXT: func.return %[[R]]
func.func @gemm(%a: tensor<4x3xf32>, %b: tensor<5x4xf32>, %c: tensor<5xf32>) -> tensor<3x5xf32> {
  %0 = graph.gemm %a, %b, %c {alpha = 0.5 : f32, beta = 2.0 : f32, transA = true, transB = true} : (tensor<4x3xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}

// -----

// CHECK-LABEL: func.func @max_pool
// CHECK-NEXT: %[[I:.*]] = hlo.constant {value = dense<0xFF800000> : tensor<f32>} : tensor<f32>
// CHECK-NEXT: %[[R:.*]] = "hlo.reduce_window"(%arg0, %[[I]]) ({
// CHECK-NEXT: ^bb0(%[[P:.*]]: tensor<f32>, %[[Q:.*]]: tensor<f32>):
// CHECK-NEXT: %[[M:.*]] = hlo.maximum %[[P]], %[[Q]] : tensor<f32>
// CHECK-NEXT: hlo.return %[[M]]
// CHECK-NEXT: }) {padding = {{\[}}[0, 0], [0, 0], [1, 1], [1, 1]], window_dilations = [1, 1, 2, 1], window_dimensions = [1, 1, 3, 3], window_strides = [1, 1, 2, 2]} : (tensor<1x2x9x8xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT: func.return %[[R]]
func.func @max_pool(%x: tensor<1x2x9x8xf32>) -> tensor<1x2x4x4xf32> {
  %0 = graph.max_pool2d %x {kernel = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], dilations = [2, 1]} : (tensor<1x2x9x8xf32>) -> tensor<1x2x4x4xf32>
  func.return %0 : tensor<1x2x4x4xf32>
}

// -----

// ceil_mode: the high padding grows by the extra row/column the last
// window needs; -inf padding never wins.
// CHECK-LABEL: func.func @max_pool_ceil
// CHECK: "hlo.reduce_window"
// CHECK: padding = {{\[}}[0, 0], [0, 0], [0, 1], [0, 1]]
// CHECK-SAME: -> tensor<1x1x4x4xf32>
func.func @max_pool_ceil(%x: tensor<1x1x7x7xf32>) -> tensor<1x1x4x4xf32> {
  %0 = graph.max_pool2d %x {kernel = [2, 2], strides = [2, 2], ceil_mode = true} : (tensor<1x1x7x7xf32>) -> tensor<1x1x4x4xf32>
  func.return %0 : tensor<1x1x4x4xf32>
}

// -----

// Uniform window counts divide by a splat.
// CHECK-LABEL: func.func @avg_pool
// CHECK-NEXT: %[[I:.*]] = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
// CHECK-NEXT: %[[S:.*]] = "hlo.reduce_window"(%arg0, %[[I]]) ({
// CHECK: hlo.add
// CHECK: }) {padding = {{\[}}[0, 0], [0, 0], [0, 0], [0, 0]], window_dilations = [1, 1, 1, 1], window_dimensions = [1, 1, 2, 2], window_strides = [1, 1, 2, 2]}
// CHECK-NEXT: %[[N:.*]] = hlo.constant {value = dense<4.0> : tensor<1x3x2x2xf32>}
// CHECK-NEXT: %[[R:.*]] = hlo.divide %[[S]], %[[N]] : tensor<1x3x2x2xf32>
// CHECK-NEXT: func.return %[[R]]
func.func @avg_pool(%x: tensor<1x3x4x4xf32>) -> tensor<1x3x2x2xf32> {
  %0 = graph.avg_pool2d %x {kernel = [2, 2], strides = [2, 2]} : (tensor<1x3x4x4xf32>) -> tensor<1x3x2x2xf32>
  func.return %0 : tensor<1x3x2x2xf32>
}

// -----

// count_include_pad = false: per-position counts of real elements, computed
// at legalization time and broadcast along the spatial dimensions.
// CHECK-LABEL: func.func @avg_pool_exclude_pad
// CHECK: %[[S:.*]] = "hlo.reduce_window"
// CHECK: padding = {{\[}}[0, 0], [0, 0], [1, 1], [1, 1]]
// CHECK-NEXT: %[[N:.*]] = hlo.constant {value = dense<{{\[}}[4.0, 6.0, 4.0], [6.0, 9.0, 6.0], [4.0, 6.0, 4.0]]> : tensor<3x3xf32>}
// CHECK-NEXT: %[[B:.*]] = hlo.broadcast_in_dim %[[N]] {broadcast_dimensions = [2, 3]} : (tensor<3x3xf32>) -> tensor<1x1x3x3xf32>
// CHECK-NEXT: hlo.divide %[[S]], %[[B]] : tensor<1x1x3x3xf32>
func.func @avg_pool_exclude_pad(%x: tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32> {
  %0 = graph.avg_pool2d %x {kernel = [3, 3], pads = [1, 1, 1, 1], count_include_pad = false} : (tensor<1x1x3x3xf32>) -> tensor<1x1x3x3xf32>
  func.return %0 : tensor<1x1x3x3xf32>
}

// -----

// count_include_pad = true with ceil_mode: the explicit padding counts, the
// extra high row/column added for the ceil-mode window does not (the last
// window covers 1 real element + 1 pad element of 3).
// CHECK-LABEL: func.func @avg_pool_include_pad_ceil
// CHECK: padding = {{\[}}[0, 0], [0, 0], [1, 2], [1, 2]]
// CHECK-SAME: -> tensor<1x1x4x4xf32>
// CHECK-NEXT: hlo.constant {value = dense<{{\[}}[9.0, 9.0, 9.0, 6.0], [9.0, 9.0, 9.0, 6.0], [9.0, 9.0, 9.0, 6.0], [6.0, 6.0, 6.0, 4.0]]> : tensor<4x4xf32>}
func.func @avg_pool_include_pad_ceil(%x: tensor<1x1x6x6xf32>) -> tensor<1x1x4x4xf32> {
  %0 = graph.avg_pool2d %x {kernel = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], ceil_mode = true, count_include_pad = true} : (tensor<1x1x6x6xf32>) -> tensor<1x1x4x4xf32>
  func.return %0 : tensor<1x1x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @global_avg_pool
// CHECK-NEXT: %[[I:.*]] = hlo.constant {value = dense<0.0> : tensor<f32>}
// CHECK-NEXT: %[[S:.*]] = "hlo.reduce"(%arg0, %[[I]]) ({
// CHECK: hlo.add
// CHECK: }) {dimensions = [2, 3]} : (tensor<2x3x5x4xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT: %[[R:.*]] = hlo.reshape %[[S]] : (tensor<2x3xf32>) -> tensor<2x3x1x1xf32>
// CHECK-NEXT: %[[N:.*]] = hlo.constant {value = dense<20.0> : tensor<2x3x1x1xf32>}
// CHECK-NEXT: hlo.divide %[[R]], %[[N]] : tensor<2x3x1x1xf32>
func.func @global_avg_pool(%x: tensor<2x3x5x4xf32>) -> tensor<2x3x1x1xf32> {
  %0 = graph.global_avg_pool %x : (tensor<2x3x5x4xf32>) -> tensor<2x3x1x1xf32>
  func.return %0 : tensor<2x3x1x1xf32>
}

// -----

// (x − mean) · (scale · rsqrt(var + ε)) + bias; the per-channel factor is
// computed on the [C] vectors.
// CHECK-LABEL: func.func @batch_norm
// CHECK-NEXT: %[[E:.*]] = hlo.constant {value = dense<0.001> : tensor<3xf32>}
// CHECK-NEXT: %[[V:.*]] = hlo.add %arg4, %[[E]] : tensor<3xf32>
// CHECK-NEXT: %[[RS:.*]] = hlo.rsqrt %[[V]] : tensor<3xf32>
// CHECK-NEXT: %[[F:.*]] = hlo.multiply %arg1, %[[RS]] : tensor<3xf32>
// CHECK-NEXT: %[[MB:.*]] = hlo.broadcast_in_dim %arg3 {broadcast_dimensions = [1]} : (tensor<3xf32>) -> tensor<2x3x4x4xf32>
// CHECK-NEXT: %[[X:.*]] = hlo.subtract %arg0, %[[MB]]
// CHECK-NEXT: %[[FB:.*]] = hlo.broadcast_in_dim %[[F]] {broadcast_dimensions = [1]}
// CHECK-NEXT: %[[Y:.*]] = hlo.multiply %[[X]], %[[FB]]
// CHECK-NEXT: %[[BB:.*]] = hlo.broadcast_in_dim %arg2 {broadcast_dimensions = [1]}
// CHECK-NEXT: hlo.add %[[Y]], %[[BB]] : tensor<2x3x4x4xf32>
func.func @batch_norm(%x: tensor<2x3x4x4xf32>, %s: tensor<3xf32>, %b: tensor<3xf32>, %m: tensor<3xf32>, %v: tensor<3xf32>) -> tensor<2x3x4x4xf32> {
  %0 = graph.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-3 : f32} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  func.return %0 : tensor<2x3x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @flatten_reshape
// CHECK-NEXT: %[[F:.*]] = hlo.reshape %arg0 : (tensor<2x3x4x5xf32>) -> tensor<6x20xf32>
// CHECK-NEXT: %[[R:.*]] = hlo.reshape %[[F]] : (tensor<6x20xf32>) -> tensor<6x4x5xf32>
// CHECK-NEXT: func.return %[[R]]
func.func @flatten_reshape(%x: tensor<2x3x4x5xf32>) -> tensor<6x4x5xf32> {
  %0 = graph.flatten %x {axis = 2} : (tensor<2x3x4x5xf32>) -> tensor<6x20xf32>
  %1 = graph.reshape %0 {shape = [0, 4, -1]} : (tensor<6x20xf32>) -> tensor<6x4x5xf32>
  func.return %1 : tensor<6x4x5xf32>
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK-NEXT: %[[A:.*]] = hlo.transpose %arg0 {permutation = [0, 2, 3, 1]} : (tensor<1x3x2x5xf32>) -> tensor<1x2x5x3xf32>
// CHECK-NEXT: %[[B:.*]] = hlo.transpose %[[A]] {permutation = [3, 2, 1, 0]} : (tensor<1x2x5x3xf32>) -> tensor<3x5x2x1xf32>
func.func @transpose(%x: tensor<1x3x2x5xf32>) -> tensor<3x5x2x1xf32> {
  %0 = graph.transpose %x {perm = [0, 2, 3, 1]} : (tensor<1x3x2x5xf32>) -> tensor<1x2x5x3xf32>
  %1 = graph.transpose %0 : (tensor<1x2x5x3xf32>) -> tensor<3x5x2x1xf32>
  func.return %1 : tensor<3x5x2x1xf32>
}

// -----

// A negative axis is normalized against the rank.
// CHECK-LABEL: func.func @concat
// CHECK-NEXT: hlo.concatenate %arg0, %arg1, %arg2 {dimension = 1} : (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
func.func @concat(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>, %c: tensor<2x4xf32>) -> tensor<2x8xf32> {
  %0 = graph.concat %a, %b, %c {axis = -1} : (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}

// -----

// Stable softmax along axis 1 of a rank-3 tensor.
// CHECK-LABEL: func.func @softmax
// CHECK-NEXT: %[[NI:.*]] = hlo.constant {value = dense<0xFF800000> : tensor<f32>}
// CHECK-NEXT: %[[M:.*]] = "hlo.reduce"(%arg0, %[[NI]]) ({
// CHECK: hlo.maximum
// CHECK: }) {dimensions = [1]} : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x4xf32>
// CHECK-NEXT: %[[MB:.*]] = hlo.broadcast_in_dim %[[M]] {broadcast_dimensions = [0, 2]} : (tensor<2x4xf32>) -> tensor<2x3x4xf32>
// CHECK-NEXT: %[[D:.*]] = hlo.subtract %arg0, %[[MB]]
// CHECK-NEXT: %[[E:.*]] = hlo.exponential %[[D]]
// CHECK-NEXT: %[[ZI:.*]] = hlo.constant {value = dense<0.0> : tensor<f32>}
// CHECK-NEXT: %[[S:.*]] = "hlo.reduce"(%[[E]], %[[ZI]]) ({
// CHECK: hlo.add
// CHECK: }) {dimensions = [1]}
// CHECK-NEXT: %[[SB:.*]] = hlo.broadcast_in_dim %[[S]] {broadcast_dimensions = [0, 2]}
// CHECK-NEXT: %[[R:.*]] = hlo.divide %[[E]], %[[SB]] : tensor<2x3x4xf32>
// CHECK-NEXT: func.return %[[R]]
func.func @softmax(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = graph.softmax %x {axis = -2} : tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}
