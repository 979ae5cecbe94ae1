// Canonicalization patterns of the graph dialect.
// RUN: tessera-opt %s --canonicalize | FileCheck %s

// reshape/flatten chains fold into one reshape to the final shape.
// CHECK-LABEL: func.func @reshape_chain
// CHECK-NEXT: %0 = graph.reshape %arg0 {shape = [4, 6]} : (tensor<2x3x4xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: func.return %0 : tensor<4x6xf32>
func.func @reshape_chain(%x: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
  %0 = graph.reshape %x {shape = [6, -1]} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %1 = graph.reshape %0 {shape = [0, 2, 2]} : (tensor<6x4xf32>) -> tensor<6x2x2xf32>
  %2 = graph.flatten %1 : (tensor<6x2x2xf32>) -> tensor<6x4xf32>
  %3 = graph.reshape %2 {shape = [4, 6]} : (tensor<6x4xf32>) -> tensor<4x6xf32>
  func.return %3 : tensor<4x6xf32>
}

// A chain that comes back to the input's shape disappears.
// CHECK-LABEL: func.func @reshape_roundtrip
// CHECK-NEXT: %0 = graph.relu %arg0 : tensor<2x3xf32>
// CHECK-NEXT: func.return %0 : tensor<2x3xf32>
func.func @reshape_roundtrip(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.flatten %x {axis = 0} : (tensor<2x3xf32>) -> tensor<1x6xf32>
  %1 = graph.reshape %0 {shape = [2, 3]} : (tensor<1x6xf32>) -> tensor<2x3xf32>
  %2 = graph.relu %1 : tensor<2x3xf32>
  func.return %2 : tensor<2x3xf32>
}

// A flatten of reshape (and flatten of flatten) becomes one reshape.
// CHECK-LABEL: func.func @flatten_of_reshape
// CHECK-NEXT: %0 = graph.reshape %arg0 {shape = [2, 12]} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
// CHECK-NEXT: func.return %0 : tensor<2x12xf32>
func.func @flatten_of_reshape(%x: tensor<2x3x4xf32>) -> tensor<2x12xf32> {
  %0 = graph.reshape %x {shape = [2, 6, 2]} : (tensor<2x3x4xf32>) -> tensor<2x6x2xf32>
  %1 = graph.flatten %0 : (tensor<2x6x2xf32>) -> tensor<2x12xf32>
  func.return %1 : tensor<2x12xf32>
}

// Identity reshape and flatten are dropped.
// CHECK-LABEL: func.func @identity_reshape
// CHECK-NOT: graph.reshape
// CHECK-NOT: graph.flatten
// CHECK: func.return %arg0 : tensor<2x3xf32>
func.func @identity_reshape(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.reshape %x {shape = [2, 3]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = graph.flatten %0 : tensor<2x3xf32>
  func.return %1 : tensor<2x3xf32>
}

// Reshapes producing a 0-sized dimension are kept (0 in a shape means copy).
// CHECK-LABEL: func.func @reshape_zero_size
// CHECK-NEXT: graph.reshape %arg0 {shape = [-1]}
// CHECK-NEXT: graph.reshape %0 {shape = [-1, 3]}
func.func @reshape_zero_size(%x: tensor<3x0xf32>) -> tensor<0x3xf32> {
  %0 = graph.reshape %x {shape = [-1]} : (tensor<3x0xf32>) -> tensor<0xf32>
  %1 = graph.reshape %0 {shape = [-1, 3]} : (tensor<0xf32>) -> tensor<0x3xf32>
  func.return %1 : tensor<0x3xf32>
}

// transpose(transpose(x)) composes the permutations.
// CHECK-LABEL: func.func @transpose_chain
// CHECK-NEXT: %0 = graph.transpose %arg0 {perm = [1, 2, 0]} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
// CHECK-NEXT: func.return %0
func.func @transpose_chain(%x: tensor<2x3x4xf32>) -> tensor<3x4x2xf32> {
  %0 = graph.transpose %x {perm = [1, 0, 2]} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %1 = graph.transpose %0 {perm = [0, 2, 1]} : (tensor<3x2x4xf32>) -> tensor<3x4x2xf32>
  func.return %1 : tensor<3x4x2xf32>
}

// Transposes that cancel, and identity transposes, disappear.
// CHECK-LABEL: func.func @transpose_cancel
// CHECK-NEXT: %0 = graph.tanh %arg0 : tensor<2x3xf32>
// CHECK-NEXT: func.return %0
func.func @transpose_cancel(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.transpose %x : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = graph.transpose %0 {perm = [1, 0]} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %2 = graph.transpose %1 {perm = [0, 1]} : tensor<2x3xf32>
  %3 = graph.tanh %2 : tensor<2x3xf32>
  func.return %3 : tensor<2x3xf32>
}

// A square transpose keeps its type but is not the identity: kept.
// CHECK-LABEL: func.func @transpose_square
// CHECK-NEXT: %0 = graph.transpose %arg0 : tensor<3x3xf32>
func.func @transpose_square(%x: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %0 = graph.transpose %x : tensor<3x3xf32>
  func.return %0 : tensor<3x3xf32>
}

// relu is idempotent; a single-operand concat is its operand.
// CHECK-LABEL: func.func @relu_concat
// CHECK-NEXT: %0 = graph.relu %arg0 : tensor<2x3xf32>
// CHECK-NEXT: func.return %0 : tensor<2x3xf32>
func.func @relu_concat(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.relu %x : tensor<2x3xf32>
  %1 = graph.relu %0 : tensor<2x3xf32>
  %2 = graph.relu %1 : tensor<2x3xf32>
  %3 = graph.concat %2 {axis = 1} : tensor<2x3xf32>
  func.return %3 : tensor<2x3xf32>
}

// relu feeding something else is kept when shared.
// CHECK-LABEL: func.func @relu_shared
// CHECK-NEXT: %0 = graph.relu %arg0
// CHECK-NEXT: %1 = graph.add %0, %0
// CHECK-NEXT: func.return %1
func.func @relu_shared(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.relu %x : tensor<2x3xf32>
  %1 = graph.relu %0 : tensor<2x3xf32>
  %2 = graph.add %0, %1 : tensor<2x3xf32>
  func.return %2 : tensor<2x3xf32>
}
