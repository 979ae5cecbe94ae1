// Passes run in command-line order; --print-ir-after-all dumps the IR to
// stderr after each one, --print-ir-after only after the named ones.
// RUN: tessera-opt %s --cse --pass-pipeline='dce,canonicalize' --dce --print-ir-after-all 2>&1 >/dev/null | FileCheck %s
// RUN: tessera-opt %s --cse --dce --print-ir-after=dce 2>&1 >/dev/null | FileCheck %s --check-prefix=AFTER
// RUN: tessera-opt %s --cse --dce --print-ir-after=cse --print-ir-after=dce --mlir-print-op-generic 2>&1 >/dev/null | FileCheck %s --check-prefix=GENERIC
// RUN: tessera-opt %s --cse --dce 2>&1 >/dev/null | FileCheck %s --allow-empty --check-prefix=QUIET

// CHECK: // -----// IR Dump After cse //----- //
// CHECK-NEXT: module {
// CHECK: %0 = graph.relu %arg0
// CHECK-NEXT: %1 = graph.add %0, %0
// CHECK-NEXT: %2 = graph.tanh %arg0
// CHECK: // -----// IR Dump After dce //----- //
// CHECK-NOT: graph.tanh
// CHECK: // -----// IR Dump After canonicalize //----- //
// CHECK: // -----// IR Dump After dce //----- //
// CHECK-NOT: IR Dump

// AFTER-NOT: IR Dump After cse
// AFTER: // -----// IR Dump After dce //----- //
// AFTER-NOT: graph.tanh
// AFTER: func.return

// GENERIC: IR Dump After cse
// GENERIC-NEXT: "builtin.module"() ({
// GENERIC: "graph.tanh"
// GENERIC: IR Dump After dce
// GENERIC-NOT: "graph.tanh"

// QUIET-NOT: IR Dump

func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.relu %x : tensor<4xf32>
  %1 = graph.relu %x : tensor<4xf32>
  %2 = graph.add %0, %1 : tensor<4xf32>
  %3 = graph.tanh %x : tensor<4xf32>
  func.return %2 : tensor<4xf32>
}
