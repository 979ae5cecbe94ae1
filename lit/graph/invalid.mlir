// Every verifier and shape-inference error of the graph dialect, one per
// chunk.
// RUN: tessera-opt %s --split-input-file --verify-diagnostics

func.func @f0(%x: tensor<1x3x8x8xf32>, %w: tensor<2x4x3x3xf32>) -> tensor<1x2x6x6xf32> {
  // expected-error@+1 {{'graph.conv2d' op input channels 3 do not match weight channels 4 × groups 1}}
  %0 = graph.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<2x4x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @f1(%x: tensor<1x3x8xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x2x6x6xf32> {
  // expected-error@+1 {{'graph.conv2d' op input must be rank 4 (N×C×H×W), got tensor<1x3x8xf32>}}
  %0 = graph.conv2d %x, %w : (tensor<1x3x8xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @f2(%x: tensor<1x3x8x8xf32>, %w: tensor<2x3x3xf32>) -> tensor<1x2x6x6xf32> {
  // expected-error@+1 {{'graph.conv2d' op weight must be rank 4 (O×C/groups×KH×KW), got tensor<2x3x3xf32>}}
  %0 = graph.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<2x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @f3(%x: tensor<1x4x8x8xf32>, %w: tensor<2x2x3x3xf32>) -> tensor<1x2x6x6xf32> {
  // expected-error@+1 {{'graph.conv2d' op groups 3 does not divide input channels 4}}
  %0 = graph.conv2d %x, %w {groups = 3} : (tensor<1x4x8x8xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @f4(%x: tensor<1x3x8x8xf32>, %w: tensor<2x3x3x3xf32>, %b: tensor<3xf32>) -> tensor<1x2x6x6xf32> {
  // expected-error@+1 {{'graph.conv2d' op bias must have shape [2] (output channels), got tensor<3xf32>}}
  %0 = graph.conv2d %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<2x3x3x3xf32>, tensor<3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @f5(%x: tensor<1x3x8x8xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x2x6x6xf32> {
  // expected-error@+1 {{'graph.conv2d' op pads [0, -1, 0, 0] must be non-negative}}
  %0 = graph.conv2d %x, %w {pads = [0, -1, 0, 0]} : (tensor<1x3x8x8xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @f6(%x: tensor<1x3x8x8xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x2x6x6xf32> {
  // expected-error@+1 {{'graph.conv2d' op strides [0, 1] must be at least 1}}
  %0 = graph.conv2d %x, %w {strides = [0, 1]} : (tensor<1x3x8x8xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @f7(%x: tensor<1x3x2x8xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x2x1x6xf32> {
  // expected-error@+1 {{'graph.conv2d' op height: dilated kernel 3 is larger than the padded input 2 (input tensor<1x3x2x8xf32>, weight tensor<2x3x3x3xf32>)}}
  %0 = graph.conv2d %x, %w : (tensor<1x3x2x8xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x1x6xf32>
  func.return %0 : tensor<1x2x1x6xf32>
}

// -----

func.func @f8(%x: tensor<1x3x8x8xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x2x6x6xf32> {
  // expected-error@+1 {{'graph.conv2d' op attribute 'strides' must have 2 elements, got 3}}
  %0 = graph.conv2d %x, %w {strides = [1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @f9(%x: tensor<1x3x8x8xf32>, %w: tensor<2x3x3x3xf32>) -> tensor<1x2x7x7xf32> {
  // expected-error@+1 {{'graph.conv2d' op inferred result types (tensor<1x2x6x6xf32>) do not match the written types (tensor<1x2x7x7xf32>)}}
  %0 = graph.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<2x3x3x3xf32>) -> tensor<1x2x7x7xf32>
  func.return %0 : tensor<1x2x7x7xf32>
}

// -----

func.func @f10(%x: tensor<1x3x8x8xi64>, %w: tensor<2x3x3x3xi64>) -> tensor<1x2x6x6xi64> {
  // expected-error@+1 {{'graph.conv2d' op requires a floating-point element type, got tensor<1x3x8x8xi64>}}
  %0 = graph.conv2d %x, %w : (tensor<1x3x8x8xi64>, tensor<2x3x3x3xi64>) -> tensor<1x2x6x6xi64>
  func.return %0 : tensor<1x2x6x6xi64>
}

// -----

func.func @f11(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error@+1 {{'graph.matmul' op contracting dimensions differ: tensor<2x3xf32> has 3, tensor<4x5xf32> has 4}}
  %0 = graph.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}

// -----

func.func @f12(%a: tensor<2x2x3xf32>, %b: tensor<3x3x4xf32>) -> tensor<2x2x4xf32> {
  // expected-error@+1 {{'graph.matmul' op batch dimensions of tensor<2x2x3xf32> and tensor<3x3x4xf32>: shapes [2] and [3] are not broadcast-compatible (dimension 0: 2 vs 3)}}
  %0 = graph.matmul %a, %b : (tensor<2x2x3xf32>, tensor<3x3x4xf32>) -> tensor<2x2x4xf32>
  func.return %0 : tensor<2x2x4xf32>
}

// -----

func.func @f13(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'graph.gemm' op contracting dimensions differ: A' is 2×3, B' is 2×4}}
  %0 = graph.gemm %a, %b : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @f14(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'graph.gemm' op C tensor<3xf32> is not unidirectionally broadcastable to [2, 4]}}
  %0 = graph.gemm %a, %b, %c : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @f15(%a: tensor<2x3x1xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'graph.gemm' op A and B must be rank 2, got tensor<2x3x1xf32> and tensor<3x4xf32>}}
  %0 = graph.gemm %a, %b : (tensor<2x3x1xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @f16(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'graph.gemm' op attribute 'transA' must be a bool, got 1}}
  %0 = graph.gemm %a, %b {transA = 1} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @f17(%a: tensor<2x3xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'graph.add' op operand shapes [2, 3] and [2] are not broadcast-compatible (dimension 1: 3 vs 2)}}
  %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @f18(%a: tensor<3xf32>, %b: tensor<3xi32>) -> tensor<3xf32> {
  // expected-error@+1 {{'graph.mul' op operand #1 has element type i32, but operand #0 has f32}}
  %0 = graph.mul %a, %b : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @f19(%a: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error@+1 {{'graph.sigmoid' op requires a floating-point element type, got tensor<3xi32>}}
  %0 = graph.sigmoid %a : tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

func.func @f20(%a: tensor<3xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'graph.relu' op requires the same type for all operands and results}}
  %0 = graph.relu %a : (tensor<3xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @f21(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  // expected-error@+1 {{'graph.max_pool2d' op requires attribute 'kernel'}}
  %0 = graph.max_pool2d %x {strides = [2, 2]} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  func.return %0 : tensor<1x3x4x4xf32>
}

// -----

func.func @f22(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  // expected-error@+1 {{'graph.max_pool2d' op pads [2, 0, 0, 0] must be smaller than the (dilated) kernel [2, 2]}}
  %0 = graph.max_pool2d %x {kernel = [2, 2], pads = [2, 0, 0, 0]} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  func.return %0 : tensor<1x3x4x4xf32>
}

// -----

func.func @f23(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x1x1xf32> {
  // expected-error@+1 {{'graph.avg_pool2d' op height: dilated kernel 9 is larger than the padded input 8 (input tensor<1x3x8x8xf32>, kernel [9, 9])}}
  %0 = graph.avg_pool2d %x {kernel = [9, 9]} : (tensor<1x3x8x8xf32>) -> tensor<1x3x1x1xf32>
  func.return %0 : tensor<1x3x1x1xf32>
}

// -----

func.func @f24(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x7x7xf32> {
  // expected-error@+1 {{'graph.avg_pool2d' op does not accept attribute 'dilations'}}
  %0 = graph.avg_pool2d %x {kernel = [2, 2], dilations = [1, 1]} : (tensor<1x3x8x8xf32>) -> tensor<1x3x7x7xf32>
  func.return %0 : tensor<1x3x7x7xf32>
}

// -----

func.func @f25(%x: tensor<3x8xf32>) -> tensor<3x1xf32> {
  // expected-error@+1 {{'graph.global_avg_pool' op input must have rank at least 3 (N×C×spatial...), got tensor<3x8xf32>}}
  %0 = graph.global_avg_pool %x : (tensor<3x8xf32>) -> tensor<3x1xf32>
  func.return %0 : tensor<3x1xf32>
}

// -----

func.func @f26(%x: tensor<1x3x4x4xf32>, %p: tensor<3xf32>, %q: tensor<4xf32>) -> tensor<1x3x4x4xf32> {
  // expected-error@+1 {{'graph.batch_norm' op mean must have shape [3] (channels of tensor<1x3x4x4xf32>), got tensor<4xf32>}}
  %0 = graph.batch_norm %x, %p, %p, %q, %p : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  func.return %0 : tensor<1x3x4x4xf32>
}

// -----

func.func @f27(%x: tensor<1x3x4x4xf32>, %p: tensor<3xf32>) -> tensor<1x3x4x4xf32> {
  // expected-error@+1 {{'graph.batch_norm' op epsilon -1 must be finite and non-negative}}
  %0 = graph.batch_norm %x, %p, %p, %p, %p {epsilon = -1.0 : f32} : (tensor<1x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x4x4xf32>
  func.return %0 : tensor<1x3x4x4xf32>
}

// -----

func.func @f28(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'graph.softmax' op axis 2 is out of range for rank 2 (expected [-2, 1])}}
  %0 = graph.softmax %x {axis = 2} : tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @f29(%x: tensor<2x3xf32>) -> tensor<1x6xf32> {
  // expected-error@+1 {{'graph.flatten' op axis 3 is out of range for rank 2 (expected [-2, 2])}}
  %0 = graph.flatten %x {axis = 3} : (tensor<2x3xf32>) -> tensor<1x6xf32>
  func.return %0 : tensor<1x6xf32>
}

// -----

func.func @f30(%x: tensor<2x3xf32>) -> tensor<4x2xf32> {
  // expected-error@+1 {{'graph.reshape' op shape [4, 2] has 8 elements, input [2, 3] has 6}}
  %0 = graph.reshape %x {shape = [4, 2]} : (tensor<2x3xf32>) -> tensor<4x2xf32>
  func.return %0 : tensor<4x2xf32>
}

// -----

func.func @f31(%x: tensor<2x3xf32>) -> tensor<6xf32> {
  // expected-error@+1 {{'graph.reshape' op shape [-1, -1] has more than one -1}}
  %0 = graph.reshape %x {shape = [-1, -1]} : (tensor<2x3xf32>) -> tensor<6xf32>
  func.return %0 : tensor<6xf32>
}

// -----

func.func @f32(%x: tensor<2x3xf32>) -> tensor<6xf32> {
  // expected-error@+1 {{'graph.reshape' op cannot infer -1 in shape [4, -1] for input [2, 3] (6 elements)}}
  %0 = graph.reshape %x {shape = [4, -1]} : (tensor<2x3xf32>) -> tensor<6xf32>
  func.return %0 : tensor<6xf32>
}

// -----

func.func @f33(%x: tensor<2x3xf32>) -> tensor<6xf32> {
  // expected-error@+1 {{'graph.reshape' op requires attribute 'shape'}}
  %0 = graph.reshape %x : (tensor<2x3xf32>) -> tensor<6xf32>
  func.return %0 : tensor<6xf32>
}

// -----

func.func @f34(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  // expected-error@+1 {{'graph.transpose' op perm [0, 0, 1] is not a permutation of [0, 3)}}
  %0 = graph.transpose %x {perm = [0, 0, 1]} : tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// -----

func.func @f35(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'graph.transpose' op perm [1, 0, 2] must have 2 entries (the input rank)}}
  %0 = graph.transpose %x {perm = [1, 0, 2]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// -----

func.func @f36(%a: tensor<2x2xf32>, %b: tensor<3x1xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'graph.concat' op operand #1 tensor<3x1xf32> differs from operand #0 tensor<2x2xf32> in dimension 0 (concatenating along 1)}}
  %0 = graph.concat %a, %b {axis = 1} : (tensor<2x2xf32>, tensor<3x1xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @f37(%a: tensor<2x2xf32>, %b: tensor<2xf32>) -> tensor<4x2xf32> {
  // expected-error@+1 {{'graph.concat' op operand #1 tensor<2xf32> has rank 1, operand #0 tensor<2x2xf32> has rank 2}}
  %0 = graph.concat %a, %b {axis = 0} : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  func.return %0 : tensor<4x2xf32>
}

// -----

func.func @f38(%a: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{'graph.concat' op axis -3 is out of range for rank 2 (expected [-2, 1])}}
  %0 = graph.concat %a {axis = -3} : tensor<2x2xf32>
  func.return %0 : tensor<2x2xf32>
}

// -----

func.func @f39() -> tensor<3xf32> {
  // expected-error@+1 {{'graph.constant' op inferred result types (tensor<2xf32>) do not match the written types (tensor<3xf32>)}}
  %0 = graph.constant {value = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @f40(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'graph.relu' op does not accept attribute 'axis'}}
  %0 = graph.relu %a {axis = 1} : tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @f41(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'graph.matmul' op expects 2 operands, got 1}}
  %0 = graph.matmul %a : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @symbolic_gate(%x: tensor<?x3xf32, ["n"]>) -> tensor<?x6xf32, ["n"]> {
  // expected-error@+1 {{'graph.tile' op does not take symbolic dimensions yet ('n'); pin them with --fix-dim n=N}}
  %0 = graph.tile %x {repeats = [1, 2]} : (tensor<?x3xf32, ["n"]>) -> tensor<?x6xf32, ["n"]>
  func.return %0 : tensor<?x6xf32, ["n"]>
}

// -----

func.func @symbolic_mismatch(%x: tensor<?x3xf32, ["n"]>, %y: tensor<?x3xf32, ["m"]>) -> tensor<?x3xf32, ["n"]> {
  // expected-error@+1 {{operand shapes tensor<?x3xf32, ["n"]> and tensor<?x3xf32, ["m"]> are not broadcast-compatible (dimension 0: n vs m)}}
  %0 = graph.add %x, %y : (tensor<?x3xf32, ["n"]>, tensor<?x3xf32, ["m"]>) -> tensor<?x3xf32, ["n"]>
  func.return %0 : tensor<?x3xf32, ["n"]>
}

// -----

func.func @symbolic_overflow(%x: tensor<?x4611686018427387904x4xf32, ["n"]>) -> tensor<?xf32, ["n"]> {
  // expected-error@+1 {{'graph.flatten' op its shape arithmetic overflows int64}}
  %0 = graph.flatten %x {axis = 0} : (tensor<?x4611686018427387904x4xf32, ["n"]>) -> tensor<?xf32, ["n"]>
  func.return %0 : tensor<?xf32, ["n"]>
}
