func.func @bool(%x: tensor<3xi1>) -> tensor<1xi64> {
  // expected-error@+1 {{'graph.argmax' op requires a numeric (float or integer, not i1) element type, got tensor<3xi1>}}
  %0 = graph.argmax %x : (tensor<3xi1>) -> tensor<1xi64>
  func.return %0 : tensor<1xi64>
}

// -----

func.func @rank0(%x: tensor<f32>) -> tensor<i64> {
  // expected-error@+1 {{'graph.argmin' op input must have rank at least 1, got tensor<f32>}}
  %0 = graph.argmin %x : (tensor<f32>) -> tensor<i64>
  func.return %0 : tensor<i64>
}

// -----

func.func @axis(%x: tensor<2x3xf32>) -> tensor<2x1xi64> {
  // expected-error@+1 {{'graph.argmax' op axis 2 is out of range for rank 2 (expected [-2, 1])}}
  %0 = graph.argmax %x {axis = 2} : (tensor<2x3xf32>) -> tensor<2x1xi64>
  func.return %0 : tensor<2x1xi64>
}

// -----

func.func @empty_axis(%x: tensor<2x0xf32>) -> tensor<2x1xi64> {
  // expected-error@+1 {{'graph.argmax' op dimension 1 (the axis) of tensor<2x0xf32> is empty: there is no position to select}}
  %0 = graph.argmax %x {axis = 1} : (tensor<2x0xf32>) -> tensor<2x1xi64>
  func.return %0 : tensor<2x1xi64>
}

// -----

func.func @result_type(%x: tensor<2x3xf32>) -> tensor<2x1xf32> {
  // expected-error@+1 {{'graph.argmax' op inferred result types (tensor<2x1xi64>) do not match the written types (tensor<2x1xf32>)}}
  %0 = graph.argmax %x {axis = 1} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  func.return %0 : tensor<2x1xf32>
}
