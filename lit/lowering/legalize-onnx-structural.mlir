// RUN: tessera-opt %s --split-input-file --legalize-to-hlo | FileCheck %s
// RUN: tessera-opt %s --split-input-file --legalize-to-hlo | FileCheck %s --check-prefix=NOGRAPH
// RUN: tessera-opt %s --split-input-file --legalize-to-hlo --canonicalize --cse --fuse | FileCheck %s --check-prefix=FUSED

// The structural graph ops become existing hlo primitives (see
// lowering/legalize_reduce.go and legalize_slice.go); no graph op remains.
// NOGRAPH-NOT: graph.
// After fuse every chunk is fused, down to the last one (tile).
// FUSED-NOT: graph.
// FUSED-LABEL: func.func @tile
// FUSED: "hlo.fusion"

// Sum over one axis with keepdims: reduce, then reshape back to rank 3.
// CHECK-LABEL: func.func @reduce_sum
// CHECK-NEXT: %0 = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
// CHECK-NEXT: %1 = "hlo.reduce"(%arg0, %0) ({
// CHECK-NEXT: ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
// CHECK-NEXT: %2 = hlo.add %arg1, %arg2 : tensor<f32>
// CHECK-NEXT: hlo.return %2 : tensor<f32>
// CHECK-NEXT: }) {dimensions = [1]} : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x4xf32>
// CHECK-NEXT: %3 = hlo.reshape %1 : (tensor<2x4xf32>) -> tensor<2x1x4xf32>
// CHECK-NEXT: func.return %3 : tensor<2x1x4xf32>
func.func @reduce_sum(%x: tensor<2x3x4xf32>) -> tensor<2x1x4xf32> {
  %0 = graph.reduce_sum %x {axes = [-2]} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  func.return %0 : tensor<2x1x4xf32>
}

// -----

