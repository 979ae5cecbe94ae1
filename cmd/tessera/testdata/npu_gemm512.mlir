// GEMM 512×512×512 (the NPU's utilization check).
module {
  func.func @main(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>) -> tensor<512x512xf32> {
    %0 = graph.matmul %a, %b : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>
    func.return %0 : tensor<512x512xf32>
  }
}
