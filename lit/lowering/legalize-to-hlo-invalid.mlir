// RUN: tessera-opt %s --allow-unregistered-dialect --legalize-to-hlo --verify-diagnostics

// A graph op without a legalization rule stops the pass with a diagnostic
// at the op (the ops before it have been rewritten already).
func.func @unknown(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.relu %x : tensor<2x3xf32>
  // expected-error@+1 {{'graph.frobnicate' op failed to legalize to hlo: no rule for this op}}
  %1 = "graph.frobnicate"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %1 : tensor<2x3xf32>
}
