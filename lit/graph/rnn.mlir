// graph.lstm, graph.gru and graph.rnn: printing, and legalization to a
// GEMM projection per direction (dot_general plus the folded bias) and one
// hlo.rnn_scan per direction, joined over the directions.
// RUN: tessera-opt %s | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo | FileCheck %s --check-prefix=HLO
// RUN: tessera-opt %s --legalize-to-hlo --fuse | FileCheck %s --check-prefix=FUSE

// CHECK: %0:3 = graph.lstm %arg0, %arg1, %arg2, %arg3 {direction = "bidirectional", hidden_size = 5}
// CHECK: %1:2 = graph.gru %arg0, %arg4, %arg5 {clip = 2.0 : f32, hidden_size = 5, linear_before_reset = true}
// CHECK: %2:2 = graph.rnn %arg0, %arg6, %arg7 {activations = ["Relu"], hidden_size = 5}

// HLO: hlo.dot_general %arg0, {{%[0-9]+}} {lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]} : (tensor<4x2x3xf32>, tensor<20x3xf32>) -> tensor<4x2x20xf32>
// HLO: hlo.broadcast_in_dim {{%[0-9]+}} {broadcast_dimensions = [2]} : (tensor<20xf32>) -> tensor<4x2x20xf32>
// HLO: hlo.rnn_scan {{.*}}cell = "lstm"{{.*}} -> (tensor<4x2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>)
// HLO: hlo.rnn_scan {{.*}}cell = "lstm", reverse = true{{.*}} -> (tensor<4x2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>)
// HLO: hlo.concatenate {{.*}}{dimension = 1} : (tensor<4x1x2x5xf32>, tensor<4x1x2x5xf32>) -> tensor<4x2x2x5xf32>
// HLO: hlo.rnn_scan {{.*}}activations = ["Sigmoid", "Tanh"]{{.*}}cell = "gru", clip = 2.0 : f32, linear_before_reset = true
// HLO: hlo.rnn_scan {{.*}}activations = ["Relu"]{{.*}}cell = "rnn"

// The projection is an output fusion like any GEMM; each scan is an opaque fusion of its own.
// FUSE: hlo.dot_general
// FUSE: {kind = "output"}
// FUSE: hlo.rnn_scan
// FUSE-NEXT: hlo.return
// FUSE-NEXT: {kind = "opaque"}
func.func @main(%x: tensor<4x2x3xf32>, %w: tensor<2x20x3xf32>, %r: tensor<2x20x5xf32>, %b: tensor<2x40xf32>,
                %gw: tensor<1x15x3xf32>, %gr: tensor<1x15x5xf32>, %rw: tensor<1x5x3xf32>, %rr: tensor<1x5x5xf32>)
    -> (tensor<4x2x2x5xf32>, tensor<2x2x5xf32>, tensor<4x1x2x5xf32>, tensor<1x2x5xf32>) {
  %0:3 = graph.lstm %x, %w, %r, %b {hidden_size = 5, direction = "bidirectional"} : (tensor<4x2x3xf32>, tensor<2x20x3xf32>, tensor<2x20x5xf32>, tensor<2x40xf32>) -> (tensor<4x2x2x5xf32>, tensor<2x2x5xf32>, tensor<2x2x5xf32>)
  %1:2 = graph.gru %x, %gw, %gr {hidden_size = 5, linear_before_reset = true, clip = 2.0 : f32} : (tensor<4x2x3xf32>, tensor<1x15x3xf32>, tensor<1x15x5xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>)
  %2:2 = graph.rnn %x, %rw, %rr {hidden_size = 5, activations = ["Relu"]} : (tensor<4x2x3xf32>, tensor<1x5x3xf32>, tensor<1x5x5xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>)
  func.return %0#0, %0#2, %1#0, %2#1 : tensor<4x2x2x5xf32>, tensor<2x2x5xf32>, tensor<4x1x2x5xf32>, tensor<1x2x5xf32>
}
