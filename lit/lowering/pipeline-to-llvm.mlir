// The whole CPU pipeline from the graph level to LLVM IR, as `tessera
// compile` runs it: the pipeline text `tessera compile --print-pipeline`
// prints (graph clean-ups, legalize, fuse, lower to tensor IR, inline
// elementwise blocks, the default rules, rewrite-layout, the CPU target's
// post-schedule pass, codegen) run by tessera-opt. Weights become
// read-only globals; the host function calls the kernels over its arena,
// and @main is exported as <prefix>_main.
// RUN: tessera-opt %s --pass-pipeline="$(tessera compile %s --print-pipeline)" | FileCheck %s
// RUN: tessera-opt %s --pass-pipeline="$(tessera compile %s --print-pipeline)" | opt-16 -passes=verify -disable-output
// RUN: tessera-opt %s --pass-pipeline="$(tessera compile %s --print-pipeline)" --print-ir-after=compact-buffer-allocation 2>&1 >/dev/null | FileCheck %s --check-prefix=TIR
// RUN: tessera compile %s --print-pipeline | FileCheck %s --check-prefix=PIPE
// REQUIRES: llc

// PIPE: canonicalize,fold-batch-norm,constant-fold,cse,dce,legalize-to-hlo,canonicalize,cse,conv-kernel-layout,conv-layout{{[{][^}]*[}]}},explicit-conv-padding,fuse,lower-to-tir,inline-elementwise,default-schedule{target=cpu threads={{[0-9]+}}},rewrite-layout,pad-in-place,compact-buffer-allocation,codegen{export=main prefix=pipeline_to_llvm target=cpu threads={{[0-9]+}}}

// TIR-LABEL: tir.func @fused_0({{.*}}) attributes {tessera.kernel, tessera.schedule = "default"} {
// TIR: tir.block "dot_general"
// TIR: %out0[%v0, %v1] = max({{.*}} + %in2[%v1], 0.0)
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
// CHECK: define i32 @pipeline_to_llvm_main(float* %arg0, float* %out0)
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
