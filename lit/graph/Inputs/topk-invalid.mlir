func.func @k_too_large(%x: tensor<2x3xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'graph.topk' op k = 4 exceeds the size 3 of dimension 1 (the axis) of tensor<2x3xf32>}}
  %0:2 = graph.topk %x {k = 4} : (tensor<2x3xf32>) -> (tensor<2x4xf32>, tensor<2x4xi64>)
  func.return %0#0 : tensor<2x4xf32>
}

// -----

func.func @k_negative(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'graph.topk' op k = -1 must not be negative}}
  %0:2 = graph.topk %x {k = -1} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
  func.return %0#0 : tensor<2x3xf32>
}

// -----

func.func @k_missing(%x: tensor<2x3xf32>) -> tensor<2x0xf32> {
  // expected-error@+1 {{'graph.topk' op requires attribute 'k'}}
  %0:2 = graph.topk %x : (tensor<2x3xf32>) -> (tensor<2x0xf32>, tensor<2x0xi64>)
  func.return %0#0 : tensor<2x0xf32>
}

// -----

func.func @bool(%x: tensor<4xi1>) -> tensor<1xi1> {
  // expected-error@+1 {{'graph.topk' op requires a numeric (float or integer, not i1) element type, got tensor<4xi1>}}
  %0:2 = graph.topk %x {k = 1} : (tensor<4xi1>) -> (tensor<1xi1>, tensor<1xi64>)
  func.return %0#0 : tensor<1xi1>
}

// -----

func.func @axis(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'graph.topk' op axis -3 is out of range for rank 2 (expected [-2, 1])}}
  %0:2 = graph.topk %x {k = 1, axis = -3} : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
  func.return %0#0 : tensor<2x3xf32>
}

// -----

func.func @indices_type(%x: tensor<2x3xf32>) -> tensor<2x1xi32> {
  // expected-error@+1 {{'graph.topk' op inferred result types (tensor<2x1xf32>, tensor<2x1xi64>) do not match the written types (tensor<2x1xf32>, tensor<2x1xi32>)}}
  %0:2 = graph.topk %x {k = 1} : (tensor<2x3xf32>) -> (tensor<2x1xf32>, tensor<2x1xi32>)
  func.return %0#1 : tensor<2x1xi32>
}
