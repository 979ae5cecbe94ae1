func.func @f(%arg0: tensor<10x4xf32>, %arg1: tensor<3x4xf32>, %arg2: tensor<3x4xf32>) -> tensor<10x4xf32> {
  %0 = graph.scatter_elements %arg0, %arg1, %arg2 : (tensor<10x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<10x4xf32>
  func.return %0 : tensor<10x4xf32>
}
// -----
func.func @f(%arg0: tensor<10x4xf32>, %arg1: tensor<3x4xi64>, %arg2: tensor<3x2xf32>) -> tensor<10x4xf32> {
  %0 = graph.scatter_elements %arg0, %arg1, %arg2 : (tensor<10x4xf32>, tensor<3x4xi64>, tensor<3x2xf32>) -> tensor<10x4xf32>
  func.return %0 : tensor<10x4xf32>
}
// -----
func.func @f(%arg0: tensor<10x4xf32>, %arg1: tensor<11x4xi64>, %arg2: tensor<11x4xf32>) -> tensor<10x4xf32> {
  %0 = graph.scatter_elements %arg0, %arg1, %arg2 {axis = 1} : (tensor<10x4xf32>, tensor<11x4xi64>, tensor<11x4xf32>) -> tensor<10x4xf32>
  func.return %0 : tensor<10x4xf32>
}
// -----
func.func @f(%arg0: tensor<10x4xf32>, %arg1: tensor<3x4xi64>, %arg2: tensor<3x4xf32>) -> tensor<10x4xf32> {
  %0 = graph.scatter_elements %arg0, %arg1, %arg2 {reduction = "sum"} : (tensor<10x4xf32>, tensor<3x4xi64>, tensor<3x4xf32>) -> tensor<10x4xf32>
  func.return %0 : tensor<10x4xf32>
}
// -----
func.func @f(%arg0: tensor<10x4xf32>, %arg1: tensor<2x3xi64>, %arg2: tensor<2xf32>) -> tensor<10x4xf32> {
  %0 = graph.scatter_nd %arg0, %arg1, %arg2 : (tensor<10x4xf32>, tensor<2x3xi64>, tensor<2xf32>) -> tensor<10x4xf32>
  func.return %0 : tensor<10x4xf32>
}
// -----
func.func @f(%arg0: tensor<10x4xf32>, %arg1: tensor<2x1xi64>, %arg2: tensor<2x3xf32>) -> tensor<10x4xf32> {
  %0 = graph.scatter_nd %arg0, %arg1, %arg2 : (tensor<10x4xf32>, tensor<2x1xi64>, tensor<2x3xf32>) -> tensor<10x4xf32>
  func.return %0 : tensor<10x4xf32>
}
// -----
func.func @f(%arg0: tensor<10x4xf32>, %arg1: tensor<2x1xi64>, %arg2: tensor<2x4xi32>) -> tensor<10x4xf32> {
  %0 = graph.scatter_nd %arg0, %arg1, %arg2 : (tensor<10x4xf32>, tensor<2x1xi64>, tensor<2x4xi32>) -> tensor<10x4xf32>
  func.return %0 : tensor<10x4xf32>
}
