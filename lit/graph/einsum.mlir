// graph.einsum: printing, legalization (contractions to one
// hlo.dot_general each, diagonals by reshape and a strided slice, outer
// products by broadcast and multiply, summed letters by reduce, output
// order by transpose) and fusion.
// RUN: tessera-opt %s | FileCheck %s
// RUN: tessera-opt %s | tessera-opt | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo | FileCheck %s --check-prefix=HLO
// RUN: tessera-opt %s --legalize-to-hlo --fuse | FileCheck %s --check-prefix=FUSE

// CHECK: %0 = graph.einsum %arg0, %arg1 {equation = "bhqd,bhkd->bhqk"} : (tensor<2x3x5x4xf32>, tensor<2x3x7x4xf32>) -> tensor<2x3x5x7xf32>
// CHECK: %1 = graph.einsum %0, %arg2 {equation = "bhqk,bhkd->bhqd"} : (tensor<2x3x5x7xf32>, tensor<2x3x7x4xf32>) -> tensor<2x3x5x4xf32>
// CHECK: %2 = graph.einsum %arg7, %arg8 {equation = "bqhd,bkhd->bhqk"} : (tensor<2x5x3x4xf32>, tensor<2x7x3x4xf32>) -> tensor<2x3x5x7xf32>
// CHECK: %3 = graph.einsum %arg3 {equation = "...ii ->...i"} : (tensor<2x5x5xf64>) -> tensor<2x5xf64>
// CHECK: %4 = graph.einsum %arg4, %arg5 {equation = "i,j->ij"} : (tensor<3xf32>, tensor<4xf32>) -> tensor<3x4xf32>
// CHECK: %5 = graph.einsum %arg6 {equation = "ij->ji"} : (tensor<3x4xf32>) -> tensor<4x3xf32>
// CHECK: %6 = graph.einsum %arg4, %arg4 {equation = "i,i"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
// CHECK: %7 = graph.einsum %arg6, %arg5, %arg4 {equation = "ij,j,i->i"} : (tensor<3x4xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK: %8 = graph.einsum %arg9 {equation = "iaib->bia"} : (tensor<4x2x4x3xi64>) -> tensor<3x4x2xi64>
// CHECK: %9 = graph.einsum %arg6, %arg5 {equation = "ij,k->j"} : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<4xf32>

// Attention scores and values: one batched dot_general each, no transpose.
// HLO: %0 = hlo.dot_general %arg0, %arg1 {lhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_batching_dimensions = [0, 1], rhs_contracting_dimensions = [3]} : (tensor<2x3x5x4xf32>, tensor<2x3x7x4xf32>) -> tensor<2x3x5x7xf32>
// HLO: %1 = hlo.dot_general %0, %arg2 {lhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_batching_dimensions = [0, 1], rhs_contracting_dimensions = [2]} : (tensor<2x3x5x7xf32>, tensor<2x3x7x4xf32>) -> tensor<2x3x5x4xf32>
// The bqhd layout batches over dims 0 and 2 and comes out in output order.
// HLO: %2 = hlo.dot_general %arg7, %arg8 {lhs_batching_dimensions = [0, 2], lhs_contracting_dimensions = [3], rhs_batching_dimensions = [0, 2], rhs_contracting_dimensions = [3]} : (tensor<2x5x3x4xf32>, tensor<2x7x3x4xf32>) -> tensor<2x3x5x7xf32>
// The diagonal of 5x5 matrices: element t at t*6 of the merged 25.
// HLO: %3 = hlo.reshape %arg3 : (tensor<2x5x5xf64>) -> tensor<2x25xf64>
// HLO: %4 = hlo.slice %3 {limit_indices = [2, 25], start_indices = [0, 0], strides = [1, 6]} : (tensor<2x25xf64>) -> tensor<2x5xf64>
// Outer product: broadcast both, multiply.
// HLO: %5 = hlo.broadcast_in_dim %arg4 {broadcast_dimensions = [0]} : (tensor<3xf32>) -> tensor<3x4xf32>
// HLO: %6 = hlo.broadcast_in_dim %arg5 {broadcast_dimensions = [1]} : (tensor<4xf32>) -> tensor<3x4xf32>
// HLO: %7 = hlo.multiply %5, %6 : tensor<3x4xf32>
// HLO: %8 = hlo.transpose %arg6 {permutation = [1, 0]} : (tensor<3x4xf32>) -> tensor<4x3xf32>
// HLO: %9 = hlo.dot_general %arg4, %arg4 {lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]} : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
// Three operands: the matrix-vector product first (the smaller result).
// HLO: %10 = hlo.dot_general %arg6, %arg5 {lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]} : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>
// HLO: %11 = hlo.multiply %10, %arg4 : tensor<3xf32>
// Diagonal over non-adjacent dims: the repeated dims moved last first.
// HLO: %12 = hlo.transpose %arg9 {permutation = [1, 3, 0, 2]} : (tensor<4x2x4x3xi64>) -> tensor<2x3x4x4xi64>
// HLO: %13 = hlo.reshape %12 : (tensor<2x3x4x4xi64>) -> tensor<2x3x16xi64>
// HLO: %14 = hlo.slice %13 {limit_indices = [2, 3, 16], start_indices = [0, 0, 0], strides = [1, 1, 5]} : (tensor<2x3x16xi64>) -> tensor<2x3x4xi64>
// HLO: %15 = hlo.transpose %14 {permutation = [1, 2, 0]} : (tensor<2x3x4xi64>) -> tensor<3x4x2xi64>
// Letters in one operand only are summed before the product.
// HLO: %[[Z0:.*]] = hlo.constant {value = dense<0.0> : tensor<f32>}
// HLO: %[[SJ:.*]] = "hlo.reduce"(%arg6, %[[Z0]])
// HLO: hlo.add
// HLO: {dimensions = [0]} : (tensor<3x4xf32>, tensor<f32>) -> tensor<4xf32>
// HLO: %[[Z1:.*]] = hlo.constant {value = dense<0.0> : tensor<f32>}
// HLO: %[[SK:.*]] = "hlo.reduce"(%arg5, %[[Z1]])
// HLO: hlo.add
// HLO: {dimensions = [0]} : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
// HLO: %[[B:.*]] = hlo.broadcast_in_dim %[[SK]] {broadcast_dimensions = []} : (tensor<f32>) -> tensor<4xf32>
// HLO: hlo.multiply %[[SJ]], %[[B]] : tensor<4xf32>
// HLO-NOT: graph.

