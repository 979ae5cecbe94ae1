func.func @f(%arg0: tensor<10x4xf32>, %arg1: tensor<3xf32>) -> tensor<3x4xf32> {
  %0 = graph.gather %arg0, %arg1 : (tensor<10x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}
// -----
func.func @f(%arg0: tensor<10x4xf32>, %arg1: tensor<3xi64>) -> tensor<3xf32> {
  %0 = graph.gather_elements %arg0, %arg1 : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}
// -----
func.func @f(%arg0: tensor<10x4xf32>, %arg1: tensor<2x3xi64>) -> tensor<2xf32> {
  %0 = graph.gather_nd %arg0, %arg1 : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
// -----
func.func @f(%arg0: tensor<10x4xf32>, %arg1: tensor<2xi64>) -> tensor<2x4xf32> {
  %0 = graph.gather %arg0, %arg1 {indices = dense<[1, 2]> : tensor<2xi64>} : (tensor<10x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}
