// graph.bit_shift diagnostics: unsigned integers only (ONNX BitShift),
// one element type, a required direction LEFT or RIGHT, broadcastable
// shapes.
// RUN: tessera-opt %s --split-input-file --verify-diagnostics

func.func @signed(%x: tensor<3xi32>, %y: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error@+1 {{'graph.bit_shift' op requires an unsigned integer element type (ui8, ui16, ui32 or ui64), got tensor<3xi32>}}
  %0 = graph.bit_shift %x, %y {direction = "LEFT"} : tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @float(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'graph.bit_shift' op requires an unsigned integer element type (ui8, ui16, ui32 or ui64), got tensor<3xf32>}}
  %0 = graph.bit_shift %x, %y {direction = "RIGHT"} : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @bool(%x: tensor<3xi1>, %y: tensor<3xi1>) -> tensor<3xi1> {
  // expected-error@+1 {{'graph.bit_shift' op requires an unsigned integer element type (ui8, ui16, ui32 or ui64), got tensor<3xi1>}}
  %0 = graph.bit_shift %x, %y {direction = "RIGHT"} : tensor<3xi1>
  func.return %0 : tensor<3xi1>
}

// -----

func.func @mixed(%x: tensor<3xui8>, %y: tensor<3xui16>) -> tensor<3xui8> {
  // expected-error@+1 {{'graph.bit_shift' op operand #1 has element type ui16, but operand #0 has ui8}}
  %0 = graph.bit_shift %x, %y {direction = "LEFT"} : (tensor<3xui8>, tensor<3xui16>) -> tensor<3xui8>
  func.return %0 : tensor<3xui8>
}

// -----

func.func @direction(%x: tensor<3xui8>, %y: tensor<3xui8>) -> tensor<3xui8> {
  // expected-error@+1 {{'graph.bit_shift' op attribute 'direction' must be one of ["LEFT" "RIGHT"], got "UP"}}
  %0 = graph.bit_shift %x, %y {direction = "UP"} : tensor<3xui8>
  func.return %0 : tensor<3xui8>
}

// -----

func.func @nodirection(%x: tensor<3xui8>, %y: tensor<3xui8>) -> tensor<3xui8> {
  // expected-error@+1 {{'graph.bit_shift' op requires attribute 'direction'}}
  %0 = graph.bit_shift %x, %y : tensor<3xui8>
  func.return %0 : tensor<3xui8>
}

// -----

func.func @shapes(%x: tensor<2x3xui8>, %y: tensor<2xui8>) -> tensor<2x3xui8> {
  // expected-error@+1 {{'graph.bit_shift' op operand shapes [2, 3] and [2] are not broadcast-compatible}}
  %0 = graph.bit_shift %x, %y {direction = "LEFT"} : (tensor<2x3xui8>, tensor<2xui8>) -> tensor<2x3xui8>
  func.return %0 : tensor<2x3xui8>
}

// -----

func.func @neg(%x: tensor<3xui8>) -> tensor<3xui8> {
  // expected-error@+1 {{'graph.neg' op requires a signed integer or floating-point element type, got tensor<3xui8>}}
  %0 = graph.neg %x : tensor<3xui8>
  func.return %0 : tensor<3xui8>
}
