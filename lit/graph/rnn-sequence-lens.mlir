// graph.lstm with sequence_lens (padded batches of varied lengths): each
// direction's hlo.rnn_scan takes the constant mask[t, b] = t < L_b as its
// last operand; the kernel keeps the states and zeroes Y where it is false.
// RUN: tessera-opt %s | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo | FileCheck %s --check-prefix=HLO
// RUN: tessera-opt %s --legalize-to-hlo --fuse --lower-to-tir | FileCheck %s --check-prefix=TIR

// CHECK: graph.lstm %arg0, %arg1, %arg2 {direction = "bidirectional", hidden_size = 5, sequence_lens = [3, 1]}

// HLO: [[MASK:%[0-9]+]] = hlo.constant {value = dense<{{\[\[}}true, true], [true, false], [true, false]]> : tensor<3x2xi1>}
// HLO: hlo.rnn_scan {{.*}}, [[MASK]] {{{.*}}cell = "lstm"} : ({{.*}}, tensor<3x2xi1>) -> (tensor<3x2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>)
// HLO: [[MASK2:%[0-9]+]] = hlo.constant {value = dense<{{\[\[}}true, true], [true, false], [true, false]]> : tensor<3x2xi1>}
// HLO: hlo.rnn_scan {{.*}}, [[MASK2]] {{{.*}}reverse = true} : ({{.*}}, tensor<3x2xi1>)

// The forward kernel: the states keep their value, Y stores 0 where the mask is false.
// TIR: tir.func @fused_3({{.*}}%in2: buffer<3x2xi1>{{.*}}tessera.recurrence
// TIR: %c[%v0, %v1] = select(%in2[%t, %v0], {{.*}}, %c[%v0, %v1])
// TIR: %h[%v0, %v1] = select(%in2[%t, %v0], {{.*}}, %h[%v0, %v1])
// TIR: %out0[%t, %v0, %v1] = select(%in2[%t, %v0], %h[%v0, %v1], 0.0)
// The reverse kernel reads the mask at the reversed step.
// TIR: tir.func @fused_7(
// TIR: %out0[2 - %t, %v0, %v1] = select(%in2[2 - %t, %v0], %h[%v0, %v1], 0.0)
func.func @main(%x: tensor<3x2x4xf32>, %w: tensor<2x20x4xf32>, %r: tensor<2x20x5xf32>) -> (tensor<3x2x2x5xf32>, tensor<2x2x5xf32>) {
  %0:3 = graph.lstm %x, %w, %r {hidden_size = 5, direction = "bidirectional", sequence_lens = [3, 1]} : (tensor<3x2x4xf32>, tensor<2x20x4xf32>, tensor<2x20x5xf32>) -> (tensor<3x2x2x5xf32>, tensor<2x2x5xf32>, tensor<2x2x5xf32>)
  func.return %0#0, %0#1 : tensor<3x2x2x5xf32>, tensor<2x2x5xf32>
}
