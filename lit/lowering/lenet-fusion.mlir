// RUN: tessera-opt %s --legalize-to-hlo --fuse | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo --fuse | FileCheck %s --check-prefix=COUNT
// RUN: tessera-opt %s --legalize-to-hlo --fuse | FileCheck %s --check-prefix=TOP --strict-whitespace

// A LeNet-5-shaped model (conv 5x5 pad 2 → relu → max pool → conv 5x5 →
// relu → max pool → flatten → three gemms with relus) after legalization
// and fusion: every hlo op ends up inside an hlo.fusion, bias add and relu
// join the convolution that produces them (not the pool after them), each
// convolution and dot_general keeps the attributes legalization gave it,
// and the three fully connected layers become "output" fusions holding
// their bias add (and relu).

// Nothing but fusions at the top level of @main.
// TOP-NOT: {{^    %[0-9]+ = hlo\.}}
// TOP-NOT: {{^    %[0-9]+ = "hlo\.reduce}}

// Seven fusions: 2 × (conv+bias+relu as "output", max pool as "input") and 3 × fully connected.
// COUNT-COUNT-7: "hlo.fusion"
// COUNT-NOT: "hlo.fusion"

// CHECK-LABEL: func.func @main
// CHECK: "hlo.fusion"(%arg0)
// CHECK: hlo.convolution
// CHECK-SAME: padding = {{\[}}[2, 2], [2, 2]]
// CHECK-SAME: -> tensor<1x6x28x28xf32>
// CHECK: hlo.broadcast_in_dim
// CHECK-SAME: {broadcast_dimensions = [1]} : (tensor<6xf32>) -> tensor<1x6x28x28xf32>
// CHECK: hlo.add
// CHECK: hlo.maximum
// CHECK: }) {kind = "output"} : (tensor<1x1x28x28xf32>) -> tensor<1x6x28x28xf32>
// CHECK-NEXT: "hlo.fusion"
// CHECK: "hlo.reduce_window"
// CHECK: hlo.maximum
// CHECK: window_dimensions = [1, 1, 2, 2], window_strides = [1, 1, 2, 2]
// CHECK-SAME: -> tensor<1x6x14x14xf32>
// CHECK: }) {kind = "input"} : (tensor<1x6x28x28xf32>) -> tensor<1x6x14x14xf32>
// CHECK-NEXT: "hlo.fusion"
// CHECK: hlo.convolution
// CHECK-SAME: padding = {{\[}}[0, 0], [0, 0]]
// CHECK-SAME: -> tensor<1x16x10x10xf32>
// CHECK: hlo.broadcast_in_dim
// CHECK-SAME: (tensor<16xf32>) -> tensor<1x16x10x10xf32>
// CHECK: hlo.add
// CHECK: hlo.maximum
// CHECK: }) {kind = "output"} : (tensor<1x6x14x14xf32>) -> tensor<1x16x10x10xf32>
// CHECK-NEXT: "hlo.fusion"
// CHECK: "hlo.reduce_window"
// CHECK: -> tensor<1x16x5x5xf32>
// CHECK: }) {kind = "input"} : (tensor<1x16x10x10xf32>) -> tensor<1x16x5x5xf32>
// CHECK: "hlo.fusion"
// CHECK: hlo.reshape
// CHECK-SAME: -> tensor<1x400xf32>
// CHECK: hlo.dot_general
// CHECK-SAME: {lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]} : (tensor<1x400xf32>, tensor<120x400xf32>) -> tensor<1x120xf32>
// CHECK: hlo.add
// CHECK: hlo.maximum
// CHECK: }) {kind = "output"} : (tensor<1x16x5x5xf32>) -> tensor<1x120xf32>
// CHECK-NEXT: "hlo.fusion"
// CHECK: hlo.dot_general
// CHECK-SAME: -> tensor<1x84xf32>
// CHECK: hlo.add
// CHECK: hlo.maximum
// CHECK: }) {kind = "output"} : (tensor<1x120xf32>) -> tensor<1x84xf32>
// CHECK-NEXT: %[[OUT:.*]] = "hlo.fusion"
// CHECK: hlo.dot_general
// CHECK-SAME: -> tensor<1x10xf32>
// CHECK: hlo.add
// CHECK-NOT: hlo.maximum
// CHECK: }) {kind = "output"} : (tensor<1x84xf32>) -> tensor<1x10xf32>
// CHECK-NEXT: func.return %[[OUT]] : tensor<1x10xf32>

module {
  func.func @main(%x: tensor<1x1x28x28xf32>) -> tensor<1x10xf32> {
    %w1 = graph.constant {value = dense<0.05> : tensor<6x1x5x5xf32>} : tensor<6x1x5x5xf32>
    %b1 = graph.constant {value = dense<0.01> : tensor<6xf32>} : tensor<6xf32>
    %w2 = graph.constant {value = dense<-0.02> : tensor<16x6x5x5xf32>} : tensor<16x6x5x5xf32>
    %b2 = graph.constant {value = dense<0.02> : tensor<16xf32>} : tensor<16xf32>
    %w3 = graph.constant {value = dense<0.01> : tensor<120x400xf32>} : tensor<120x400xf32>
    %b3 = graph.constant {value = dense<0.1> : tensor<120xf32>} : tensor<120xf32>
    %w4 = graph.constant {value = dense<0.03> : tensor<84x120xf32>} : tensor<84x120xf32>
    %b4 = graph.constant {value = dense<-0.1> : tensor<84xf32>} : tensor<84xf32>
    %w5 = graph.constant {value = dense<0.04> : tensor<10x84xf32>} : tensor<10x84xf32>
    %b5 = graph.constant {value = dense<0.2> : tensor<10xf32>} : tensor<10xf32>
    %0 = graph.conv2d %x, %w1, %b1 {pads = [2, 2, 2, 2]} : (tensor<1x1x28x28xf32>, tensor<6x1x5x5xf32>, tensor<6xf32>) -> tensor<1x6x28x28xf32>
    %1 = graph.relu %0 : tensor<1x6x28x28xf32>
    %2 = graph.max_pool2d %1 {kernel = [2, 2], strides = [2, 2]} : (tensor<1x6x28x28xf32>) -> tensor<1x6x14x14xf32>
    %3 = graph.conv2d %2, %w2, %b2 : (tensor<1x6x14x14xf32>, tensor<16x6x5x5xf32>, tensor<16xf32>) -> tensor<1x16x10x10xf32>
    %4 = graph.relu %3 : tensor<1x16x10x10xf32>
    %5 = graph.max_pool2d %4 {kernel = [2, 2], strides = [2, 2]} : (tensor<1x16x10x10xf32>) -> tensor<1x16x5x5xf32>
    %6 = graph.flatten %5 : (tensor<1x16x5x5xf32>) -> tensor<1x400xf32>
    %7 = graph.gemm %6, %w3, %b3 {transB = true} : (tensor<1x400xf32>, tensor<120x400xf32>, tensor<120xf32>) -> tensor<1x120xf32>
    %8 = graph.relu %7 : tensor<1x120xf32>
    %9 = graph.gemm %8, %w4, %b4 {transB = true} : (tensor<1x120xf32>, tensor<84x120xf32>, tensor<84xf32>) -> tensor<1x84xf32>
    %10 = graph.relu %9 : tensor<1x84xf32>
    %11 = graph.gemm %10, %w5, %b5 {transB = true} : (tensor<1x84xf32>, tensor<10x84xf32>, tensor<10xf32>) -> tensor<1x10xf32>
    func.return %11 : tensor<1x10xf32>
  }
}
