// graph.quantize_linear's bounds must lie within the zero point type's
// range and be in order; graph.dequantize_linear takes none.
// RUN: tessera-opt %s --split-input-file --verify-diagnostics

func.func @max_ui8(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<4xui8> {
  // expected-error@+1 {{'graph.quantize_linear' op max = 256 is outside ui8's range}}
  %0 = graph.quantize_linear %x, %s, %z {max = 256} : (tensor<4xf32>, tensor<f32>, tensor<ui8>) -> tensor<4xui8>
  func.return %0 : tensor<4xui8>
}

// -----

func.func @min_i8(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<i8>) -> tensor<4xi8> {
  // expected-error@+1 {{'graph.quantize_linear' op min = -129 is outside i8's range}}
  %0 = graph.quantize_linear %x, %s, %z {min = -129} : (tensor<4xf32>, tensor<f32>, tensor<i8>) -> tensor<4xi8>
  func.return %0 : tensor<4xi8>
}

// -----

func.func @order(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<4xui8> {
  // expected-error@+1 {{'graph.quantize_linear' op min = 100 is above max = 50}}
  %0 = graph.quantize_linear %x, %s, %z {min = 100, max = 50} : (tensor<4xf32>, tensor<f32>, tensor<ui8>) -> tensor<4xui8>
  func.return %0 : tensor<4xui8>
}

// -----

func.func @float_bound(%x: tensor<4xf32>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<4xui8> {
  // expected-error@+1 {{'graph.quantize_linear' op attribute 'max' must be an integer, got 1.5 : f32}}
  %0 = graph.quantize_linear %x, %s, %z {max = 1.5 : f32} : (tensor<4xf32>, tensor<f32>, tensor<ui8>) -> tensor<4xui8>
  func.return %0 : tensor<4xui8>
}

// -----

func.func @dequantize(%q: tensor<4xui8>, %s: tensor<f32>, %z: tensor<ui8>) -> tensor<4xf32> {
  // expected-error@+1 {{'graph.dequantize_linear' op does not accept attribute 'max'}}
  %0 = graph.dequantize_linear %q, %s, %z {max = 127} : (tensor<4xui8>, tensor<f32>, tensor<ui8>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
