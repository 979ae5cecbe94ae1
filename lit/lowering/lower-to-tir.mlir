// hlo → tensor IR: one kernel per hlo.fusion (one block per hlo op, named
// after it, over a full loop nest; intermediates in local buffers; splat
// constants as immediates; reductions with an init), and a host function
// holding the weights (tir.constant), the planned arena and the calls.
// RUN: tessera-opt %s --legalize-to-hlo --fuse --lower-to-tir | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo --fuse --lower-to-tir --inline-elementwise | FileCheck %s --check-prefix=INL
// RUN: tessera-opt %s --legalize-to-hlo --fuse --lower-to-tir | tessera-opt | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo --fuse --lower-to-tir --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC
// RUN: tessera-opt %s --legalize-to-hlo --fuse --lower-to-tir --mlir-elide-elementsattrs-if-larger=4 | FileCheck %s --check-prefix=ELIDE

// CHECK-LABEL: tir.func @fused_0(%in0: buffer<1x2x6x6xf32>, %in1: buffer<2x2x2x2xf32>, %in2: buffer<2xf32>, out %out0: buffer<1x2x5x5xf32>) attributes {tessera.kernel} {
// CHECK-NEXT:   tir.allocate %t0: buffer<1x2x5x5xf32, "local"> {
// CHECK-NEXT:     tir.allocate %t1: buffer<1x2x5x5xf32, "local"> {
// CHECK-NEXT:       tir.allocate %t2: buffer<1x2x5x5xf32, "local"> {
// CHECK-NEXT:         tir.for %i0 = 0 to 1 {
// CHECK-NEXT:           tir.for %i1 = 0 to 2 {
// CHECK-NEXT:             tir.for %i2 = 0 to 5 {
// CHECK-NEXT:               tir.for %i3 = 0 to 5 {
// CHECK-NEXT:                 tir.for %r0 = 0 to 2 {
// CHECK-NEXT:                   tir.for %r1 = 0 to 2 {
// CHECK-NEXT:                     tir.for %r2 = 0 to 2 {
// CHECK-NEXT:                       tir.block "convolution"(%v0 = spatial(0:1, %i0), %v1 = spatial(0:2, %i1), %v2 = spatial(0:5, %i2), %v3 = spatial(0:5, %i3), %k0 = reduce(0:2, %r0), %k1 = reduce(0:2, %r1), %k2 = reduce(0:2, %r2))
// CHECK-NEXT:                         tir.init {
// CHECK-NEXT:                           %t0[%v0, %v1, %v2, %v3] = 0.0
// CHECK-NEXT:                         }
// CHECK-NEXT:                         %t0[%v0, %v1, %v2, %v3] = %t0[%v0, %v1, %v2, %v3] + %in0[%v0, %k0, %k1 + %v2, %k2 + %v3] * %in1[%v1, %k0, %k1, %k2]
// CHECK:      tir.block "broadcast_in_dim"
// CHECK-NEXT:   %t1[%v0, %v1, %v2, %v3] = %in2[%v1]
// CHECK:      tir.block "add"
// CHECK-NEXT:   %t2[%v0, %v1, %v2, %v3] = %t0[%v0, %v1, %v2, %v3] + %t1[%v0, %v1, %v2, %v3]
// CHECK:      tir.block "maximum"
// CHECK-NEXT:   %out0[%v0, %v1, %v2, %v3] = max(%t2[%v0, %v1, %v2, %v3], 0.0)

// The max pool is an input fusion: a reduce block over the window, the
// init -inf, writing the output directly.
// CHECK-LABEL: tir.func @fused_1(%in0: buffer<1x2x5x5xf32>, out %out0: buffer<1x2x2x2xf32>) attributes {tessera.kernel} {
// CHECK:        tir.block "reduce_window"({{.*}}%k2 = reduce(0:2, %r2), %k3 = reduce(0:2, %r3))
// CHECK-NEXT:     tir.init {
// CHECK-NEXT:       %out0[%v0, %v1, %v2, %v3] = 0xFF800000 : f32
// CHECK-NEXT:     }
// CHECK-NEXT:     %out0[%v0, %v1, %v2, %v3] = max(%out0[%v0, %v1, %v2, %v3], %in0[0, %k1 + %v1, %v2 * 2 + %k2, %v3 * 2 + %k3])

// Flatten is a row-major index remapping; the splat weight is an immediate.
// CHECK-LABEL: tir.func @fused_2(%in0: buffer<1x2x2x2xf32>, out %out0: buffer<1x3xf32>) attributes {tessera.kernel} {
// CHECK:        tir.block "reshape"
// CHECK-NEXT:     %t0[%v0, %v1] = %in0[%v0, floordiv(%v1, 4), floormod(floordiv(%v1, 2), 2), floormod(%v1, 2)]
// CHECK:        tir.block "dot_general"(%v0 = spatial(0:1, %i0), %v1 = spatial(0:3, %i1), %k0 = reduce(0:8, %r0))
// CHECK:          %t1[%v0, %v1] = %t1[%v0, %v1] + %t0[%v0, %k0] * 0.5
// CHECK:        tir.block "logistic"
// CHECK-NEXT:     %out0[%v0, %v1] = sigmoid(%t1[%v0, %v1])

