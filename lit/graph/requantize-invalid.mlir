// graph.requantize diagnostics: an i32 accumulator, i32 multiplier and
// shift of one shape, an 8-bit scalar zero point, bounds inside its
// type and in order, constant multipliers and shifts in range.
// RUN: tessera-opt %s --split-input-file --verify-diagnostics

func.func @float_acc(%acc: tensor<4xf32>, %m: tensor<i32>, %s: tensor<i32>, %z: tensor<ui8>) -> tensor<4xui8> {
  // expected-error@+1 {{'graph.requantize' op acc must be i32, got tensor<4xf32>}}
  %0 = graph.requantize %acc, %m, %s, %z : (tensor<4xf32>, tensor<i32>, tensor<i32>, tensor<ui8>) -> tensor<4xui8>
  func.return %0 : tensor<4xui8>
}

// -----

func.func @shapes(%acc: tensor<4xi32>, %m: tensor<4xi32>, %s: tensor<i32>, %z: tensor<ui8>) -> tensor<4xui8> {
  // expected-error@+1 {{'graph.requantize' op multiplier tensor<4xi32> and shift tensor<i32> must be i32 of one shape}}
  %0 = graph.requantize %acc, %m, %s, %z {axis = 0} : (tensor<4xi32>, tensor<4xi32>, tensor<i32>, tensor<ui8>) -> tensor<4xui8>
  func.return %0 : tensor<4xui8>
}

// -----

func.func @zero_point(%acc: tensor<4xi32>, %m: tensor<i32>, %s: tensor<i32>, %z: tensor<i32>) -> tensor<4xi32> {
  // expected-error@+1 {{'graph.requantize' op zero_point must be an i8 or ui8 scalar, got tensor<i32>}}
  %0 = graph.requantize %acc, %m, %s, %z : (tensor<4xi32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

func.func @bounds(%acc: tensor<4xi32>, %m: tensor<i32>, %s: tensor<i32>, %z: tensor<i8>) -> tensor<4xi8> {
  // expected-error@+1 {{'graph.requantize' op max = 200 is outside i8's range}}
  %0 = graph.requantize %acc, %m, %s, %z {max = 200} : (tensor<4xi32>, tensor<i32>, tensor<i32>, tensor<i8>) -> tensor<4xi8>
  func.return %0 : tensor<4xi8>
}

// -----

func.func @order(%acc: tensor<4xi32>, %m: tensor<i32>, %s: tensor<i32>, %z: tensor<ui8>) -> tensor<4xui8> {
  // expected-error@+1 {{'graph.requantize' op min = 30 is above max = 20}}
  %0 = graph.requantize %acc, %m, %s, %z {min = 30, max = 20} : (tensor<4xi32>, tensor<i32>, tensor<i32>, tensor<ui8>) -> tensor<4xui8>
  func.return %0 : tensor<4xui8>
}

// -----

func.func @multiplier(%acc: tensor<4xi32>, %z: tensor<ui8>) -> tensor<4xui8> {
  %m = graph.constant {value = dense<1000> : tensor<i32>} : tensor<i32>
  %s = graph.constant {value = dense<3> : tensor<i32>} : tensor<i32>
  // expected-error@+1 {{'graph.requantize' op channel 0: multiplier 1000 is not 0 or in [2^30, 2^31)}}
  %0 = graph.requantize %acc, %m, %s, %z : (tensor<4xi32>, tensor<i32>, tensor<i32>, tensor<ui8>) -> tensor<4xui8>
  func.return %0 : tensor<4xui8>
}

// -----

func.func @shift(%acc: tensor<4xi32>, %z: tensor<ui8>) -> tensor<4xui8> {
  %m = graph.constant {value = dense<1073741824> : tensor<i32>} : tensor<i32>
  %s = graph.constant {value = dense<40> : tensor<i32>} : tensor<i32>
  // expected-error@+1 {{'graph.requantize' op channel 0: shift 40 is outside [-14, 31]}}
  %0 = graph.requantize %acc, %m, %s, %z : (tensor<4xi32>, tensor<i32>, tensor<i32>, tensor<ui8>) -> tensor<4xui8>
  func.return %0 : tensor<4xui8>
}