// Each contraction is a kernel of its own (kind output), as GEMMs are.
// FUSE-COUNT-2: {kind = "output"} : (tensor<2x3x5x{{[47]}}xf32>, tensor<2x3x7x4xf32>) -> tensor<2x3x5x{{[47]}}xf32>
func.func @main(%arg0: tensor<2x3x5x4xf32>, %arg1: tensor<2x3x7x4xf32>, %arg2: tensor<2x3x7x4xf32>, %arg3: tensor<2x5x5xf64>, %arg4: tensor<3xf32>, %arg5: tensor<4xf32>, %arg6: tensor<3x4xf32>, %arg7: tensor<2x5x3x4xf32>, %arg8: tensor<2x7x3x4xf32>, %arg9: tensor<4x2x4x3xi64>) -> (tensor<2x3x5x4xf32>, tensor<2x3x5x7xf32>, tensor<2x5xf64>, tensor<3x4xf32>, tensor<4x3xf32>, tensor<f32>, tensor<3xf32>, tensor<3x4x2xi64>, tensor<4xf32>) {
  %0 = graph.einsum %arg0, %arg1 {equation = "bhqd,bhkd->bhqk"} : (tensor<2x3x5x4xf32>, tensor<2x3x7x4xf32>) -> tensor<2x3x5x7xf32>
  %1 = graph.einsum %0, %arg2 {equation = "bhqk,bhkd->bhqd"} : (tensor<2x3x5x7xf32>, tensor<2x3x7x4xf32>) -> tensor<2x3x5x4xf32>
  %2 = graph.einsum %arg7, %arg8 {equation = "bqhd,bkhd->bhqk"} : (tensor<2x5x3x4xf32>, tensor<2x7x3x4xf32>) -> tensor<2x3x5x7xf32>
  %3 = "graph.einsum"(%arg3) {equation = "...ii ->...i"} : (tensor<2x5x5xf64>) -> tensor<2x5xf64>
  %4 = graph.einsum %arg4, %arg5 {equation = "i,j->ij"} : (tensor<3xf32>, tensor<4xf32>) -> tensor<3x4xf32>
  %5 = graph.einsum %arg6 {equation = "ij->ji"} : (tensor<3x4xf32>) -> tensor<4x3xf32>
  %6 = graph.einsum %arg4, %arg4 {equation = "i,i"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
  %7 = graph.einsum %arg6, %arg5, %arg4 {equation = "ij,j,i->i"} : (tensor<3x4xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<3xf32>
  %8 = graph.einsum %arg9 {equation = "iaib->bia"} : (tensor<4x2x4x3xi64>) -> tensor<3x4x2xi64>
  %9 = graph.einsum %arg6, %arg5 {equation = "ij,k->j"} : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %1, %2, %3, %4, %5, %6, %7, %8, %9 : tensor<2x3x5x4xf32>, tensor<2x3x5x7xf32>, tensor<2x5xf64>, tensor<3x4xf32>, tensor<4x3xf32>, tensor<f32>, tensor<3xf32>, tensor<3x4x2xi64>, tensor<4xf32>
}