// CHECK-LABEL: tir.func @main(%arg0: buffer<1x2x6x6xf32>, out %out0: buffer<1x3xf32>) attributes {tessera.host} {
// CHECK-NEXT:   tir.constant %w0: buffer<2x2x2x2xf32> = dense<[0.5, -0.5, 0.25, 1.0, 1.0, 0.0, 0.0, -1.0, 0.125, 0.25, 0.5, 1.0, -1.0, 1.0, 1.0, -1.0]> {
// CHECK-NEXT:     tir.constant %w1: buffer<2xf32> = dense<[0.1, -0.1]> {
// CHECK-NEXT:       tir.arena 320 (%t0: buffer<1x2x5x5xf32> at 0, %t1: buffer<1x2x2x2xf32> at 256) {
// CHECK-NEXT:         tir.call @fused_0(%arg0, %w0, %w1, %t0)
// CHECK-NEXT:         tir.call @fused_1(%t0, %t1)
// CHECK-NEXT:         tir.call @fused_2(%t1, %out0)
// CHECK-NEXT:       }
// CHECK-NEXT:     }
// CHECK-NEXT:   }
// CHECK-NEXT: }

// After --inline-elementwise the bias broadcast, add and relu are one
// loop nest after the convolution; the reshape is read inside the dot.
// INL-LABEL: tir.func @fused_0
// INL-NOT:   tir.allocate %t1
// INL:       tir.block "convolution"
// INL-NOT:   tir.block "broadcast_in_dim"
// INL-NOT:   tir.block "add"
// INL:       tir.block "maximum"(%v0 = spatial(0:1, %i0), %v1 = spatial(0:2, %i1), %v2 = spatial(0:5, %i2), %v3 = spatial(0:5, %i3)) reads(%t0[0, 0:2, 0:5, 0:5], %in2[0:2]) writes(%out0[%v0, %v1, %v2, %v3]) {
// INL-NEXT:    %out0[%v0, %v1, %v2, %v3] = max(%t0[%v0, %v1, %v2, %v3] + %in2[%v1], 0.0)
// INL-LABEL: tir.func @fused_2
// INL-NOT:   tir.block "reshape"
// INL:       %t1[%v0, %v1] = %t1[%v0, %v1] + %in0[%v0, floordiv(%k0, 4), floormod(floordiv(%k0, 2), 2), floormod(%k0, 2)] * 0.5
// INL-LABEL: tir.func @main

// Blocks and calls keep the graph ops' locations.
// LOC: %t0[%v0, %v1, %v2, %v3] = %t0[%v0, %v1, %v2, %v3] + {{.*}} loc("{{.*}}lower-to-tir.mlir":[[@LINE+10]]:8)
// LOC: %out0[%v0, %v1, %v2, %v3] = max(%out0{{.*}} loc("{{.*}}lower-to-tir.mlir":[[@LINE+11]]:8)
// LOC: tir.call @fused_0(%arg0, %w0, %w1, %t0) loc("{{.*}}lower-to-tir.mlir":[[@LINE+9]]:8)
// Weights larger than the threshold print elided, like graph-level constants.
// ELIDE: tir.constant %w0: buffer<2x2x2x2xf32> = dense_resource<__elided__> {
// ELIDE: tir.constant %w1: buffer<2xf32> = dense<[0.1, -0.1]> {

func.func @main(%x: tensor<1x2x6x6xf32>) -> tensor<1x3xf32> {
  %w = graph.constant {value = dense<[[[[0.5, -0.5], [0.25, 1.0]], [[1.0, 0.0], [0.0, -1.0]]], [[[0.125, 0.25], [0.5, 1.0]], [[-1.0, 1.0], [1.0, -1.0]]]]> : tensor<2x2x2x2xf32>} : tensor<2x2x2x2xf32>
  %b = graph.constant {value = dense<[0.1, -0.1]> : tensor<2xf32>} : tensor<2xf32>
  %c = graph.conv2d %x, %w, %b : (tensor<1x2x6x6xf32>, tensor<2x2x2x2xf32>, tensor<2xf32>) -> tensor<1x2x5x5xf32>
  %r = graph.relu %c : tensor<1x2x5x5xf32>
  %p = graph.max_pool2d %r {kernel = [2, 2], strides = [2, 2]} : (tensor<1x2x5x5xf32>) -> tensor<1x2x2x2xf32>
  %f = graph.flatten %p : (tensor<1x2x2x2xf32>) -> tensor<1x8xf32>
  %m = graph.constant {value = dense<0.5> : tensor<8x3xf32>} : tensor<8x3xf32>
  %y = graph.matmul %f, %m : (tensor<1x8xf32>, tensor<8x3xf32>) -> tensor<1x3xf32>
  %s = graph.sigmoid %y : tensor<1x3xf32>
  func.return %s : tensor<1x3xf32>
}
