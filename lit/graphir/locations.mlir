// Locations: each op gets the position it was parsed at, an explicit
// loc(...) wins, and passes keep them. --mlir-print-debuginfo prints them.
// RUN: tessera-opt %s --mlir-print-debuginfo | FileCheck %s
// RUN: tessera-opt %s --mlir-print-debuginfo --cse --canonicalize | FileCheck %s --check-prefix=PASS
// RUN: tessera-opt %s --mlir-print-debuginfo | tessera-opt --mlir-print-debuginfo | FileCheck %s
// RUN: tessera-opt %s | FileCheck %s --check-prefix=NOLOC

// CHECK-LABEL: module {
// CHECK: func.func @main(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
// CHECK-NEXT: %0 = graph.relu %arg0 : tensor<2x3xf32> loc("{{.*}}locations.mlir":[[@LINE+9]]:8)
// CHECK-NEXT: %1 = graph.tanh %0 : tensor<2x3xf32> loc("model.py":12:5)
// CHECK-NEXT: %2 = graph.sigmoid %1 : tensor<2x3xf32> loc(unknown)
// CHECK-NEXT: %3 = graph.add %2, %2 : tensor<2x3xf32> loc("{{.*}}locations.mlir":[[@LINE+9]]:8)
// CHECK-NEXT: %4 = graph.add %2, %2 : tensor<2x3xf32> loc("{{.*}}locations.mlir":[[@LINE+9]]:8)
// CHECK-NEXT: %5 = graph.mul %3, %4 : tensor<2x3xf32> loc("{{.*}}locations.mlir":[[@LINE+9]]:8)
// CHECK-NEXT: func.return %5 : tensor<2x3xf32> loc("{{.*}}locations.mlir":[[@LINE+9]]:3)
// CHECK-NEXT: } loc("{{.*}}locations.mlir":[[@LINE+1]]:1)
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "graph.relu"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "graph.tanh"(%0) : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("model.py":12:5)
  %2 = graph.sigmoid %1 : tensor<2x3xf32> loc(unknown)
  %3 = graph.add %2, %2 : tensor<2x3xf32>
  %4 = graph.add %2, %2 : tensor<2x3xf32>
  %5 = graph.mul %3, %4 : tensor<2x3xf32>
  func.return %5 : tensor<2x3xf32>
}

// CSE keeps the first of two equal ops, with its location.
// PASS: %3 = graph.add %2, %2 : tensor<2x3xf32> loc("{{.*}}locations.mlir":22:8)
// PASS-NEXT: %4 = graph.mul %3, %3 : tensor<2x3xf32> loc("{{.*}}locations.mlir":24:8)
// PASS-NOT: graph.add

// NOLOC-NOT: loc(
