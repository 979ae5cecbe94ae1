// A 3×3 convolution with padding and a relu: the NPU tuning test's task.
module {
  func.func @main(%x: tensor<1x32x14x14xf32>, %w: tensor<32x32x3x3xf32>, %b: tensor<32xf32>) -> tensor<1x32x14x14xf32> {
    %0 = graph.conv2d %x, %w, %b {pads = [1, 1, 1, 1]} : (tensor<1x32x14x14xf32>, tensor<32x32x3x3xf32>, tensor<32xf32>) -> tensor<1x32x14x14xf32>
    %1 = graph.relu %0 : tensor<1x32x14x14xf32>
    func.return %1 : tensor<1x32x14x14xf32>
  }
}
