// --timing reports the wall-clock time of each pass, in order, on stderr.
// RUN: tessera-opt %s --cse --canonicalize --dce --timing 2>&1 >/dev/null | FileCheck %s
// RUN: tessera-opt %s --timing 2>&1 >/dev/null | FileCheck %s --check-prefix=NONE

// CHECK: Pass execution timing report
// CHECK: Total Execution Time: {{[0-9]+\.[0-9]+}} seconds
// CHECK: ----Wall Time----  ----Name----
// CHECK-NEXT: {{[0-9]+\.[0-9]+}} ({{ *[0-9]+\.[0-9]}}%)  cse
// CHECK-NEXT: {{[0-9]+\.[0-9]+}} ({{ *[0-9]+\.[0-9]}}%)  canonicalize
// CHECK-NEXT: {{[0-9]+\.[0-9]+}} ({{ *[0-9]+\.[0-9]}}%)  dce
// CHECK-NEXT: {{[0-9]+\.[0-9]+}} (100.0%)  Total

// NONE: Pass execution timing report
// NONE: ----Wall Time----  ----Name----
// NONE-NEXT: (100.0%)  Total

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.relu %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
