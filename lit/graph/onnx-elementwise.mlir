// The elementwise ONNX ops of the graph dialect (math.go, activation.go,
// compare.go) parse, verify and print back in their pretty form; the printed
// text parses again to the same IR, and so does the generic form.
// RUN: tessera-opt %s | tessera-opt | FileCheck %s
// RUN: tessera-opt %s --mlir-print-op-generic | tessera-opt | FileCheck %s

// CHECK-LABEL: func.func @unary
// CHECK-NEXT: %0 = graph.exp %arg0 : tensor<2x3xf32>
// CHECK-NEXT: %1 = graph.log %0 : tensor<2x3xf32>
// CHECK-NEXT: %2 = graph.sqrt %1 : tensor<2x3xf32>
// CHECK-NEXT: %3 = graph.erf %2 : tensor<2x3xf32>
// CHECK-NEXT: %4 = graph.neg %3 : tensor<2x3xf32>
// CHECK-NEXT: %5 = graph.abs %4 : tensor<2x3xf32>
// CHECK-NEXT: %6 = graph.reciprocal %5 : tensor<2x3xf32>
// CHECK-NEXT: %7 = graph.floor %6 : tensor<2x3xf32>
// CHECK-NEXT: %8 = graph.ceil %7 : tensor<2x3xf32>
// CHECK-NEXT: %9 = graph.sign %8 : tensor<2x3xf32>
// CHECK-NEXT: %10 = graph.sign %arg1 : tensor<4xi32>
// CHECK-NEXT: func.return %9, %10 : tensor<2x3xf32>, tensor<4xi32>
func.func @unary(%x: tensor<2x3xf32>, %i: tensor<4xi32>) -> (tensor<2x3xf32>, tensor<4xi32>) {
  %0 = graph.exp %x : tensor<2x3xf32>
  %1 = graph.log %0 : tensor<2x3xf32>
  %2 = graph.sqrt %1 : tensor<2x3xf32>
  %3 = graph.erf %2 : tensor<2x3xf32>
  %4 = graph.neg %3 : tensor<2x3xf32>
  %5 = graph.abs %4 : tensor<2x3xf32>
  %6 = graph.reciprocal %5 : tensor<2x3xf32>
  %7 = graph.floor %6 : tensor<2x3xf32>
  %8 = "graph.ceil"(%7) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %9 = graph.sign %8 : tensor<2x3xf32>
  %10 = graph.sign %i : tensor<4xi32>
  func.return %9, %10 : tensor<2x3xf32>, tensor<4xi32>
}

