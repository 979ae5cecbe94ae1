// Verifier and shape-inference errors of the elementwise ONNX ops, one per chunk.
// RUN: tessera-opt %s --split-input-file --verify-diagnostics

func.func @f0(%x: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error@+1 {{'graph.exp' op requires a floating-point element type, got tensor<3xi32>}}
  %0 = graph.exp %x : tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @f1(%x: tensor<3xi1>) -> tensor<3xi1> {
  // expected-error@+1 {{'graph.sign' op requires an integer or floating-point element type, got tensor<3xi1>}}
  %0 = graph.sign %x : tensor<3xi1>
  func.return %0 : tensor<3xi1>
}

// -----

func.func @f2(%a: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'graph.pow' op operand shapes [2, 3] and [2] are not broadcast-compatible}}
  %0 = graph.pow %a, %b : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @f3(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'graph.less' op inferred result types (tensor<3xi1>)}}
  %0 = graph.less %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @f4(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'graph.and' op requires element type i1, got tensor<3xf32>}}
  %0 = graph.and %a, %b : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @f5(%c: tensor<3xf32>, %a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'graph.where' op condition must have element type i1, got tensor<3xf32>}}
  %0 = graph.where %c, %a, %a : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @f6(%x: tensor<3xf32>, %s: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'graph.prelu' op slope [2, 3] must broadcast to the input shape [3]}}
  %0 = graph.prelu %x, %s : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @f7(%x: tensor<3xf32>) -> tensor<4xi32> {
  // expected-error@+1 {{'graph.cast' op result shape must equal the operand shape: operand tensor<3xf32>, result tensor<4xi32>}}
  %0 = graph.cast %x : (tensor<3xf32>) -> tensor<4xi32>
  func.return %0 : tensor<4xi32>
}

// -----

func.func @f8(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'graph.hard_sigmoid' op attribute 'alpha' must be finite}}
  %0 = graph.hard_sigmoid %x {alpha = 0x7F800000 : f32} : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @f9(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'graph.leaky_relu' op}}
  %0 = graph.leaky_relu %x {alpha = "big"} : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @f10(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'graph.elu' op does not accept attribute 'beta'}}
  %0 = graph.elu %x {beta = 1.0 : f32} : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @mod_float_fmod0(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'graph.mod' op floating-point operands need fmod = 1 (fmod = 0 is integer modulo), got tensor<3xf32>}}
  %0 = graph.mod %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @mod_fmod2(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error@+1 {{'graph.mod' op attribute 'fmod' must be 0 or 1, got 2}}
  %0 = graph.mod %a, %a {fmod = 2} : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @celu_alpha0(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'graph.celu' op attribute 'alpha' must be non-zero}}
  %0 = graph.celu %x {alpha = 0.0 : f32} : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @sin_int(%x: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error@+1 {{'graph.sin' op requires a floating-point element type, got tensor<3xi32>}}
  %0 = graph.sin %x : tensor<3xi32>
  func.return %0 : tensor<3xi32>
}
