// Convolutions the NPU runs as implicit GEMMs: stride 2 with padding,
// dilation 2, and a 1×1 projection added to the first (a residual).
module {
  func.func @main(%x: tensor<2x24x13x13xf32>, %w1: tensor<40x24x3x3xf32>, %b1: tensor<40xf32>, %w2: tensor<40x24x3x3xf32>, %w3: tensor<40x24x1x1xf32>) -> (tensor<2x40x7x7xf32>, tensor<2x40x9x9xf32>) {
    %0 = graph.conv2d %x, %w1, %b1 {pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<2x24x13x13xf32>, tensor<40x24x3x3xf32>, tensor<40xf32>) -> tensor<2x40x7x7xf32>
    %1 = graph.conv2d %x, %w3 {strides = [2, 2]} : (tensor<2x24x13x13xf32>, tensor<40x24x1x1xf32>) -> tensor<2x40x7x7xf32>
    %2 = graph.add %0, %1 : (tensor<2x40x7x7xf32>, tensor<2x40x7x7xf32>) -> tensor<2x40x7x7xf32>
    %3 = graph.relu %2 : tensor<2x40x7x7xf32>
    %4 = graph.conv2d %x, %w2 {dilations = [2, 2]} : (tensor<2x24x13x13xf32>, tensor<40x24x3x3xf32>) -> tensor<2x40x9x9xf32>
    func.return %3, %4 : tensor<2x40x7x7xf32>, tensor<2x40x9x9xf32>
  }
}
