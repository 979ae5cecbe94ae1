// graph.conv_transpose verifier and shape-inference errors, one per chunk
// (run by ../conv-transpose.mlir with --split-input-file --verify-diagnostics).

func.func @rank(%x: tensor<2x3xf32>, %w: tensor<3x2xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{'graph.conv_transpose' op input must have rank at least 3 (N×C×D1…), got tensor<2x3xf32>}}
  %0 = graph.conv_transpose %x, %w : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  func.return %0 : tensor<2x2xf32>
}

// -----

func.func @weight_rank(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3xf32>) -> tensor<1x2x6x6xf32> {
  // expected-error@+1 {{'graph.conv_transpose' op weight must have the input's rank 4 (C×M/group×k1…), got tensor<3x2x3xf32>}}
  %0 = graph.conv_transpose %x, %w : (tensor<1x3x4x4xf32>, tensor<3x2x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @int(%x: tensor<1x3x4xi32>, %w: tensor<3x2x3xi32>) -> tensor<1x2x6xi32> {
  // expected-error@+1 {{'graph.conv_transpose' op requires a floating-point element type, got tensor<1x3x4xi32>}}
  %0 = graph.conv_transpose %x, %w : (tensor<1x3x4xi32>, tensor<3x2x3xi32>) -> tensor<1x2x6xi32>
  func.return %0 : tensor<1x2x6xi32>
}

// -----

func.func @channels(%x: tensor<1x3x4xf32>, %w: tensor<4x2x3xf32>) -> tensor<1x2x6xf32> {
  // expected-error@+1 {{'graph.conv_transpose' op weight dimension 0 (4) must equal the input channels 3}}
  %0 = graph.conv_transpose %x, %w : (tensor<1x3x4xf32>, tensor<4x2x3xf32>) -> tensor<1x2x6xf32>
  func.return %0 : tensor<1x2x6xf32>
}

// -----

func.func @group(%x: tensor<1x3x4xf32>, %w: tensor<3x2x3xf32>) -> tensor<1x4x6xf32> {
  // expected-error@+1 {{'graph.conv_transpose' op group 2 does not divide input channels 3}}
  %0 = graph.conv_transpose %x, %w {group = 2} : (tensor<1x3x4xf32>, tensor<3x2x3xf32>) -> tensor<1x4x6xf32>
  func.return %0 : tensor<1x4x6xf32>
}

// -----

func.func @bias(%x: tensor<1x4x4xf32>, %w: tensor<4x2x3xf32>, %b: tensor<2xf32>) -> tensor<1x4x6xf32> {
  // expected-error@+1 {{'graph.conv_transpose' op bias must have shape [4] (output channels), got tensor<2xf32>}}
  %0 = graph.conv_transpose %x, %w, %b {group = 2} : (tensor<1x4x4xf32>, tensor<4x2x3xf32>, tensor<2xf32>) -> tensor<1x4x6xf32>
  func.return %0 : tensor<1x4x6xf32>
}

// -----

func.func @kernel_shape(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x2xf32>) -> tensor<1x2x6x5xf32> {
  // expected-error@+1 {{'graph.conv_transpose' op kernel_shape [3, 3] does not match the weight's spatial dimensions [3, 2]}}
  %0 = graph.conv_transpose %x, %w {kernel_shape = [3, 3]} : (tensor<1x3x4x4xf32>, tensor<3x2x3x2xf32>) -> tensor<1x2x6x5xf32>
  func.return %0 : tensor<1x2x6x5xf32>
}

// -----

func.func @strides_len(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x2x6x6xf32> {
  // expected-error@+1 {{'graph.conv_transpose' op attribute 'strides' must have 2 elements (one per spatial dimension), got 1}}
  %0 = graph.conv_transpose %x, %w {strides = [2]} : (tensor<1x3x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @stride_zero(%x: tensor<1x3x4xf32>, %w: tensor<3x2x3xf32>) -> tensor<1x2x6xf32> {
  // expected-error@+1 {{'graph.conv_transpose' op strides [0] and dilations [1] must be at least 1, output_padding [0] non-negative}}
  %0 = graph.conv_transpose %x, %w {strides = [0]} : (tensor<1x3x4xf32>, tensor<3x2x3xf32>) -> tensor<1x2x6xf32>
  func.return %0 : tensor<1x2x6xf32>
}

// -----

func.func @pads_negative(%x: tensor<1x3x4xf32>, %w: tensor<3x2x3xf32>) -> tensor<1x2x6xf32> {
  // expected-error@+1 {{'graph.conv_transpose' op pads [-1, 0] must be non-negative}}
  %0 = graph.conv_transpose %x, %w {pads = [-1, 0]} : (tensor<1x3x4xf32>, tensor<3x2x3xf32>) -> tensor<1x2x6xf32>
  func.return %0 : tensor<1x2x6xf32>
}

// -----

func.func @pads_too_large(%x: tensor<1x3x2xf32>, %w: tensor<3x2x2xf32>) -> tensor<1x2x1xf32> {
  // expected-error@+1 {{'graph.conv_transpose' op output spatial dimension 0 would be 0 (natural size 3, pads 2 and 1); it must be at least 1}}
  %0 = graph.conv_transpose %x, %w {pads = [2, 1]} : (tensor<1x3x2xf32>, tensor<3x2x2xf32>) -> tensor<1x2x1xf32>
  func.return %0 : tensor<1x2x1xf32>
}

// -----

func.func @output_shape_len(%x: tensor<1x3x4x4xf32>, %w: tensor<3x2x3x3xf32>) -> tensor<1x2x6x6xf32> {
  // expected-error@+1 {{'graph.conv_transpose' op attribute 'output_shape' must have 2 elements (one per spatial dimension), got 4}}
  %0 = graph.conv_transpose %x, %w {output_shape = [1, 2, 6, 6]} : (tensor<1x3x4x4xf32>, tensor<3x2x3x3xf32>) -> tensor<1x2x6x6xf32>
  func.return %0 : tensor<1x2x6x6xf32>
}

// -----

func.func @auto_pad(%x: tensor<1x3x4xf32>, %w: tensor<3x2x3xf32>) -> tensor<1x2x6xf32> {
  // expected-error@+1 {{'graph.conv_transpose' op attribute 'auto_pad' must be one of ["NOTSET" "SAME_UPPER" "SAME_LOWER" "VALID"], got "SAME"}}
  %0 = graph.conv_transpose %x, %w {auto_pad = "SAME"} : (tensor<1x3x4xf32>, tensor<3x2x3xf32>) -> tensor<1x2x6xf32>
  func.return %0 : tensor<1x2x6xf32>
}

// -----

func.func @result(%x: tensor<1x3x4xf32>, %w: tensor<3x2x3xf32>) -> tensor<1x2x7xf32> {
  // expected-error@+1 {{'graph.conv_transpose' op inferred result types (tensor<1x2x6xf32>) do not match the written types (tensor<1x2x7xf32>)}}
  %0 = graph.conv_transpose %x, %w : (tensor<1x3x4xf32>, tensor<3x2x3xf32>) -> tensor<1x2x7xf32>
  func.return %0 : tensor<1x2x7xf32>
}

// -----

func.func @empty_kernel(%x: tensor<1x3x4xf32>, %w: tensor<3x2x0xf32>) -> tensor<1x2x4xf32> {
  // expected-error@+1 {{'graph.conv_transpose' op spatial dimensions must be at least 1, got input tensor<1x3x4xf32> and weight tensor<3x2x0xf32>}}
  %0 = graph.conv_transpose %x, %w : (tensor<1x3x4xf32>, tensor<3x2x0xf32>) -> tensor<1x2x4xf32>
  func.return %0 : tensor<1x2x4xf32>
}
