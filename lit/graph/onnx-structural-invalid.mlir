// Every verifier and shape-inference error of the structural graph ops,
// one per chunk.
// RUN: tessera-opt %s --split-input-file --verify-diagnostics

func.func @f0(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
  // expected-error@+1 {{'graph.reduce_sum' op axis 2 is out of range for rank 2 (expected [-2, 1])}}
  %0 = "graph.reduce_sum"(%x) {axes = [2]} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  func.return %0 : tensor<2x1xf32>
}

// -----

func.func @f1(%x: tensor<2x3xf32>) -> tensor<1x1xf32> {
  // expected-error@+1 {{'graph.reduce_max' op axes [1, -1] names dimension 1 more than once}}
  %0 = "graph.reduce_max"(%x) {axes = [1, -1]} : (tensor<2x3xf32>) -> tensor<1x1xf32>
  func.return %0 : tensor<1x1xf32>
}

// -----

func.func @f2(%x: tensor<2x3xi32>) -> tensor<1x1xi32> {
  // expected-error@+1 {{'graph.reduce_mean' op requires a floating-point element type, got tensor<2x3xi32>}}
  %0 = "graph.reduce_mean"(%x) : (tensor<2x3xi32>) -> tensor<1x1xi32>
  func.return %0 : tensor<1x1xi32>
}

// -----

func.func @f3(%x: tensor<2x3xi1>) -> tensor<1x1xi1> {
  // expected-error@+1 {{'graph.reduce_prod' op requires a numeric element type, got tensor<2x3xi1>}}
  %0 = "graph.reduce_prod"(%x) : (tensor<2x3xi1>) -> tensor<1x1xi1>
  func.return %0 : tensor<1x1xi1>
}

// -----

func.func @f4(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
  // expected-error@+1 {{'graph.reduce_l2' op inferred result types (tensor<2xf32>) do not match the written types (tensor<2x1xf32>)}}
  %0 = "graph.reduce_l2"(%x) {axes = [1], keepdims = false} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  func.return %0 : tensor<2x1xf32>
}

// -----

func.func @f5(%x: tensor<2x3xf32>) -> tensor<1x1xf32> {
  // expected-error@+1 {{'graph.reduce_log_sum_exp' op attribute 'keepdims' must be a bool, got 1}}
  %0 = "graph.reduce_log_sum_exp"(%x) {keepdims = 1} : (tensor<2x3xf32>) -> tensor<1x1xf32>
  func.return %0 : tensor<1x1xf32>
}

// -----

