// --split-input-file processes each chunk on its own: errors keep the
// line numbers of this file, the other chunks still print, joined by
// `// -----`, and the exit status is 1.
// RUN: not tessera-opt %s --split-input-file 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=ERR < %t.err
// Without splitting, the markers are plain comments: the whole file is one
// module, whose parse error (in the last function) is the only diagnostic.
// RUN: not tessera-opt %s 2>&1 | FileCheck %s --check-prefix=WHOLE

// CHECK: module {
// CHECK-NEXT: func.func @first
// CHECK: }
// CHECK-NEXT: }
// CHECK-NEXT: // -----
// CHECK-NEXT: module {
// CHECK-NEXT: func.func @third
// CHECK-NOT: @second
// CHECK-NOT: @fourth

// ERR-NOT: error
// ERR: split-input-file.mlir:[[# @LINE + 14]]:8: error: 'graph.relu' op
// ERR-NEXT: split-input-file.mlir:[[# @LINE + 26]]:{{[0-9]+}}: error: use of undeclared SSA value name '%nope'
// ERR-NOT: error

// WHOLE: split-input-file.mlir:[[# @LINE + 23]]:15: error: use of undeclared SSA value name '%nope'
// WHOLE-NOT: error

func.func @first(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}

// -----

func.func @second(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "graph.relu"(%x) : (tensor<2xf32>) -> tensor<3xf32>
  func.return %x : tensor<2xf32>
}

// -----

func.func @third(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}

// -----

func.func @fourth(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %nope : tensor<2xf32>
}