// CHECK-LABEL: func.func @act
// CHECK-NEXT: %0 = graph.softplus %arg0 : tensor<2x3xf32>
// CHECK-NEXT: %1 = graph.softsign %0 : tensor<2x3xf32>
// CHECK-NEXT: %2 = graph.clip %1 {max = 1.0 : f32, min = -1.0 : f32} : tensor<2x3xf32>
// CHECK-NEXT: %3 = graph.clip %2 {max = 0.5 : f32} : tensor<2x3xf32>
// CHECK-NEXT: %4 = graph.hard_sigmoid %3 {alpha = 0.5 : f32} : tensor<2x3xf32>
// CHECK-NEXT: %5 = graph.hard_swish %4 : tensor<2x3xf32>
// CHECK-NEXT: %6 = graph.leaky_relu %5 {alpha = 0.1 : f32} : tensor<2x3xf32>
// CHECK-NEXT: %7 = graph.elu %6 : tensor<2x3xf32>
// CHECK-NEXT: %8 = graph.selu %7 {alpha = 2.0 : f32, gamma = 3.0 : f32} : tensor<2x3xf32>
// CHECK-NEXT: %9 = graph.prelu %8, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: func.return %9 : tensor<2x3xf32>
func.func @act(%x: tensor<2x3xf32>, %s: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = graph.softplus %x : tensor<2x3xf32>
  %1 = graph.softsign %0 : tensor<2x3xf32>
  %2 = graph.clip %1 {min = -1.0 : f32, max = 1.0 : f32} : tensor<2x3xf32>
  %3 = graph.clip %2 {max = 0.5 : f32} : tensor<2x3xf32>
  %4 = graph.hard_sigmoid %3 {alpha = 0.5 : f32} : tensor<2x3xf32>
  %5 = graph.hard_swish %4 : tensor<2x3xf32>
  %6 = graph.leaky_relu %5 {alpha = 0.1 : f32} : tensor<2x3xf32>
  %7 = graph.elu %6 : tensor<2x3xf32>
  %8 = graph.selu %7 {alpha = 2.0 : f32, gamma = 3.0 : f32} : tensor<2x3xf32>
  %9 = graph.prelu %8, %s : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %9 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @binary
// CHECK-NEXT: %0 = graph.pow %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %1 = graph.max %0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %2 = graph.min %arg1, %1 : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %3 = graph.cast %2 : (tensor<2x3xf32>) -> tensor<2x3xi32>
// CHECK-NEXT: func.return %2, %3 : tensor<2x3xf32>, tensor<2x3xi32>
func.func @binary(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi32>) {
  %0 = graph.pow %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = graph.max %0, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %2 = graph.min %b, %1 : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = graph.cast %2 : (tensor<2x3xf32>) -> tensor<2x3xi32>
  func.return %2, %3 : tensor<2x3xf32>, tensor<2x3xi32>
}

// CHECK-LABEL: func.func @compare
// CHECK-NEXT: %0 = graph.equal %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT: %1 = graph.less %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT: %2 = graph.greater %arg0, %arg2 : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xi1>
// CHECK-NEXT: %3 = graph.less_equal %arg0, %arg0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT: %4 = graph.greater_equal %arg1, %arg0 : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT: %5 = graph.not %0 : tensor<2x3xi1>
// CHECK-NEXT: %6 = graph.and %5, %1 : tensor<2x3xi1>
// CHECK-NEXT: %7 = graph.or %6, %2 : tensor<2x3xi1>
// CHECK-NEXT: %8 = graph.and %7, %3 : tensor<2x3xi1>
// CHECK-NEXT: %9 = graph.or %8, %4 : tensor<2x3xi1>
// CHECK-NEXT: %10 = graph.where %9, %arg1, %arg2 : (tensor<2x3xi1>, tensor<3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT: func.return %10 : tensor<2x3xf32>
func.func @compare(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<f32>) -> tensor<2x3xf32> {
  %0 = graph.equal %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %1 = graph.less %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %2 = graph.greater %a, %c : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xi1>
  %3 = graph.less_equal %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %4 = graph.greater_equal %b, %a : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %5 = graph.not %0 : tensor<2x3xi1>
  %6 = graph.and %5, %1 : tensor<2x3xi1>
  %7 = graph.or %6, %2 : tensor<2x3xi1>
  %8 = graph.and %7, %3 : tensor<2x3xi1>
  %9 = graph.or %8, %4 : tensor<2x3xi1>
  %10 = graph.where %9, %b, %c : (tensor<2x3xi1>, tensor<3xf32>, tensor<f32>) -> tensor<2x3xf32>
  func.return %10 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @trig
// CHECK-NEXT: %0 = graph.sin %arg0 : tensor<2x3xf32>
// CHECK-NEXT: %1 = graph.cos %0 : tensor<2x3xf32>
// CHECK-NEXT: %2 = graph.tan %1 : tensor<2x3xf32>
// CHECK-NEXT: %3 = graph.asin %2 : tensor<2x3xf32>
// CHECK-NEXT: %4 = graph.acos %3 : tensor<2x3xf32>
// CHECK-NEXT: %5 = graph.sinh %4 : tensor<2x3xf32>
// CHECK-NEXT: %6 = graph.cosh %5 : tensor<2x3xf32>
// CHECK-NEXT: %7 = graph.asinh %6 : tensor<2x3xf32>
// CHECK-NEXT: %8 = graph.acosh %7 : tensor<2x3xf32>
// CHECK-NEXT: %9 = graph.atanh %arg1 : tensor<2x3xf64>
// CHECK-NEXT: func.return %9 : tensor<2x3xf64>
func.func @trig(%x: tensor<2x3xf32>, %d: tensor<2x3xf64>) -> tensor<2x3xf64> {
  %0 = graph.sin %x : tensor<2x3xf32>
  %1 = graph.cos %0 : tensor<2x3xf32>
  %2 = graph.tan %1 : tensor<2x3xf32>
  %3 = graph.asin %2 : tensor<2x3xf32>
  %4 = graph.acos %3 : tensor<2x3xf32>
  %5 = graph.sinh %4 : tensor<2x3xf32>
  %6 = graph.cosh %5 : tensor<2x3xf32>
  %7 = graph.asinh %6 : tensor<2x3xf32>
  %8 = "graph.acosh"(%7) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %9 = graph.atanh %d : tensor<2x3xf64>
  func.return %9 : tensor<2x3xf64>
}

// CHECK-LABEL: func.func @mod_act
// CHECK-NEXT: %0 = graph.mod %arg0, %arg1 : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT: %1 = graph.mod %arg2, %arg2 {fmod = 1} : tensor<2x3xf32>
// CHECK-NEXT: %2 = graph.celu %1 {alpha = 2.0 : f32} : tensor<2x3xf32>
// CHECK-NEXT: %3 = graph.shrink %2 {bias = 0.5 : f32, lambd = 1.5 : f32} : tensor<2x3xf32>
// CHECK-NEXT: %4 = graph.mish %3 : tensor<2x3xf32>
// CHECK-NEXT: func.return %0, %4 : tensor<2x3xi32>, tensor<2x3xf32>
func.func @mod_act(%a: tensor<2x3xi32>, %b: tensor<3xi32>, %x: tensor<2x3xf32>) -> (tensor<2x3xi32>, tensor<2x3xf32>) {
  %0 = graph.mod %a, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %1 = graph.mod %x, %x {fmod = 1} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = graph.celu %1 {alpha = 2.0 : f32} : tensor<2x3xf32>
  %3 = graph.shrink %2 {lambd = 1.5 : f32, bias = 0.5 : f32} : tensor<2x3xf32>
  %4 = graph.mish %3 : tensor<2x3xf32>
  func.return %0, %4 : tensor<2x3xi32>, tensor<2x3xf32>
}
