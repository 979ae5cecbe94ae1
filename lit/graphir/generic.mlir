// --mlir-print-op-generic prints the module, func.func and every op in
// MLIR's generic form, which Debian's mlir-opt-16 reads back.
// RUN: tessera-opt %s --mlir-print-op-generic | FileCheck %s
// RUN: tessera-opt %s --mlir-print-op-generic --mlir-print-debuginfo | mlir-opt --allow-unregistered-dialect --mlir-print-op-generic --mlir-print-debuginfo | FileCheck %s --check-prefix=MLIR
// REQUIRES: mlir-opt

// CHECK: "builtin.module"() ({
// CHECK-NEXT: "func.func"() ({
// CHECK-NEXT: ^bb0(%arg0: tensor<1x3x4x4xf32>, %arg1: tensor<2x3x3x3xf32>):
// CHECK-NEXT: %0 = "graph.conv2d"(%arg0, %arg1) {pads = [1, 1, 1, 1]} : (tensor<1x3x4x4xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT: %1 = "graph.relu"(%0) : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK-NEXT: %2 = "graph.global_avg_pool"(%1) : (tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32>
// CHECK-NEXT: "func.return"(%2) : (tensor<1x2x1x1xf32>) -> ()
// CHECK-NEXT: }) {function_type = (tensor<1x3x4x4xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x1x1xf32>, sym_name = "main", tessera.entry} : () -> ()
// CHECK-NEXT: }) {sym_name = "tiny", tessera.version = "0.1"} : () -> ()

// mlir-opt-16 parses the generic form and keeps our ops and locations.
// MLIR: "graph.conv2d"(%arg0, %arg1) {pads = [1, 1, 1, 1]} : (tensor<1x3x4x4xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x4x4xf32> loc({{.+}})
// MLIR: "graph.relu"
// MLIR: "graph.global_avg_pool"
// MLIR: "func.return"(%2) : (tensor<1x2x1x1xf32>) -> ()
// MLIR: sym_name = "main"
// MLIR: #loc{{[0-9]*}} = loc("{{.*}}generic.mlir":[[# @LINE + 4]]:10)

module @tiny attributes {tessera.version = "0.1"} {
  func.func @main(%x: tensor<1x3x4x4xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x2x1x1xf32> attributes {tessera.entry} {
    %0 = graph.conv2d %x, %w {pads = [1, 1, 1, 1]} : (tensor<1x3x4x4xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x4x4xf32>
    %1 = graph.relu %0 : tensor<1x2x4x4xf32>
    %2 = graph.global_avg_pool %1 : (tensor<1x2x4x4xf32>) -> tensor<1x2x1x1xf32>
    func.return %2 : tensor<1x2x1x1xf32>
  }
}
