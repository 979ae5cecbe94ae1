func.func @main(%arg0: tensor<2x8xf32>, %arg1: tensor<5xf32>) -> tensor<2x8xf32> {
  %0:3 = graph.layer_norm %arg0, %arg1 : (tensor<2x8xf32>, tensor<5xf32>) -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  func.return %0#0 : tensor<2x8xf32>
}
