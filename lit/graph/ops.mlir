// Every graph-dialect op parses, verifies and prints back in its pretty
// form; the printed text parses again to the same IR, and so does the
// generic form.
// RUN: tessera-opt %s | tessera-opt | FileCheck %s
// RUN: tessera-opt %s --mlir-print-op-generic | tessera-opt | FileCheck %s

// CHECK-LABEL: func.func @constant
// CHECK-NEXT: %0 = graph.constant {value = dense<{{\[\[}}1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>} : tensor<2x3xf32>
// CHECK-NEXT: %1 = graph.constant {value = dense<0.5> : tensor<4xf32>} : tensor<4xf32>
// CHECK-NEXT: %2 = graph.constant {value = dense<[1, -2]> : tensor<2xi64>} : tensor<2xi64>
// CHECK-NEXT: %3 = graph.constant {value = dense<3.0> : tensor<f32>} : tensor<f32>
func.func @constant() -> (tensor<2x3xf32>, tensor<4xf32>, tensor<2xi64>, tensor<f32>) {
  %0 = graph.constant {value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>} : tensor<2x3xf32>
  %1 = "graph.constant"() {value = dense<0.5> : tensor<4xf32>} : () -> tensor<4xf32>
  %2 = graph.constant {value = dense<[1, -2]> : tensor<2xi64>} : tensor<2xi64>
  %3 = graph.constant {value = dense<3.0> : tensor<f32>} : tensor<f32>
  func.return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<4xf32>, tensor<2xi64>, tensor<f32>
}

