// A location may name only a file, loc("file"), at the graph level as at
// the tensor level (lit/tir/file-locations.tir): both parse it the same
// way and print it back as written, and print ∘ parse stays the identity
// on printed text. Lowered to tensor IR the location prints the same.
// RUN: tessera-opt %s --mlir-print-debuginfo | FileCheck %s
// RUN: tessera-opt %s --mlir-print-debuginfo | tessera-opt --mlir-print-debuginfo | FileCheck %s
// RUN: tessera-opt %s --legalize-to-hlo --fuse --lower-to-tir --mlir-print-debuginfo | FileCheck %s --check-prefix=TIR
// RUN: tessera-opt %s --legalize-to-hlo --fuse --lower-to-tir --mlir-print-debuginfo | tessera-opt --mlir-print-debuginfo | FileCheck %s --check-prefix=TIR

// CHECK-LABEL: func.func @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
// CHECK-NEXT: %0 = graph.relu %arg0 : tensor<2xf32> loc("model.py")
// CHECK-NEXT: %1 = graph.tanh %0 : tensor<2xf32> loc("model.py":3:5)
// CHECK-NEXT: func.return %1 : tensor<2xf32> loc(unknown)
// CHECK-NEXT: } loc("model.onnx")

// TIR-LABEL: tir.func @fused_0(
// TIR: %t0[%v0] = max(%in0[%v0], 0.0) loc("model.py")
// TIR-LABEL: tir.func @main(%arg0: buffer<2xf32> loc("model.onnx"), out %out0: buffer<2xf32> loc("model.onnx")) attributes {tessera.host} {
// TIR-NEXT: tir.call @fused_0(%arg0, %out0) loc("model.py":3:5)
// TIR-NEXT: } loc("model.onnx")
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = graph.relu %x : tensor<2xf32> loc("model.py")
  %1 = graph.tanh %0 : tensor<2xf32> loc("model.py":3:5)
  func.return %1 : tensor<2xf32> loc(unknown)
} loc("model.onnx")
