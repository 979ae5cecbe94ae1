// The whole CPU pipeline from the graph level to LLVM IR, as `tessera
// compile` runs it: legalize, fuse, lower to tensor IR (a kernel per fusion
// and a host function calling them), inline elementwise blocks, default
// schedule, LLVM IR. Weights become read-only globals; the host function
// calls the kernels over its arena.
// RUN: tessera-opt %s --legalize-to-hlo --fuse --lower-to-tir --inline-elementwise --cpu-default-schedule --cpu-vector-bits=512 --emit-llvm | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo --fuse --lower-to-tir --inline-elementwise --cpu-default-schedule --emit-llvm | opt-16 -passes=verify -disable-output
// RUN: tessera-opt %s --legalize-to-hlo --fuse --lower-to-tir --inline-elementwise --cpu-default-schedule | FileCheck %s --check-prefix=TIR
// REQUIRES: llc

// TIR-LABEL: tir.func @fused_0(
// TIR: tir.block "dot_general"
// TIR: tir.block "maximum"
// TIR-LABEL: tir.func @fused_1(
// TIR-LABEL: tir.func @main(%arg0: buffer<2x1x4x4xf32>, out %out0: buffer<2x3xf32>) attributes {tessera.host} {
// TIR: tir.constant
// TIR: tir.arena
// TIR: tir.call @fused_0(
// TIR: tir.call @fused_1(

// CHECK-DAG: private unnamed_addr constant [{{[0-9]+}} x i8]
// CHECK-DAG: define internal void @fused_0.kernel(
// CHECK-DAG: define internal void @fused_1.kernel(
// CHECK: define internal void @main.kernel(float* noalias %arg0, float* noalias %out0)
// CHECK: call void @fused_0.kernel(
// CHECK: call void @fused_1.kernel(
func.func @main(%x: tensor<2x1x4x4xf32>) -> tensor<2x3xf32> {
  %w1 = graph.constant {value = dense<[[0.5, -0.25, 0.125, 1.0, -1.0, 0.75, 0.5, -0.5, 0.25, 0.0, 1.5, -1.5, 2.0, -2.0, 0.1, 0.2], [0.3, 0.4, -0.3, -0.4, 0.6, -0.6, 0.7, -0.7, 0.8, -0.8, 0.9, -0.9, 1.1, -1.1, 1.2, -1.2], [0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0], [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0], [0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2]]> : tensor<5x16xf32>} : tensor<5x16xf32>
  %b1 = graph.constant {value = dense<[0.1, -0.1, 0.2, -0.2, 0.3]> : tensor<5xf32>} : tensor<5xf32>
  %w2 = graph.constant {value = dense<[[1.0, 0.0, -1.0, 0.5, 0.25], [0.0, 1.0, 0.5, -0.5, 0.75], [0.3, -0.3, 0.3, -0.3, 0.3]]> : tensor<3x5xf32>} : tensor<3x5xf32>
  %b2 = graph.constant {value = dense<[0.0, 0.5, -0.5]> : tensor<3xf32>} : tensor<3xf32>
  %0 = graph.flatten %x : (tensor<2x1x4x4xf32>) -> tensor<2x16xf32>
  %1 = graph.gemm %0, %w1, %b1 {transB = true} : (tensor<2x16xf32>, tensor<5x16xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  %2 = graph.relu %1 : tensor<2x5xf32>
  %3 = graph.gemm %2, %w2, %b2 {transB = true} : (tensor<2x5xf32>, tensor<3x5xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %3 : tensor<2x3xf32>
}
