// tessera-opt runs the exact `tessera compile` pipeline step by step: the
// default-rule schedule of a matmul (multi-level tiled, register tile
// vectorized, outer tiles parallel, weights in their loop-nest layout,
// caches compacted), printed by tessera-opt after the same steps one flag
// at a time, equals `tessera compile --emit tir` byte for byte; and the
// steps are those `tessera compile --print-pipeline` lists before codegen.
// RUN: tessera compile %s --emit tir > %t.compile
// RUN: tessera-opt %s --canonicalize --fold-batch-norm --constant-fold --cse --dce --legalize-to-hlo --canonicalize --cse --conv-kernel-layout --conv-layout --explicit-conv-padding --fuse \
// RUN:   --lower-to-tir --inline-elementwise --default-schedule --rewrite-layout --pad-in-place --compact-buffer-allocation > %t.opt
// RUN: diff %t.compile %t.opt
// RUN: FileCheck %s < %t.opt
// RUN: tessera compile %s --print-pipeline | FileCheck %s --check-prefix=PIPE

// PIPE: canonicalize,fold-batch-norm,constant-fold,cse,dce,legalize-to-hlo,canonicalize,cse,conv-kernel-layout,conv-layout{{[{][^}]*[}]}},explicit-conv-padding,fuse,lower-to-tir,inline-elementwise,default-schedule{{[{][^}]*[}]}},rewrite-layout,pad-in-place,compact-buffer-allocation,codegen{{[{][^}]*[}]}}{{$}}

// CHECK-LABEL: tir.func @fused_0(%in0: buffer<256x192xf32>, %in1: buffer<192x160xf32>, out %out0: buffer<256x160xf32>) attributes {tessera.kernel, tessera.schedule = "default"} {
// CHECK: parallel {
// CHECK: vectorized {
// CHECK: tir.block "dot_general"
// CHECK-LABEL: tir.func @main(
// CHECK: tir.call @fused_0(
func.func @main(%a: tensor<256x192xf32>, %b: tensor<192x160xf32>) -> tensor<256x160xf32> {
  %0 = graph.matmul %a, %b : (tensor<256x192xf32>, tensor<192x160xf32>) -> tensor<256x160xf32>
  func.return %0 : tensor<256x160xf32>
}
