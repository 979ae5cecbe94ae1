// Conv2d 64 channels at 56×56, 3×3, padding 1, with bias and relu (a
// ResNet-18 layer; the NPU's convolution utilization check).
module {
  func.func @main(%x: tensor<1x64x56x56xf32>, %w: tensor<64x64x3x3xf32>, %b: tensor<64xf32>) -> tensor<1x64x56x56xf32> {
    %0 = graph.conv2d %x, %w, %b {pads = [1, 1, 1, 1]} : (tensor<1x64x56x56xf32>, tensor<64x64x3x3xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
    %1 = graph.relu %0 : tensor<1x64x56x56xf32>
    func.return %1 : tensor<1x64x56x56xf32>
  }
}
