func.func @f(%arg0: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
  %0 = graph.resize %arg0 {sizes = [4, 4]} : (tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  func.return %0 : tensor<1x1x4x4xf32>
}
// -----
func.func @f(%arg0: tensor<1x1x2x2xi32>) -> tensor<1x1x4x4xi32> {
  %0 = graph.resize %arg0 {sizes = [1, 1, 4, 4], mode = "linear"} : (tensor<1x1x2x2xi32>) -> tensor<1x1x4x4xi32>
  func.return %0 : tensor<1x1x4x4xi32>
}
// -----
func.func @f(%arg0: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
  %0 = graph.resize %arg0 {sizes = [1, 1, 4, 4], scales = [1.0, 1.0, 2.0, -2.0]} : (tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  func.return %0 : tensor<1x1x4x4xf32>
}
// -----
func.func @f(%arg0: tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32> {
  %0 = graph.resize %arg0 {sizes = [1, 1, 4, 4], mode = "area"} : (tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  func.return %0 : tensor<1x1x4x4xf32>
}
