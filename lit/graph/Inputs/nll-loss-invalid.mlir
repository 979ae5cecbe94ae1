func.func @f(%arg0: tensor<4x3x2xf32>, %arg1: tensor<4xi64>) -> tensor<f32> {
  %0 = graph.nll_loss %arg0, %arg1 : (tensor<4x3x2xf32>, tensor<4xi64>) -> tensor<f32>
  func.return %0 : tensor<f32>
}
// -----
func.func @f(%arg0: tensor<4x3xf32>, %arg1: tensor<4xi64>, %arg2: tensor<4xf32>) -> tensor<f32> {
  %0 = graph.nll_loss %arg0, %arg1, %arg2 : (tensor<4x3xf32>, tensor<4xi64>, tensor<4xf32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}
// -----
func.func @f(%arg0: tensor<4x3xf32>, %arg1: tensor<4xf32>) -> tensor<f32> {
  %0 = graph.nll_loss %arg0, %arg1 : (tensor<4x3xf32>, tensor<4xf32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}
