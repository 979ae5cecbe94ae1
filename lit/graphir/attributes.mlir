// Attributes of every kind print back as they were written (dictionaries
// sorted by name, i64 integers without their type, floats with theirs).
// RUN: tessera-opt %s --allow-unregistered-dialect | FileCheck %s
// RUN: tessera-opt %s --allow-unregistered-dialect --mlir-print-op-generic | tessera-opt --allow-unregistered-dialect | FileCheck %s

// CHECK-LABEL: func.func @attrs
func.func @attrs() {
  // CHECK: "test.ints"() {hex = 127, i1 = true, i32 = -7 : i32, i64 = 42, i8 = 3 : i8, min = -9223372036854775808} : () -> ()
  "test.ints"() {i64 = 42, i32 = -7 : i32, i8 = 3 : i8, hex = 0x7F, i1 = true, min = -9223372036854775808} : () -> ()
  // CHECK: "test.floats"() {bf = 1.0 : bf16, big = 1.0e+30 : f32, f16 = 2.5 : f16, f32 = 1.5 : f32, f64 = 0.1 : f64, neg = -0.0 : f32, small = 1.0e-07 : f32} : () -> ()
  "test.floats"() {f32 = 1.5 : f32, f64 = 0.1 : f64, f16 = 2.5 : f16, bf = 1.0 : bf16, neg = -0.0 : f32, big = 1.0e+30 : f32, small = 1.0e-07 : f32} : () -> ()
  // Strings: quotes, backslashes and control bytes are escaped.
  // CHECK: "test.strings"() {empty = "", esc = "a \"q\" \\ b\0A", plain = "conv_1/weights"} : () -> ()
  "test.strings"() {plain = "conv_1/weights", esc = "a \"q\" \\ b\n", empty = ""} : () -> ()
  // CHECK: "test.bools"() {no = false, yes = true} : () -> ()
  "test.bools"() {yes = true, no = false} : () -> ()
  // Unit attributes print as a bare name; quoted names stay quoted.
  // CHECK: "test.unit"() {"a name" = 1, flag, tessera.tag} : () -> ()
  "test.unit"() {flag, tessera.tag, "a name" = 1} : () -> ()
  // CHECK: "test.arrays"() {empty = [], floats = [1.0 : f32, 2.5 : f32], ints = [1, 2, 3], mixed = [1, "x", true, [2, [3]]], pads = {{\[\[}}0, 1], [1, 0]]} : () -> ()
  "test.arrays"() {ints = [1, 2, 3], floats = [1.0 : f32, 2.5 : f32], empty = [], mixed = [1, "x", true, [2, [3]]], pads = [[0, 1], [1, 0]]} : () -> ()
  // CHECK: "test.dicts"() {d = {a = 1, b = {c = "x"}, z = []}, e = {}} : () -> ()
  "test.dicts"() {d = {z = [], b = {c = "x"}, a = 1}, e = {}} : () -> ()
  // CHECK: "test.types"() {fn = (tensor<2xf32>, tensor<i1>) -> tensor<2xf32>, idx = index, scalar = f32, t = tensor<1x3x32x32xbf16>} : () -> ()
  "test.types"() {t = tensor<1x3x32x32xbf16>, scalar = f32, idx = index, fn = (tensor<2xf32>, tensor<i1>) -> tensor<2xf32>} : () -> ()
  // Dense elements: nested, integer, boolean, splat, rank 0, empty, elided.
  // CHECK: "test.dense"() {b = dense<[true, false, true]> : tensor<3xi1>, e = dense<[]> : tensor<0xf32>, el = dense_resource<__elided__> : tensor<1000xf32>, f = dense<{{\[\[}}1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>, i = dense<[1, -2, 3]> : tensor<3xi32>, r0 = dense<7> : tensor<i64>, s = dense<0.5> : tensor<4x4xf32>} : () -> ()
  "test.dense"() {f = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>, i = dense<[1, -2, 3]> : tensor<3xi32>, b = dense<[true, false, true]> : tensor<3xi1>, s = dense<0.5> : tensor<4x4xf32>, r0 = dense<7> : tensor<i64>, e = dense<[]> : tensor<0xf32>, el = dense_resource<__elided__> : tensor<1000xf32>} : () -> ()
  func.return
}

// Registered ops keep their attributes too; the defaults are not added.
// CHECK-LABEL: func.func @registered
// CHECK: graph.conv2d %arg0, %arg1 {dilations = [1, 1], groups = 1, pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
// CHECK: graph.gemm %arg2, %arg3 {alpha = 0.5 : f32, transB = true} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
// CHECK: graph.softmax %{{.*}} : tensor<2x4xf32>
func.func @registered(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> (tensor<1x4x4x4xf32>, tensor<2x4xf32>) {
  %0 = "graph.conv2d"(%x, %w) {strides = [2, 2], pads = [1, 1, 1, 1], dilations = [1, 1], groups = 1} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  %1 = "graph.gemm"(%a, %b) {transB = true, alpha = 0.5 : f32} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
  %2 = "graph.softmax"(%1) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %0, %2 : tensor<1x4x4x4xf32>, tensor<2x4xf32>
}