// Mean without keepdims: the sum divided by the reduced element count.
// CHECK-LABEL: func.func @reduce_mean
// CHECK-NEXT: %0 = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
// CHECK-NEXT: %1 = "hlo.reduce"(%arg0, %0) ({
// CHECK-NEXT: ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
// CHECK-NEXT: %2 = hlo.add %arg1, %arg2 : tensor<f32>
// CHECK-NEXT: hlo.return %2 : tensor<f32>
// CHECK-NEXT: }) {dimensions = [0, 2]} : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK-NEXT: %3 = hlo.constant {value = dense<8.0> : tensor<3xf32>} : tensor<3xf32>
// CHECK-NEXT: %4 = hlo.divide %1, %3 : tensor<3xf32>
// CHECK-NEXT: func.return %4 : tensor<3xf32>
func.func @reduce_mean(%x: tensor<2x3x4xf32>) -> tensor<3xf32> {
  %0 = graph.reduce_mean %x {axes = [0, 2], keepdims = false} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_max_min_prod
// CHECK-NEXT: %0 = hlo.constant {value = dense<0xFF800000> : tensor<f32>} : tensor<f32>
// CHECK-NEXT: %1 = "hlo.reduce"(%arg0, %0) ({
// CHECK-NEXT: ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
// CHECK-NEXT: %2 = hlo.maximum %arg1, %arg2 : tensor<f32>
// CHECK-NEXT: hlo.return %2 : tensor<f32>
// CHECK-NEXT: }) {dimensions = [0, 1]} : (tensor<2x3xf32>, tensor<f32>) -> tensor<f32>
// CHECK-NEXT: %3 = hlo.constant {value = dense<0x7F800000> : tensor<f32>} : tensor<f32>
// CHECK-NEXT: %4 = "hlo.reduce"(%arg0, %3) ({
// CHECK-NEXT: ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
// CHECK-NEXT: %5 = hlo.minimum %arg3, %arg4 : tensor<f32>
// CHECK-NEXT: hlo.return %5 : tensor<f32>
// CHECK-NEXT: }) {dimensions = [1]} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK-NEXT: %6 = hlo.constant {value = dense<1.0> : tensor<f32>} : tensor<f32>
// CHECK-NEXT: %7 = "hlo.reduce"(%arg0, %6) ({
// CHECK-NEXT: ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
// CHECK-NEXT: %8 = hlo.multiply %arg5, %arg6 : tensor<f32>
// CHECK-NEXT: hlo.return %8 : tensor<f32>
// CHECK-NEXT: }) {dimensions = [0]} : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK-NEXT: %9 = hlo.reshape %7 : (tensor<3xf32>) -> tensor<1x3xf32>
// CHECK-NEXT: func.return %1, %4, %9 : tensor<f32>, tensor<2xf32>, tensor<1x3xf32>
func.func @reduce_max_min_prod(%x: tensor<2x3xf32>) -> (tensor<f32>, tensor<2xf32>, tensor<1x3xf32>) {
  %0 = graph.reduce_max %x {keepdims = false} : (tensor<2x3xf32>) -> tensor<f32>
  %1 = graph.reduce_min %x {axes = [1], keepdims = false} : (tensor<2x3xf32>) -> tensor<2xf32>
  %2 = graph.reduce_prod %x {axes = [0]} : (tensor<2x3xf32>) -> tensor<1x3xf32>
  func.return %0, %1, %2 : tensor<f32>, tensor<2xf32>, tensor<1x3xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_l2
// CHECK-NEXT: %0 = hlo.multiply %arg0, %arg0 : tensor<2x3xf32>
// CHECK-NEXT: %1 = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
// CHECK-NEXT: %2 = "hlo.reduce"(%0, %1) ({
// CHECK-NEXT: ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
// CHECK-NEXT: %3 = hlo.add %arg1, %arg2 : tensor<f32>
// CHECK-NEXT: hlo.return %3 : tensor<f32>
// CHECK-NEXT: }) {dimensions = [1]} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK-NEXT: %4 = hlo.sqrt %2 : tensor<2xf32>
// CHECK-NEXT: func.return %4 : tensor<2xf32>
func.func @reduce_l2(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  %0 = graph.reduce_l2 %x {axes = [1], keepdims = false} : (tensor<2x3xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

// log_sum_exp in the stable form, the shift zeroed where the max is not finite.
// CHECK-LABEL: func.func @reduce_log_sum_exp
// CHECK-NEXT: %0 = hlo.constant {value = dense<0xFF800000> : tensor<f32>} : tensor<f32>
// CHECK-NEXT: %1 = "hlo.reduce"(%arg0, %0) ({
// CHECK-NEXT: ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
// CHECK-NEXT: %2 = hlo.maximum %arg1, %arg2 : tensor<f32>
// CHECK-NEXT: hlo.return %2 : tensor<f32>
// CHECK-NEXT: }) {dimensions = [1]} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK-NEXT: %3 = hlo.abs %1 : tensor<2xf32>
// CHECK-NEXT: %4 = hlo.constant {value = dense<0x7F800000> : tensor<2xf32>} : tensor<2xf32>
// CHECK-NEXT: %5 = hlo.compare %3, %4 {comparison_direction = "LT"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
// CHECK-NEXT: %6 = hlo.constant {value = dense<0.0> : tensor<2xf32>} : tensor<2xf32>
// CHECK-NEXT: %7 = hlo.select %5, %1, %6 : (tensor<2xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
// CHECK-NEXT: %8 = hlo.broadcast_in_dim %7 {broadcast_dimensions = [0]} : (tensor<2xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %9 = hlo.subtract %arg0, %8 : tensor<2x3xf32>
// CHECK-NEXT: %10 = hlo.exponential %9 : tensor<2x3xf32>
// CHECK-NEXT: %11 = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
// CHECK-NEXT: %12 = "hlo.reduce"(%10, %11) ({
// CHECK-NEXT: ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
// CHECK-NEXT: %13 = hlo.add %arg3, %arg4 : tensor<f32>
// CHECK-NEXT: hlo.return %13 : tensor<f32>
// CHECK-NEXT: }) {dimensions = [1]} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK-NEXT: %14 = hlo.log %12 : tensor<2xf32>
// CHECK-NEXT: %15 = hlo.add %14, %7 : tensor<2xf32>
// CHECK-NEXT: %16 = hlo.reshape %15 : (tensor<2xf32>) -> tensor<2x1xf32>
// CHECK-NEXT: func.return %16 : tensor<2x1xf32>
func.func @reduce_log_sum_exp(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
  %0 = graph.reduce_log_sum_exp %x {axes = [1]} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  func.return %0 : tensor<2x1xf32>
}

// -----

// CHECK-LABEL: func.func @log_softmax
// CHECK-NEXT: %0 = hlo.constant {value = dense<0xFF800000> : tensor<f32>} : tensor<f32>
// CHECK-NEXT: %1 = "hlo.reduce"(%arg0, %0) ({
// CHECK-NEXT: ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
// CHECK-NEXT: %2 = hlo.maximum %arg1, %arg2 : tensor<f32>
// CHECK-NEXT: hlo.return %2 : tensor<f32>
// CHECK-NEXT: }) {dimensions = [1]} : (tensor<2x5xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK-NEXT: %3 = hlo.broadcast_in_dim %1 {broadcast_dimensions = [0]} : (tensor<2xf32>) -> tensor<2x5xf32>
// CHECK-NEXT: %4 = hlo.subtract %arg0, %3 : tensor<2x5xf32>
// CHECK-NEXT: %5 = hlo.exponential %4 : tensor<2x5xf32>
// CHECK-NEXT: %6 = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
// CHECK-NEXT: %7 = "hlo.reduce"(%5, %6) ({
// CHECK-NEXT: ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
// CHECK-NEXT: %8 = hlo.add %arg3, %arg4 : tensor<f32>
// CHECK-NEXT: hlo.return %8 : tensor<f32>
// CHECK-NEXT: }) {dimensions = [1]} : (tensor<2x5xf32>, tensor<f32>) -> tensor<2xf32>
// CHECK-NEXT: %9 = hlo.log %7 : tensor<2xf32>
// CHECK-NEXT: %10 = hlo.broadcast_in_dim %9 {broadcast_dimensions = [0]} : (tensor<2xf32>) -> tensor<2x5xf32>
// CHECK-NEXT: %11 = hlo.subtract %4, %10 : tensor<2x5xf32>
// CHECK-NEXT: func.return %11 : tensor<2x5xf32>
func.func @log_softmax(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = graph.log_softmax %x : tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}

// -----

// One slice per piece.
// CHECK-LABEL: func.func @split
// CHECK-NEXT: %0 = hlo.slice %arg0 {limit_indices = [2, 3], start_indices = [0, 0], strides = [1, 1]} : (tensor<2x7xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %1 = hlo.slice %arg0 {limit_indices = [2, 7], start_indices = [0, 3], strides = [1, 1]} : (tensor<2x7xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: func.return %0, %1 : tensor<2x3xf32>, tensor<2x4xf32>
func.func @split(%x: tensor<2x7xf32>) -> (tensor<2x3xf32>, tensor<2x4xf32>) {
  %0:2 = graph.split %x {axis = 1, split = [3, 4]} : (tensor<2x7xf32>) -> (tensor<2x3xf32>, tensor<2x4xf32>)
  func.return %0#0, %0#1 : tensor<2x3xf32>, tensor<2x4xf32>
}

// -----

// Positive steps: one slice with the clamped bounds.
// CHECK-LABEL: func.func @slice
// CHECK-NEXT: %0 = hlo.slice %arg0 {limit_indices = [6, 4], start_indices = [1, 1], strides = [2, 2]} : (tensor<6x5xf32>) -> tensor<3x2xf32>
// CHECK-NEXT: func.return %0 : tensor<3x2xf32>
func.func @slice(%x: tensor<6x5xf32>) -> tensor<3x2xf32> {
  %0 = graph.slice %x {starts = [1, -4], ends = [100, 5], steps = [2, 2]} : (tensor<6x5xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// -----

// A negative step: the same elements in ascending order by a strided
// slice, then reversed by concatenating one-element slices.
// CHECK-LABEL: func.func @slice_reversed
// CHECK-NEXT: %0 = hlo.slice %arg0 {limit_indices = [2, 7], start_indices = [0, 0], strides = [1, 3]} : (tensor<2x7xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %1 = hlo.slice %0 {limit_indices = [2, 3], start_indices = [0, 2], strides = [1, 1]} : (tensor<2x3xf32>) -> tensor<2x1xf32>
// CHECK-NEXT: %2 = hlo.slice %0 {limit_indices = [2, 2], start_indices = [0, 1], strides = [1, 1]} : (tensor<2x3xf32>) -> tensor<2x1xf32>
// CHECK-NEXT: %3 = hlo.slice %0 {limit_indices = [2, 1], start_indices = [0, 0], strides = [1, 1]} : (tensor<2x3xf32>) -> tensor<2x1xf32>
// CHECK-NEXT: %4 = hlo.concatenate %1, %2, %3 {dimension = 1} : (tensor<2x1xf32>, tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: func.return %4 : tensor<2x3xf32>
func.func @slice_reversed(%x: tensor<2x7xf32>) -> tensor<2x3xf32> {
  %0 = graph.slice %x {axes = [-1], starts = [-1], ends = [-100], steps = [-3]} : (tensor<2x7xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

// Gather: ascending runs become strided slices, repeats a broadcast,
// then a reshape to indices' shape.
// CHECK-LABEL: func.func @gather
// CHECK-NEXT: %0 = hlo.slice %arg0 {limit_indices = [5, 3], start_indices = [0, 0], strides = [2, 1]} : (tensor<5x3xf32>) -> tensor<3x3xf32>
// CHECK-NEXT: %1 = hlo.slice %arg0 {limit_indices = [5, 3], start_indices = [4, 0], strides = [1, 1]} : (tensor<5x3xf32>) -> tensor<1x3xf32>
// CHECK-NEXT: %2 = hlo.broadcast_in_dim %1 {broadcast_dimensions = [0, 1]} : (tensor<1x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %3 = hlo.slice %arg0 {limit_indices = [2, 3], start_indices = [1, 0], strides = [1, 1]} : (tensor<5x3xf32>) -> tensor<1x3xf32>
// CHECK-NEXT: %4 = hlo.concatenate %0, %2, %3 {dimension = 0} : (tensor<3x3xf32>, tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<6x3xf32>
// CHECK-NEXT: %5 = hlo.reshape %4 : (tensor<6x3xf32>) -> tensor<2x3x3xf32>
// CHECK-NEXT: func.return %5 : tensor<2x3x3xf32>
func.func @gather(%x: tensor<5x3xf32>) -> tensor<2x3x3xf32> {
  %0 = graph.gather %x {indices = dense<[[0, 2, 4], [-1, -1, 1]]> : tensor<2x3xi64>} : (tensor<5x3xf32>) -> tensor<2x3x3xf32>
  func.return %0 : tensor<2x3x3xf32>
}

// -----

// Constant pad (negative pads crop) is one hlo.pad.
// CHECK-LABEL: func.func @pad_constant
// CHECK-NEXT: %0 = hlo.constant {value = dense<0.5> : tensor<f32>} : tensor<f32>
// CHECK-NEXT: %1 = hlo.pad %arg0, %0 {edge_padding_high = [0, -2], edge_padding_low = [1, 2], interior_padding = [0, 0]} : (tensor<3x4xf32>, tensor<f32>) -> tensor<4x4xf32>
// CHECK-NEXT: func.return %1 : tensor<4x4xf32>
func.func @pad_constant(%x: tensor<3x4xf32>) -> tensor<4x4xf32> {
  %0 = graph.pad %x {pads = [1, 2, 0, -2], value = 0.5 : f32} : (tensor<3x4xf32>) -> tensor<4x4xf32>
  func.return %0 : tensor<4x4xf32>
}

// -----

// Reflect: mirrored one-element slices around the tensor.
// CHECK-LABEL: func.func @pad_reflect
// CHECK-NEXT: %0 = hlo.slice %arg0 {limit_indices = [3], start_indices = [2], strides = [1]} : (tensor<4xf32>) -> tensor<1xf32>
// CHECK-NEXT: %1 = hlo.slice %arg0 {limit_indices = [2], start_indices = [1], strides = [1]} : (tensor<4xf32>) -> tensor<1xf32>
// CHECK-NEXT: %2 = hlo.slice %arg0 {limit_indices = [3], start_indices = [2], strides = [1]} : (tensor<4xf32>) -> tensor<1xf32>
// CHECK-NEXT: %3 = hlo.concatenate %0, %1, %arg0, %2 {dimension = 0} : (tensor<1xf32>, tensor<1xf32>, tensor<4xf32>, tensor<1xf32>) -> tensor<7xf32>
// CHECK-NEXT: func.return %3 : tensor<7xf32>
func.func @pad_reflect(%x: tensor<4xf32>) -> tensor<7xf32> {
  %0 = graph.pad %x {mode = "reflect", pads = [2, 1]} : (tensor<4xf32>) -> tensor<7xf32>
  func.return %0 : tensor<7xf32>
}

// -----

// Edge: the border element broadcast to the pad width; a crop first.
// CHECK-LABEL: func.func @pad_edge
// CHECK-NEXT: %0 = hlo.slice %arg0 {limit_indices = [4], start_indices = [1], strides = [1]} : (tensor<4xf32>) -> tensor<3xf32>
// CHECK-NEXT: %1 = hlo.slice %0 {limit_indices = [3], start_indices = [2], strides = [1]} : (tensor<3xf32>) -> tensor<1xf32>
// CHECK-NEXT: %2 = hlo.broadcast_in_dim %1 {broadcast_dimensions = [0]} : (tensor<1xf32>) -> tensor<2xf32>
// CHECK-NEXT: %3 = hlo.concatenate %0, %2 {dimension = 0} : (tensor<3xf32>, tensor<2xf32>) -> tensor<5xf32>
// CHECK-NEXT: func.return %3 : tensor<5xf32>
func.func @pad_edge(%x: tensor<4xf32>) -> tensor<5xf32> {
  %0 = graph.pad %x {mode = "edge", pads = [-1, 2]} : (tensor<4xf32>) -> tensor<5xf32>
  func.return %0 : tensor<5xf32>
}

// -----

// CHECK-LABEL: func.func @expand
// CHECK-NEXT: %0 = hlo.broadcast_in_dim %arg0 {broadcast_dimensions = [1, 2]} : (tensor<3x1xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT: func.return %0 : tensor<2x3x5xf32>
func.func @expand(%x: tensor<3x1xf32>) -> tensor<2x3x5xf32> {
  %0 = graph.expand %x {shape = [2, 1, 5]} : (tensor<3x1xf32>) -> tensor<2x3x5xf32>
  func.return %0 : tensor<2x3x5xf32>
}

// -----

// CHECK-LABEL: func.func @tile
// CHECK-NEXT: %0 = hlo.broadcast_in_dim %arg0 {broadcast_dimensions = [1, 3]} : (tensor<2x3xf32>) -> tensor<2x2x3x3xf32>
// CHECK-NEXT: %1 = hlo.reshape %0 : (tensor<2x2x3x3xf32>) -> tensor<4x9xf32>
// CHECK-NEXT: func.return %1 : tensor<4x9xf32>
func.func @tile(%x: tensor<2x3xf32>) -> tensor<4x9xf32> {
  %0 = graph.tile %x {repeats = [2, 3]} : (tensor<2x3xf32>) -> tensor<4x9xf32>
  func.return %0 : tensor<4x9xf32>
}