func.func @f6(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'graph.log_softmax' op axis -3 is out of range for rank 2 (expected [-2, 1])}}
  %0 = "graph.log_softmax"(%x) {axis = -3} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @f7(%x: tensor<f32>) -> tensor<f32> {
  // expected-error@+1 {{'graph.log_softmax' op input must have rank at least 1, got tensor<f32>}}
  %0 = "graph.log_softmax"(%x) : (tensor<f32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}

// -----

func.func @f8(%x: tensor<4x5xf32>) -> tensor<1x5xf32> {
  // expected-error@+1 {{'graph.slice' op starts [0] and ends [1, 2] must have the same length}}
  %0 = "graph.slice"(%x) {starts = [0], ends = [1, 2]} : (tensor<4x5xf32>) -> tensor<1x5xf32>
  func.return %0 : tensor<1x5xf32>
}

// -----

func.func @f9(%x: tensor<4x5xf32>) -> tensor<1x5xf32> {
  // expected-error@+1 {{'graph.slice' op steps [0] must be non-zero}}
  %0 = "graph.slice"(%x) {starts = [0], ends = [1], steps = [0]} : (tensor<4x5xf32>) -> tensor<1x5xf32>
  func.return %0 : tensor<1x5xf32>
}

// -----

func.func @f10(%x: tensor<4x5xf32>) -> tensor<1x5xf32> {
  // expected-error@+1 {{'graph.slice' op axes [1, -1] names dimension 1 more than once}}
  %0 = "graph.slice"(%x) {starts = [0, 0], ends = [1, 1], axes = [1, -1]} : (tensor<4x5xf32>) -> tensor<1x5xf32>
  func.return %0 : tensor<1x5xf32>
}

// -----

func.func @f11(%x: tensor<4x5xf32>) -> tensor<1x5xf32> {
  // expected-error@+1 {{'graph.slice' op axis 2 is out of range for rank 2}}
  %0 = "graph.slice"(%x) {starts = [0], ends = [1], axes = [2]} : (tensor<4x5xf32>) -> tensor<1x5xf32>
  func.return %0 : tensor<1x5xf32>
}

// -----

func.func @f12(%x: tensor<4x5xf32>) -> tensor<1x5xf32> {
  // expected-error@+1 {{'graph.slice' op requires attribute 'starts'}}
  %0 = "graph.slice"(%x) {ends = [1]} : (tensor<4x5xf32>) -> tensor<1x5xf32>
  func.return %0 : tensor<1x5xf32>
}

// -----

func.func @f13(%x: tensor<4x5xf32>) -> tensor<3x5xf32> {
  // expected-error@+1 {{'graph.slice' op inferred result types (tensor<2x5xf32>) do not match the written types (tensor<3x5xf32>)}}
  %0 = "graph.slice"(%x) {starts = [-1], ends = [-10], steps = [-2]} : (tensor<4x5xf32>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}

// -----

func.func @f14(%x: tensor<3x2xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{'graph.gather' op index 3 is out of range for dimension 0 of size 3 (expected [-3, 2])}}
  %0 = "graph.gather"(%x) {indices = dense<[0, 3]> : tensor<2xi64>} : (tensor<3x2xf32>) -> tensor<2x2xf32>
  func.return %0 : tensor<2x2xf32>
}

// -----

func.func @f15(%x: tensor<3x2xf32>) -> tensor<3x1xf32> {
  // expected-error@+1 {{'graph.gather' op index -3 is out of range for dimension 1 of size 2 (expected [-2, 1])}}
  %0 = "graph.gather"(%x) {axis = 1, indices = dense<[-3]> : tensor<1xi64>} : (tensor<3x2xf32>) -> tensor<3x1xf32>
  func.return %0 : tensor<3x1xf32>
}

// -----

func.func @f16(%x: tensor<3x2xf32>) -> tensor<1x2xf32> {
  // expected-error@+1 {{'graph.gather' op indices must have an integer element type, got tensor<1xf32>}}
  %0 = "graph.gather"(%x) {indices = dense<[0.0]> : tensor<1xf32>} : (tensor<3x2xf32>) -> tensor<1x2xf32>
  func.return %0 : tensor<1x2xf32>
}

// -----

func.func @f17(%x: tensor<3x2xf32>) -> tensor<1x2xf32> {
  // expected-error@+1 {{'graph.gather' op axis 2 is out of range for rank 2}}
  %0 = "graph.gather"(%x) {axis = 2, indices = dense<[0]> : tensor<1xi64>} : (tensor<3x2xf32>) -> tensor<1x2xf32>
  func.return %0 : tensor<1x2xf32>
}

// -----

func.func @f18(%x: tensor<3x2xf32>) -> tensor<1x2xf32> {
  // expected-error@+1 {{'graph.gather' op attribute 'indices' must be a dense elements, got [0]}}
  %0 = "graph.gather"(%x) {indices = [0]} : (tensor<3x2xf32>) -> tensor<1x2xf32>
  func.return %0 : tensor<1x2xf32>
}

// -----

func.func @f19(%x: tensor<3x2xf32>) -> tensor<4x2xf32> {
  // expected-error@+1 {{'graph.pad' op pads [1, 0] must have 4 entries (2 × rank 2)}}
  %0 = "graph.pad"(%x) {pads = [1, 0]} : (tensor<3x2xf32>) -> tensor<4x2xf32>
  func.return %0 : tensor<4x2xf32>
}

// -----

func.func @f20(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'graph.pad' op attribute 'mode' must be one of ["constant" "reflect" "edge"], got "wrap"}}
  %0 = "graph.pad"(%x) {pads = [0, 0, 0, 0], mode = "wrap"} : (tensor<3x2xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// -----

func.func @f21(%x: tensor<3x2xf32>) -> tensor<0x2xf32> {
  // expected-error@+1 {{'graph.pad' op pads crop 4 elements from dimension 0 of size 3}}
  %0 = "graph.pad"(%x) {pads = [-2, 0, -2, 0]} : (tensor<3x2xf32>) -> tensor<0x2xf32>
  func.return %0 : tensor<0x2xf32>
}

// -----

func.func @f22(%x: tensor<3x2xf32>) -> tensor<3x1xf32> {
  // expected-error@+1 {{'graph.pad' op reflect pad of dimension 1 needs a non-empty dimension}}
  %0 = "graph.pad"(%x) {pads = [0, 1, 0, -2], mode = "reflect"} : (tensor<3x2xf32>) -> tensor<3x1xf32>
  func.return %0 : tensor<3x1xf32>
}

// -----

func.func @f23(%x: tensor<3x2xf32>) -> tensor<1x2xf32> {
  // expected-error@+1 {{'graph.pad' op edge pad of dimension 0 needs a non-empty dimension}}
  %0 = "graph.pad"(%x) {pads = [1, 0, -3, 0], mode = "edge"} : (tensor<3x2xf32>) -> tensor<1x2xf32>
  func.return %0 : tensor<1x2xf32>
}

// -----

func.func @f24(%x: tensor<3x2xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'graph.expand' op cannot expand tensor<3x2xf32> to shape [4]}}
  %0 = "graph.expand"(%x) {shape = [4]} : (tensor<3x2xf32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

func.func @f25(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'graph.expand' op shape [-1, 2] must not have negative entries}}
  %0 = "graph.expand"(%x) {shape = [-1, 2]} : (tensor<3x2xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// -----

func.func @f26(%x: tensor<3x2xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'graph.expand' op requires attribute 'shape'}}
  %0 = "graph.expand"(%x) : (tensor<3x2xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// -----

func.func @f27(%x: tensor<3x2xf32>) -> tensor<6x2xf32> {
  // expected-error@+1 {{'graph.tile' op repeats [2] must have 2 entries (the input rank)}}
  %0 = "graph.tile"(%x) {repeats = [2]} : (tensor<3x2xf32>) -> tensor<6x2xf32>
  func.return %0 : tensor<6x2xf32>
}

// -----

func.func @f28(%x: tensor<3x2xf32>) -> tensor<6x2xf32> {
  // expected-error@+1 {{'graph.tile' op repeats [2, -1] must be in [0, 2^31)}}
  %0 = "graph.tile"(%x) {repeats = [2, -1]} : (tensor<3x2xf32>) -> tensor<6x2xf32>
  func.return %0 : tensor<6x2xf32>
}

// -----

func.func @f29(%x: tensor<5xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'graph.split' op split sizes [2, 2] sum to 4, but dimension 0 has size 5}}
  %0:2 = "graph.split"(%x) {split = [2, 2]} : (tensor<5xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return %0#0 : tensor<2xf32>
}

