func.func @main(%arg0: tensor<5xf32>) -> tensor<5xf32> {
  %0 = graph.trilu %arg0 : tensor<5xf32>
  func.return %0 : tensor<5xf32>
}
