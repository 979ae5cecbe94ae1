func.func @main(%arg0: tensor<1x6x2x3xf32>) -> tensor<1x1x4x6xf32> {
  %0 = graph.depth_to_space %arg0 {blocksize = 2 : i64} : (tensor<1x6x2x3xf32>) -> tensor<1x1x4x6xf32>
  func.return %0 : tensor<1x1x4x6xf32>
}