// -----

func.func @f30(%x: tensor<5xf32>) -> tensor<6xf32> {
  // expected-error@+1 {{'graph.split' op split sizes [6, -1] must be non-negative}}
  %0:2 = "graph.split"(%x) {split = [6, -1]} : (tensor<5xf32>) -> (tensor<6xf32>, tensor<0xf32>)
  func.return %0#0 : tensor<6xf32>
}

// -----

func.func @f31(%x: tensor<5xf32>) -> tensor<5xf32> {
  // expected-error@+1 {{'graph.split' op takes 'split' or 'num_outputs', not both}}
  %0:1 = "graph.split"(%x) {split = [5], num_outputs = 1} : (tensor<5xf32>) -> (tensor<5xf32>)
  func.return %0#0 : tensor<5xf32>
}

// -----

func.func @f32(%x: tensor<5xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'graph.split' op inferred result types (tensor<2xf32>, tensor<2xf32>, tensor<1xf32>) do not match the written types (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)}}
  %0:3 = "graph.split"(%x) : (tensor<5xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
  func.return %0#0 : tensor<2xf32>
}

// -----

func.func @f33(%x: tensor<5xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'graph.split' op cannot split dimension 0 of size 5 into 4 pieces of 2}}
  %0:3 = "graph.split"(%x) {num_outputs = 4} : (tensor<5xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
  func.return %0#0 : tensor<2xf32>
}

// -----

func.func @f34(%x: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'graph.split' op axis 1 is out of range for rank 1}}
  %0:2 = "graph.split"(%x) {axis = 1} : (tensor<4xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  func.return %0#0 : tensor<2xf32>
}
