// Grouped convolutions on the NPU: a depthwise 3×3 (groups = channels,
// stride 2, padding 1) with relu6, and a grouped 3×3 (4 groups).
module {
  func.func @main(%x: tensor<1x40x15x15xf32>, %wd: tensor<40x1x3x3xf32>, %bd: tensor<40xf32>, %wg: tensor<24x10x3x3xf32>) -> (tensor<1x40x8x8xf32>, tensor<1x24x13x13xf32>) {
    %0 = graph.conv2d %x, %wd, %bd {pads = [1, 1, 1, 1], strides = [2, 2], groups = 40} : (tensor<1x40x15x15xf32>, tensor<40x1x3x3xf32>, tensor<40xf32>) -> tensor<1x40x8x8xf32>
    %1 = graph.clip %0 {min = 0.0 : f32, max = 6.0 : f32} : tensor<1x40x8x8xf32>
    %2 = graph.conv2d %x, %wg {groups = 4} : (tensor<1x40x15x15xf32>, tensor<24x10x3x3xf32>) -> tensor<1x24x13x13xf32>
    func.return %1, %2 : tensor<1x40x8x8xf32>, tensor<1x24x13x13xf32>
  }
}
