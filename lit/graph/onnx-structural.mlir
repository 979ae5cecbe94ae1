// The structural graph ops (reductions, log_softmax, split, slice, gather,
// pad, expand, tile) parse, verify and print back in their pretty form; the
// printed text parses again to the same IR, and so does the generic form.
// RUN: tessera-opt %s | tessera-opt | FileCheck %s
// RUN: tessera-opt %s --mlir-print-op-generic | tessera-opt | FileCheck %s

// CHECK-LABEL: func.func @reduce
// CHECK-NEXT: %0 = graph.reduce_sum %arg0 {axes = [1]} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
// CHECK-NEXT: %1 = graph.reduce_mean %arg0 {axes = [-1, 1], keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2xf32>
// CHECK-NEXT: %2 = graph.reduce_max %arg0 : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
// CHECK-NEXT: %3 = graph.reduce_min %arg0 {axes = [], keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
// CHECK-NEXT: %4 = graph.reduce_prod %arg0 {axes = [2]} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
// CHECK-NEXT: %5 = graph.reduce_l2 %arg0 {axes = [0, 2], keepdims = false} : (tensor<2x3x4xf32>) -> tensor<3xf32>
// CHECK-NEXT: %6 = graph.reduce_log_sum_exp %arg0 {noop_with_empty_axes = true} : tensor<2x3x4xf32>
// CHECK-NEXT: %7 = graph.reduce_sum %arg0 {axes = [-1, -2], keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x1x1xf32>
// CHECK-NEXT: func.return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<2x1x4xf32>, tensor<2xf32>, tensor<1x1x1xf32>, tensor<f32>, tensor<2x3x1xf32>, tensor<3xf32>, tensor<2x3x4xf32>, tensor<2x1x1xf32>
func.func @reduce(%x: tensor<2x3x4xf32>) -> (tensor<2x1x4xf32>, tensor<2xf32>, tensor<1x1x1xf32>, tensor<f32>, tensor<2x3x1xf32>, tensor<3xf32>, tensor<2x3x4xf32>, tensor<2x1x1xf32>) {
  %0 = graph.reduce_sum %x {axes = [1]} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  %1 = "graph.reduce_mean"(%x) {axes = [-1, 1], keepdims = false} : (tensor<2x3x4xf32>) -> tensor<2xf32>
  %2 = graph.reduce_max %x : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
  %3 = graph.reduce_min %x {axes = [], keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  %4 = graph.reduce_prod %x {axes = [2]} : (tensor<2x3x4xf32>) -> tensor<2x3x1xf32>
  %5 = graph.reduce_l2 %x {axes = [0, 2], keepdims = false} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  %6 = graph.reduce_log_sum_exp %x {noop_with_empty_axes = true} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %7 = graph.reduce_sum %x {axes = [-1, -2], keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x1x1xf32>
  func.return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<2x1x4xf32>, tensor<2xf32>, tensor<1x1x1xf32>, tensor<f32>, tensor<2x3x1xf32>, tensor<3xf32>, tensor<2x3x4xf32>, tensor<2x1x1xf32>
}

// CHECK-LABEL: func.func @reduce_int
// CHECK-NEXT: %0 = graph.reduce_sum %arg0 {axes = [0], keepdims = false} : (tensor<5x2xi32>) -> tensor<2xi32>
// CHECK-NEXT: func.return %0 : tensor<2xi32>
func.func @reduce_int(%x: tensor<5x2xi32>) -> tensor<2xi32> {
  %0 = graph.reduce_sum %x {axes = [0], keepdims = false} : (tensor<5x2xi32>) -> tensor<2xi32>
  func.return %0 : tensor<2xi32>
}

// CHECK-LABEL: func.func @log_softmax
// CHECK-NEXT: %0 = graph.log_softmax %arg0 : tensor<2x5xf32>
// CHECK-NEXT: %1 = graph.log_softmax %arg0 {axis = 0} : tensor<2x5xf32>
// CHECK-NEXT: func.return %0, %1 : tensor<2x5xf32>, tensor<2x5xf32>
func.func @log_softmax(%x: tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>) {
  %0 = graph.log_softmax %x : tensor<2x5xf32>
  %1 = "graph.log_softmax"(%x) {axis = 0} : (tensor<2x5xf32>) -> tensor<2x5xf32>
  func.return %0, %1 : tensor<2x5xf32>, tensor<2x5xf32>
}

// CHECK-LABEL: func.func @split
// CHECK-NEXT: %0:2 = graph.split %arg0 {axis = 1, split = [3, 4]} : (tensor<2x7xf32>) -> (tensor<2x3xf32>, tensor<2x4xf32>)
// CHECK-NEXT: %1:2 = graph.split %arg0 : (tensor<2x7xf32>) -> (tensor<1x7xf32>, tensor<1x7xf32>)
// CHECK-NEXT: %2:3 = graph.split %arg0 {axis = -1, num_outputs = 3} : (tensor<2x7xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x1xf32>)
// CHECK-NEXT: %3:2 = graph.split %arg0 {axis = 1, split = [0, 7]} : (tensor<2x7xf32>) -> (tensor<2x0xf32>, tensor<2x7xf32>)
// CHECK-NEXT: %4 = graph.reshape %2#0 {shape = [3, 2]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT: func.return %0#0, %0#1, %1#1, %4 : tensor<2x3xf32>, tensor<2x4xf32>, tensor<1x7xf32>, tensor<3x2xf32>
func.func @split(%x: tensor<2x7xf32>) -> (tensor<2x3xf32>, tensor<2x4xf32>, tensor<1x7xf32>, tensor<3x2xf32>) {
  %0:2 = graph.split %x {axis = 1, split = [3, 4]} : (tensor<2x7xf32>) -> (tensor<2x3xf32>, tensor<2x4xf32>)
  %1:2 = "graph.split"(%x) : (tensor<2x7xf32>) -> (tensor<1x7xf32>, tensor<1x7xf32>)
  %2:3 = graph.split %x {axis = -1, num_outputs = 3} : (tensor<2x7xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x1xf32>)
  %3:2 = graph.split %x {axis = 1, split = [0, 7]} : (tensor<2x7xf32>) -> (tensor<2x0xf32>, tensor<2x7xf32>)
  %4 = graph.reshape %2#0 {shape = [3, 2]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %0#0, %0#1, %1#1, %4 : tensor<2x3xf32>, tensor<2x4xf32>, tensor<1x7xf32>, tensor<3x2xf32>
}

// CHECK-LABEL: func.func @slice
// CHECK-NEXT: %0 = graph.slice %arg0 {ends = [3], starts = [1]} : (tensor<6x5xf32>) -> tensor<2x5xf32>
// CHECK-NEXT: %1 = graph.slice %arg0 {axes = [-1], ends = [-100], starts = [-1], steps = [-3]} : (tensor<6x5xf32>) -> tensor<6x2xf32>
// CHECK-NEXT: %2 = graph.slice %arg0 {ends = [-9223372036854775808], starts = [9223372036854775807], steps = [-2]} : (tensor<6x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT: %3 = graph.slice %arg0 {axes = [0], ends = [20], starts = [10]} : (tensor<6x5xf32>) -> tensor<0x5xf32>
// CHECK-NEXT: func.return %0, %1, %2, %3 : tensor<2x5xf32>, tensor<6x2xf32>, tensor<3x5xf32>, tensor<0x5xf32>
func.func @slice(%x: tensor<6x5xf32>) -> (tensor<2x5xf32>, tensor<6x2xf32>, tensor<3x5xf32>, tensor<0x5xf32>) {
  %0 = graph.slice %x {starts = [1], ends = [3]} : (tensor<6x5xf32>) -> tensor<2x5xf32>
  %1 = graph.slice %x {axes = [-1], ends = [-100], starts = [-1], steps = [-3]} : (tensor<6x5xf32>) -> tensor<6x2xf32>
  %2 = "graph.slice"(%x) {starts = [9223372036854775807], ends = [-9223372036854775808], steps = [-2]} : (tensor<6x5xf32>) -> tensor<3x5xf32>
  %3 = graph.slice %x {starts = [10], ends = [20], axes = [0]} : (tensor<6x5xf32>) -> tensor<0x5xf32>
  func.return %0, %1, %2, %3 : tensor<2x5xf32>, tensor<6x2xf32>, tensor<3x5xf32>, tensor<0x5xf32>
}

// CHECK-LABEL: func.func @gather
// CHECK-NEXT: %0 = graph.gather %arg0 {indices = dense<{{\[\[}}0, -1], [3, 3]]> : tensor<2x2xi64>} : (tensor<4x3xf32>) -> tensor<2x2x3xf32>
// CHECK-NEXT: %1 = graph.gather %arg0 {axis = -1, indices = dense<2> : tensor<i64>} : (tensor<4x3xf32>) -> tensor<4xf32>
// CHECK-NEXT: %2 = graph.gather %arg0 {axis = 1, indices = dense<[2, 0, 1]> : tensor<3xi32>} : tensor<4x3xf32>
// CHECK-NEXT: func.return %0, %1, %2 : tensor<2x2x3xf32>, tensor<4xf32>, tensor<4x3xf32>
func.func @gather(%x: tensor<4x3xf32>) -> (tensor<2x2x3xf32>, tensor<4xf32>, tensor<4x3xf32>) {
  %0 = graph.gather %x {indices = dense<[[0, -1], [3, 3]]> : tensor<2x2xi64>} : (tensor<4x3xf32>) -> tensor<2x2x3xf32>
  %1 = graph.gather %x {axis = -1, indices = dense<2> : tensor<i64>} : (tensor<4x3xf32>) -> tensor<4xf32>
  %2 = "graph.gather"(%x) {axis = 1, indices = dense<[2, 0, 1]> : tensor<3xi32>} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %0, %1, %2 : tensor<2x2x3xf32>, tensor<4xf32>, tensor<4x3xf32>
}

// CHECK-LABEL: func.func @pad
// CHECK-NEXT: %0 = graph.pad %arg0 {pads = [1, 2, 0, 1], value = 0.5 : f32} : (tensor<3x4xf32>) -> tensor<4x7xf32>
// CHECK-NEXT: %1 = graph.pad %arg0 {pads = [-1, 1, 0, -1]} : (tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %2 = graph.pad %arg0 {mode = "reflect", pads = [3, 2, 3, 2]} : (tensor<3x4xf32>) -> tensor<9x8xf32>
// CHECK-NEXT: %3 = graph.pad %arg0 {mode = "edge", pads = [2, 0, 0, 0]} : (tensor<3x4xf32>) -> tensor<5x4xf32>
// CHECK-NEXT: func.return %0, %1, %2, %3 : tensor<4x7xf32>, tensor<2x4xf32>, tensor<9x8xf32>, tensor<5x4xf32>
func.func @pad(%x: tensor<3x4xf32>) -> (tensor<4x7xf32>, tensor<2x4xf32>, tensor<9x8xf32>, tensor<5x4xf32>) {
  %0 = graph.pad %x {pads = [1, 2, 0, 1], value = 0.5 : f32} : (tensor<3x4xf32>) -> tensor<4x7xf32>
  %1 = graph.pad %x {pads = [-1, 1, 0, -1]} : (tensor<3x4xf32>) -> tensor<2x4xf32>
  %2 = graph.pad %x {mode = "reflect", pads = [3, 2, 3, 2]} : (tensor<3x4xf32>) -> tensor<9x8xf32>
  %3 = "graph.pad"(%x) {mode = "edge", pads = [2, 0, 0, 0]} : (tensor<3x4xf32>) -> tensor<5x4xf32>
  func.return %0, %1, %2, %3 : tensor<4x7xf32>, tensor<2x4xf32>, tensor<9x8xf32>, tensor<5x4xf32>
}

// CHECK-LABEL: func.func @expand_tile
// CHECK-NEXT: %0 = graph.expand %arg0 {shape = [2, 1, 5]} : (tensor<3x1xf32>) -> tensor<2x3x5xf32>
// CHECK-NEXT: %1 = graph.expand %arg0 {shape = [1]} : tensor<3x1xf32>
// CHECK-NEXT: %2 = graph.tile %arg0 {repeats = [2, 4]} : (tensor<3x1xf32>) -> tensor<6x4xf32>
// CHECK-NEXT: func.return %0, %1, %2 : tensor<2x3x5xf32>, tensor<3x1xf32>, tensor<6x4xf32>
func.func @expand_tile(%x: tensor<3x1xf32>) -> (tensor<2x3x5xf32>, tensor<3x1xf32>, tensor<6x4xf32>) {
  %0 = graph.expand %x {shape = [2, 1, 5]} : (tensor<3x1xf32>) -> tensor<2x3x5xf32>
  %1 = graph.expand %x {shape = [1]} : (tensor<3x1xf32>) -> tensor<3x1xf32>
  %2 = graph.tile %x {repeats = [2, 4]} : (tensor<3x1xf32>) -> tensor<6x4xf32>
  func.return %0, %1, %2 : tensor<2x3x5xf32>, tensor<3x1xf32>, tensor<6x4xf32>
}