// CHECK-LABEL: func.func @conv2d
// CHECK-NEXT: %0 = graph.conv2d %arg0, %arg1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
// CHECK-NEXT: %1 = graph.conv2d %arg0, %arg1, %arg2 {pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
// CHECK-NEXT: %2 = graph.conv2d %arg0, %arg3 {dilations = [2, 2], groups = 3, pads = [2, 2, 2, 2]} : (tensor<1x3x8x8xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x8x8xf32>
func.func @conv2d(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %b: tensor<4xf32>, %dw: tensor<6x1x3x3xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x4x4xf32>, tensor<1x6x8x8xf32>) {
  %0 = graph.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1 = graph.conv2d %x, %w, %b {strides = [2, 2], pads = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x4x4xf32>
  %2 = "graph.conv2d"(%x, %dw) {groups = 3, dilations = [2, 2], pads = [2, 2, 2, 2]} : (tensor<1x3x8x8xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x8x8xf32>
  func.return %0, %1, %2 : tensor<1x4x6x6xf32>, tensor<1x4x4x4xf32>, tensor<1x6x8x8xf32>
}

// CHECK-LABEL: func.func @matmul
// CHECK-NEXT: %0 = graph.matmul %arg0, %arg1 : (tensor<2x5x3xf32>, tensor<3x4xf32>) -> tensor<2x5x4xf32>
// CHECK-NEXT: %1 = graph.matmul %arg2, %arg1 : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %2 = graph.matmul %arg2, %arg2 : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
func.func @matmul(%a: tensor<2x5x3xf32>, %b: tensor<3x4xf32>, %v: tensor<3xf32>) -> (tensor<2x5x4xf32>, tensor<4xf32>, tensor<f32>) {
  %0 = graph.matmul %a, %b : (tensor<2x5x3xf32>, tensor<3x4xf32>) -> tensor<2x5x4xf32>
  %1 = graph.matmul %v, %b : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<4xf32>
  %2 = "graph.matmul"(%v, %v) : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
  func.return %0, %1, %2 : tensor<2x5x4xf32>, tensor<4xf32>, tensor<f32>
}

// CHECK-LABEL: func.func @gemm
// CHECK-NEXT: %0 = graph.gemm %arg0, %arg3 : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %1 = graph.gemm %arg0, %arg1, %arg2 {alpha = 0.5 : f32, beta = 2.0 : f32, transB = true} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
// CHECK-NEXT: %2 = graph.gemm %arg1, %arg1 {transA = true} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<3x3xf32>
func.func @gemm(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>, %c: tensor<4xf32>, %w: tensor<3x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<3x3xf32>) {
  %0 = graph.gemm %a, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = graph.gemm %a, %b, %c {transB = true, alpha = 0.5 : f32, beta = 2.0 : f32} : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %2 = graph.gemm %b, %b {transA = true} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<3x3xf32>
  func.return %0, %1, %2 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<3x3xf32>
}

// CHECK-LABEL: func.func @elementwise
// CHECK-NEXT: %0 = graph.add %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %1 = graph.sub %0, %arg2 : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %2 = graph.mul %1, %arg3 : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT: %3 = graph.div %2, %2 : tensor<2x3xf32>
// CHECK-NEXT: %4 = graph.relu %3 : tensor<2x3xf32>
// CHECK-NEXT: %5 = graph.sigmoid %4 : tensor<2x3xf32>
// CHECK-NEXT: %6 = graph.tanh %5 : tensor<2x3xf32>
// CHECK-NEXT: %7 = graph.add %arg2, %arg1 : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %8 = graph.add %arg4, %arg4 : tensor<4xi32>
func.func @elementwise(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %c: tensor<2x1xf32>, %s: tensor<f32>, %i: tensor<4xi32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi32>) {
  %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = graph.sub %0, %c : (tensor<2x3xf32>, tensor<2x1xf32>) -> tensor<2x3xf32>
  %2 = graph.mul %1, %s : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %3 = "graph.div"(%2, %2) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = graph.relu %3 : tensor<2x3xf32>
  %5 = "graph.sigmoid"(%4) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %6 = graph.tanh %5 : tensor<2x3xf32>
  %7 = graph.add %c, %b : (tensor<2x1xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %8 = graph.add %i, %i : tensor<4xi32>
  func.return %6, %7, %8 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi32>
}

// CHECK-LABEL: func.func @pooling
// CHECK-NEXT: %0 = graph.max_pool2d %arg0 {kernel = [2, 2], strides = [2, 2]} : (tensor<1x3x7x7xf32>) -> tensor<1x3x3x3xf32>
// CHECK-NEXT: %1 = graph.max_pool2d %arg0 {ceil_mode = true, dilations = [2, 1], kernel = [2, 2], pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x3x7x7xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT: %2 = graph.avg_pool2d %arg0 {ceil_mode = true, count_include_pad = true, kernel = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x3x7x7xf32>) -> tensor<1x3x4x4xf32>
// CHECK-NEXT: %3 = graph.global_avg_pool %arg0 : (tensor<1x3x7x7xf32>) -> tensor<1x3x1x1xf32>
func.func @pooling(%x: tensor<1x3x7x7xf32>) -> (tensor<1x3x3x3xf32>, tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x3x1x1xf32>) {
  %0 = graph.max_pool2d %x {kernel = [2, 2], strides = [2, 2]} : (tensor<1x3x7x7xf32>) -> tensor<1x3x3x3xf32>
  %1 = graph.max_pool2d %x {kernel = [2, 2], strides = [2, 2], pads = [1, 1, 1, 1], dilations = [2, 1], ceil_mode = true} : (tensor<1x3x7x7xf32>) -> tensor<1x3x4x4xf32>
  %2 = "graph.avg_pool2d"(%x) {kernel = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1], ceil_mode = true, count_include_pad = true} : (tensor<1x3x7x7xf32>) -> tensor<1x3x4x4xf32>
  %3 = graph.global_avg_pool %x : (tensor<1x3x7x7xf32>) -> tensor<1x3x1x1xf32>
  func.return %0, %1, %2, %3 : tensor<1x3x3x3xf32>, tensor<1x3x4x4xf32>, tensor<1x3x4x4xf32>, tensor<1x3x1x1xf32>
}

// CHECK-LABEL: func.func @norm
// CHECK-NEXT: %0 = graph.batch_norm %arg0, %arg1, %arg1, %arg1, %arg1 : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
// CHECK-NEXT: %1 = graph.batch_norm %0, %arg1, %arg1, %arg1, %arg1 {epsilon = 0.001 : f32} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
// CHECK-NEXT: %2 = graph.softmax %1 : tensor<2x3x4x4xf32>
// CHECK-NEXT: %3 = graph.softmax %2 {axis = 1} : tensor<2x3x4x4xf32>
func.func @norm(%x: tensor<2x3x4x4xf32>, %p: tensor<3xf32>) -> tensor<2x3x4x4xf32> {
  %0 = graph.batch_norm %x, %p, %p, %p, %p : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  %1 = graph.batch_norm %0, %p, %p, %p, %p {epsilon = 0.001 : f32} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  %2 = graph.softmax %1 : tensor<2x3x4x4xf32>
  %3 = "graph.softmax"(%2) {axis = 1} : (tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  func.return %3 : tensor<2x3x4x4xf32>
}

// CHECK-LABEL: func.func @shapes
// CHECK-NEXT: %0 = graph.flatten %arg0 : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
// CHECK-NEXT: %1 = graph.flatten %arg0 {axis = -1} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
// CHECK-NEXT: %2 = graph.reshape %arg0 {shape = [0, -1]} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
// CHECK-NEXT: %3 = graph.reshape %arg0 {shape = [4, 6]} : (tensor<2x3x4xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: %4 = graph.transpose %arg0 : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
// CHECK-NEXT: %5 = graph.transpose %arg0 {perm = [1, 2, 0]} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
// CHECK-NEXT: %6 = graph.concat %0, %2 {axis = 0} : (tensor<2x12xf32>, tensor<2x12xf32>) -> tensor<4x12xf32>
// CHECK-NEXT: %7 = graph.transpose %1 : (tensor<6x4xf32>) -> tensor<4x6xf32>
// CHECK-NEXT: %8 = graph.concat %3, %7, %3 {axis = -1} : (tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x18xf32>
func.func @shapes(%x: tensor<2x3x4xf32>) -> (tensor<4x3x2xf32>, tensor<3x4x2xf32>, tensor<4x12xf32>, tensor<4x18xf32>) {
  %0 = graph.flatten %x : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  %1 = graph.flatten %x {axis = -1} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %2 = graph.reshape %x {shape = [0, -1]} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  %3 = "graph.reshape"(%x) {shape = [4, 6]} : (tensor<2x3x4xf32>) -> tensor<4x6xf32>
  %4 = graph.transpose %x : (tensor<2x3x4xf32>) -> tensor<4x3x2xf32>
  %5 = graph.transpose %x {perm = [1, 2, 0]} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
  %6 = graph.concat %0, %2 {axis = 0} : (tensor<2x12xf32>, tensor<2x12xf32>) -> tensor<4x12xf32>
  %t = graph.transpose %1 : (tensor<6x4xf32>) -> tensor<4x6xf32>
  %7 = "graph.concat"(%3, %t, %3) {axis = -1} : (tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x18xf32>
  func.return %4, %5, %6, %7 : tensor<4x3x2xf32>, tensor<3x4x2xf32>, tensor<4x12xf32>, tensor<4x18xf32>
}
