// Round trip of the core syntax: the printed form parses back to itself,
// from the pretty and from the generic form.
// RUN: tessera-opt %s | FileCheck %s
// RUN: tessera-opt %s | tessera-opt | FileCheck %s
// RUN: tessera-opt %s --mlir-print-op-generic | tessera-opt | FileCheck %s
// RUN: tessera-opt %s > %t.1 && tessera-opt %t.1 > %t.2 && diff %t.1 %t.2
// RUN: tessera-opt %s --mlir-print-op-generic > %t.g1 && tessera-opt %t.g1 --mlir-print-op-generic > %t.g2 && diff %t.g1 %t.g2

// CHECK-LABEL: module @net attributes {tessera.version = "0.1"} {
module @net attributes {tessera.version = "0.1"} {
  // CHECK: func.func private @helper(%arg0: tensor<f32>) -> tensor<f32> {
  // CHECK-NEXT: func.return %arg0 : tensor<f32>
  func.func private @helper(%x: tensor<f32>) -> tensor<f32> {
    func.return %x : tensor<f32>
  }

  // Generic and pretty forms mix; value names are renumbered.
  // CHECK-LABEL: func.func @main(%arg0: tensor<1x4xf32>, %arg1: tensor<4x3xf32>) -> (tensor<1x3xf32>, tensor<1x4xf32>) attributes {tessera.entry} {
  // CHECK-NEXT: %0 = graph.matmul %arg0, %arg1 : (tensor<1x4xf32>, tensor<4x3xf32>) -> tensor<1x3xf32>
  // CHECK-NEXT: %1 = graph.relu %0 : tensor<1x3xf32>
  // CHECK-NEXT: %2 = graph.add %arg0, %arg0 : tensor<1x4xf32>
  // CHECK-NEXT: func.return %1, %2 : tensor<1x3xf32>, tensor<1x4xf32>
  // CHECK-NEXT: }
  func.func @main(%input: tensor<1x4xf32>, %weights: tensor<4x3xf32>) -> (tensor<1x3xf32>, tensor<1x4xf32>) attributes {tessera.entry} {
    %mm = "graph.matmul"(%input, %weights) : (tensor<1x4xf32>, tensor<4x3xf32>) -> tensor<1x3xf32>
    %r = graph.relu %mm : tensor<1x3xf32>
    %s = "graph.add"(%input, %input) : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<1x4xf32>
    func.return %r, %s : tensor<1x3xf32>, tensor<1x4xf32>
  }

  // A function without results and with a rank-0 argument.
  // CHECK-LABEL: func.func @nothing(%arg0: tensor<i64>) {
  // CHECK-NEXT: func.return
  // CHECK-NEXT: }
  func.func @nothing(%a: tensor<i64>) {
    func.return
  }

  // Ops with regions print in the generic form, block arguments included.
  // CHECK-LABEL: func.func @reduce(%arg0: tensor<2x3xf32>, %arg1: tensor<f32>) -> tensor<2xf32> {
  // CHECK-NEXT: %0 = "hlo.reduce"(%arg0, %arg1) ({
  // CHECK-NEXT: ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
  // CHECK-NEXT: %1 = hlo.add %arg2, %arg3 : tensor<f32>
  // CHECK-NEXT: hlo.return %1 :
  // CHECK-NEXT: }) {dimensions = [1]} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  // CHECK-NEXT: func.return %0 : tensor<2xf32>
  func.func @reduce(%x: tensor<2x3xf32>, %init: tensor<f32>) -> tensor<2xf32> {
    %0 = "hlo.reduce"(%x, %init) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = "hlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "hlo.return"(%s) : (tensor<f32>) -> ()
    }) {dimensions = [1]} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    func.return %0 : tensor<2xf32>
  }
}
